// AVX2 + F16C: activation quantisation to int8 blocks of 32 and 256 (byte-identical to
// scalar::quantize_acts and quantize_acts_256) and the attention inner loops of alap/kernels/attn.h
// with vcvtph2ps. The V sums multiply then add per lane in the scalar order, so they match the
// scalar twin bit for bit; f16 scores sum 8 lanes at a time (tested within rounding of the scalar
// twin). Also the grouped-head scores (each key converted once for up to 4 heads), fp16 V sums (one
// FMA per key, head and 8 lanes, bit for bit the scalar twin; one or two heads, MHA or 2 heads a KV
// head, in wider steps so that 12 or 8 FMA chains are in flight; packed V sums are
// k8_heads_avx2.inc's, the v16 rule) and softmax_partial for
// attn_heads.h; the grouped kernels read rows ahead (attn_heads.h prefetch_ahead). And the cache's
// per-token writes for every vector variant: k8_quantize and the f16 row, the scalar twins' bytes.
#include <algorithm>
#include <type_traits>

#include "alap/kernels/fp16.h"
#include "alap/kernels/kv_k8.h"
#include "attn_heads.h"
#include "avx2/avx2_common.h"
#include "avx2/exp_avx2.h"

namespace alap::kernels::avx2 {

namespace {
inline __m256 h8(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
}  // namespace

namespace {
// max |x| of src[0, n) (n a multiple of 8).
inline float abs_max(const float* src, size_t n) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 mx = _mm256_setzero_ps();
  for (size_t k = 0; k < n; k += 8) mx = _mm256_max_ps(mx, _mm256_and_ps(_mm256_loadu_ps(src + k), abs_mask));
  return hmax_ps(mx);
}

// src[0, 32) · id rounded to nearest even (cvtps2dq) and clamped to ±127, as 32 int8 in order.
inline __m256i quant32(const float* src, float id) {
  const __m256i lim = _mm256_set1_epi32(127), nlim = _mm256_set1_epi32(-127);
  __m256i iv[4];
  for (int k = 0; k < 4; ++k) {
    const __m256i r = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + 8 * k), _mm256_set1_ps(id)));
    iv[k] = _mm256_max_epi32(_mm256_min_epi32(r, lim), nlim);
  }
  const __m256i p16 = _mm256_packs_epi16(_mm256_packs_epi32(iv[0], iv[1]), _mm256_packs_epi32(iv[2], iv[3]));
  return _mm256_permutevar8x32_epi32(p16, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}
}  // namespace

void quantize_acts(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4) {
  for (size_t i = 0; i < n_tok * (n_cols / 32); ++i) {
    const float db = abs_max(x + 32 * i, 32) / 127.0f;
    const __m256i qv = quant32(x + 32 * i, db != 0.0f ? 1.0f / db : 0.0f);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * i), qv);
    const __m256i sums4 = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), qv), _mm256_set1_epi16(1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(s4 + 8 * i), sums4);
    d[i] = db;
    s[i] = hsum_epi32(sums4);
  }
}

void quantize_acts_256(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d) {
  for (size_t i = 0; i < n_tok * (n_cols / 256); ++i) {
    const float db = abs_max(x + 256 * i, 256) / 127.0f;
    const float id = db != 0.0f ? 1.0f / db : 0.0f;
    for (size_t k = 0; k < 256; k += 32) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 256 * i + k), quant32(x + 256 * i + k, id));
    }
    d[i] = db;
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

// exp(x) for x <= 0 (softmax arguments): 2^k · e^r (exp_avx2.h, < 2 ulp); below −87 the result is 0.
inline __m256 exp_neg(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.0f);
  const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
  __m256 k;
  const __m256 p = exp_reduced(_mm256_max_ps(x, lo), k);
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

namespace {
// x[j] = exp(x[j] − mx) in place; returns Σ x (8 lanes, then the tail in order).
float exp_shift_sum(float* x, size_t n, float mx) {
  const __m256 vm = _mm256_set1_ps(mx);
  __m256 vs = _mm256_setzero_ps();
  size_t j = 0;
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
  return sum;
}

// In 4 independent chains for long rows (a max is exact in any order; one chain waits on each
// max's latency).
float max_of(const float* x, size_t n) {
  __m256 vmx = _mm256_set1_ps(x[0]), vm1 = vmx, vm2 = vmx, vm3 = vmx;
  size_t j = 0;
  for (; j + 32 <= n; j += 32) {
    vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(x + j));
    vm1 = _mm256_max_ps(vm1, _mm256_loadu_ps(x + j + 8));
    vm2 = _mm256_max_ps(vm2, _mm256_loadu_ps(x + j + 16));
    vm3 = _mm256_max_ps(vm3, _mm256_loadu_ps(x + j + 24));
  }
  for (; j + 8 <= n; j += 8) vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(x + j));
  vmx = _mm256_max_ps(_mm256_max_ps(vmx, vm1), _mm256_max_ps(vm2, vm3));
  float mx = hmax_ps(vmx);
  for (; j < n; ++j) mx = std::max(mx, x[j]);
  return mx;
}
}  // namespace

void softmax(float* x, size_t n) {
  const float sum = exp_shift_sum(x, n, max_of(x, n));
  const __m256 inv = _mm256_set1_ps(1.0f / sum);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) _mm256_storeu_ps(x + j, _mm256_mul_ps(_mm256_loadu_ps(x + j), inv));
  for (; j < n; ++j) x[j] *= 1.0f / sum;
}

void softmax_partial(float* x, size_t n, float* m, float* l) {
  *m = max_of(x, n);
  *l = exp_shift_sum(x, n, *m);
}

// --- Grouped heads (attn_heads.h). fp16 scores: 3 keys × up to 4 heads at a time (the last one or
// two keys of a call: 2 keys, or f16_scores), each 8-dim piece of a key converted once for those
// heads; per (head, key) one 8-lane FMA chain over the dims and then hsum_ps's sum order,
// (v0 + v4) + (v2 + v6) + ((v1 + v5) + (v3 + v7)), done for 8 chains at once. So a head's score of
// a key is f16_scores' whatever heads or keys share the call.
namespace {
// [A, B, C, D, E, F, G, H] → hsum_ps of each, as lanes [A, C, E, G, B, D, F, H].
inline __m256 hsum8(__m256 A, __m256 B, __m256 C, __m256 D, __m256 E, __m256 F, __m256 G, __m256 H) {
  auto lo_hi = [](__m256 x, __m256 y) {  // [x0+x4, x1+x5, x2+x6, x3+x7, y0+y4, …]
    return _mm256_add_ps(_mm256_permute2f128_ps(x, y, 0x20), _mm256_permute2f128_ps(x, y, 0x31));
  };
  const __m256 ab = lo_hi(A, B), cd = lo_hi(C, D), ef = lo_hi(E, F), gh = lo_hi(G, H);
  auto pairs = [](__m256 x, __m256 y) {  // per 128-bit lane: [x0+x2, x1+x3, y0+y2, y1+y3]
    const __m256d xd = _mm256_castps_pd(x), yd = _mm256_castps_pd(y);
    return _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(xd, yd)), _mm256_castpd_ps(_mm256_unpackhi_pd(xd, yd)));
  };
  const __m256 abcd = pairs(ab, cd), efgh = pairs(ef, gh);
  return _mm256_add_ps(_mm256_shuffle_ps(abcd, efgh, 0x88), _mm256_shuffle_ps(abcd, efgh, 0xDD));
}

// Keys k[0..NK) (NK 2 or 3) against NH (1..4) heads: scores[h·ld + u]. Each 8-dim piece of the
// keys is converted once for all NH heads. Three keys keep 12 chains in flight (15 of the 16 ymm
// registers) where two kept 8, whose 8 dependent FMAs a key took as long as the pair's 64 FMAs at
// two a cycle. On a Zen 3 core (plain AVX2) a prefill tile's scores take ~15% less time so and
// prefill at depth runs 8-11% faster; a decode group's scores 2-5% (docs/bench/cpu.md, "fp16 scores
// three keys at a time (session 15)"). The same chains and sum order either way, so the same bits.
template <int NK, int NH>
__attribute__((always_inline)) inline void score_keys(const float* q, size_t head_dim, const uint16_t* k, float scale,
                                                      float* scores, size_t ld) {
  static_assert(NK == 2 || NK == 3);
  __m256 a[4][NK];
  for (int h = 0; h < 4; ++h) {
    for (int u = 0; u < NK; ++u) a[h][u] = _mm256_setzero_ps();
  }
  for (size_t i = 0; i < head_dim; i += 8) {
    __m256 x[NK];
    for (int u = 0; u < NK; ++u) x[u] = h8(k + u * head_dim + i);
    for (int h = 0; h < NH; ++h) {
      const __m256 qv = _mm256_loadu_ps(q + h * head_dim + i);
      for (int u = 0; u < NK; ++u) a[h][u] = _mm256_fmadd_ps(qv, x[u], a[h][u]);
    }
  }
  // hsum8's lanes [A, C, E, G, B, D, F, H]: keys 0, 1 as [h0k0, h0k1, h1k0, h1k1 | h2k0, h2k1, h3k0,
  // h3k1]; key 2 as [h0k2, 0, h1k2, 0 | h2k2, 0, h3k2, 0].
  const __m256 vs = _mm256_set1_ps(scale);
  alignas(32) float t[16];
  _mm256_store_ps(t, _mm256_mul_ps(hsum8(a[0][0], a[2][0], a[0][1], a[2][1], a[1][0], a[3][0], a[1][1], a[3][1]), vs));
  if constexpr (NK == 3) {
    const __m256 z = _mm256_setzero_ps();
    _mm256_store_ps(t + 8, _mm256_mul_ps(hsum8(a[0][2], a[2][2], z, z, a[1][2], a[3][2], z, z), vs));
  }
  for (int h = 0; h < NH; ++h) {
    for (int u = 0; u < NK; ++u) scores[h * ld + u] = t[8 * (u / 2) + 2 * h + u % 2];
  }
}

// Keys k[0..NK) against one or two heads (NH·NK = 12 chains): a group of one or two query heads
// (multi-head attention, or GQA with 2 heads a KV head) has too few chains in score_keys' 3-key
// steps (3 or 6, each FMA waiting on its chain's last), so its steps take 12 or 6 keys. The same
// chain per (head, key) and the same hsum_ps order, so the same bits.
// The step's row reads (two streams of NK rows of 2·head_dim bytes, rb null: one) are spread over
// its dims, a slice each 8 (all at once, 48 lines a 12-key step, the block was slower cold).
template <int NK, int NH>
__attribute__((always_inline)) inline void score_keys_few(const float* q, size_t head_dim, const uint16_t* k,
                                                          float scale, float* scores, size_t ld, const char* ra,
                                                          const char* rb) {
  static_assert(NH * NK == 12 && (NH == 1 || NH == 2));
  __m256 a[NH * NK];  // chain c = h·NK + u
  for (int c = 0; c < NH * NK; ++c) a[c] = _mm256_setzero_ps();
  // NK rows of 2·head_dim bytes are NK·head_dim/32 lines: NK/4 a step of 8 dims.
  for (size_t i = 0, t = 0; i < head_dim; i += 8, ++t) {
    for (size_t ln = t * NK / 4; ln < (t + 1) * NK / 4; ++ln) {
      _mm_prefetch(ra + 64 * ln, _MM_HINT_T0);
      if (rb != nullptr) _mm_prefetch(rb + 64 * ln, _MM_HINT_T0);
    }
    __m256 qv[NH];
    for (int h = 0; h < NH; ++h) qv[h] = _mm256_loadu_ps(q + h * head_dim + i);
    for (int u = 0; u < NK; ++u) {
      const __m256 x = h8(k + u * head_dim + i);
      for (int h = 0; h < NH; ++h) a[h * NK + u] = _mm256_fmadd_ps(qv[h], x, a[h * NK + u]);
    }
  }
  // hsum8's lanes [A, C, E, G, B, D, F, H]: chain m of its 8 at lane (m % 2)·4 + m / 2.
  const __m256 vs = _mm256_set1_ps(scale), z = _mm256_setzero_ps();
  alignas(32) float t[16];
  _mm256_store_ps(t, _mm256_mul_ps(hsum8(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]), vs));
  _mm256_store_ps(t + 8, _mm256_mul_ps(hsum8(a[8], a[9], a[10], a[11], z, z, z, z), vs));
  for (int c = 0; c < NH * NK; ++c) {
    const int m = c % 8;
    scores[(c / NK) * ld + c % NK] = t[8 * (c / 8) + (m % 2) * 4 + m / 2];
  }
}

// Keys [j, j + NK) against every head: rows ahead and along asked for, then the heads 4 at a time.
template <int NK>
__attribute__((always_inline)) inline void score_step(const float* q, size_t n_heads, const uint16_t* k,
                                                      size_t head_dim, size_t j, float scale, float* scores, size_t ld,
                                                      const AttnAlong& along) {
  const uint16_t* kj = k + j * head_dim;
  prefetch_ahead(k + (j + kReadAheadRows) * head_dim, NK * 2 * head_dim);  // rows ahead (attn_heads.h)
  read_along(along, j, NK);
  for (size_t h = 0; h < n_heads; h += 4) {
    const float* qh = q + h * head_dim;
    float* sh = scores + h * ld + j;
    switch (std::min<size_t>(4, n_heads - h)) {
      case 4: score_keys<NK, 4>(qh, head_dim, kj, scale, sh, ld); break;
      case 3: score_keys<NK, 3>(qh, head_dim, kj, scale, sh, ld); break;
      case 2: score_keys<NK, 2>(qh, head_dim, kj, scale, sh, ld); break;
      default: score_keys<NK, 1>(qh, head_dim, kj, scale, sh, ld); break;
    }
  }
}

// Keys [j, j + NK) against the one or two heads of the call (score_keys_few), rows asked for as in
// score_step.
template <int NK, int NH>
__attribute__((always_inline)) inline void score_step_few(const float* q, const uint16_t* k, size_t head_dim,
                                                          size_t j, float scale, float* scores, size_t ld,
                                                          const AttnAlong& along) {
  // K rows ahead and V rows along (the same bytes a row when V is fp16 of the same head_dim),
  // spread over the dims; otherwise along as score_step.
  const char* kr = reinterpret_cast<const char*>(k + (j + kReadAheadRows) * head_dim);
  const bool spread_v = along.rows != nullptr && along.row_bytes == 2 * head_dim && along.scales == nullptr;
  if (!spread_v) read_along(along, j, NK);
  score_keys_few<NK, NH>(q, head_dim, k + j * head_dim, scale, scores + j, ld, kr,
                         spread_v ? along.rows + j * along.row_bytes : nullptr);
}
}  // namespace

namespace {
void f16_scores_heads_along(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                            float* scores, size_t ld, const AttnAlong& along) {
  size_t j = 0;  // keys before j scored in steps of 3 (a last pair in one of 2)
  if (head_dim % 8 == 0) {
    if (n_heads == 1) {
      for (; j + 12 <= n; j += 12) score_step_few<12, 1>(q, k, head_dim, j, scale, scores, ld, along);
    } else if (n_heads == 2) {
      for (; j + 6 <= n; j += 6) score_step_few<6, 2>(q, k, head_dim, j, scale, scores, ld, along);
    }
    for (; j + 3 <= n; j += 3) score_step<3>(q, n_heads, k, head_dim, j, scale, scores, ld, along);
    if (n - j == 2) score_step<2>(q, n_heads, k, head_dim, j, scale, scores, ld, along), j += 2;
  }
  if (j < n) {  // the last key, or every key when head_dim is not a multiple of 8 (f16_scores' own path)
    read_along(along, j, n - j);
    for (size_t h = 0; h < n_heads; ++h) {
      f16_scores(q + h * head_dim, k + j * head_dim, head_dim, n - j, scale, scores + h * ld + j);
    }
  }
}
}  // namespace

void f16_scores_heads(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld) {
  f16_scores_heads_along(q, n_heads, k, head_dim, n, scale, scores, ld, AttnAlong{});
}

void k8_scores_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld) {
  const size_t block = k8_block_size(head_dim);
  if (block == 0) return scalar::k8_scores_heads(q, dq, n_heads, k, dk, head_dim, n, scale, scores, ld);
  k8_scores_heads8(q, dq, n_heads, k, dk, head_dim, n, scale, scores, ld);  // k8_heads_avx2.inc
}

namespace {
// Lanes [i, i + 8) of fp16 V rows j.
struct F16Column {
  const uint16_t* v = nullptr;  // row 0 at lane i
  size_t head_dim = 0;
  __m256 operator()(size_t j) const { return h8(v + j * head_dim); }
};

// V sums for NH heads over lanes [i0, i0 + 16): each key's row converted once, then one fused
// multiply-add per head and 8 lanes, keys in order (the scalar twin's std::fma chain). LDP: p's
// row stride when it is the attention's key block (constant offsets per head), 0 for any.

template <int NH, size_t LDP, class Column>
void accum_heads_tile(const float* p, size_t ldp_any, size_t head_dim, size_t n, float* out, size_t i0, Column column,
                      const AttnReadAhead& ahead) {
  const size_t ldp = LDP != 0 ? LDP : ldp_any;
  __m256 o[NH][2];
  for (int h = 0; h < NH; ++h) {
    for (int c = 0; c < 2; ++c) o[h][c] = _mm256_loadu_ps(out + h * head_dim + i0 + 8 * c);
  }
  const auto l0 = column(i0), l1 = column(i0 + 8);
  for (size_t j = 0; j < n; ++j) {
    if (ahead.rows != nullptr) read_ahead(ahead, j);
    const __m256 x0 = l0(j), x1 = l1(j);
    for (int h = 0; h < NH; ++h) {
      const __m256 pb = _mm256_broadcast_ss(p + h * ldp + j);
      o[h][0] = _mm256_fmadd_ps(pb, x0, o[h][0]);
      o[h][1] = _mm256_fmadd_ps(pb, x1, o[h][1]);
    }
  }
  for (int h = 0; h < NH; ++h) {
    for (int c = 0; c < 2; ++c) _mm256_storeu_ps(out + h * head_dim + i0 + 8 * c, o[h][c]);
  }
}

// The V sums' accumulators of NH heads × NC columns of 8 lanes from i0, loaded from and stored to out.
template <int NH, int NC>
__attribute__((always_inline)) inline void load_heads(__m256 (&o)[NH][NC], const float* out, size_t head_dim,
                                                      size_t i0) {
#pragma GCC unroll 32
  for (int h = 0; h < NH; ++h) {
#pragma GCC unroll 32
    for (int c = 0; c < NC; ++c) o[h][c] = _mm256_loadu_ps(out + h * head_dim + i0 + 8 * c);
  }
}
template <int NH, int NC>
__attribute__((always_inline)) inline void store_heads(const __m256 (&o)[NH][NC], float* out, size_t head_dim,
                                                       size_t i0) {
#pragma GCC unroll 32
  for (int h = 0; h < NH; ++h) {
#pragma GCC unroll 32
    for (int c = 0; c < NC; ++c) _mm256_storeu_ps(out + h * head_dim + i0 + 8 * c, o[h][c]);
  }
}

// key(j) for j in [0, n), each after read_ahead(ahead, j) when ahead.rows is set. Two loops: with
// the test inside one, GCC 12 kept the accumulators in registers but also stored all of them to the
// stack every key. (The small loops of the callers are unrolled by pragma for the same reason.)
template <class Key>
__attribute__((always_inline)) inline void each_key(size_t n, const AttnReadAhead& ahead, Key key) {
  if (ahead.rows != nullptr) {
    for (size_t j = 0; j < n; ++j) {
      read_ahead(ahead, j);
      key(j);
    }
  } else {
    for (size_t j = 0; j < n; ++j) key(j);
  }
}

// The same sums for NH heads over NC columns of 8 lanes from i0 (NH·NC chains): a group of fewer
// than 4 heads has too few chains over 16 lanes (2 to 6, each FMA waiting on its chain's last), so
// it takes 24 (3 heads), 32 (2) or 64 (1) lanes a pass. Each key's p broadcast once per head, each
// column converted once; the same FMAs in the same order, so the same bits.
template <int NH, int NC, size_t LDP, class Column>
void accum_heads_cols(const float* p, size_t ldp_any, size_t head_dim, size_t n, float* out, size_t i0, Column column,
                      const AttnReadAhead& ahead) {
  const size_t ldp = LDP != 0 ? LDP : ldp_any;
  __m256 o[NH][NC];
  load_heads(o, out, head_dim, i0);
  std::remove_cvref_t<decltype(column(i0))> l[NC];
#pragma GCC unroll 32
  for (int c = 0; c < NC; ++c) l[c] = column(i0 + 8 * c);
  each_key(n, ahead, [&](size_t j) __attribute__((always_inline)) {
    __m256 pb[NH];
#pragma GCC unroll 32
    for (int h = 0; h < NH; ++h) pb[h] = _mm256_broadcast_ss(p + h * ldp + j);
#pragma GCC unroll 32
    for (int c = 0; c < NC; ++c) {
      const __m256 x = l[c](j);
#pragma GCC unroll 32
      for (int h = 0; h < NH; ++h) o[h][c] = _mm256_fmadd_ps(pb[h], x, o[h][c]);
    }
  });
  store_heads(o, out, head_dim, i0);
}

// NH (1 to 3) heads over every lane (head_dim a multiple of 16): passes of kCols[NH] columns, then
// the rest (a multiple of 2 columns; 1 for 3 heads).
template <int NH, size_t LDP, class Column>
void accum_heads_few(const float* p, size_t ldp, size_t head_dim, size_t n, float* out, Column column,
                     const AttnReadAhead& ahead) {
  constexpr int kCols = NH == 1 ? 8 : NH == 2 ? 4 : 3;
  const AttnReadAhead none{};
  size_t i0 = 0;
  for (; i0 + 8 * kCols <= head_dim; i0 += 8 * kCols) {
    accum_heads_cols<NH, kCols, LDP>(p, ldp, head_dim, n, out, i0, column, i0 == 0 ? ahead : none);
  }
  const AttnReadAhead& a = i0 == 0 ? ahead : none;
  switch ((head_dim - i0) / 8) {
    case 0: break;
    case 1: accum_heads_cols<NH, 1, LDP>(p, ldp, head_dim, n, out, i0, column, a); break;
    case 2: accum_heads_cols<NH, 2, LDP>(p, ldp, head_dim, n, out, i0, column, a); break;
    case 4: accum_heads_cols<NH, 4, LDP>(p, ldp, head_dim, n, out, i0, column, a); break;
    default: accum_heads_cols<NH, 6, LDP>(p, ldp, head_dim, n, out, i0, column, a); break;
  }
}

// Heads in groups of 4 (16 lanes a pass), a last group of 1 to 3 in wider passes (accum_heads_few).
// The first pass over the keys also reads the following n rows ahead.
template <size_t LDP, class Column>
void accum_heads_ld(const float* p, size_t ldp, size_t n_heads, size_t head_dim, size_t n, float* out, Column column,
                    const AttnReadAhead& ahead) {
  const AttnReadAhead none{};
  for (size_t h0 = 0; h0 < n_heads; h0 += 4) {
    const float* ph = p + h0 * ldp;
    float* oh = out + h0 * head_dim;
    const size_t nh = std::min<size_t>(4, n_heads - h0);
    const AttnReadAhead& first = h0 == 0 ? ahead : none;
    switch (nh) {
      case 4:
        for (size_t i0 = 0; i0 < head_dim; i0 += 16) {
          accum_heads_tile<4, LDP>(ph, ldp, head_dim, n, oh, i0, column, i0 == 0 ? first : none);
        }
        break;
      case 3: accum_heads_few<3, LDP>(ph, ldp, head_dim, n, oh, column, first); break;
      case 2: accum_heads_few<2, LDP>(ph, ldp, head_dim, n, oh, column, first); break;
      default: accum_heads_few<1, LDP>(ph, ldp, head_dim, n, oh, column, first); break;
    }
  }
}

constexpr size_t kBlockLd = 256;  // core/model/attention_cpu.h kKeyBlock: the scores' row stride there

template <class Column>
void accum_heads(const float* p, size_t ldp, size_t n_heads, size_t head_dim, size_t n, float* out, Column column,
                 const AttnReadAhead& ahead) {
  if (ldp == kBlockLd) return accum_heads_ld<kBlockLd>(p, ldp, n_heads, head_dim, n, out, column, ahead);
  accum_heads_ld<0>(p, ldp, n_heads, head_dim, n, out, column, ahead);
}
}  // namespace

namespace {
// read_ahead: read the rows after these as the keys go (false: their reads were asked for already).
void f16_accum_v_heads_ahead(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                             float* out, bool read_ahead) {
  if (head_dim % 16 != 0) return scalar::f16_accum_v_heads(p, ldp, n_heads, v, head_dim, n, out);
  const AttnReadAhead rows{read_ahead ? reinterpret_cast<const char*>(v) : nullptr, 2 * head_dim, nullptr, 0};
  accum_heads(
      p, ldp, n_heads, head_dim, n, out, [v, head_dim](size_t i) { return F16Column{v + i, head_dim}; }, rows);
}
}  // namespace

void f16_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                       float* out) {
  f16_accum_v_heads_ahead(p, ldp, n_heads, v, head_dim, n, out, true);
}

// The v16 rule of attn.h through vpmaddwd (k8_heads_avx2.inc), reading the rows ahead.
void k8_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                      size_t head_dim, size_t block, size_t n, float* out) {
  k8_accum_v_heads16(p, ldp, n_heads, q, d, head_dim, block, n, out, true);
}

void attn_block_heads(const AttnBlock& b, size_t n_heads, size_t n, float scale, float* scores, size_t ld, float* m,
                      float* l, float* out, K8ScoresHeads8 k8s, K8AccumV16 v16) {
  const size_t dk = b.head_dim_k, dv = b.head_dim_v;
  const AttnAlong v_rows = b.vq != nullptr ? AttnAlong{reinterpret_cast<const char*>(b.vq), dv,
                                                       reinterpret_cast<const char*>(b.vd), 2 * (dv / b.block_v)}
                                           : AttnAlong{reinterpret_cast<const char*>(b.v), 2 * dv, nullptr, 0};
  if (b.kq != nullptr) {
    k8s(b.qq, b.qd, n_heads, b.kq, b.kd, dk, n, scale, scores, ld, v_rows);
  } else {
    f16_scores_heads_along(b.q, n_heads, b.k, dk, n, scale, scores, ld, v_rows);
  }
  for (size_t h = 0; h < n_heads; ++h) softmax_partial(scores + h * ld, n, &m[h], &l[h]);
  std::fill(out, out + n_heads * dv, 0.0f);
  if (b.vq != nullptr) {
    v16(scores, ld, n_heads, b.vq, b.vd, dv, b.block_v, n, out, false);
  } else {
    f16_accum_v_heads_ahead(scores, ld, n_heads, b.v, dv, n, out, false);
  }
}

// k8_quantize 8 lanes at a time with the scalar rule's operations (scalar/k8_scalar.cpp), so the
// same bytes and scales: amax by max (exact in any order; a NaN |x| leaves amax as std::max does),
// d = amax / 127 in f32, q = fmin(fmax(roundf(x / d), −127), 127) with x / d a true division and roundf's
// half-away-from-zero built from a truncation (t = trunc(y), y − t exact, ±1 when |y − t| >= 0.5).
// A NaN quotient gives −127 (kv_k8_test NonFiniteValuesQuantiseDefined). Blocks of other than 32 values (head_dim
// below 32) take the scalar twin. ~16x faster than the scalar loop (roundf is a libm call there).
void k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d) {
  if (head_dim == 0 || head_dim % 32 != 0) return scalar::k8_quantize(x, head_dim, q, d);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
  const __m256 lo = _mm256_set1_ps(-127.0f), hi = _mm256_set1_ps(127.0f);
  const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (size_t b = 0; b < head_dim / 32; ++b) {
    const float* xb = x + 32 * b;
    __m256 v[4];
    __m256 mx = _mm256_setzero_ps();
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(xb + 8 * k);
      mx = _mm256_max_ps(_mm256_and_ps(v[k], abs_mask), mx);  // NaN in the first operand: mx
    }
    const float db = hmax_ps(mx) / 127.0f;
    d[b] = f32_to_fp16(db);
    if (db == 0.0f) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * b), _mm256_setzero_si256());
      continue;
    }
    const __m256 vd = _mm256_set1_ps(db);
    __m256i iv[4];
    for (int k = 0; k < 4; ++k) {
      const __m256 y = _mm256_div_ps(v[k], vd);
      const __m256 t = _mm256_round_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      const __m256 frac = _mm256_and_ps(_mm256_sub_ps(y, t), abs_mask);
      const __m256 away = _mm256_or_ps(_mm256_and_ps(y, sign_mask), one);  // ±1 with y's sign
      __m256 r = _mm256_add_ps(t, _mm256_and_ps(_mm256_cmp_ps(frac, half, _CMP_GE_OQ), away));
      r = _mm256_min_ps(_mm256_max_ps(r, lo), hi);  // a NaN quotient: −127, as std::fmax there
      iv[k] = _mm256_cvttps_epi32(r);
    }
    const __m256i p16 = _mm256_packs_epi16(_mm256_packs_epi32(iv[0], iv[1]), _mm256_packs_epi32(iv[2], iv[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * b), _mm256_permutevar8x32_epi32(p16, perm));
  }
}

// f32_to_fp16 of each value with vcvtps2ph (round to nearest even; overflow to inf, subnormal
// halves and NaNs quietened with their top payload bits as the scalar rule does).
void kv_row_to_fp16(const float* x, size_t n, uint16_t* out) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = f32_to_fp16(x[i]);
}

const AttnHeadsVariant kAttnHeads = {&k8_scores_heads, &f16_scores_heads, &softmax_partial, &f16_accum_v_heads,
                                     &k8_accum_v_heads, &k8_quantize, &kv_row_to_fp16};

}  // namespace alap::kernels::avx2
