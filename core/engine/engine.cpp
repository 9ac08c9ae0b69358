// Engine: the facade of engine.h over core/model (Forward), core/runtime (KvCache, ThreadPool),
// core/sample (Sampler) and core/text (Tokenizer, ChatTemplate, StreamingDetokenizer).
// Not the perplexity tool (perplexity.cpp) and not a test double (fake_engine.cpp).
#include "core/engine/engine.h"
#include "core/engine/prefill_chunk.h"

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <optional>
#include <thread>

#include "alap/kernels/quant.h"
#include "core/engine/stop_strings.h"
#include "core/gguf/gguf.h"
#include "core/model/forward.h"
#include "core/model/forward_gpu.h"
#include "core/model/model.h"
#include "core/runtime/gpu_backend.h"
#include "core/runtime/kv_cache.h"
#include "core/runtime/thread_pool.h"
#include "core/text/detokenizer.h"
#include "core/text/tokenizer.h"

namespace alap {

namespace {

// "1.5 GiB", "512.0 MiB": for messages.
// Refuses a context whose cache does not fit beside the weights in the available memory, with
// the largest context (a multiple of 256 tokens) that would fit in each cache mode.
void check_context_fits(const std::string& where, const SystemMemory& mem, uint64_t weights_bytes,
                        const KvShape& shape, CacheMode mode, size_t n_ctx) {
  const uint64_t need = weights_bytes + kv_cache_bytes(shape, mode, n_ctx).total;
  if (need <= mem.available_bytes) return;
  const uint64_t room = mem.available_bytes > weights_bytes ? mem.available_bytes - weights_bytes : 0;
  std::string fits;
  for (CacheMode m : {CacheMode::f16, CacheMode::k8, CacheMode::k8v8}) {
    if (!packed_mode_supported(shape, m, nullptr)) continue;
    const uint64_t per_token = kv_cache_bytes(shape, m, 1).total;
    const uint64_t tokens = per_token > 0 ? (room / per_token) / 256 * 256 : 0;
    fits += std::string(fits.empty() ? "" : ", ") + cache_mode_name(m) + " " + std::to_string(tokens);
  }
  throw EngineError(where + ": a context of " + std::to_string(n_ctx) + " tokens in " + cache_mode_name(mode) +
                    " needs " + format_bytes(need) + " with the weights, but " + format_bytes(mem.available_bytes) +
                    " is available; the largest context that fits is (tokens) " + fits);
}


constexpr size_t kDefaultMaxCtx = 4096;
// Prefill batch; cancel is checked between chunks. On the CPU 128 tokens, 256 with the AMX tiles
// and two threads or more (choose_cpu_prefill_chunk, prefill_chunk.h). With every layer on the GPU
// at least 512 (H200, session 5: 8B prefill 1.37x, 1B 1.5x, 0.5B 2x against 128), and 1024 or 2048
// where the device's memory allows (choose_gpu_prefill_chunk; session 36: 8B 1.06x / 1.10x, 1B
// 1.12x / 1.18x, 0.5B 1.27x / 1.44x against 512; a 2048-token chunk of an 8B takes ~0.24 s there).

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

bool is_set(const std::atomic<bool>* flag) { return flag != nullptr && flag->load(std::memory_order_relaxed); }

}  // namespace

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::eog: return "eog";
    case StopReason::stop_string: return "stop_string";
    case StopReason::max_tokens: return "max_tokens";
    case StopReason::cancelled: return "cancelled";
    case StopReason::context_full: return "context_full";
  }
  return "unknown";
}

struct Engine::State {
  ModelInfo info;
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  std::optional<ChatTemplate> chat_template;
  std::unique_ptr<KvCache> cache;
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Forward> forward;
  // GPU path (cache and forward are then null): the GPU forward owns the device cache and, with
  // partial offload, the host cache and CPU forward of the remaining layers.
  std::unique_ptr<GpuForward> gpu;
  std::vector<int32_t> cached;  // ids whose K/V the cache holds: cached.size() == cache->n_tokens()

  size_t capacity() const { return gpu ? gpu->capacity() : cache->capacity(); }
  void clear() {
    if (gpu) gpu->clear();
    else cache->clear();
    cached.clear();
  }
};

int32_t default_gpu_layers() { return GpuBackend::probe().backend ? -1 : 0; }

std::string cpu_kernels_label() {
  const std::string v = kernels::cpu_variant_name();
  std::string s = v == "avx512vnni" ? "AVX-512 VNNI"
                  : v == "avxvnni"  ? "AVX-VNNI"
                  : v == "avx2"     ? "AVX2"
                  : v == "sse4"     ? "SSE4.1"
                                    : v;
  if (kernels::amx_prefill_active()) s += " + AMX";
  return s;
}

std::string backend_summary(const ModelInfo& info) {
  if (info.gpu_layers <= 0) {
    std::string s = "CPU, " + std::to_string(info.n_threads) + " threads";
    if (!info.cpu_kernels.empty()) s += ", " + info.cpu_kernels + " kernels";
    return s;
  }
  std::string s = "GPU " + info.backend + ", " + std::to_string(info.gpu_layers) + " of " +
                  std::to_string(info.n_layer) + " layers (" + format_bytes(info.gpu_weights_bytes) + " of weights)";
  if (info.gpu_layers < info.n_layer) s += ", the rest on the CPU (" + std::to_string(info.n_threads) + " threads)";
  const std::string blas = info.gpu_blas_name.empty() ? "vendor BLAS" : info.gpu_blas_name;
  switch (info.gpu_blas) {
    case GpuBlasUse::used: s += "; long prompts through " + blas; break;
    case GpuBlasUse::not_built: s += "; long prompts on Alap's kernels (this GPU library has no BLAS)"; break;
    case GpuBlasUse::not_found: s += "; long prompts on Alap's kernels (" + blas + " not found)"; break;
    case GpuBlasUse::unusable: s += "; long prompts on Alap's kernels (" + blas + " failed its check on this GPU)"; break;
    case GpuBlasUse::no_memory: s += "; long prompts on Alap's kernels (no room for " + blas + "'s workspace)"; break;
    case GpuBlasUse::off: s += "; long prompts on Alap's kernels (" + blas + " turned off)"; break;
    case GpuBlasUse::short_batches:  // partial offload: short batches; the layer count already says so
    case GpuBlasUse::none: break;
  }
  return s;
}

Engine::Engine() = default;
Engine::~Engine() = default;

Engine::State& Engine::state() const {
  if (!s_) throw EngineError("engine: no model is loaded");
  return *s_;
}

bool Engine::is_loaded() const { return s_ != nullptr; }

void Engine::unload() { s_.reset(); }

void Engine::load(const std::filesystem::path& path, const LoadParams& params, const LoadProgress& progress,
                  const std::atomic<bool>* cancel) {
  s_.reset();
  const std::string where = path.string();
  auto step = [&](float fraction, std::string_view stage) {
    if (is_set(cancel)) throw EngineError(where + ": loading cancelled");
    if (progress) progress(fraction, stage);
  };
  auto st = std::make_unique<State>();
  try {
    step(0.0f, "reading model");
    if (!std::filesystem::exists(path)) throw EngineError(where + ": no such file");
    // Memory: the limit given, else what the system says is available (and its total).
    std::optional<SystemMemory> mem = read_system_memory();
    if (params.memory_limit_bytes > 0) mem = SystemMemory{params.memory_limit_bytes, params.memory_limit_bytes};
    std::error_code size_ec;
    const uint64_t file_bytes = std::filesystem::file_size(path, size_ec);
    if (mem && !size_ec && file_bytes > mem->total_bytes) {
      throw EngineError(where + ": the model is " + format_bytes(file_bytes) + " but this machine has " +
                        format_bytes(mem->total_bytes) + " of memory; choose a smaller model or quantisation");
    }
    ModelOptions mo;
    mo.prefault = params.prefault;
    mo.pack_cpu = false;  // packed below, once it is known which layers the CPU runs
    st->model = std::make_unique<Model>(Model::load(path, mo));
    const Model& m = *st->model;
    const ModelHParams& hp = m.hparams();

    step(0.6f, "tokenizer");
    st->tokenizer = std::make_unique<Tokenizer>(vocab_from_gguf(m.file()));
    if (st->tokenizer->vocab().n_tokens() != hp.n_vocab) {
      throw EngineError(where + ": the tokenizer has " + std::to_string(st->tokenizer->vocab().n_tokens()) +
                        " tokens but the model's output has " + std::to_string(hp.n_vocab));
    }

    ModelInfo& info = st->info;
    info.path = path;
    info.name = m.file().opt_string("general.name").value_or(path.filename().string());
    info.architecture = arch_name(hp.arch);
    info.n_params = m.n_params();
    info.weights_bytes = m.weights_bytes();
    info.n_vocab = hp.n_vocab;
    info.n_ctx_train = hp.n_ctx_train;
    info.n_layer = hp.n_layer;
    info.n_embd = hp.n_embd;
    info.n_head = hp.n_head;
    info.n_head_kv = hp.n_head_kv;
    info.head_dim = hp.head_dim_k;

    // Chat template: the model's own, else ChatML with a warning.
    const std::optional<std::string> tpl_text = m.file().opt_string("tokenizer.chat_template");
    if (tpl_text && !tpl_text->empty()) {
      try {
        st->chat_template = ChatTemplate::parse(*tpl_text);
      } catch (const std::exception& e) {
        info.warnings.push_back(std::string("the model's chat template cannot be used (") + e.what() +
                                "); using ChatML instead");
      }
    } else {
      info.warnings.push_back("the model has no chat template; using ChatML");
    }
    if (!st->chat_template) {
      st->chat_template = ChatTemplate::parse(builtin_chatml_template());
      info.chat_template_builtin = true;
    }
    // GPU: probe only when asked; any reason not to use it becomes a warning and the CPU runs.
    std::shared_ptr<GpuBackend> gpu;
    if (params.gpu_layers != 0) {
      if (params.gpu_layers < -1) throw EngineError(where + ": gpu_layers must be -1 (auto), 0 or positive");
      GpuBackend::Probe probe = GpuBackend::probe();
      const bool explicit_layers = params.gpu_layers > 0;
      if (!probe.backend) {
        switch (probe.failure) {
          case GpuBackend::Failure::no_library: info.gpu_status = ModelInfo::GpuStatus::no_library; break;
          case GpuBackend::Failure::no_device: info.gpu_status = ModelInfo::GpuStatus::no_device; break;
          case GpuBackend::Failure::incomplete_library: info.gpu_status = ModelInfo::GpuStatus::other_version; break;
          default: info.gpu_status = ModelInfo::GpuStatus::load_failed; break;
        }
        info.gpu_reason = probe.reason;
        if (explicit_layers) info.warnings.push_back(probe.reason);
      } else if (const std::string why = gpu_unsupported_reason(m, *probe.backend); !why.empty()) {
        info.gpu_status = ModelInfo::GpuStatus::unsupported_model;
        info.gpu_reason = "this model cannot run on the GPU (" + why + "): running on the CPU";
        info.warnings.push_back(info.gpu_reason);
      } else {
        gpu = std::move(probe.backend);
      }
    }

    step(0.8f, "allocating cache");
    size_t n_ctx = params.n_ctx;
    if (n_ctx == 0) {
      n_ctx = hp.n_ctx_train > 0 ? std::min(static_cast<size_t>(hp.n_ctx_train), kDefaultMaxCtx) : kDefaultMaxCtx;
    }
    info.n_ctx = n_ctx;
    std::string why;
    const KvShape shape{hp.n_layer, hp.n_head_kv, hp.head_dim_k, hp.head_dim_v};
    // The cache mode: as asked, or by default k8 (DESIGN.md), on the GPU and the CPU alike; f16
    // when this model's shape cannot be packed. On the CPU k8 was measured at least as fast as f16
    // and faster at depth (docs/bench/cpu.md "The CPU's default cache mode (session 28)"), with
    // the K half of the cache in half the memory.
    CacheMode mode = params.cache_mode;
    const CacheMode default_mode = packed_mode_supported(shape, CacheMode::k8, nullptr) ? CacheMode::k8 : CacheMode::f16;
    if (params.cache_mode_default) mode = default_mode;
    if (!packed_mode_supported(shape, mode, &why)) {
      throw EngineError(where + ": cache mode " + cache_mode_name(mode) + " is not possible: " + why);
    }
    st->pool = std::make_unique<ThreadPool>(params.n_threads);
    size_t max_batch = std::min(gpu ? kPrefillChunkGpu : kPrefillChunkCpu, n_ctx);
    int32_t n_gpu = 0;
    if (gpu) {
      const int32_t n_layer = static_cast<int32_t>(hp.n_layer);
      // The layers on the device for a prefill batch, and whether the prefill BLAS's scratch comes
      // with them (GpuForward decides the same way from the layers it is given).
      auto fit_for = [&](size_t batch) -> GpuLayerFit {
        const uint64_t usable = gpu_usable_bytes(*gpu, GpuForwardOptions{}.headroom);
        if (params.gpu_layers < 0) return fit_gpu_layers(m, *gpu, mode, n_ctx, batch, usable);
        const int32_t n = std::min(params.gpu_layers, n_layer);
        return {n, plan_gpu_memory(m, *gpu, n, mode, n_ctx, batch, true).total() <= usable};
      };
      GpuLayerFit base = fit_for(max_batch);
      if (base.layers < n_layer && max_batch > kPrefillChunkCpu) {  // layers left to the CPU: its batch size
        max_batch = std::min(kPrefillChunkCpu, n_ctx);
        base = fit_for(max_batch);
      }
      n_gpu = base.layers;
      if (n_gpu == n_layer) {  // every layer on the device: a larger chunk where its memory allows
        const uint64_t usable = gpu_usable_bytes(*gpu, GpuForwardOptions{}.headroom);
        max_batch = choose_gpu_prefill_chunk(n_ctx, n_layer, m.weights_bytes(), usable, [&](size_t chunk) {
          const GpuLayerFit f = fit_for(chunk);
          // A larger chunk that would leave the BLAS out is not taken: BLAS at the base chunk
          // prefills faster than the int8 kernels at 2048 (docs/bench/gpu.md, session 42).
          const int32_t layers = base.blas && !f.blas ? 0 : f.layers;
          return PrefillChunkPlan{layers, plan_gpu_memory(m, *gpu, f.layers, mode, n_ctx, chunk, f.blas).total()};
        });
      }
      if (n_gpu == 0) {
        info.gpu_status = ModelInfo::GpuStatus::no_memory;
        info.gpu_reason = "the GPU (" + gpu->device_name() + ") has too little free memory for one layer beside a " +
                          "context of " + std::to_string(n_ctx) + " tokens: running on the CPU";
        info.warnings.push_back(info.gpu_reason);
        gpu.reset();
      }
    }
    if (gpu) {
      // The host keeps the layers left to the CPU and their cache.
      const GpuMemoryPlan plan = plan_gpu_memory(m, *gpu, n_gpu, mode, n_ctx, max_batch);
      const KvShape host_shape{hp.n_layer - n_gpu, hp.n_head_kv, hp.head_dim_k, hp.head_dim_v};
      const uint64_t host_weights = m.weights_bytes() > plan.weights_bytes ? m.weights_bytes() - plan.weights_bytes : 0;
      if (mem && n_gpu < hp.n_layer) check_context_fits(where, *mem, host_weights, host_shape, mode, n_ctx);
      step(0.85f, "copying weights to the GPU");
      GpuForwardOptions go;
      go.n_gpu_layers = n_gpu;
      go.mode = mode;
      go.capacity = n_ctx;
      go.max_batch = max_batch;
      st->gpu = std::make_unique<GpuForward>(m, gpu, go);
      if (n_gpu < hp.n_layer) {
        step(0.9f, "preparing the weights for the CPU");
        st->model->pack_for_cpu(static_cast<size_t>(n_gpu), false);  // the GPU computes the logits
      }
      info.backend = gpu->device_name();
      info.gpu_status = ModelInfo::GpuStatus::used;
      info.gpu_layers = st->gpu->n_gpu_layers();
      info.gpu_weights_bytes = st->gpu->plan().weights_bytes;
      info.gpu_blas = st->gpu->prefill_blas_use();
      info.gpu_blas_name = st->gpu->blas_name();
    } else {
      if (mem) check_context_fits(where, *mem, m.weights_bytes(), shape, mode, n_ctx);
      step(0.85f, "preparing the weights for the CPU");
      st->model->pack_for_cpu(0, true);
      st->cache = std::make_unique<KvCache>(kv_cache_config(m, mode, n_ctx));
      max_batch = choose_cpu_prefill_chunk(n_ctx, st->pool->n_threads(), kernels::amx_prefill_active());
      st->forward = std::make_unique<Forward>(m, max_batch);
    }
    info.cache_mode = mode;
    info.prefill_chunk = max_batch;  // tokens per prefill batch (the forward's max_batch)
    info.n_threads = st->pool->n_threads();
    info.cpu_kernels = cpu_kernels_label();
    step(1.0f, "ready");
  } catch (const EngineError&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    // Lower rooms usually name the file already; add it when they did not.
    throw EngineError(what.find(where) == std::string::npos ? where + ": " + what : what);
  }
  s_ = std::move(st);
  notify_memory();
}

ModelInfo Engine::model_info() const { return state().info; }

const Tokenizer& Engine::tokenizer() const { return *state().tokenizer; }

const Model& Engine::model() const { return *state().model; }

const std::vector<int32_t>& Engine::cached_tokens() const { return state().cached; }

void Engine::reset_context() {
  if (!s_) return;
  s_->clear();
  notify_memory();
}

MemoryReport Engine::memory_report() const {
  const State& st = state();
  if (st.gpu) return st.gpu->memory_report();
  return make_memory_report(*st.cache, st.model->weights_bytes(), st.forward->scratch_bytes());
}

void Engine::set_memory_callback(MemoryCallback callback) { on_memory_ = std::move(callback); }

void Engine::notify_memory() const {
  if (on_memory_ && s_) on_memory_(memory_report());
}

std::string Engine::render_chat(const std::vector<ChatMessage>& messages, const std::string& system_prompt) const {
  State& st = state();
  const Vocab& v = st.tokenizer->vocab();
  ChatTemplateInputs in;
  if (!system_prompt.empty() && (messages.empty() || messages.front().role != "system")) {
    in.messages.push_back(ChatMessage{"system", system_prompt, {}});
  }
  in.messages.insert(in.messages.end(), messages.begin(), messages.end());
  in.add_generation_prompt = true;
  if (v.bos != kNoToken) in.bos_token = v.tokens[static_cast<size_t>(v.bos)];
  if (v.eos != kNoToken) in.eos_token = v.tokens[static_cast<size_t>(v.eos)];
  try {
    return st.chat_template->render(in);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    // The template's own raise_exception() speaks to the person (e.g. "roles must alternate").
    if (what.find("template raised an error") != std::string::npos || st.info.chat_template_builtin) {
      throw EngineError("chat template: " + what);
    }
    // Anything else (a step or output limit, an unsupported construct) is the template's fault:
    // from now on ChatML is used, and the model info says so.
    st.info.warnings.push_back("the model's chat template failed while rendering (" + what + "); using ChatML");
    st.info.chat_template_builtin = true;
    st.chat_template = ChatTemplate::parse(builtin_chatml_template());
    return st.chat_template->render(in);
  }
}

std::vector<int32_t> Engine::prompt_tokens(const GenerateRequest& request) const {
  const State& st = state();
  const Vocab& v = st.tokenizer->vocab();
  const bool chat = !request.messages.empty();
  const std::string text = chat ? render_chat(request.messages, request.system_prompt) : request.prompt;
  std::vector<int32_t> ids;
  try {
    ids = st.tokenizer->encode(text, /*add_special=*/false, chat ? true : request.parse_special);
  } catch (const std::exception& e) {
    throw EngineError(std::string("tokenizer: ") + e.what());
  }
  // BOS as the vocab asks, unless the text (a template printing bos_token) already starts with it.
  if (v.add_bos && v.bos != kNoToken && (ids.empty() || ids.front() != v.bos)) ids.insert(ids.begin(), v.bos);
  return ids;
}

std::span<const float> Engine::evaluate(std::span<const int32_t> tokens, size_t pos0) {
  State& st = state();
  if (pos0 > st.cached.size()) {
    throw EngineError("engine: evaluate at position " + std::to_string(pos0) + " but the cache holds " +
                      std::to_string(st.cached.size()) + " tokens");
  }
  if (pos0 + tokens.size() > st.capacity()) {
    throw EngineError("engine: " + std::to_string(pos0 + tokens.size()) + " tokens do not fit the context of " +
                      std::to_string(st.capacity()));
  }
  st.cached.resize(pos0);
  std::span<const float> logits;
  try {
    logits = st.gpu ? st.gpu->run(*st.pool, tokens, pos0) : st.forward->run(*st.cache, *st.pool, tokens, pos0);
  } catch (const std::exception& e) {
    st.cached.resize(std::min(st.cached.size(), st.gpu ? st.gpu->n_tokens() : st.cache->n_tokens()));
    throw EngineError(std::string("forward pass: ") + e.what());
  }
  st.cached.insert(st.cached.end(), tokens.begin(), tokens.end());
  return logits;
}

GenerateResult Engine::generate(const GenerateRequest& request, const TokenCallback& on_text,
                                const std::atomic<bool>& cancel) {
  State& st = state();
  const auto t_start = Clock::now();
  try {
    sampler_params_validate(request.sampling);
  } catch (const std::exception& e) {
    throw EngineError(e.what());
  }
  for (const auto& s : request.stop) {
    if (s.empty()) throw EngineError("generate: a stop string is empty");
  }
  const size_t n_ctx = st.capacity();
  // The room kept for the answer: a quarter of the context, or max_tokens when smaller.
  const size_t reserve = std::max<size_t>(
      1, request.max_tokens > 0 ? std::min(static_cast<size_t>(request.max_tokens), n_ctx / 4) : n_ctx / 4);
  std::vector<int32_t> prompt = prompt_tokens(request);
  size_t n_dropped = 0;
  if (!request.messages.empty() && prompt.size() + reserve > n_ctx) {
    // Drop whole turns from the front (a user message and the replies after it), never the
    // system prompt nor the newest message, until the conversation fits.
    GenerateRequest trimmed = request;
    auto first_turn = [&]() -> size_t {
      size_t i = 0;
      while (i < trimmed.messages.size() && trimmed.messages[i].role == "system") ++i;
      return i;
    };
    while (prompt.size() + reserve > n_ctx) {
      const size_t begin = first_turn();
      if (begin + 1 >= trimmed.messages.size()) break;  // only the newest message is left
      size_t end = begin + 1;
      while (end + 1 < trimmed.messages.size() && trimmed.messages[end].role != "user") ++end;
      n_dropped += end - begin;
      trimmed.messages.erase(trimmed.messages.begin() + static_cast<std::ptrdiff_t>(begin),
                             trimmed.messages.begin() + static_cast<std::ptrdiff_t>(end));
      prompt = prompt_tokens(trimmed);
    }
  }
  if (prompt.empty()) throw EngineError("generate: the prompt is empty");
  if (prompt.size() >= n_ctx) {
    throw EngineError("generate: the prompt is " + std::to_string(prompt.size()) + " tokens but the context holds " +
                      std::to_string(n_ctx) + "; start a new conversation, shorten it, or load with a larger context");
  }

  GenerateResult result;
  GenerateStats& stats = result.stats;
  stats.n_prompt_tokens = prompt.size();
  stats.n_dropped_messages = n_dropped;
  if (n_dropped > 0) {
    stats.message = "left out the " + std::to_string(n_dropped) + " oldest message" + (n_dropped == 1 ? "" : "s") +
                    " so the conversation fits the context of " + std::to_string(n_ctx) + " tokens";
  }

  // Prefix reuse: keep the cached tokens that match the prompt, but evaluate at least the last
  // prompt token so its logits exist.
  size_t keep = 0;
  while (keep < st.cached.size() && keep < prompt.size() && st.cached[keep] == prompt[keep]) ++keep;
  keep = std::min(keep, prompt.size() - 1);
  stats.n_reused_tokens = keep;

  auto finish = [&](StopReason reason) -> GenerateResult {
    stats.stop_reason = reason;
    stats.n_generated = result.tokens.size();
    stats.n_context_tokens = st.cached.size();
    return std::move(result);
  };

  // GPU decode steps send back only the best logits the sampler needs (its bound for this answer),
  // not the row: run() then returns an empty span and the sampler reads GpuForward::logits_top().
  // Turned back to whole rows when this call ends, however it ends.
  struct TopRequest {
    GpuForward* gpu = nullptr;
    ~TopRequest() {
      if (gpu != nullptr) gpu->set_logits_top(0);
    }
  } top_request;
  if (st.gpu && st.gpu->set_logits_top(sampler_top_bound(request.sampling))) top_request.gpu = st.gpu.get();

  // Prefill [keep, n_prompt) in chunks, cancel checked between them.
  std::span<const float> logits;
  size_t pos = keep;
  const auto t_prefill = Clock::now();
  while (pos < prompt.size()) {
    if (cancel.load(std::memory_order_relaxed)) {
      stats.n_prefill_tokens = pos - keep;
      stats.prefill_ms = ms_between(t_prefill, Clock::now());
      notify_memory();
      return finish(StopReason::cancelled);
    }
    const size_t n = std::min(st.info.prefill_chunk, prompt.size() - pos);
    logits = evaluate(std::span<const int32_t>(prompt).subspan(pos, n), pos);
    pos += n;
  }
  const auto t_prefilled = Clock::now();
  stats.n_prefill_tokens = prompt.size() - keep;
  stats.prefill_ms = ms_between(t_prefill, t_prefilled);
  if (stats.prefill_ms > 0.0) stats.prefill_tps = 1000.0 * static_cast<double>(stats.n_prefill_tokens) / stats.prefill_ms;
  notify_memory();

  // Decode.
  Sampler sampler(request.sampling);
  StreamingDetokenizer detok(*st.tokenizer);
  std::vector<int32_t> history = prompt;  // for the repetition penalty
  std::string text;        // everything detokenised so far
  size_t emitted = 0;      // bytes of text already given to on_text
  size_t decode_steps = 0;
  double decode_ms = 0.0;

  auto emit_to = [&](size_t end) {
    if (end > emitted) {
      if (on_text) on_text(std::string_view(text).substr(emitted, end - emitted));
      emitted = end;
    }
  };
  auto end_stream = [&](StopReason reason) -> GenerateResult {
    text += detok.flush();
    if (!request.stop.empty()) {
      const size_t at = stop_strings::find(text, request.stop, emitted);
      if (at != std::string::npos) {
        text.resize(at);
        reason = StopReason::stop_string;
      }
    }
    emit_to(text.size());
    result.text = text;
    stats.decode_ms = decode_ms;
    if (decode_ms > 0.0) stats.decode_tps = 1000.0 * static_cast<double>(decode_steps) / decode_ms;
    return finish(reason);
  };

  const bool unlimited = request.max_tokens <= 0;
  for (;;) {
    const auto t_step = Clock::now();
    int32_t id = 0;
    try {
      if (logits.empty()) {  // a GPU step's best logits (top_request)
        id = sampler.sample_top(st.gpu->logits_top(), history);
      } else {
        id = sampler.sample(logits, history);
      }
    } catch (const std::exception& e) {
      throw EngineError(std::string("sampler: ") + e.what());
    }
    if (result.tokens.empty()) stats.ttft_ms = ms_between(t_start, Clock::now());
    if (st.tokenizer->is_eog(id)) {
      decode_ms += ms_between(t_step, Clock::now());
      return end_stream(StopReason::eog);
    }
    result.tokens.push_back(id);
    history.push_back(id);

    text += detok.push(id);
    if (!request.stop.empty()) {
      // Held-back text covers every partial stop string, so a match starts at or after `emitted`.
      const size_t at = stop_strings::find(text, request.stop, emitted);
      if (at != std::string::npos) {
        text.resize(at);
        emit_to(at);
        result.text = text;
        stats.decode_ms = decode_ms + ms_between(t_step, Clock::now());
        if (stats.decode_ms > 0.0) stats.decode_tps = 1000.0 * static_cast<double>(decode_steps) / stats.decode_ms;
        return finish(StopReason::stop_string);
      }
      emit_to(text.size() - stop_strings::holdback(text, request.stop));
    } else {
      emit_to(text.size());
    }

    if (!unlimited && result.tokens.size() >= static_cast<size_t>(request.max_tokens)) {
      decode_ms += ms_between(t_step, Clock::now());
      return end_stream(StopReason::max_tokens);
    }
    if (cancel.load(std::memory_order_relaxed)) {
      decode_ms += ms_between(t_step, Clock::now());
      return end_stream(StopReason::cancelled);
    }
    if (st.cached.size() + 1 > n_ctx) {
      decode_ms += ms_between(t_step, Clock::now());
      stats.message = "the context of " + std::to_string(n_ctx) +
                      " tokens is full; start a new conversation or load the model with a larger context";
      return end_stream(StopReason::context_full);
    }
    logits = evaluate(std::span<const int32_t>(&id, 1), st.cached.size());
    ++decode_steps;
    decode_ms += ms_between(t_step, Clock::now());
    notify_memory();
  }
}

}  // namespace alap
