// AVX-512 VNNI variant (256-bit vpdpbusd through AVX512VL): the int8-K dot products and the
// Q8_0/Q4_0 matmul row dots; other weight types use the AVX2 paths. vpdpbusd multiplies unsigned
// by signed bytes, so each pair is fed as |w| and x with w's sign (exact for |w| <= 128).
#include "alap/kernels/kv_k8.h"
#include "avx2/avx2_common.h"

namespace alap::kernels::avx512vnni {

namespace {

using avx2::ActRow;
using avx2::f16_at;

inline __m256i dot_s8s8(__m256i w, __m256i x) {
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
}

inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

float dot_q8_0(const uint8_t* row, const ActRow& x, size_t n_cols) {
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < n_cols / 32; ++b) {
    const uint8_t* blk = row + 34 * b;
    const __m256i p = dot_s8s8(load32(blk + 2), load32(x.q + 32 * b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(f16_at(blk) * x.d[b]), acc);
  }
  return avx2::hsum_ps(acc);
}

float dot_q4_0(const uint8_t* row, const ActRow& x, size_t n_cols) {
  __m256 acc = _mm256_setzero_ps();
  const __m128i m4 = _mm_set1_epi8(0x0F);
  for (size_t b = 0; b < n_cols / 32; ++b) {
    const uint8_t* blk = row + 18 * b;
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2));
    const __m256i u = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(q, 4), m4), _mm_and_si128(q, m4));
    const __m256i p = dot_s8s8(_mm256_sub_epi8(u, _mm256_set1_epi8(8)), load32(x.q + 32 * b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(f16_at(blk) * x.d[b]), acc);
  }
  return avx2::hsum_ps(acc);
}

void matmul(const WeightView& w, const float* x, size_t n_tok, float* y, size_t ldy, size_t row_begin,
            size_t row_end) {
  switch (w.type) {
    case DType::q8_0: return avx2::matmul_act_q8(w, x, n_tok, y, ldy, row_begin, row_end, dot_q8_0);
    case DType::q4_0: return avx2::matmul_act_q8(w, x, n_tok, y, ldy, row_begin, row_end, dot_q4_0);
    default: return avx2::matmul(w, x, n_tok, y, ldy, row_begin, row_end);
  }
}

// Four int32 block sums of blocks k..k+3.
inline __m128i block_sums4(const int8_t* a, const int8_t* b) {
  __m256i v[4];
  for (int i = 0; i < 4; ++i) v[i] = dot_s8s8(load32(a + 32 * i), load32(b + 32 * i));
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// Same f32 steps and order as scalar::k8_dot; head_dim a multiple of 32.
float dot32(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim) {
  const size_t nb = head_dim / 32;
  float acc = 0.0f;
  size_t k = 0;
  for (; k + 4 <= nb; k += 4) {
    const __m128 s = _mm_cvtepi32_ps(block_sums4(a + 32 * k, b + 32 * k));
    const __m128 fa = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(da + k)));
    const __m128 fb = _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(db + k)));
    alignas(16) float p[4];
    _mm_store_ps(p, _mm_mul_ps(s, _mm_mul_ps(fa, fb)));
    acc += p[0];
    acc += p[1];
    acc += p[2];
    acc += p[3];
  }
  for (; k < nb; ++k) {
    const int32_t s = avx2::hsum_epi32(dot_s8s8(load32(a + 32 * k), load32(b + 32 * k)));
    acc += static_cast<float>(s) * (_cvtsh_ss(da[k]) * _cvtsh_ss(db[k]));
  }
  return acc;
}

float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim) {
  if (k8_block_size(head_dim) != 32) return scalar::k8_dot(a, da, b, db, head_dim);
  return dot32(a, da, b, db, head_dim);
}

void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores) {
  if (k8_block_size(head_dim) != 32) return scalar::k8_scores(q, dq, k, dk, head_dim, n, scale, scores);
  const size_t nb = head_dim / 32;
  for (size_t j = 0; j < n; ++j) scores[j] = scale * dot32(q, dq, k + j * head_dim, dk + j * nb, head_dim);
}

}  // namespace

const CpuVariant kVariant = {"avx512vnni", &matmul, &k8_dot, &k8_scores};

}  // namespace alap::kernels::avx512vnni
