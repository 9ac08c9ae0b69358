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
#include "alap/kernels/quant.h"

namespace alap {

namespace {

struct Dims {
  size_t H, Hk, G, Dk, Dv, nbk, nbv, ps;  // ps: floats per partial, G·(Dv + 2)
};

// The k8 rule on query heads [h0, h1) of q: qq [heads][Dk], qd [heads][Dk / block].
void pack_queries(const Dims& d, const float* q, size_t h0, size_t h1, int8_t* qq, uint16_t* qd) {
  for (size_t h = h0; h < h1; ++h) kernels::k8_quantize(q + h * d.Dk, d.Dk, qq + h * d.Dk, qd + h * d.nbk);
}

// One block's partial for the G heads of group g whose queries start at head0 of q (f32) or of
// qq/qd (pack_queries' arrays, read for a packed K only): keys [k0, k1).
// part = {m[G], l[G], o[G][Dv]}.
void block_partial(const KvCache& cache, size_t layer, const Dims& d, const float* q, const int8_t* qq,
                   const uint16_t* qd, size_t head0, size_t g, size_t k0, size_t k1, float scale, float* scores,
                   float* part) {
  kernels::AttnBlock b;
  b.head_dim_k = d.Dk, b.head_dim_v = d.Dv;
  if (cache.k_packed()) {
    b.qq = qq + head0 * d.Dk, b.qd = qd + head0 * d.nbk;
    b.kq = cache.k_q8(layer, g) + k0 * d.Dk, b.kd = cache.k_scales(layer, g) + k0 * d.nbk;
  } else {
    b.q = q + head0 * d.Dk, b.k = cache.k_f16(layer, g) + k0 * d.Dk;
  }
  if (cache.v_packed()) {
    b.vq = cache.v_q8(layer, g) + k0 * d.Dv, b.vd = cache.v_scales(layer, g) + k0 * d.nbv, b.block_v = cache.block_v();
  } else {
    b.v = cache.v_f16(layer, g) + k0 * d.Dv;
  }
  kernels::attn_block_heads(b, d.G, k1 - k0, scale, scores, CpuAttention::kKeyBlock, part, part + d.G, part + 2 * d.G);
}

// Asks for the first kb rows of group g (K, its scales, V, its scales) ahead of use: the decode
// split's next group, while a thread works on the last block of the one before. Prefetches only;
// kb need not pass kAttnReadAheadRows: from row 0 on, the kernels ask for the rows after those.
// In a cache larger than the context the kernels' own read-ahead past the last key fetches unused
// rows and the next group started cold: eval-shaped attention, k8 at depth 4096 in a cache of
// 8193 rows, one thread, cold 2-4% faster; level in a cache of the context's size (docs/bench/
// cpu.md "Decode attention at depth, part 2 (session 8)").
void read_first_block(const KvCache& cache, size_t layer, const Dims& d, size_t g, size_t kb) {
  auto ask = [](const void* p, size_t bytes) {
    const char* c = static_cast<const char*>(p);
    for (size_t i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, 0, 3);
  };
  if (cache.k_packed()) {
    ask(cache.k_q8(layer, g), kb * d.Dk);
    ask(cache.k_scales(layer, g), kb * d.nbk * 2);
  } else {
    ask(cache.k_f16(layer, g), kb * d.Dk * 2);
  }
  if (cache.v_packed()) {
    ask(cache.v_q8(layer, g), kb * d.Dv);
    ask(cache.v_scales(layer, g), kb * d.nbv * 2);
  } else {
    ask(cache.v_f16(layer, g), kb * d.Dv * 2);
  }
}

// out[h][i] = Σ_b w_b·o_b[r0 + h][i] / Σ_b w_b·l_b[r0 + h], w_b = exp(m_b[r0 + h] − max_b m_b[r0 + h]),
// b in order, for the G rows from r0 of partials laid out per block as {m[rows], l[rows],
// o[rows][Dv]}, `stride` floats apart.
void combine_rows(const Dims& d, const float* parts, size_t stride, size_t rows, size_t r0, size_t n_blocks,
                  float* out) {
  for (size_t h = 0; h < d.G; ++h) {
    const size_t r = r0 + h;
    float mx = parts[r];
    for (size_t b = 1; b < n_blocks; ++b) mx = std::max(mx, parts[b * stride + r]);
    float* oh = out + h * d.Dv;
    std::fill(oh, oh + d.Dv, 0.0f);
    float l = 0.0f;
    for (size_t b = 0; b < n_blocks; ++b) {
      const float* p = parts + b * stride;
      const float w = std::exp(p[r] - mx);
      l += w * p[rows + r];
      const float* ob = p + 2 * rows + r * d.Dv;
      for (size_t i = 0; i < d.Dv; ++i) oh[i] += w * ob[i];
    }
    const float inv = 1.0f / l;
    for (size_t i = 0; i < d.Dv; ++i) oh[i] *= inv;
  }
}

void combine(const Dims& d, const float* parts, size_t n_blocks, float* out) {
  combine_rows(d, parts, d.ps, d.G, 0, n_blocks, out);
}

size_t blocks_for(size_t n_keys) { return (n_keys + CpuAttention::kKeyBlock - 1) / CpuAttention::kKeyBlock; }

// Rows of query heads a prefill tile holds: whole tokens of one group, up to kTileRows rows
// (kTileRowsAmx on the AMX tiles).
size_t tile_tokens(size_t G, bool amx) {
  return std::max<size_t>(1, (amx ? CpuAttention::kTileRowsAmx : CpuAttention::kTileRows) / G);
}

// One thread's buffers for a tile (sized by run).
struct TileScratch {
  float* scores;    // [R][kKeyBlock]
  float* partials;  // [blocks][R·(Dv + 2)]
  float* qf;        // [R][Dk] fp16-K queries
  int8_t* qq;       // [R][Dk] packed queries
  uint16_t* qd;     // [R][Dk / block]
};

// The partials of every key block of a tile: tokens [t0, t0 + nt) × the G heads of group g, rows
// r = u·G + h (token t0 + u, head h). Per block: scores of the rows that have keys there (a suffix
// of the tile: a token's blocks end at its own position), each row's softmax over its own keys,
// then the V sums: fp16 V for all those rows over the keys they share, then the ragged last keys,
// each for the rows (tokens) that reach it (an FMA chain a lane, keys in order); packed V one call
// per run of tokens with the same keys (the v16 rule scales a row by its keys of the block).
// With the AMX tiles (amx), the rows of tokens that see the whole block (a suffix again) are one
// attn_block_tiles call (attn.h "Prompt tiles": fp16 K scores and fp16 V sums in bf16 parts,
// packed-K scores with their own bits): which path a token's block takes depends on its own
// position alone, not on its tile. `wide`: the tile's rows are kTileRowsAmx, not kTileRows.
// Partials per block: {m[R], l[R], o[R][Dv]}, R = tile rows.
void tile_partials(const KvCache& cache, size_t layer, const Dims& d, const float* q, const int8_t* qq,
                   const uint16_t* qd, size_t g, size_t t0, size_t nt, size_t pos0, float scale,
                   const TileScratch& th, bool amx, bool wide) {
  constexpr size_t kKeyBlock = CpuAttention::kKeyBlock;
  const size_t R = tile_tokens(d.G, wide) * d.G, ld = kKeyBlock, pr = R * (d.Dv + 2);
  const size_t rows = nt * d.G;
  const bool kp = cache.k_packed();
  // The tile's queries, rows in order (their heads are H apart per token in q).
  for (size_t u = 0; u < nt; ++u) {
    const size_t head0 = (t0 + u) * d.H + g * d.G;
    if (kp) {
      std::copy(qq + head0 * d.Dk, qq + (head0 + d.G) * d.Dk, th.qq + u * d.G * d.Dk);
      std::copy(qd + head0 * d.nbk, qd + (head0 + d.G) * d.nbk, th.qd + u * d.G * d.nbk);
    } else {
      std::copy(q + head0 * d.Dk, q + (head0 + d.G) * d.Dk, th.qf + u * d.G * d.Dk);
    }
  }
  const size_t nb = blocks_for(pos0 + t0 + nt);
  for (size_t b = 0; b < nb; ++b) {
    const size_t k0 = b * kKeyBlock;
    // First token of the tile with keys in this block, and each token's key count here.
    const size_t u0 = pos0 + t0 + 1 > k0 ? 0 : k0 - (pos0 + t0);
    auto keys = [&](size_t u) { return std::min(pos0 + t0 + u + 1, k0 + kKeyBlock) - k0; };
    // The end of the run of tokens from u (< uf, below) with u's key count.
    auto run_end = [&](size_t u, size_t uf) {
      size_t ue = u + 1;
      while (ue < uf && keys(ue) == keys(u)) ++ue;
      return ue;
    };
    // Tokens [uf, nt) see all kKeyBlock keys of the block (rows [rf, rows)): one attn_block_tiles
    // call takes them on the AMX tiles. Without the tiles uf = nt: every row below.
    const size_t whole = k0 + kKeyBlock - 1 > pos0 + t0 ? k0 + kKeyBlock - 1 - (pos0 + t0) : 0;
    const size_t uf = amx ? std::clamp(whole, u0, nt) : nt, rf = uf * d.G;
    const size_t r0 = u0 * d.G, nr = rf - r0;
    float* part = th.partials + b * pr;
    float* m = part;
    float* l = part + R;
    float* o = part + 2 * R;
    if (uf < nt) {
      kernels::AttnBlock blk;
      blk.head_dim_k = d.Dk, blk.head_dim_v = d.Dv, blk.block_v = cache.block_v();
      if (kp) {
        blk.qq = th.qq + rf * d.Dk, blk.qd = th.qd + rf * d.nbk;
        blk.kq = cache.k_q8(layer, g) + k0 * d.Dk, blk.kd = cache.k_scales(layer, g) + k0 * d.nbk;
      } else {
        blk.q = th.qf + rf * d.Dk, blk.k = cache.k_f16(layer, g) + k0 * d.Dk;
      }
      if (cache.v_packed()) {
        blk.vq = cache.v_q8(layer, g) + k0 * d.Dv, blk.vd = cache.v_scales(layer, g) + k0 * d.nbv;
      } else {
        blk.v = cache.v_f16(layer, g) + k0 * d.Dv;
      }
      kernels::attn_block_tiles(blk, rows - rf, kKeyBlock, scale, th.scores + rf * ld, ld, m + rf, l + rf,
                                o + rf * d.Dv);
    }
    if (nr == 0) continue;
    const size_t nk = keys(uf - 1);  // the most keys of rows [r0, rf)
    float* scores = th.scores + r0 * ld;
    if (kp) {
      kernels::k8_scores_heads(th.qq + r0 * d.Dk, th.qd + r0 * d.nbk, nr, cache.k_q8(layer, g) + k0 * d.Dk,
                               cache.k_scales(layer, g) + k0 * d.nbk, d.Dk, nk, scale, scores, ld);
    } else {
      kernels::f16_scores_heads(th.qf + r0 * d.Dk, nr, cache.k_f16(layer, g) + k0 * d.Dk, d.Dk, nk, scale, scores, ld);
    }
    for (size_t u = u0, ue = 0; u < uf; u = ue) {  // runs of tokens with the same key count, their rows at once
      ue = run_end(u, uf);
      const size_t r = u * d.G;
      kernels::softmax_partial_rows(th.scores + r * ld, ld, (ue - u) * d.G, keys(u), m + r, l + r);
    }
    std::fill(o + r0 * d.Dv, o + rf * d.Dv, 0.0f);
    if (cache.v_packed()) {
      // The v16 rule scales each row's codes by its own keys of the block (attn.h): one call per
      // run of tokens with the same key count (all the tile's tokens but on the diagonal block).
      for (size_t u = u0, ue = 0; u < uf; u = ue) {
        ue = run_end(u, uf);
        kernels::k8_accum_v_heads(th.scores + u * d.G * ld, ld, (ue - u) * d.G, cache.v_q8(layer, g) + k0 * d.Dv,
                                  cache.v_scales(layer, g) + k0 * d.nbv, d.Dv, cache.block_v(), keys(u),
                                  o + u * d.G * d.Dv);
      }
      continue;
    }
    size_t done = 0;
    for (size_t u = u0; u < uf; ++u) {
      const size_t ku = keys(u);
      if (ku == done) continue;
      const size_t ru = u * d.G, kj = k0 + done;
      kernels::f16_accum_v_heads(th.scores + ru * ld + done, ld, rf - ru, cache.v_f16(layer, g) + kj * d.Dv, d.Dv,
                                 ku - done, o + ru * d.Dv);
      done = ku;
    }
  }
}

// The shapes of a call of n_head query heads over the cache (n_head a multiple of its KV heads).
Dims dims_unchecked(const KvCache& cache, size_t n_head) {
  Dims d{};
  d.H = n_head;
  d.Hk = cache.n_head_kv();
  d.G = n_head / d.Hk;
  d.Dk = cache.head_dim_k();
  d.Dv = cache.head_dim_v();
  d.nbk = cache.k_packed() ? d.Dk / cache.block_k() : 0;
  d.nbv = cache.v_packed() ? d.Dv / cache.block_v() : 0;
  d.ps = d.G * (d.Dv + 2);
  return d;
}

// The same, checked for n tokens from pos0 of `layer`.
Dims dims_of(const KvCache& cache, size_t layer, size_t n, size_t pos0, size_t n_head) {
  const size_t Hk = cache.n_head_kv();
  if (n_head == 0 || n_head % Hk != 0) {
    throw std::invalid_argument("attention: " + std::to_string(n_head) + " query heads for " + std::to_string(Hk) +
                                " KV heads");
  }
  if (pos0 + n > cache.capacity() || layer >= cache.n_layer()) {
    throw std::invalid_argument("attention: positions up to " + std::to_string(pos0 + n) + " of layer " +
                                std::to_string(layer) + " are outside the cache");
  }
  return dims_unchecked(cache, n_head);
}

}  // namespace

void CpuAttention::run(const KvCache& cache, ThreadPool& pool, size_t layer, const float* q, size_t n, size_t pos0,
                       size_t n_head, float scale, float* o) {
  if (n == 0) return;
  const Dims d = dims_of(cache, layer, n, pos0, n_head);
  const size_t Hk = d.Hk;
  const size_t T = pool.n_threads(), max_blocks = blocks_for(pos0 + n);
  // A decode token's attention over a short context runs on the calling thread alone: its work is
  // then smaller than what a parallel call's hand-off and join cost. The bound shrinks with the
  // threads such a call would use (one item a KV group and key block). Session 22, tokens
  // alternating within one run: the 30M eval model (8 heads of 64 + 64 dims, 2 KV groups), two
  // threads on Zen 5, depths 32-232: 0.95-0.99x the token's time inline, at 300 level, at 1000
  // 1.08-1.24x; on the H200 host's Xeon level with 2-16 threads; random Llama-3.2-1B Q4_K (8 KV
  // groups) at depths 4-64: level with 2 and 8 threads, 1.015-1.034x with 16.
  const size_t par = std::min(T, Hk * max_blocks);
  const bool alone = n == 1 && (pos0 + 1) * d.H * (d.Dk + d.Dv) * par <= 2 * kAloneWork;

  grow_shared(T, d.G, cache.k_packed() ? n * d.H : 0, d.Dk, d.nbk);

  // Packed K: every query head quantised once (the k8 rule), shared by the items.
  if (cache.k_packed()) {
    auto quantise = [&](size_t begin, size_t end, size_t) { pack_queries(d, q, begin, end, qq_.data(), qd_.data()); };
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
    block_partial(cache, layer, d, q, qq_.data(), qd_.data(), head0, g, k0, k1, scale, scores, part);
  };

  if (n * Hk < 4 * T && max_blocks > 1) {
    // Decode: (token, group, block) items over the pool, then one combine per (token, group). A
    // chunk that ran every block of a group combines it at once, from partials still in its own
    // cache, and marks it; the caller combines the rest after the call. The combine is the same
    // either way (two threads, a 30M model's 2 KV heads: the caller's serial combine of the
    // worker's partials took ~2 us a layer, ~1 warm).
    const size_t n_groups = n * Hk;
    partials_.resize(std::max(partials_.size(), n_groups * max_blocks * d.ps));
    combined_.assign(n_groups, 0);
    auto combine_group = [&](size_t tg) {
      const size_t t = tg / Hk, g = tg % Hk;
      combine(d, partials_.data() + tg * max_blocks * d.ps, blocks_for(pos0 + t + 1), o + (t * d.H + g * d.G) * d.Dv);
    };
    auto blocks = [&](size_t begin, size_t end, size_t thread) {
      for (size_t it = begin; it < end; ++it) {
        const size_t b = it % max_blocks, tg = it / max_blocks, t = tg / Hk, g = tg % Hk;
        const size_t nb = blocks_for(pos0 + t + 1);
        if (b >= nb) continue;
        // The last block of a group: the kernels read ahead the rows after it (past the keys),
        // so ask for the first block of the run's next group here.
        if (b + 1 == nb && (tg + 1) * max_blocks < end) {
          read_first_block(cache, layer, d, (tg + 1) % Hk, std::min(kernels::kAttnReadAheadRows, pos0 + 1));
        }
        item_block(t, g, b, threads_[thread].scores.data(), partials_.data() + it * d.ps);
      }
      for (size_t tg = (begin + max_blocks - 1) / max_blocks; (tg + 1) * max_blocks <= end; ++tg) {
        combine_group(tg);
        combined_[tg] = 1;
      }
    };
    // One run of consecutive blocks a thread: a kernel reads the rows after its own ahead, so each
    // run's first block starts cold. Runs of items / 4T blocks (two threads, a 30M model's 2 KV
    // heads at depth 4096: runs of 4) cost 15-20% of a cold token against one run a thread.
    const size_t items = n_groups * max_blocks;
    if (alone) {
      blocks(0, items, 0);
    } else {
      pool.parallel_for_chunked(items, std::max<size_t>(1, items / T), std::ref(blocks));
    }
    for (size_t tg = 0; tg < n_groups; ++tg) {
      if (!combined_[tg]) combine_group(tg);
    }
    return;
  }
  // Prefill: tiles of tt consecutive tokens × one KV group. The tile's tt·G query rows are the
  // "heads" of one pass over each key block, so every K/V row is loaded and converted once per
  // tile instead of once per token. Row r (token t) of block b covers keys [k0, min(pos0 + t + 1,
  // k0 + kKeyBlock)): the same ranges as one token alone, and the kernels compute each row and each
  // key independently (fp16 V sums run keys in order, so the ragged last keys are extra calls for
  // the rows that have them; a packed V sum takes each row's keys of the block in one call), so a
  // token's result does not depend on its tile.
  // Wide tiles where some token sees a whole key block (the AMX tiles' rows); a prompt from depth 0
  // that does not reach past the first block keeps 32 rows for its diagonal block's kernels (128:
  // the eval Q8_0 file's 128-token prompts at 0.92-0.98x the tokens/s).
  const bool amx = n >= kAmxMinTokens && kernels::amx_prefill_active();
  const bool wide = amx && pos0 + n > kKeyBlock;
  const size_t tt = std::min(n, tile_tokens(d.G, wide)), R = tile_tokens(d.G, wide) * d.G;
  const size_t n_tiles = (n + tt - 1) / tt;
  const size_t pr = R * (d.Dv + 2);  // floats per block of a tile's partials: m[R], l[R], o[R][Dv]
  for (Thread& th : threads_) {
    th.scores.resize(std::max(th.scores.size(), R * kKeyBlock));
    th.partials.resize(std::max(th.partials.size(), max_blocks * pr));
    th.qf.resize(std::max(th.qf.size(), R * d.Dk));
    th.qq.resize(std::max(th.qq.size(), R * d.Dk));
    th.qd.resize(std::max(th.qd.size(), R * d.nbk));
  }
  auto tiles = [&](size_t begin, size_t end, size_t thread) {
    Thread& w = threads_[thread];
    const TileScratch th{w.scores.data(), w.partials.data(), w.qf.data(), w.qq.data(), w.qd.data()};
    for (size_t it = begin; it < end; ++it) {
      const size_t g = it % Hk, t0 = (it / Hk) * tt, t1 = std::min(n, t0 + tt), nt = t1 - t0;
      const bool kp = cache.k_packed();
      tile_partials(cache, layer, d, q, kp ? qq_.data() : nullptr, kp ? qd_.data() : nullptr, g, t0, nt, pos0, scale,
                    th, amx, wide);
      for (size_t u = 0; u < nt; ++u) {
        const size_t nb = blocks_for(pos0 + t0 + u + 1);
        combine_rows(d, th.partials, pr, R, u * d.G, nb, o + ((t0 + u) * d.H + g * d.G) * d.Dv);
      }
    }
  };
  const size_t items = n_tiles * Hk;
  if (alone) {
    tiles(0, items, 0);
    return;
  }
  pool.parallel_for_chunked(items, std::max<size_t>(1, items / (4 * T)), std::ref(tiles));
}

void CpuAttention::prepare_groups(const KvCache& cache, size_t layer, size_t pos0, size_t n_head, size_t n_threads) {
  const Dims d = dims_of(cache, layer, 1, pos0, n_head);
  grow_shared(n_threads, d.G, cache.k_packed() ? d.H : 0, d.Dk, d.nbk);
  for (Thread& th : threads_) th.partials.resize(std::max(th.partials.size(), blocks_for(pos0 + 1) * d.ps));
}

void CpuAttention::grow_shared(size_t n_threads, size_t G, size_t n_packed, size_t Dk, size_t nbk) {
  if (threads_.size() < n_threads) threads_.resize(n_threads);
  for (Thread& th : threads_) th.scores.resize(std::max(th.scores.size(), G * kKeyBlock));
  qq_.resize(std::max(qq_.size(), n_packed * Dk));
  qd_.resize(std::max(qd_.size(), n_packed * nbk));
}

void CpuAttention::run_groups(const KvCache& cache, size_t layer, const float* q, size_t pos0, size_t n_head,
                              float scale, size_t g0, size_t g1, size_t thread, float* o) {
  const Dims d = dims_unchecked(cache, n_head);  // prepare_groups checked them (this is a worker's call)
  const size_t n_keys = pos0 + 1, nb = blocks_for(n_keys);
  Thread& th = threads_[thread];
  // The same calls as run()'s decode split for these groups: the k8 rule on each query head, then
  // each group's blocks in order and their combine.
  if (cache.k_packed()) pack_queries(d, q, g0 * d.G, g1 * d.G, qq_.data(), qd_.data());
  for (size_t g = g0; g < g1; ++g) {
    const size_t head0 = g * d.G;
    for (size_t b = 0; b < nb; ++b) {
      if (b + 1 == nb && g + 1 < g1) {  // the next group's first rows, as run()'s decode split asks
        read_first_block(cache, layer, d, g + 1, std::min(kernels::kAttnReadAheadRows, n_keys));
      }
      const size_t k0 = b * kKeyBlock, k1 = std::min(n_keys, k0 + kKeyBlock);
      block_partial(cache, layer, d, q, qq_.data(), qd_.data(), head0, g, k0, k1, scale, th.scores.data(),
                    th.partials.data() + b * d.ps);
    }
    combine(d, th.partials.data(), nb, o + head0 * d.Dv);
  }
}

void CpuAttention::read_ahead_first_block(const KvCache& cache, size_t layer, size_t n_keys, size_t group) {
  if (layer >= cache.n_layer() || n_keys == 0 || group >= cache.n_head_kv()) return;
  const Dims d = dims_unchecked(cache, cache.n_head_kv());  // the rows' widths only: any head count
  read_first_block(cache, layer, d, group, std::min({kernels::kAttnReadAheadRows, n_keys, cache.capacity()}));
}

size_t CpuAttention::scratch_bytes() const {
  size_t b = qq_.capacity() + qd_.capacity() * sizeof(uint16_t) + partials_.capacity() * sizeof(float) + combined_.capacity();
  for (const Thread& th : threads_) {
    b += (th.scores.capacity() + th.partials.capacity() + th.qf.capacity()) * sizeof(float) + th.qq.capacity() +
         th.qd.capacity() * sizeof(uint16_t);
  }
  return b;
}

}  // namespace alap
