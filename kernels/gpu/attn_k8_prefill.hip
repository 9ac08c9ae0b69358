// Prefill attention directly on the packed k8 cache (CUDA at head_dim 64/128: attn_prefill_mma.h's
// matrix-unit kernel; otherwise the scalar kernel here): tiles of query rows of one head against tiles
// of int8 K rows (dot4 on the payload, d_q·d_k per 32-block), causal mask, online softmax in fp32,
// V fp16 (k8) or int8 + scale (k8v8: staged once a tile, here as exact fp16 codes, on the matrix
// units as fp16(q·d_v)) accumulated in fp32. No f16 copy of K is ever made. A block runs S groups of
// 128 threads over alternate KV tiles, merged at the end. Not decode (attn_k8.hip).
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/attn_prefill_mma.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_port.h"

namespace alap::gpu {

namespace {

constexpr int kPrefillThreads = 128;  // threads of one KV group (a block has S of them)
constexpr int kPrefillQ = 16;   // query rows per block
constexpr int kPrefillKV = 32;  // cache rows per tile
constexpr int kPrefillBlock = 32;
static_assert(kPrefillThreads == kPrefillKV * (kPrefillQ / 4), "score phase: one cache row × 4 query rows per thread");
constexpr int kVRows = 4;       // V phase: query rows a thread (a warp per kVRows rows, HDB/32 dims a lane)
static_assert(kPrefillThreads == (kPrefillQ / kVRows) * 32, "V phase: one warp per kVRows query rows");
static_assert(kPrefillKV == 32, "softmax phase: one lane per cache row of the tile");

// KV groups a block (S): more warps on the multiprocessors for the short grids of a prefill chunk
// (⌈n_q/16⌉ × n_head blocks; 8 × 32 for 128 tokens of Llama-3-8B); as many as 48 KB of static
// shared memory holds (head_dim ≤ 64: 4, ≤ 128: 2, 256: 1).
constexpr int prefill_groups(int hdb) { return hdb <= 64 ? 4 : hdb <= 128 ? 2 : 1; }

// Four int8 (lane 0 in the low byte) -> four fp16 bits, exactly (|q| ≤ 128 < 2048): .x lanes 0-1,
// .y lanes 2-3, the low lane in the low half. Once per V element a tile (the staging), not per query.
__device__ __forceinline__ uint2 int8x4_to_half4(uint32_t w) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  // 0x64 above a byte u is the fp16 1024 + u (exact); u = q + 128 (sign bit flipped): minus 1152 is q.
  const uint32_t x = w ^ 0x80808080u;
  const uint32_t lo = __byte_perm(x, 0x64646464u, 0x5140), hi = __byte_perm(x, 0x64646464u, 0x7362);
  // Plain PTX, not __hsub2: cuda_fp16.h's braces would end the kernel body for the compile check's
  // awk (tests/kernels/gpu/gpu_compile_check.sh) before the dp4a it looks for.
  uint2 r;
  asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r.x) : "r"(lo), "r"(0x64806480u));  // 1152 in both halves
  asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(r.y) : "r"(hi), "r"(0x64806480u));
  return r;
#else
  uint32_t h[4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
    h[i] = __builtin_bit_cast(uint16_t, static_cast<_Float16>(static_cast<int8_t>(w >> (8 * i))));
  return make_uint2(h[0] | (h[1] << 16), h[2] | (h[3] << 16));
#endif
}

// kVd fp16 lanes of a shared V row as one 4-, 8- or 16-byte load.
template <int W>
struct alignas(4 * W) half_words {
  uint32_t w[W];
};

}  // namespace

// grid = (⌈n_q / kPrefillQ⌉, n_head), S·kPrefillThreads threads. HDB: head_dim bucket (head_dim ≤
// HDB). Group g (threads g·128 ..) takes KV tiles g, g + S, g + 2S, ... with its own running max,
// sum and accumulators; all groups run the same number of rounds (a tile past kv_end is all masked).
template <bool VPacked, int HDB, int S>
__global__ void __launch_bounds__(kPrefillThreads * S) attn_k8_prefill_kernel(attn_prefill_params p) {
  constexpr int kChunks = HDB / 16;       // 16-byte chunks of an int8 row
  constexpr int kBlocks = HDB / kPrefillBlock;
  constexpr int kVd = HDB / 32;           // V dims per thread (in each of its kVRows query rows)
  static_assert(kVd % 2 == 0 && kPrefillBlock % kVd == 0);
  __shared__ int4 kq_sh_[S][kPrefillKV][kChunks + 1];     // +1: rows start 16 bytes apart in banks
  __shared__ float kd_sh_[S][kPrefillKV][kBlocks];
  __shared__ int4 q_sh[kPrefillQ][kChunks];
  __shared__ float dq_sh[kPrefillQ][kBlocks];
  __shared__ int4 v_sh_[S][kPrefillKV][2 * kChunks];  // fp16 in both modes (k8v8: the int8 values, exact)
  __shared__ float vd_sh_[S][kPrefillKV][VPacked ? kBlocks : 1];
  __shared__ __align__(16) float s_sh_[S][kPrefillQ][kPrefillKV];
  __shared__ float m_sh_[S][kPrefillQ], l_sh_[S][kPrefillQ], alpha_sh_[S][kPrefillQ];

  const int grp = threadIdx.x / kPrefillThreads, tid = threadIdx.x % kPrefillThreads;
  auto& kq_sh = kq_sh_[grp];
  auto& kd_sh = kd_sh_[grp];
  auto& v_sh = v_sh_[grp];
  auto& vd_sh = vd_sh_[grp];
  auto& s_sh = s_sh_[grp];
  auto& m_sh = m_sh_[grp];
  auto& l_sh = l_sh_[grp];
  auto& alpha_sh = alpha_sh_[grp];
  const int h = blockIdx.y, q0 = blockIdx.x * kPrefillQ;
  const int hd = p.head_dim, nb = hd / kPrefillBlock, nc = hd / 16;
  const int kv = h / (p.n_head / p.n_kv_head);
  const size_t kv_row0 = size_t(kv) * p.capacity;
  const int q_last = min(q0 + kPrefillQ, p.n_q) - 1;  // rows past n_q repeat the last one
  const int kv_end = p.pos0 + q_last + 1;             // cache rows any query of the block sees

  // Quantise the block's query rows (the cache's rule), one 32-lane group per 32-block.
  {
    const int lane = threadIdx.x % kPrefillBlock;
    for (int blk = threadIdx.x / kPrefillBlock; blk < kPrefillQ * nb; blk += S * kPrefillThreads / kPrefillBlock) {
      const int qi = blk / nb, b = blk % nb, row = min(q0 + qi, q_last);
      const float x = p.q[(size_t(row) * p.n_head + h) * hd + b * kPrefillBlock + lane];
      float amax = fabsf(x);
#pragma unroll
      for (int off = kPrefillBlock / 2; off > 0; off >>= 1) amax = fmaxf(amax, alap_shfl_xor(amax, off, kPrefillBlock));
      const float d = amax / 127.0f;
      const int qv = d > 0.0f ? static_cast<int>(fminf(fmaxf(roundf(x / d), -127.0f), 127.0f)) : 0;
      reinterpret_cast<int8_t*>(&q_sh[qi][0])[b * kPrefillBlock + lane] = static_cast<int8_t>(qv);
      if (lane == 0) dq_sh[qi][b] = alap_half_to_float(alap_float_to_half(d));
    }
  }
  if (tid < kPrefillQ) {
    m_sh[tid] = -INFINITY;
    l_sh[tid] = 0.0f;
  }
  // V-phase role: query rows vq0 .. vq0 + kVRows - 1 (one warp), elements vl·kVd .. (one lane).
  const int vq0 = tid / 32 * kVRows, vl = tid % 32;
  const bool v_active = vl * kVd < hd;
  float acc[kVRows][kVd];
#pragma unroll
  for (int r = 0; r < kVRows; ++r)
#pragma unroll
    for (int e = 0; e < kVd; ++e) acc[r][e] = 0.0f;
  __syncthreads();

  const int n_rounds = (kv_end + S * kPrefillKV - 1) / (S * kPrefillKV);
  for (int round = 0; round < n_rounds; ++round) {
    const int tile = (round * S + grp) * kPrefillKV;
    // Stage the tile: coalesced 16-byte loads of K (and V) rows, zeros past kv_end.
    for (int i = tid; i < kPrefillKV * nc; i += kPrefillThreads) {
      const int j = i / nc, c = i % nc, row = tile + j;
      kq_sh[j][c] = row < kv_end ? *reinterpret_cast<const int4*>(p.k_q + (kv_row0 + row) * hd + c * 16)
                                 : make_int4(0, 0, 0, 0);
      if constexpr (VPacked) {
        const int4 w = row < kv_end ? *reinterpret_cast<const int4*>(p.v_q + (kv_row0 + row) * hd + c * 16)
                                    : make_int4(0, 0, 0, 0);
        const uint2 h0 = int8x4_to_half4(uint32_t(w.x)), h1 = int8x4_to_half4(uint32_t(w.y));
        const uint2 h2 = int8x4_to_half4(uint32_t(w.z)), h3 = int8x4_to_half4(uint32_t(w.w));
        v_sh[j][2 * c] = make_int4(int(h0.x), int(h0.y), int(h1.x), int(h1.y));
        v_sh[j][2 * c + 1] = make_int4(int(h2.x), int(h2.y), int(h3.x), int(h3.y));
      } else {
#pragma unroll
        for (int k = 0; k < 2; ++k)
          v_sh[j][2 * c + k] = row < kv_end ? *reinterpret_cast<const int4*>(p.v + (kv_row0 + row) * hd + (2 * c + k) * 8)
                                            : make_int4(0, 0, 0, 0);
      }
    }
    for (int i = tid; i < kPrefillKV * nb; i += kPrefillThreads) {
      const int j = i / nb, b = i % nb, row = tile + j;
      kd_sh[j][b] = row < kv_end ? alap_half_to_float(p.k_d[(kv_row0 + row) * nb + b]) : 0.0f;
      if constexpr (VPacked) vd_sh[j][b] = row < kv_end ? alap_half_to_float(p.v_d[(kv_row0 + row) * nb + b]) : 0.0f;
    }
    __syncthreads();

    // Scores: thread (j, qr) dots cache row j with query rows qr, qr+4, qr+8, qr+12.
    {
      const int j = tid % kPrefillKV, qr = tid / kPrefillKV;
      float sc[kPrefillQ / 4] = {};
      for (int b = 0; b < nb; ++b) {
        const int4 k0 = kq_sh[j][2 * b], k1 = kq_sh[j][2 * b + 1];
        const int kw[8] = {k0.x, k0.y, k0.z, k0.w, k1.x, k1.y, k1.z, k1.w};
        const float dk = kd_sh[j][b];
#pragma unroll
        for (int r = 0; r < kPrefillQ / 4; ++r) {
          const int qi = qr + 4 * r;
          const int4 a0 = q_sh[qi][2 * b], a1 = q_sh[qi][2 * b + 1];
          const int qw[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
          int isum = 0;
#pragma unroll
          for (int w = 0; w < 8; ++w) isum = alap_dot4(kw[w], qw[w], isum);
          sc[r] += dq_sh[qi][b] * dk * static_cast<float>(isum);
        }
      }
#pragma unroll
      for (int r = 0; r < kPrefillQ / 4; ++r) {
        const int qi = qr + 4 * r;
        const int q_pos = p.pos0 + min(q0 + qi, q_last);
        s_sh[qi][j] = tile + j <= q_pos ? sc[r] * p.scale : -INFINITY;  // causal (and past kv_end)
      }
    }
    __syncthreads();

    // Online softmax per query row: 32 lanes, one cache row each.
    {
      const int lane = tid % 32;
      for (int qi = tid / 32; qi < kPrefillQ; qi += kPrefillThreads / 32) {
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

    // V: acc[r] = acc[r]·alpha + Σ_j p_j·V[j][vl·kVd ...] for the warp's kVRows query rows. Every
    // lane converts its kVd fp16 elements of a row once for the kVRows rows (k8v8: the int8 values
    // are exact in fp16; their 32-block scale goes on p_j or on the values, below).
    if (v_active) {
#pragma unroll
      for (int r = 0; r < kVRows; ++r) {
        const float al = alpha_sh[vq0 + r];
#pragma unroll
        for (int e = 0; e < kVd; ++e) acc[r][e] *= al;
      }
      for (int j0 = 0; j0 < kPrefillKV; j0 += 4) {
        float4 p4[kVRows];
#pragma unroll
        for (int r = 0; r < kVRows; ++r) p4[r] = *reinterpret_cast<const float4*>(&s_sh[vq0 + r][j0]);
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
          const int j = j0 + jj;
          const auto vw = reinterpret_cast<const half_words<kVd / 2>*>(&v_sh[j][0])[vl];
          float vf[kVd];
#pragma unroll
          for (int w = 0; w < kVd / 2; ++w) {
            vf[2 * w] = alap_half_to_float(static_cast<uint16_t>(vw.w[w] & 0xffffu));
            vf[2 * w + 1] = alap_half_to_float(static_cast<uint16_t>(vw.w[w] >> 16));
          }
          // k8v8's scale: on the kVd values where they are fewer than the rows (head_dim ≤ 64), else on p_j.
          constexpr bool kScaleV = VPacked && kVd < kVRows;
          float vd = 1.0f;
          if constexpr (VPacked) vd = vd_sh[j][vl * kVd / kPrefillBlock];
          if constexpr (kScaleV) {
#pragma unroll
            for (int e = 0; e < kVd; ++e) vf[e] *= vd;
          }
#pragma unroll
          for (int r = 0; r < kVRows; ++r) {
            float pj = jj == 0 ? p4[r].x : jj == 1 ? p4[r].y : jj == 2 ? p4[r].z : p4[r].w;
            if constexpr (VPacked && !kScaleV) pj *= vd;
#pragma unroll
            for (int e = 0; e < kVd; ++e) acc[r][e] = fmaf(pj, vf[e], acc[r][e]);
          }
        }
      }
    }
    __syncthreads();  // the tile buffers are refilled next
  }

  if constexpr (S > 1) {
    // Merge: every group rescales to the block's max (group 0 saw row 0, so it is finite), groups
    // S-1 .. 1 add into o_sh in turn, group 0 adds the total and writes.
    __shared__ float o_sh[kPrefillQ][HDB];
    float l_all[kVRows], f[kVRows];
#pragma unroll
    for (int r = 0; r < kVRows; ++r) {
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
        for (int r = 0; r < kVRows; ++r)
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
      for (int r = 0; r < kVRows; ++r) {
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
    for (int r = 0; r < kVRows; ++r) {
      if (q0 + vq0 + r >= p.n_q) continue;
      const float inv = 1.0f / l_sh[vq0 + r];
      float* dst = p.out + (size_t(q0 + vq0 + r) * p.n_head + h) * hd + vl * kVd;
#pragma unroll
      for (int e = 0; e < kVd; ++e) dst[e] = acc[r][e] * inv;
    }
  }
}

namespace {

template <bool VPacked>
void launch_prefill(const attn_prefill_params& p, alap_gpu_stream_t stream) {
#if defined(ALAP_PREFILL_MMA)
  // CUDA, head_dim 64 and 128: the matrix-unit kernel (attn_prefill_mma.h); else the scalar one below.
  if (prefill_mma::usable(p.head_dim, p.k_d, p.v_d)) {
    const prefill_mma::args a{p.q,   p.k_q,      p.k_d,       nullptr,    p.v,    p.v_q, p.v_d,
                              p.out, p.n_q,      p.n_head,    p.n_kv_head, p.capacity, p.pos0, p.scale};
    prefill_mma::launch<true, VPacked>(a, p.head_dim, stream);
    return;
  }
#endif
  const dim3 grid((p.n_q + kPrefillQ - 1) / kPrefillQ, p.n_head);
  // ALAP_GPU_PREFILL_ATTN=1: one KV group a block (the kernel before the groups; benches, tests).
  const char* env = std::getenv("ALAP_GPU_PREFILL_ATTN");
  const bool one = env != nullptr && std::strcmp(env, "1") == 0;
  constexpr int s64 = prefill_groups(64), s128 = prefill_groups(128), s256 = prefill_groups(256);
  if (p.head_dim <= 64) {
    if (one) attn_k8_prefill_kernel<VPacked, 64, 1><<<grid, kPrefillThreads, 0, stream>>>(p);
    else attn_k8_prefill_kernel<VPacked, 64, s64><<<grid, kPrefillThreads * s64, 0, stream>>>(p);
  } else if (p.head_dim <= 128) {
    if (one) attn_k8_prefill_kernel<VPacked, 128, 1><<<grid, kPrefillThreads, 0, stream>>>(p);
    else attn_k8_prefill_kernel<VPacked, 128, s128><<<grid, kPrefillThreads * s128, 0, stream>>>(p);
  } else {
    attn_k8_prefill_kernel<VPacked, 256, s256><<<grid, kPrefillThreads * s256, 0, stream>>>(p);
  }
  ALAP_GPU_CHECK_LAUNCH();
}

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

}  // namespace

extern "C" {

const char* attn_prefill_check(const attn_prefill_params* p) {
  if (p == nullptr) return "attn_prefill: params is null";
  if (p->head_dim <= 0 || p->head_dim % kPrefillBlock != 0 || p->head_dim > kAttnMaxHeadDim)
    return "attn_prefill: head_dim must be a multiple of 32 in [32, 256]";
  if (p->n_kv_head <= 0 || p->n_head <= 0 || p->n_head % p->n_kv_head != 0)
    return "attn_prefill: n_head must be a positive multiple of n_kv_head";
  if (p->n_q <= 0 || p->pos0 < 0 || p->pos0 > p->capacity - p->n_q)
    return "attn_prefill: n_q must be >= 1 and pos0 + n_q <= capacity";
  if (p->q == nullptr || p->out == nullptr || p->k_q == nullptr || p->k_d == nullptr)
    return "attn_prefill: q, out, k_q or k_d is null";
  if (p->v_q == nullptr && p->v == nullptr) return "attn_prefill: needs fp16 v or int8 v_q";
  if (p->v_q != nullptr && p->v_d == nullptr) return "attn_prefill: v_q needs v_d";
  if (!aligned16(p->k_q) || !aligned16(p->v_q != nullptr ? static_cast<const void*>(p->v_q) : p->v))
    return "attn_prefill: K or V payload is not 16-byte aligned";
  return nullptr;
}

int attn_k8_prefill_run(const attn_prefill_params* p, void* stream) {
  return gpu_api_call("attn_k8_prefill_run", [&] {
    if (const char* why = attn_prefill_check(p)) throw std::invalid_argument(why);
    const auto s = static_cast<alap_gpu_stream_t>(stream);
    if (p->v_q != nullptr) {
      launch_prefill<true>(*p, s);
    } else {
      launch_prefill<false>(*p, s);
    }
  });
}

}  // extern "C"

}  // namespace alap::gpu
