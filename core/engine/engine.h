// The engine facade the app and alap-cli call: load a GGUF model, generate (streamed, cancellable,
// reusing the cached KV prefix of the previous call), stats and the memory report. Plain C++: no
// Qt, no threads of its own besides the forward pass's pool; one caller thread at a time.
//
//   alap::Engine engine;
//   alap::LoadParams lp;
//   lp.n_ctx = 4096;
//   lp.cache_mode = alap::CacheMode::k8;
//   engine.load("model.gguf", lp, on_progress, &cancel_load);   // throws alap::EngineError
//   alap::GenerateRequest req;
//   req.messages = {{"user", "Hello"}};           // rendered with the model's chat template
//   req.system_prompt = "Be brief.";
//   req.sampling.seed = 42;
//   std::atomic<bool> cancel{false};              // set from any thread to stop within one token
//   alap::GenerateResult r = engine.generate(req, [](std::string_view text) { std::cout << text; }, cancel);
//   // r.text, r.stats.decode_tps, r.stats.stop_reason; engine.memory_report().kv_bytes
//   req.messages.push_back({"assistant", r.text});
//   req.messages.push_back({"user", "And then?"});   // the next call prefills only the new tokens
//
// The app runs on EngineInterface so its tests can use FakeEngine (core/engine/fake_engine.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/engine/engine_error.h"
#include "core/runtime/gpu_blas_use.h"
#include "core/runtime/memory_plan.h"
#include "core/runtime/memory_report.h"
#include "core/sample/sampler.h"
#include "core/text/chat_template.h"

namespace alap {

class Model;
class Tokenizer;

struct LoadParams {
  size_t n_ctx = 0;                       // 0: min(the model's training context, 4096)
  CacheMode cache_mode = CacheMode::f16;  // used when cache_mode_default is false
  // The person did not choose a mode: k8 wherever the model runs, f16 where its shape cannot be packed.
  bool cache_mode_default = false;
  size_t n_threads = 0;                   // 0: physical_core_count() (core/runtime/cpu_topology.h)
  // Layers on the GPU (libalap_gpu.so, core/runtime/gpu_backend.h): 0 = CPU only; N > 0 = the
  // first N (N >= the model's layers: all of them); -1 = as many as fit the device's free memory
  // beside the cache for n_ctx (5% kept free). When no GPU is usable the model runs on the CPU and
  // ModelInfo::warnings says why. The GPU's cache mode is cache_mode as given (k8 is its default
  // in alap-cli, DESIGN.md). Callers pick -1 by default only when default_gpu_layers() says so.
  int32_t gpu_layers = 0;
  bool prefault = false;                  // touch every weight page while loading
  // Memory the model and its cache may use; 0: this machine's available memory (MemAvailable).
  // A model larger than the machine's memory, or a context whose cache does not fit beside the
  // weights, is refused before anything large is touched, naming the largest context that fits
  // in each cache mode.
  uint64_t memory_limit_bytes = 0;
};

// fraction in [0, 1] and what is being done ("reading model", "tokenizer", "allocating cache").
using LoadProgress = std::function<void(float fraction, std::string_view stage)>;

struct ModelInfo {
  std::filesystem::path path;
  std::string name;          // general.name, else the file name
  std::string architecture;  // "llama", "qwen2", "qwen3"
  uint64_t n_params = 0;
  uint64_t weights_bytes = 0;
  int64_t n_vocab = 0;
  int64_t n_ctx_train = 0;
  size_t n_ctx = 0;          // the context this load allocated
  int64_t n_layer = 0;
  int64_t n_embd = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;
  CacheMode cache_mode = CacheMode::f16;
  size_t n_threads = 0;
  // The CPU kernels this machine runs, for people: "AVX-512 VNNI + AMX", "AVX2", "SSE4.1", ...
  // (cpu_kernels_label()); empty where nobody filled it in.
  std::string cpu_kernels;
  bool chat_template_builtin = false;  // the model's template was missing or unusable: ChatML is used
  std::vector<std::string> warnings;   // one line each (template fallback, GPU layers ignored, ...)
  std::string backend = "CPU";         // "CPU", or the GPU's name ("NVIDIA H200") when layers run there
  // Why no layer runs on the GPU although gpu_layers asked for some (the app shows it in its own
  // words by code; gpu_reason is the English detail). not_requested when gpu_layers was 0, used
  // when layers run there. An explicit N > 0 that cannot be honoured is also a warning; auto (-1)
  // falling back to the CPU is not (a CPU-only machine is normal). other_version: the library found
  // belongs to another version of Alap (a function missing, or another interface version).
  enum class GpuStatus {
    not_requested, used, no_library, load_failed, other_version, no_device, unsupported_model, no_memory
  };
  GpuStatus gpu_status = GpuStatus::not_requested;
  std::string gpu_reason;
  int32_t gpu_layers = 0;              // layers on the GPU (the rest on the CPU)
  uint64_t gpu_weights_bytes = 0;      // weights held in device memory
  size_t prefill_chunk = 0;            // prompt tokens a prefill batch takes (choose_gpu_prefill_chunk on the GPU)
  // Whether long prompts' products on the GPU take the vendor BLAS, or why not (none: no GPU layer),
  // and its name ("cuBLAS", "rocBLAS"; "" when the GPU library has none).
  GpuBlasUse gpu_blas = GpuBlasUse::none;
  std::string gpu_blas_name;
};

// -1 (auto) when a GPU backend is usable on this machine, else 0: the default of LoadParams::gpu_layers
// for the app and alap-cli. Loads the GPU library to find out (once per call; cheap after the first).
int32_t default_gpu_layers();
// One line for people: "GPU NVIDIA H200, 24 of 24 layers (403.2 MiB of weights); long prompts through
// cuBLAS" or "CPU, 8 threads" ("CPU, 8 threads, AVX2 kernels" where info.cpu_kernels is filled in).
std::string backend_summary(const ModelInfo& info);
// The CPU kernels the dispatcher chose, for people: "AVX-512 VNNI", "AVX-VNNI", "AVX2", "SSE4.1" or
// "scalar", with " + AMX" where the prefill products run on AMX tiles (kernels/quant.h amx_prefill_active()).
std::string cpu_kernels_label();

struct GenerateRequest {
  // Chat: when messages is non-empty they are rendered with the model's chat template (with the
  // generation prompt), system_prompt first as a "system" message when non-empty.
  std::vector<ChatMessage> messages;
  std::string system_prompt;
  // Raw: when messages is empty, prompt is tokenised as-is (BOS as the vocab asks).
  std::string prompt;
  bool parse_special = true;  // raw prompts: control-token texts become their ids

  SamplerParams sampling;
  int32_t max_tokens = 256;          // <= 0: until EOG, a stop string or the context is full
  std::vector<std::string> stop;     // generation ends before the first occurrence of any of these
};

enum class StopReason { eog, stop_string, max_tokens, cancelled, context_full };
const char* stop_reason_name(StopReason r);  // "eog", "stop_string", "max_tokens", "cancelled", "context_full"

struct GenerateStats {
  size_t n_prompt_tokens = 0;   // the whole rendered prompt
  size_t n_reused_tokens = 0;   // prompt tokens whose KV was kept from the previous call
  size_t n_prefill_tokens = 0;  // prompt tokens evaluated by this call (= n_prompt - n_reused)
  size_t n_generated = 0;       // tokens sampled (EOG not counted)
  size_t n_context_tokens = 0;  // tokens in the cache at the end
  size_t n_dropped_messages = 0;  // oldest chat messages left out so the prompt fits (see generate)
  double prefill_ms = 0.0;
  double decode_ms = 0.0;
  double prefill_tps = 0.0;     // n_prefill_tokens / prefill time
  double decode_tps = 0.0;      // decode steps / decode time
  double ttft_ms = 0.0;         // call start to the first sampled token
  StopReason stop_reason = StopReason::max_tokens;
  std::string message;          // one human line: what was dropped to fit, or why the context is full
};

struct GenerateResult {
  std::string text;              // what was streamed (stop string excluded)
  std::vector<int32_t> tokens;   // generated ids (EOG excluded)
  GenerateStats stats;
};

// Receives generated text in order; chunks are whole UTF-8 sequences.
using TokenCallback = std::function<void(std::string_view text)>;
// Called after prefill and after every decoded token.
using MemoryCallback = std::function<void(const MemoryReport&)>;

// What the app needs from an engine; Engine is the real one, FakeEngine the test double.
class EngineInterface {
 public:
  virtual ~EngineInterface() = default;

  // Throws EngineError (file, what is wrong) on failure or when *cancel becomes true; the previous
  // model, if any, is unloaded first.
  virtual void load(const std::filesystem::path& path, const LoadParams& params, const LoadProgress& progress = {},
                    const std::atomic<bool>* cancel = nullptr) = 0;
  virtual void unload() = 0;
  virtual bool is_loaded() const = 0;
  virtual ModelInfo model_info() const = 0;  // throws EngineError when nothing is loaded

  // Streams the reply through on_text; returns when it stops (see StopReason). Throws EngineError
  // when nothing is loaded, the request is invalid, or the prompt does not fit the context.
  // Context policy for chat requests: when the rendered conversation leaves less than a quarter
  // of the context (or max_tokens, if smaller) for the answer, the oldest turns are left out —
  // the system prompt and the newest user message always stay — and the prompt is prefilled
  // anew; stats.n_dropped_messages and stats.message say what was dropped.
  virtual GenerateResult generate(const GenerateRequest& request, const TokenCallback& on_text,
                                  const std::atomic<bool>& cancel) = 0;

  virtual void reset_context() = 0;  // forget the cached prefix (a new conversation)
  virtual MemoryReport memory_report() const = 0;
  virtual void set_memory_callback(MemoryCallback callback) = 0;
};

class Engine final : public EngineInterface {
 public:
  Engine();
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void load(const std::filesystem::path& path, const LoadParams& params, const LoadProgress& progress = {},
            const std::atomic<bool>* cancel = nullptr) override;
  void unload() override;
  bool is_loaded() const override;
  ModelInfo model_info() const override;
  GenerateResult generate(const GenerateRequest& request, const TokenCallback& on_text,
                          const std::atomic<bool>& cancel) override;
  void reset_context() override;
  MemoryReport memory_report() const override;
  void set_memory_callback(MemoryCallback callback) override;

  // Below: for alap-cli and tests (not in EngineInterface). All throw EngineError when unloaded.
  const Tokenizer& tokenizer() const;
  const Model& model() const;

  // The prompt tokens generate() would evaluate for this request (template rendered, BOS rule).
  std::vector<int32_t> prompt_tokens(const GenerateRequest& request) const;
  // The text the chat template renders for these messages (with the generation prompt).
  std::string render_chat(const std::vector<ChatMessage>& messages, const std::string& system_prompt) const;

  // Evaluates tokens at positions pos0.. (the cache is cut to pos0 first) and returns the last
  // token's logits [n_vocab], valid until the next call. For bench and tests.
  std::span<const float> evaluate(std::span<const int32_t> tokens, size_t pos0);
  // Token ids whose K/V the cache holds now, in order.
  const std::vector<int32_t>& cached_tokens() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
  MemoryCallback on_memory_;

  State& state() const;
  void notify_memory() const;
};

}  // namespace alap
