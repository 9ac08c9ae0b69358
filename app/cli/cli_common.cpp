// Shared option reading, JSON writing and Ctrl-C handling for the engine subcommands of
// alap-cli (cli_common.h). Registers no subcommand.
#include "cli_common.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace alap::cli {

namespace {

std::atomic<bool>* g_interrupt_flag = nullptr;

extern "C" void on_sigint(int) {
  if (g_interrupt_flag != nullptr && !g_interrupt_flag->load()) {
    g_interrupt_flag->store(true);
    return;
  }
  std::signal(SIGINT, SIG_DFL);
  std::raise(SIGINT);
}

void set_error(std::string& error, const std::string& message) {
  if (error.empty()) error = message;
}

}  // namespace

LoadOptions read_load_options(Args& args, std::string& error, CacheMode default_mode) {
  LoadOptions o;
  o.params.cache_mode = default_mode;
  if (auto m = args.value("-m", "--model")) o.model = *m;
  bool args_has_cache = false;
  if (auto c = args.value("--cache")) {
    args_has_cache = true;
    if (auto mode = parse_cache_mode(*c)) {
      o.params.cache_mode = *mode;
    } else {
      set_error(error, "--cache must be f16, k8 or k8v8, not '" + *c + "'");
    }
  }
  if (auto n = args.integer("--ctx")) {
    if (*n < 1) set_error(error, "--ctx must be at least 1");
    else o.params.n_ctx = static_cast<size_t>(*n);
  }
  if (auto n = args.integer("--threads", "-t")) {
    if (*n < 1) set_error(error, "--threads must be at least 1");
    else o.params.n_threads = static_cast<size_t>(*n);
  }
  o.cache_given = args_has_cache || default_mode != CacheMode::f16;
  if (auto g = args.value("--gpu-layers", "-ngl")) {
    o.gpu_layers_given = true;
    char* end = nullptr;
    const long n = std::strtol(g->c_str(), &end, 10);
    if (*g == "auto") {
      o.params.gpu_layers = -1;
    } else if (g->empty() || *end != '\0' || n < -1 || n > 100000) {
      set_error(error, "--gpu-layers must be a number of layers, -1 or auto, not '" + *g + "'");
    } else {
      o.params.gpu_layers = static_cast<int32_t>(n);
    }
  }
  return o;
}

PerplexityParams perplexity_params(const LoadOptions& load, std::optional<long long> chunks, CacheMode mode) {
  PerplexityParams p;
  p.n_ctx = load.params.n_ctx != 0 ? load.params.n_ctx : 512;
  p.mode = mode;
  p.n_threads = load.params.n_threads;
  p.max_chunks = chunks ? static_cast<size_t>(*chunks) : 0;
  return p;
}

PerplexityProgress perplexity_progress(bool& shown) {
  return [&shown](size_t done, size_t total, double ppl) {
    shown = true;
    std::fprintf(stderr, "\r[%zu/%zu] ppl %.4f", done, total, ppl);
    std::fflush(stderr);
  };
}

void apply_gpu_defaults(LoadOptions& o) {
  if (!o.gpu_layers_given) o.params.gpu_layers = default_gpu_layers();
  if (!o.cache_given) o.params.cache_mode_default = true;
}

void print_backend_line(const Engine& engine) {
  const ModelInfo info = engine.model_info();
  std::string line = "backend: " + backend_summary(info) + ", cache " + cache_mode_name(info.cache_mode);
  if (info.gpu_layers > 0) {
    const MemoryReport m = engine.memory_report();
    char buf[160];
    std::snprintf(buf, sizeof buf, "; device memory %.2f of %.2f GiB free", static_cast<double>(m.device_free_bytes) / (1ull << 30),
                  static_cast<double>(m.device_total_bytes) / (1ull << 30));
    line += buf;
  }
  if (info.gpu_layers == 0 && !info.gpu_reason.empty()) line += " (" + info.gpu_reason + ")";
  std::fprintf(stderr, "%s\n", line.c_str());
}

GenerateRequest read_generate_options(Args& args, std::string& error) {
  GenerateRequest r;
  SamplerParams& s = r.sampling;
  s.temperature = 0.8f;
  s.top_k = 40;
  s.top_p = 0.95f;
  s.min_p = 0.05f;
  s.repeat_penalty = 1.0f;
  if (auto v = args.number("--temp")) {
    if (*v < 0.0) set_error(error, "--temp must not be negative");
    s.temperature = static_cast<float>(*v);
  }
  if (auto v = args.integer("--top-k")) s.top_k = static_cast<int32_t>(*v);
  if (auto v = args.number("--top-p")) {
    if (*v <= 0.0 || *v > 1.0) set_error(error, "--top-p must be in (0, 1]");
    s.top_p = static_cast<float>(*v);
  }
  if (auto v = args.number("--min-p")) {
    if (*v < 0.0 || *v > 1.0) set_error(error, "--min-p must be in [0, 1]");
    s.min_p = static_cast<float>(*v);
  }
  if (auto v = args.number("--repeat-penalty")) {
    if (*v <= 0.0) set_error(error, "--repeat-penalty must be positive");
    s.repeat_penalty = static_cast<float>(*v);
  }
  if (auto v = args.number("--presence-penalty")) {
    if (*v < -2.0 || *v > 2.0) set_error(error, "--presence-penalty must be in [-2, 2]");
    s.presence_penalty = static_cast<float>(*v);
  }
  if (auto v = args.number("--frequency-penalty")) {
    if (*v < -2.0 || *v > 2.0) set_error(error, "--frequency-penalty must be in [-2, 2]");
    s.frequency_penalty = static_cast<float>(*v);
  }
  if (auto v = args.integer("--repeat-last-n")) {
    if (*v < -1) set_error(error, "--repeat-last-n must be -1, 0 or positive");
    s.repeat_last_n = static_cast<int32_t>(*v);
  }
  if (auto v = args.integer("--seed")) {
    s.seed = static_cast<uint64_t>(*v);
  } else {
    std::random_device rd;
    s.seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  r.max_tokens = 256;
  if (auto v = args.integer("-n", "--n-predict")) {
    if (*v < 0) set_error(error, "-n must not be negative (0: until the model stops)");
    r.max_tokens = static_cast<int32_t>(*v);
  }
  if (auto v = args.value("--system")) r.system_prompt = *v;
  if (auto v = args.value("--stop")) {
    if (v->empty()) set_error(error, "--stop needs a non-empty string");
    else r.stop.push_back(*v);
  }
  return r;
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw EngineError(path.string() + ": cannot open the file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw EngineError(path.string() + ": read error");
  return ss.str();
}

InterruptGuard::InterruptGuard(std::atomic<bool>& flag) {
  g_interrupt_flag = &flag;
  std::signal(SIGINT, on_sigint);
}

InterruptGuard::~InterruptGuard() {
  std::signal(SIGINT, SIG_DFL);
  g_interrupt_flag = nullptr;
}

std::string json_escape(const std::string& s) {
  std::string o = "\"";
  for (const unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\r': o += "\\r"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o + "\"";
}

void JsonObject::key(const std::string& k) {
  if (!body_.empty()) body_ += ",";
  body_ += json_escape(k) + ":";
}

JsonObject& JsonObject::add(const std::string& k, const std::string& value) {
  key(k);
  body_ += json_escape(value);
  return *this;
}

JsonObject& JsonObject::add(const std::string& k, double value) {
  key(k);
  if (!std::isfinite(value)) {
    body_ += "null";
  } else {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.10g", value);
    body_ += buf;
  }
  return *this;
}

JsonObject& JsonObject::add(const std::string& k, uint64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonObject& JsonObject::add(const std::string& k, int64_t value) {
  key(k);
  body_ += std::to_string(value);
  return *this;
}

JsonObject& JsonObject::add(const std::string& k, bool value) {
  key(k);
  body_ += value ? "true" : "false";
  return *this;
}

std::string format_stats(const GenerateStats& st) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "prompt %zu tokens (%zu reused, %zu prefilled in %.1f ms, %.1f tok/s) | generated %zu tokens "
                "(%.1f tok/s) | first token %.1f ms | stop: %s",
                st.n_prompt_tokens, st.n_reused_tokens, st.n_prefill_tokens, st.prefill_ms, st.prefill_tps,
                st.n_generated, st.decode_tps, st.ttft_ms, stop_reason_name(st.stop_reason));
  std::string s = buf;
  if (!st.message.empty()) s += "\n" + st.message;
  return s;
}

}  // namespace alap::cli
