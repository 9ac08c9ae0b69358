// SSSE3 + SSE4.1 attention kernels (the sse4 variant). For now the scalar twins; being replaced
// by vector loops.
#include "attn_heads.h"
#include "cpu_variants.h"

namespace alap::kernels::sse4 {

float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim) {
  return scalar::k8_dot(a, da, b, db, head_dim);
}
void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim, size_t n,
               float scale, float* scores) {
  scalar::k8_scores(q, dq, k, dk, head_dim, n, scale, scores);
}
void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores) {
  scalar::f16_scores(q, k, head_dim, n, scale, scores);
}
void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out) {
  scalar::f16_accum_v(p, v, head_dim, n, out);
}
void softmax(float* x, size_t n) { scalar::softmax(x, n); }
void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out) {
  scalar::k8_accum_v(p, q, d, head_dim, block, n, out);
}

const AttnHeadsVariant kAttnHeads = {&scalar::k8_scores_heads,   &scalar::f16_scores_heads, &scalar::softmax_partial,
                                     &scalar::f16_accum_v_heads, &scalar::k8_accum_v_heads, &scalar::k8_quantize,
                                     &scalar::kv_row_to_fp16};

}  // namespace alap::kernels::sse4
