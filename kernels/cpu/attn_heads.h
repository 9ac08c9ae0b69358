// Private to kernels/cpu: the grouped-head attention loops (all query heads of one KV group per
// pass, alap/kernels/attn.h and kv_k8.h "_heads" calls) of each ISA variant, as one table that
// dispatch.cpp picks beside the CpuVariant. Not a public header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::kernels {

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
}  // namespace avx2

namespace avxvnni {  // AVX2 + FMA + F16C + AVX-VNNI: the same loop with VEX vpdpbusd
void k8_scores_heads8(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                      size_t head_dim, size_t n, float scale, float* scores, size_t ld);
}  // namespace avxvnni

namespace avx512vnni {  // AVX-512 F/BW/VL/VNNI
extern const AttnHeadsVariant kAttnHeads;
}

}  // namespace alap::kernels
