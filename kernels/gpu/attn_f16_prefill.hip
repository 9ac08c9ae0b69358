// Prefill attention on an fp16 K/V cache (f16 mode), the twin of attn_k8_prefill.hip: tiles of 16
// query rows of one head against tiles of 32 cache rows, fp32 scores (q fp32 · K fp16), causal
// mask, online softmax in fp32, V fp16 read from global memory (each element converted once for 4
// query rows) and accumulated in fp32. A block runs S groups of 128 threads over alternate KV tiles,
// merged at the end (as attn_k8_prefill.hip).
// CUDA at head_dim 64/128 runs attn_prefill_mma.h's matrix-unit kernel instead. Not the packed-K
// kernel (attn_k8_prefill.hip).
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/attn_prefill_mma.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/ops.h"

namespace alap::gpu {

namespace {

constexpr int kF16Threads = 128;
constexpr int kF16Q = 16;   // query rows per block
constexpr int kF16KV = 32;  // cache rows per tile
static_assert(kF16Threads == kF16KV * (kF16Q / 4), "score phase: one cache row × 4 query rows per thread");
constexpr int kF16VRows = 4;  // V phase: query rows a thread (a warp per 4 rows, HDB/32 dims a lane)
static_assert(kF16Threads == (kF16Q / kF16VRows) * 32, "V phase: one warp per kF16VRows query rows");
// KV groups a block: as many as 48 KB of static shared memory holds (attn_k8_prefill.hip's rule).
constexpr int f16_prefill_groups(int hdb) { return hdb <= 64 ? 4 : hdb <= 128 ? 2 : 1; }

// A lane's kVd fp16 V elements as one 4-, 8- or 16-byte load.
template <int W>
struct alignas(4 * W) f16_words {
  uint32_t w[W];
};

}  // namespace

// grid = (⌈n_q / 16⌉, n_head), S·128 threads. HDB: head_dim bucket (head_dim ≤ HDB). Group g
// (threads g·128 ..) takes KV tiles g, g + S, ... with its own running max, sum and accumulators;
// all groups run the same number of rounds (a tile past kv_end is all masked).
template <int HDB, int S>
__global__ void __launch_bounds__(kF16Threads * S) attn_f16_prefill_kernel(attn_f16_prefill_params p) {
  constexpr int kChunks = HDB / 8;  // 16-byte chunks of an fp16 row
  constexpr int kVd = HDB / 32;     // V dims per thread (in each of its kF16VRows query rows)
  __shared__ int4 k_sh_[S][kF16KV][kChunks + 1];  // +1: rows start 16 bytes apart in banks
  __shared__ __align__(16) float q_sh[kF16Q][HDB];
  __shared__ float s_sh_[S][kF16Q][kF16KV];
  __shared__ float m_sh_[S][kF16Q], l_sh_[S][kF16Q], alpha_sh_[S][kF16Q];

  const int grp = threadIdx.x / kF16Threads, tid = threadIdx.x % kF16Threads;
  auto& k_sh = k_sh_[grp];
  auto& s_sh = s_sh_[grp];
  auto& m_sh = m_sh_[grp];
  auto& l_sh = l_sh_[grp];
  auto& alpha_sh = alpha_sh_[grp];
  const int h = blockIdx.y, q0 = blockIdx.x * kF16Q;
  const int hd = p.head_dim, nc = hd / 8;
  const int kv = h / (p.n_head / p.n_kv_head);
  const size_t kv_row0 = size_t(kv) * p.capacity;
  const int q_last = min(q0 + kF16Q, p.n_q) - 1;  // rows past n_q repeat the last one
  const int kv_end = p.pos0 + q_last + 1;         // cache rows any query of the block sees

  for (int i = threadIdx.x; i < kF16Q * hd; i += S * kF16Threads) {
    const int qi = i / hd, d = i % hd, row = min(q0 + qi, q_last);
    q_sh[qi][d] = p.q[(size_t(row) * p.n_head + h) * hd + d];
  }
  if (tid < kF16Q) {
    m_sh[tid] = -INFINITY;
    l_sh[tid] = 0.0f;
  }
  // V-phase role: query rows vq0 .. vq0 + 3 (one warp), elements vl·kVd .. (one lane).
  const int vq0 = tid / 32 * kF16VRows, vl = tid % 32;
  const bool v_active = vl * kVd < hd;
  float acc[kF16VRows][kVd];
#pragma unroll
  for (int r = 0; r < kF16VRows; ++r)
#pragma unroll
    for (int e = 0; e < kVd; ++e) acc[r][e] = 0.0f;
  __syncthreads();

  const int n_rounds = (kv_end + S * kF16KV - 1) / (S * kF16KV);
  for (int round = 0; round < n_rounds; ++round) {
    const int tile = (round * S + grp) * kF16KV;
    for (int i = tid; i < kF16KV * nc; i += kF16Threads) {
      const int j = i / nc, c = i % nc, row = tile + j;
      k_sh[j][c] = row < kv_end ? *reinterpret_cast<const int4*>(p.k_f16 + (kv_row0 + row) * hd + c * 8)
                                : make_int4(0, 0, 0, 0);
    }
    __syncthreads();

    {  // scores: thread (j, qr) dots cache row j with query rows qr, qr+4, qr+8, qr+12
      const int j = tid % kF16KV, qr = tid / kF16KV;
      float sc[kF16Q / 4] = {};
      for (int c = 0; c < nc; ++c) {
        const int4 kw = k_sh[j][c];
        const uint32_t words[4] = {uint32_t(kw.x), uint32_t(kw.y), uint32_t(kw.z), uint32_t(kw.w)};
        float kf[8];
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          kf[2 * w] = alap_half_to_float(static_cast<uint16_t>(words[w] & 0xFFFFu));
          kf[2 * w + 1] = alap_half_to_float(static_cast<uint16_t>(words[w] >> 16));
        }
#pragma unroll
        for (int r = 0; r < kF16Q / 4; ++r) {
          const float* qv = &q_sh[qr + 4 * r][8 * c];
#pragma unroll
          for (int e = 0; e < 8; ++e) sc[r] = fmaf(qv[e], kf[e], sc[r]);
        }
      }
#pragma unroll
      for (int r = 0; r < kF16Q / 4; ++r) {
        const int qi = qr + 4 * r;
        const int q_pos = p.pos0 + min(q0 + qi, q_last);
        s_sh[qi][j] = tile + j <= q_pos ? sc[r] * p.scale : -INFINITY;  // causal (and past kv_end)
      }
    }
    __syncthreads();

    {  // online softmax per query row: 32 lanes, one cache row each
      const int lane = tid % 32;
      for (int qi = tid / 32; qi < kF16Q; qi += kF16Threads / 32) {
        const float x = s_sh[qi][lane];
        float tmax = x;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) tmax = fmaxf(tmax, alap_shfl_xor(tmax, off, 32));
        const float m_old = m_sh[qi];
        // -inf while the group has seen no row of this query (a later group's tiles, causal mask).
        const float m_new = fmaxf(m_old, tmax);
        const float pv = m_new == -INFINITY ? 0.0f : expf(x - m_new);
        s_sh[qi][lane] = pv;
        float sum = pv;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) sum += alap_shfl_xor(sum, off, 32);
        alap_syncwarp();  // every lane has read m_sh[qi] before lane 0 rewrites it
        if (lane == 0) {
          const float al = m_old == -INFINITY ? 0.0f : expf(m_old - m_new);
          alpha_sh[qi] = al;
          l_sh[qi] = l_sh[qi] * al + sum;
          m_sh[qi] = m_new;
        }
      }
    }
    __syncthreads();

    if (v_active) {  // acc[r] = acc[r]·alpha + Σ_j p_j·V[j][vl·kVd ...], each element converted once for 4 rows
#pragma unroll
      for (int r = 0; r < kF16VRows; ++r) {
        const float al = alpha_sh[vq0 + r];
#pragma unroll
        for (int e = 0; e < kVd; ++e) acc[r][e] *= al;
      }
      const int j_end = min(kF16KV, kv_end - tile);
      for (int j = 0; j < j_end; ++j) {
        const auto vw = reinterpret_cast<const f16_words<kVd / 2>*>(p.v + (kv_row0 + tile + j) * hd)[vl];
        float vf[kVd];
#pragma unroll
        for (int w = 0; w < kVd / 2; ++w) {
          vf[2 * w] = alap_half_to_float(static_cast<uint16_t>(vw.w[w] & 0xFFFFu));
          vf[2 * w + 1] = alap_half_to_float(static_cast<uint16_t>(vw.w[w] >> 16));
        }
#pragma unroll
        for (int r = 0; r < kF16VRows; ++r) {
          const float pj = s_sh[vq0 + r][j];
#pragma unroll
          for (int e = 0; e < kVd; ++e) acc[r][e] = fmaf(pj, vf[e], acc[r][e]);
        }
      }
    }
    __syncthreads();  // the tile buffers are refilled next
  }

  if constexpr (S > 1) {
    // Merge: every group rescales to the block's max (group 0 saw row 0, so it is finite), groups
    // S-1 .. 1 add into o_sh in turn, group 0 adds the total and writes.
    __shared__ float o_sh[kF16Q][HDB];
    float l_all[kF16VRows], f[kF16VRows];
#pragma unroll
    for (int r = 0; r < kF16VRows; ++r) {
      const int qi = vq0 + r;
      float m_all = m_sh_[0][qi];
#pragma unroll
      for (int g = 1; g < S; ++g) m_all = fmaxf(m_all, m_sh_[g][qi]);
      l_all[r] = 0.0f;
#pragma unroll
      for (int g = 0; g < S; ++g) l_all[r] += m_sh_[g][qi] == -INFINITY ? 0.0f : l_sh_[g][qi] * expf(m_sh_[g][qi] - m_all);
      f[r] = m_sh[qi] == -INFINITY ? 0.0f : expf(m_sh[qi] - m_all);
    }
    for (int g = S - 1; g >= 0; --g) {
      if (grp == g && v_active) {
#pragma unroll
        for (int r = 0; r < kF16VRows; ++r)
#pragma unroll
          for (int e = 0; e < kVd; ++e) {
            float* o = &o_sh[vq0 + r][vl * kVd + e];
            const float mine = acc[r][e] * f[r];
            if (g == S - 1) *o = mine;
            else if (g > 0) *o += mine;
            else acc[r][e] = *o + mine;
          }
      }
      if (g > 0) __syncthreads();
    }
    if (grp == 0 && v_active) {
#pragma unroll
      for (int r = 0; r < kF16VRows; ++r) {
        if (q0 + vq0 + r >= p.n_q) continue;
        const float inv = 1.0f / l_all[r];
        float* dst = p.out + (size_t(q0 + vq0 + r) * p.n_head + h) * hd + vl * kVd;
#pragma unroll
        for (int e = 0; e < kVd; ++e) dst[e] = acc[r][e] * inv;
      }
    }
    return;
  }
  if (v_active) {
#pragma unroll
    for (int r = 0; r < kF16VRows; ++r) {
      if (q0 + vq0 + r >= p.n_q) continue;
      const float inv = 1.0f / l_sh[vq0 + r];
      float* dst = p.out + (size_t(q0 + vq0 + r) * p.n_head + h) * hd + vl * kVd;
#pragma unroll
      for (int e = 0; e < kVd; ++e) dst[e] = acc[r][e] * inv;
    }
  }
}

namespace {

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

const char* attn_f16_prefill_check(const attn_f16_prefill_params* p) {
  if (p == nullptr) return "params is null";
  if (p->head_dim <= 0 || p->head_dim % 32 != 0 || p->head_dim > kAttnMaxHeadDim)
    return "head_dim must be a multiple of 32 in [32, 256]";
  if (p->n_kv_head <= 0 || p->n_head <= 0 || p->n_head % p->n_kv_head != 0)
    return "n_head must be a positive multiple of n_kv_head";
  if (p->n_q <= 0 || p->pos0 < 0 || p->pos0 > p->capacity - p->n_q) return "n_q must be >= 1 and pos0 + n_q <= capacity";
  if (p->q == nullptr || p->out == nullptr || p->k_f16 == nullptr || p->v == nullptr) return "q, out, k_f16 or v is null";
  if (!aligned16(p->k_f16) || !aligned16(p->v)) return "k_f16 or v is not 16-byte aligned";
  return nullptr;
}

}  // namespace

extern "C" int attn_f16_prefill_run(const attn_f16_prefill_params* p, void* stream) {
  return gpu_api_call("attn_f16_prefill_run", [&] {
    if (const char* why = attn_f16_prefill_check(p)) throw std::invalid_argument(why);
    const auto s = static_cast<alap_gpu_stream_t>(stream);
#if defined(ALAP_PREFILL_MMA)
    // CUDA, head_dim 64 and 128: the matrix-unit kernel (attn_prefill_mma.h); else the scalar one.
    if (prefill_mma::usable(p->head_dim, nullptr, nullptr)) {
      const prefill_mma::args a{p->q,   nullptr,   nullptr,     p->k_f16,      p->v,        nullptr, nullptr,
                                p->out, p->n_q,    p->n_head,   p->n_kv_head,  p->capacity, p->pos0, p->scale};
      prefill_mma::launch<false, false>(a, p->head_dim, s);
      return;
    }
#endif
    const dim3 grid((p->n_q + kF16Q - 1) / kF16Q, p->n_head);
    // ALAP_GPU_PREFILL_ATTN=1: one KV group a block (the kernel before the groups; benches, tests).
    const char* env = std::getenv("ALAP_GPU_PREFILL_ATTN");
    const bool one = env != nullptr && std::strcmp(env, "1") == 0;
    constexpr int s64 = f16_prefill_groups(64), s128 = f16_prefill_groups(128), s256 = f16_prefill_groups(256);
    if (p->head_dim <= 64) {
      if (one) attn_f16_prefill_kernel<64, 1><<<grid, kF16Threads, 0, s>>>(*p);
      else attn_f16_prefill_kernel<64, s64><<<grid, kF16Threads * s64, 0, s>>>(*p);
    } else if (p->head_dim <= 128) {
      if (one) attn_f16_prefill_kernel<128, 1><<<grid, kF16Threads, 0, s>>>(*p);
      else attn_f16_prefill_kernel<128, s128><<<grid, kF16Threads * s128, 0, s>>>(*p);
    } else {
      attn_f16_prefill_kernel<256, s256><<<grid, kF16Threads * s256, 0, s>>>(*p);
    }
    ALAP_GPU_CHECK_LAUNCH();
  });
}

}  // namespace alap::gpu
