// Attention inner loops on the CPU (scores against an fp16 K cache, softmax, and the probability-
// weighted sums of fp16 or packed int8 V rows), dispatched like matmul; packed-K scores are
// k8_scores in kv_k8.h. Not the head/position loops: those are the forward pass's (core/model).
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::kernels {

// scores[j] = scale · Σ_i q[i]·fp16(k[j][i]) for n keys laid out [n][head_dim] (fp16 bits).
void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores);

// In place: x[j] = exp(x[j] − max x) / Σ exp(x − max x) for j in [0, n), n >= 1. The fast
// variants use a vector exp (within 2 ulp of std::exp) and sum 8 lanes at a time (results within
// a few ulp of the scalar twin, which uses std::exp and sums in order).
void softmax(float* x, size_t n);

// out[i] += Σ_j p[j]·fp16(v[j][i]) for n value rows [n][head_dim]; j in order.
void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out);

// Packed V (the k8 rule, blocks of `block` values): out[i] += Σ_j p[j]·fp16(d[j][i/block])·q[j][i].
void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out);

}  // namespace alap::kernels
