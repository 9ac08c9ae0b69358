// Host API of the GPU attention over the KV cache: decode (one new query token; f16, k8 and k8v8
// caches), prefill (a run of query tokens with a causal mask, directly on the packed k8 cache) and
// the k8 cache writer. Plain C linkage and plain pointers, so the backend library can be loaded at
// run time (dlopen) without GPU headers. Not the device code: that is attn_k8_kernel.h / *.hip.
//
// Usage (all pointers are device pointers; stream is a cudaStream_t / hipStream_t or null):
//   alap::gpu::attn_decode_params p{};
//   p.q = d_q; p.k_q = d_kq; p.k_d = d_kd; p.v = d_v; p.out = d_out;
//   p.n_head = 32; p.n_kv_head = 8; p.head_dim = 128; p.capacity = 8192; p.n_ctx = 517;
//   p.scale = 1.0f / std::sqrt(128.0f);
//   p.scratch = d_scratch;  // attn_decode_scratch_bytes(p.n_head, p.head_dim) bytes, zeroed once
//   p.out_q8 = d_xq;        // optional: out quantised for the Wo product as well (see the field)
//   if (alap::gpu::attn_k8_decode_run(&p, stream) != 0) fail(alap::gpu::gpu_error_message());
//
// Layouts (DESIGN.md "KV cache formats (normative)"), per layer:
//   q        [n_head][head_dim] fp32          query of the new token, after RoPE
//   k_q      [n_kv_head][capacity][head_dim] int8, 16-byte aligned          (k8, k8v8)
//   k_d      [n_kv_head][capacity][head_dim/32] fp16 bits                   (k8, k8v8)
//   k_f16    [n_kv_head][capacity][head_dim] fp16 bits, 16-byte aligned     (f16)
//   v        [n_kv_head][capacity][head_dim] fp16 bits, 16-byte aligned     (f16, k8)
//   v_q      [n_kv_head][capacity][head_dim] int8, 16-byte aligned          (k8v8)
//   v_d      [n_kv_head][capacity][head_dim/32] fp16 bits                   (k8v8)
//   out      [n_head][head_dim] fp32          softmax(scale·q·Kᵀ)·V over positions 0..n_ctx-1
// Query head h reads KV head h / (n_head / n_kv_head) (GQA).
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::gpu {

// Limits of this kernel generation (checked by attn_decode_check / attn_prefill_check).
inline constexpr int kAttnMaxHeadDim = 256;  // head_dim a multiple of 32, at most this
inline constexpr int kAttnMaxGroup = 16;     // query heads per KV head
inline constexpr int kAttnMaxSplit = 128;    // flash-decoding splits of the context
// 8-byte stamps per block that a -DALAP_ATTN_DIAG=4 build leaves in the scratch (attn_gpu_bench --stamps).
inline constexpr int kAttnStampSlots = 24;

// Launch flags of attn_decode_run_ex.
// kAttnLaunchPdl: programmatic dependent launch (CUDA sm_90, matrix-unit kernels; ignored elsewhere
// and under ALAP_GPU_PDL=0, where the call launches normally). The kernel may start while the
// previous kernel on the stream is still running and streams cache rows 0..n_ctx-2 before waiting
// for it; it reads q and row n_ctx-1 and writes out and scratch only after that kernel has
// finished. So the previous kernel may write q and the newest row (RoPE, the cache store of this
// token) but no older row, and every older writer must have finished before the previous kernel
// started (plain stream order gives that, unless the previous kernel was itself launched with PDL
// and let its dependents start early; this kernel lets them start only after its own wait). A
// following kernel launched with PDL must wait (cudaGridDependencySynchronize) before it reads out.
// kv_k8_store_run, gpu_kv_f16_store and gpu_rope_store_1 let their dependents start once their own
// wait has returned, so this flag overlaps attention with the row store (round 6, H200, attention
// alone after the store: 0.5-0.9 µs faster than a plain launch at 16k-32k contexts, 0.1-0.5 µs
// slower at 1k-4k; in a whole decode step, where every other kernel is a programmatic dependent
// too, faster at 1k-32k alike: docs/bench/gpu.md "Session 33"). The decode step launches attention
// with it.
inline constexpr unsigned kAttnLaunchPdl = 1u;

extern "C" {

struct attn_decode_params {
  const float* q;          // [n_head][head_dim] fp32
  const int8_t* k_q;       // k8/k8v8 K payload, or null for f16
  const uint16_t* k_d;     // k8/k8v8 K scales, or null for f16
  const uint16_t* k_f16;   // f16 K, or null for k8/k8v8
  const uint16_t* v;       // fp16 V (f16, k8), or null for k8v8
  float* out;              // [n_head][head_dim] fp32
  void* scratch;           // attn_decode_scratch_bytes(n_head, head_dim) bytes, zeroed before first use
  int n_head;
  int n_kv_head;           // divides n_head
  int head_dim;
  int capacity;            // rows allocated per KV head (the layout's stride)
  int n_ctx;               // positions to attend, 1..capacity
  int n_split;             // flash-decoding splits; 0 picks one from the device and n_ctx
  float scale;             // usually 1/sqrt(head_dim)
  const int8_t* v_q;       // k8v8 V payload, or null
  const uint16_t* v_d;     // k8v8 V scales, or null
  // Optional (null: not written): out also quantised for the next product, gpu_act_q8_bytes(1,
  // n_head·head_dim) bytes, 16-byte aligned, byte for byte what gpu_quantize_act_q8(out, out_q8, 1,
  // n_head·head_dim) writes (ops.h; the blocks of matmul_kernel.h's act_q8_view), by the block that
  // writes out, so the decode step needs no separate quantiser launch. out is written as well.
  // Under kAttnLaunchPdl it is written after the wait, like out.
  void* out_q8;
  // Optional (null: n_ctx as given): the position of the newest row in device memory, read by the
  // kernel when it runs: it attends n_ctx' = *pos_dev + 1 rows, so one captured launch serves many
  // positions of a decode step replayed from a graph. n_ctx is then a lower bound: the launch cuts
  // the splits for it and serves every n_ctx' in [n_ctx, attn_decode_ctx_limit(p, mode)], with
  // the result of a launch given n_ctx' by value, bit for bit (outside that range the result is
  // wrong, never a read or write out of bounds). Read before the kernel's programmatic-dependent
  // wait, after its first tiles below row n_ctx − 1: write it before the step's first kernel (a
  // copy earlier in stream order), never from the kernel just before. No cluster merge with it.
  const int32_t* pos_dev;
};

// Bytes of scratch a run may use: partial results of the splits (the worst case, kAttnMaxSplit
// splits) and one completion counter per KV head. The caller zero-fills it once after allocating
// (cudaMemset / hipMemset); every run leaves the counters at zero again. One scratch per stream:
// two runs in flight on one scratch corrupt each other.
size_t attn_decode_scratch_bytes(int n_head, int head_dim);

// Validates shapes and pointers for a cache mode (0 f16, 1 k8, 2 k8v8). Returns null when the call
// is supported, else a message naming the field that is wrong.
const char* attn_decode_check(const attn_decode_params* p, int mode);

// The largest n_ctx' that a launch with pos_dev and these params serves (see pos_dev): at least
// p->n_ctx, at most the capacity; -1 on bad parameters (gpu_error_message). The range is the
// split length times the splits that the split rule keeps (attn_splits.h): e.g. 2048 rows
// at a time for the Llama-3-8B geometry on an H200 below 16k context, longer with longer splits.
int attn_decode_ctx_limit(const attn_decode_params* p, int mode);

// Enqueues the attention on `stream` (one kernel: the splits and their combine). Return 0 on success;
// non-zero on bad parameters or a runtime error, with the message in gpu_error_message().
// Asynchronous: faults inside the kernel surface at the next synchronisation.
int attn_f16_decode_run(const attn_decode_params* p, void* stream);   // K f16, V f16
int attn_k8_decode_run(const attn_decode_params* p, void* stream);    // K int8, V f16
int attn_k8v8_decode_run(const attn_decode_params* p, void* stream);  // K int8, V int8
// The same with a cache mode (0 f16, 1 k8, 2 k8v8) and launch flags (kAttnLaunchPdl or 0; 0 is
// exactly the calls above).
int attn_decode_run_ex(const attn_decode_params* p, int mode, unsigned flags, void* stream);

// Prefill: n_q new query tokens at positions pos0..pos0+n_q-1, whose K/V rows are already in the
// cache; token i attends cache rows 0..pos0+i (causal). K is read packed, never copied to f16: on
// CUDA at head_dim 64/128 by int8 mma on the matrix units (attn_prefill_mma.h), else by dot4 on the
// int8 payload; V is fp16 (v) or int8 (v_q/v_d, k8v8). Needs no scratch.
//   q    [n_q][n_head][head_dim] fp32 (token-major, as the projection writes it)
//   out  [n_q][n_head][head_dim] fp32
struct attn_prefill_params {
  const float* q;
  const int8_t* k_q;
  const uint16_t* k_d;
  const uint16_t* v;       // fp16 V, or null when v_q is given
  const int8_t* v_q;       // int8 V (k8v8), or null
  const uint16_t* v_d;     // its scales, or null
  float* out;
  int n_q;                 // query tokens, >= 1
  int n_head;
  int n_kv_head;
  int head_dim;
  int capacity;
  int pos0;                // pos0 + n_q <= capacity
  float scale;
};
const char* attn_prefill_check(const attn_prefill_params* p);
int attn_k8_prefill_run(const attn_prefill_params* p, void* stream);

// Quantises n_tokens new rows and writes them at positions pos0.. of a packed layout (used for K in
// k8/k8v8 and for V in k8v8):
//   k_new [n_tokens][n_kv_head][head_dim] fp32 (the projection after RoPE, token-major)
//   → k_q[h][pos0 + t][:], k_d[h][pos0 + t][:]   (d = max|x|/127 as fp16, q = round(x/d))
struct kv_k8_store_params {
  const float* k_new;
  int8_t* k_q;
  uint16_t* k_d;
  int n_tokens;
  int n_kv_head;
  int head_dim;            // a multiple of 32
  int capacity;
  int pos0;                // pos0 + n_tokens <= capacity
};
int kv_k8_store_run(const kv_k8_store_params* p, void* stream);

// The message of the last failed call on this thread ("" when none).
const char* gpu_error_message(void);

}  // extern "C"

}  // namespace alap::gpu
