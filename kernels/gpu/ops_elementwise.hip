// The small kernels of ops.h: RMSNorm (sum of squares in double, like the CPU), bias and vector
// adds, SwiGLU, RoPE (angles in double, like core/model/forward.cpp), embedding lookup for every
// weight type, argmax (first on ties), the fp16 KV cache writer, and RMSNorm / SwiGLU fused with
// the activation quantiser of the weight products (matmul.hip's rule, byte for byte).
// Not the weight products (matmul.hip) and not attention.
#include <stdexcept>
#include <string>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_pdl.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/kv_k8_quant.h"
#include "kernels/gpu/matmul_kernel.h"
#include "kernels/gpu/ops.h"

namespace alap::gpu {

namespace {

constexpr int kThreads = 256;

unsigned grid_for(size_t count, int per_block = kThreads) {
  const size_t g = (count + per_block - 1) / per_block;
  return unsigned(g < 65536 * 16 ? g : 65536 * 16);  // grid-stride loops cover the rest
}

alap_gpu_stream_t as_stream(void* s) { return static_cast<alap_gpu_stream_t>(s); }

// A double exchanged between lanes of a 32-lane group (as two 32-bit halves).
__device__ __forceinline__ double shfl_xor_double(double v, int lane_mask) {
  const unsigned long long b = static_cast<unsigned long long>(__double_as_longlong(v));
  const int lo = alap_shfl_xor(static_cast<int>(static_cast<unsigned>(b)), lane_mask, 32);
  const int hi = alap_shfl_xor(static_cast<int>(static_cast<unsigned>(b >> 32)), lane_mask, 32);
  const unsigned long long r = (static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                               static_cast<unsigned>(lo);
  return __longlong_as_double(static_cast<long long>(r));
}

// 1/sqrt(mean(x²) + eps) of one row xr[n_cols], the sum of squares in double. Fixed order, the
// same in every block that calls it on the row (the split kernels rely on it): thread t of a
// kThreads block sums x[t], x[t + kThreads], ... in that order (loads issued 16 at a time, up
// front), a butterfly over each 32-lane group (every lane gets the same sum), then every thread
// adds the kThreads/32 group sums in order. A block of NT threads gets the same bits: its thread
// t plays the threads t, t + NT, ... of that order. sh holds kThreads/32 doubles. Every thread of
// the block calls it.
template <int NT = kThreads>
__device__ __forceinline__ float row_inv_rms(const float* xr, int n_cols, float eps, double* sh) {
  static_assert(kThreads % NT == 0 && NT % 32 == 0, "whole lane groups, each played by one warp");
  constexpr int kU = 16;
#pragma unroll
  for (int j = 0; j < kThreads / NT; ++j) {
    const int t = int(threadIdx.x) + j * NT;  // the thread of the kThreads order played
    double ss = 0.0;
    for (int c0 = t; c0 < n_cols; c0 += kU * kThreads) {
      float v[kU];
#pragma unroll
      for (int k = 0; k < kU; ++k) {
        const int c = c0 + k * kThreads;
        v[k] = c < n_cols ? xr[c] : 0.0f;  // fma(0, 0, ss) == ss: the padding adds nothing
      }
#pragma unroll
      for (int k = 0; k < kU; ++k) ss = fma(double(v[k]), double(v[k]), ss);
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) ss += shfl_xor_double(ss, off);
    if (t % 32 == 0) sh[t / 32] = ss;
  }
  __syncthreads();
  double t = 0.0;
#pragma unroll
  for (int i = 0; i < kThreads / 32; ++i) t += sh[i];
  return static_cast<float>(1.0 / sqrt(t / double(n_cols) + double(eps)));
}

// Blocks per row of the norm kernels: one when y overlaps x (each thread must rewrite only what
// it read, after the whole row's sum) or the rows alone fill the device; else one block per
// kThreads columns (decode: 16 blocks for a 4096 row instead of one), at most ~512 blocks in all.
// Every block of a row reads the whole row for its sum and writes only its own columns.
unsigned norm_splits(const float* x, const float* y, int n_rows, int n_cols) {
  const size_t bytes = size_t(n_rows) * size_t(n_cols) * sizeof(float);
  const uintptr_t xa = reinterpret_cast<uintptr_t>(x), ya = reinterpret_cast<uintptr_t>(y);
  if (xa < ya + bytes && ya < xa + bytes) return 1;
  const int per_row = (n_cols + kThreads - 1) / kThreads;
  const int cap = n_rows >= 512 ? 1 : 512 / n_rows;
  return unsigned(per_row < cap ? per_row : cap);
}

}  // namespace

// grid (n_rows, splits): block (r, y) computes row r's scale (row_inv_rms) and writes columns
// y·kThreads + t, stepping by splits·kThreads (splits == 1: the columns each thread summed).
__global__ void __launch_bounds__(kThreads) rms_norm_kernel(const float* x, const float* w, float* y, int n_cols,
                                                            float eps) {
  alap_pdl_begin();
  __shared__ double sh[kThreads / 32];
  const float* xr = x + size_t(blockIdx.x) * n_cols;
  float* yr = y + size_t(blockIdx.x) * n_cols;
  const float inv = row_inv_rms(xr, n_cols, eps, sh);
  for (int c = blockIdx.y * kThreads + threadIdx.x; c < n_cols; c += gridDim.y * kThreads) {
    const float v = xr[c] * inv;
    yr[c] = w != nullptr ? w[c] * v : v;
  }
}

__global__ void add_bias_kernel(float* y, const float* b, int n_cols, size_t count) {
  alap_pdl_begin();
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    y[i] += b[i % n_cols];
}

__global__ void add_kernel(const float* a, const float* b, float* y, size_t count) {
  alap_pdl_begin();
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x)
    y[i] = a[i] + b[i];
}

__global__ void swiglu_kernel(const float* gate, const float* up, float* out, size_t count) {
  alap_pdl_begin();
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const float g = gate[i];
    out[i] = g / (1.0f + expf(-g)) * up[i];
  }
}

// One 32-block held by a group of 32 lanes, lane i holding element i (matmul_kernel.h's
// quantize_act_block, the quantiser of gpu_quantize_act_q8).
__device__ __forceinline__ void quantize_block_32(float v, bool valid, const act_q8_view& view, long long blk,
                                                  int lane) {
  const float v1[1] = {v};
  quantize_act_block<1>(v1, valid, view, blk * 32 + lane);
}

// grid (n_rows, splits): block (r, y) computes row r's scale as rms_norm_kernel, then its 8 groups
// of 32 lanes take the row's 32-blocks y·8 + group, stepping by splits·8 (every lane of the block
// takes part in every round's shuffles), writing y and the blocks. The first round's x and w are
// loaded before the sum, each later round's during the one before. splits == 1 when y aliases x:
// then every thread rewrites only what it read itself.
__global__ void __launch_bounds__(kThreads) rms_norm_q8_kernel(const float* x, const float* w, float* y, void* xq,
                                                               int n_rows, int n_cols, float eps) {
  __shared__ double sh[kThreads / 32];
  const float* xr = x + size_t(blockIdx.x) * n_cols;
  float* yr = y + size_t(blockIdx.x) * n_cols;
  const int lane = threadIdx.x % 32, group = threadIdx.x / 32, nb = n_cols / 32;
  const int step = int(gridDim.y) * (kThreads / 32);
  int b = int(blockIdx.y) * (kThreads / 32) + group;
  float xv = 0.0f, wv = 0.0f;
  // The norm's weights are no kernel's output: the first round's are asked for before the wait,
  // so their round trip (often to DRAM: a step's weight stream evicts them from L2) overlaps the
  // kernel before.
  if (b < nb && w != nullptr) wv = w[b * 32 + lane];
  alap_pdl_begin();
  if (b < nb) xv = xr[b * 32 + lane];
  const float inv = row_inv_rms(xr, n_cols, eps, sh);
  const act_q8_view view = act_q8_layout(xq, n_rows, n_cols);
  for (int b0 = int(blockIdx.y) * (kThreads / 32); b0 < nb; b0 += step, b += step) {
    const bool valid = b < nb;
    const int c = b * 32 + lane;
    float v = 0.0f;
    if (valid) {
      const float s = xv * inv;
      v = w != nullptr ? wv * s : s;
    }
    if (b + step < nb) {  // the next round's values (this thread's own, not yet rewritten)
      xv = xr[(b + step) * 32 + lane];
      if (w != nullptr) wv = w[(b + step) * 32 + lane];
    }
    quantize_block_32(v, valid, view, (long long)blockIdx.x * nb + b, lane);
    if (valid) yr[c] = v;
  }
}

// Four 32-blocks per block of 128 threads over the flat [n_rows·n_cols] values.
__global__ void __launch_bounds__(128) swiglu_q8_kernel(const float* gate, const float* up, float* out, void* xq,
                                                        int n_rows, int n_cols) {
  alap_pdl_begin();
  const long long n_blocks = (long long)n_rows * (n_cols / 32);
  const long long blk = (long long)blockIdx.x * 4 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const bool valid = blk < n_blocks;
  float v = 0.0f;
  if (valid) {
    const float g = gate[blk * 32 + lane];
    v = g / (1.0f + expf(-g)) * up[blk * 32 + lane];
  }
  quantize_block_32(v, valid, act_q8_layout(xq, n_rows, n_cols), blk, lane);
  if (valid) out[blk * 32 + lane] = v;
}

constexpr int kRopeThreads = 128;  // threads of a block of the one-token RoPE kernels (n_rot/2 <= 128)

// cos and sin of RoPE pair i's angle at position pos, the angle in double (as core/model/forward.cpp):
// pos·freq_scale / (freq_base^(2i/n_rot)·f_i), f_i = ff[i] or 1.
__device__ __forceinline__ float2 rope_cos_sin(int i, int n_rot, int pos, float freq_base, float freq_scale,
                                               const float* ff) {
  const double f = ff != nullptr ? double(ff[i]) : 1.0;
  const double inv_freq = double(freq_scale) * pow(double(freq_base), -2.0 * double(i) / double(n_rot)) / f;
  const double ang = double(pos) * inv_freq;
  return make_float2(static_cast<float>(cos(ang)), static_cast<float>(sin(ang)));
}

// A head row's values src[first + t] and src[first + t + kRopeThreads] for thread t (0 past n):
// the columns one thread of the one-token RoPE kernels takes, read before the PDL wait.
__device__ __forceinline__ void rope_thread_columns(const float* src, int first, int n, float (&v)[2]) {
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int c = first + int(threadIdx.x) + k * kRopeThreads;
    v[k] = c < n ? src[c] : 0.0f;
  }
}

// What one thread of bias_rope_head needs that no kernel of the step writes (its pair's angle, the
// head's biases), read and computed before the PDL wait so that their latency (the weights' round
// trip, often to DRAM; pow/cos/sin in double) overlaps the kernel before. One pair a thread:
// n_rot ≤ 256 = 2·kRopeThreads (gpu_bias_rope_1 and gpu_rope_store_1 check it).
struct rope_pre {
  float cs = 1.0f, sn = 0.0f;  // thread i's pair (rotated heads)
  float b0 = 0.0f, b1 = 0.0f;  // the pair's biases
  float bc[2] = {0.0f, 0.0f};  // biases of the thread's first two columns past the pairs
};

__device__ __forceinline__ rope_pre rope_prepare(const float* bh, bool rotate, int head_dim, int n_rot, int pos,
                                                 float freq_base, float freq_scale, const float* ff, int neox) {
  rope_pre r;
  const int half = n_rot / 2, i = threadIdx.x;
  if (rotate && i < half) {
    const float2 c = rope_cos_sin(i, n_rot, pos, freq_base, freq_scale, ff);
    r.cs = c.x, r.sn = c.y;
    if (bh != nullptr) r.b0 = bh[neox ? i : 2 * i], r.b1 = bh[neox ? i + half : 2 * i + 1];
  }
  if (bh != nullptr) rope_thread_columns(bh, rotate ? n_rot : 0, head_dim, r.bc);
  return r;
}

// One head xh[head_dim] of one token, by one block of kRopeThreads threads: x += bias (bh may be
// null; its values as rope_prepare read them into pre), then, when rotate, pair i by thread i with
// pre's angle; x written back, and its fp16 copy into f16_row[head_dim] when that is not null (the
// value kv_f16_store_kernel would write from x).
__device__ __forceinline__ void bias_rope_head(float* xh, const float* bh, bool rotate, int head_dim, int n_rot,
                                               int neox, uint16_t* f16_row, const rope_pre& pre) {
  const int half = n_rot / 2, i = threadIdx.x;
  const int first = rotate ? n_rot : 0;  // the first column that is not in a pair
  if (rotate && i < half) {
    const int i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
    float x0 = xh[i0], x1 = xh[i1];
    if (bh != nullptr) x0 += pre.b0, x1 += pre.b1;
    const float r0 = x0 * pre.cs - x1 * pre.sn, r1 = x0 * pre.sn + x1 * pre.cs;
    xh[i0] = r0;
    xh[i1] = r1;
    if (f16_row != nullptr) f16_row[i0] = alap_float_to_half(r0), f16_row[i1] = alap_float_to_half(r1);
  }
  int k = 0;
  for (int c = first + i; c < head_dim; c += kRopeThreads, ++k) {
    float v = xh[c];
    if (bh != nullptr) {  // without a bias x stays as it is
      v += k < 2 ? pre.bc[k] : bh[c];
      xh[c] = v;
    }
    if (f16_row != nullptr) f16_row[c] = alap_float_to_half(v);
  }
}

// One block per head (grid n_heads): bias_rope_head on head blockIdx.x, rotated when it is one of
// the first n_rot_heads.
__global__ void __launch_bounds__(kRopeThreads) bias_rope_1_kernel(float* x, const float* b, int n_rot_heads,
                                                                   int head_dim, int n_rot, int pos, float freq_base,
                                                                   float freq_scale, const float* ff, int neox) {
  const int h = blockIdx.x;
  const float* bh = b != nullptr ? b + size_t(h) * head_dim : nullptr;
  const rope_pre pre = rope_prepare(bh, h < n_rot_heads, head_dim, n_rot, pos, freq_base, freq_scale, ff, neox);
  alap_pdl_begin();
  bias_rope_head(x + size_t(h) * head_dim, bh, h < n_rot_heads, head_dim, n_rot, neox, nullptr, pre);
}

// One head xh[head_dim ≤ 2·kRopeThreads] by one block of kRopeThreads threads: x += bias (bh may be
// null), then x = w·(x·inv) in place, inv = row_inv_rms of the head: bit for bit what gpu_add_bias
// and then rms_norm_kernel on a row of head_dim columns leave. wv: the thread's two w values
// (columns threadIdx.x and threadIdx.x + kRopeThreads), read before the PDL wait.
__device__ __forceinline__ void bias_norm_head(float* xh, const float* bh, const float (&wv)[2], int head_dim,
                                               float eps) {
  __shared__ double sh[kThreads / 32];
  if (bh != nullptr) {
    for (int c = threadIdx.x; c < head_dim; c += kRopeThreads) xh[c] += bh[c];
    __syncthreads();  // the sum reads columns other threads biased
  }
  const float inv = row_inv_rms<kRopeThreads>(xh, head_dim, eps, sh);  // every read before its barrier
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int c = int(threadIdx.x) + k * kRopeThreads;
    if (c < head_dim) xh[c] = wv[k] * (xh[c] * inv);
  }
  __syncthreads();  // RoPE pairs columns that other threads wrote
}

// gpu_rope_store_1, one block per head of [Q | K | V] (grid n_head + 2·n_kv_head): the head as
// bias_rope_1_kernel does it (Q and K rotated; Q and K normalised first when their weights are
// given); a K or V head then goes into its cache at pos: fp16 from the registers, or packed
// (q8, d8) as kv_k8_store_kernel does it (after a barrier, a 32-lane group per 32-value block of
// the head, reading back the rotated x).
__global__ void __launch_bounds__(kRopeThreads) rope_store_1_kernel(gpu_rope_store_params p) {
  // The device position is written before the step's first kernel (a copy earlier in stream
  // order), so it is read before the wait: its DRAM round trip overlaps the kernel before.
  const int pos = p.pos_dev != nullptr ? *p.pos_dev : p.pos;
  const int H = p.n_head, Hk = p.n_kv_head, D = p.head_dim, h = blockIdx.x;
  const bool is_k = h >= H && h < H + Hk, is_v = h >= H + Hk;
  const float* bh = p.bias != nullptr ? p.bias + size_t(h) * D : nullptr;
  const float* nw = h < H ? p.q_norm : is_k ? p.k_norm : nullptr;  // uniform over the block
  // The angle (from the position alone) and the biases before the wait; a head that is normalised
  // adds its bias before the norm (bias_norm_head), so RoPE then adds none.
  const rope_pre pre = rope_prepare(nw == nullptr ? bh : nullptr, h < H + Hk, D, p.n_rot, pos, p.freq_base,
                                    p.freq_scale, p.freq_factors, p.neox);
  float nwv[2] = {0.0f, 0.0f};  // the norm's weights of this thread's columns (head_dim ≤ 256 with norms)
  if (nw != nullptr) rope_thread_columns(nw, 0, D, nwv);
  alap_pdl_begin();
  if (pos < 0 || pos >= p.capacity) return;  // a bad device position writes nothing (whole grid)
  const int kvh = is_k ? h - H : h - H - Hk;  // the cache head (K or V heads only)
  const size_t row = size_t(kvh) * p.capacity + pos;
  uint16_t* f16 = is_k ? p.k_f16 : is_v ? p.v_f16 : nullptr;
  float* xh = p.x + size_t(h) * D;
  if (nw != nullptr) {
    bias_norm_head(xh, bh, nwv, D, p.norm_eps);
    bh = nullptr;  // added
  }
  bias_rope_head(xh, bh, h < H + Hk, D, p.n_rot, p.neox, f16 != nullptr ? f16 + row * D : nullptr, pre);
  int8_t* q8 = is_k ? p.k_q : is_v ? p.v_q : nullptr;
  uint16_t* d8 = is_k ? p.k_d : is_v ? p.v_d : nullptr;
  if (q8 == nullptr) return;  // uniform over the block
  __syncthreads();
  const int group = threadIdx.x / 32, lane = threadIdx.x % 32, nb = D / 32;
  for (int b = group; b < nb; b += kRopeThreads / 32) {
    const alap_k8_lane r = alap_k8_quantize_lane(xh[b * 32 + lane]);
    q8[row * D + b * 32 + lane] = static_cast<int8_t>(r.q);
    if (lane == 0) d8[row * nb + b] = alap_float_to_half(r.d);
  }
}

// One thread per (token, pair): the angle in double, then every head of the token.
__global__ void rope_kernel(float* x, int n_tokens, int n_heads, int head_dim, int n_rot, int pos0, float freq_base,
                            float freq_scale, const float* ff, int neox) {
  alap_pdl_begin();
  const int half = n_rot / 2;
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= (long long)n_tokens * half) return;
  const int t = int(idx / half), i = int(idx % half);
  const float2 c = rope_cos_sin(i, n_rot, pos0 + t, freq_base, freq_scale, ff);
  const float cs = c.x, sn = c.y;
  const int i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + (size_t(t) * n_heads + h) * head_dim;
    const float x0 = v[i0], x1 = v[i1];
    v[i0] = x0 * cs - x1 * sn;
    v[i1] = x0 * sn + x1 * cs;
  }
}

// grid = (n_ids, ⌈n_blk / 8⌉): 8 groups of 32 lanes per block, one 32-element block per group.
template <uint32_t T>
__global__ void __launch_bounds__(kThreads) get_rows_kernel(const uint8_t* table, size_t row_bytes, int n_rows,
                                                            int n_cols, const int32_t* ids, float* out) {
  alap_pdl_begin();
  const int id = ids[blockIdx.x];
  const int lane = threadIdx.x % 32;
  const int blk = blockIdx.y * (kThreads / 32) + threadIdx.x / 32;
  const int c = blk * 32 + lane;
  if (c >= n_cols) return;
  float* dst = out + size_t(blockIdx.x) * n_cols + c;
  if (id < 0 || id >= n_rows) {
    *dst = 0.0f;
    return;
  }
  const uint8_t* row = table + size_t(id) * row_bytes;
  if constexpr (T == kF32) {
    *dst = reinterpret_cast<const float*>(row)[c];
  } else if constexpr (T == kF16) {
    *dst = alap_half_to_float(reinterpret_cast<const uint16_t*>(row)[c]);
  } else if constexpr (T == kBF16) {
    *dst = bf16_to_float(reinterpret_cast<const uint16_t*>(row)[c]);
  } else {
    wblock u;
    unpack_block<T>(row, blk, u);  // every lane unpacks the block (cached), keeps its element
    *dst = wblock_value(u, lane, T == kQ8_0 || T == kIQ4_NL || T == kIQ4_XS);  // int8 lanes
  }
}

// One block: thread-strided scan, then a tree keeping the larger value, the lower index on ties.
__global__ void __launch_bounds__(1024) argmax_kernel(const float* x, int n, int32_t* out) {
  alap_pdl_begin();
  __shared__ float bv[1024];
  __shared__ int bi[1024];
  float best = -INFINITY;
  int best_i = -1;
  for (int i = threadIdx.x; i < n; i += 1024) {
    const float v = x[i];
    if (best_i < 0 || v > best) {  // strictly greater: the earlier index of a tie stays
      best = v;
      best_i = i;
    }
  }
  bv[threadIdx.x] = best;
  bi[threadIdx.x] = best_i;
  __syncthreads();
  for (int s = 512; s > 0; s >>= 1) {
    if (int(threadIdx.x) < s) {
      const float ov = bv[threadIdx.x + s];
      const int oi = bi[threadIdx.x + s];
      const int mi = bi[threadIdx.x];
      if (oi >= 0 && (mi < 0 || ov > bv[threadIdx.x] || (ov == bv[threadIdx.x] && oi < mi))) {
        bv[threadIdx.x] = ov;
        bi[threadIdx.x] = oi;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = bi[0];
}

__global__ void kv_f16_store_kernel(const float* x, uint16_t* cache, int n_tokens, int n_kv_head, int head_dim,
                                    int capacity, int pos0) {
  // After the wait, let a programmatic dependent (attention with kAttnLaunchPdl) start streaming
  // the older rows; it reads these rows only after its own griddepcontrol.wait (this grid done).
  alap_pdl_begin();
  const size_t count = size_t(n_tokens) * n_kv_head * head_dim;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
    const int d = int(i % head_dim);
    const int h = int((i / head_dim) % n_kv_head);
    const int t = int(i / head_dim / n_kv_head);
    cache[(size_t(h) * capacity + pos0 + t) * head_dim + d] = alap_float_to_half(x[i]);
  }
}

namespace {

template <uint32_t T>
void launch_get_rows(const void* table, size_t row_bytes, int n_rows, int n_cols, const int32_t* ids, int n_ids,
                     float* out, alap_gpu_stream_t s) {
  const int n_blk = (n_cols + 31) / 32;
  const dim3 grid(unsigned(n_ids), unsigned((n_blk + kThreads / 32 - 1) / (kThreads / 32)));
  alap_launch(get_rows_kernel<T>, grid, kThreads, 0, s,
              static_cast<const uint8_t*>(table), row_bytes, n_rows, n_cols, ids, out);
}

}  // namespace

extern "C" {

int gpu_rms_norm(const float* d_x, const float* d_w, float* d_y, int n_cols, int n_rows, float eps, void* stream) {
  return gpu_api_call("gpu_rms_norm", [&] {
    if (n_cols <= 0 || n_rows < 0) throw std::invalid_argument("n_cols must be positive and n_rows >= 0");
    if (n_rows == 0) return;
    if (d_x == nullptr || d_y == nullptr) throw std::invalid_argument("d_x or d_y is null");
    if (n_rows > 0x7fffffff) throw std::invalid_argument("too many rows");
    const dim3 grid(unsigned(n_rows), norm_splits(d_x, d_y, n_rows, n_cols));
    alap_launch(rms_norm_kernel, grid, kThreads, 0, as_stream(stream), d_x, d_w, d_y, n_cols, eps);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_rms_norm_q8(const float* d_x, const float* d_w, float* d_y, void* d_xq, int n_cols, int n_rows, float eps,
                    void* stream) {
  return gpu_api_call("gpu_rms_norm_q8", [&] {
    if (n_cols <= 0 || n_cols % 32 != 0 || n_rows < 0)
      throw std::invalid_argument("n_cols must be a positive multiple of 32 and n_rows >= 0");
    if (n_rows == 0) return;
    if (d_x == nullptr || d_y == nullptr || d_xq == nullptr) throw std::invalid_argument("d_x, d_y or d_xq is null");
    if (reinterpret_cast<uintptr_t>(d_xq) % 16 != 0) throw std::invalid_argument("d_xq is not 16-byte aligned");
    if (n_rows > 0x7fffffff) throw std::invalid_argument("too many rows");
    const dim3 grid(unsigned(n_rows), norm_splits(d_x, d_y, n_rows, n_cols));
    alap_launch(rms_norm_q8_kernel, grid, kThreads, 0, as_stream(stream),
                d_x, d_w, d_y, d_xq, n_rows, n_cols, eps);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_swiglu_q8(const float* d_gate, const float* d_up, float* d_out, void* d_xq, int n_cols, int n_rows,
                  void* stream) {
  return gpu_api_call("gpu_swiglu_q8", [&] {
    if (n_cols <= 0 || n_cols % 32 != 0 || n_rows < 0)
      throw std::invalid_argument("n_cols must be a positive multiple of 32 and n_rows >= 0");
    if (n_rows == 0) return;
    if (d_gate == nullptr || d_up == nullptr || d_out == nullptr || d_xq == nullptr)
      throw std::invalid_argument("null pointer");
    if (reinterpret_cast<uintptr_t>(d_xq) % 16 != 0) throw std::invalid_argument("d_xq is not 16-byte aligned");
    const long long grid = ((long long)n_rows * (n_cols / 32) + 3) / 4;
    if (grid > 0x7fffffffLL) throw std::invalid_argument("too many values for one launch");
    alap_launch(swiglu_q8_kernel, unsigned(grid), 128, 0, as_stream(stream), d_gate, d_up, d_out, d_xq, n_rows, n_cols);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_add_bias(float* d_y, const float* d_b, int n_cols, int n_rows, void* stream) {
  return gpu_api_call("gpu_add_bias", [&] {
    if (n_cols <= 0 || n_rows < 0) throw std::invalid_argument("n_cols must be positive and n_rows >= 0");
    if (n_rows == 0) return;
    if (d_y == nullptr || d_b == nullptr) throw std::invalid_argument("d_y or d_b is null");
    const size_t count = size_t(n_cols) * n_rows;
    alap_launch(add_bias_kernel, grid_for(count), kThreads, 0, as_stream(stream), d_y, d_b, n_cols, count);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_add(const float* d_a, const float* d_b, float* d_y, size_t count, void* stream) {
  return gpu_api_call("gpu_add", [&] {
    if (count == 0) return;
    if (d_a == nullptr || d_b == nullptr || d_y == nullptr) throw std::invalid_argument("null pointer");
    alap_launch(add_kernel, grid_for(count), kThreads, 0, as_stream(stream), d_a, d_b, d_y, count);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_swiglu(const float* d_gate, const float* d_up, float* d_out, size_t count, void* stream) {
  return gpu_api_call("gpu_swiglu", [&] {
    if (count == 0) return;
    if (d_gate == nullptr || d_up == nullptr || d_out == nullptr) throw std::invalid_argument("null pointer");
    alap_launch(swiglu_kernel, grid_for(count), kThreads, 0, as_stream(stream), d_gate, d_up, d_out, count);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_rope(float* d_x, int n_tokens, int n_heads, int head_dim, int n_rot, int pos0, float freq_base,
             float freq_scale, const float* d_freq_factors, int neox, void* stream) {
  return gpu_api_call("gpu_rope", [&] {
    if (n_tokens < 0 || n_heads <= 0 || head_dim <= 0) throw std::invalid_argument("bad n_tokens, n_heads or head_dim");
    if (n_rot <= 0 || n_rot % 2 != 0 || n_rot > head_dim)
      throw std::invalid_argument("n_rot must be even and in [2, head_dim], got " + std::to_string(n_rot));
    if (pos0 < 0) throw std::invalid_argument("pos0 is negative");
    if (!(freq_base > 0.0f)) throw std::invalid_argument("freq_base must be positive");
    if (n_tokens == 0) return;
    if (d_x == nullptr) throw std::invalid_argument("d_x is null");
    const size_t count = size_t(n_tokens) * (n_rot / 2);
    if ((count + kThreads - 1) / kThreads > 0x7fffffffu) throw std::invalid_argument("too many tokens");
    alap_launch(rope_kernel, unsigned((count + kThreads - 1) / kThreads), kThreads, 0, as_stream(stream),
                d_x, n_tokens, n_heads, head_dim, n_rot, pos0, freq_base, freq_scale, d_freq_factors, neox);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_bias_rope_1(float* d_x, const float* d_b, int n_heads, int n_rot_heads, int head_dim, int n_rot, int pos,
                    float freq_base, float freq_scale, const float* d_freq_factors, int neox, void* stream) {
  return gpu_api_call("gpu_bias_rope_1", [&] {
    if (n_heads <= 0 || head_dim <= 0 || n_rot_heads < 0 || n_rot_heads > n_heads)
      throw std::invalid_argument("bad n_heads, n_rot_heads or head_dim");
    if (n_rot <= 0 || n_rot % 2 != 0 || n_rot > head_dim || n_rot > 256)
      throw std::invalid_argument("n_rot must be even and in [2, min(head_dim, 256)], got " + std::to_string(n_rot));
    if (pos < 0) throw std::invalid_argument("pos is negative");
    if (!(freq_base > 0.0f)) throw std::invalid_argument("freq_base must be positive");
    if (d_x == nullptr) throw std::invalid_argument("d_x is null");
    alap_launch(bias_rope_1_kernel, unsigned(n_heads), kRopeThreads, 0, as_stream(stream),
                d_x, d_b, n_rot_heads, head_dim, n_rot, pos, freq_base, freq_scale, d_freq_factors, neox);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_rope_store_1(const gpu_rope_store_params* p, void* stream) {
  return gpu_api_call("gpu_rope_store_1", [&] {
    if (p == nullptr) throw std::invalid_argument("params is null");
    if (p->n_head <= 0 || p->n_kv_head <= 0 || p->head_dim <= 0)
      throw std::invalid_argument("bad n_head, n_kv_head or head_dim");
    if (p->n_rot <= 0 || p->n_rot % 2 != 0 || p->n_rot > p->head_dim || p->n_rot > 256)
      throw std::invalid_argument("n_rot must be even and in [2, min(head_dim, 256)], got " + std::to_string(p->n_rot));
    if (p->pos < 0 || p->pos >= p->capacity) throw std::invalid_argument("pos must lie in [0, capacity)");
    if (!(p->freq_base > 0.0f)) throw std::invalid_argument("freq_base must be positive");
    if (p->x == nullptr) throw std::invalid_argument("x is null");
    const auto check_form = [&](const char* what, const void* q, const void* d, const void* f16) {
      const bool packed = q != nullptr && d != nullptr;
      if (packed == (f16 != nullptr) || (!packed && (q != nullptr || d != nullptr)))
        throw std::invalid_argument(std::string(what) + ": give either the packed pair or the fp16 cache");
      if (packed && p->head_dim % 32 != 0) throw std::invalid_argument("a packed cache needs head_dim % 32 == 0");
    };
    check_form("K", p->k_q, p->k_d, p->k_f16);
    check_form("V", p->v_q, p->v_d, p->v_f16);
    if ((p->q_norm != nullptr || p->k_norm != nullptr) && p->head_dim > 2 * kRopeThreads)
      throw std::invalid_argument("q/k norms need head_dim <= 256");
    alap_launch(rope_store_1_kernel, unsigned(p->n_head + 2 * p->n_kv_head), kRopeThreads, 0, as_stream(stream), *p);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_get_rows(uint32_t dtype, const void* d_table, int n_rows, int n_cols, const int32_t* d_ids, int n_ids,
                 float* d_out, void* stream) {
  return gpu_api_call("gpu_get_rows", [&] {
    const wtype_geom g = wtype_geometry(dtype);
    if (g.block_elems == 0) throw std::invalid_argument("table type id " + std::to_string(dtype) + " is not supported");
    if (n_rows <= 0 || n_cols <= 0 || n_ids < 0) throw std::invalid_argument("bad n_rows, n_cols or n_ids");
    if (n_cols % g.block_elems != 0) throw std::invalid_argument("n_cols is not a multiple of the block size");
    if (n_ids == 0) return;
    if (n_ids > 0x7fffffff) throw std::invalid_argument("too many ids");
    if (d_table == nullptr || d_ids == nullptr || d_out == nullptr) throw std::invalid_argument("null pointer");
    if (reinterpret_cast<uintptr_t>(d_table) % 16 != 0) throw std::invalid_argument("d_table is not 16-byte aligned");
    const size_t rb = size_t(n_cols / g.block_elems) * g.block_bytes;
    const auto s = as_stream(stream);
    if (!with_wtype(dtype, [&](auto t) { launch_get_rows<decltype(t)::value>(d_table, rb, n_rows, n_cols, d_ids, n_ids, d_out, s); }))
      throw std::invalid_argument("unsupported table type");
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_argmax(const float* d_x, int n, int32_t* d_out, void* stream) {
  return gpu_api_call("gpu_argmax", [&] {
    if (n <= 0) throw std::invalid_argument("n must be positive");
    if (d_x == nullptr || d_out == nullptr) throw std::invalid_argument("null pointer");
    alap_launch(argmax_kernel, 1, 1024, 0, as_stream(stream), d_x, n, d_out);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

int gpu_kv_f16_store(const float* d_x, uint16_t* d_cache, int n_tokens, int n_kv_head, int head_dim, int capacity,
                     int pos0, void* stream) {
  return gpu_api_call("gpu_kv_f16_store", [&] {
    if (n_kv_head <= 0 || head_dim <= 0 || n_tokens < 0) throw std::invalid_argument("bad n_tokens, n_kv_head or head_dim");
    if (pos0 < 0 || pos0 > capacity - n_tokens)
      throw std::invalid_argument("rows pos0..pos0+n_tokens must lie in [0, capacity)");
    if (n_tokens == 0) return;
    if (d_x == nullptr || d_cache == nullptr) throw std::invalid_argument("d_x or d_cache is null");
    const size_t count = size_t(n_tokens) * n_kv_head * head_dim;
    alap_launch(kv_f16_store_kernel, grid_for(count), kThreads, 0, as_stream(stream),
                d_x, d_cache, n_tokens, n_kv_head, head_dim, capacity, pos0);
    ALAP_GPU_CHECK_LAUNCH();
  });
}

}  // extern "C"

}  // namespace alap::gpu
