// The int8-K cache rule of DESIGN.md "KV cache formats (normative)" in plain C++: quantise (and the
// f16 cache's row store), dequantise, and the scalar twins of the packed dot product. SIMD dots and
// the vector quantiser live in avx2/ and avx512_vnni/.
#include <algorithm>
#include <cmath>

#include "alap/kernels/kv_k8.h"
#include "attn_heads.h"
#include "cpu_variants.h"

namespace alap::kernels {

size_t k8_block_size(size_t head_dim) {
  if (head_dim == 0) return 0;
  if (head_dim < 32) return head_dim;
  return head_dim % 32 == 0 ? 32 : 0;
}

namespace {
size_t checked_block(const char* where, size_t head_dim) {
  const size_t block = k8_block_size(head_dim);
  if (block == 0) {
    throw std::invalid_argument(std::string(where) + ": head_dim " + std::to_string(head_dim) +
                                " is not a multiple of the 32-value k8 block");
  }
  return block;
}
}  // namespace

// The rule itself (the public k8_quantize dispatches: dispatch.cpp); the vector variants keep
// these operations, so they write the same bytes.
void scalar::k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d) {
  const size_t block = checked_block("k8_quantize", head_dim);
  for (size_t b = 0; b < head_dim / block; ++b) {
    const float* xb = x + b * block;
    float amax = 0.0f;
    for (size_t i = 0; i < block; ++i) amax = std::max(amax, std::fabs(xb[i]));
    const float db = amax / 127.0f;  // unrounded f32 d quantises; its fp16 is stored
    d[b] = f32_to_fp16(db);
    for (size_t i = 0; i < block; ++i) {
      const float v = db == 0.0f ? 0.0f : std::roundf(xb[i] / db);
      // fmax/fmin, not clamp: a NaN (a NaN or infinite input) becomes -127 as on the GPU (fmaxf), never
      // an undefined float-to-int8 conversion.
      q[b * block + i] = static_cast<int8_t>(std::fmin(std::fmax(v, -127.0f), 127.0f));
    }
  }
}

void scalar::kv_row_to_fp16(const float* x, size_t n, uint16_t* out) {
  for (size_t i = 0; i < n; ++i) out[i] = f32_to_fp16(x[i]);
}

void k8_dequantize(const int8_t* q, const uint16_t* d, size_t head_dim, float* x) {
  const size_t block = checked_block("k8_dequantize", head_dim);
  for (size_t b = 0; b < head_dim / block; ++b) {
    const float db = fp16_to_f32(d[b]);
    for (size_t i = 0; i < block; ++i) x[b * block + i] = db * static_cast<float>(q[b * block + i]);
  }
}

namespace scalar {

// Σ_b float(Σ_i a·b as int32) · (fp16(da[b])·fp16(db[b])), summed over b in order in f32.
// The SIMD variants keep exactly this order, so they agree bit for bit.
float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim) {
  const size_t block = checked_block("k8_dot", head_dim);
  float acc = 0.0f;
  for (size_t k = 0; k < head_dim / block; ++k) {
    int32_t isum = 0;
    for (size_t i = 0; i < block; ++i) isum += int32_t{a[k * block + i]} * int32_t{b[k * block + i]};
    acc += static_cast<float>(isum) * (fp16_to_f32(da[k]) * fp16_to_f32(db[k]));
  }
  return acc;
}

void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores) {
  const size_t n_blocks = head_dim / checked_block("k8_scores", head_dim);
  for (size_t j = 0; j < n; ++j) {
    scores[j] = scale * k8_dot(q, dq, k + j * head_dim, dk + j * n_blocks, head_dim);
  }
}

void k8_scores_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld) {
  const size_t n_blocks = head_dim / checked_block("k8_scores_heads", head_dim);
  for (size_t h = 0; h < n_heads; ++h) {
    k8_scores(q + h * head_dim, dq + h * n_blocks, k, dk, head_dim, n, scale, scores + h * ld);
  }
}

const CpuVariant kVariant = {"scalar",     &matmul_q,    &quantize_acts, &k8_dot,
                             &k8_scores,   &f16_scores,  &f16_accum_v,   &softmax,  &k8_accum_v};

}  // namespace scalar

}  // namespace alap::kernels
