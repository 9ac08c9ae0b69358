// The 16-lane exp core shared by the AVX-512-compiled kernels (softmax in attn_vnni.cpp, SiLU in
// activation_vnni.cpp and in the products' SwiGLU tiles, packed_vnni.cpp): x = k·ln2 + r with
// |r| <= ln2/2, and e^r by the AVX2 core's degree-6 Taylor polynomial (avx2/exp_avx2.h), so each
// lane's value is the AVX2 one's. Each caller clamps x and applies 2^k (vscalefps) its own way. In
// an anonymous namespace: every ISA file gets its own copy, never a weak symbol
// (isa_weak_symbols_check.sh). Include only from files compiled with the AVX-512 flags.
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

// e^x for the SwiGLU gate, the AVX2 exp8's steps 16 lanes wide (its clamps, its Taylor polynomial
// on x = k·ln2 + r), with 2^k applied by vscalefps, which gives p·2^k rounded once as the AVX2
// exponent-field product does (k in [−126, 128]; 2^128·p overflows to inf there as here).
inline __m512 exp16(__m512 x) {
  const __mmask16 over = _mm512_cmp_ps_mask(x, _mm512_set1_ps(88.72283f), _CMP_GT_OQ);
  const __m512 xc = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.72283f));
  __m512 k;
  const __m512 p = exp_reduced16(xc, k);
  return _mm512_mask_blend_ps(over, _mm512_scalef_ps(p, k), _mm512_set1_ps(__builtin_inff()));
}

// SiLU(g) · u = g / (1 + e^−g) · u in 16 lanes: silu_mul's step (activation.h), and the SwiGLU
// tiles' (matmul_swiglu, quant.h), one definition so that both give the same bits.
inline __m512 silu_mul16(__m512 g, __m512 u) {
  const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
  return _mm512_mul_ps(_mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e)), u);
}

}  // namespace
}  // namespace alap::kernels::avx512vnni
