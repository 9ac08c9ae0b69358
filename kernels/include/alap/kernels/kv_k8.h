// The packed int8-K cache arithmetic of DESIGN.md "KV cache formats (normative)": blocks of 32
// values (or the whole head when head_dim < 32), d = max|x|/127 stored as fp16, q = round(x/d)
// in [-127, 127], d = 0 gives q = 0. Scores are Σ_blocks d_q·d_k·Σ dot4(q_q, k_q) in int32.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::kernels {

// Values per block for a head dimension: 32, or head_dim itself when head_dim < 32.
// Returns 0 when head_dim is not a multiple of the block (packed modes are refused then).
size_t k8_block_size(size_t head_dim);

// Quantises one head vector x[head_dim] into q[head_dim] and d[head_dim / block] (fp16 bits).
// Dispatched like the attention kernels: the vector variants write the scalar twin's bytes.
void k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d);

// An f16 cache row: out[i] = f32_to_fp16(x[i]) (alap/kernels/fp16.h) for i < n; F16C in the vector
// variants, the same bits.
void kv_row_to_fp16(const float* x, size_t n, uint16_t* out);

// Dequantises one head vector (for tests and the f16 comparison path).
void k8_dequantize(const int8_t* q, const uint16_t* d, size_t head_dim, float* x);

// Dot product of two packed head vectors: Σ_b d_a[b]·d_b[b]·Σ_i a[i]·b[i], int32 inside a block.
float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim);

// scores[j] = scale · k8_dot(q, k_j) for n keys laid out [n][head_dim] int8 and [n][head_dim/block]
// fp16 scales (the cache's per-head layout).
void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores);

// All query heads of one KV group at once: scores[h·ld + j] = scale · k8_dot(q_h, k_j) for
// n_heads packed queries q [n_heads][head_dim], dq [n_heads][head_dim/block], n keys (ld >= n).
// Bit for bit k8_scores per head; the AVX-512 VNNI variant reads each key row once for all heads
// (vpdpbusd on k + 128 against the signed query, minus 128·Σq per block).
void k8_scores_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld);

}  // namespace alap::kernels
