// AVX2 elementwise activations (activation.h), 8 lanes at a time and a scalar tail through the
// twin: SiLU(g)·u = g / (1 + exp(−g)) · u, the same operations in the same order as the twin, with
// exp(x) = 2^k · e^r (exp_avx2.h: within 2 ulp of std::exp). Past ln(FLT_MAX) exp is inf, as
// std::exp's, so SiLU of a gate below −88.72 is −0 as the twin's; below −87.3 x is clamped (2^k
// stays a normal float), which leaves 1 + exp(−g) = 1 as the twin's tiny exp does.
#include <immintrin.h>

#include "avx2/exp_avx2.h"
#include "cpu_variants.h"

namespace alap::kernels::avx2 {

namespace {

inline __m256 exp8(__m256 x) {
  const __m256 over = _mm256_cmp_ps(x, _mm256_set1_ps(88.72283f), _CMP_GT_OQ);  // past ln(FLT_MAX): inf
  __m256 k;
  __m256 p = exp_reduced(_mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.72283f)), k);
  // 2^k by the exponent field: k in [−126, 128); 2^128 is split as 2^127 · 2 so it stays finite.
  const __m256i ki = _mm256_cvtps_epi32(k);
  const __m256i big = _mm256_cmpgt_epi32(ki, _mm256_set1_epi32(127));
  const __m256i kc = _mm256_sub_epi32(ki, _mm256_and_si256(big, _mm256_set1_epi32(1)));
  const __m256 two_k = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(kc, _mm256_set1_epi32(127)), 23));
  p = _mm256_mul_ps(p, two_k);
  p = _mm256_blendv_ps(p, _mm256_add_ps(p, p), _mm256_castsi256_ps(big));
  return _mm256_blendv_ps(p, _mm256_set1_ps(__builtin_inff()), over);
}

}  // namespace

void silu_mul(float* gate, const float* up, size_t n) {
  size_t i = 0;
  const __m256 one = _mm256_set1_ps(1.0f);
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_storeu_ps(gate + i, _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(one, e)), _mm256_loadu_ps(up + i)));
  }
  scalar::silu_mul(gate + i, up + i, n - i);
}

// norm.h's rule with its 8 double sums as two 4-lane vectors (sums 0–3 and 4–7), the tail and the
// final order as the scalar twin: the same bits.
void rmsnorm(const float* x, const float* w, size_t n, float eps, float* out) {
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(x + i)), b = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4));
    lo = _mm256_add_pd(lo, _mm256_mul_pd(a, a));
    hi = _mm256_add_pd(hi, _mm256_mul_pd(b, b));
  }
  alignas(32) double part[8];  // the 8 sums, as scalar::rms_inverse (cpu_variants.h) finishes them
  _mm256_store_pd(part, lo);
  _mm256_store_pd(part + 4, hi);
  const float inv = scalar::rms_inverse(part, x, i, n, eps);
  const __m256 vinv = _mm256_set1_ps(inv);
  for (i = 0; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(w + i), _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv)));
  }
  for (; i < n; ++i) out[i] = w[i] * (x[i] * inv);
}

}  // namespace alap::kernels::avx2
