// Device code of single-query (decode) attention over the KV cache: the k8 kernel (int8 K, dot4
// scores) and its f16 twin share one body and differ only in how a score is computed.
// Not the host API (attn_k8.h) and not the launches (attn_k8.hip).
//
// Work split (flash-decoding): grid = (n_kv_head, n_split). A block takes one KV head, all G query
// heads of its group (GQA: K and V rows are read once for G heads) and one slice of the context.
// Per tile of kBlockKV positions:
//   1. scores: thread t scores position tile+t against all G queries → s[G][kBlockKV] in shared;
//   2. online softmax: one warp per query head: m_new = max(m, max_j s), p_j = exp(s_j - m_new),
//      alpha = exp(m - m_new), l = l·alpha + Σ p_j;
//   3. V: thread (jg, d) keeps acc[g] for its output element(s) d: acc = acc·alpha + Σ_j p_j·V[j][d]
//      over positions j ≡ jg (mod n_jg), n_jg = kThreads / min(head_dim, kThreads).
// At the end the jg partial sums are added; one split writes out = acc / l, several write
// (acc, m, l) to scratch and attn_decode_combine_kernel merges them.
#pragma once

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_port.h"

namespace alap::gpu {

inline constexpr int kThreads = 128;  // per block: 4 waves of 32 or 2 of 64
inline constexpr int kBlockKV = 128;  // positions per tile: one per thread in the score phase
inline constexpr int kQBlock = 32;    // values per quantisation block (DESIGN.md)
inline constexpr int kMaxDimsPerThread = (kAttnMaxHeadDim + kThreads - 1) / kThreads;
static_assert(kBlockKV == kThreads, "the score phase gives each thread one position");
static_assert(kThreads % 64 == 0, "whole waves on wave64 and wave32 targets");
static_assert(kAttnMaxHeadDim % kQBlock == 0);

// What a block needs besides the public parameters.
struct attn_kernel_args {
  attn_decode_params p;
  int group;      // G = n_head / n_kv_head
  int n_split;    // splits actually launched
  int split_len;  // positions per split (the last may be shorter)
  float* part_o;  // [n_head][kAttnMaxSplit][head_dim] fp32, unnormalised
  float* part_m;  // [n_head][kAttnMaxSplit] running max
  float* part_l;  // [n_head][kAttnMaxSplit] running sum of exp
};

// Dynamic shared memory of the decode kernel, in bytes (query, scores, stats, reduction).
__host__ __device__ inline size_t attn_smem_bytes(int group, int head_dim) {
  const int d_lanes = head_dim < kThreads ? head_dim : kThreads;
  const int n_jg = kThreads / d_lanes;
  return sizeof(float) * (size_t(group) * head_dim               // query (fp32, or int8 + scales)
                          + size_t(group) * kBlockKV             // s[G][kBlockKV]
                          + 4 * size_t(group)                    // m, l, alpha, pad
                          + size_t(group) * n_jg * head_dim);    // red[n_jg][G][head_dim]
}

// ---- score policies --------------------------------------------------------------------------

// k8: the query is quantised per 32-block like K (d = max|x|/127, q = round(x/d), d kept at fp16
// precision), and score = Σ_b d_q[b]·d_k[b]·Σ dot4(q, k) with int32 inside a block.
struct k8_scores {
  int8_t* qq;  // shared [G][head_dim] int8
  float* dq;   // shared [G][head_dim/32]

  __device__ static size_t query_bytes(int group, int head_dim) { return size_t(group) * head_dim * 5 / 4; }

  __device__ void load_query(const attn_kernel_args& a, int kv, char* smem) {
    const int hd = a.p.head_dim, G = a.group, nb = hd / kQBlock;
    qq = reinterpret_cast<int8_t*>(smem);
    dq = reinterpret_cast<float*>(smem + size_t(G) * hd);
    // One 32-lane group per block of 32 values; the loop bound is uniform so every lane shuffles.
    const int lane = threadIdx.x % kQBlock, group_id = threadIdx.x / kQBlock;
    for (int base = 0; base < G * nb; base += kThreads / kQBlock) {
      const int blk = base + group_id;
      const bool valid = blk < G * nb;
      const int g = valid ? blk / nb : 0, b = valid ? blk % nb : 0;
      const float x = valid ? a.p.q[(size_t(kv) * G + g) * hd + b * kQBlock + lane] : 0.0f;
      float amax = fabsf(x);
      for (int off = kQBlock / 2; off > 0; off >>= 1) amax = fmaxf(amax, alap_shfl_xor(amax, off, kQBlock));
      const float d = amax / 127.0f;
      const int qv = d > 0.0f ? static_cast<int>(fminf(fmaxf(roundf(x / d), -127.0f), 127.0f)) : 0;
      if (valid) {
        qq[g * hd + b * kQBlock + lane] = static_cast<int8_t>(qv);
        if (lane == 0) dq[g * nb + b] = alap_half_to_float(alap_float_to_half(d));
      }
    }
  }

  // score[g] (unscaled) of cache row `pos` of KV head kv.
  __device__ void score_row(const attn_kernel_args& a, int kv, int pos, float* score) const {
    const int hd = a.p.head_dim, G = a.group, nb = hd / kQBlock;
    const size_t row = size_t(kv) * a.p.capacity + pos;
    const int4* k = reinterpret_cast<const int4*>(a.p.k_q + row * hd);  // 16-byte aligned rows
    const uint16_t* kd = a.p.k_d + row * nb;
    const int* qw = reinterpret_cast<const int*>(qq);
    for (int b = 0; b < nb; ++b) {
      const int4 lo = k[2 * b], hi = k[2 * b + 1];
      const int kw[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
      const float dk = alap_half_to_float(kd[b]);
#pragma unroll
      for (int g = 0; g < kAttnMaxGroup; ++g) {
        if (g < G) {
          const int* q = qw + (g * hd + b * kQBlock) / 4;
          int isum = 0;
#pragma unroll
          for (int w = 0; w < 8; ++w) isum = alap_dot4(kw[w], q[w], isum);
          score[g] += dq[g * nb + b] * dk * static_cast<float>(isum);
        }
      }
    }
  }
};

// f16: the baseline. The query stays fp32; K rows are fp16, products and sums fp32.
struct f16_scores {
  float* qf;  // shared [G][head_dim]

  __device__ static size_t query_bytes(int group, int head_dim) { return size_t(group) * head_dim * 4; }

  __device__ void load_query(const attn_kernel_args& a, int kv, char* smem) {
    const int hd = a.p.head_dim, G = a.group;
    qf = reinterpret_cast<float*>(smem);
    for (int i = threadIdx.x; i < G * hd; i += kThreads) qf[i] = a.p.q[size_t(kv) * G * hd + i];
  }

  __device__ void score_row(const attn_kernel_args& a, int kv, int pos, float* score) const {
    const int hd = a.p.head_dim, G = a.group;
    const int4* k = reinterpret_cast<const int4*>(a.p.k_f16 + (size_t(kv) * a.p.capacity + pos) * hd);
    for (int c = 0; c < hd / 8; ++c) {  // 8 fp16 values per 16-byte load
      const int4 w = k[c];
      const uint32_t words[4] = {uint32_t(w.x), uint32_t(w.y), uint32_t(w.z), uint32_t(w.w)};
      float kf[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        kf[2 * i] = alap_half_to_float(static_cast<uint16_t>(words[i] & 0xffffu));
        kf[2 * i + 1] = alap_half_to_float(static_cast<uint16_t>(words[i] >> 16));
      }
#pragma unroll
      for (int g = 0; g < kAttnMaxGroup; ++g) {
        if (g < G) {
          const float* q = qf + g * hd + c * 8;
          float acc = 0.0f;
#pragma unroll
          for (int i = 0; i < 8; ++i) acc = fmaf(q[i], kf[i], acc);
          score[g] += acc;
        }
      }
    }
  }
};

// ---- the shared body -------------------------------------------------------------------------

__device__ __forceinline__ float warp_max(float v) {
  for (int off = ALAP_WARP_SIZE / 2; off > 0; off >>= 1) v = fmaxf(v, alap_shfl_xor(v, off));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int off = ALAP_WARP_SIZE / 2; off > 0; off >>= 1) v += alap_shfl_xor(v, off);
  return v;
}

template <class Scores>
__device__ void attn_decode_body(const attn_kernel_args& a) {
  extern __shared__ float4 smem_f4[];  // float4: 16-byte alignment on both compilers
  char* smem = reinterpret_cast<char*>(smem_f4);
  const int kv = blockIdx.x, split = blockIdx.y, tid = threadIdx.x;
  const int G = a.group, hd = a.p.head_dim;
  const int begin = split * a.split_len;
  const int end = min(a.p.n_ctx, begin + a.split_len);

  // Shared layout: query | s[G][kBlockKV] | m[G] l[G] alpha[G] | red[n_jg][G][hd]
  const size_t q_floats = (Scores::query_bytes(G, hd) + 15) / 16 * 4;
  float* s = reinterpret_cast<float*>(smem) + q_floats;
  float* m = s + G * kBlockKV;
  float* l = m + G;
  float* alpha = l + G;
  float* red = alpha + G + G;  // one spare G keeps red 16-byte aligned for G % 4 == 0

  Scores scores;
  scores.load_query(a, kv, smem);
  for (int g = tid; g < G; g += kThreads) {
    m[g] = -INFINITY;
    l[g] = 0.0f;
  }

  // V-phase role of this thread: output element(s) d = dl + k·d_lanes, positions j ≡ jg (mod n_jg).
  const int d_lanes = hd < kThreads ? hd : kThreads;
  const int n_jg = kThreads / d_lanes;
  const int jg = tid / d_lanes, dl = tid % d_lanes;
  const bool v_active = jg < n_jg;
  float acc[kMaxDimsPerThread][kAttnMaxGroup];
#pragma unroll
  for (int k = 0; k < kMaxDimsPerThread; ++k)
#pragma unroll
    for (int g = 0; g < kAttnMaxGroup; ++g) acc[k][g] = 0.0f;
  __syncthreads();

  const int warp = tid / ALAP_WARP_SIZE, lane = tid % ALAP_WARP_SIZE;
  constexpr int n_warps = kThreads / ALAP_WARP_SIZE;

  for (int tile = begin; tile < end; tile += kBlockKV) {
    const int n_tile = min(kBlockKV, end - tile);

    // 1. scores of this thread's position against every query head of the group.
    {
      float score[kAttnMaxGroup];
#pragma unroll
      for (int g = 0; g < kAttnMaxGroup; ++g) score[g] = 0.0f;
      if (tid < n_tile) scores.score_row(a, kv, tile + tid, score);
#pragma unroll
      for (int g = 0; g < kAttnMaxGroup; ++g)
        if (g < G) s[g * kBlockKV + tid] = tid < n_tile ? score[g] * a.p.scale : -INFINITY;
    }
    __syncthreads();

    // 2. online softmax statistics, one warp per query head; s becomes p.
    for (int g = warp; g < G; g += n_warps) {
      float* sg = s + g * kBlockKV;
      float tmax = -INFINITY;
      for (int j = lane; j < kBlockKV; j += ALAP_WARP_SIZE) tmax = fmaxf(tmax, sg[j]);
      tmax = warp_max(tmax);
      const float m_old = m[g];
      const float m_new = fmaxf(m_old, tmax);  // finite: the tile has at least one position
      float sum = 0.0f;
      for (int j = lane; j < kBlockKV; j += ALAP_WARP_SIZE) {
        const float p = expf(sg[j] - m_new);  // exp(-inf) = 0 past n_tile
        sg[j] = p;
        sum += p;
      }
      sum = warp_sum(sum);
      if (lane == 0) {
        const float al = expf(m_old - m_new);  // 0 on the first tile (m_old = -inf)
        alpha[g] = al;
        l[g] = l[g] * al + sum;
        m[g] = m_new;
      }
    }
    __syncthreads();

    // 3. V accumulation: rescale by alpha, add Σ_j p_j·V[j][d].
    if (v_active) {
#pragma unroll
      for (int g = 0; g < kAttnMaxGroup; ++g)
        if (g < G)
#pragma unroll
          for (int k = 0; k < kMaxDimsPerThread; ++k) acc[k][g] *= alpha[g];
      const uint16_t* v = a.p.v + (size_t(kv) * a.p.capacity + tile) * hd;
      for (int j = jg; j < n_tile; j += n_jg) {
#pragma unroll
        for (int k = 0; k < kMaxDimsPerThread; ++k) {
          const int d = dl + k * d_lanes;
          if (d >= hd) break;
          const float vf = alap_half_to_float(v[size_t(j) * hd + d]);
#pragma unroll
          for (int g = 0; g < kAttnMaxGroup; ++g)
            if (g < G) acc[k][g] = fmaf(s[g * kBlockKV + j], vf, acc[k][g]);
        }
      }
    }
    __syncthreads();  // s is rewritten by the next tile
  }

  // Add the jg partial sums, then write the result (one split) or the partial (several).
  if (v_active) {
#pragma unroll
    for (int k = 0; k < kMaxDimsPerThread; ++k) {
      const int d = dl + k * d_lanes;
      if (d >= hd) break;
#pragma unroll
      for (int g = 0; g < kAttnMaxGroup; ++g)
        if (g < G) red[(size_t(jg) * G + g) * hd + d] = acc[k][g];
    }
  }
  __syncthreads();
  for (int i = tid; i < G * hd; i += kThreads) {
    const int g = i / hd, d = i % hd;
    float o = 0.0f;
    for (int r = 0; r < n_jg; ++r) o += red[(size_t(r) * G + g) * hd + d];
    const int h = kv * G + g;
    if (a.n_split == 1) {
      a.p.out[size_t(h) * hd + d] = l[g] > 0.0f ? o / l[g] : 0.0f;
    } else {
      a.part_o[(size_t(h) * kAttnMaxSplit + split) * hd + d] = o;
      if (d == 0) {
        a.part_m[size_t(h) * kAttnMaxSplit + split] = m[g];
        a.part_l[size_t(h) * kAttnMaxSplit + split] = l[g];
      }
    }
  }
}

// Merges the splits of one query head (blockIdx.x): out = Σ_s o_s·e^(m_s−M) / Σ_s l_s·e^(m_s−M).
__device__ inline void attn_decode_combine_body(const attn_kernel_args& a) {
  const int h = blockIdx.x, hd = a.p.head_dim;
  const float* pm = a.part_m + size_t(h) * kAttnMaxSplit;
  const float* pl = a.part_l + size_t(h) * kAttnMaxSplit;
  float mx = -INFINITY;
  for (int s = 0; s < a.n_split; ++s) mx = fmaxf(mx, pm[s]);
  float lsum = 0.0f;
  for (int s = 0; s < a.n_split; ++s) lsum += pm[s] == -INFINITY ? 0.0f : pl[s] * expf(pm[s] - mx);
  for (int d = threadIdx.x; d < hd; d += kThreads) {
    float o = 0.0f;
    for (int s = 0; s < a.n_split; ++s) {
      if (pm[s] == -INFINITY) continue;  // an empty split
      o += a.part_o[(size_t(h) * kAttnMaxSplit + s) * hd + d] * expf(pm[s] - mx);
    }
    a.p.out[size_t(h) * hd + d] = lsum > 0.0f ? o / lsum : 0.0f;
  }
}

}  // namespace alap::gpu
