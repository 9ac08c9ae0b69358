// Private to kernels/cpu: the grouped-head attention loops (all query heads of one KV group per
// pass, alap/kernels/attn.h and kv_k8.h "_heads" calls) of each ISA variant, as one table that
// dispatch.cpp picks beside the CpuVariant. Not a public header.
#pragma once

#include <xmmintrin.h>

#include <cstddef>
#include <cstdint>

namespace alap::kernels {

// Memory reads ahead, shared by the grouped kernels of every SIMD variant: while a kernel works on
// rows [0, n) of a KV head's arrays it asks for rows [n, 2n). The forward pass walks a KV head's
// keys block after block, so that is the next block, fetched while this one computes (without it
// the blocks' bursts of loads leave DRAM idle between them). Prefetches never fault, past the
// cache's end too. prefetcht0 (into L1 and L2): on the Zen 5 machine of docs/bench/cpu.md
// "Decode attention at depth, one thread (session 7)" prefetcht1 left one thread's cold decode
// attention (k8, f16) at 17-20 GB/s and prefetcht0 reaches 27-28 (the next block, 16-32 KB a
// stream, fits beside the current one in a 48 KB L1; nearer or farther distances, or t1 far with
// t0 near, measured no better). Always inlined: GCC 12 finds an out-of-line helper whose only
// effect is prefetches free of side effects and deletes the calls (measured: 31 prefetch sites of
// the AVX2 kernels became 1).
__attribute__((always_inline)) inline void prefetch_ahead(const void* first, size_t bytes) {
  const char* p = static_cast<const char*>(first);
  for (size_t b = 0; b < bytes; b += 64) _mm_prefetch(p + b, _MM_HINT_T0);
}

// What a V sum reads ahead as it goes: row j + n of `rows` with row j (null: nothing), and the
// scales of rows [j + n, j + n + 16) every 16th row (null: none).
struct AttnReadAhead {
  const char* rows = nullptr;
  size_t row_bytes = 0;
  const char* scales = nullptr;
  size_t scale_bytes = 0;
};

// The reads of AttnReadAhead for key j of a call over n keys.
__attribute__((always_inline)) inline void read_ahead(const AttnReadAhead& a, size_t n, size_t j) {
  prefetch_ahead(a.rows + (n + j) * a.row_bytes, a.row_bytes);
  if (a.scales != nullptr && j % 16 == 0) prefetch_ahead(a.scales + (n + j) * a.scale_bytes, 16 * a.scale_bytes);
}

struct AttnHeadsVariant {
  void (*k8_scores_heads)(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                          size_t head_dim, size_t n, float scale, float* scores, size_t ld);
  void (*f16_scores_heads)(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                           float* scores, size_t ld);
  void (*softmax_partial)(float* x, size_t n, float* m, float* l);
  void (*f16_accum_v_heads)(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                            float* out);
  void (*k8_accum_v_heads)(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                           size_t head_dim, size_t block, size_t n, float* out);
  // The cache's per-token writes and the packed queries (kv_k8.h): k8_quantize and kv_row_to_fp16.
  void (*k8_quantize)(const float* x, size_t head_dim, int8_t* q, uint16_t* d);
  void (*kv_row_to_fp16)(const float* x, size_t n, uint16_t* out);
};

namespace scalar {
extern const AttnHeadsVariant kAttnHeads;
void k8_scores_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld);
void f16_scores_heads(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld);
void softmax_partial(float* x, size_t n, float* m, float* l);
void f16_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                       float* out);
void k8_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                      size_t head_dim, size_t block, size_t n, float* out);
void k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d);
void kv_row_to_fp16(const float* x, size_t n, uint16_t* out);
}  // namespace scalar

namespace avx2 {  // AVX2 + FMA + F16C; also used by the avxvnni variant
extern const AttnHeadsVariant kAttnHeads;
void softmax_partial(float* x, size_t n, float* m, float* l);
void f16_scores_heads(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld);
void f16_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                       float* out);
void k8_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                      size_t head_dim, size_t block, size_t n, float* out);
void k8_scores_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld);
// The grouped packed-K scores of 8 keys per ymm (avx2/k8_heads_avx2.inc; k8_scores_heads above
// is one k8_scores per head): what dispatch.cpp runs for the avx2 variant.
void k8_scores_heads8(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                      size_t head_dim, size_t n, float scale, float* scores, size_t ld);
// Also the AVX-512 table's (8 lanes serve a 32-value block well enough).
void k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d);
void kv_row_to_fp16(const float* x, size_t n, uint16_t* out);
}  // namespace avx2

namespace avxvnni {  // AVX2 + FMA + F16C + AVX-VNNI: the same loop with VEX vpdpbusd
void k8_scores_heads8(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                      size_t head_dim, size_t n, float scale, float* scores, size_t ld);
}  // namespace avxvnni

namespace avx512vnni {  // AVX-512 F/BW/VL/VNNI
extern const AttnHeadsVariant kAttnHeads;
}

}  // namespace alap::kernels
