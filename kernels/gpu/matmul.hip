// Weight products y = W·x for every weight type of ops.h, and the activation quantiser they share.
// Quantised types: activations as int8 blocks of 32 (gpu_quantize_act_q8, the CPU's rule), weights
// unpacked per 32-block (matmul_kernel.h), dot4 into int32, scaled per 16-half in fp32. IQ4_NL and
// IQ4_XS: their 4-bit codes through a 16-entry int8 table (byte permutes, gpu_port.h), then as Q8_0.
//   decode (1 token): a block of up to 128 threads owns 2-8 rows; each thread takes pieces of 32 or
//     64 values of the row (matmul_kernel.h), reads them for all its rows straight into registers
//     and loads their activations once for those rows (matvec_xr_kernel).
//   prefill (n tokens): 64 rows × 16/64 tokens per block, K steps of 128 columns; the weight tile
//     is unpacked once per step into shared memory (int8 + scales) and used by every token. CUDA
//     sm_80+, n > 16: 128/64/32 rows × 64 tokens with the dots on int8 mma.sync, one fp32 step a
//     32-block (matmul_q8_mma_kernel; rounds differently from the dot4 kernel).
// F32/F16/BF16 in fp32 FMA (coalesced 16-byte loads for decode, a tiled fp32 kernel for prefill).
// Not vendor BLAS, not RDNA3 WMMA; not the CPU twin (kernels/cpu).
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_pdl.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/matmul_kernel.h"
#include "kernels/gpu/ops.h"

namespace alap::gpu {

namespace {

constexpr int kGroup = 32;          // lanes per row group (wave32 and wave64 alike)
constexpr int kMvThreads = 128;     // decode: 4 rows per block
constexpr int kMvRows = kMvThreads / kGroup;
constexpr int kTileThreads = 256;   // prefill
constexpr int kTileRows = 64;
constexpr int kTileK = 128;         // columns per K step (4 blocks of 32)

// Decode (docs/bench/gpu.md "Forward-pass kernels" has the measurements behind the defaults): every
// quantised type through matvec_xr_kernel, R rows a block with the activations of a piece loaded
// once for the R rows: R = ALAP_MV_XR_ROWS for every type, or per type (0, xr_rows), halved while
// the grid would have fewer than ALAP_MV_XR_MIN_BLOCKS blocks (down to 2).
#ifndef ALAP_MV_XR_ROWS
#define ALAP_MV_XR_ROWS 0
#endif
// IQ4_NL/IQ4_XS rows per block alone (the other types keep theirs), to compare 2, 4 and 8 in one build
// of each (docs/bench/runs/session27/run2_gpu.sh).
#ifndef ALAP_IQ4_ROWS
#define ALAP_IQ4_ROWS 4
#endif
#ifndef ALAP_MV_XR_MIN_BLOCKS
#define ALAP_MV_XR_MIN_BLOCKS 256
#endif
// Rows per block of matvec_xr_kernel by piece kind (the faster of 2, 4, 8 at both Llama-3-8B FFN
// shapes on the H200, session 4; Q5_K's 32-value pieces 2, Q6_K's 4; Q2_K 8 and Q3_K 4, session
// 5; Q4_K's 4, session 20: 8 before, and 4 is level or faster at every Llama-3-8B shape and in its
// decode step). HIP: at most 4 (8 rows spill VGPRs on gfx1100; not measured).
constexpr int xr_rows(uint32_t t) {
  if (ALAP_MV_XR_ROWS != 0) return ALAP_MV_XR_ROWS;
  int r = 8;
  if (t == kQ4_0 || t == kQ4_K || t == kQ5_K || t == kQ6_K) r = 4;
  if (t == kQ5_K32) r = 2;
  if (t == kQ4_K32 || t == kQ6_K32 || t == kQ3_K) r = 4;
  if (t == kIQ4_NL || t == kIQ4_XS) r = ALAP_IQ4_ROWS;  // 4 as Q4_0 and Q4_K32, their closest kin
#if defined(ALAP_GPU_BACKEND_HIP)
  r = r > 4 ? 4 : r;
#endif
  return r;
}
constexpr int kXrThreads = 128;
// Q4_K/Q5_K/Q6_K rows in pieces of 32 values rather than 64: rows longer than 128 pieces of 64
// (fewer registers, more blocks resident; 4096 × 14336: Q4_K 70% of copy against 61%, Q5_K 70%
// against 59%, Q6_K 76% against 68%, session 4), and Q4_K rows of at most 64 (2048 and 4096
// columns, where 64-value pieces left blocks of 32 or 64 threads: decode steps of random Q4_K
// models, Llama-3-8B shape 1969 -> 1931 µs, Llama-3.2-3B 1247 -> 1230, Llama-3.2-1B 569 -> 562,
// session 20; Q6_K's such rows in 32-value pieces made the 8B step slower). In between
// (Qwen2.5-0.5B's 4864 columns) 64-value pieces stay: 32-value ones were 2% slower there.
bool xr_pieces_of_32(uint32_t t, int n_cols) {
  const int pieces = n_cols / 64;
  if (pieces > kXrThreads) return t == kQ4_K || t == kQ5_K || t == kQ6_K;
  return pieces <= 64 && t == kQ4_K;
}

// Quantise: one 32-lane group per 32-block, d = max|x|/127, q = rint(x·(1/d)) clamped (the CPU's
// quantize_activations byte for byte), s16 = Σq of each half.
__global__ void __launch_bounds__(128) quantize_act_q8_kernel(const float* x, void* xq, int n_tokens, int n_cols) {
  alap_pdl_begin();
  const long long n_blocks = (long long)n_tokens * (n_cols / 32);
  const long long blk = (long long)blockIdx.x * 4 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const bool valid = blk < n_blocks;
  const float v[1] = {valid ? x[blk * 32 + lane] : 0.0f};
  quantize_act_block<1>(v, valid, act_q8_layout(xq, n_tokens, n_cols), blk * 32 + lane);
}

__device__ __forceinline__ float group_sum(float v) {
#pragma unroll
  for (int off = kGroup / 2; off > 0; off >>= 1) v += alap_shfl_xor(v, off, kGroup);
  return v;
}

// One piece k of R rows (raw, read by xr_load) against the activations: loads the piece's
// activations once, then unpacks and dots row by row into acc.
template <uint32_t T, int R>
__device__ __forceinline__ void xr_piece_rows(const xr_raw<T> (&raw)[R], int k, const act_q8_view& x, float (&acc)[R]) {
  constexpr int NR = xr_runs_of<T>();
  int A[NR];
  xr_runs<T>(k, A);
  int xw[4 * NR], nq[NR];
  float xd[NR], xs[NR];
  [[maybe_unused]] int xn[8];
#pragma unroll
  for (int i = 0; i < NR; ++i) {
    const int4 q = *reinterpret_cast<const int4*>(x.q + A[i]);
    xw[4 * i] = q.x, xw[4 * i + 1] = q.y, xw[4 * i + 2] = q.z, xw[4 * i + 3] = q.w;
    xd[i] = x.d[A[i] >> 5];
    const int sq = x.s16[A[i] >> 4];
    xs[i] = xd[i] * static_cast<float>(sq);
    nq[i] = -xr_offset_of<T>() * sq;
  }
  if constexpr (T == kIQ4_NL || T == kIQ4_XS) iq4_act_words(xw, xn);
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if constexpr (T == kIQ4_NL || T == kIQ4_XS) {
      acc[r] += xr_dot_iq4<T>(raw[r], k, xn, xd[0]);  // one activation block: xd[0] = xd[1]
    } else if constexpr (T == kQ6_K) {
      acc[r] += xr_dot_q6(raw[r], k, xw, xd, nq);
    } else if constexpr (T == kQ6_K32) {
      acc[r] += xr_dot_q6_32(raw[r], k, xw, xd, nq);
    } else if constexpr (T == kQ2_K) {
      acc[r] += xr_dot_q2(raw[r], k, xw, xd, xs);
    } else if constexpr (T == kQ3_K) {
      acc[r] += xr_dot_q3(raw[r], k, xw, xd, nq);
    } else {
      xr_piece<NR> u;
      xr_decode<T>(raw[r], k, u);
      acc[r] += xr_dot(u, xw, xd, xs);
    }
  }
}

// The block's sums of R rows (each thread's acc) to y[row0 ..]: shuffles within the lane groups,
// the groups' through shared memory red (one barrier).
template <int R>
__device__ __forceinline__ void xr_block_store(float (&acc)[R], float (&red)[kXrThreads / kGroup][R], int row0,
                                               int n_rows, float* y, float beta, float y_old) {
  const int tid = threadIdx.x, nt = blockDim.x, grp = tid / kGroup, lane = tid % kGroup;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const float v = group_sum(acc[r]);
    if (lane == 0) red[grp][r] = v;
  }
  __syncthreads();
  if (tid < R && row0 + tid < n_rows) {
    float v = 0.0f;
    for (int g = 0; g < nt / kGroup; ++g) v += red[g][tid];
    y[row0 + tid] = beta != 0.0f ? v + beta * y_old : v;
  }
}

// Decode, quantised types, activations in registers: a block of nt = blockDim.x threads (32, 64,
// 96 or 128) owns R consecutive rows; thread t takes pieces t, t + nt, ... of the row
// (matmul_kernel.h: 32 or 64 values each, kind T), reads the piece of each of the R rows (R loads
// in flight), loads the piece's activations once, then unpacks and dots row by row. Rows past
// n_rows repeat the last row and are not written. The first pieces' weights are read before the
// PDL wait (no kernel writes them). Group sums by shuffles, the groups' through shared memory.
template <uint32_t T, int R>
__global__ void __launch_bounds__(kXrThreads) matvec_xr_kernel(const uint8_t* w, size_t row_bytes, int n_rows,
                                                              int n_cols, const void* xq, float* y, float beta) {
  constexpr int NR = xr_runs_of<T>();
  __shared__ float red[kXrThreads / kGroup][R];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int row0 = blockIdx.x * R;
  const uint8_t* wrow[R];
#pragma unroll
  for (int r = 0; r < R; ++r) wrow[r] = w + size_t(min(row0 + r, n_rows - 1)) * row_bytes;
  const int n_pieces = n_cols / (16 * NR);
  int k = tid;
  xr_raw<T> raw[R];
  if (k < n_pieces) {
#pragma unroll
    for (int r = 0; r < R; ++r) xr_load<T>(wrow[r], k, raw[r]);
  }
  // The residual (beta ≠ 0) this thread adds at the end, read before the wait too: gpu_matmul's
  // contract (ops.h) is that the launch just before a decode product does not write y, so the
  // block's end does not wait for one more round trip.
  const float y_old = beta != 0.0f && tid < R && row0 + tid < n_rows ? y[row0 + tid] : 0.0f;
  alap_pdl_begin();
  const act_q8_view x = act_q8_layout(xq, 1, n_cols);
  float acc[R] = {};
  while (k < n_pieces) {
    xr_piece_rows<T, R>(raw, k, x, acc);
    k += nt;
    if (k < n_pieces) {
#pragma unroll
      for (int r = 0; r < R; ++r) xr_load<T>(wrow[r], k, raw[r]);
    }
  }
  xr_block_store<R>(acc, red, row0, n_rows, y, beta, y_old);
}

// Decode, plain types: 16-byte loads when vec (rows 16-byte aligned, n_cols a multiple of 8).
template <uint32_t T>
__device__ __forceinline__ float plain_value(const uint8_t* row, int c) {
  if constexpr (T == kF32) {
    return reinterpret_cast<const float*>(row)[c];
  } else if constexpr (T == kF16) {
    return alap_half_to_float(reinterpret_cast<const uint16_t*>(row)[c]);
  } else {
    return bf16_to_float(reinterpret_cast<const uint16_t*>(row)[c]);
  }
}

template <uint32_t T>
__global__ void __launch_bounds__(kMvThreads) matvec_plain_kernel(const uint8_t* w, size_t row_bytes, int n_rows,
                                                                 int n_cols, const float* x, float* y, float beta,
                                                                 bool vec) {
  constexpr int kE = T == kF32 ? 4 : 8;  // elements per 16 bytes
  const int grp = threadIdx.x / kGroup, lane = threadIdx.x % kGroup;
  const int row = blockIdx.x * kMvRows + grp;
  // The residual before the wait, as matvec_xr_kernel reads it.
  const float y_old = beta != 0.0f && lane == 0 && row < n_rows ? y[row] : 0.0f;
  alap_pdl_begin();
  if (row >= n_rows) return;
  const uint8_t* wrow = w + size_t(row) * row_bytes;
  float acc = 0.0f;
  if (vec) {
#pragma unroll 4
    for (int c = lane * kE; c < n_cols; c += kGroup * kE) {
      const int4 raw = *reinterpret_cast<const int4*>(wrow + size_t(c) * (T == kF32 ? 4 : 2));
      const float4 x0 = *reinterpret_cast<const float4*>(x + c);
      if constexpr (T == kF32) {
        acc += __int_as_float(raw.x) * x0.x + __int_as_float(raw.y) * x0.y + __int_as_float(raw.z) * x0.z +
               __int_as_float(raw.w) * x0.w;
      } else {
        const float4 x1 = *reinterpret_cast<const float4*>(x + c + 4);
        const uint32_t wd[4] = {uint32_t(raw.x), uint32_t(raw.y), uint32_t(raw.z), uint32_t(raw.w)};
        const float xv[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const uint16_t lo = static_cast<uint16_t>(wd[k] & 0xFFFFu), hi = static_cast<uint16_t>(wd[k] >> 16);
          const float w0 = T == kF16 ? alap_half_to_float(lo) : bf16_to_float(lo);
          const float w1 = T == kF16 ? alap_half_to_float(hi) : bf16_to_float(hi);
          acc += w0 * xv[2 * k] + w1 * xv[2 * k + 1];
        }
      }
    }
  } else {
    for (int c = lane; c < n_cols; c += kGroup) acc += plain_value<T>(wrow, c) * x[c];
  }
  acc = group_sum(acc);
  if (lane == 0) y[row] = beta != 0.0f ? acc + beta * y_old : acc;
}

// The dot4 prefill kernel's fp32 step for one (row, token, 16-half): acc + xd·(a·dot + b·s16). CUDA:
// the FMAs spelled out (as session 5 measured it); HIP: a plain expression (no fmaf library call
// in -nogpulib device compiles).
__device__ __forceinline__ float tile_step(float acc, float xd, float a, float dot, float b, float s16) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  return fmaf(xd, fmaf(a, dot, b * s16), acc);
#else
  return acc + xd * (a * dot + b * s16);  // contracted to FMAs
#endif
}

// Prefill, quantised types. grid = (⌈n_tokens / TT⌉, ⌈n_rows / 64⌉); thread (rg, tg) = (tid % 16,
// tid / 16) owns rows rg + 16i (i < 4) and tokens tg + 16j (j < TT/16) of the tile.
template <uint32_t T, int TT>
__global__ void __launch_bounds__(kTileThreads) matmul_q8_tiled_kernel(const uint8_t* w, size_t row_bytes,
                                                                      int n_rows, int n_cols, const void* xq,
                                                                      int n_tokens, float* y, float beta) {
  alap_pdl_begin();
  constexpr int kH = kTileK / 16;  // 16-halves per K step
  constexpr int kTJ = TT / 16;
  __shared__ int4 w_sh[kTileRows][kH + 1];  // +1: rows 36 words apart in the banks
  __shared__ float wa_sh[kTileRows][kH], wb_sh[kTileRows][kH];
  __shared__ int4 x_sh[TT][kH + 1];
  __shared__ float xd_sh[TT][kH / 2], xs_sh[TT][kH];
  const int tid = threadIdx.x, rg = tid % 16, tg = tid / 16;
  const int t0 = blockIdx.x * TT, r0 = blockIdx.y * kTileRows;
  const act_q8_view x = act_q8_layout(xq, n_tokens, n_cols);
  const int n_blk32 = n_cols / 32;
  float acc[4][kTJ] = {};

  for (int k0 = 0; k0 < n_blk32; k0 += kTileK / 32) {
    {  // weights: one 32-block per thread
      const int r = tid / 4, b = tid % 4, row = r0 + r, blk = k0 + b;
      wblock u;
      if (row < n_rows && blk < n_blk32) {
        unpack_block<T>(w + size_t(row) * row_bytes, blk, u);
      } else {
#pragma unroll
        for (int k = 0; k < 8; ++k) u.w[k] = 0;
        u.a0 = u.a1 = u.b0 = u.b1 = 0.0f;
      }
      w_sh[r][2 * b] = make_int4(u.w[0], u.w[1], u.w[2], u.w[3]);
      w_sh[r][2 * b + 1] = make_int4(u.w[4], u.w[5], u.w[6], u.w[7]);
      wa_sh[r][2 * b] = u.a0;
      wa_sh[r][2 * b + 1] = u.a1;
      wb_sh[r][2 * b] = u.b0;
      wb_sh[r][2 * b + 1] = u.b1;
    }
    for (int i = tid; i < TT * 4; i += kTileThreads) {  // activations
      const int t = i / 4, b = i % 4, tok = t0 + t, blk = k0 + b;
      const bool ok = tok < n_tokens && blk < n_blk32;
      const size_t xb = size_t(tok) * n_blk32 + blk;
      x_sh[t][2 * b] = ok ? *reinterpret_cast<const int4*>(x.q + xb * 32) : make_int4(0, 0, 0, 0);
      x_sh[t][2 * b + 1] = ok ? *reinterpret_cast<const int4*>(x.q + xb * 32 + 16) : make_int4(0, 0, 0, 0);
      const int2 s = ok ? *reinterpret_cast<const int2*>(x.s16 + xb * 2) : make_int2(0, 0);
      xd_sh[t][b] = ok ? x.d[xb] : 0.0f;
      xs_sh[t][2 * b] = static_cast<float>(s.x);
      xs_sh[t][2 * b + 1] = static_cast<float>(s.y);
    }
    __syncthreads();
#pragma unroll 2
    for (int h = 0; h < kH; ++h) {
      int4 wv[4];
      float wa[4], wb[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        wv[i] = w_sh[rg + 16 * i][h];
        wa[i] = wa_sh[rg + 16 * i][h];
        wb[i] = wb_sh[rg + 16 * i][h];
      }
#pragma unroll
      for (int j = 0; j < kTJ; ++j) {
        const int t = tg + 16 * j;
        const int4 xv = x_sh[t][h];
        const float xd = xd_sh[t][h / 2], xs = xs_sh[t][h];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          int s = alap_dot4(wv[i].x, xv.x, 0);
          s = alap_dot4(wv[i].y, xv.y, s);
          s = alap_dot4(wv[i].z, xv.z, s);
          s = alap_dot4(wv[i].w, xv.w, s);
          acc[i][j] = tile_step(acc[i][j], xd, wa[i], static_cast<float>(s), wb[i], xs);
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < kTJ; ++j) {
    const int tok = t0 + tg + 16 * j;
    if (tok >= n_tokens) continue;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = r0 + rg + 16 * i;
      if (row >= n_rows) continue;
      float* dst = y + size_t(tok) * n_rows + row;
      *dst = beta != 0.0f ? acc[i][j] + beta * *dst : acc[i][j];
    }
  }
}

// Prefill on the int8 matrix units (CUDA sm_80+), one fp32 step a 32-block: MR rows (128, 64 or
// 32) × 64 tokens a block, K steps of 128 columns (4 blocks of 32) staged in shared memory, each
// 32-block unpacked once (unpack_block_mma, matmul_kernel.h: offsets folded into int8 weights, a
// and b per 32-block, or int8 scales per 16-half). The 8 warps stand MR/32 along the rows ×
// 8/(MR/32) along the tokens: warp (wm, wn) takes rows 32wm.. and NT·8 tokens from NT·8·wn (NT =
// 4, 2, 1). Per 32-block b and (m tile, n tile), for each (row, token) of the C fragments:
//   a, b per 32-block: one mma.m16n8k32 (both halves), acc = fma(xd, a·I, acc) [+ fma(b, xd·Σq, acc)];
//   Q6_K, Q3_K: two mma.m16n8k16, I = sc0·I0 + sc1·I1 in int32, acc = fma(xd, d·I, acc);
//   Q2_K: one mma.m16n8k32 on w·sc, acc = fma(xd, d·I, acc) + b0·xd·Σq₀ + b1·xd·Σq₁.
// I is converted exactly and in one FADD (its int32 sum starts at kI2fBias, |I| < 2^22: Q8_0 ≤
// 32·128·127, Q5_K 32·31·127, Q3_K 2·32·16·4·127, Q2_K 32·45·127) except Q6_K's (|I| ≤
// 2·128·16·32·127 < 2^24: I2F, also exact).
// Not bit-identical to the dot4 kernel (different rounding; ops_gpu_test bounds it against the
// double reference); every MR gives the same bits (the same steps in the same order).
// Fragments of lane (g, t) = (lane / 4, lane % 4) (PTX ISA, mma .s8): m16n8k32 A words t and t + 4
// (k 4t.., 16 + 4t..) of rows g and g + 8, B words t, t + 4 of token g; m16n8k16 the first half
// of each; C rows g and g + 8 × tokens 2t, 2t + 1. A word is one 32-bit load from the 16-byte
// groups of w_sh / x_sh (rows 36 words apart: 32 lanes, 32 banks).
#if defined(ALAP_GPU_BACKEND_CUDA)
constexpr int kMmaTok = 64;

__device__ __forceinline__ void mma_s8_16816(int (&c)[4], int a0, int a1, int b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};\n"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a0), "r"(a1), "r"(b), "r"(0), "r"(0), "r"(0), "r"(0));
#else
  (void)a0, (void)a1, (void)b;
  c[0] = c[1] = c[2] = c[3] = 0;
  __trap();  // launched only on sm_80+ (mma_prefill_rows)
#endif
}

// c = A·B + c0 (every element; c0 = kI2fBias makes c[e] the bits of 1.5·2^23 + dot).
__device__ __forceinline__ void mma_s8_16832(int (&c)[4], const int (&a)[4], int b0, int b1, int c0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %10, %10, %10};\n"
      : "=r"(c[0]), "=r"(c[1]), "=r"(c[2]), "=r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c0));
#else
  (void)a, (void)b0, (void)b1, (void)c0;
  c[0] = c[1] = c[2] = c[3] = 0;
  __trap();
#endif
}

// exact_i2f's bias: int32 sums started at it are the float bits of 1.5·2^23 + the sum (|sum| < 2^22),
// so the conversion is one FADD (as the k8 attention's scores).
constexpr int kI2fBias = 0x4B400000;
__device__ __forceinline__ float biased_to_float(int v) { return __int_as_float(v) - 12582912.0f; }

template <uint32_t T, int MR>
__global__ void __launch_bounds__(kTileThreads, 2) matmul_q8_mma_kernel(const uint8_t* w, size_t row_bytes,
                                                                       int n_rows, int n_cols, const void* xq,
                                                                       int n_tokens, float* y, float beta) {
  static_assert(MR == 128 || MR == 64 || MR == 32);
  alap_pdl_begin();
  constexpr int kB = kTileK / 32;         // 32-blocks per K step
  constexpr int kWM = MR / 32;            // warps along the rows
  constexpr int kNT = kWM;                // n tiles (8 tokens) a warp: 64 tokens over 8 / kWM warps
  constexpr bool kMin = mma_has_min<T>(), kHalf = mma_half_scales<T>(), kQ2 = T == kQ2_K;
  constexpr int kNB = kQ2 ? 2 * kB : kB;  // min terms per K step: per 16-half (Q2_K) or 32-block
  __shared__ int4 w_sh[MR][2 * kB + 1];   // [row][16-half]: 16 weights (int8 lanes)
  __shared__ float wa_sh[kB][MR];         // [block][row]: a (or d)
  __shared__ float wb_sh[kMin ? kNB : 1][MR];      // the min b
  __shared__ int2 wsc_sh[kHalf ? kB : 1][MR];      // Q6_K/Q3_K: (sc0, sc1)
  __shared__ int4 x_sh[kMmaTok][2 * kB + 1];       // [token][16-half]: 16 activations
  __shared__ __align__(16) float xd_sh[kB][kMmaTok];             // block scale d (read as float2)
  __shared__ __align__(16) float xs_sh[kMin ? kNB : 1][kMmaTok];  // d·Σq of the block (Q2_K: of the half)
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t = lane % 4, wm = warp % kWM, wn = warp / kWM;
  const int t0 = blockIdx.x * kMmaTok, r0 = blockIdx.y * MR;
  const act_q8_view x = act_q8_layout(xq, n_tokens, n_cols);
  const int n_blk32 = n_cols / 32;
  float acc[2][kNT][4] = {};  // [m tile][n tile][fragment element]

  for (int k0 = 0; k0 < n_blk32; k0 += kB) {
#pragma unroll
    for (int i = tid; i < MR * kB; i += kTileThreads) {  // weights: 32-block b of row r
      const int r = i / kB, b = i % kB, row = r0 + r, blk = k0 + b;
      mblock u;
      if (row < n_rows && blk < n_blk32) {
        unpack_block_mma<T>(w + size_t(row) * row_bytes, blk, u);
      } else {
#pragma unroll
        for (int k = 0; k < 8; ++k) u.w[k] = 0;
        u.a = u.b0 = u.b1 = 0.0f;
        u.sc0 = u.sc1 = 0;
      }
      w_sh[r][2 * b] = make_int4(u.w[0], u.w[1], u.w[2], u.w[3]);
      w_sh[r][2 * b + 1] = make_int4(u.w[4], u.w[5], u.w[6], u.w[7]);
      wa_sh[b][r] = u.a;
      if constexpr (kQ2) {
        wb_sh[2 * b][r] = u.b0;
        wb_sh[2 * b + 1][r] = u.b1;
      } else if constexpr (kMin) {
        wb_sh[b][r] = u.b0;
      }
      if constexpr (kHalf) wsc_sh[b][r] = make_int2(u.sc0, u.sc1);
    }
    {  // activations: one 32-block per thread
      const int tk = tid / kB, b = tid % kB, tok = t0 + tk, blk = k0 + b;
      const bool ok = tok < n_tokens && blk < n_blk32;
      const size_t xb = size_t(tok) * n_blk32 + blk;
      x_sh[tk][2 * b] = ok ? *reinterpret_cast<const int4*>(x.q + xb * 32) : make_int4(0, 0, 0, 0);
      x_sh[tk][2 * b + 1] = ok ? *reinterpret_cast<const int4*>(x.q + xb * 32 + 16) : make_int4(0, 0, 0, 0);
      const float d = ok ? x.d[xb] : 0.0f;
      xd_sh[b][tk] = d;
      if constexpr (kMin) {
        const int2 s = ok ? *reinterpret_cast<const int2*>(x.s16 + xb * 2) : make_int2(0, 0);
        if constexpr (kQ2) {
          xs_sh[2 * b][tk] = d * static_cast<float>(s.x);
          xs_sh[2 * b + 1][tk] = d * static_cast<float>(s.y);
        } else {
          xs_sh[b][tk] = d * static_cast<float>(s.x + s.y);
        }
      }
    }
    __syncthreads();
#pragma unroll
    for (int b = 0; b < kB; ++b) {
      int a[2][4];
      float ra[2][2], rb[2][2][2];
      int2 rsc[2][2];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        const int row = 32 * wm + 16 * mi + g;
        a[mi][0] = reinterpret_cast<const int*>(&w_sh[row][2 * b])[t];
        a[mi][1] = reinterpret_cast<const int*>(&w_sh[row + 8][2 * b])[t];
        a[mi][2] = reinterpret_cast<const int*>(&w_sh[row][2 * b + 1])[t];
        a[mi][3] = reinterpret_cast<const int*>(&w_sh[row + 8][2 * b + 1])[t];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          ra[mi][h] = wa_sh[b][row + 8 * h];
          if constexpr (kQ2) {
            rb[mi][h][0] = wb_sh[2 * b][row + 8 * h];
            rb[mi][h][1] = wb_sh[2 * b + 1][row + 8 * h];
          } else if constexpr (kMin) {
            rb[mi][h][0] = wb_sh[b][row + 8 * h];
          }
          if constexpr (kHalf) rsc[mi][h] = wsc_sh[b][row + 8 * h];
        }
      }
#pragma unroll
      for (int ni = 0; ni < kNT; ++ni) {
        const int n0 = 8 * (kNT * wn + ni);
        const int b0 = reinterpret_cast<const int*>(&x_sh[n0 + g][2 * b])[t];
        const int b1 = reinterpret_cast<const int*>(&x_sh[n0 + g][2 * b + 1])[t];
        const float2 xd = *reinterpret_cast<const float2*>(&xd_sh[b][n0 + 2 * t]);
        float2 xs[2] = {};
        if constexpr (kQ2) {
          xs[0] = *reinterpret_cast<const float2*>(&xs_sh[2 * b][n0 + 2 * t]);
          xs[1] = *reinterpret_cast<const float2*>(&xs_sh[2 * b + 1][n0 + 2 * t]);
        } else if constexpr (kMin) {
          xs[0] = *reinterpret_cast<const float2*>(&xs_sh[b][n0 + 2 * t]);
        }
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) {
          int c[4], c1[4];
          if constexpr (kHalf) {
            mma_s8_16816(c, a[mi][0], a[mi][1], b0);
            mma_s8_16816(c1, a[mi][2], a[mi][3], b1);
          } else {
            mma_s8_16832(c, a[mi], b0, b1, kI2fBias);
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int h = e / 2;
            const float xde = e % 2 ? xd.y : xd.x;
            float f;
            if constexpr (T == kQ6_K) {
              f = static_cast<float>(rsc[mi][h].x * c[e] + rsc[mi][h].y * c1[e]);
            } else if constexpr (kHalf) {
              f = biased_to_float(rsc[mi][h].y * c1[e] + (rsc[mi][h].x * c[e] + kI2fBias));
            } else {
              f = biased_to_float(c[e]);
            }
            float v = fmaf(xde, ra[mi][h] * f, acc[mi][ni][e]);
            if constexpr (kMin) v = fmaf(rb[mi][h][0], e % 2 ? xs[0].y : xs[0].x, v);
            if constexpr (kQ2) v = fmaf(rb[mi][h][1], e % 2 ? xs[1].y : xs[1].x, v);
            acc[mi][ni][e] = v;
          }
        }
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int mi = 0; mi < 2; ++mi) {
#pragma unroll
    for (int ni = 0; ni < kNT; ++ni) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = r0 + 32 * wm + 16 * mi + g + 8 * (e / 2);
        const int tok = t0 + 8 * (kNT * wn + ni) + 2 * t + e % 2;
        if (row >= n_rows || tok >= n_tokens) continue;
        float* dst = y + size_t(tok) * n_rows + row;
        *dst = beta != 0.0f ? acc[mi][ni][e] + beta * *dst : acc[mi][ni][e];
      }
    }
  }
}
#endif  // ALAP_GPU_BACKEND_CUDA

// Prefill, plain types: fp32 tiles of 64 rows × TT tokens × 32 columns.
template <uint32_t T, int TT>
__global__ void __launch_bounds__(kTileThreads) matmul_plain_tiled_kernel(const uint8_t* w, size_t row_bytes,
                                                                         int n_rows, int n_cols, const float* x,
                                                                         int n_tokens, float* y, float beta) {
  alap_pdl_begin();
  constexpr int kK = 32, kTJ = TT / 16;
  __shared__ float w_sh[kTileRows][kK + 1];
  __shared__ float x_sh[TT][kK + 1];
  const int tid = threadIdx.x, rg = tid % 16, tg = tid / 16;
  const int t0 = blockIdx.x * TT, r0 = blockIdx.y * kTileRows;
  float acc[4][kTJ] = {};
  for (int k0 = 0; k0 < n_cols; k0 += kK) {
    for (int i = tid; i < kTileRows * kK; i += kTileThreads) {
      const int r = i / kK, c = i % kK, row = r0 + r, col = k0 + c;
      w_sh[r][c] = row < n_rows && col < n_cols ? plain_value<T>(w + size_t(row) * row_bytes, col) : 0.0f;
    }
    for (int i = tid; i < TT * kK; i += kTileThreads) {
      const int t = i / kK, c = i % kK, tok = t0 + t, col = k0 + c;
      x_sh[t][c] = tok < n_tokens && col < n_cols ? x[size_t(tok) * n_cols + col] : 0.0f;
    }
    __syncthreads();
#pragma unroll 8
    for (int c = 0; c < kK; ++c) {
      float wv[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) wv[i] = w_sh[rg + 16 * i][c];
#pragma unroll
      for (int j = 0; j < kTJ; ++j) {
        const float xv = x_sh[tg + 16 * j][c];
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i][j] += wv[i] * xv;
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < kTJ; ++j) {
    const int tok = t0 + tg + 16 * j;
    if (tok >= n_tokens) continue;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = r0 + rg + 16 * i;
      if (row >= n_rows) continue;
      float* dst = y + size_t(tok) * n_rows + row;
      *dst = beta != 0.0f ? acc[i][j] + beta * *dst : acc[i][j];
    }
  }
}

struct mm_args {
  const uint8_t* w;
  size_t row_bytes;
  int n_rows, n_cols, n_tokens;
  const float* x;
  const void* xq;
  float* y;
  float beta;
  alap_gpu_stream_t stream;
};

// Decode through matvec_xr_kernel with pieces of kind P: up to 128 threads a block, xr_rows(P)
// rows (fewer while the grid is small).
template <uint32_t P>
void launch_xr(const mm_args& a) {
  const int n_pieces = a.n_cols / (16 * xr_runs_of<P>());
  const unsigned nt = unsigned(std::min(kXrThreads, (n_pieces + kGroup - 1) / kGroup * kGroup));
  auto blocks = [&](int r) { return unsigned((a.n_rows + r - 1) / r); };
  constexpr int kR = xr_rows(P);
  static_assert(kR == 2 || kR == 4 || kR == 8);
  int rows = kR;
  while (rows > 2 && blocks(rows) < unsigned(ALAP_MV_XR_MIN_BLOCKS)) rows /= 2;
  if (rows == 8) {
    if constexpr (kR >= 8)
      alap_launch(matvec_xr_kernel<P, 8>, blocks(8), nt, 0, a.stream, a.w, a.row_bytes, a.n_rows, a.n_cols, a.xq, a.y,
                  a.beta);
  } else if (rows == 4) {
    if constexpr (kR >= 4)
      alap_launch(matvec_xr_kernel<P, 4>, blocks(4), nt, 0, a.stream, a.w, a.row_bytes, a.n_rows, a.n_cols, a.xq, a.y,
                  a.beta);
  } else {
    alap_launch(matvec_xr_kernel<P, 2>, blocks(2), nt, 0, a.stream, a.w, a.row_bytes, a.n_rows, a.n_cols, a.xq, a.y,
                a.beta);
  }
}

#if defined(ALAP_GPU_BACKEND_CUDA)
// Prefill of quantised types (n tokens > 16) on the matrix units, on a device of compute capability
// 8.0 or newer (the one current at the first call): the rows per block (128, 64 or 32), or 0 for
// the dot4 kernel. Auto: the largest MR whose grid has at least one block per multiprocessor (else
// 32): on the H200 it picks the fastest MR, or one within 6% of it, at every product shape of the
// three benchmark models at 128- and 512-token chunks (docs/bench/gpu.md, session 6). ALAP_GPU_PREFILL (read at every call; comparisons and tests): "dot4", or "mma128",
// "mma64", "mma32" for that MR.
int mma_prefill_rows(int n_rows, int n_tokens) {
  static const int n_sm = [] {
    int dev = 0, major = 0, sms = 0;
    if (alap_gpu_get_device(&dev) != alap_gpu_success) return 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess || major < 8) return 0;
    if (alap_gpu_multiprocessor_count(&sms, dev) != alap_gpu_success) return 0;
    return sms > 0 ? sms : 1;
  }();
  if (n_sm == 0) return 0;
  if (const char* env = std::getenv("ALAP_GPU_PREFILL")) {
    const std::string v(env);
    int mr = 0;
    if (v == "dot4") return 0;
    if (v == "mma128") mr = 128;
    if (v == "mma64") mr = 64;
    if (v == "mma32") mr = 32;
    if (mr != 0) {
      while (mr < 128 && (n_rows + mr - 1) / mr > 65535) mr *= 2;  // grid.y limit (gpu_matmul: ≤ 65535·64 rows)
      return mr;
    }
  }
  const long long tok_tiles = (n_tokens + kMmaTok - 1) / kMmaTok;
  for (int mr : {128, 64}) {
    if (tok_tiles * ((n_rows + mr - 1) / mr) >= n_sm) return mr;
  }
  return 32;
}

template <uint32_t T, int MR>
void launch_mma(const mm_args& a) {
  const dim3 grid(unsigned((a.n_tokens + kMmaTok - 1) / kMmaTok), unsigned((a.n_rows + MR - 1) / MR));
  alap_launch(matmul_q8_mma_kernel<T, MR>, grid, kTileThreads, 0, a.stream, a.w, a.row_bytes, a.n_rows, a.n_cols,
              a.xq, a.n_tokens, a.y, a.beta);
}
#endif

template <uint32_t T>
void launch_matmul(const mm_args& a) {
  constexpr bool plain = T == kF32 || T == kF16 || T == kBF16;
  if (a.n_tokens == 1) {
    const unsigned grid = unsigned((a.n_rows + kMvRows - 1) / kMvRows);
    if constexpr (plain) {
      const bool vec = reinterpret_cast<uintptr_t>(a.w) % 16 == 0 && a.row_bytes % 16 == 0 && a.n_cols % 8 == 0 &&
                       reinterpret_cast<uintptr_t>(a.x) % 16 == 0;
      alap_launch(matvec_plain_kernel<T>, grid, kMvThreads, 0, a.stream,
                  a.w, a.row_bytes, a.n_rows, a.n_cols, a.x, a.y, a.beta, vec);
    } else {
      if (T == kQ4_K && xr_pieces_of_32(T, a.n_cols)) {
        launch_xr<kQ4_K32>(a);
      } else if (T == kQ5_K && xr_pieces_of_32(T, a.n_cols)) {
        launch_xr<kQ5_K32>(a);
      } else if (T == kQ6_K && xr_pieces_of_32(T, a.n_cols)) {
        launch_xr<kQ6_K32>(a);
      } else {
        launch_xr<T>(a);
      }
    }
  } else {
    const unsigned gy = unsigned((a.n_rows + kTileRows - 1) / kTileRows);
    if (a.n_tokens <= 16) {
      const dim3 grid(unsigned((a.n_tokens + 15) / 16), gy);
      if constexpr (plain) {
        alap_launch(matmul_plain_tiled_kernel<T, 16>, grid, kTileThreads, 0, a.stream,
                    a.w, a.row_bytes, a.n_rows, a.n_cols, a.x, a.n_tokens, a.y, a.beta);
      } else {
        alap_launch(matmul_q8_tiled_kernel<T, 16>, grid, kTileThreads, 0, a.stream,
                    a.w, a.row_bytes, a.n_rows, a.n_cols, a.xq, a.n_tokens, a.y, a.beta);
      }
    } else {
      const dim3 grid(unsigned((a.n_tokens + 63) / 64), gy);
#if defined(ALAP_GPU_BACKEND_CUDA)
      if constexpr (!plain) {
        if (const int mr = mma_prefill_rows(a.n_rows, a.n_tokens); mr != 0) {
          if (mr == 128) launch_mma<T, 128>(a);
          else if (mr == 64) launch_mma<T, 64>(a);
          else launch_mma<T, 32>(a);
          ALAP_GPU_CHECK_LAUNCH();
          return;
        }
      }
#endif
      if constexpr (plain) {
        alap_launch(matmul_plain_tiled_kernel<T, 64>, grid, kTileThreads, 0, a.stream,
                    a.w, a.row_bytes, a.n_rows, a.n_cols, a.x, a.n_tokens, a.y, a.beta);
      } else {
        alap_launch(matmul_q8_tiled_kernel<T, 64>, grid, kTileThreads, 0, a.stream,
                    a.w, a.row_bytes, a.n_rows, a.n_cols, a.xq, a.n_tokens, a.y, a.beta);
      }
    }
  }
  ALAP_GPU_CHECK_LAUNCH();
}

}  // namespace

extern "C" {

int gpu_matmul_supported(uint32_t dtype) { return wtype_geometry(dtype).block_elems != 0 ? 1 : 0; }

size_t gpu_act_q8_bytes(int n_tokens, int n_cols) {
  if (n_tokens <= 0 || n_cols <= 0 || n_cols % 32 != 0) return 0;
  return act_q8_q_bytes(n_tokens, n_cols) + act_q8_d_bytes(n_tokens, n_cols) + size_t(n_tokens) * (n_cols / 16) * 4;
}

int gpu_quantize_act_q8(const float* d_x, void* d_xq, int n_tokens, int n_cols, void* stream) {
  return gpu_api_call("gpu_quantize_act_q8", [&] {
    if (n_tokens < 0 || n_cols <= 0 || n_cols % 32 != 0)
      throw std::invalid_argument("n_cols must be a positive multiple of 32 and n_tokens >= 0");
    if (n_tokens == 0) return;
    if (d_x == nullptr || d_xq == nullptr) throw std::invalid_argument("d_x or d_xq is null");
    if (reinterpret_cast<uintptr_t>(d_xq) % 16 != 0) throw std::invalid_argument("d_xq is not 16-byte aligned");
    const long long n_blocks = (long long)n_tokens * (n_cols / 32);
    const long long grid = (n_blocks + 3) / 4;
    if (grid > 0x7fffffffLL) throw std::invalid_argument("too many values for one launch");
    alap_launch(quantize_act_q8_kernel, unsigned(grid), 128, 0, static_cast<alap_gpu_stream_t>(stream), d_x, d_xq,
                n_tokens, n_cols);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_matmul(uint32_t dtype, const void* d_w, int n_rows, int n_cols, const float* d_x, const void* d_xq,
               int n_tokens, float* d_y, float beta, void* stream) {
  return gpu_api_call("gpu_matmul", [&] {
    const wtype_geom g = wtype_geometry(dtype);
    if (g.block_elems == 0) throw std::invalid_argument("weight type id " + std::to_string(dtype) + " is not supported");
    if (n_rows <= 0 || n_cols <= 0 || n_tokens < 0)
      throw std::invalid_argument("n_rows and n_cols must be positive, n_tokens >= 0");
    const bool plain = g.block_elems == 1;
    if (!plain && n_cols % g.block_elems != 0)
      throw std::invalid_argument("n_cols " + std::to_string(n_cols) + " is not a multiple of the block of " +
                                  std::to_string(g.block_elems));
    if (n_rows > 65535 * kTileRows) throw std::invalid_argument("n_rows too large for one launch");
    if (n_tokens == 0) return;
    if (d_w == nullptr || d_y == nullptr) throw std::invalid_argument("d_w or d_y is null");
    if (plain && d_x == nullptr) throw std::invalid_argument("d_x is null (F32/F16/BF16 weights read x)");
    if (!plain && d_xq == nullptr) throw std::invalid_argument("d_xq is null (quantised weights read gpu_quantize_act_q8's output)");
    if (reinterpret_cast<uintptr_t>(d_w) % 16 != 0) throw std::invalid_argument("d_w is not 16-byte aligned");
    if (!plain && reinterpret_cast<uintptr_t>(d_xq) % 16 != 0) throw std::invalid_argument("d_xq is not 16-byte aligned");
    const mm_args a{static_cast<const uint8_t*>(d_w), size_t(n_cols / g.block_elems) * g.block_bytes, n_rows, n_cols,
                    n_tokens, d_x, d_xq, d_y, beta, static_cast<alap_gpu_stream_t>(stream)};
    if (!with_wtype(dtype, [&](auto t) { launch_matmul<decltype(t)::value>(a); }))
      throw std::invalid_argument("unsupported weight type");
  });
}

}  // extern "C"

}  // namespace alap::gpu
