// The 8-lane exp core shared by the AVX2-compiled kernels (softmax in attn_avx2.cpp, SiLU in
// activation_avx2.cpp): x = k·ln2 + r with |r| <= ln2/2, and e^r by its degree-6 Taylor polynomial
// (error < 2 ulp on that range). Each caller clamps x and applies 2^k its own way. Include only
// from files compiled with -mavx2 -mfma.
#pragma once

#include <immintrin.h>

namespace alap::kernels::avx2 {

// e^r for x = k·ln2 + r; k = x / ln2 rounded to nearest, returned through k.
inline __m256 exp_reduced(__m256 x, __m256& k) {
  k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), x);  // ln2 split in two for accuracy
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  return _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
}

}  // namespace alap::kernels::avx2
