// AVX2 int8-K dot products (maddubs on |b| and sign(a, b)) and the AVX2 variant table.
// Same block order and f32 steps as scalar::k8_dot, so results agree bit for bit; heads whose
// block is not 32 (head_dim < 32) go to the scalar twin.
#include "alap/kernels/kv_k8.h"
#include "avx2/avx2_common.h"

namespace alap::kernels::avx2 {

namespace {

// Four int32 sums Σ a·b of blocks k..k+3 (32 lanes each); |a| <= 127 keeps maddubs exact for
// every key code b, −128 included (|b| = 128 as unsigned, pairs <= 2·128·127).
inline __m128i block_sums4(const int8_t* a, const int8_t* b) {
  __m256i v[4];
  for (int i = 0; i < 4; ++i) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32 * i));
    const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 32 * i));
    const __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(vb), _mm256_sign_epi8(va, vb));
    v[i] = _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
  }
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(v[0], v[1]), _mm256_hadd_epi32(v[2], v[3]));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

inline int32_t block_sum1(const int8_t* a, const int8_t* b) {
  const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  const __m256i p16 = _mm256_maddubs_epi16(_mm256_abs_epi8(vb), _mm256_sign_epi8(va, vb));
  return hsum_epi32(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
}

// head_dim a multiple of 32 (checked by the callers).
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
    acc += static_cast<float>(block_sum1(a + 32 * k, b + 32 * k)) * (_cvtsh_ss(da[k]) * _cvtsh_ss(db[k]));
  }
  return acc;
}

}  // namespace

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

const CpuVariant kVariant = {"avx2",      &matmul,     &quantize_acts, &k8_dot,    &k8_scores,
                             &f16_scores, &f16_accum_v, &softmax,      &k8_accum_v, &matmul_packed,
                             &silu_mul,   &packed_reads_256, &quantize_acts_256, &rmsnorm};

}  // namespace alap::kernels::avx2
