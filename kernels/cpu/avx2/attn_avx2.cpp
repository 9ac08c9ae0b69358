// AVX2 + F16C: activation quantisation to int8 blocks (byte-identical to scalar::quantize_acts) and
// the attention inner loops of alap/kernels/attn.h with vcvtph2ps. The V sums multiply then add
// per lane in the scalar order, so they match the scalar twin bit for bit; f16 scores sum 8 lanes
// at a time (tested within rounding of the scalar twin).
#include <algorithm>

#include "avx2/avx2_common.h"

namespace alap::kernels::avx2 {

namespace {
inline __m256 h8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
}  // namespace

void quantize_acts(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256i lim = _mm256_set1_epi32(127), nlim = _mm256_set1_epi32(-127);
  for (size_t i = 0; i < n_tok * (n_cols / 32); ++i) {
    const float* src = x + 32 * i;
    __m256 v[4];
    __m256 mx = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(src + 8 * k);
      mx = _mm256_max_ps(mx, _mm256_and_ps(v[k], abs_mask));
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    const float db = amax / 127.0f;
    const float id = db != 0.0f ? 1.0f / db : 0.0f;
    __m256i iv[4];
    for (int k = 0; k < 4; ++k) {
      const __m256i r = _mm256_cvtps_epi32(_mm256_mul_ps(v[k], _mm256_set1_ps(id)));  // nearest even
      iv[k] = _mm256_max_epi32(_mm256_min_epi32(r, lim), nlim);
    }
    const __m256i p16 = _mm256_packs_epi16(_mm256_packs_epi32(iv[0], iv[1]), _mm256_packs_epi32(iv[2], iv[3]));
    const __m256i qv = _mm256_permutevar8x32_epi32(p16, perm);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * i), qv);
    const __m256i sums4 = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), qv), _mm256_set1_epi16(1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s4 + 8 * i), sums4);
    d[i] = db;
    s[i] = hsum_epi32(sums4);
  }
}

void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores) {
  if (head_dim % 8 != 0) return scalar::f16_scores(q, k, head_dim, n, scale, scores);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {  // four keys at once: independent chains
    __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (size_t i = 0; i < head_dim; i += 8) {
      const __m256 qv = _mm256_loadu_ps(q + i);
      for (int u = 0; u < 4; ++u) a[u] = _mm256_fmadd_ps(qv, h8(k + (j + u) * head_dim + i), a[u]);
    }
    for (int u = 0; u < 4; ++u) scores[j + u] = hsum_ps(a[u]) * scale;
  }
  for (; j < n; ++j) {
    __m256 a = _mm256_setzero_ps();
    for (size_t i = 0; i < head_dim; i += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), h8(k + j * head_dim + i), a);
    scores[j] = hsum_ps(a) * scale;
  }
}

// The scalar twin's grouping: terms of up to 4 keys summed pairwise, then added to out.
template <class Term>
inline void accum_groups(size_t nv, size_t n, __m256* o, Term term) {
  for (size_t j = 0; j < n; j += 4) {
    const size_t g = std::min<size_t>(4, n - j);
    for (size_t i = 0; i < nv; ++i) {
      __m256 s;
      if (g == 4) {
        s = _mm256_add_ps(_mm256_add_ps(term(j, i), term(j + 1, i)), _mm256_add_ps(term(j + 2, i), term(j + 3, i)));
      } else if (g == 3) {
        s = _mm256_add_ps(_mm256_add_ps(term(j, i), term(j + 1, i)), term(j + 2, i));
      } else if (g == 2) {
        s = _mm256_add_ps(term(j, i), term(j + 1, i));
      } else {
        s = term(j, i);
      }
      o[i] = _mm256_add_ps(o[i], s);
    }
  }
}

void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out) {
  if (head_dim % 8 != 0 || head_dim > 256) return scalar::f16_accum_v(p, v, head_dim, n, out);
  __m256 o[32];
  const size_t nv = head_dim / 8;
  for (size_t i = 0; i < nv; ++i) o[i] = _mm256_loadu_ps(out + 8 * i);
  accum_groups(nv, n, o, [&](size_t j, size_t i) {
    return _mm256_mul_ps(_mm256_set1_ps(p[j]), h8(v + j * head_dim + 8 * i));
  });
  for (size_t i = 0; i < nv; ++i) _mm256_storeu_ps(out + 8 * i, o[i]);
}

void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out) {
  if (block % 8 != 0 || head_dim > 256) return scalar::k8_accum_v(p, q, d, head_dim, block, n, out);
  __m256 o[32];
  const size_t nv = head_dim / 8, nb = head_dim / block, per = block / 8;
  for (size_t i = 0; i < nv; ++i) o[i] = _mm256_loadu_ps(out + 8 * i);
  accum_groups(nv, n, o, [&](size_t j, size_t i) {
    const __m256 coef = _mm256_set1_ps(p[j] * _cvtsh_ss(d[j * nb + i / per]));
    const __m256 qv = _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q + j * head_dim + 8 * i))));
    return _mm256_mul_ps(coef, qv);
  });
  for (size_t i = 0; i < nv; ++i) _mm256_storeu_ps(out + 8 * i, o[i]);
}

// exp(x) for x <= 0 (softmax arguments): 2^k · p(r), x = k·ln2 + r, |r| <= ln2/2, p a degree-6
// polynomial (Taylor, error < 2 ulp on [-ln2/2, ln2/2]); below −87 the result is 0.
inline __m256 exp_neg(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.0f);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  x = _mm256_max_ps(x, lo);
  const __m256 k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693145751953125f), x);  // ln2 split in two for accuracy
  r = _mm256_fnmadd_ps(k, _mm256_set1_ps(1.428606765330187045e-06f), r);
  __m256 p = _mm256_set1_ps(1.0f / 720.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

void softmax(float* x, size_t n) {
  __m256 vmx = _mm256_set1_ps(x[0]);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(x + j));
  __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmx), _mm256_extractf128_ps(vmx, 1));
  m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
  m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
  float mx = _mm_cvtss_f32(m4);
  for (; j < n; ++j) mx = std::max(mx, x[j]);
  const __m256 vm = _mm256_set1_ps(mx);
  __m256 vs = _mm256_setzero_ps();
  j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 e = exp_neg(_mm256_sub_ps(_mm256_loadu_ps(x + j), vm));
    _mm256_storeu_ps(x + j, e);
    vs = _mm256_add_ps(vs, e);
  }
  float sum = hsum_ps(vs);
  for (; j < n; ++j) {
    alignas(32) float t[8] = {x[j] - mx, 0, 0, 0, 0, 0, 0, 0};
    _mm256_store_ps(t, exp_neg(_mm256_load_ps(t)));
    x[j] = t[0];
    sum += t[0];
  }
  const __m256 inv = _mm256_set1_ps(1.0f / sum);
  j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), inv));
  for (; j < n; ++j) x[j] *= 1.0f / sum;
}

}  // namespace alap::kernels::avx2
