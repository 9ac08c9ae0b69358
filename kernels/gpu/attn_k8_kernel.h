// Device code of single-query (decode) attention over the KV cache: two bodies, each one template
// for the three cache modes (f16, k8, k8v8). attn_decode_mma_body (end of the file; CUDA sm_80+,
// head_dim 64 or 128) puts the scores and P·V on the matrix units with warp-owned tiles;
// attn_decode_body (below; HIP, and CUDA for the other head dims) is the scalar/dot4 body.
// Not the host API (attn_k8.h), not the launches (attn_k8.hip), not prefill (attn_k8_prefill.hip).
//
// attn_decode_body. Work split (flash-decoding): grid = (n_kv_head, n_split, ⌈G/GB⌉), kThreads
// threads. A block takes one KV head, all G query heads of its group (GQA: each K and V row is read once for G heads; a
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
// Whichever block writes out also writes its int8 blocks when out_q8 asks (attn_quantize_out).
#pragma once

#include <type_traits>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_pdl.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/matmul_kernel.h"

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

// How the scalar body keeps tiles in flight. With an asynchronous copy (CUDA cp.async) the payload
// of tile t+2 is copied to shared memory while tile t is computed (3 stages). Without one (HIP: a
// copy is a load that the wave waits for before its store to shared memory) the payload of tile t+1
// waits in registers instead: loaded before tile t is computed, stored after it (2 stages), so a
// wave computes while its loads are in flight rather than stalling on each tile's loads (on the
// H200 with -DALAP_GPU_PLAIN_COPY: docs/bench/gpu.md "The HIP path of decode attention (session
// 29)").
// -DALAP_ATTN_REG_STAGE=0/1 overrides the choice, for measuring.
#ifndef ALAP_ATTN_REG_STAGE
#define ALAP_ATTN_REG_STAGE (!ALAP_GPU_ASYNC_COPY)
#endif
inline constexpr bool kAttnRegStage = ALAP_ATTN_REG_STAGE != 0;

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
  static constexpr int kStages = kAttnRegStage ? 2 : 3;   // tiles in shared memory (kAttnRegStage above)
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
  int pdl;             // 1: launched as a programmatic dependent (matrix-unit kernels order their prologue by it)
};

// The rows a call attends. By default the launcher's n_ctx. With p.pos_dev set (a decode step
// replayed from one graph at many positions), n_ctx = *pos_dev + 1 read on the device: the
// launcher cut the splits (split_len) for its n_ctx, a lower bound, and launched gridDim.y of
// them, so the rows are cut as a launch given the device's n_ctx by value cuts them while that
// stays within attn_decode_ctx_limit (the same result bit for bit); the splits past the last with
// rows have none. Clamped into [1, split_len · gridDim.y] (and the capacity): a position outside
// the range the launch serves can give a wrong result, never a read or write out of bounds.
__device__ __forceinline__ int attn_ctx_of(const attn_kernel_args& a, int pos) {
  const int hi = min(a.p.capacity, a.split_len * int(gridDim.y));
  return pos < 0 ? 1 : (pos >= hi ? hi : pos + 1);
}

// The four int8 lanes of a word as floats, exactly, without the quarter-rate integer-to-float
// conversion: byte b ^ 0x80 = b + 128 placed in the mantissa of 2^23 gives 2^23 + 128 + b.
__device__ __forceinline__ void alap_i8x4_to_f32(int w, float* f) {
  const unsigned x = static_cast<unsigned>(w) ^ 0x80808080u;
#pragma unroll
  for (int i = 0; i < 4; ++i) f[i] = __uint_as_float(__byte_perm(x, 0x4B000000u, 0x7540u | unsigned(i))) - 8388736.0f;
}

// The attention output quantised for the Wo product (attn_decode_params::out_q8), with the rule
// and lane layout of matmul_kernel.h's quantize_act_block (so the bytes gpu_quantize_act_q8 would
// write): N values to a lane, i (a multiple of N) the first one's index in out
// ([n_head·head_dim]). Every lane of the warp calls it, valid or not; no-op when out_q8 is null
// (uniform).
template <int N>
__device__ __forceinline__ void attn_quantize_out(const attn_decode_params& p, const float (&v)[N], bool valid,
                                                  int i) {
  if (p.out_q8 == nullptr) return;
  quantize_act_block<N>(v, valid, act_q8_layout(p.out_q8, 1, p.n_head * p.head_dim), i);
}

// Flash-decoding merge, shared by the decode bodies: the block has written its partial (o, m, l)
// for query heads h0..h0+G-1 (m in natural-log units); the last block of this KV head (slice) to
// finish merges all splits into out. Every thread of the block calls it.
template <int GB, int HDB>
__device__ void attn_merge_splits(const attn_kernel_args& a, int n_split, int kv, int G, int h0,
                                  float (*w_sh)[kAttnMaxSplit], int& last_sh) {
  const int tid = threadIdx.x, hd = a.p.head_dim, nthreads = blockDim.x;
  // The last block of this KV head to finish merges the splits:
  //   out = Σ_s o_s·e^(m_s−M) / Σ_s l_s·e^(m_s−M),  M = max_s m_s.
  const int counter = kv * int(gridDim.z) + int(blockIdx.z);
  __threadfence();  // this thread's partials are visible device-wide ...
  __syncthreads();  // ... and every thread's, before the block is counted
  if (tid == 0) {
    const unsigned done = atomicAdd(a.counters + counter, 1u);
    last_sh = done == unsigned(n_split - 1);
  }
  __syncthreads();
  if (!last_sh) return;
  __threadfence();
  for (int g = tid / kSoftLanes; g < G; g += nthreads / kSoftLanes) {
    const int h = h0 + g, lane = tid % kSoftLanes;
    const float* pm = a.part_m + size_t(h) * kAttnMaxSplit;
    const float* pl = a.part_l + size_t(h) * kAttnMaxSplit;
    constexpr int kPer = kAttnMaxSplit / kSoftLanes;  // splits per lane
    float mv[kPer], lv[kPer];
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const int sp = lane + k * kSoftLanes;
      mv[k] = sp < n_split ? alap_load_l2(pm + sp) : -INFINITY;
      lv[k] = sp < n_split ? alap_load_l2(pl + sp) : 0.0f;
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
      if (sp < n_split) w_sh[g][sp] = mv[k] / lsum;
    }
  }
  __syncthreads();
  // Four output elements per thread and step; kUnroll splits' loads in flight (L2 latency bound).
  // The bound is the block's, not the thread's, so that every lane takes part in out_q8's shuffles.
  constexpr int kUnroll = 16;
  for (int i0 = 0; i0 < G * hd; i0 += nthreads * 4) {
    const int i = i0 + tid * 4;
    const bool valid = i < G * hd;
    const int g = valid ? i / hd : 0, d = valid ? i % hd : 0, h = h0 + g;
    const float* o = a.part_o + size_t(h) * kAttnMaxSplit * hd + d;
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int sp0 = 0; valid && sp0 < n_split; sp0 += kUnroll) {
      float4 ov[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u)
        ov[u] = sp0 + u < n_split ? alap_load_l2_f4(o + size_t(sp0 + u) * hd) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const float w = sp0 + u < n_split ? w_sh[g][sp0 + u] : 0.0f;
        sum.x = fmaf(ov[u].x, w, sum.x);
        sum.y = fmaf(ov[u].y, w, sum.y);
        sum.z = fmaf(ov[u].z, w, sum.z);
        sum.w = fmaf(ov[u].w, w, sum.w);
      }
    }
    if (valid) *reinterpret_cast<float4*>(a.p.out + size_t(h) * hd + d) = sum;
    const float v4[4] = {sum.x, sum.y, sum.z, sum.w};
    attn_quantize_out<4>(a.p, v4, valid, h * hd + d);
  }
  if (tid == 0) a.counters[counter] = 0u;  // ready for the next run
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
  // The rows (attn_ctx_of); with pos_dev a split past the last with rows leaves before any barrier.
  const int n_ctx = a.p.pos_dev != nullptr ? attn_ctx_of(a, *a.p.pos_dev) : a.p.n_ctx;
  const int n_split = a.p.pos_dev != nullptr ? (n_ctx + a.split_len - 1) / a.split_len : a.n_split;
  if (split >= n_split) return;
  const int begin = split * a.split_len;
  const int end = min(n_ctx, begin + a.split_len);
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

  // Pipeline (kAttnRegStage above): the payload of a later tile is copied to shared memory while
  // tile t is computed; the scales (1/16 of the bytes) are loaded into registers a tile ahead. A
  // stage holds this thread's K chunks [k_passes][kThreads] at copy_offset(i), then the V tile.
  extern __shared__ int4 stage_sh[];
  constexpr size_t v_off = size_t(T::k_passes) * kThreads * 16;  // the V tile's offset in a stage
  const auto stage_base = [&](int stage) { return reinterpret_cast<char*>(stage_sh) + stage * T::stage_bytes; };
  // The 16-byte copies of one tile's payload, c < n_copies: this thread's K chunks first (read back
  // by this thread only), then its share of the V tile (row-major, 16-byte chunks, read by the whole
  // block); copy c lands at copy_offset(c) of a stage. fn(c, source, valid): a copy past the slice or
  // past head_dim is invalid, and its source is then a valid chunk of the cache (the slice's last row,
  // the row's first chunk), so that a load of it needs no branch (register staging).
  constexpr int n_copies = T::k_passes + T::v_copies;
  const auto copy_offset = [&](int c) -> size_t {
    if (c < T::k_passes) return (size_t(c) * kThreads + tid) * 16;
    const int idx = tid + (c - T::k_passes) * kThreads;
    return v_off + size_t(idx / T::v_cpr) * T::v_stride + (idx % T::v_cpr) * 16;
  };
  const auto for_copies = [&](int tile, auto&& fn) {
#pragma unroll
    for (int i = 0; i < T::k_passes; ++i) {
      const int row = tile + kr + i * T::k_rows;
      const bool valid = k_active && row < end;
      const size_t off = (kv_row0 + min(row, end - 1)) * hd;
      if constexpr (T::k_packed) {
        fn(i, a.p.k_q + off + (k_active ? kc * 16 : 0), valid);
      } else {
        fn(i, a.p.k_f16 + off + (k_active ? kc * 8 : 0), valid);
      }
    }
#pragma unroll
    for (int i = 0; i < T::v_copies; ++i) {
      const int idx = tid + i * kThreads, r = idx / T::v_cpr, col = idx % T::v_cpr;
      const int row = tile + r;
      const bool col_ok = col * 16 < hd * T::v_esize, valid = col_ok && row < end;
      const char* src = (T::v_packed ? reinterpret_cast<const char*>(a.p.v_q) : reinterpret_cast<const char*>(a.p.v)) +
                        (kv_row0 + min(row, end - 1)) * hd * T::v_esize + (col_ok ? col * 16 : 0);
      fn(T::k_passes + i, src, valid);
    }
  };
  // Asynchronous copy: tile `tile` into `stage`, invalid chunks as zeros (an empty group past the end
  // keeps the wait count uniform).
  const auto issue = [&](int tile, int stage) {
    if (tile < end) {
      for_copies(tile, [&](int c, const void* src, bool valid) {
        alap_cp_async<16>(stage_base(stage) + copy_offset(c), src, valid);
      });
    }
    alap_cp_async_commit();
  };
  // Register staging: tile `tile` loaded into `staged`, later stored to a stage. Every load is made,
  // past the end too (it then reads the slice's last row again, from cache): a load under a branch
  // made AMD's compiler wait for all loads at the branch's end (the wait counts of both paths merged),
  // the payload in flight included. Invalid chunks hold real cache values, never read as such: K
  // chunks past head_dim meet zero query values, rows past the slice get score -inf (K) and p = 0
  // (V), and V chunks past head_dim belong to threads that sum nothing.
  int4 staged[kAttnRegStage ? n_copies : 1];
  (void)staged;
  const auto load_staged = [&](int tile) {
    for_copies(tile, [&](int c, const void* src, bool) { staged[c] = *static_cast<const int4*>(src); });
  };
  const auto store_staged = [&](int stage) {
#pragma unroll
    for (int c = 0; c < n_copies; ++c) *reinterpret_cast<int4*>(stage_base(stage) + copy_offset(c)) = staged[c];
  };
  // The scales of a tile as fp16 bits (1.0 where the mode has none), converted where they are used: a
  // conversion at the load waits for the load (gfx1030 assembly: each of a tile's six scale loads
  // waited on its own, one DRAM round trip after another, at the top of every tile). Every load is
  // made, in bounds: rows past the slice read the slice's last row and lanes past head_dim the row's
  // last block; their products are zero or masked (zero query values, score -inf, p = 0).
  const auto load_scales = [&](int tile, uint16_t* kd, uint16_t* vd) {
    constexpr uint16_t one = 0x3C00;
#pragma unroll
    for (int i = 0; i < T::k_passes; ++i) {
      const int row = tile + kr + i * T::k_rows;
      kd[i] = T::k_packed ? a.p.k_d[(kv_row0 + min(row, end - 1)) * nb + min(kc / 2, nb - 1)] : one;
    }
    if constexpr (kAttnMma) {
      // lane l holds the scale of rows l, l + 32, ... of the tile for each of the warp's chunks.
#pragma unroll
      for (int c = 0; c < T::cpw; ++c)
#pragma unroll
        for (int j = 0; j < T::kTile / 32; ++j) {
          const int row = tile + lane32 + 32 * j, ch = chunk_of(c);
          vd[c * (T::kTile / 32) + j] =
              T::v_packed ? a.p.v_d[(kv_row0 + min(row, end - 1)) * nb + min(ch, nb - 1)] : one;
        }
    } else {
#pragma unroll
      for (int r = 0; r < T::v_rows; ++r) {
        const int row = tile + vg + r * T::v_groups;
        vd[r] = T::v_packed ? a.p.v_d[(kv_row0 + min(row, end - 1)) * nb + min(vc * kVDims / kQBlock, nb - 1)] : one;
      }
    }
  };
  if constexpr (kAttnRegStage) {
    load_staged(begin);
    store_staged(0);  // visible to the block after the barrier that follows the query
  } else {
    static_assert(kAttnRegStage || T::kStages == 3, "the wait below keeps two tiles in flight");
    issue(begin, 0);
    issue(begin + kTile, 1);
  }
  uint16_t kd[T::k_passes], vd[T::vd_count];
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
  // Tile begin+1's loads after the query's (AMD waits for loads in the order they were issued).
  if constexpr (kAttnRegStage) load_staged(begin + kTile);
  alap_sync_lds();
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
    uint16_t kd_next[T::k_passes], vd_next[T::vd_count];
    load_scales(tile + kTile, kd_next, vd_next);
    if constexpr (kAttnRegStage) {
      // Tile t+1, loaded while tile t-1 was computed, goes to the stage that held tile t-1 (every
      // thread passed the barrier that ended it; the barriers of this tile make its V visible before
      // tile t+1 reads it); then tile t+2's loads go out and wait in registers while tile t runs.
      // Past the end the stage is written and never read (no branch: see load_staged).
      store_staged(stage ^ 1);
      load_staged(tile + 2 * kTile);
    } else {
      // The stage of tile t+2 held tile t-1, which this thread (its only reader) has finished.
      issue(tile + 2 * kTile, stage == 0 ? 2 : stage - 1);
      alap_cp_async_wait<2>();  // this thread's copies of tile t have landed
    }
    int4 kw[T::k_passes];
#pragma unroll
    for (int i = 0; i < T::k_passes; ++i) kw[i] = *reinterpret_cast<const int4*>(stage_base(stage) + copy_offset(i));

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
          part[g] = static_cast<float>(isum) * (dq[g] * alap_half_to_float(kd[i]));
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
    alap_sync_lds();

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
    alap_sync_lds();

    // 3. V accumulation: rescale by alpha (skipped when the max did not move), add Σ_j p_j·V[j][d]
    // (p is zero past the slice; V there is zeros, or with register staging the last row again). The
    // V tile was copied by the whole block: visible after this thread's wait above and the barrier
    // after the scores.
    const char* vt = stage_base(stage) + v_off;
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
            const float v_s = alap_half_to_float(vd[c * (T::kTile / 32) + ks / 2]);
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
            const float p = s[g][j] * alap_half_to_float(vd[r]);
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
    alap_sync_lds();  // s is rewritten by the next tile
  }
  alap_cp_async_wait<0>();  // no copy outlives the block

  // Add the partial sums over rows, then write the result (one split) or the partial (several).
  const bool single = n_split == 1;
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
    if (single) {  // whole warps take part (G·hd is a multiple of 32): out_q8's shuffles
      const float v1[1] = {l_sh[g] > 0.0f ? o / l_sh[g] : 0.0f};
      a.p.out[size_t(h) * hd + d] = v1[0];
      attn_quantize_out<1>(a.p, v1, true, h * hd + d);
    } else {
      a.part_o[(size_t(h) * kAttnMaxSplit + split) * hd + d] = o;
    }
  }
  if (!single && tid < G) {
    a.part_m[size_t(h0 + tid) * kAttnMaxSplit + split] = m_sh[tid];
    a.part_l[size_t(h0 + tid) * kAttnMaxSplit + split] = l_sh[tid];
  }
#else
  // Every g < GB unrolled, with no early exit: where the compiler could not unroll the loop it
  // indexed acc at run time, and AMD's compiler then kept all of acc in scratch memory (gfx1030:
  // every tile's rescale and V sum went through private-memory loads and stores).
#pragma unroll
  for (int g = 0; g < GB; ++g) {
    if (g < G) {  // uniform across the block
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
        if (single) {  // whole 32-lane groups take part (hd is a multiple of 32): out_q8's shuffles
          const float v1[1] = {l_sh[g] > 0.0f ? o / l_sh[g] : 0.0f};
          a.p.out[size_t(h) * hd + d] = v1[0];
          attn_quantize_out<1>(a.p, v1, true, h * hd + d);
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
  }
#endif
  if (single) return;
  attn_merge_splits<GB, HDB>(a, n_split, kv, G, h0, w_sh, last_sh);
}


#if ALAP_ATTN_MMA
// ---------------------------------------------------------------------------------------------
// Decode on the matrix units, warp-owned tiles (CUDA sm_80+; head_dim 64 or 128, groups ≤ 8).
//
// Each warp of the block streams its own 16-row tiles of the block's slice (tiles warp, warp + W,
// ...) through a private ring of kMmaStages shared-memory stages filled by cp.async (16-byte
// copies of whole rows, so the warp's 32 lanes read 512 contiguous bytes per copy instruction);
// no block barrier until the end. Per tile, with lane = (g, t) = (lane / 4, lane % 4):
//   scores  S[hr][row] on mma: k8 m16n8k32 s8×s8→s32, one mma per 32-value quantisation block, so
//           each int32 result is one block sum, scaled by d_q·d_k (its accumulator starts at
//           0x4B400000, so the int→float conversion is one FADD); f16 m16n8k16 with the query
//           split into fp16 hi + lo. A = query rows hr: 0-7 → heads 0,0,1,1,2,2,3,3 (each head
//           twice), rows 8-15 → heads 4..7 (GB 8) or the lo half of the query (f16, GB 4); B = K
//           rows via ldmatrix. Lane (g, t) ends with head hr(g) [and hr(g+8)] at rows 2t, 2t+1,
//           8+2t, 9+2t, already in log2 units (scale·log2 e is folded into the query).
//   softmax per warp: tile max by 2 shuffles; the running max m moves only when a score exceeds
//           m + 8 (then acc and l are rescaled: rare), so p = 2^(s-m) ≤ 256.
//   P·V     on mma m16n8k16 as Oᵀ = Vᵀ·Pᵀ: A = Vᵀ (16 dims × 16 rows) by ldmatrix.trans (int8 V:
//           byte pairs, widened to fp16 exactly, 0x64XX - 1152), B = Pᵀ whose 8 columns are the 4
//           heads × (fp16 hi, fp16 lo) of p: lane g even supplies hi, odd lo, which is exactly the
//           lane that holds that head's scores. k8v8: p·d_v[row][block] per 32-dim block, its hi/lo
//           built in fp16 arithmetic from p's hi/lo and the fp16 d_v pairs (3 instructions a word).
// At the end the warps' (acc, m, l) are merged in shared memory, then as in the scalar body.

#ifndef ALAP_ATTN_STAGES
#define ALAP_ATTN_STAGES 3  // tiles in each warp's ring: 2 in flight while one is computed
#endif
#ifndef ALAP_ATTN_MMA_MIN_BLOCKS
#define ALAP_ATTN_MMA_MIN_BLOCKS 1  // __launch_bounds__ of the mma kernels (shared memory allows one block)
#endif
#ifndef ALAP_ATTN_RESCALE
#define ALAP_ATTN_RESCALE 8.0f  // log2 headroom before the running max moves
#endif
#ifndef ALAP_ATTN_MMA_WARPS
#define ALAP_ATTN_MMA_WARPS 8  // warps per block of the mma kernels (4 was 6-13% slower at 16k-128k)
#endif
#ifndef ALAP_ATTN_CLUSTER
#define ALAP_ATTN_CLUSTER 0  // 1: the splits of a KV head run as one thread-block cluster and merge on chip
#endif
// Diagnostics for timing pieces by difference (wrong results; never shipped): 1 = the kernel returns
// at once, 2 = no split merge (partials written, no count, no merge), 3 = no tiles streamed,
// 4 = correct results plus %globaltimer stamps of each block's phases (alap_attn_stamp; the bench's
// --stamps prints them).
#ifndef ALAP_ATTN_DIAG
#define ALAP_ATTN_DIAG 0
#endif
// Prologue order of the matrix-unit kernels: 1 (default) = the query's loads before the first tiles
// (except under PDL, where tiles that need no wait go first); 0 = round 4's order (tiles first).
#ifndef ALAP_ATTN_QFIRST
#define ALAP_ATTN_QFIRST 1
#endif
// Round 6: under PDL, tiles issued before griddepcontrol.wait (1 .. stages - 1; the rest right after
// the query's loads). 0 = all of the ring's first tiles (round 5). 1, the default: after the K row
// store 0.7-1.1 µs faster at 16k-32k than round 5's order and 0.5-0.9 µs faster than a plain launch
// there (at 1k-4k still 0.1-0.5 µs slower than plain; docs/bench/gpu.md "Round 6 runs").
#ifndef ALAP_ATTN_PDL_PRE
#define ALAP_ATTN_PDL_PRE 1
#endif
// Round 6: the warps' merge behind one block barrier instead of three: each warp leaves its unscaled
// (o, l) at the start of its own ring (free once its copies have landed) and m in mw_sh as soon as it
// is done, and the sum over the warps rescales (0 = round 5's merge: barrier, max, scaled o, barrier).
#ifndef ALAP_ATTN_WMERGE
#define ALAP_ATTN_WMERGE 1
#endif
// Session 62: the L2 sector prefetch the tiles' cp.async copies ask for (cp.async's .L2::128B /
// .L2::256B qualifier: L2 fetches that many bytes around each copy's 16 bytes); 0 = none. 128, the
// default: every mode's decode attention 0.7-1.3% faster at 16k and 32k on an H100 (three rounds of
// each build in one call; 256: 0.2-1.2%), the same results (docs/bench/gpu.md "Session 62").
#ifndef ALAP_ATTN_L2PF
#define ALAP_ATTN_L2PF 128
#endif
inline constexpr int kMmaWarps = ALAP_ATTN_MMA_WARPS;
inline constexpr int kMmaThreads = 32 * kMmaWarps;
inline constexpr int kMmaRows = 16;  // rows per warp tile

__device__ __forceinline__ unsigned alap_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
#if ALAP_ATTN_L2PF == 256
#define ALAP_CP_L2 ".L2::256B"
#elif ALAP_ATTN_L2PF == 128
#define ALAP_CP_L2 ".L2::128B"
#else
#define ALAP_CP_L2 ""
#endif
template <int Bytes>
__device__ __forceinline__ void alap_cp_async_raw(unsigned dst, const void* src) {
  if constexpr (Bytes == 16) {
    asm volatile("cp.async.cg.shared.global" ALAP_CP_L2 " [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global" ALAP_CP_L2 " [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(Bytes)
                 : "memory");
  }
}
#undef ALAP_CP_L2
__device__ __forceinline__ void alap_ldsm_x4(unsigned addr, unsigned* r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void alap_ldsm_x4_trans(unsigned addr, unsigned* r) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
// d = a·b + c: A 16×32 s8 (a0..a3), B 32×8 s8 (b0, b1), C/D 16×8 s32.
__device__ __forceinline__ void alap_mma_16832_s8(int* d, const unsigned* a, unsigned b0, unsigned b1, int c) {
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "r"(c));
}
// d = a·b + c, fp16 operands, fp32 accumulators (d may alias c).
__device__ __forceinline__ void alap_mma_16816_c(float* d, const unsigned* a, unsigned b0, unsigned b1, const float* c) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]),
                 "f"(c[3]));
}
// Thread-block clusters (sm_90): blocks in this block's cluster (1 when launched without one), this
// block's rank in it, a cluster-wide barrier with release/acquire of shared memory, and loads from
// another block's shared memory (distributed shared memory).
__device__ __forceinline__ unsigned alap_cluster_size() {
  unsigned n = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
#endif
  return n;
}
__device__ __forceinline__ unsigned alap_cluster_rank() {
  unsigned r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}
__device__ __forceinline__ void alap_cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ unsigned alap_cluster_map(unsigned smem_addr, unsigned rank) {
  unsigned r = smem_addr;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(smem_addr), "r"(rank));
#endif
  return r;
}
__device__ __forceinline__ float alap_cluster_load(unsigned cluster_addr) {
  float x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(x) : "r"(cluster_addr) : "memory");
#else
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(x) : "r"(cluster_addr) : "memory");
#endif
  return x;
}
// DIAG 4: thread 0 writes the global timer (ns) into slot i of its block's kAttnStampSlots stamps, kept
// in an unused corner of the scratch: the partial slots of splits 64..127 of the last query head (32·hd
// 8-byte words; blocks past them stamp nothing). Slots 0-7: the phases below; 8: %smid + 1; 9: %nsmid;
// 10-17: each warp's end of streaming (its lane 0, alap_attn_stamp_warp); 18-20: warp 0 starts the
// tile at 1/4, 1/2, 3/4 of its tiles. Round 11: the SM map.
__device__ __forceinline__ void alap_attn_stamp_put([[maybe_unused]] const attn_kernel_args& a, [[maybe_unused]] int hd,
                                                    [[maybe_unused]] int i, [[maybe_unused]] unsigned long long v) {
#if ALAP_ATTN_DIAG == 4
  unsigned long long* st = reinterpret_cast<unsigned long long*>(a.part_o + (size_t(a.p.n_head - 1) * kAttnMaxSplit + 64) * hd);
  const size_t blk = (size_t(blockIdx.z) * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if ((blk + 1) * kAttnStampSlots <= size_t(32) * hd) st[blk * kAttnStampSlots + i] = v;
#endif
}
__device__ __forceinline__ unsigned long long alap_global_ns() {
  unsigned long long t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}
__device__ __forceinline__ void alap_attn_stamp([[maybe_unused]] const attn_kernel_args& a, [[maybe_unused]] int hd,
                                                [[maybe_unused]] int i, [[maybe_unused]] unsigned long long value = 1ull) {
#if ALAP_ATTN_DIAG == 4
  if (threadIdx.x != 0) return;
  alap_attn_stamp_put(a, hd, i, value ? alap_global_ns() : 0ull);
  if (i == 0) {
    unsigned sm = 0, nsm = 0;
    asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
    asm volatile("mov.u32 %0, %%nsmid;\n" : "=r"(nsm));
    alap_attn_stamp_put(a, hd, 8, sm + 1ull);
    alap_attn_stamp_put(a, hd, 9, nsm);
  }
#endif
}
__device__ __forceinline__ void alap_attn_stamp_warp([[maybe_unused]] const attn_kernel_args& a, [[maybe_unused]] int hd,
                                                     [[maybe_unused]] int warp) {
#if ALAP_ATTN_DIAG == 4
  if (threadIdx.x % 32 == 0 && warp < 8) alap_attn_stamp_put(a, hd, 10 + warp, alap_global_ns());
#endif
}
__device__ __forceinline__ float alap_exp2(float x) {  // 2^x, ex2.approx (2 ulp); 2^-inf = 0
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ unsigned alap_h2_bits(__half2 h) { return *reinterpret_cast<const unsigned*>(&h); }
// The fp16 pair of (x0, x1) (lo = false) or of its remainder x - fp16(x) (lo = true): a lane of a
// B fragment gives one of the two halves of p, and the mma adds them.
__device__ __forceinline__ unsigned alap_p_part(float x0, float x1, float lo) {
  const __half2 h = __floats2half2_rn(x0, x1);
  const float2 f = __half22float2(h);
  return alap_h2_bits(__floats2half2_rn(fmaf(-lo, f.x, x0), fmaf(-lo, f.y, x1)));
}
// fp16 pairs as 32-bit words: a·b and a·b + c, each rounded once (subnormals kept).
__device__ __forceinline__ unsigned alap_hmul2_u(unsigned a, unsigned b) {
  unsigned d;
  asm("mul.rn.f16x2 %0, %1, %2;\n" : "=r"(d) : "r"(a), "r"(b));
  return d;
}
__device__ __forceinline__ unsigned alap_hfma2_u(unsigned a, unsigned b, unsigned c) {
  unsigned d;
  asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}
// Bytes (0,2) (sel 0x4240) or (1,3) (sel 0x4341) of an int8 word as an fp16 pair, exactly.
__device__ __forceinline__ unsigned alap_i8_to_h2(unsigned x80, unsigned sel) {
  const unsigned h = __byte_perm(x80, 0x64646464u, sel);  // 1024 + (b + 128)
  return alap_h2_bits(__hsub2(*reinterpret_cast<const __half2*>(&h), __floats2half2_rn(1152.0f, 1152.0f)));
}

template <kv_mode M, int HD, int GB>
struct mma_tiles {
  static constexpr bool k_packed = M != kv_mode::f16;
  static constexpr bool v_packed = M == kv_mode::k8v8;
  static constexpr int nb = HD / kQBlock;
  static constexpr int k_row = HD * (k_packed ? 1 : 2), v_row = HD * (v_packed ? 1 : 2);  // bytes
  static constexpr int k_stride = k_row + 16, v_stride = v_row + 16;  // +16: conflict-free ldmatrix
  static constexpr int sc_row = nb * 2;                                // bytes of one row's scales
  static constexpr int k_off = 0, v_off = kMmaRows * k_stride;
  static constexpr int kd_off = v_off + kMmaRows * v_stride;
  static constexpr int vd_off = kd_off + (k_packed ? kMmaRows * sc_row : 0);
  static constexpr int stage_bytes = (vd_off + (v_packed ? kMmaRows * sc_row : 0) + 15) / 16 * 16;
  static constexpr int kStages = ALAP_ATTN_STAGES;
  static constexpr int warp_bytes = kStages * stage_bytes;
  static constexpr int k_copies = k_row / 32, v_copies = v_row / 32;  // 16-byte copies per lane per tile
  static constexpr int nh = GB / 4;        // head halves: rows 0-7 and 8-15 of the score mma
  static constexpr int m_tiles = HD / 16;  // 16-dim tiles of Vᵀ
  static constexpr int q_regs = k_packed ? nb * 4 : (HD / 16) * 4 * (GB == 8 ? 2 : 1);
  static constexpr int red_bytes = kMmaWarps * GB * (HD + 2) * 4;
  // After the warps' partials: the block's (o [GB][HD], m [GB], l [GB]) for the cluster merge.
  static constexpr int blk_off = (red_bytes + 15) / 16 * 16;
  static constexpr int end_bytes = blk_off + GB * (HD + 2) * 4;
  static constexpr size_t smem_bytes = size_t(kMmaWarps) * warp_bytes > size_t(end_bytes) ? size_t(kMmaWarps) * warp_bytes
                                                                                          : size_t(end_bytes);
  static_assert(HD == 64 || HD == 128, "the mma body takes head_dim 64 or 128");
  static_assert(GB == 4 || GB == 8);
  static_assert(kStages >= 2);
  static_assert(k_row % 64 == 0 && k_copies >= 1 && v_copies >= 1);
  static_assert(size_t(kMmaWarps) * warp_bytes <= 220 * 1024, "the rings must fit one block's shared memory");
  static_assert(32 % (k_row / 16) == 0 && 32 % (v_row / 16) == 0, "a copy instruction covers whole rows");
};

template <kv_mode M, int HD, int GB>
__device__ void attn_decode_mma_body(const attn_kernel_args& a) {
  using T = mma_tiles<M, HD, GB>;
  constexpr int nb = T::nb, NH = T::nh, MT = T::m_tiles;
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr float kMagicF = 12582912.0f;  // 0x4B400000: 1.5·2^23, its low mantissa bits hold an int
  constexpr int kMagicI = 0x4B400000;
  __shared__ int last_sh;
  __shared__ float mw_sh[kMmaWarps][GB];
  __shared__ __align__(16) float q_sh[GB][HD];   // fp32 query (scaled, f16) or int8 (first bytes)
  __shared__ float dq_sh[GB][HD / kQBlock];
  extern __shared__ int4 stage_sh[];

  if constexpr (ALAP_ATTN_DIAG == 1) return;
  const int kv = blockIdx.x, split = blockIdx.y, tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32, g = lane / 4, tq = lane % 4;
  const int G = min(GB, a.group - int(blockIdx.z) * GB);
  const int h0 = kv * a.group + int(blockIdx.z) * GB;
  // With pos_dev the position's load goes out here and is waited for only after the first tiles
  // below the launch's n_ctx − 1 (a lower bound of the device's) are issued: until then n_ctx and
  // end are the launch's, after it the device's (attn_ctx_of), and a split past the last with rows
  // leaves. The launch's split_len holds for both.
  const bool dev_pos = a.p.pos_dev != nullptr;
  const int pos_raw = dev_pos ? *a.p.pos_dev : 0;
  int n_ctx = a.p.n_ctx, n_split = a.n_split;
  const int begin = split * a.split_len;
  int end = ALAP_ATTN_DIAG == 3 ? begin : min(n_ctx, begin + a.split_len);
  alap_attn_stamp(a, HD, 0);  // block start
  const size_t kv_row0 = size_t(kv) * a.p.capacity;
  const float qscale = a.p.scale * kLog2e;

  // This warp's ring and its copies. A tile is 16 consecutive rows: contiguous bytes in global
  // memory; lane copies 16-byte chunks lane, lane + 32, ... into rows padded by 16 bytes.
  char* ring = reinterpret_cast<char*>(stage_sh) + warp * T::warp_bytes;
  const unsigned ring_s = alap_smem_addr(ring);
  const char* kbase = (T::k_packed ? reinterpret_cast<const char*>(a.p.k_q) : reinterpret_cast<const char*>(a.p.k_f16)) +
                      kv_row0 * T::k_row;
  const char* vbase = (T::v_packed ? reinterpret_cast<const char*>(a.p.v_q) : reinterpret_cast<const char*>(a.p.v)) +
                      kv_row0 * T::v_row;
  const char* kdbase = T::k_packed ? reinterpret_cast<const char*>(a.p.k_d) + kv_row0 * T::sc_row : nullptr;
  const char* vdbase = T::v_packed ? reinterpret_cast<const char*>(a.p.v_d) + kv_row0 * T::sc_row : nullptr;
  // Chunk lane of a tile sits at row lane / cpr, column lane % cpr; chunk lane + 32i, 32/cpr·i rows
  // further: immediate offsets from one pointer per array on full tiles.
  constexpr int kcpr = T::k_row / 16, vcpr = T::v_row / 16;
  const unsigned k_dst = T::k_off + (lane / kcpr) * T::k_stride + (lane % kcpr) * 16;
  const unsigned v_dst = T::v_off + (lane / vcpr) * T::v_stride + (lane % vcpr) * 16;
  const auto issue = [&](int tile, int stage) {
    if (tile < end) {
      const unsigned st = ring_s + stage * T::stage_bytes;
      const int last = end - 1 - tile;  // rows past it are clamped to it (finite data, masked later)
      if (last >= kMmaRows - 1) {
        const char* ks = kbase + size_t(tile) * T::k_row + lane * 16;
        const char* vs = vbase + size_t(tile) * T::v_row + lane * 16;
#pragma unroll
        for (int i = 0; i < T::k_copies; ++i)
          alap_cp_async_raw<16>(st + k_dst + i * (32 / kcpr) * T::k_stride, ks + i * 512);
#pragma unroll
        for (int i = 0; i < T::v_copies; ++i)
          alap_cp_async_raw<16>(st + v_dst + i * (32 / vcpr) * T::v_stride, vs + i * 512);
      } else {
#pragma unroll
        for (int i = 0; i < T::k_copies; ++i) {
          const int row = i * (32 / kcpr) + lane / kcpr, r = min(row, last);
          alap_cp_async_raw<16>(st + k_dst + i * (32 / kcpr) * T::k_stride,
                                kbase + size_t(tile + r) * T::k_row + (lane % kcpr) * 16);
        }
#pragma unroll
        for (int i = 0; i < T::v_copies; ++i) {
          const int row = i * (32 / vcpr) + lane / vcpr, r = min(row, last);
          alap_cp_async_raw<16>(st + v_dst + i * (32 / vcpr) * T::v_stride,
                                vbase + size_t(tile + r) * T::v_row + (lane % vcpr) * 16);
        }
      }
      if constexpr (T::k_packed) {
        const int row = lane % 16, r = min(row, last);
        if (lane < 16) {
          alap_cp_async_raw<T::sc_row>(st + T::kd_off + row * T::sc_row, kdbase + size_t(tile + r) * T::sc_row);
        } else if (T::v_packed) {
          alap_cp_async_raw<T::sc_row>(st + T::vd_off + row * T::sc_row, vdbase + size_t(tile + r) * T::sc_row);
        }
      }
    }
    alap_cp_async_commit();  // an empty group past the end keeps the wait count uniform
  };

  // The first tiles are in flight while the query is prepared, and, under programmatic dependent
  // launch, while the previous kernel finishes: that kernel may write q and the newest row
  // (n_ctx − 1), so a warp whose first tiles reach that row issues them after the wait instead.
  constexpr int kStep = kMmaRows * kMmaWarps;
  int t_issue = begin + warp * kMmaRows;
  // (Against the split's end, not end: with pos_dev, tiles between the launch's n_ctx and the
  // device's are rows too, and a tile skipped here would be skipped for good.)
  const bool early = min(t_issue + (T::kStages - 2) * kStep + kMmaRows - 1, begin + a.split_len - 1) < n_ctx - 1;
  const auto fill_ring = [&](int from, int to) {  // stages from..to-1 of the ring's first fill
#pragma unroll
    for (int s = 0; s < T::kStages - 1; ++s)
      if (s >= from && s < to) {
        issue(t_issue, s);
        t_issue += kStep;
      }
  };
  // Round 5: the query's loads go out before the first tiles (ALAP_ATTN_QFIRST 1), so they do not
  // queue behind 2 tiles per warp (13-17 MB over the GPU) and every warp can use its first tile as
  // soon as it lands. Under PDL the tiles that do not need the wait still go first: they overlap the
  // previous kernel, which matters more.
  // Round 6: under PDL only ALAP_ATTN_PDL_PRE tiles go before the wait, the rest after the query's
  // loads (the whole first fill before them delayed the query, as the plain launch's did in round 4).
  const bool tiles_first = early && (ALAP_ATTN_QFIRST == 0 || a.pdl != 0);
  constexpr int kPre = ALAP_ATTN_PDL_PRE > 0 && ALAP_ATTN_PDL_PRE < T::kStages - 1 ? ALAP_ATTN_PDL_PRE : T::kStages - 1;
  if (tiles_first) fill_ring(0, kPre);
  if (dev_pos) {  // the device's rows from here (the tiles issued lie below both bounds)
    n_ctx = attn_ctx_of(a, pos_raw);
    n_split = (n_ctx + a.split_len - 1) / a.split_len;
    if (split >= n_split) {  // no rows (none was issued: its tiles start at or past n_ctx)
      alap_cp_async_wait<0>();
      return;
    }
    end = ALAP_ATTN_DIAG == 3 ? begin : min(n_ctx, begin + a.split_len);
  }
  alap_pdl_wait();     // q, the newest row, out and scratch are ours from here (gpu_pdl.h)
  alap_pdl_release();  // the next kernel may start (it waits for our end; session 5 measured later releases: no gain)

  // Query: quantised with the cache's rule (k8) or scaled by scale·log2 e (f16), zero past G. All of
  // a warp's loads first (one round trip), then the remaining tiles, then the blocks.
  constexpr int kQBlocks = GB * nb, kQPer = (kQBlocks + kMmaWarps - 1) / kMmaWarps;
  float xq[kQPer];
#pragma unroll
  for (int k = 0; k < kQPer; ++k) {
    const int blk = warp + k * kMmaWarps, hh = blk / nb, b = blk % nb;
    xq[k] = blk < kQBlocks && hh < G ? a.p.q[(size_t(h0) + hh) * HD + b * kQBlock + lane] : 0.0f;
  }
  if (!tiles_first) fill_ring(0, T::kStages - 1);
  else if (kPre < T::kStages - 1) fill_ring(kPre, T::kStages - 1);
#pragma unroll
  for (int k = 0; k < kQPer; ++k) {
    const int blk = warp + k * kMmaWarps, hh = blk / nb, b = blk % nb;
    if (blk >= kQBlocks) break;
    const float x = xq[k];
    if constexpr (T::k_packed) {
      float amax = fabsf(x);
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
      const float d = amax / 127.0f;
      const int qv = d > 0.0f ? static_cast<int>(fminf(fmaxf(roundf(x / d), -127.0f), 127.0f)) : 0;
      reinterpret_cast<int8_t*>(&q_sh[hh][0])[b * kQBlock + lane] = static_cast<int8_t>(qv);
      if (lane == 0) dq_sh[hh][b] = alap_half_to_float(alap_float_to_half(d)) * qscale;
    } else {
      q_sh[hh][b * kQBlock + lane] = x * qscale;
    }
  }
  __syncthreads();
  alap_attn_stamp(a, HD, 1);  // query ready
  alap_attn_stamp(a, HD, 2, 0ull);
  // Head of score-mma row r: rows 0-7 → heads 0,0,1,1,2,2,3,3; rows 8-15 → 4,4,..,7,7 (GB 8).
  const int hr0 = g / 2, hr1 = 4 + g / 2;
  unsigned qa[T::q_regs];
  float dqs[NH][nb];
  if constexpr (T::k_packed) {
    const int8_t* q8 = reinterpret_cast<const int8_t*>(&q_sh[0][0]);
    const auto word = [&](int h, int byte) {
      return h < GB ? *reinterpret_cast<const unsigned*>(q8 + h * HD * 4 + byte) : 0u;
    };
    // q8 rows are HD*4 bytes apart (q_sh is fp32-sized); A fragment of block b.
#pragma unroll
    for (int b = 0; b < nb; ++b) {
      qa[b * 4 + 0] = word(hr0, b * 32 + 4 * tq);
      qa[b * 4 + 1] = GB == 8 ? word(hr1, b * 32 + 4 * tq) : 0u;
      qa[b * 4 + 2] = word(hr0, b * 32 + 16 + 4 * tq);
      qa[b * 4 + 3] = GB == 8 ? word(hr1, b * 32 + 16 + 4 * tq) : 0u;
#pragma unroll
      for (int hh = 0; hh < NH; ++hh) dqs[hh][b] = dq_sh[hh == 0 ? hr0 : hr1][b];
    }
  } else {
    // k-step s (16 dims): a0 = (row g; dims 2t, 2t+1), a1 = row g+8, a2/a3 = dims 8+2t, 9+2t.
    const auto pair = [&](int h, int d, bool lo) {
      const float x0 = q_sh[h][d], x1 = q_sh[h][d + 1];
      return alap_p_part(x0, x1, lo ? 1.0f : 0.0f);
    };
#pragma unroll
    for (int s = 0; s < HD / 16; ++s) {
      const int d0 = s * 16 + 2 * tq;
      if constexpr (GB == 4) {  // rows 8-15: the lo half of the same heads
        qa[s * 4 + 0] = pair(hr0, d0, false);
        qa[s * 4 + 1] = pair(hr0, d0, true);
        qa[s * 4 + 2] = pair(hr0, d0 + 8, false);
        qa[s * 4 + 3] = pair(hr0, d0 + 8, true);
      } else {  // two A sets: hi, then lo
#pragma unroll
        for (int part = 0; part < 2; ++part) {
          unsigned* q = qa + (part * (HD / 16) + s) * 4;
          q[0] = pair(hr0, d0, part == 1);
          q[1] = pair(hr1, d0, part == 1);
          q[2] = pair(hr0, d0 + 8, part == 1);
          q[3] = pair(hr1, d0 + 8, part == 1);
        }
      }
    }
    (void)dqs;
  }

  float acc[NH][MT][4];
#pragma unroll
  for (int hh = 0; hh < NH; ++hh)
#pragma unroll
    for (int j = 0; j < MT; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[hh][j][i] = 0.0f;
  float m_run[NH], l_run[NH];
#pragma unroll
  for (int hh = 0; hh < NH; ++hh) {
    m_run[hh] = -INFINITY;
    l_run[hh] = 0.0f;
  }
  const float lo_lane = (g & 1) ? 1.0f : 0.0f;  // B column g of Pᵀ: head g/2, hi (even) or lo (odd)
  const unsigned p_sign = (g & 1) ? 0u : 0x80008000u;  // k8v8 P·V: σ = −1 on hi lanes, +1 on lo lanes

  int stage = 0;
  bool first_tile = true;
  [[maybe_unused]] const int n_tiles0 = (end - begin + kStep - 1) / kStep;  // warp 0's tiles (DIAG 4)
  [[maybe_unused]] int it = 0;
  for (int tile = begin + warp * kMmaRows; tile < end; tile += kStep) {
    if constexpr (ALAP_ATTN_DIAG == 4) {  // warp 0 reaches 1/4, 1/2, 3/4 of its tiles (slots 18-20)
#pragma unroll
      for (int k = 1; k <= 3; ++k)
        if (it == k * n_tiles0 / 4) alap_attn_stamp(a, HD, 17 + k);
      ++it;
    }
    issue(t_issue, stage == 0 ? T::kStages - 1 : stage - 1);
    t_issue += kStep;
    alap_cp_async_wait<T::kStages - 1>();  // this lane's copies of this tile have landed
    __syncwarp();                          // ... and every lane's
    if (ALAP_ATTN_DIAG == 4 && first_tile) alap_attn_stamp(a, HD, 2);  // warp 0's first tile landed
    first_tile = false;
    const unsigned st = ring_s + stage * T::stage_bytes;

    // 1. scores s[hh][n][i]: head hr(g + 8hh), row 8n + 2t + i.
    float sc[NH][2][2];
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const unsigned krow = st + T::k_off + (8 * n + (lane & 7)) * T::k_stride + 16 * (lane >> 3);
      if constexpr (T::k_packed) {
        int d[nb][4];
#pragma unroll
        for (int p = 0; p < nb / 2; ++p) {
          unsigned bf[4];
          alap_ldsm_x4(krow + 64 * p, bf);
          alap_mma_16832_s8(d[2 * p], qa + (2 * p) * 4, bf[0], bf[1], kMagicI);
          alap_mma_16832_s8(d[2 * p + 1], qa + (2 * p + 1) * 4, bf[2], bf[3], kMagicI);
        }
        // d_k of rows 8n + 2t and 8n + 2t + 1: 2·nb halves, contiguous.
        float dk[2][nb];
        const char* kd = ring + stage * T::stage_bytes + T::kd_off + (8 * n + 2 * tq) * T::sc_row;
        if constexpr (nb == 4) {
          const uint4 w = *reinterpret_cast<const uint4*>(kd);
          const unsigned ws[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&ws[i]));
            dk[i / 2][(i % 2) * 2] = f.x;
            dk[i / 2][(i % 2) * 2 + 1] = f.y;
          }
        } else {
          const uint2 w = *reinterpret_cast<const uint2*>(kd);
          const float2 f0 = __half22float2(*reinterpret_cast<const __half2*>(&w.x));
          const float2 f1 = __half22float2(*reinterpret_cast<const __half2*>(&w.y));
          dk[0][0] = f0.x;
          dk[0][1] = f0.y;
          dk[1][0] = f1.x;
          dk[1][1] = f1.y;
        }
#pragma unroll
        for (int hh = 0; hh < NH; ++hh)
#pragma unroll
          for (int i = 0; i < 2; ++i) {
            float s = 0.0f;
#pragma unroll
            for (int b = 0; b < nb; ++b) s = fmaf(__int_as_float(d[b][2 * hh + i]) - kMagicF, dqs[hh][b] * dk[i][b], s);
            sc[hh][n][i] = s;
          }
      } else {
        float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int p = 0; p < HD / 32; ++p) {
          unsigned bf[4];
          alap_ldsm_x4(krow + 64 * p, bf);
#pragma unroll
          for (int u = 0; u < 2; ++u) {
            const int s = 2 * p + u;
            alap_mma_16816_c(c, qa + s * 4, bf[2 * u], bf[2 * u + 1], c);
            if constexpr (GB == 8) alap_mma_16816_c(c, qa + ((HD / 16) + s) * 4, bf[2 * u], bf[2 * u + 1], c);
          }
        }
        if constexpr (GB == 4) {
          sc[0][n][0] = c[0] + c[2];
          sc[0][n][1] = c[1] + c[3];
        } else {
          sc[0][n][0] = c[0];
          sc[0][n][1] = c[1];
          sc[NH - 1][n][0] = c[2];
          sc[NH - 1][n][1] = c[3];
        }
      }
    }
    if (tile + kMmaRows > end) {  // tail tile: rows past the slice get no weight
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int i = 0; i < 2; ++i)
          if (tile + 8 * n + 2 * tq + i >= end)
#pragma unroll
            for (int hh = 0; hh < NH; ++hh) sc[hh][n][i] = -INFINITY;
    }

    // 2. online softmax per warp (lanes g, g^1 and t = 0..3 share a head: 16 rows).
    float tmax[NH];
    bool move = false;
#pragma unroll
    for (int hh = 0; hh < NH; ++hh) {
      tmax[hh] = fmaxf(fmaxf(sc[hh][0][0], sc[hh][0][1]), fmaxf(sc[hh][1][0], sc[hh][1][1]));
      tmax[hh] = fmaxf(tmax[hh], __shfl_xor_sync(0xffffffffu, tmax[hh], 1));
      tmax[hh] = fmaxf(tmax[hh], __shfl_xor_sync(0xffffffffu, tmax[hh], 2));
      move |= tmax[hh] > m_run[hh] + ALAP_ATTN_RESCALE;
    }
    if (__any_sync(0xffffffffu, move)) {
#pragma unroll
      for (int hh = 0; hh < NH; ++hh) {
        const float m_new = fmaxf(m_run[hh], tmax[hh]);
        const float al = alap_exp2(m_run[hh] - m_new);  // 0 on the first tile
        l_run[hh] *= al;
        m_run[hh] = m_new;
        const float al_acc = __shfl_sync(0xffffffffu, al, 8 * tq);  // acc of this lane: head 4hh + t
#pragma unroll
        for (int j = 0; j < MT; ++j)
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[hh][j][i] *= al_acc;
      }
    }
    float pr[NH][2][2];
#pragma unroll
    for (int hh = 0; hh < NH; ++hh)
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
          pr[hh][n][i] = alap_exp2(sc[hh][n][i] - m_run[hh]);
          l_run[hh] += pr[hh][n][i];
        }

    // 3. Oᵀ += Vᵀ·Pᵀ.
    if constexpr (!T::v_packed) {
      unsigned bp[NH][2];
#pragma unroll
      for (int hh = 0; hh < NH; ++hh) {
        bp[hh][0] = alap_p_part(pr[hh][0][0], pr[hh][0][1], lo_lane);
        bp[hh][1] = alap_p_part(pr[hh][1][0], pr[hh][1][1], lo_lane);
      }
      const int q4 = lane >> 3;
      const unsigned vrow = st + T::v_off + (8 * (q4 >> 1) + (lane & 7)) * T::v_stride + 16 * (q4 & 1);
#pragma unroll
      for (int j = 0; j < MT; ++j) {
        unsigned af[4];
        alap_ldsm_x4_trans(vrow + 32 * j, af);
#pragma unroll
        for (int hh = 0; hh < NH; ++hh) alap_mma_16816_c(acc[hh][j], af, bp[hh][0], bp[hh][1], acc[hh][j]);
      }
    } else {
      // d_v of rows 8n + 2t, 8n + 2t + 1 of block b as an fp16 pair (the rows of B word n).
      unsigned dvp[2][nb];
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const char* vd = ring + stage * T::stage_bytes + T::vd_off + (8 * n + 2 * tq) * T::sc_row;
        if constexpr (nb == 4) {
          const uint4 w = *reinterpret_cast<const uint4*>(vd);  // row 2t: (b0,b1) (b2,b3), row 2t+1: same
          dvp[n][0] = __byte_perm(w.x, w.z, 0x5410u);
          dvp[n][1] = __byte_perm(w.x, w.z, 0x7632u);
          dvp[n][2] = __byte_perm(w.y, w.w, 0x5410u);
          dvp[n][3] = __byte_perm(w.y, w.w, 0x7632u);
        } else {
          const uint2 w = *reinterpret_cast<const uint2*>(vd);
          dvp[n][0] = __byte_perm(w.x, w.y, 0x5410u);
          dvp[n][1] = __byte_perm(w.x, w.y, 0x7632u);
        }
      }
      // p = ph + pl (fp16 pairs, once per tile). Per block: h = rn(ph·d_v), e = ph·d_v − h (exact in
      // fp16), hi lanes send rn(ph·d_v − e) = h, lo lanes rn(pl·d_v + e); σ folds both into one form.
      unsigned sp[NH][2], nsp[NH][2], p2[NH][2];
#pragma unroll
      for (int hh = 0; hh < NH; ++hh)
#pragma unroll
        for (int n = 0; n < 2; ++n) {
          unsigned ph, pl;
          alap_split_half2(pr[hh][n][0], pr[hh][n][1], ph, pl);
          sp[hh][n] = ph ^ p_sign;                // σ·ph
          nsp[hh][n] = sp[hh][n] ^ 0x80008000u;   // −σ·ph
          p2[hh][n] = (g & 1) ? pl : ph;
        }
      const int q4 = lane >> 3;
      const unsigned vrow = st + T::v_off + (8 * (q4 & 1) + (lane & 7)) * T::v_stride + 16 * (q4 >> 1);
#pragma unroll
      for (int b = 0; b < nb; ++b) {
        unsigned bp[NH][2];
#pragma unroll
        for (int hh = 0; hh < NH; ++hh)
#pragma unroll
          for (int n = 0; n < 2; ++n) {
            const unsigned e = alap_hfma2_u(sp[hh][n], dvp[n][b], alap_hmul2_u(nsp[hh][n], dvp[n][b]));  // σ·e
            bp[hh][n] = alap_hfma2_u(p2[hh][n], dvp[n][b], e);
          }
        unsigned r[4];
        alap_ldsm_x4_trans(vrow + 32 * b, r);  // rows 0-7 / 8-15 × dims 32b..+15, then 32b+16..+31
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          const unsigned x0 = r[2 * u] ^ 0x80808080u, x1 = r[2 * u + 1] ^ 0x80808080u;
          const unsigned af[4] = {alap_i8_to_h2(x0, 0x4240u), alap_i8_to_h2(x0, 0x4341u), alap_i8_to_h2(x1, 0x4240u),
                                  alap_i8_to_h2(x1, 0x4341u)};
#pragma unroll
          for (int hh = 0; hh < NH; ++hh)
            alap_mma_16816_c(acc[hh][2 * b + u], af, bp[hh][0], bp[hh][1], acc[hh][2 * b + u]);
        }
      }
    }
    __syncwarp();  // every lane is done with this stage before it is refilled
    stage = stage == T::kStages - 1 ? 0 : stage + 1;
  }
  alap_attn_stamp(a, HD, 3);  // warp 0 done streaming
  alap_attn_stamp_warp(a, HD, warp);
  alap_cp_async_wait<0>();    // no copy outlives the loop

  // Merge the warps. Lane (g, t) holds, for head 4hh + t, dims m = g and g + 8 of each Vᵀ tile
  // (hi in acc[..][0]/[2], lo in [1]/[3]); that head's m and l live in lane 8t.
  // kWm (ALAP_ATTN_WMERGE, not with the cluster merge, whose blk_o lies in the rings): warp w's
  // (o [GB][HD], l [GB]) go to the start of its own ring (free once its copies have landed), unscaled,
  // with m in mw_sh; one barrier, then the sum over the warps rescales. Else (round 5): red
  // [kMmaWarps][GB][HD], then l [kMmaWarps][GB], over all rings, scaled before the sum.
  constexpr bool kWm = ALAP_ATTN_WMERGE && !ALAP_ATTN_CLUSTER;
  constexpr int kRedStride = kWm ? T::warp_bytes / 4 : GB * HD;  // floats between warps' o
  static_assert(!kWm || GB * (HD + 1) * 4 <= T::warp_bytes, "a warp's partial fits its ring");
  float* red = reinterpret_cast<float*>(stage_sh);
  float* lred = kWm ? red + GB * HD : red + kMmaWarps * GB * HD;  // warp w's at + w·kLredStride
  constexpr int kLredStride = kWm ? kRedStride : GB;
  if constexpr (!kWm) __syncthreads();  // the rings are reused below
  else __syncwarp();                    // every lane's copies of this warp have landed
  if constexpr (!kWm) alap_attn_stamp(a, HD, 4);  // every warp done
  float l_h[NH], m_h[NH];
#pragma unroll
  for (int hh = 0; hh < NH; ++hh) {
    float l = l_run[hh];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    l_h[hh] = __shfl_sync(0xffffffffu, l, 8 * tq);
    m_h[hh] = __shfl_sync(0xffffffffu, m_run[hh], 8 * tq);
    if (g == 0) mw_sh[warp][4 * hh + tq] = m_h[hh];
  }
  if constexpr (!kWm) __syncthreads();
#pragma unroll
  for (int hh = 0; hh < NH; ++hh) {
    const int h = 4 * hh + tq;
    float f = 1.0f;
    if constexpr (!kWm) {
      float mx = -INFINITY;
#pragma unroll
      for (int w = 0; w < kMmaWarps; ++w) mx = fmaxf(mx, mw_sh[w][h]);
      f = m_h[hh] == -INFINITY ? 0.0f : alap_exp2(m_h[hh] - mx);
    }
    float* o = kWm ? red + warp * kRedStride + h * HD : red + (warp * GB + h) * HD;
#pragma unroll
    for (int j = 0; j < MT; ++j) {
      const int d0 = T::v_packed ? 16 * j + 2 * g : 16 * j + g;
      const int d1 = T::v_packed ? d0 + 1 : d0 + 8;
      o[d0] = (acc[hh][j][0] + acc[hh][j][1]) * f;
      o[d1] = (acc[hh][j][2] + acc[hh][j][3]) * f;
    }
    if (g == 0) lred[warp * kLredStride + h] = l_h[hh] * f;
  }
  __syncthreads();
  if constexpr (kWm) alap_attn_stamp(a, HD, 4);  // every warp done and its partial written
  const bool single = n_split == 1;
  // Launched as a cluster of the n_split blocks of this KV head (slice): the partials stay in shared
  // memory (blk_o [GB][HD], blk_m [GB], blk_l [GB]) and are merged through distributed shared memory.
  const unsigned n_cluster = single || !ALAP_ATTN_CLUSTER ? 1u : alap_cluster_size();
  float* blk_o = reinterpret_cast<float*>(reinterpret_cast<char*>(stage_sh) + T::blk_off);
  float* blk_m = blk_o + GB * HD;
  float* blk_l = blk_m + GB;
  // Two adjacent outputs of one head per thread (round 7): the warps' factors 2^(m_w − max) once for
  // both, partials out as float2.
  for (int i = 2 * tid; i < G * HD; i += 2 * kMmaThreads) {
    const int hg = i / HD, d = i % HD, h = h0 + hg;
    float2 o = make_float2(0.0f, 0.0f);
    float l = 0.0f, mx = -INFINITY;
    if constexpr (kWm) {
#pragma unroll
      for (int w = 0; w < kMmaWarps; ++w) mx = fmaxf(mx, mw_sh[w][hg]);
#pragma unroll
      for (int w = 0; w < kMmaWarps; ++w) {
        const float mw = mw_sh[w][hg];
        const float f = mw == -INFINITY ? 0.0f : alap_exp2(mw - mx);
        const float2 r = *reinterpret_cast<const float2*>(red + w * kRedStride + hg * HD + d);
        o.x = fmaf(r.x, f, o.x);
        o.y = fmaf(r.y, f, o.y);
        l = fmaf(lred[w * kLredStride + hg], f, l);
      }
    } else {
#pragma unroll
      for (int w = 0; w < kMmaWarps; ++w) {
        o.x += red[(w * GB + hg) * HD + d];
        o.y += red[(w * GB + hg) * HD + d + 1];
        l += lred[w * GB + hg];
      }
    }
    if (single) {  // whole warps take part (G·HD is a multiple of 64): out_q8's shuffles
      const float v2[2] = {l > 0.0f ? o.x / l : 0.0f, l > 0.0f ? o.y / l : 0.0f};
      *reinterpret_cast<float2*>(a.p.out + size_t(h) * HD + d) = make_float2(v2[0], v2[1]);
      attn_quantize_out<2>(a.p, v2, true, h * HD + d);
    } else {
      if (!kWm && d == 0) {
#pragma unroll
        for (int w = 0; w < kMmaWarps; ++w) mx = fmaxf(mx, mw_sh[w][hg]);
      }
      if (n_cluster > 1) {
        blk_o[hg * HD + d] = o.x;
        blk_o[hg * HD + d + 1] = o.y;
        if (d == 0) {
          blk_m[hg] = mx;
          blk_l[hg] = l;
        }
      } else {
        *reinterpret_cast<float2*>(a.part_o + (size_t(h) * kAttnMaxSplit + split) * HD + d) = o;
        if (d == 0) {
          a.part_m[size_t(h) * kAttnMaxSplit + split] = mx;  // log2 units (only this kernel reads it)
          a.part_l[size_t(h) * kAttnMaxSplit + split] = l;
        }
      }
    }
  }
  alap_attn_stamp(a, HD, 5);  // partials written (thread 0's)
  alap_attn_stamp(a, HD, 6, 0ull);
  alap_attn_stamp(a, HD, 7, 0ull);
  if (single || ALAP_ATTN_DIAG == 2) return;

  if (n_cluster > 1) {
    // Cluster merge: after the barrier every block's partial is visible cluster-wide; block `rank`
    // merges elements [rank·per, (rank + 1)·per) of the G·HD outputs, reading the n_cluster ≤ 16
    // partials of each (all loads in flight at once), then waits until every block is done reading
    // before its shared memory goes away.
    constexpr int kMaxCluster = 16;
    alap_cluster_sync();
    const unsigned rank = alap_cluster_rank();
    // per is a multiple of 32, so whole warps hold whole 32-blocks (out_q8's shuffles).
    const int n_out = G * HD, per = (n_out / 32 + int(n_cluster) - 1) / int(n_cluster) * 32;
    const unsigned o_s = alap_smem_addr(blk_o), m_s = alap_smem_addr(blk_m), l_s = alap_smem_addr(blk_l);
    for (int j = tid; j < per; j += kMmaThreads) {
      const int i = int(rank) * per + j;
      if (i >= n_out) break;
      const int hg = i / HD;
      float ov[kMaxCluster], mv[kMaxCluster], lv[kMaxCluster];
#pragma unroll
      for (int r = 0; r < kMaxCluster; ++r) {  // ranks past the cluster re-read the last one, weight 0
        const unsigned src = min(unsigned(r), n_cluster - 1u);
        ov[r] = alap_cluster_load(alap_cluster_map(o_s + 4u * unsigned(i), src));
        const float m = alap_cluster_load(alap_cluster_map(m_s + 4u * unsigned(hg), src));
        mv[r] = r < int(n_cluster) ? m : -INFINITY;
        lv[r] = alap_cluster_load(alap_cluster_map(l_s + 4u * unsigned(hg), src));
      }
      float mx = -INFINITY;
#pragma unroll
      for (int r = 0; r < kMaxCluster; ++r) mx = fmaxf(mx, mv[r]);
      float o = 0.0f, lsum = 0.0f;
#pragma unroll
      for (int r = 0; r < kMaxCluster; ++r) {
        const float w = alap_exp2(mv[r] - mx);  // 0 past n_cluster
        o = fmaf(w, ov[r], o);
        lsum = fmaf(w, lv[r], lsum);
      }
      const float v1[1] = {o / lsum};
      a.p.out[size_t(h0 + hg) * HD + i % HD] = v1[0];
      attn_quantize_out<1>(a.p, v1, true, h0 * HD + i);
    }
    alap_cluster_sync();
    return;
  }

  // The last block of this KV head (slice) to finish merges the splits, kC at a time with every load
  // of a chunk in flight at once (one L2 round trip for up to kC splits):
  //   out = Σ_s o_s·2^(m_s−M) / Σ_s l_s·2^(m_s−M),  M = max_s m_s.
  // The barrier orders every thread's partial writes before thread 0's release-acquire count (the
  // split-K semaphore pattern: no per-thread fence); the last block's barrier orders its reads after.
  const int counter = kv * int(gridDim.z) + int(blockIdx.z);
  __syncthreads();
  if (tid == 0) {
    unsigned done;
    asm volatile("atom.add.acq_rel.gpu.global.u32 %0, [%1], 1;\n" : "=r"(done) : "l"(a.counters + counter) : "memory");
    last_sh = done == unsigned(n_split - 1);
  }
  __syncthreads();
  alap_attn_stamp(a, HD, 6);  // counted
  if (!last_sh) return;
  constexpr int kC = 16;
  for (int i = 2 * tid; i < G * HD; i += 2 * kMmaThreads) {
    const int hg = i / HD, d = i % HD, h = h0 + hg;
    const float* po = a.part_o + size_t(h) * kAttnMaxSplit * HD + d;
    const float* pm = a.part_m + size_t(h) * kAttnMaxSplit;
    const float* pl = a.part_l + size_t(h) * kAttnMaxSplit;
    float mx = -INFINITY, lsum = 0.0f;
    float2 o = make_float2(0.0f, 0.0f);
    for (int c0 = 0; c0 < n_split; c0 += kC) {
      float2 ov[kC];
      float mv[kC], lv[kC];
#pragma unroll
      for (int u = 0; u < kC; ++u) {
        const bool ok = c0 + u < n_split;
        ov[u] = ok ? __ldcg(reinterpret_cast<const float2*>(po + size_t(c0 + u) * HD)) : make_float2(0.0f, 0.0f);
        mv[u] = ok ? __ldcg(pm + c0 + u) : -INFINITY;
        lv[u] = ok ? __ldcg(pl + c0 + u) : 0.0f;
      }
      float cmx = mx;
#pragma unroll
      for (int u = 0; u < kC; ++u) cmx = fmaxf(cmx, mv[u]);
      const float f = alap_exp2(mx - cmx);  // 0 on the first chunk
      o.x *= f;
      o.y *= f;
      lsum *= f;
#pragma unroll
      for (int u = 0; u < kC; ++u) {
        const float w = alap_exp2(mv[u] - cmx);  // 0 past n_split
        o.x = fmaf(w, ov[u].x, o.x);
        o.y = fmaf(w, ov[u].y, o.y);
        lsum = fmaf(w, lv[u], lsum);
      }
      mx = cmx;
    }
    const float v2[2] = {o.x / lsum, o.y / lsum};
    *reinterpret_cast<float2*>(a.p.out + size_t(h) * HD + d) = make_float2(v2[0], v2[1]);
    attn_quantize_out<2>(a.p, v2, true, h * HD + d);  // whole warps (G·HD is a multiple of 64)
  }
  if (tid == 0) a.counters[counter] = 0u;  // ready for the next run
  alap_attn_stamp(a, HD, 7);  // merged (last block only)
}
#endif  // ALAP_ATTN_MMA

}  // namespace alap::gpu
