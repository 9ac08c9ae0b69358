// Device code of single-query (decode) attention over the KV cache, one body for the three cache
// modes (f16, k8, k8v8), which differ only in how a K row is scored and how a V row is read.
// Not the host API (attn_k8.h), not the launches (attn_k8.hip), not prefill (attn_k8_prefill.hip).
//
// Work split (flash-decoding): grid = (n_kv_head, n_split, ⌈G/GB⌉), kThreads threads. A block takes
// one KV head, all G query heads of its group (GQA: each K and V row is read once for G heads; a
// group larger than the bucket GB is cut into slices, grid z) and one slice of the context, in
// tiles of kTile rows. Per tile:
//   0. the payload of tile t+2 is copied to shared memory (cp.async on sm_80+, 3 stages) while tile
//      t is computed: K lanes of a row copy consecutive 16-byte chunks (a warp reads whole
//      consecutive rows) and read back only what they copied; V is copied by the whole block into
//      a row-major tile [kTile][row + 16 bytes];
//   1. scores: lane c of a row dots its chunk with the query chunk held in registers (k8: 16 int8
//      = 4 dot4 per query head, times d_q·d_k of its 32-block; f16: 8 fp16 FMAs), the lanes of the
//      row add up by a transposed shuffle reduction → s[G][kTile] in shared memory;
//   2. online softmax, 32 lanes per query head: m_new = max(m, max_j s), p_j = exp(s_j − m_new),
//      alpha = exp(m − m_new), l = l·alpha + Σ p_j;
//   3. V, CUDA sm_80+ (ALAP_ATTN_MMA): P·V on the matrix units, mma m16n8k16 with fp32
//      accumulators; warp w owns 32-dim chunks of V; A = P with rows 0-7 the query heads' p in fp16
//      and rows 8-15 the fp16 remainders (p ≈ hi + lo to ~2^-22), B = V (fp16, or int8 turned into
//      fp16 exactly; int8 V: d_v[j] folded into p first). Elsewhere (HIP) scalar fp32 FMAs: thread
//      (vg, vc) owns kVDims output elements of every head, acc = acc·alpha + Σ_{j ≡ vg} p_j·V[j][..].
//      The rescale by alpha is skipped when the running max did not move (alpha = 1 exactly).
// At the end the partial sums over rows are added; a single split writes out = acc / l; several
// write (acc, m, l) to scratch and the last block of each KV head to finish (a counter) merges them.
#pragma once

#include <type_traits>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_port.h"

namespace alap::gpu {

enum class kv_mode { f16, k8, k8v8 };

// Tuning knobs, for measuring variants (docs/kernels/gpu.md); the defaults are the shipped choice:
// tile 32 (tile 64 at 3 blocks/SM was slower); 5 blocks/SM for groups ≤ 4 and head_dim ≤ 128
// (k8/k8v8 3–7% faster than 4 at 32k–128k; 6 was slower), 4 otherwise (5 spills there).
// docs/bench/gpu.md has the runs.
#ifndef ALAP_ATTN_TILE
#define ALAP_ATTN_TILE 32  // rows per tile for head_dim <= 128
#endif
#ifndef ALAP_ATTN_MIN_BLOCKS
#define ALAP_ATTN_MIN_BLOCKS 5  // __launch_bounds__ minimum resident blocks, group ≤ 4, head_dim ≤ 128 (≤ 102 registers)
#endif
#ifndef ALAP_ATTN_MIN_BLOCKS_WIDE
#define ALAP_ATTN_MIN_BLOCKS_WIDE 4  // the same for group 5..8 or head_dim 256 (≤ 128 registers: fewer spills)
#endif

inline constexpr int kThreads = 128;  // per block: 4 waves of 32 or 2 of 64
inline constexpr int kQBlock = 32;    // values per quantisation block (DESIGN.md)
inline constexpr int kVDims = 8;      // V elements per thread: one 16-byte fp16 or 8-byte int8 load
inline constexpr int kSoftLanes = 32; // lanes per query head in the softmax phase (wave32 and wave64)
static_assert(kThreads % 64 == 0, "whole waves on wave64 and wave32 targets");
static_assert(kThreads % kSoftLanes == 0);
static_assert(kAttnMaxHeadDim % kQBlock == 0);

// P·V on the matrix units (mma.sync m16n8k16, fp16 operands, fp32 accumulation) on CUDA sm_80+;
// scalar fp32 FMAs elsewhere (HIP: RDNA3 WMMA is the matching next step). -DALAP_ATTN_MMA=0 forces
// the scalar path on CUDA too, for comparison.
#ifndef ALAP_ATTN_MMA
#if defined(ALAP_GPU_BACKEND_CUDA)
#define ALAP_ATTN_MMA 1
#else
#define ALAP_ATTN_MMA 0
#endif
#endif
inline constexpr bool kAttnMma = ALAP_ATTN_MMA != 0;

#if ALAP_ATTN_MMA
// c[0..3] += A·B: A 16×16 fp16 (row-major fragment a0..a3), B 16×8 fp16 (b0, b1), C 16×8 fp32.
__device__ __forceinline__ void alap_mma_16816(float* c, unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                               unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "ALAP_ATTN_MMA needs sm_80 or newer (mma.sync m16n8k16)"
#endif
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// (x0, x1) as a pair of fp16 (hi) plus the pair of fp16 remainders (lo): hi + lo = x to ~2^-22.
__device__ __forceinline__ void alap_split_half2(float x0, float x1, unsigned& hi, unsigned& lo) {
  const __half2 h = __floats2half2_rn(x0, x1);
  const float2 hf = __half22float2(h);
  const __half2 l = __floats2half2_rn(x0 - hf.x, x1 - hf.y);
  hi = *reinterpret_cast<const unsigned*>(&h);
  lo = *reinterpret_cast<const unsigned*>(&l);
}
// Byte t of int8 words a and b as an fp16 pair (a_t low, b_t high), exactly: 0x64XX is 1024 + XX.
__device__ __forceinline__ void alap_i8pair_to_h2(unsigned a, unsigned b, unsigned* h) {
  const unsigned xa = a ^ 0x80808080u, xb = b ^ 0x80808080u;  // b + 128, unsigned
  const unsigned la = __byte_perm(xa, 0x64646464u, 0x4240u), ha = __byte_perm(xa, 0x64646464u, 0x4341u);
  const unsigned lb = __byte_perm(xb, 0x64646464u, 0x4240u), hb = __byte_perm(xb, 0x64646464u, 0x4341u);
  const unsigned r[4] = {__byte_perm(la, lb, 0x5410u), __byte_perm(ha, hb, 0x5410u), __byte_perm(la, lb, 0x7632u),
                         __byte_perm(ha, hb, 0x7632u)};
  const __half2 off = __floats2half2_rn(1152.0f, 1152.0f);
#pragma unroll
  for (int t = 0; t < 4; ++t) {
    const __half2 v = __hsub2(*reinterpret_cast<const __half2*>(&r[t]), off);
    h[t] = *reinterpret_cast<const unsigned*>(&v);
  }
}
#endif

// Minimum resident blocks of an instantiation (__launch_bounds__): more query heads per block or a
// wider head need more registers (queries, accumulators), which a tighter bound would spill.
template <int HDB, int GB>
inline constexpr int attn_min_blocks = GB <= 4 && HDB <= 128 ? ALAP_ATTN_MIN_BLOCKS : ALAP_ATTN_MIN_BLOCKS_WIDE;

// Tiles of one instantiation: HDB is the head_dim bucket (head_dim ≤ HDB; lanes past head_dim idle),
// GB the group bucket (G ≤ GB query heads per KV head).
template <kv_mode M, int HDB, int GB>
struct decode_tiles {
  static constexpr bool k_packed = M != kv_mode::f16;
  static constexpr bool v_packed = M == kv_mode::k8v8;
  static constexpr int kTile = HDB <= 128 ? ALAP_ATTN_TILE : 32;  // rows per tile (shared memory bounds it)
  static constexpr int k_vals = k_packed ? 16 : 8;        // K values per 16-byte load
  static constexpr int k_lanes = HDB / k_vals;            // lanes per K row
  static constexpr int k_rows = kThreads / k_lanes;       // K rows per pass of the block
  static constexpr int k_passes = kTile / k_rows;         // 16-byte K loads per thread per tile
  static constexpr int v_lanes = HDB / kVDims;            // threads per V row
  static constexpr int v_groups = kThreads / v_lanes;     // V rows in flight per pass
  static constexpr int v_rows = kTile / v_groups;         // V rows per thread per tile
  static constexpr int kStages = 3;                       // tiles in shared memory: 2 in flight, 1 in use
  static constexpr int v_bytes = v_packed ? 8 : 16;       // bytes of one V read (scalar path)
  static constexpr int v_esize = v_packed ? 1 : 2;        // bytes of one V element
  // V tile in shared memory, [kTile][v_stride] bytes, copied by the whole block in 16-byte chunks;
  // the 16-byte pad makes the mma path's reads (rows 2c, 2c+1, 2c+8, 2c+9) conflict-free.
  static constexpr int v_row_bytes = HDB * v_esize;
  static constexpr int v_stride = v_row_bytes + 16;
  static constexpr int v_cpr = v_row_bytes / 16;          // 16-byte chunks per V row
  static constexpr int v_copies = kTile * v_cpr / kThreads;  // chunks per thread per tile
  // mma path (P·V on the matrix units): warp w owns 32-dim chunks of V; with fewer chunks than warps,
  // warps also split the tile's 16-row k-steps.
  static constexpr int n_chunks = HDB / 32;
  static constexpr int n_warps = kThreads / 32;
  static constexpr int cpw = n_chunks >= n_warps ? n_chunks / n_warps : 1;  // chunks per warp
  static constexpr int rsplit = n_chunks >= n_warps ? 1 : n_warps / n_chunks;  // warps per chunk
  static constexpr int ksteps = kTile / 16;
  static constexpr int vd_count = kAttnMma ? cpw * (kTile / 32) : v_rows;  // V scales held per thread
  static constexpr int red_rows = kAttnMma ? rsplit * GB : v_groups;
  // Dynamic shared memory: per stage, this thread's K chunks [k_passes][kThreads] (consecutive
  // threads, consecutive 16 bytes: no bank conflicts), then the V tile.
  static constexpr size_t stage_bytes = size_t(kThreads) * k_passes * 16 + size_t(kTile) * v_stride;
  static constexpr size_t smem_bytes = kStages * stage_bytes;
  static_assert(kTile * v_cpr % kThreads == 0 && v_copies >= 1);
  static_assert(!kAttnMma || (ksteps % rsplit == 0 && kTile % 32 == 0 && GB <= 8));
  static_assert(HDB % kQBlock == 0 && HDB <= kAttnMaxHeadDim);
  static_assert(GB <= kAttnMaxGroup);
  static_assert(k_lanes >= 2 && k_lanes <= 32 && (k_lanes & (k_lanes - 1)) == 0, "shuffle groups");
  static_assert(kThreads % k_lanes == 0 && kTile % k_rows == 0 && k_passes >= 1);
  static_assert(kThreads % v_lanes == 0 && kTile % v_groups == 0 && v_rows >= 1);
  static_assert(kTile % kSoftLanes == 0, "the softmax phase gives each lane whole rows");
};

// What a block needs besides the public parameters.
struct attn_kernel_args {
  attn_decode_params p;
  int group;           // G = n_head / n_kv_head
  int n_split;         // splits actually launched
  int split_len;       // positions per split, a multiple of the tile (the last may be shorter)
  float* part_o;       // [n_head][kAttnMaxSplit][head_dim] fp32, unnormalised
  float* part_m;       // [n_head][kAttnMaxSplit] running max
  float* part_l;       // [n_head][kAttnMaxSplit] running sum of exp
  unsigned* counters;  // [n_kv_head][⌈G/GB⌉] splits finished, reset to 0 by the last
};

// The four int8 lanes of a word as floats, exactly, without the quarter-rate integer-to-float
// conversion: byte b ^ 0x80 = b + 128 placed in the mantissa of 2^23 gives 2^23 + 128 + b.
__device__ __forceinline__ void alap_i8x4_to_f32(int w, float* f) {
  const unsigned x = static_cast<unsigned>(w) ^ 0x80808080u;
#pragma unroll
  for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(__byte_perm(x, 0x4B000000u, 0x7540u | unsigned(i))) - 8388736.0f;
}

template <kv_mode M, int HDB, int GB>
__device__ void attn_decode_body(const attn_kernel_args& a) {
  using T = decode_tiles<M, HDB, GB>;
  constexpr int kTile = T::kTile;
  __shared__ float s[GB][kTile + 8];              // scores, then p (padded: conflict-free mma reads)
  __shared__ float m_sh[GB], l_sh[GB], alpha_sh[GB];
  __shared__ float red[T::red_rows][HDB];         // reduction of the partial sums over rows
  __shared__ float w_sh[GB][kAttnMaxSplit];       // combine weights
  __shared__ int last_sh;
  __shared__ float4 q_sh4[GB][HDB / 4];             // the group's query: fp32, or int8 in the first bytes
  __shared__ float dq_sh[GB][HDB / kQBlock];
  float (*q_sh)[HDB] = reinterpret_cast<float (*)[HDB]>(&q_sh4[0][0]);

  const int kv = blockIdx.x, split = blockIdx.y, tid = threadIdx.x;
  const int hd = a.p.head_dim, nb = hd / kQBlock;
  // Query heads h0 .. h0+G-1 of this block: the group, or its slice z when the group exceeds GB.
  const int G = min(GB, a.group - int(blockIdx.z) * GB);
  const int h0 = kv * a.group + int(blockIdx.z) * GB;
  const int begin = split * a.split_len;
  const int end = min(a.p.n_ctx, begin + a.split_len);
  const size_t kv_row0 = size_t(kv) * a.p.capacity;

  // K-phase role: chunk kc (k_vals values from kc·k_vals) of rows kr, kr + k_rows, ...
  const int kc = tid % T::k_lanes, kr = tid / T::k_lanes;
  const bool k_active = kc * T::k_vals < hd;
  // V-phase role, scalar path: elements vc·kVDims.. of rows vg, vg + v_groups, ...
  const int vc = tid % T::v_lanes, vg = tid / T::v_lanes;
  const bool v_active = vc * kVDims < hd;
  // mma path: warp w, lane (gid, tq) = (lane / 4, lane % 4) in the fragment layouts; chunk c of the
  // warp is V dims 32·chunk(c) ..; rsel picks the warp's k-steps when warps share a chunk.
  const int warp = tid / 32, lane32 = tid % 32, gid = lane32 / 4, tq = lane32 % 4;
  const auto chunk_of = [&](int c) { return T::n_chunks >= T::n_warps ? warp + c * T::n_warps : warp % T::n_chunks; };
  const int rsel = T::n_chunks >= T::n_warps ? 0 : warp / T::n_chunks;
  (void)chunk_of;
  (void)rsel;
  (void)gid;
  (void)tq;
  (void)vc;
  (void)vg;
  (void)v_active;

  for (int g = tid; g < GB; g += kThreads) {
    m_sh[g] = -INFINITY;
    l_sh[g] = 0.0f;
  }
  // Accumulators: scalar path acc[g][e] (head g, element e); mma path acc[c][t][i], chunk c, n-tile
  // t, fragment register i (0,1: head gid, dims 4·(2tq+i)+t of the chunk, fp16 hi part of p; 2,3: the
  // same for the lo part).
  constexpr int acc_a = kAttnMma ? T::cpw : GB, acc_b = kAttnMma ? 4 : kVDims, acc_c = kAttnMma ? 4 : 1;
  float acc[acc_a][acc_b][acc_c];
#pragma unroll
  for (int i = 0; i < acc_a; ++i)
#pragma unroll
    for (int j = 0; j < acc_b; ++j)
#pragma unroll
      for (int k = 0; k < acc_c; ++k) acc[i][j][k] = 0.0f;
  __syncthreads();

  // Pipeline: the payload of tile t+2 is copied to shared memory (cp.async, no registers held)
  // while tile t is computed; the scales (1/16 of the bytes) are loaded into registers a tile ahead.
  extern __shared__ int4 stage_sh[];
  const auto k_slot = [&](int stage, int i) {
    return reinterpret_cast<char*>(stage_sh) + stage * T::stage_bytes + (size_t(i) * kThreads + tid) * 16;
  };
  const auto v_tile = [&](int stage) {
    return reinterpret_cast<char*>(stage_sh) + stage * T::stage_bytes + size_t(T::k_passes) * kThreads * 16;
  };
  const auto issue = [&](int tile, int stage) {
    if (tile < end) {
#pragma unroll
      for (int i = 0; i < T::k_passes; ++i) {
        const int row = tile + kr + i * T::k_rows;
        const bool valid = k_active && row < end;
        const size_t off = (kv_row0 + (valid ? row : tile)) * hd;
        if constexpr (T::k_packed) {
          alap_cp_async<16>(k_slot(stage, i), a.p.k_q + off + kc * 16, valid);
        } else {
          alap_cp_async<16>(k_slot(stage, i), a.p.k_f16 + off + kc * 8, valid);
        }
      }
      // V: the whole block copies the tile, row-major, 16-byte chunks (zeros past the slice).
#pragma unroll
      for (int i = 0; i < T::v_copies; ++i) {
        const int idx = tid + i * kThreads, r = idx / T::v_cpr, col = idx % T::v_cpr;
        const int row = tile + r;
        const bool valid = col * 16 < hd * T::v_esize && row < end;
        const char* src = (T::v_packed ? reinterpret_cast<const char*>(a.p.v_q) : reinterpret_cast<const char*>(a.p.v)) +
                          (kv_row0 + (valid ? row : tile)) * hd * T::v_esize + (valid ? col * 16 : 0);
        alap_cp_async<16>(v_tile(stage) + r * T::v_stride + col * 16, src, valid);
      }
    }
    alap_cp_async_commit();  // an empty group past the end keeps the wait count uniform
  };
  const auto load_scales = [&](int tile, float* kd, float* vd) {
#pragma unroll
    for (int i = 0; i < T::k_passes; ++i) {
      const int row = tile + kr + i * T::k_rows;
      kd[i] = T::k_packed && k_active && row < end ? alap_half_to_float(a.p.k_d[(kv_row0 + row) * nb + kc / 2]) : 1.0f;
    }
    if constexpr (kAttnMma) {
      // lane l holds the scale of rows l, l + 32, ... of the tile for each of the warp's chunks.
#pragma unroll
      for (int c = 0; c < T::cpw; ++c)
#pragma unroll
        for (int j = 0; j < T::kTile / 32; ++j) {
          const int row = tile + lane32 + 32 * j, ch = chunk_of(c);
          vd[c * (T::kTile / 32) + j] =
              T::v_packed && ch < nb && row < end ? alap_half_to_float(a.p.v_d[(kv_row0 + row) * nb + ch]) : 1.0f;
        }
    } else {
#pragma unroll
      for (int r = 0; r < T::v_rows; ++r) {
        const int row = tile + vg + r * T::v_groups;
        vd[r] = T::v_packed && v_active && row < end
                    ? alap_half_to_float(a.p.v_d[(kv_row0 + row) * nb + vc * kVDims / kQBlock])
                    : 1.0f;
      }
    }
  };
  static_assert(T::kStages == 3, "the wait below keeps two tiles in flight");
  issue(begin, 0);
  issue(begin + kTile, 1);
  float kd[T::k_passes], vd[T::vd_count];
  load_scales(begin, kd, vd);

  // The query of the group, once per block while the first tiles are in flight. k8: quantised with
  // the cache's rule (d = max|x|/127 per 32-block, q = round(x/d), d kept at fp16 precision), one
  // 32-lane group per block of 32 values; f16: copied. Then each lane keeps its chunk of every head
  // of the group in registers.
  {
    const int lane = tid % kQBlock;
    for (int blk = tid / kQBlock; blk < G * nb; blk += kThreads / kQBlock) {
      const int g = blk / nb, b = blk % nb;
      const float x = a.p.q[(size_t(h0) + g) * hd + b * kQBlock + lane];
      if constexpr (T::k_packed) {
        float amax = fabsf(x);
#pragma unroll
        for (int off = kQBlock / 2; off > 0; off >>= 1) amax = fmaxf(amax, alap_shfl_xor(amax, off, kQBlock));
        const float d = amax / 127.0f;
        const int qv = d > 0.0f ? static_cast<int>(fminf(fmaxf(roundf(x / d), -127.0f), 127.0f)) : 0;
        reinterpret_cast<int8_t*>(&q_sh[g][0])[b * kQBlock + lane] = static_cast<int8_t>(qv);
        if (lane == 0) dq_sh[g][b] = alap_half_to_float(alap_float_to_half(d));
      } else {
        q_sh[g][b * kQBlock + lane] = x;
      }
    }
  }
  __syncthreads();
  constexpr int q_words = T::k_packed ? 4 : 8;
  using q_word = std::conditional_t<T::k_packed, int, float>;
  q_word qr[GB][q_words];
  float dq[GB];
#pragma unroll
  for (int g = 0; g < GB; ++g) {
    const bool valid = g < G && k_active;
    if constexpr (T::k_packed) {
      const int4 w = valid ? reinterpret_cast<const int4*>(&q_sh[g][0])[kc] : make_int4(0, 0, 0, 0);
      qr[g][0] = w.x;
      qr[g][1] = w.y;
      qr[g][2] = w.z;
      qr[g][3] = w.w;
      dq[g] = valid ? dq_sh[g][kc / 2] : 0.0f;
    } else {
#pragma unroll
      for (int i = 0; i < 8; ++i) qr[g][i] = valid ? q_sh[g][kc * 8 + i] : 0.0f;
      dq[g] = 1.0f;
    }
  }

  int stage = 0;
  for (int tile = begin; tile < end; tile += kTile, stage = stage == T::kStages - 1 ? 0 : stage + 1) {
    float kd_next[T::k_passes], vd_next[T::vd_count];
    load_scales(tile + kTile, kd_next, vd_next);
    // The stage of tile t+2 held tile t-1, which this thread (its only reader) has finished.
    issue(tile + 2 * kTile, stage == 0 ? 2 : stage - 1);
    alap_cp_async_wait<2>();  // this thread's copies of tile t have landed
    int4 kw[T::k_passes];
#pragma unroll
    for (int i = 0; i < T::k_passes; ++i) kw[i] = *reinterpret_cast<const int4*>(k_slot(stage, i));

    // 1. scores of the tile's rows against every query head of the group.
#pragma unroll
    for (int i = 0; i < T::k_passes; ++i) {
      const int w[4] = {kw[i].x, kw[i].y, kw[i].z, kw[i].w};
      float part[GB];
      if constexpr (T::k_packed) {
#pragma unroll
        for (int g = 0; g < GB; ++g) {
          int isum = 0;
#pragma unroll
          for (int j = 0; j < 4; ++j) isum = alap_dot4(w[j], qr[g][j], isum);
          part[g] = static_cast<float>(isum) * (dq[g] * kd[i]);
        }
      } else {
        float kf[8];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          kf[2 * j] = alap_half_to_float(static_cast<uint16_t>(static_cast<uint32_t>(w[j]) & 0xffffu));
          kf[2 * j + 1] = alap_half_to_float(static_cast<uint16_t>(static_cast<uint32_t>(w[j]) >> 16));
        }
#pragma unroll
        for (int g = 0; g < GB; ++g) {
          float sum = 0.0f;
#pragma unroll
          for (int j = 0; j < 8; ++j) sum = fmaf(qr[g][j], kf[j], sum);
          part[g] = sum;
        }
      }
      // Transposed reduction over the k_lanes lanes of the row: at each level a lane keeps half of
      // its heads and sends the other half to its partner, so 8 lanes reduce 4 heads with 4 shuffles
      // instead of 12; once one head is left the rest is a plain butterfly. Lane kc ends holding
      // heads hbase .. hbase+n-1 (n = 1 unless GB > k_lanes), the same in every lane of a
      // butterfly group; the group's lane with those bits zero writes.
      int hbase = 0, wmask = 0;
      constexpr int kLevels = T::k_lanes == 2 ? 1 : T::k_lanes == 4 ? 2 : T::k_lanes == 8 ? 3 : T::k_lanes == 16 ? 4 : 5;
      constexpr int kLeft = GB >> (kLevels < 3 ? kLevels : 3) > 0 ? (GB >> (kLevels < 3 ? kLevels : 3)) : 1;
#pragma unroll
      for (int lvl = 0; lvl < kLevels; ++lvl) {
        const int m = T::k_lanes >> (lvl + 1);
        const int n = GB >> lvl;  // heads held before this level (GB is 4 or 8)
        if (n > 1) {
          const bool upper = (kc & m) != 0;
          const int half = n / 2;
#pragma unroll
          for (int u = 0; u < half; ++u) {
            const float send = upper ? part[u] : part[u + half];
            const float keep = upper ? part[u + half] : part[u];
            part[u] = keep + alap_shfl_xor(send, m, T::k_lanes);
          }
          hbase += upper ? half : 0;
        } else {
          part[0] += alap_shfl_xor(part[0], m, T::k_lanes);
          wmask |= m;
        }
      }
      const int r = kr + i * T::k_rows;
      if ((kc & wmask) == 0) {
#pragma unroll
        for (int j = 0; j < kLeft; ++j)
          if (hbase + j < G) s[hbase + j][r] = tile + r < end ? part[j] * a.p.scale : -INFINITY;
      }
    }
    __syncthreads();

    // 2. online softmax statistics, kSoftLanes lanes per query head; s becomes p.
    {
      const int lane = tid % kSoftLanes;
      for (int g = tid / kSoftLanes; g < G; g += kThreads / kSoftLanes) {
        float sv[kTile / kSoftLanes];
        float tmax = -INFINITY;
#pragma unroll
        for (int j = 0; j < kTile / kSoftLanes; ++j) tmax = fmaxf(tmax, sv[j] = s[g][lane + j * kSoftLanes]);
#pragma unroll
        for (int off = kSoftLanes / 2; off > 0; off >>= 1) tmax = fmaxf(tmax, alap_shfl_xor(tmax, off, kSoftLanes));
        const float m_old = m_sh[g];
        const float m_new = fmaxf(m_old, tmax);  // finite: the tile has at least one position
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < kTile / kSoftLanes; ++j) {
          const float p = expf(sv[j] - m_new);  // exp(-inf) = 0 past the slice
          s[g][lane + j * kSoftLanes] = p;
          sum += p;
        }
#pragma unroll
        for (int off = kSoftLanes / 2; off > 0; off >>= 1) sum += alap_shfl_xor(sum, off, kSoftLanes);
        alap_syncwarp();  // every lane has read m_sh[g] before lane 0 rewrites it
        if (lane == 0) {
          const float al = expf(m_old - m_new);  // 0 on the first tile (m_old = -inf)
          alpha_sh[g] = al;
          l_sh[g] = l_sh[g] * al + sum;
          m_sh[g] = m_new;
        }
      }
    }
    __syncthreads();

    // 3. V accumulation: rescale by alpha (skipped when the max did not move), add Σ_j p_j·V[j][d]
    // (V is zero past the slice, p too). The V tile was copied by the whole block: visible after
    // this thread's wait above and the barrier after the scores.
    const char* vt = v_tile(stage);
#if ALAP_ATTN_MMA
    {
      // O_chunk[head][dim] += P[head][rows]·V[rows][dim], 16 rows per mma: A = P (rows gid: p of head
      // gid rounded to fp16; rows gid+8: the remainder, so P keeps ~22 bits), B = V (n index gid ↔
      // dims 4·gid .. 4·gid+3 of the chunk, one per n-tile t). k8v8: d_v[row] is folded into P.
      const bool h_ok = gid < G;
      const float al = h_ok ? alpha_sh[gid] : 1.0f;
#pragma unroll
      for (int c = 0; c < T::cpw; ++c) {
        const int ch = chunk_of(c);
        if (ch * 32 >= hd) continue;  // uniform across the warp
        if (al != 1.0f) {
#pragma unroll
          for (int t = 0; t < 4; ++t)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[c][t][i] *= al;
        }
        const char* vc_base = vt + (ch * 32 + gid * 4) * T::v_esize;
#pragma unroll
        for (int ks = rsel; ks < T::ksteps; ks += T::rsplit) {
          const int r0 = ks * 16 + 2 * tq;
          float2 pa = h_ok ? *reinterpret_cast<const float2*>(&s[h_ok ? gid : 0][r0]) : make_float2(0.0f, 0.0f);
          float2 pb = h_ok ? *reinterpret_cast<const float2*>(&s[h_ok ? gid : 0][r0 + 8]) : make_float2(0.0f, 0.0f);
          if constexpr (T::v_packed) {
            const float v_s = vd[c * (T::kTile / 32) + ks / 2];
            const int l0 = r0 % 32;
            pa.x *= __shfl_sync(0xffffffffu, v_s, l0);
            pa.y *= __shfl_sync(0xffffffffu, v_s, l0 + 1);
            pb.x *= __shfl_sync(0xffffffffu, v_s, l0 + 8);
            pb.y *= __shfl_sync(0xffffffffu, v_s, l0 + 9);
          }
          unsigned a0, a1, a2, a3;
          alap_split_half2(pa.x, pa.y, a0, a1);
          alap_split_half2(pb.x, pb.y, a2, a3);
          unsigned b0[4], b1[4];
          if constexpr (T::v_packed) {
            const unsigned* w = reinterpret_cast<const unsigned*>(vc_base + r0 * T::v_stride);
            const unsigned w0 = w[0], w1 = *reinterpret_cast<const unsigned*>(vc_base + (r0 + 1) * T::v_stride);
            const unsigned w8 = *reinterpret_cast<const unsigned*>(vc_base + (r0 + 8) * T::v_stride);
            const unsigned w9 = *reinterpret_cast<const unsigned*>(vc_base + (r0 + 9) * T::v_stride);
            alap_i8pair_to_h2(w0, w1, b0);
            alap_i8pair_to_h2(w8, w9, b1);
          } else {
            const uint2 x0 = *reinterpret_cast<const uint2*>(vc_base + r0 * T::v_stride);
            const uint2 x1 = *reinterpret_cast<const uint2*>(vc_base + (r0 + 1) * T::v_stride);
            const uint2 x8 = *reinterpret_cast<const uint2*>(vc_base + (r0 + 8) * T::v_stride);
            const uint2 x9 = *reinterpret_cast<const uint2*>(vc_base + (r0 + 9) * T::v_stride);
            b0[0] = __byte_perm(x0.x, x1.x, 0x5410u);
            b0[1] = __byte_perm(x0.x, x1.x, 0x7632u);
            b0[2] = __byte_perm(x0.y, x1.y, 0x5410u);
            b0[3] = __byte_perm(x0.y, x1.y, 0x7632u);
            b1[0] = __byte_perm(x8.x, x9.x, 0x5410u);
            b1[1] = __byte_perm(x8.x, x9.x, 0x7632u);
            b1[2] = __byte_perm(x8.y, x9.y, 0x5410u);
            b1[3] = __byte_perm(x8.y, x9.y, 0x7632u);
          }
#pragma unroll
          for (int t = 0; t < 4; ++t) alap_mma_16816(acc[c][t], a0, a1, a2, a3, b0[t], b1[t]);
        }
      }
    }
#else
#pragma unroll
    for (int g = 0; g < GB; ++g) {
      const float al = g < G ? alpha_sh[g] : 0.0f;
      if (al != 1.0f) {
#pragma unroll
        for (int e = 0; e < kVDims; ++e) acc[g][e][0] *= al;
      }
    }
    if (v_active) {
#pragma unroll
      for (int r = 0; r < T::v_rows; ++r) {
        const int j = vg + r * T::v_groups;
        const char* src = vt + j * T::v_stride + vc * kVDims * T::v_esize;
        float vf[kVDims];
        if constexpr (T::v_packed) {
          const int2 w = *reinterpret_cast<const int2*>(src);
          alap_i8x4_to_f32(w.x, vf);
          alap_i8x4_to_f32(w.y, vf + 4);
        } else {
          const int4 w4 = *reinterpret_cast<const int4*>(src);
          const int w[4] = {w4.x, w4.y, w4.z, w4.w};
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            vf[2 * q] = alap_half_to_float(static_cast<uint16_t>(static_cast<uint32_t>(w[q]) & 0xffffu));
            vf[2 * q + 1] = alap_half_to_float(static_cast<uint16_t>(static_cast<uint32_t>(w[q]) >> 16));
          }
        }
#pragma unroll
        for (int g = 0; g < GB; ++g) {
          if (g < G) {
            const float p = s[g][j] * vd[r];
#pragma unroll
            for (int e = 0; e < kVDims; ++e) acc[g][e][0] = fmaf(p, vf[e], acc[g][e][0]);
          }
        }
      }
    }
#endif
#pragma unroll
    for (int i = 0; i < T::k_passes; ++i) kd[i] = kd_next[i];
#pragma unroll
    for (int r = 0; r < T::vd_count; ++r) vd[r] = vd_next[r];
    __syncthreads();  // s is rewritten by the next tile
  }
  alap_cp_async_wait<0>();  // no copy outlives the block

  // Add the partial sums over rows, then write the result (one split) or the partial (several).
  const bool single = a.n_split == 1;
#if ALAP_ATTN_MMA
  if (gid < G) {
#pragma unroll
    for (int c = 0; c < T::cpw; ++c) {
      const int ch = chunk_of(c);
      if (ch * 32 >= hd) continue;
#pragma unroll
      for (int t = 0; t < 4; ++t)
#pragma unroll
        for (int i = 0; i < 2; ++i) red[rsel * GB + gid][ch * 32 + 4 * (2 * tq + i) + t] = acc[c][t][i] + acc[c][t][i + 2];
    }
  }
  __syncthreads();
  for (int i = tid; i < G * hd; i += kThreads) {
    const int g = i / hd, d = i % hd, h = h0 + g;
    float o = 0.0f;
#pragma unroll
    for (int r = 0; r < T::rsplit; ++r) o += red[r * GB + g][d];
    if (single) {
      a.p.out[size_t(h) * hd + d] = l_sh[g] > 0.0f ? o / l_sh[g] : 0.0f;
    } else {
      a.part_o[(size_t(h) * kAttnMaxSplit + split) * hd + d] = o;
    }
  }
  if (!single && tid < G) {
    a.part_m[size_t(h0 + tid) * kAttnMaxSplit + split] = m_sh[tid];
    a.part_l[size_t(h0 + tid) * kAttnMaxSplit + split] = l_sh[tid];
  }
#else
#pragma unroll
  for (int g = 0; g < GB; ++g) {
    if (g >= G) break;  // uniform across the block
    if (v_active) {
#pragma unroll
      for (int e = 0; e < kVDims; ++e) red[vg][vc * kVDims + e] = acc[g][e][0];
    }
    __syncthreads();
    const int h = h0 + g;
    for (int d = tid; d < hd; d += kThreads) {
      float o = 0.0f;
#pragma unroll
      for (int r = 0; r < T::v_groups; ++r) o += red[r][d];
      if (single) {
        a.p.out[size_t(h) * hd + d] = l_sh[g] > 0.0f ? o / l_sh[g] : 0.0f;
      } else {
        a.part_o[(size_t(h) * kAttnMaxSplit + split) * hd + d] = o;
      }
    }
    if (!single && tid == 0) {
      a.part_m[size_t(h) * kAttnMaxSplit + split] = m_sh[g];
      a.part_l[size_t(h) * kAttnMaxSplit + split] = l_sh[g];
    }
    __syncthreads();  // red is rewritten for the next head
  }
#endif
  if (single) return;

  // The last block of this KV head to finish merges the splits:
  //   out = Σ_s o_s·e^(m_s−M) / Σ_s l_s·e^(m_s−M),  M = max_s m_s.
  const int counter = kv * int(gridDim.z) + int(blockIdx.z);
  __threadfence();  // this block's partials are visible device-wide before it is counted
  if (tid == 0) {
    const unsigned done = atomicAdd(a.counters + counter, 1u);
    last_sh = done == unsigned(a.n_split - 1);
  }
  __syncthreads();
  if (!last_sh) return;
  __threadfence();
  for (int g = tid / kSoftLanes; g < G; g += kThreads / kSoftLanes) {
    const int h = h0 + g, lane = tid % kSoftLanes;
    const float* pm = a.part_m + size_t(h) * kAttnMaxSplit;
    const float* pl = a.part_l + size_t(h) * kAttnMaxSplit;
    constexpr int kPer = kAttnMaxSplit / kSoftLanes;  // splits per lane
    float mv[kPer], lv[kPer];
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int sp = lane + k * kSoftLanes;
      mv[k] = sp < a.n_split ? alap_load_l2(pm + sp) : -INFINITY;
      lv[k] = sp < a.n_split ? alap_load_l2(pl + sp) : 0.0f;
      mx = fmaxf(mx, mv[k]);
    }
#pragma unroll
    for (int off = kSoftLanes / 2; off > 0; off >>= 1) mx = fmaxf(mx, alap_shfl_xor(mx, off, kSoftLanes));
    float lsum = 0.0f;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      mv[k] = expf(mv[k] - mx);  // every split has at least one row; 0 past n_split
      lsum += lv[k] * mv[k];
    }
#pragma unroll
    for (int off = kSoftLanes / 2; off > 0; off >>= 1) lsum += alap_shfl_xor(lsum, off, kSoftLanes);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int sp = lane + k * kSoftLanes;
      if (sp < a.n_split) w_sh[g][sp] = mv[k] / lsum;
    }
  }
  __syncthreads();
  // Four output elements per thread and step; kUnroll splits' loads in flight (L2 latency bound).
  constexpr int kUnroll = 16;
  for (int i = tid * 4; i < G * hd; i += kThreads * 4) {
    const int g = i / hd, d = i % hd, h = h0 + g;
    const float* o = a.part_o + size_t(h) * kAttnMaxSplit * hd + d;
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int sp0 = 0; sp0 < a.n_split; sp0 += kUnroll) {
      float4 ov[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        ov[u] = sp0 + u < a.n_split ? alap_load_l2_f4(o + size_t(sp0 + u) * hd) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const float w = sp0 + u < a.n_split ? w_sh[g][sp0 + u] : 0.0f;
        sum.x = fmaf(ov[u].x, w, sum.x);
        sum.y = fmaf(ov[u].y, w, sum.y);
        sum.z = fmaf(ov[u].z, w, sum.z);
        sum.w = fmaf(ov[u].w, w, sum.w);
      }
    }
    *reinterpret_cast<float4*>(a.p.out + size_t(h) * hd + d) = sum;
  }
  if (tid == 0) a.counters[counter] = 0u;  // ready for the next run
}

}  // namespace alap::gpu
