// Host API of the GPU library's non-attention work: the device itself (memory, streams, copies)
// and every kernel of a llama-family forward pass besides attention (kernels/gpu/attn_k8.h):
// weight products on every weight type the CPU engine supports, RMSNorm, RoPE, SwiGLU, adds,
// embedding lookup, argmax, the best logits for the sampler. Plain C linkage and plain pointers,
// like attn_k8.h, so core/runtime can load the library with dlopen and resolve these names
// without GPU headers.
// Not the forward pass itself (core/model drives these calls) and not attention.
//
// Conventions: every pointer named d_* or documented "device" is device memory; `stream` is a
// cudaStream_t / hipStream_t or null (the default stream). Every call returns 0 on success and
// non-zero on bad parameters or a runtime error, with the message in gpu_error_message()
// (attn_k8.h). Kernel launches are asynchronous on `stream`.
// Activations are fp32, row-major, token-major: x[t][c] at x + t*n_cols + c.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::gpu {

// The version of this interface (the functions of ops.h and attn_k8.h and their structs). The
// library returns the one it was built with from gpu_abi_version(); the app refuses a library
// whose version differs from its own (a struct read with another layout would go wrong quietly).
// Raise it whenever a function or struct here changes.
// 2: attn_decode_params::pos_dev and attn_decode_ctx_limit; gpu_rope_store_params q_norm, k_norm,
//    norm_eps and pos_dev.
// 3: gpu_blas_scratch_bytes and gpu_matmul_blas.
// 4: gpu_blas_status.
inline constexpr int kGpuAbiVersion = 4;

// The part of gpu_blas_scratch_bytes that holds one slice of fp16 weights.
inline constexpr size_t kGpuBlasSliceBytes = size_t(64) << 20;

extern "C" {

// ---- device --------------------------------------------------------------------------------

// kGpuAbiVersion as the library was built.
int gpu_abi_version(void);

struct gpu_device_info {
  char name[256];          // "NVIDIA H200", "AMD Radeon RX 7900 XTX"
  char arch[64];           // "sm_90", "gfx1100"
  uint64_t total_bytes;    // device memory
  uint64_t free_bytes;     // free now (cudaMemGetInfo / hipMemGetInfo)
  int multiprocessors;     // SMs / CUs
  int runtime_version;     // cudaRuntimeGetVersion / hipRuntimeGetVersion
};

// Number of usable devices (0 when the runtime finds none; the message then says why, e.g. the
// driver is missing or too old, although the call returns 0). Returns non-zero only when the
// runtime itself fails to start.
int gpu_device_count(int* count);
// Makes `device` current for this thread and fills info. Non-zero when it does not exist.
int gpu_device_open(int device, gpu_device_info* info);
// Free and total memory of the current device now.
int gpu_mem_info(uint64_t* free_bytes, uint64_t* total_bytes);

int gpu_alloc(void** d_ptr, size_t bytes);  // non-zero (and *d_ptr = null) when out of memory
int gpu_release(void* d_ptr);               // null is allowed
int gpu_copy_to_device(void* d_dst, const void* h_src, size_t bytes, void* stream);
int gpu_copy_to_host(void* h_dst, const void* d_src, size_t bytes, void* stream);  // read h_dst after gpu_stream_sync
// Page-locked host memory (cudaHostAlloc / hipHostMalloc): copies to and from it run at the bus's
// rate without a staging copy (the H200 host: a 600 KB row of logits 18 µs against 80 µs from a
// plain allocation, docs/bench/gpu.md "Session 18"). Non-zero (and *h_ptr = null) when the runtime
// cannot lock that much; the caller then uses ordinary memory.
int gpu_host_alloc(void** h_ptr, size_t bytes);
int gpu_host_release(void* h_ptr);  // null is allowed
int gpu_copy_on_device(void* d_dst, const void* d_src, size_t bytes, void* stream);
int gpu_fill_zero(void* d_ptr, size_t bytes, void* stream);
int gpu_stream_create(void** stream);
int gpu_stream_destroy(void* stream);
int gpu_stream_sync(void* stream);  // waits; reports faults of earlier kernels on it

// ---- weight products -----------------------------------------------------------------------

// Whether weights of ggml type id `dtype` (kernels/include/alap/kernels/dtype.h) can be multiplied:
// F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS.
int gpu_matmul_supported(uint32_t dtype);

// Bytes of the quantised-activation buffer for n_tokens rows of n_cols (n_cols a multiple of 32).
size_t gpu_act_q8_bytes(int n_tokens, int n_cols);
// Quantises activations once per product input (shared by, e.g., Q/K/V or gate/up): blocks of 32
// values, d = max|x|/127, q = round(x/d) (the CPU's quantize_activations rule), plus whatever
// per-block sums the products need, into d_xq (gpu_act_q8_bytes bytes). The decode attention can
// write these bytes for its own output (attn_decode_params::out_q8, attn_k8.h) instead.
int gpu_quantize_act_q8(const float* d_x, void* d_xq, int n_tokens, int n_cols, void* stream);

// y[t][r] = Σ_c W[r][c]·x[t][c] for t < n_tokens, r < n_rows. W is the GGUF tensor as stored
// (n_rows rows of dtype_row_bytes(n_cols) bytes) in device memory; y is [n_tokens][n_rows] fp32.
// Quantised types read d_xq (from gpu_quantize_act_q8 on the same x) with dot4 on int8; F32, F16
// and BF16 read d_x. Pass both. n_tokens = 1 is the decode matrix-vector path; larger n_tokens use
// the matrix-matrix (prefill) path. beta = 0 overwrites y (never reads it); beta = 1 adds to y
// (residual fused). A decode product (n_tokens = 1) reads y before its programmatic-dependent
// wait (gpu_pdl.h), so y must not be written by the launch just before it on the stream (a copy
// or any earlier launch may). d_w and d_xq must be 16-byte aligned (gpu_alloc, or a GGUF tensor at its
// 32-byte aligned offset in an uploaded data section); n_cols a multiple of the type's block.
int gpu_matmul(uint32_t dtype, const void* d_w, int n_rows, int n_cols, const float* d_x, const void* d_xq,
               int n_tokens, float* d_y, float beta, void* stream);

// Prefill products through the vendor BLAS (matmul_blas.hip: cuBLAS with CUDA, rocBLAS with HIP,
// each opened at run time and checked once on a product of known result): the weights dequantised
// to fp16 in slices of rows, x rounded to fp16 (finite values beyond ±65504 held there), one fp16
// GEMM with fp32 accumulation per slice. Closer to the exact product than gpu_matmul's int8
// activations, but not the same bits.
// Device scratch for products of up to max_tokens tokens over up to max_cols columns; 0 when this
// library has no BLAS (none found, or it failed its check), when BLAS would not be taken for
// max_tokens, or when ALAP_GPU_PREFILL names one of gpu_matmul's kernels. Its last
// kGpuBlasSliceBytes hold the fp16 weights of one GEMM; a smaller scratch works while it holds 16
// rows of them (the weights then go in more, smaller slices).
size_t gpu_blas_scratch_bytes(int max_tokens, int max_cols);
// gpu_matmul's contract (d_x must hold x; d_xq is read only when gpu_matmul is taken), with
// d_scratch (256-byte aligned) of scratch_bytes from gpu_blas_scratch_bytes or less. It takes BLAS
// when the library has it, the scratch holds the activations and 16 rows of fp16 weights, n_cols
// is a multiple of 32, the weights are not F32, and the product is large enough to pay for its
// fp16 copy of W (matmul_blas.hip: from 128 tokens on ≥ 2^21 weights, from 1024 on ≥ 2^19; any
// n_tokens > 1 with ALAP_GPU_PREFILL=blas); otherwise it is gpu_matmul. Enqueued on `stream` like gpu_matmul; calls from several threads are
// serialised (one BLAS handle). ALAP_GPU_PREFILL=kernels keeps every product on gpu_matmul (with
// its automatic kernel choice), for comparisons.
int gpu_matmul_blas(uint32_t dtype, const void* d_w, int n_rows, int n_cols, const float* d_x, const void* d_xq,
                    int n_tokens, float* d_y, float beta, void* d_scratch, size_t scratch_bytes, void* stream);

// What gpu_blas_status says about the vendor BLAS of this library.
enum gpu_blas_state : int {
  gpu_blas_ready = 0,         // opened, and its check passed: products may take it
  gpu_blas_unchecked = 1,     // opened, not yet checked (no gpu_blas_scratch_bytes call has asked for it)
  gpu_blas_not_built = 2,     // this library was built without a BLAS
  gpu_blas_off = 3,           // ALAP_GPU_PREFILL names one of gpu_matmul's kernels
  gpu_blas_not_found = 4,     // no candidate library could be opened
  gpu_blas_incomplete = 5,    // a library opened but lacks an entry point, or (rocBLAS) kernels for this GPU
  gpu_blas_failed_check = 6,  // its handle could not be made, or its check product came out wrong
  gpu_blas_refused = 7,       // it passed its check, then refused a product: no longer asked
  gpu_blas_not_looked_for = 8,  // not yet opened: no gpu_blas_scratch_bytes call has asked for one
};
// The vendor BLAS's state (a gpu_blas_state), its name ("cuBLAS", "rocBLAS"; "" when not built) into
// name and the library file it opened ("" when none) into file, each cut to its buffer and
// NUL-terminated (a null buffer or a length of 0 is skipped). Never opens the library, makes its
// handle or runs its check (gpu_blas_scratch_bytes does, for products that may take it): a model
// whose batches are too short for the BLAS loads none.
int gpu_blas_status(char* name, size_t name_len, char* file, size_t file_len);

// ---- elementwise and small kernels ---------------------------------------------------------

// y[r][:] = x[r][:] / sqrt(mean(x[r][:]²) + eps) · w[:]   (w null: no weight). y may alias x.
int gpu_rms_norm(const float* d_x, const float* d_w, float* d_y, int n_cols, int n_rows, float eps, void* stream);
// y[r][c] += b[c] for r < n_rows
int gpu_add_bias(float* d_y, const float* d_b, int n_cols, int n_rows, void* stream);
// y[i] = a[i] + b[i]; y may alias a or b
int gpu_add(const float* d_a, const float* d_b, float* d_y, size_t count, void* stream);
// out[i] = silu(gate[i]) · up[i]; out may alias gate
int gpu_swiglu(const float* d_gate, const float* d_up, float* d_out, size_t count, void* stream);

// RoPE in place on x [n_tokens][n_heads][head_dim], token t at position pos0 + t, rotating the
// first n_rot dims of each head (FORMATS.md RoPE): neox = 0 pairs (2i, 2i+1) (llama), neox = 1
// pairs (i, i + n_rot/2) (qwen2/qwen3). theta_i = (pos·freq_scale) / (freq_base^(2i/n_rot) · f_i)
// with f_i = freq_factors[i] when d_freq_factors is not null (Llama 3 rope_freqs), else 1.
int gpu_rope(float* d_x, int n_tokens, int n_heads, int head_dim, int n_rot, int pos0, float freq_base,
             float freq_scale, const float* d_freq_factors, int neox, void* stream);

// Embedding lookup: out[i][:] = dequantised row ids[i] of table (n_rows rows of n_cols, ggml type
// dtype), for i < n_ids. ids are device memory; callers check them on the host first (an id
// outside [0, n_rows) yields a row of zeros, never an out-of-bounds read). d_table 16-byte aligned.
int gpu_get_rows(uint32_t dtype, const void* d_table, int n_rows, int n_cols, const int32_t* d_ids, int n_ids,
                 float* d_out, void* stream);

// Fused variants (fewer launches per decode step; same arithmetic as the calls they replace):
// gpu_rms_norm followed by gpu_quantize_act_q8 of its output, in one launch: y as gpu_rms_norm
// gives it (y may alias x) and d_xq byte for byte what gpu_quantize_act_q8(y, n_rows, n_cols) gives.
// n_cols a multiple of 32.
int gpu_rms_norm_q8(const float* d_x, const float* d_w, float* d_y, void* d_xq, int n_cols, int n_rows, float eps,
                    void* stream);
// gpu_swiglu then gpu_quantize_act_q8: out[r][c] = silu(gate[r][c])·up[r][c] for r < n_rows,
// c < n_cols (gate, up and out [n_rows][n_cols]; out may alias gate), and out quantised into d_xq
// as for n_rows tokens of n_cols (a multiple of 32), byte for byte.
int gpu_swiglu_q8(const float* d_gate, const float* d_up, float* d_out, void* d_xq, int n_cols, int n_rows,
                  void* stream);
// One token's fused Q/K/V row: x[i] += b[i] for i < n_heads·head_dim (d_b null: no bias), then the
// first n_rot_heads heads rotated as gpu_rope(x, 1, n_rot_heads, ...) at position pos. x is
// [n_heads][head_dim] ([Q heads | K heads | V heads] of one token); same values as gpu_add_bias
// followed by gpu_rope, in one launch.
int gpu_bias_rope_1(float* d_x, const float* d_b, int n_heads, int n_rot_heads, int head_dim, int n_rot, int pos,
                    float freq_base, float freq_scale, const float* d_freq_factors, int neox, void* stream);

// gpu_bias_rope_1 on one token's [Q | K | V] heads (x [n_head + 2·n_kv_head][head_dim]: the bias
// over all, RoPE on the Q and K heads), then its K and V heads written at position pos of the
// cache, in one launch: K packed (k_q, k_d, as kv_k8_store_run writes it) or fp16 (k_f16, as
// gpu_kv_f16_store), V likewise (v_q, v_d or v_f16); give exactly one form for each. Byte for byte
// what the three calls it replaces leave in x and in the cache.
// With q_norm / k_norm (qwen3), each Q / K head is RMS-normalised after its bias and before RoPE,
// as gpu_rms_norm(q, q_norm, q, head_dim, n_head, norm_eps) and the same over the K heads leave it
// (byte for byte; head_dim at most 256), so the calls gpu_add_bias, gpu_rms_norm ×2, gpu_rope,
// and the two stores are one launch. With pos_dev the position is read from device memory when
// the kernel runs (pos is still checked): one captured launch serves every decode position. It
// is read before the kernel's programmatic-dependent wait, so write it before the step's first
// kernel (a copy earlier in stream order), never from the kernel just before. A device position
// outside [0, capacity) leaves x and the cache untouched.
struct gpu_rope_store_params {
  float* x;                    // device, [n_head + 2·n_kv_head][head_dim], rotated in place
  const float* bias;           // device, same length, or null
  int n_head, n_kv_head, head_dim, n_rot, pos;
  float freq_base, freq_scale;
  const float* freq_factors;   // device [n_rot/2] or null
  int neox;                    // 1: NeoX pairs (i, i + n_rot/2); 0: adjacent pairs
  int capacity;                // rows per KV head in the cache
  int8_t* k_q;                 // [n_kv_head][capacity][head_dim], with k_d [n_kv_head][capacity][head_dim/32]
  uint16_t* k_d;
  uint16_t* k_f16;             // [n_kv_head][capacity][head_dim]
  int8_t* v_q;
  uint16_t* v_d;
  uint16_t* v_f16;
  const float* q_norm;         // device [head_dim] or null: RMSNorm weights of every Q head
  const float* k_norm;         // device [head_dim] or null: of every K head
  float norm_eps;              // their epsilon
  const int32_t* pos_dev;      // device, or null: the position is pos
};
int gpu_rope_store_1(const gpu_rope_store_params* p, void* stream);

// Index of the largest of x[0..n) (the first on ties) into *d_out.
int gpu_argmax(const float* d_x, int n, int32_t* d_out, void* stream);

// The m best logits of x[0..n) for the sampler (core/sample LogitsTop), so that a decode step
// sends back these instead of the row: 1 <= m <= 256; ordered by logit descending, then lower
// index; into d_out (device int32 [2 + 2m]): d_out[0] the lowest index of a NaN in x or -1,
// d_out[1] = min(m, n) entries, d_out[2 ..] their indices, d_out[2 + m ..] their logits (float
// bits, exact; a -0 may read +0). d_scratch: gpu_logits_top_scratch_bytes(n) bytes of device
// memory, 8-byte aligned. Two launches (logits_top.hip).
size_t gpu_logits_top_scratch_bytes(int n);
int gpu_logits_top(const float* d_x, int n, int m, int32_t* d_out, void* d_scratch, void* stream);

// Stores n_tokens new fp16 rows at positions pos0.. of a [n_kv_head][capacity][head_dim] fp16 cache
// (K in f16 mode, V in f16 and k8 modes) from x [n_tokens][n_kv_head][head_dim] fp32.
int gpu_kv_f16_store(const float* d_x, uint16_t* d_cache, int n_tokens, int n_kv_head, int head_dim, int capacity,
                     int pos0, void* stream);

// Prefill attention on an fp16 K/V cache (f16 mode): same contract as attn_k8_prefill_run
// (attn_k8.h) with k_f16 = [n_kv_head][capacity][head_dim] fp16 and fp16 V.
struct attn_f16_prefill_params {
  const float* q;          // [n_q][n_head][head_dim]
  const uint16_t* k_f16;
  const uint16_t* v;
  float* out;              // [n_q][n_head][head_dim]
  int n_q;
  int n_head;
  int n_kv_head;
  int head_dim;
  int capacity;
  int pos0;
  float scale;
};
int attn_f16_prefill_run(const attn_f16_prefill_params* p, void* stream);

// ---- graphs: a stream's calls captured once and replayed with one launch ---------------------

// Starts capturing `stream` (not null; CUDA/HIP thread-local capture mode). Until
// gpu_graph_capture_end, the calls enqueued on it are recorded, not run: no kernel executes, and
// this thread must make no synchronising call (gpu_stream_sync, gpu_alloc, gpu_release, copies
// from or to pageable host memory). Non-zero when the runtime cannot capture (the caller then
// launches plainly; nothing was recorded).
int gpu_graph_capture_begin(void* stream);
// Ends the capture of `stream` (always: the stream leaves capture mode even when this fails) and
// makes it executable into *graph_exec: a null *graph_exec gets a new one; an existing one is
// updated in place when the new capture has its topology (same calls, only parameters such as
// positions or context lengths changed: cudaGraphExecUpdate / hipGraphExecUpdate), else destroyed
// and replaced by a new instantiation. Non-zero when a call during the capture failed or the
// graph cannot be instantiated; *graph_exec is then destroyed and null. *updated (may be null) is
// set to 1 when an existing exec was updated in place, 0 when one was instantiated.
int gpu_graph_capture_end(void* stream, void** graph_exec, int* updated);
// Enqueues the captured calls on `stream` (asynchronous, like the calls themselves).
int gpu_graph_launch(void* graph_exec, void* stream);
int gpu_graph_destroy(void* graph_exec);  // null is allowed

}  // extern "C"

}  // namespace alap::gpu
