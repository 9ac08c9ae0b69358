// The llama-family forward pass (FORMATS.md §6–§7): tokens at positions pos0.. in, logits out,
// K/V appended to a KvCache. Two implementations with one contract: `Forward` (run time:
// threaded matmuls, scratch allocated once so decode allocates nothing) and `forward_reference`
// (core/model/forward_ref.cpp: one readable function, single-threaded, the oracle).
// Not sampling (core/sample) and not tokenisation (core/text).
//
//   alap::Model model = alap::Model::load(path);
//   alap::KvCache cache(alap::kv_cache_config(model, alap::CacheMode::k8, 2048));
//   alap::ThreadPool pool(4);
//   alap::Forward fwd(model, /*max_batch=*/256);
//   std::span<const float> logits = fwd.run(cache, pool, prompt_ids, /*pos0=*/0);  // [n_vocab]
//   // greedy: next = argmax(logits); then decode one token at a time:
//   logits = fwd.run(cache, pool, std::span(&next, 1), cache.n_tokens());
//   // perplexity: fwd.run(cache, pool, ids, 0, alap::LogitsMode::all) → [n][n_vocab]
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/model/model.h"
#include "core/runtime/kv_cache.h"
#include "core/runtime/thread_pool.h"

namespace alap {

enum class LogitsMode {
  last,  // logits of the last token only: [n_vocab]
  all,   // logits of every token of the batch: [n_tokens][n_vocab]
};

// A cache config matching the model's KV shape (n_layer, n_head_kv, head dims).
KvCacheConfig kv_cache_config(const Model& model, CacheMode mode, size_t capacity);

// The run-time forward pass. Holds scratch buffers sized for max_batch tokens; one Forward per
// model and thread of use (it is not thread-safe itself; it parallelises through the pool).
class Forward {
 public:
  explicit Forward(const Model& model, size_t max_batch = 256);
  ~Forward();
  Forward(Forward&&) noexcept;
  Forward& operator=(Forward&&) noexcept;

  // Evaluates tokens[0..n) at positions pos0 .. pos0+n-1. Requires pos0 <= cache.n_tokens()
  // (the cache is truncated to pos0 first: tokens after pos0 are dropped) and pos0 + n <=
  // cache.capacity(); n > max_batch is processed in chunks. On return cache.n_tokens() ==
  // pos0 + n. The span stays valid until the next call. Throws ModelError for an empty batch,
  // a token id outside [0, n_vocab), a full cache or a cache shape that is not the model's.
  std::span<const float> run(KvCache& cache, ThreadPool& pool, std::span<const int32_t> tokens, size_t pos0,
                             LogitsMode mode = LogitsMode::last);

  // Partial offload: layers [first_layer, n_layer) and the output head on hidden states x [n][E]
  // that layers [0, first_layer) computed elsewhere (the GPU). `cache` holds only those layers
  // (its layer i is the model's first_layer + i); otherwise the contract of run(). With
  // logits == false no output head runs and the span is empty.
  std::span<const float> run_from_hidden(KvCache& cache, ThreadPool& pool, const float* x, size_t n, size_t pos0,
                                         size_t first_layer, LogitsMode mode = LogitsMode::last, bool logits = true);

  size_t max_batch() const;
  size_t scratch_bytes() const;  // bytes of scratch held now (for the memory report)

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The reference forward pass: same contract as Forward::run, single-threaded, plain loops,
// kernels::dequantize_row for weights. Attention follows the cache mode's arithmetic with plain
// loops: f16 K/V read through KvCache::read_k/read_v; packed K scored as Σ_b d_q·d_k·Σ q_q·k_q
// with the query quantised by kernels::k8_quantize; packed V dequantised. Returns a fresh vector.
// exact_kv: attention over this batch's own positions uses the f32 K/V just computed instead of
// the cache's rounded copy (the cache is still written) — the full-precision oracle that
// transformers' float32 logits are compared with.
std::vector<float> forward_reference(const Model& model, KvCache& cache, std::span<const int32_t> tokens,
                                     size_t pos0, LogitsMode mode = LogitsMode::last, bool exact_kv = false);

}  // namespace alap
