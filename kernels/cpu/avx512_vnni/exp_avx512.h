// The 16-lane exp core shared by the AVX-512-compiled kernels (softmax in attn_vnni.cpp, SiLU in
// activation_vnni.cpp): x = k·ln2 + r with |r| <= ln2/2, and e^r by the AVX2 core's degree-6
// Taylor polynomial (avx2/exp_avx2.h), so each lane's value is the AVX2 one's. Each caller clamps x
// and applies 2^k (vscalefps) its own way. In an anonymous namespace: every ISA file gets its own
// copy, never a weak symbol (isa_weak_symbols_check.sh). Include only from files compiled with the
// AVX-512 flags.
#pragma once

#include <immintrin.h>

namespace alap::kernels::avx512vnni {
namespace {

// e^r for x = k·ln2 + r; k = x / ln2 rounded to nearest, returned through k.
inline __m512 exp_reduced16(__m512 x, __m512& k) {
  k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                           _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), x);  // ln2 split in two for accuracy
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187045e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 720.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}

}  // namespace
}  // namespace alap::kernels::avx512vnni
