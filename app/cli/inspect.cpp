// alap-cli inspect -m MODEL [--ctx N] [--json]: a GGUF file's header, metadata, tensor table,
// parameter count and the KV cache a context of N tokens needs in each cache mode (DESIGN.md).
// It only reads the file (memory-mapped); it loads no weights and runs nothing.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "command.h"
#include "core/gguf/gguf.h"
#include "core/runtime/memory_plan.h"

namespace alap::cli {
namespace {

using gguf::Value;
using gguf::ValueType;

// general.file_type labels (FORMATS.md §1.8).
const char* file_type_name(int64_t ft) {
  static const std::map<int64_t, const char*> names = {
      {0, "ALL_F32"},   {1, "MOSTLY_F16"}, {2, "Q4_0"},    {3, "Q4_1"},    {7, "Q8_0"},    {8, "Q5_0"},
      {9, "Q5_1"},      {10, "Q2_K"},      {11, "Q3_K_S"}, {12, "Q3_K_M"}, {13, "Q3_K_L"}, {14, "Q4_K_S"},
      {15, "Q4_K_M"},   {16, "Q5_K_S"},    {17, "Q5_K_M"}, {18, "Q6_K"},   {19, "IQ2_XXS"}, {20, "IQ2_XS"},
      {21, "Q2_K_S"},   {22, "IQ3_XS"},    {23, "IQ3_XXS"}, {24, "IQ1_S"}, {25, "IQ4_NL"}, {26, "IQ3_S"},
      {27, "IQ3_M"},    {28, "IQ2_S"},     {29, "IQ2_M"},  {30, "IQ4_XS"}, {31, "IQ1_M"},  {32, "BF16"},
      {36, "TQ1_0"},    {37, "TQ2_0"},     {38, "MXFP4_MOE"}, {39, "NVFP4"}, {40, "Q1_0"}, {41, "Q2_0"},
      {1024, "guessed"},
  };
  auto it = names.find(ft);
  return it == names.end() ? "unknown" : it->second;
}

// Appends the length of the valid UTF-8 sequence at s[i], or 0 when it is not valid.
size_t utf8_len(const std::string& s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F;
  else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F;
  else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07;
  else return 0;
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

// A JSON string literal: quotes, backslash and control characters escaped, valid UTF-8 kept,
// invalid bytes replaced by U+FFFD (JSON text must be UTF-8).
std::string json_str(const std::string& s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_len(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s, i, n);
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
    i += n;
  }
  return out + "\"";
}

std::string json_num(double d) {
  if (!std::isfinite(d)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", d);
  return buf;
}

// A string for the terminal: control characters escaped, cut after `max` characters.
std::string display_str(const std::string& s, size_t max = 60) {
  std::string out = "\"";
  size_t chars = 0;
  for (size_t i = 0; i < s.size();) {
    if (chars == max) return out + "\"… (" + std::to_string(s.size()) + " bytes)";
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = utf8_len(s, i);
    if (n > 1) {
      out.append(s, i, n);
      i += n;
    } else {
      if (n == 1 && c >= 0x20 && c != 0x7F && c != '"' && c != '\\') {
        out += static_cast<char>(c);
      } else {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        out += c == '\n' ? "\\n" : c == '"' ? "\\\"" : c == '\\' ? "\\\\" : buf;
      }
      ++i;
    }
    ++chars;
  }
  return out + "\"";
}

std::string scalar_text(const Value& v, bool json) {
  if (const std::string* s = v.to_string()) return json ? json_str(*s) : display_str(*s);
  if (v.type() == ValueType::boolean) return *v.to_bool() ? "true" : "false";
  if (v.type() == ValueType::f32 || v.type() == ValueType::f64) return json_num(*v.to_float());
  if (auto i = v.to_int()) return std::to_string(*i);
  if (auto u = v.to_uint()) return std::to_string(*u);
  return "?";
}

// "[string; 8192] "<unk>", "<s>", "</s>", …" — type, count and the first few items.
std::string array_summary(const Value& v) {
  std::string out = std::string("[") + gguf::value_type_name(v.elem_type()) + "; " + std::to_string(v.size()) + "]";
  constexpr size_t kShow = 4;
  const size_t n = std::min(v.size(), kShow);
  std::vector<std::string> items;
  if (const auto* strs = v.strings()) {
    for (size_t i = 0; i < n; ++i) items.push_back(display_str((*strs)[i], 24));
  } else if (v.elem_type() == ValueType::array) {
    for (size_t i = 0; i < n; ++i) items.push_back(array_summary(v.items()[i]));
  } else if (v.elem_type() == ValueType::f32 || v.elem_type() == ValueType::f64) {
    const auto f = v.floats();
    for (size_t i = 0; i < n && f; ++i) items.push_back(json_num((*f)[i]));
  } else if (const auto ints = v.ints()) {
    for (size_t i = 0; i < n; ++i) items.push_back(std::to_string((*ints)[i]));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    out += i ? ", " : " ";
    out += items[i];
  }
  if (v.size() > items.size() && !items.empty()) out += ", …";
  return out;
}

std::string shape_text(const gguf::TensorInfo& t) {
  std::string s = "[";
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    if (d) s += ", ";
    s += std::to_string(t.ne[d]);
  }
  return s + "]";
}

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (uint64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1 << 30));
  else if (b >= (uint64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(b) / (1 << 20));
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.2f KiB", static_cast<double>(b) / 1024);
  else std::snprintf(buf, sizeof buf, "%" PRIu64 " B", b);
  return buf;
}

// An integer hyperparameter, or the largest entry when stored per layer as an array.
std::optional<int64_t> count_key(const gguf::File& f, const std::string& key) {
  const Value* v = f.find(key);
  if (!v) return std::nullopt;
  if (auto i = v->to_int()) return i;
  if (auto a = v->ints(); a && !a->empty()) return *std::max_element(a->begin(), a->end());
  throw gguf::Error(f.name() + ": key '" + key + "' has type " + gguf::value_type_name(v->type()) +
                    ", expected an integer");
}

struct KvPlan {
  bool known = false;
  std::string missing;  // why the shape is unknown
  KvShape shape;
  uint64_t ctx = 0;
};

KvPlan plan_kv(const gguf::File& f, const std::string& arch, std::optional<long long> ctx_opt) {
  KvPlan p;
  if (arch.empty()) {
    p.missing = "no general.architecture";
    return p;
  }
  const auto n_layer = count_key(f, arch + ".block_count");
  const auto n_head = count_key(f, arch + ".attention.head_count");
  const auto n_head_kv = count_key(f, arch + ".attention.head_count_kv");
  const auto n_embd = count_key(f, arch + ".embedding_length");
  const auto key_len = count_key(f, arch + ".attention.key_length");
  const auto val_len = count_key(f, arch + ".attention.value_length");
  if (!n_layer) p.missing = arch + ".block_count";
  else if (!n_head && !n_head_kv) p.missing = arch + ".attention.head_count";
  else if ((!key_len || !val_len) && (!n_embd || !n_head || *n_head <= 0)) p.missing = arch + ".embedding_length";
  if (!p.missing.empty()) {
    p.missing = "missing " + p.missing;
    return p;
  }
  p.shape.n_layer = *n_layer;
  p.shape.n_head_kv = n_head_kv ? *n_head_kv : *n_head;
  p.shape.head_dim_k = key_len ? *key_len : *n_embd / *n_head;
  p.shape.head_dim_v = val_len ? *val_len : *n_embd / *n_head;
  if (p.shape.n_layer < 0 || p.shape.n_head_kv < 0 || p.shape.head_dim_k < 0 || p.shape.head_dim_v < 0) {
    p.missing = "negative attention sizes";
    return p;
  }
  if (ctx_opt) {
    p.ctx = static_cast<uint64_t>(*ctx_opt);
  } else {
    const auto train_ctx = count_key(f, arch + ".context_length");
    p.ctx = train_ctx && *train_ctx > 0 ? static_cast<uint64_t>(*train_ctx) : 4096;
  }
  p.known = true;
  return p;
}

int run_inspect(const std::vector<std::string>& argv) {
  Args args("inspect", argv);
  const auto model = args.value("-m", "--model");
  const auto ctx = args.integer("--ctx");
  const bool json = args.flag("--json");
  if (!args.finish()) return 1;
  if (!model) return args.fail("needs -m MODEL");
  if (ctx && *ctx <= 0) return args.fail("--ctx must be positive");

  try {
    const gguf::File f = gguf::File::open(*model);
    const std::string arch = f.opt_string("general.architecture").value_or("");
    int64_t n_params = 0;
    uint64_t tensor_bytes = 0;
    for (const auto& t : f.tensors()) {
      n_params += t.n_elements();
      tensor_bytes += t.n_bytes;
    }
    const auto file_type = f.opt_int("general.file_type");
    const KvPlan plan = plan_kv(f, arch, ctx);
    const CacheMode modes[] = {CacheMode::f16, CacheMode::k8, CacheMode::k8v8};

    if (json) {
      std::string o = "{";
      o += "\"file\":" + json_str(*model);
      o += ",\"version\":" + std::to_string(f.version());
      o += ",\"file_size\":" + std::to_string(f.file_size());
      o += ",\"alignment\":" + std::to_string(f.alignment());
      o += ",\"data_offset\":" + std::to_string(f.data_offset());
      o += ",\"architecture\":" + (arch.empty() ? std::string("null") : json_str(arch));
      o += ",\"file_type\":" + (file_type ? std::to_string(*file_type) : "null");
      o += ",\"file_type_name\":" + (file_type ? json_str(file_type_name(*file_type)) : "null");
      o += ",\"n_params\":" + std::to_string(n_params);
      o += ",\"tensor_bytes\":" + std::to_string(tensor_bytes);
      o += ",\"metadata\":{";
      bool first = true;
      for (const auto& kv : f.metadata()) {
        if (!first) o += ",";
        o += json_str(kv.key);
        o += ":";
        first = false;
        if (kv.value.type() == ValueType::array) {
          o += std::string("{\"type\":\"array\",\"elem_type\":\"") + gguf::value_type_name(kv.value.elem_type()) +
               "\",\"count\":" + std::to_string(kv.value.size()) + "}";
        } else {
          o += scalar_text(kv.value, true);
        }
      }
      o += "},\"tensors\":[";
      first = true;
      for (const auto& t : f.tensors()) {
        o += std::string(first ? "" : ",") + "{\"name\":" + json_str(t.name) + ",\"type\":" + json_str(t.type_name()) +
             ",\"shape\":[";
        for (uint32_t d = 0; d < t.n_dims; ++d) {
          if (d) o += ",";
          o += std::to_string(t.ne[d]);
        }
        o += "],\"bytes\":" + std::to_string(t.n_bytes) + "}";
        first = false;
      }
      o += "],\"memory\":";
      if (!plan.known) {
        o += "null";
      } else {
        o += "{\"ctx\":" + std::to_string(plan.ctx) + ",\"n_layer\":" + std::to_string(plan.shape.n_layer) +
             ",\"n_head_kv\":" + std::to_string(plan.shape.n_head_kv) +
             ",\"head_dim_k\":" + std::to_string(plan.shape.head_dim_k) +
             ",\"head_dim_v\":" + std::to_string(plan.shape.head_dim_v);
        for (CacheMode m : modes) {
          o += std::string(",\"") + cache_mode_name(m) + "\":";
          std::string why;
          if (!packed_mode_supported(plan.shape, m, &why)) {
            o += "{\"supported\":false,\"reason\":" + json_str(why) + "}";
            continue;
          }
          const KvBytes b = kv_cache_bytes(plan.shape, m, plan.ctx);
          o += "{\"supported\":true,\"k_bytes\":" + std::to_string(b.k_bytes) + ",\"v_bytes\":" +
               std::to_string(b.v_bytes) + ",\"total_bytes\":" + std::to_string(b.total) + "}";
        }
        o += "}";
      }
      o += ",\"warnings\":[";
      for (size_t i = 0; i < f.warnings().size(); ++i) {
        if (i) o += ",";
        o += json_str(f.warnings()[i]);
      }
      o += "]}\n";
      std::fputs(o.c_str(), stdout);
      return 0;
    }

    std::printf("file: %s\n", model->c_str());
    std::printf("GGUF v%u, %zu metadata keys, %zu tensors, alignment %" PRIu64 ", data at %" PRIu64 ", %" PRIu64
                " bytes\n",
                f.version(), f.metadata().size(), f.tensors().size(), f.alignment(), f.data_offset(), f.file_size());
    std::printf("architecture: %s\n", arch.empty() ? "(none)" : arch.c_str());
    if (file_type) std::printf("file type: %s (%" PRId64 ")\n", file_type_name(*file_type), *file_type);
    std::printf("parameters: %" PRId64 " (%.2f M), tensor data %s\n", n_params, static_cast<double>(n_params) / 1e6,
                human_bytes(tensor_bytes).c_str());

    std::printf("\nmetadata:\n");
    size_t key_w = 0;
    for (const auto& kv : f.metadata()) key_w = std::max(key_w, kv.key.size());
    for (const auto& kv : f.metadata()) {
      const std::string text =
          kv.value.type() == ValueType::array ? array_summary(kv.value) : scalar_text(kv.value, false);
      std::printf("  %-*s  %-6s  %s\n", static_cast<int>(key_w), kv.key.c_str(), gguf::value_type_name(kv.value.type()),
                  text.c_str());
    }

    if (!f.tensors().empty()) {
      std::printf("\ntensors:\n");
      size_t name_w = 4;
      for (const auto& t : f.tensors()) name_w = std::max(name_w, t.name.size());
      std::printf("  %-*s  %-7s  %-22s  %s\n", static_cast<int>(name_w), "name", "type", "shape", "bytes");
      for (const auto& t : f.tensors()) {
        std::printf("  %-*s  %-7s  %-22s  %" PRIu64 "\n", static_cast<int>(name_w), t.name.c_str(), t.type_name(),
                    shape_text(t).c_str(), t.n_bytes);
      }
    }

    std::printf("\n");
    if (!plan.known) {
      std::printf("KV cache: unknown (%s)\n", plan.missing.c_str());
    } else {
      std::printf("KV cache at ctx %" PRIu64 " (%" PRId64 " layers, %" PRId64 " KV heads, head_dim K %" PRId64
                  " / V %" PRId64 "):\n",
                  plan.ctx, plan.shape.n_layer, plan.shape.n_head_kv, plan.shape.head_dim_k, plan.shape.head_dim_v);
      const KvBytes ref = kv_cache_bytes(plan.shape, CacheMode::f16, plan.ctx);
      for (CacheMode m : modes) {
        std::string why;
        if (!packed_mode_supported(plan.shape, m, &why)) {
          std::printf("  %-5s unsupported: %s\n", cache_mode_name(m), why.c_str());
          continue;
        }
        const KvBytes b = kv_cache_bytes(plan.shape, m, plan.ctx);
        const double saved = ref.total ? 100.0 * (1.0 - static_cast<double>(b.total) / static_cast<double>(ref.total)) : 0.0;
        char note[32] = "reference";
        if (m != CacheMode::f16) std::snprintf(note, sizeof note, "-%.1f%%", saved);
        std::printf("  %-5s K %-11s V %-11s total %-11s (%" PRIu64 " bytes, %s)\n", cache_mode_name(m),
                    human_bytes(b.k_bytes).c_str(), human_bytes(b.v_bytes).c_str(), human_bytes(b.total).c_str(),
                    b.total, note);
      }
    }
    for (const auto& w : f.warnings()) std::printf("warning: %s\n", w.c_str());
    return 0;
  } catch (const std::exception& e) {
    return args.fail(e.what());
  }
}

}  // namespace

ALAP_CLI_COMMAND("inspect", "metadata, tensors and KV cache memory of a GGUF file", run_inspect);

}  // namespace alap::cli
