// Prefill attention on the matrix units (CUDA sm_80+, head_dim 64 and 128): scores on mma (k8: int8
// m16n8k32 per 32-dim block, f16: m16n8k16 with q split into fp16 hi + lo), causal mask and online
// softmax in fp32 on the fragments, P·V on m16n8k16 (P rounded to fp16, V fp16 from shared memory;
// k8v8: int8 V staged as fp16(q·d_v) once a tile). Included by attn_k8_prefill.hip and
// attn_f16_prefill.hip; not the scalar kernels (HIP, other head_dims) and not decode (attn_k8_kernel.h).
//
// Rows of a KV head are its (token, query head) pairs in token-major order, r = t·G + gh (G query
// heads a KV head), so a K/V tile is read once for all heads of the group. A block takes 16·WM rows
// (WM warps, 16 rows each) of one KV head and runs S groups of WM warps over alternate 32-row KV tiles
// (cp.async, 2 stages a group, each group synchronised by its own named barrier in the KV loop),
// merged at the end in shared memory.
#pragma once

#include "kernels/gpu/gpu_port.h"

#if defined(ALAP_GPU_BACKEND_CUDA) && defined(ALAP_GPU_DEVICE_COMPILE)
#define ALAP_PREFILL_MMA 1

#include <cstdlib>
#include <cstring>

// P enters the P·V mma rounded to fp16, as in the field's flash attention: an output element's error
// is then at most 2^-11 · Σ p_j·|v_j| / Σ p_j (fp16's unit roundoff of each weight), which the tests
// bound element by element. ALAP_PREFILL_P_LO=1 builds the variant that also multiplies P's fp16
// remainder (p = hi + lo to ~2^-22; errors ~4e-6 against a double reference): twice the P·V mma,
// prompts at 32k take 1.06–1.16× as long (docs/bench/gpu.md "Session 44"). For measurements only.
#ifndef ALAP_PREFILL_P_LO
#define ALAP_PREFILL_P_LO 0
#endif
// ALAP_PREFILL_K8_FMA=1: k8 scores as two FFMA an element, the accumulator's bias folded into the
// first (not the same bits; M·d_q is exact, so the first gives i·d_q rounded once), with each warp's
// K scales of a tile converted to fp32 once (4 a lane) into its own shared area, transposed, so a
// lane reads a pair of rows' scales with one 8-byte load, and the scale to log2 units folded into
// those (no multiply a score). Measured (H100): the kernel 1.015x at depth, 2-5% slower on small
// grids, prompts 1.00-1.01x; not taken (docs/bench/gpu.md "Session 46", where it is "=2").
#ifndef ALAP_PREFILL_K8_FMA
#define ALAP_PREFILL_K8_FMA 0
#endif
// k8v8 stages its V tile as fp16(q·d_v) once a tile (d_v held to 511.75 so that no value passes
// fp16's end), so its P·V is f16's: the k8v8 kernel 1.03-1.10x (H100, session 46) and 1.07-1.10x for
// Llama-3-8B (H200, session 47). The form it replaced (exact int8 codes, the block scale on P)
// overflowed to infinity where a V block's scale passed 511.75 (docs/bench/gpu.md "Session 47").

namespace alap::gpu::prefill_mma {

struct args {
  const float* q;          // [n_q][n_head][HD]
  const int8_t* k_q;       // k8: [n_kv][capacity][HD] int8, or null
  const uint16_t* k_d;     // k8: [n_kv][capacity][HD/32] fp16 bits
  const uint16_t* k_f16;   // f16: [n_kv][capacity][HD] fp16 bits, or null
  const uint16_t* v;       // fp16 V, or null
  const int8_t* v_q;       // int8 V, or null
  const uint16_t* v_d;     // its scales
  float* out;              // [n_q][n_head][HD]
  int n_q, n_head, n_kv_head, capacity, pos0;
  float scale;
};

inline constexpr int kKT = 32;  // cache rows a tile

// Shared memory of one block: 2 stages per group (K, V fp16, K scales, raw int8 V, V scales), then the
// query rows (int8 + scales, or fp16 hi and lo), then the groups' row max and sum for the merge.
template <bool KI8, bool VI8, int HD, int WM, int S>
struct layout {
  static constexpr int nb = HD / 32;
  static constexpr int k_row = (KI8 ? HD : 2 * HD) + 16;  // bytes; +16: conflict-free ldmatrix
  static constexpr int v_row = 2 * HD + 16;
  static constexpr int k_off = 0;
  static constexpr int v_off = k_off + kKT * k_row;
  static constexpr int kd_off = v_off + kKT * v_row;
  static constexpr int vraw_off = kd_off + (KI8 ? kKT * nb * 2 : 0);
  static constexpr int vd_off = vraw_off + (VI8 ? kKT * HD : 0);
  static constexpr int stage = (vd_off + (VI8 ? kKT * nb * 2 : 0) + 127) / 128 * 128;
  static constexpr int ring = stage * 2 * S;
  static constexpr int rows = 16 * WM;
  static constexpr int q_row = (KI8 ? HD : 2 * HD) + 16;  // bytes of one query row (f16: hi; lo after)
  static constexpr int q_off = ring;
  static constexpr int dq_off = q_off + rows * q_row * (KI8 ? 1 : 2);
  static constexpr int ml_off = dq_off + (KI8 ? rows * nb * 4 : 0);
  static constexpr int kdf_off = ml_off + 2 * S * rows * 4;  // ALAP_PREFILL_K8_FMA: [warp][nb][kKT] fp32
  static constexpr int bytes = kdf_off + (KI8 && ALAP_PREFILL_K8_FMA ? WM * S * nb * kKT * 4 : 0);
};

__device__ __forceinline__ unsigned smem_u32(const void* ptr) { return static_cast<unsigned>(__cvta_generic_to_shared(ptr)); }
__device__ __forceinline__ void cp16(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0) : "memory");
}
__device__ __forceinline__ void cp4(unsigned dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0) : "memory");
}
__device__ __forceinline__ void ldsm4(unsigned addr, unsigned* r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldsm4_t(unsigned addr, unsigned* r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
// d = a·b + c: A 16×32 s8, B 32×8 s8, C/D s32 (c the same in all four).
__device__ __forceinline__ void mma_s8(int* d, const unsigned* a, unsigned b0, unsigned b1, int c) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c));
}
// c += a·b: A 16×16 f16, B 16×8 f16, C fp32.
__device__ __forceinline__ void mma_f16(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// (x0, x1) as an fp16 pair (x0 in the low half), and the pair of what that rounding left.
__device__ __forceinline__ void split_h2(float x0, float x1, unsigned& hi, unsigned& lo) {
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(hi) : "f"(x1), "f"(x0));
  float h0, h1;
  asm("{.reg .f16 a, b;\n mov.b32 {a, b}, %2;\n cvt.f32.f16 %0, a;\n cvt.f32.f16 %1, b;\n}" : "=f"(h0), "=f"(h1) : "r"(hi));
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(lo) : "f"(x1 - h1), "f"(x0 - h0));
}
// 2^x on the special-function unit alone (2 ulp; 2^-inf = +0). Results below 2^-126 flush to zero,
// where exp2f would return a subnormal: such a weight is a term < 2^-126 beside a row sum ≥ 1 and a
// zero in fp16 either way (p·256 or p·d_v·128 < 2^-100), so the output is the same.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float h2f(uint16_t b) {
  float f;
  asm("{.reg .f16 a;\n mov.b16 a, %1;\n cvt.f32.f16 %0, a;\n}" : "=f"(f) : "h"(b));
  return f;
}

// grid (⌈n_q·G / (16·WM)⌉, n_kv_head), 32·WM·S threads, layout<>::bytes of dynamic shared memory.
// Head_dim-128 blocks of ≤ 8 warps are held to 128 registers a thread (~200 unbounded, a few hundred
// bytes of spills), so that two blocks share a multiprocessor: one block of 8 warps left the schedulers
// idle 55% of the time (ncu); two make Llama-3-8B's prompts at 4096 tokens 1.15-1.30x faster in the
// kernel (docs/bench/gpu.md "Session 45").
template <bool KI8, bool VI8, int HD, int WM, int S>
__global__ void __launch_bounds__(32 * WM * S, (HD == 128 && WM * S <= 8) ? 2 : 1)
attn_prefill_mma_kernel(args p) {
  using L = layout<KI8, VI8, HD, WM, S>;
  constexpr int NB = HD / 32, NT = kKT / 8, NO = HD / 8, R = L::rows, GT = 32 * WM;
  static_assert(R * HD * 4 <= L::ring, "the merge's o tile lives in the ring");
  // P (≤ 1) goes into the P·V mma in fp16 times this power of two, so that small weights, and with
  // ALAP_PREFILL_P_LO the remainders, stay out of fp16's subnormals (< 6.1e-5), which keep only ~2^-24
  // absolute (unscaled, the remainders cost k8v8 2-5e-5 of output error; H200); p·256 ≤ 256. Divided
  // out with the row sum at the end.
  constexpr float kPScale = 256.0f;
  extern __shared__ __align__(128) unsigned char sm[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int grp = warp / WM, wr = warp % WM, gt = threadIdx.x % GT;
  const int g = lane >> 2, tq = lane & 3;
  const int kvh = blockIdx.y, G = p.n_head / p.n_kv_head;
  const int r0 = blockIdx.x * R, r_last = min(r0 + R, p.n_q * G) - 1;
  const int kv_end = p.pos0 + r_last / G + 1;  // cache rows any row of the block sees
  const size_t kv_row0 = size_t(kvh) * p.capacity;

  // The group's own barrier (named barrier 1 + grp over its GT threads) in the KV loop: its stages are
  // its own, so the S groups need not wait for each other there (k8v8 passes three a round).
  const auto group_sync = [&] {
    if constexpr (S == 1) __syncthreads();
    else asm volatile("bar.sync %0, %1;\n" ::"r"(1 + grp), "r"(GT) : "memory");
  };
  // Tile ti of this group into stage st (zeros past kv_end).
  const auto load = [&](int ti, int st) {
    unsigned char* sb = sm + (grp * 2 + st) * L::stage;
    const int tile = ti * kKT;
    constexpr int kc = (KI8 ? HD : 2 * HD) / 16;
    for (int i = gt; i < kKT * kc; i += GT) {
      const int j = i / kc, c = i % kc, row = tile + j;
      const bool ok = row < kv_end;
      const unsigned char* src = KI8 ? reinterpret_cast<const unsigned char*>(p.k_q) : reinterpret_cast<const unsigned char*>(p.k_f16);
      if (ok) src += (kv_row0 + row) * (KI8 ? HD : 2 * HD) + c * 16;
      cp16(smem_u32(sb + L::k_off + j * L::k_row + c * 16), src, ok);
    }
    constexpr int vc = (VI8 ? HD : 2 * HD) / 16;
    for (int i = gt; i < kKT * vc; i += GT) {
      const int j = i / vc, c = i % vc, row = tile + j;
      const bool ok = row < kv_end;
      const unsigned char* src = VI8 ? reinterpret_cast<const unsigned char*>(p.v_q) : reinterpret_cast<const unsigned char*>(p.v);
      if (ok) src += (kv_row0 + row) * (VI8 ? HD : 2 * HD) + c * 16;
      cp16(smem_u32(sb + (VI8 ? L::vraw_off + j * HD : L::v_off + j * L::v_row) + c * 16), src, ok);
    }
    constexpr int sw = kKT * NB / 2;  // 4-byte words of a tile's scales
    for (int i = gt; i < sw; i += GT) {
      const int row = tile + i / (NB / 2);
      const bool ok = row < kv_end;
      const size_t off = ok ? (kv_row0 + tile) * NB + size_t(i) * 2 : 0;
      if constexpr (KI8) cp4(smem_u32(sb + L::kd_off + i * 4), p.k_d + off, ok);
      if constexpr (VI8) cp4(smem_u32(sb + L::vd_off + i * 4), p.v_d + off, ok);
    }
  };

  // Query rows of the block (rows past the end repeat the last one).
  if constexpr (KI8) {
    for (int blk = warp; blk < R * NB; blk += WM * S) {
      const int qi = blk / NB, b = blk % NB, r = min(r0 + qi, r_last);
      const float x = p.q[(size_t(r / G) * p.n_head + kvh * G + r % G) * HD + b * 32 + lane];
      float amax = fabsf(x);
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, alap_shfl_xor(amax, off, 32));
      const float d = amax / 127.0f;
      const int qv = d > 0.0f ? static_cast<int>(fminf(fmaxf(roundf(x / d), -127.0f), 127.0f)) : 0;
      reinterpret_cast<int8_t*>(sm + L::q_off + qi * L::q_row)[b * 32 + lane] = static_cast<int8_t>(qv);
      if (lane == 0) reinterpret_cast<float*>(sm + L::dq_off)[qi * NB + b] = alap_half_to_float(alap_float_to_half(d));
    }
  } else {
    for (int i = threadIdx.x; i < R * HD; i += blockDim.x) {
      const int qi = i / HD, e = i % HD, r = min(r0 + qi, r_last);
      const float x = p.q[(size_t(r / G) * p.n_head + kvh * G + r % G) * HD + e];
      const uint16_t hi = alap_float_to_half(x);
      const uint16_t lo = alap_float_to_half(x - alap_half_to_float(hi));
      reinterpret_cast<uint16_t*>(sm + L::q_off + qi * L::q_row)[e] = hi;
      reinterpret_cast<uint16_t*>(sm + L::q_off + (R + qi) * L::q_row)[e] = lo;
    }
  }

  const int kv_tiles = (kv_end + kKT - 1) / kKT, n_rounds = (kv_tiles + S - 1) / S;
  load(grp, 0);
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  __syncthreads();

  // This warp's rows wr·16 + g and + 8: their positions (causal limit) and, for k8, q's fragments.
  const int rw0 = min(r0 + wr * 16 + g, r_last), rw1 = min(r0 + wr * 16 + g + 8, r_last);
  const int qp0 = p.pos0 + rw0 / G, qp1 = p.pos0 + rw1 / G;
  const int warp_lim = p.pos0 + min(r0 + wr * 16 + 15, r_last) / G;  // last cache row any row of the warp sees
  const int warp_first = p.pos0 + min(r0 + wr * 16, r_last) / G;    // last cache row every row of it sees
  const float sl = p.scale * 1.4426950408889634f;  // scores in log2 units: exp2
  // ALAP_PREFILL_K8_FMA: sl folded into the K scales as they are converted, so the scores come out
  // in log2 units (not into q's: d_q stays an fp16 value, which keeps M·d_q exact below).
  constexpr bool kSlInDk = KI8 && ALAP_PREFILL_K8_FMA;
  const float sls = kSlInDk ? 1.0f : sl;
  unsigned qa[KI8 ? NB : 1][4];
  float dq0[KI8 ? NB : 1], dq1[KI8 ? NB : 1];
  if constexpr (KI8) {
#pragma unroll
    for (int b = 0; b < NB; ++b) {
      ldsm4(smem_u32(sm + L::q_off + (wr * 16 + (lane & 15)) * L::q_row + b * 32 + (lane >> 4) * 16), qa[b]);
      dq0[b] = reinterpret_cast<const float*>(sm + L::dq_off)[(wr * 16 + g) * NB + b];
      dq1[b] = reinterpret_cast<const float*>(sm + L::dq_off)[(wr * 16 + g + 8) * NB + b];
    }
  }
  float o[NO][4];
#pragma unroll
  for (int n = 0; n < NO; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.0f, l1 = 0.0f;

  for (int rd = 0; rd < n_rounds; ++rd) {
    const int st = rd & 1;
    if (rd + 1 < n_rounds) load((rd + 1) * S + grp, st ^ 1);
    asm volatile("cp.async.commit_group;\n" ::: "memory");
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    group_sync();
    unsigned char* sb = sm + (grp * 2 + st) * L::stage;
    if constexpr (VI8) {  // the int8 V tile as fp16(q·d_v) (0x64 above byte u is 1024 + u; q = u - 128)
      for (int i = gt; i < kKT * HD / 4; i += GT) {
        const int j = i / (HD / 4), c = i % (HD / 4);
        const uint32_t x = *reinterpret_cast<const uint32_t*>(sb + L::vraw_off + j * HD + c * 4) ^ 0x80808080u;
        uint2 h;
        h.x = __byte_perm(x, 0x64646464u, 0x5140);
        h.y = __byte_perm(x, 0x64646464u, 0x7362);
        asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(h.x) : "r"(h.x), "r"(0x64806480u));
        asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(h.y) : "r"(h.y), "r"(0x64806480u));
        // q·d_v rounded to fp16 (d_v of row j, block c / (32/4)), d_v at most 511.75 (0x5FFF) so that
        // |q·d_v| ≤ 128 · 511.75 = 65504 stays finite: only a block whose largest |v| passes ~65000
        // (fp16's end) is saturated, where the f16 cache ends too.
        unsigned dd = reinterpret_cast<const uint16_t*>(sb + L::vd_off)[j * NB + c / 8];
        dd |= dd << 16;
        asm("min.f16x2 %0, %1, %2;" : "=r"(dd) : "r"(dd), "r"(0x5FFF5FFFu));
        asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(h.x) : "r"(h.x), "r"(dd));
        asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(h.y) : "r"(h.y), "r"(dd));
        *reinterpret_cast<uint2*>(sb + L::v_off + j * L::v_row + c * 8) = h;
      }
      group_sync();
    }
    const int kt0 = (rd * S + grp) * kKT;
    if (kt0 <= warp_lim) {
      // S = Q·Kᵀ, 16 rows × 32 cache rows: s[n] is n-tile n (cache rows kt0 + 8n ..), lane (g, tq)
      // holds rows g (s[n][0..1]) and g + 8 (s[n][2..3]) at cache rows 8n + 2tq, + 1.
      float s[NT][4];
#pragma unroll
      for (int n = 0; n < NT; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
      if constexpr (KI8) {
        constexpr int kMagicI = 0x4B400000;  // 1.5·2^23 as float bits: int sums |x| < 2^22 land exact
        const uint16_t* kd = reinterpret_cast<const uint16_t*>(sb + L::kd_off);
#if ALAP_PREFILL_K8_FMA
        float* kdf = reinterpret_cast<float*>(sm + L::kdf_off) + warp * NB * kKT;
#pragma unroll
        for (int b = 0; b < NB; ++b) kdf[b * kKT + lane] = h2f(kd[lane * NB + b]) * sl;
        __syncwarp();
#endif
#pragma unroll
        for (int b = 0; b < NB; ++b) {
#if ALAP_PREFILL_K8_FMA
          const float nm0 = -12582912.0f * dq0[b], nm1 = -12582912.0f * dq1[b];
#endif
#pragma unroll
          for (int jp = 0; jp < NT / 2; ++jp) {
            unsigned bf[4];
            ldsm4(smem_u32(sb + L::k_off + (jp * 16 + (lane >> 4) * 8 + (lane & 7)) * L::k_row + (2 * b + ((lane >> 3) & 1)) * 16), bf);
#pragma unroll
            for (int u = 0; u < 2; ++u) {
              const int n = 2 * jp + u;
              int d[4];
              mma_s8(d, qa[b], bf[2 * u], bf[2 * u + 1], kMagicI);
#if ALAP_PREFILL_K8_FMA
              const float2 dk = *reinterpret_cast<const float2*>(kdf + b * kKT + 8 * n + 2 * tq);  // ·sl
              const float dk0 = dk.x, dk1 = dk.y;
              // (M + i)·d_q − M·d_q in one FFMA, then ·d_k. d_q is an fp16 value (11 significant
              // bits), so M·d_q = 1.5·d_q·2^23 is exact in fp32 and the first FFMA gives i·d_q with
              // one rounding; the shipped form rounds i (exact), d_q·d_k and the product.
              s[n][0] = fmaf(fmaf(__int_as_float(d[0]), dq0[b], nm0), dk0, s[n][0]);
              s[n][1] = fmaf(fmaf(__int_as_float(d[1]), dq0[b], nm0), dk1, s[n][1]);
              s[n][2] = fmaf(fmaf(__int_as_float(d[2]), dq1[b], nm1), dk0, s[n][2]);
              s[n][3] = fmaf(fmaf(__int_as_float(d[3]), dq1[b], nm1), dk1, s[n][3]);
#else
              const float dk0 = h2f(kd[(8 * n + 2 * tq) * NB + b]), dk1 = h2f(kd[(8 * n + 2 * tq + 1) * NB + b]);
              s[n][0] = fmaf(__int_as_float(d[0]) - 12582912.0f, dq0[b] * dk0, s[n][0]);
              s[n][1] = fmaf(__int_as_float(d[1]) - 12582912.0f, dq0[b] * dk1, s[n][1]);
              s[n][2] = fmaf(__int_as_float(d[2]) - 12582912.0f, dq1[b] * dk0, s[n][2]);
              s[n][3] = fmaf(__int_as_float(d[3]) - 12582912.0f, dq1[b] * dk1, s[n][3]);
#endif
            }
          }
        }
      } else {
#pragma unroll
        for (int ks = 0; ks < HD / 16; ++ks) {
          unsigned ah[4], al[4];
          const int qrow = wr * 16 + (lane & 15), qcol = ks * 32 + (lane >> 4) * 16;
          ldsm4(smem_u32(sm + L::q_off + qrow * L::q_row + qcol), ah);
          ldsm4(smem_u32(sm + L::q_off + (R + qrow) * L::q_row + qcol), al);
#pragma unroll
          for (int jp = 0; jp < NT / 2; ++jp) {
            unsigned bf[4];
            ldsm4(smem_u32(sb + L::k_off + (jp * 16 + (lane >> 4) * 8 + (lane & 7)) * L::k_row + (2 * ks + ((lane >> 3) & 1)) * 16), bf);
#pragma unroll
            for (int u = 0; u < 2; ++u) {
              mma_f16(s[2 * jp + u], ah, bf[2 * u], bf[2 * u + 1]);
              mma_f16(s[2 * jp + u], al, bf[2 * u], bf[2 * u + 1]);
            }
          }
        }
      }
      // Causal mask (also masks rows past kv_end), online softmax in fp32. A tile wholly at or before
      // the warp's first row's position needs no mask (its rows are all < kv_end too).
      float mx0 = -INFINITY, mx1 = -INFINITY;
      if (kt0 + kKT - 1 <= warp_first) {
#pragma unroll
        for (int n = 0; n < NT; ++n) {
#pragma unroll
          for (int i = 0; i < 4; ++i) s[n][i] *= sls;
          mx0 = fmaxf(mx0, fmaxf(s[n][0], s[n][1]));
          mx1 = fmaxf(mx1, fmaxf(s[n][2], s[n][3]));
        }
      } else {
#pragma unroll
        for (int n = 0; n < NT; ++n) {
          const int c = kt0 + 8 * n + 2 * tq;
          s[n][0] = c <= qp0 ? s[n][0] * sls : -INFINITY;
          s[n][1] = c + 1 <= qp0 ? s[n][1] * sls : -INFINITY;
          s[n][2] = c <= qp1 ? s[n][2] * sls : -INFINITY;
          s[n][3] = c + 1 <= qp1 ? s[n][3] * sls : -INFINITY;
          mx0 = fmaxf(mx0, fmaxf(s[n][0], s[n][1]));
          mx1 = fmaxf(mx1, fmaxf(s[n][2], s[n][3]));
        }
      }
#pragma unroll
      for (int off = 1; off <= 2; off <<= 1) {
        mx0 = fmaxf(mx0, alap_shfl_xor(mx0, off, 32));
        mx1 = fmaxf(mx1, alap_shfl_xor(mx1, off, 32));
      }
      const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
      // -inf while these rows have seen nothing (a tile of this group past their position).
      const float a0 = mn0 == -INFINITY ? 1.0f : ex2(m0 - mn0), a1 = mn1 == -INFINITY ? 1.0f : ex2(m1 - mn1);
      const float b0 = mn0 == -INFINITY ? 0.0f : mn0, b1 = mn1 == -INFINITY ? 0.0f : mn1;
      m0 = mn0;
      m1 = mn1;
      float sum0 = 0.0f, sum1 = 0.0f;
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        s[n][0] = ex2(s[n][0] - b0);
        s[n][1] = ex2(s[n][1] - b0);
        s[n][2] = ex2(s[n][2] - b1);
        s[n][3] = ex2(s[n][3] - b1);
        sum0 += s[n][0] + s[n][1];
        sum1 += s[n][2] + s[n][3];
      }
      l0 = l0 * a0 + sum0;
      l1 = l1 * a1 + sum1;
      // Rescale O only where a row's max moved in this tile (a = exp2(0) = 1 exactly otherwise, so
      // skipping is the same bits); after the first tiles it rarely moves. One vote a warp.
      if (__any_sync(0xffffffffu, a0 != 1.0f || a1 != 1.0f)) {
#pragma unroll
        for (int n = 0; n < NO; ++n) {
          o[n][0] *= a0;
          o[n][1] *= a0;
          o[n][2] *= a1;
          o[n][3] *= a1;
        }
      }
      // O += P·V: A = P (16 rows × 16 cache rows, from s as it lies) in fp16 (hi; + lo with
      // ALAP_PREFILL_P_LO); B = V by ldmatrix.trans (k8v8: V already carries its block scale).
#pragma unroll
      for (int ks = 0; ks < kKT / 16; ++ks) {
        const float* x0 = s[2 * ks];
        const float* x1 = s[2 * ks + 1];
        // kPScale on A keeps small weights out of fp16's subnormals (undone at the end).
        unsigned ah[4], al[4];
        split_h2(x0[0] * kPScale, x0[1] * kPScale, ah[0], al[0]);
        split_h2(x0[2] * kPScale, x0[3] * kPScale, ah[1], al[1]);
        split_h2(x1[0] * kPScale, x1[1] * kPScale, ah[2], al[2]);
        split_h2(x1[2] * kPScale, x1[3] * kPScale, ah[3], al[3]);
#pragma unroll
        for (int np = 0; np < HD / 16; ++np) {  // 16-dim pairs of n-tiles
          unsigned bv[4];
          ldsm4_t(smem_u32(sb + L::v_off + (16 * ks + ((lane >> 3) & 1) * 8 + (lane & 7)) * L::v_row + (2 * np + (lane >> 4)) * 16), bv);
          mma_f16(o[2 * np], ah, bv[0], bv[1]);
          mma_f16(o[2 * np + 1], ah, bv[2], bv[3]);
          if constexpr (ALAP_PREFILL_P_LO != 0) {
            mma_f16(o[2 * np], al, bv[0], bv[1]);
            mma_f16(o[2 * np + 1], al, bv[2], bv[3]);
          }
        }
      }
    }
    group_sync();  // the stage is refilled next round
  }
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");

  // Row sums over the quad; merge the S groups (every group rescales to the block's max).
#pragma unroll
  for (int off = 1; off <= 2; off <<= 1) {
    l0 += alap_shfl_xor(l0, off, 32);
    l1 += alap_shfl_xor(l1, off, 32);
  }
  float* ml = reinterpret_cast<float*>(sm + L::ml_off);  // [S][R] max, then [S][R] sum
  const int row0 = wr * 16 + g, row1 = row0 + 8;
  if (tq == 0) {
    ml[grp * R + row0] = m0;
    ml[grp * R + row1] = m1;
    ml[(S + grp) * R + row0] = l0;
    ml[(S + grp) * R + row1] = l1;
  }
  __syncthreads();
  float mall0 = -INFINITY, mall1 = -INFINITY;
#pragma unroll
  for (int x = 0; x < S; ++x) {
    mall0 = fmaxf(mall0, ml[x * R + row0]);
    mall1 = fmaxf(mall1, ml[x * R + row1]);
  }
  float lall0 = 0.0f, lall1 = 0.0f;
#pragma unroll
  for (int x = 0; x < S; ++x) {
    const float mx0 = ml[x * R + row0], mx1 = ml[x * R + row1];
    lall0 += mx0 == -INFINITY ? 0.0f : ml[(S + x) * R + row0] * exp2f(mx0 - mall0);
    lall1 += mx1 == -INFINITY ? 0.0f : ml[(S + x) * R + row1] * exp2f(mx1 - mall1);
  }
  const float f0 = m0 == -INFINITY ? 0.0f : exp2f(m0 - mall0), f1 = m1 == -INFINITY ? 0.0f : exp2f(m1 - mall1);
  float* osh = reinterpret_cast<float*>(sm);  // [R][HD], in the ring (no copy is in flight)
  for (int x = S - 1; x >= 0; --x) {
    if (grp == x) {
#pragma unroll
      for (int n = 0; n < NO; ++n) {
        const int c = 8 * n + 2 * tq;
        float2* d0 = reinterpret_cast<float2*>(osh + row0 * HD + c);
        float2* d1 = reinterpret_cast<float2*>(osh + row1 * HD + c);
        float2 v0 = make_float2(o[n][0] * f0, o[n][1] * f0), v1 = make_float2(o[n][2] * f1, o[n][3] * f1);
        if (x != S - 1) {
          const float2 w0 = *d0, w1 = *d1;
          v0.x += w0.x;
          v0.y += w0.y;
          v1.x += w1.x;
          v1.y += w1.y;
        }
        if (x > 0) {
          *d0 = v0;
          *d1 = v1;
        } else {
          o[n][0] = v0.x;
          o[n][1] = v0.y;
          o[n][2] = v1.x;
          o[n][3] = v1.y;
        }
      }
    }
    if (x > 0) __syncthreads();
  }
  if (grp == 0) {
    const int ra = r0 + row0, rb = r0 + row1;
    const float i0 = 1.0f / (lall0 * kPScale), i1 = 1.0f / (lall1 * kPScale);
    float* da = p.out + (size_t(ra / G) * p.n_head + kvh * G + ra % G) * HD;
    float* db = p.out + (size_t(rb / G) * p.n_head + kvh * G + rb % G) * HD;
#pragma unroll
    for (int n = 0; n < NO; ++n) {
      const int c = 8 * n + 2 * tq;
      if (ra <= r_last) *reinterpret_cast<float2*>(da + c) = make_float2(o[n][0] * i0, o[n][1] * i0);
      if (rb <= r_last) *reinterpret_cast<float2*>(db + c) = make_float2(o[n][2] * i1, o[n][3] * i1);
    }
  }
}

// KV groups a block: 8 warps at most, and at most 112 KB of stages (two blocks a multiprocessor).
// wide (a grid of at most one block a multiprocessor): 16 warps at head_dim 64 (8 at 128: its
// registers), 8 groups at most, 200 KB of stages.
template <bool KI8, bool VI8, int HD, int WM, bool wide>
constexpr int groups() {
  int s = (wide && HD == 64 ? 16 : 8) / WM;
  if (s > 8) s = 8;
  while (s > 1 && layout<KI8, VI8, HD, WM, 1>::stage * 2 * s > (wide ? 200 : 112) * 1024) s /= 2;
  return s;
}

template <bool KI8, bool VI8, int HD, int WM, int S>
inline void launch_one(const args& a, int rows_total, cudaStream_t stream) {
  using L = layout<KI8, VI8, HD, WM, S>;
  static_assert(L::bytes <= 227 * 1024, "shared memory of a block");
  auto* k = attn_prefill_mma_kernel<KI8, VI8, HD, WM, S>;
  static const bool attr = [k] {
    ALAP_GPU_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, L::bytes));
    return true;
  }();
  (void)attr;
  const dim3 grid((rows_total + L::rows - 1) / L::rows, a.n_kv_head);
  k<<<grid, 32 * WM * S, L::bytes, stream>>>(a);
}

// More KV groups when the grid leaves multiprocessors a block at most (few rows: Qwen-shaped chunks).
template <bool KI8, bool VI8, int HD, int WM>
inline void launch_wm(const args& a, int rows_total, int n_sm, cudaStream_t stream) {
  constexpr int s = groups<KI8, VI8, HD, WM, false>(), sw = groups<KI8, VI8, HD, WM, true>();
  if constexpr (sw != s) {
    if ((rows_total + 16 * WM - 1) / (16 * WM) * a.n_kv_head <= n_sm) return launch_one<KI8, VI8, HD, WM, sw>(a, rows_total, stream);
  }
  launch_one<KI8, VI8, HD, WM, s>(a, rows_total, stream);
}

// ALAP_GPU_PREFILL_MMA: "0" the scalar kernels (benches, tests); "1", "2", "4" force WM. Read per call.
inline int env_choice() {
  const char* e = std::getenv("ALAP_GPU_PREFILL_MMA");
  if (e == nullptr || *e == '\0') return -1;
  return std::atoi(e);
}

// True when the matrix-unit kernel takes the call (head_dim 64/128, aligned scale rows, not turned off).
inline bool usable(int head_dim, const void* k_d, const void* v_d) {
  if (head_dim != 64 && head_dim != 128) return false;
  if (env_choice() == 0) return false;
  if (k_d != nullptr && reinterpret_cast<uintptr_t>(k_d) % 4 != 0) return false;
  if (v_d != nullptr && reinterpret_cast<uintptr_t>(v_d) % 4 != 0) return false;
  return true;
}

// WM: the largest of 4, 2, 1 whose grid still has 0.9 blocks a multiprocessor. H200, first call (µs,
// WM 1/2/4): 8B 512 tokens k8 84/81/73; 1B 128 after 32640 k8 370/379/697, k8v8 512/454/735, f16
// 416/390/682; Qwen-0.5B (112 blocks at WM 1) k8 254/377/689; 8B 4096 k8 1616/1633/1421.
template <bool KI8, bool VI8>
inline void launch(const args& a, int head_dim, cudaStream_t stream) {
  const int rows_total = a.n_q * (a.n_head / a.n_kv_head);
  static const int n_sm = [] {
    int dev = 0, n = 0;
    if (alap_gpu_get_device(&dev) != alap_gpu_success || alap_gpu_multiprocessor_count(&n, dev) != alap_gpu_success) n = 132;
    return n;
  }();
  int wm = env_choice();
  if (wm != 1 && wm != 2 && wm != 4) {
    wm = 1;
    for (int c : {4, 2}) {
      if ((rows_total + 16 * c - 1) / (16 * c) * a.n_kv_head >= n_sm * 9 / 10) {
        wm = c;
        break;
      }
    }
  }
  if (head_dim == 64) {
    if (wm == 4) launch_wm<KI8, VI8, 64, 4>(a, rows_total, n_sm, stream);
    else if (wm == 2) launch_wm<KI8, VI8, 64, 2>(a, rows_total, n_sm, stream);
    else launch_wm<KI8, VI8, 64, 1>(a, rows_total, n_sm, stream);
  } else {
    if (wm == 4) launch_wm<KI8, VI8, 128, 4>(a, rows_total, n_sm, stream);
    else if (wm == 2) launch_wm<KI8, VI8, 128, 2>(a, rows_total, n_sm, stream);
    else launch_wm<KI8, VI8, 128, 1>(a, rows_total, n_sm, stream);
  }
  ALAP_GPU_CHECK_LAUNCH();
}

}  // namespace alap::gpu::prefill_mma

#endif
