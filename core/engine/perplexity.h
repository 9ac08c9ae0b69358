// Perplexity and KV-cache comparison by the common convention of DESIGN.md "alap-cli": windows of
// n_ctx tokens from one tokenisation of the whole text, BOS in place of each window's first token,
// each window from an empty cache, positions n_ctx/2 … n_ctx-2 scored. Not the CLI (app/cli).
//
//   alap::Model model = alap::Model::load(path);
//   alap::Tokenizer tok(alap::vocab_from_gguf(model.file()));
//   auto ids = alap::perplexity_tokens(tok, text);                  // BOS first when the vocab adds one
//   alap::PerplexityParams p;                                    // n_ctx 512, f16, every window
//   alap::PerplexityResult r = alap::perplexity(model, tok.vocab(), ids, p);   // r.ppl, r.n_scored
//   p.mode = alap::CacheMode::k8;
//   alap::KvCompareResult c = alap::kv_compare(model, tok.vocab(), ids, p);    // c.kl_mean, ...
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/runtime/memory_plan.h"
#include "core/text/tokenizer.h"

namespace alap {

class GpuBackend;  // core/runtime/gpu_backend.h

struct PerplexityParams {
  size_t n_ctx = 512;        // window length in tokens (>= 4)
  CacheMode mode = CacheMode::f16;  // perplexity: the cache to evaluate; kv_compare: the mode set against f16
  size_t max_chunks = 0;     // 0: every whole window of the text
  size_t n_threads = 0;      // 0: one per physical core (physical_core_count())
  const std::atomic<bool>* cancel = nullptr;  // checked between windows; throws EngineError when set
  // perplexity: layers on the GPU, as the engine's (core/engine/engine.h): 0 the CPU only, -1 as
  // many as fit (the CPU, with the reason in PerplexityResult::backend, when no GPU is found or
  // none fits), N the first N (EngineError when they do not fit). The backend is `gpu` when set,
  // else GpuBackend::probe()'s. A window runs as one prefill batch of up to 512 tokens a pass.
  int32_t gpu_layers = 0;
  std::shared_ptr<GpuBackend> gpu;
};

struct PerplexityResult {
  double ppl = 0.0;        // exp(nll_mean)
  double nll_mean = 0.0;   // mean negative log-likelihood (nats) of the scored tokens
  uint64_t n_scored = 0;   // n_chunks · perplexity_scored_per_chunk(n_ctx)
  size_t n_chunks = 0;
  double seconds = 0.0;
  // Where it ran: "CPU, 8 threads" or "GPU <device>, 16 of 16 layers (…)" (backend_summary), and
  // after "; " why not on the GPU when it was asked for.
  std::string backend;
};

struct KvCompareResult {
  double ppl_f16 = 0.0;
  double ppl_mode = 0.0;
  double kl_mean = 0.0;         // mean over scored positions of KL(p_f16 ‖ p_mode), nats, in double
  double kl_max = 0.0;
  double top1_agreement = 0.0;  // fraction of scored positions whose argmax is the same
  uint64_t n_scored = 0;
  size_t n_chunks = 0;
  double seconds = 0.0;
};

// Called after each window: windows done, windows in all, the running figure (ppl, or for
// kv_compare the running ppl of the mode).
using PerplexityProgress = std::function<void(size_t done, size_t total, double running_ppl)>;

// The whole text tokenised once: vocab's add_bos rule, no special-token parsing.
std::vector<int32_t> perplexity_tokens(const Tokenizer& tokenizer, std::string_view text);

// Number of windows a text of n_tokens gives (floor(n_tokens / n_ctx), capped by max_chunks),
// and the tokens scored in each (positions n_ctx/2 … n_ctx-2, each predicting the next).
size_t perplexity_n_chunks(size_t n_tokens, const PerplexityParams& params);
size_t perplexity_scored_per_chunk(size_t n_ctx);

// Throws EngineError (core/engine/engine.h) when n_ctx < 4, the text is shorter than one window,
// or on cancel. Windows longer than the model's training context are allowed (and score badly).
PerplexityResult perplexity(const Model& model, const Vocab& vocab, std::span<const int32_t> tokens,
                            const PerplexityParams& params, const PerplexityProgress& progress = {});

// Runs f16 and params.mode over the same windows (mode f16 is allowed: KL 0, a self-check).
KvCompareResult kv_compare(const Model& model, const Vocab& vocab, std::span<const int32_t> tokens,
                           const PerplexityParams& params, const PerplexityProgress& progress = {});

}  // namespace alap
