// The head and key-block loops of CPU attention (attention_cpu.h): packed queries, per-block
// online-softmax partials through the grouped-head kernels, and their combine in block order.
#include "core/model/attention_cpu.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "alap/kernels/attn.h"
#include "alap/kernels/kv_k8.h"

namespace alap {

namespace {

struct Dims {
  size_t H, Hk, G, Dk, Dv, nbk, nbv, ps;  // ps: floats per partial, G·(Dv + 2)
};

// One block's partial for the G heads of group g of token t: keys [k0, k1).
// part = {m[G], l[G], o[G][Dv]}.
void block_partial(const KvCache& cache, size_t layer, const Dims& d, const float* qf, const int8_t* qq,
                   const uint16_t* qd, size_t g, size_t k0, size_t k1, float scale, float* scores, float* part) {
  const size_t nk = k1 - k0, ld = CpuAttention::kKeyBlock;
  if (cache.k_packed()) {
    kernels::k8_scores_heads(qq, qd, d.G, cache.k_q8(layer, g) + k0 * d.Dk, cache.k_scales(layer, g) + k0 * d.nbk,
                             d.Dk, nk, scale, scores, ld);
  } else {
    kernels::f16_scores_heads(qf, d.G, cache.k_f16(layer, g) + k0 * d.Dk, d.Dk, nk, scale, scores, ld);
  }
  float* m = part;
  float* l = part + d.G;
  float* o = part + 2 * d.G;
  for (size_t h = 0; h < d.G; ++h) kernels::softmax_partial(scores + h * ld, nk, &m[h], &l[h]);
  std::fill(o, o + d.G * d.Dv, 0.0f);
  if (cache.v_packed()) {
    kernels::k8_accum_v_heads(scores, ld, d.G, cache.v_q8(layer, g) + k0 * d.Dv, cache.v_scales(layer, g) + k0 * d.nbv,
                              d.Dv, cache.block_v(), nk, o);
  } else {
    kernels::f16_accum_v_heads(scores, ld, d.G, cache.v_f16(layer, g) + k0 * d.Dv, d.Dv, nk, o);
  }
}

// out[h][i] = Σ_b w_b·o_b[h][i] / Σ_b w_b·l_b[h], w_b = exp(m_b[h] − max_b m_b[h]); b in order.
void combine(const Dims& d, const float* parts, size_t n_blocks, float* out) {
  for (size_t h = 0; h < d.G; ++h) {
    float mx = parts[h];
    for (size_t b = 1; b < n_blocks; ++b) mx = std::max(mx, parts[b * d.ps + h]);
    float* oh = out + h * d.Dv;
    std::fill(oh, oh + d.Dv, 0.0f);
    float l = 0.0f;
    for (size_t b = 0; b < n_blocks; ++b) {
      const float* p = parts + b * d.ps;
      const float w = std::exp(p[h] - mx);
      l += w * p[d.G + h];
      const float* ob = p + 2 * d.G + h * d.Dv;
      for (size_t i = 0; i < d.Dv; ++i) oh[i] += w * ob[i];
    }
    const float inv = 1.0f / l;
    for (size_t i = 0; i < d.Dv; ++i) oh[i] *= inv;
  }
}

size_t blocks_for(size_t n_keys) { return (n_keys + CpuAttention::kKeyBlock - 1) / CpuAttention::kKeyBlock; }

}  // namespace

void CpuAttention::run(const KvCache& cache, ThreadPool& pool, size_t layer, const float* q, size_t n, size_t pos0,
                       size_t n_head, float scale, float* o) {
  const size_t Hk = cache.n_head_kv();
  if (n == 0) return;
  if (n_head == 0 || n_head % Hk != 0) {
    throw std::invalid_argument("attention: " + std::to_string(n_head) + " query heads for " + std::to_string(Hk) +
                                " KV heads");
  }
  if (pos0 + n > cache.capacity() || layer >= cache.n_layer()) {
    throw std::invalid_argument("attention: positions up to " + std::to_string(pos0 + n) + " of layer " +
                                std::to_string(layer) + " are outside the cache");
  }
  Dims d{};
  d.H = n_head;
  d.Hk = Hk;
  d.G = n_head / Hk;
  d.Dk = cache.head_dim_k();
  d.Dv = cache.head_dim_v();
  d.nbk = cache.k_packed() ? d.Dk / cache.block_k() : 0;
  d.nbv = cache.v_packed() ? d.Dv / cache.block_v() : 0;
  d.ps = d.G * (d.Dv + 2);
  const size_t T = pool.n_threads(), max_blocks = blocks_for(pos0 + n);

  if (threads_.size() < T) threads_.resize(T);
  for (Thread& th : threads_) {
    th.scores.resize(std::max(th.scores.size(), d.G * kKeyBlock));
    th.partials.resize(std::max(th.partials.size(), max_blocks * d.ps));
  }

  // Packed K: every query head quantised once (the k8 rule), shared by the items.
  if (cache.k_packed()) {
    qq_.resize(std::max(qq_.size(), n * d.H * d.Dk));
    qd_.resize(std::max(qd_.size(), n * d.H * d.nbk));
    auto quantise = [&](size_t begin, size_t end, size_t) {
      for (size_t th = begin; th < end; ++th) {
        kernels::k8_quantize(q + th * d.Dk, d.Dk, qq_.data() + th * d.Dk, qd_.data() + th * d.nbk);
      }
    };
    if (n > 1) {
      pool.parallel_for_chunked(n * d.H, std::max<size_t>(1, n * d.H / (4 * T)), std::ref(quantise));
    } else {
      quantise(0, d.H, 0);
    }
  }
  // Group g of token t: its heads' queries start at head t·H + g·G.
  auto item_block = [&](size_t t, size_t g, size_t b, float* scores, float* part) {
    const size_t head0 = t * d.H + g * d.G, n_keys = pos0 + t + 1;
    const size_t k0 = b * kKeyBlock, k1 = std::min(n_keys, k0 + kKeyBlock);
    const bool packed = cache.k_packed();  // no packed queries otherwise (no offsets into empty buffers)
    block_partial(cache, layer, d, q + head0 * d.Dk, packed ? qq_.data() + head0 * d.Dk : nullptr,
                  packed ? qd_.data() + head0 * d.nbk : nullptr, g, k0, k1, scale, scores, part);
  };

  if (n * Hk < 4 * T && max_blocks > 1) {
    // Decode: (token, group, block) items over the pool, then one combine per (token, group).
    partials_.resize(std::max(partials_.size(), n * Hk * max_blocks * d.ps));
    auto blocks = [&](size_t begin, size_t end, size_t thread) {
      for (size_t it = begin; it < end; ++it) {
        const size_t b = it % max_blocks, tg = it / max_blocks, t = tg / Hk, g = tg % Hk;
        if (b >= blocks_for(pos0 + t + 1)) continue;
        item_block(t, g, b, threads_[thread].scores.data(), partials_.data() + it * d.ps);
      }
    };
    // Runs of consecutive blocks per chunk: a kernel prefetches the block after its own.
    const size_t items = n * Hk * max_blocks;
    pool.parallel_for_chunked(items, std::max<size_t>(1, items / (4 * T)), std::ref(blocks));
    for (size_t tg = 0; tg < n * Hk; ++tg) {
      const size_t t = tg / Hk, g = tg % Hk;
      combine(d, partials_.data() + tg * max_blocks * d.ps, blocks_for(pos0 + t + 1), o + (t * d.H + g * d.G) * d.Dv);
    }
    return;
  }
  // Prefill: (token, group) items, each running its blocks in turn into per-thread partials.
  auto groups = [&](size_t begin, size_t end, size_t thread) {
    Thread& th = threads_[thread];
    for (size_t tg = begin; tg < end; ++tg) {
      const size_t t = tg / Hk, g = tg % Hk, nb = blocks_for(pos0 + t + 1);
      for (size_t b = 0; b < nb; ++b) item_block(t, g, b, th.scores.data(), th.partials.data() + b * d.ps);
      combine(d, th.partials.data(), nb, o + (t * d.H + g * d.G) * d.Dv);
    }
  };
  pool.parallel_for_chunked(n * Hk, std::max<size_t>(1, n * Hk / (4 * T)), std::ref(groups));
}

size_t CpuAttention::scratch_bytes() const {
  size_t b = qq_.capacity() + qd_.capacity() * sizeof(uint16_t) + partials_.capacity() * sizeof(float);
  for (const Thread& th : threads_) b += (th.scores.capacity() + th.partials.capacity()) * sizeof(float);
  return b;
}

}  // namespace alap
