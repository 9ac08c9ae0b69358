// Private to kernels/cpu: the grouped-head attention loops (all query heads of one KV group per
// pass, alap/kernels/attn.h and kv_k8.h "_heads" calls) of each ISA variant, as one table that
// dispatch.cpp picks beside the CpuVariant. Not a public header.
#pragma once

#include <xmmintrin.h>

#include <cstddef>
#include <cstdint>

#include "alap/kernels/attn.h"

namespace alap::kernels {

// Memory reads ahead, shared by the grouped kernels of every SIMD variant: while a kernel works on
// row j of a KV head's arrays it asks for row j + kReadAheadRows. The rows of a KV head are
// contiguous and the forward pass walks them block after block, so near a block's end that is the
// next block's first rows. Prefetches never fault, past the cache's end too. prefetcht0 (into L1
// and L2). The distance:
// - Session 7, on a Zen 5 machine ("Decode attention at depth, one thread (session 7)"), read the
//   whole next block ahead (n rows, 16-32 KB a stream): prefetcht1 left one thread's cold decode
//   attention at 17-20 GB/s and prefetcht0 reached 27-28; nearer or farther measured no better.
// - Session 11, on an Intel Xeon (2 MB L2, docs/bench/cpu.md "Decode attention read-ahead on an
//   Intel Xeon (session 11)"): 64 rows (4 KB of packed K, 8 KB of fp16 V) is 9-13% faster cold
//   than a whole block with prefetcht0 (48-96 rows alike, 128 slower; prefetcht1 or t2 at 64 rows
//   no better). A whole block ahead with prefetcht2 did as well as 64 rows: the block-ahead reads,
//   16-32 KB a stream beside the block in use, overflow a 48 KB L1 when they go there.
// Always inlined: GCC 12 finds an out-of-line helper whose only effect is prefetches free of side
// effects and deletes the calls (measured: 31 prefetch sites of the AVX2 kernels became 1).
constexpr size_t kReadAheadRows = kAttnReadAheadRows;  // alap/kernels/attn.h

__attribute__((always_inline)) inline void prefetch_ahead(const void* first, size_t bytes) {
  const char* p = static_cast<const char*>(first);
  for (size_t b = 0; b < bytes; b += 64) _mm_prefetch(p + b, _MM_HINT_T0);
}

// What a V sum reads ahead as it goes: row j + kReadAheadRows of `rows` with row j (null: nothing),
// and the scales of rows [j + kReadAheadRows, j + kReadAheadRows + 16) every 16th row (null: none).
struct AttnReadAhead {
  const char* rows = nullptr;
  size_t row_bytes = 0;
  const char* scales = nullptr;
  size_t scale_bytes = 0;
};

// The reads of AttnReadAhead for key j.
__attribute__((always_inline)) inline void read_ahead(const AttnReadAhead& a, size_t j) {
  prefetch_ahead(a.rows + (j + kReadAheadRows) * a.row_bytes, a.row_bytes);
  if (a.scales != nullptr && j % 16 == 0) {
    prefetch_ahead(a.scales + (j + kReadAheadRows) * a.scale_bytes, 16 * a.scale_bytes);
  }
}

// Rows a pass asks for beside its own, as it goes: with its rows [j, j + r), rows [j, j + r) of
// `rows` and of `scales` (null: none). The 256-bit variants' scores pass of a block asks so for the
// block's V rows (attn_block_heads): their V sum takes 16 lanes a pass, so its first pass waited on
// the reads and the other three were arithmetic alone. Cold attention (docs/bench/cpu.md, "Decode
// attention: V read with the scores (session 14)"): a Zen 3 core f16 −19%, k8 −18%, k8v8 level; an
// Intel Xeon's AVX2 path level (−4…+2%); its AVX-512 kernels slower (+5…+22%), so not there.
struct AttnAlong {
  const char* rows = nullptr;
  size_t row_bytes = 0;
  const char* scales = nullptr;
  size_t scale_bytes = 0;
};

// The reads of AttnAlong for rows [j, j + r).
__attribute__((always_inline)) inline void read_along(const AttnAlong& a, size_t j, size_t r) {
  if (a.rows != nullptr) prefetch_ahead(a.rows + j * a.row_bytes, r * a.row_bytes);
  if (a.scales != nullptr) prefetch_ahead(a.scales + j * a.scale_bytes, r * a.scale_bytes);
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

namespace sse4 {  // SSSE3 + SSE4.1 (sse4/attn_sse4.cpp)
extern const AttnHeadsVariant kAttnHeads;
}  // namespace sse4

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
// is one k8_scores per head): what dispatch.cpp runs for the avx2 variant. `along`: rows to ask
// for as the keys go (AttnAlong).
void k8_scores_heads8(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                      size_t head_dim, size_t n, float scale, float* scores, size_t ld, const AttnAlong& along = {});
using K8ScoresHeads8 = void (*)(const int8_t*, const uint16_t*, size_t, const int8_t*, const uint16_t*, size_t, size_t,
                                float, float*, size_t, const AttnAlong&);
// The packed V sum of attn.h (the v16 rule) with pairs of keys through vpmaddwd
// (avx2/k8_heads_avx2.inc); read_ahead: ask for the rows after the call's as it goes.
void k8_accum_v_heads16(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                        size_t head_dim, size_t block, size_t n, float* out, bool read_ahead);
using K8AccumV16 = void (*)(const float*, size_t, size_t, const int8_t*, const uint16_t*, size_t, size_t, size_t,
                            float*, bool);
// attn_block_heads (alap/kernels/attn.h) with the block's V asked for while its scores run (k8s:
// the variant's k8_scores_heads8, v16 its packed V sum), the V sum then without its own read-ahead.
void attn_block_heads(const AttnBlock& b, size_t n_heads, size_t n, float scale, float* scores, size_t ld, float* m,
                      float* l, float* out, K8ScoresHeads8 k8s, K8AccumV16 v16);
// The AVX-VNNI table's too (the AVX-512 one has its own k8_quantize, 16 lanes).
void k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d);
void kv_row_to_fp16(const float* x, size_t n, uint16_t* out);
}  // namespace avx2

namespace avxvnni {  // AVX2 + FMA + F16C + AVX-VNNI: the same loop with VEX vpdpbusd
void k8_scores_heads8(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                      size_t head_dim, size_t n, float scale, float* scores, size_t ld, const AttnAlong& along = {});
// The same V sum with VEX vpdpwssd.
void k8_accum_v_heads16(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                        size_t head_dim, size_t block, size_t n, float* out, bool read_ahead);
}  // namespace avxvnni

namespace avx512vnni {  // AVX-512 F/BW/VL/VNNI
extern const AttnHeadsVariant kAttnHeads;
}

}  // namespace alap::kernels
