// Perplexity and KV-cache comparison (perplexity.h): one Forward with LogitsMode::all per window,
// NLL and KL in double over the full vocabulary. Not the CLI's printing (app/cli/perplexity.cpp).
#include "core/engine/perplexity.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>

#include "core/engine/engine.h"
#include "core/engine/engine_error.h"
#include "core/engine/prefill_chunk.h"
#include "core/model/forward.h"
#include "core/model/forward_gpu.h"
#include "core/runtime/gpu_backend.h"
#include "core/runtime/kv_cache.h"
#include "core/runtime/thread_pool.h"
#include "core/sample/logit_stats.h"

namespace alap {

namespace {

void check_params(std::span<const int32_t> tokens, const PerplexityParams& params) {
  if (params.n_ctx < 4) throw EngineError("perplexity: --ctx must be at least 4, got " + std::to_string(params.n_ctx));
  if (tokens.size() < params.n_ctx) {
    throw EngineError("perplexity: the text has " + std::to_string(tokens.size()) + " tokens, fewer than one window of " +
                      std::to_string(params.n_ctx) + " (use a longer file or a smaller --ctx)");
  }
}

// The window of chunk c: tokens [c·n_ctx, (c+1)·n_ctx) with BOS in place of the first one when
// the vocab adds BOS.
std::vector<int32_t> window_of(const Vocab& vocab, std::span<const int32_t> tokens, size_t c, size_t n_ctx) {
  std::vector<int32_t> w(tokens.begin() + static_cast<std::ptrdiff_t>(c * n_ctx),
                         tokens.begin() + static_cast<std::ptrdiff_t>((c + 1) * n_ctx));
  if (vocab.add_bos && vocab.bos != kNoToken) w[0] = vocab.bos;
  return w;
}

void check_cancel(const PerplexityParams& params) {
  if (params.cancel != nullptr && params.cancel->load(std::memory_order_relaxed)) {
    throw EngineError("perplexity: cancelled");
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One window's logits (all rows) from an empty cache: on the CPU forward pass, or on the GPU's
// when params.gpu_layers asks for it and it is there (with the CPU's layers beside it).
class WindowRunner {
 public:
  WindowRunner(const Model& model, const PerplexityParams& params, ThreadPool& pool)
      : model_(model), pool_(pool) {
    info_.n_layer = model.hparams().n_layer;
    info_.n_threads = pool.n_threads();
    info_.cpu_kernels = cpu_kernels_label();
    if (params.gpu_layers != 0) gpu_ = open_gpu(params);
    if (!gpu_) {  // the host's cache only for the CPU pass (the GPU keeps its own)
      cache_ = std::make_unique<KvCache>(kv_cache_config(model, params.mode, params.n_ctx));
      cpu_ = std::make_unique<Forward>(model, params.n_ctx);
    }
  }
  std::span<const float> run(std::span<const int32_t> window) {
    if (gpu_) {
      gpu_->clear();
      return gpu_->run(pool_, window, 0, LogitsMode::all);
    }
    cache_->clear();
    return cpu_->run(*cache_, pool_, window, 0, LogitsMode::all);
  }
  std::string backend() const { return backend_summary(info_) + (why_cpu_.empty() ? "" : "; " + why_cpu_); }

 private:
  std::unique_ptr<GpuForward> open_gpu(const PerplexityParams& params) {
    std::shared_ptr<GpuBackend> gpu = params.gpu;
    if (!gpu) {
      GpuBackend::Probe probe = GpuBackend::probe();
      if (!probe.backend) {
        why_cpu_ = "no GPU: " + probe.reason;
        return nullptr;
      }
      gpu = probe.backend;
    }
    GpuForwardOptions o;
    o.n_gpu_layers = params.gpu_layers;
    o.mode = params.mode;
    o.capacity = params.n_ctx;
    o.max_batch = std::min(kPrefillChunkGpu, params.n_ctx);
    o.graphs = false;  // no decode steps
    try {
      auto g = std::make_unique<GpuForward>(model_, gpu, o);
      info_.gpu_layers = g->n_gpu_layers();
      info_.backend = gpu->device_name();
      info_.gpu_weights_bytes = g->plan().weights_bytes;
      return g;
    } catch (const ModelError& e) {
      if (params.gpu_layers > 0) throw EngineError(std::string("perplexity on the GPU: ") + e.what());
      why_cpu_ = std::string("not on the GPU: ") + e.what();
      return nullptr;
    }
  }

  const Model& model_;
  ThreadPool& pool_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<Forward> cpu_;
  std::unique_ptr<GpuForward> gpu_;
  ModelInfo info_;
  std::string why_cpu_;
};

}  // namespace

std::vector<int32_t> perplexity_tokens(const Tokenizer& tokenizer, std::string_view text) {
  return tokenizer.encode(text, /*add_special=*/true, /*parse_special=*/false);
}

size_t perplexity_n_chunks(size_t n_tokens, const PerplexityParams& params) {
  if (params.n_ctx == 0) return 0;
  size_t n = n_tokens / params.n_ctx;
  if (params.max_chunks > 0) n = std::min(n, params.max_chunks);
  return n;
}

size_t perplexity_scored_per_chunk(size_t n_ctx) { return n_ctx < 4 ? 0 : n_ctx - 1 - n_ctx / 2; }

PerplexityResult perplexity(const Model& model, const Vocab& vocab, std::span<const int32_t> tokens,
                            const PerplexityParams& params, const PerplexityProgress& progress) {
  check_params(tokens, params);
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n_ctx = params.n_ctx;
  const size_t n_vocab = static_cast<size_t>(model.hparams().n_vocab);
  const size_t n_chunks = perplexity_n_chunks(tokens.size(), params);
  const size_t first = n_ctx / 2;

  ThreadPool pool(params.n_threads);
  WindowRunner runner(model, params, pool);

  double nll_sum = 0.0;
  uint64_t n_scored = 0;
  for (size_t c = 0; c < n_chunks; ++c) {
    check_cancel(params);
    const std::vector<int32_t> w = window_of(vocab, tokens, c, n_ctx);
    // logits [n_ctx][n_vocab]: row j predicts token j + 1
    const std::span<const float> logits = runner.run(w);
    for (size_t j = first; j + 1 < n_ctx; ++j) {
      const float* row = logits.data() + j * n_vocab;
      const RowStats s = row_stats(row, n_vocab);
      nll_sum += s.log_z - static_cast<double>(row[static_cast<size_t>(w[j + 1])]);
      ++n_scored;
    }
    if (progress) progress(c + 1, n_chunks, std::exp(nll_sum / static_cast<double>(n_scored)));
  }
  PerplexityResult r;
  r.n_chunks = n_chunks;
  r.n_scored = n_scored;
  r.nll_mean = nll_sum / static_cast<double>(n_scored);
  r.ppl = std::exp(r.nll_mean);
  r.seconds = seconds_since(t0);
  r.backend = runner.backend();
  return r;
}

KvCompareResult kv_compare(const Model& model, const Vocab& vocab, std::span<const int32_t> tokens,
                           const PerplexityParams& params, const PerplexityProgress& progress) {
  check_params(tokens, params);
  const auto t0 = std::chrono::steady_clock::now();
  const size_t n_ctx = params.n_ctx;
  const size_t n_vocab = static_cast<size_t>(model.hparams().n_vocab);
  const size_t n_chunks = perplexity_n_chunks(tokens.size(), params);
  const size_t first = n_ctx / 2;
  const size_t n_rows = perplexity_scored_per_chunk(n_ctx);

  KvCache cache_f16(kv_cache_config(model, CacheMode::f16, n_ctx));
  KvCache cache_mode(kv_cache_config(model, params.mode, n_ctx));
  ThreadPool pool(params.n_threads);
  Forward fwd(model, n_ctx);
  std::vector<float> base(n_rows * n_vocab);  // f16 logits of the scored rows [n_rows][n_vocab]

  double nll_f16 = 0.0, nll_mode = 0.0, kl_sum = 0.0, kl_max = 0.0;
  uint64_t n_scored = 0, n_agree = 0;
  for (size_t c = 0; c < n_chunks; ++c) {
    check_cancel(params);
    const std::vector<int32_t> w = window_of(vocab, tokens, c, n_ctx);
    cache_f16.clear();
    const std::span<const float> lf = fwd.run(cache_f16, pool, w, 0, LogitsMode::all);
    std::copy(lf.begin() + static_cast<std::ptrdiff_t>(first * n_vocab),
              lf.begin() + static_cast<std::ptrdiff_t>((first + n_rows) * n_vocab), base.begin());
    cache_mode.clear();
    const std::span<const float> lm = fwd.run(cache_mode, pool, w, 0, LogitsMode::all);
    for (size_t r = 0; r < n_rows; ++r) {
      const size_t j = first + r;
      const float* a = base.data() + r * n_vocab;
      const float* b = lm.data() + j * n_vocab;
      const RowStats sa = row_stats(a, n_vocab);
      const RowStats sb = row_stats(b, n_vocab);
      const size_t next = static_cast<size_t>(w[j + 1]);
      nll_f16 += sa.log_z - static_cast<double>(a[next]);
      nll_mode += sb.log_z - static_cast<double>(b[next]);
      const double kl = kl_divergence(a, sa, b, sb, n_vocab);
      kl_sum += kl;
      kl_max = std::max(kl_max, kl);
      if (sa.argmax == sb.argmax) ++n_agree;
      ++n_scored;
    }
    if (progress) progress(c + 1, n_chunks, std::exp(nll_mode / static_cast<double>(n_scored)));
  }
  KvCompareResult r;
  const double n = static_cast<double>(n_scored);
  r.ppl_f16 = std::exp(nll_f16 / n);
  r.ppl_mode = std::exp(nll_mode / n);
  r.kl_mean = kl_sum / n;
  r.kl_max = kl_max;
  r.top1_agreement = static_cast<double>(n_agree) / n;
  r.n_scored = n_scored;
  r.n_chunks = n_chunks;
  r.seconds = seconds_since(t0);
  return r;
}

}  // namespace alap
