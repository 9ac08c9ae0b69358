// SSSE3 + SSE4.1 attention kernels: the sse4 variant (x86-64 CPUs without AVX2, FMA or F16C: the
// Atom-class Celeron and Pentium Silver chips of budget laptops, Sandy and Ivy Bridge). 128-bit
// lanes; fp16 is converted with integer steps (no F16C; sse4_common.h), so
// the grouped kernels convert each K or V row once for all the query heads of a KV group. What each
// entry keeps of its scalar twin (scalar/attn_scalar.cpp, scalar/k8_scalar.cpp):
// - packed-K dots and scores (k8_dot, k8_scores, k8_scores_heads): the same int32 block sums
//   (pmaddubsw on |k| against q with k's sign, then pmaddwd) and the same f32 steps in block
//   order: bit for bit;
// - the per-head V sums (f16_accum_v, k8_accum_v): the same products and group-of-4 adds per lane:
//   bit for bit;
// - the packed V sum of a group (k8_accum_v_heads, attn.h's v16 rule): the same int16 codes and the
//   exact int32 sums (pmaddwd over key pairs): bit for bit;
// - the fp16 V sum of a group (f16_accum_v_heads): a multiply then an add per key, head and lane,
//   keys in order (no FMA hardware here, and std::fma is a slow software routine): within one f32
//   rounding per key of the scalar twin, and a head's lanes still depend only on its own p row;
// - fp16 scores: per head and key two 4-lane chains over the dims, then one fixed sum order (within
//   rounding of the scalar twin; the same bits whatever heads or keys share a call);
// - softmax: a 4-lane exp built from multiplies and adds (within 2 ulp of std::exp), sums 8 lanes at
//   a time;
// - k8_quantize: the scalar rule's operations 4 lanes at a time (the same bytes); kv_row_to_fp16
//   stays the scalar twin: f32 → fp16 rounding without F16C is a long integer sequence, and the
//   cache writes one row per token and KV head, nothing the decode step waits on.
// Every helper has internal linkage (an unnamed namespace; no std:: templates either), so this
// object defines no weak symbols (tests/kernels/cpu/isa_weak_symbols_check.sh).
#include <cmath>
#include <cstring>

#include "alap/kernels/fp16.h"
#include "alap/kernels/kv_k8.h"
#include "attn_heads.h"
#include "cpu_variants.h"
#include "sse4/sse4_common.h"

namespace alap::kernels::sse4 {

namespace {

inline size_t min_size(size_t a, size_t b) { return a < b ? a : b; }

// max of the 4 lanes (exact in any order; no NaN lanes where it is used).
inline float hmax_ps(__m128 v) {
  v = _mm_max_ps(v, _mm_movehl_ps(v, v));
  v = _mm_max_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

// ---------------------------------------------------------------------------------------------
// Packed K (kv_k8.h): block sums of 32 dims in int32, then scalar::k8_dot's f32 steps.

// Σ k·q over 16 dims as 4 int32 (dot_s8s8 with the key as the sign source: a key code −128, outside
// k8_quantize's range but a valid code, is exact; pairs at most 2·128·127 < 2^15, no saturation).
inline __m128i dot16(const int8_t* k, const int8_t* q) { return dot_s8s8(load16(k), load16(q)); }

// head_dim a multiple of 32: Σ_b float(Σ a·b)·(fp16(da[b])·fp16(db[b])) in block order, as the twin.
float dot32(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim) {
  float acc = 0.0f;
  for (size_t k = 0; k < head_dim / 32; ++k) {
    const __m128i s = _mm_add_epi32(dot16(b + 32 * k, a + 32 * k), dot16(b + 32 * k + 16, a + 32 * k + 16));
    acc += static_cast<float>(hsum_epi32(s)) * (f16_at(da + k) * f16_at(db + k));
  }
  return acc;
}

constexpr size_t kK8MaxBlocks = 16;  // head_dim <= 512 on the vector path (more: the scalar twin)
constexpr size_t kK8Heads = 32;      // heads whose query scales one pass holds (more: in passes)

// Grouped packed-K scores of heads [0, nh), 4 keys a step with a key per f32 lane: per head and
// block, each key's int32 sum (|k| against q with k's sign, as dot16; |k| of the step's rows made
// once into ak for all the heads), the 4 sums gathered into one vector by phaddd, then per lane
// scalar::k8_dot's step acc + float(isum)·(dq·dk) in block order and scale·acc at the end. So each
// (head, key) score is the scalar twin's bits whatever heads or keys share the call. A last step of
// 1-3 keys repeats its last key in the spare lanes and stores only its own. fetch: read the rows
// ahead (attn_heads.h).
void k8_scores_pass(const int8_t* q, const uint16_t* dq, size_t nh, const int8_t* k, const uint16_t* dk,
                    size_t head_dim, size_t n, float scale, float* scores, size_t ld, bool fetch) {
  const size_t nb = head_dim / 32;
  float fq[kK8Heads * kK8MaxBlocks];
  for (size_t i = 0; i < nh * nb; ++i) fq[i] = f16_at(dq + i);
  alignas(16) int8_t ak[4 * 32 * kK8MaxBlocks];
  __m128 fk[kK8MaxBlocks];
  const __m128i ones = _mm_set1_epi16(1);
  const __m128 vscale = _mm_set1_ps(scale);
  for (size_t j = 0; j < n; j += 4) {
    const size_t r = min_size(4, n - j);
    if (fetch) {
      prefetch_ahead(k + (j + kReadAheadRows) * head_dim, 4 * head_dim);
      if (j % 16 == 0) prefetch_ahead(dk + (j + kReadAheadRows) * nb, 16 * 2 * nb);  // 16 keys' scales
    }
    size_t key[4];
    for (size_t u = 0; u < 4; ++u) key[u] = j + min_size(u, r - 1);
    const int8_t* rows[4] = {k + key[0] * head_dim, k + key[1] * head_dim, k + key[2] * head_dim,
                             k + key[3] * head_dim};
    for (size_t b = 0; b < nb; ++b) {  // the 4 keys' scales of block b, one per lane
      fk[b] = f16_words4(_mm_setr_epi16(static_cast<short>(dk[key[0] * nb + b]), static_cast<short>(dk[key[1] * nb + b]),
                                    static_cast<short>(dk[key[2] * nb + b]), static_cast<short>(dk[key[3] * nb + b]), 0,
                                    0, 0, 0));
    }
    for (size_t u = 0; u < 4; ++u) {
      for (size_t i = 0; i < head_dim; i += 16) {
        const __m128i x = load16(rows[u] + i);
        _mm_store_si128(reinterpret_cast<__m128i*>(ak + u * head_dim + i), _mm_sign_epi8(x, x));  // −128 → 128
      }
    }
    for (size_t h = 0; h < nh; ++h) {
      const int8_t* qh = q + h * head_dim;
      __m128 acc = _mm_setzero_ps();
      for (size_t b = 0; b < nb; ++b) {
        const __m128i q0 = load16(qh + 32 * b), q1 = load16(qh + 32 * b + 16);
        __m128i v[4];
        for (size_t u = 0; u < 4; ++u) {
          const int8_t* kr = rows[u] + 32 * b;
          const int8_t* ar = ak + u * head_dim + 32 * b;
          const __m128i s0 = _mm_maddubs_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(ar)),
                                               _mm_sign_epi8(q0, load16(kr)));
          const __m128i s1 = _mm_maddubs_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(ar + 16)),
                                               _mm_sign_epi8(q1, load16(kr + 16)));
          v[u] = _mm_add_epi32(_mm_madd_epi16(s0, ones), _mm_madd_epi16(s1, ones));
        }
        const __m128i isum = hsum4_epi32(v[0], v[1], v[2], v[3]);
        acc = _mm_add_ps(acc, _mm_mul_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(_mm_set1_ps(fq[h * nb + b]), fk[b])));
      }
      const __m128 s = _mm_mul_ps(vscale, acc);
      float* out = scores + h * ld + j;
      if (r == 4) {
        _mm_storeu_ps(out, s);
      } else {
        alignas(16) float t[4];
        _mm_store_ps(t, s);
        for (size_t u = 0; u < r; ++u) out[u] = t[u];
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// fp16 scores. Per (head, key): chain a0 over dims 8t..8t+3, a1 over 8t+4..8t+7 (multiply, then
// add), then hsum4's order of a0 + a1 times scale, in every path below: a head's score of a key is
// the same bits whatever heads or keys share a call (the prefix and per-head calls of the tests).

constexpr size_t kF16MaxDim = 512;  // head_dim of the f32 row copy (more heads than 4 a group)

// [A, B, C, D] → each one's lane sum as 4 lanes, every sum as (x0 + x2) + (x1 + x3).
inline __m128 hsum4(__m128 a, __m128 b, __m128 c, __m128 d) {
  const __m128 ab = _mm_add_ps(_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));  // [a0+a2, b0+b2, a1+a3, b1+b3]
  const __m128 cd = _mm_add_ps(_mm_unpacklo_ps(c, d), _mm_unpackhi_ps(c, d));
  return _mm_add_ps(_mm_movelh_ps(ab, cd), _mm_movehl_ps(cd, ab));
}

// Keys [0, NK) against heads [0, NH): scores[h·ld + u]. The keys' rows k + u·head_dim are converted
// once for the NH heads, or (KF) read as f32 from kf + u·head_dim, their conversion made once for
// every head group of the call (the same values: the conversion is exact).
template <int NH, int NK, bool KF>
__attribute__((always_inline)) inline void f16_tile(const float* q, size_t head_dim, const uint16_t* k, const float* kf,
                                                    __m128 vscale, float* scores, size_t ld) {
  constexpr int kC = NH * NK;  // chain pairs, c = h·NK + u
  __m128 a[kC][2];
  for (int c = 0; c < kC; ++c) a[c][0] = a[c][1] = _mm_setzero_ps();
  for (size_t i = 0; i < head_dim; i += 8) {
    __m128 x[NK][2];
    for (int u = 0; u < NK; ++u) {
      if constexpr (KF) {
        x[u][0] = _mm_load_ps(kf + u * head_dim + i);
        x[u][1] = _mm_load_ps(kf + u * head_dim + i + 4);
      } else {
        f16x8(k + u * head_dim + i, x[u][0], x[u][1]);
      }
    }
    for (int h = 0; h < NH; ++h) {
      const __m128 q0 = _mm_loadu_ps(q + h * head_dim + i), q1 = _mm_loadu_ps(q + h * head_dim + i + 4);
      for (int u = 0; u < NK; ++u) {
        a[h * NK + u][0] = _mm_add_ps(a[h * NK + u][0], _mm_mul_ps(q0, x[u][0]));
        a[h * NK + u][1] = _mm_add_ps(a[h * NK + u][1], _mm_mul_ps(q1, x[u][1]));
      }
    }
  }
  alignas(16) float t[(kC + 3) / 4 * 4];
  for (int c = 0; c < kC; c += 4) {
    __m128 s[4];
    for (int m = 0; m < 4; ++m) s[m] = c + m < kC ? _mm_add_ps(a[c + m][0], a[c + m][1]) : _mm_setzero_ps();
    _mm_store_ps(t + c, _mm_mul_ps(hsum4(s[0], s[1], s[2], s[3]), vscale));
  }
  for (int h = 0; h < NH; ++h) {
    for (int u = 0; u < NK; ++u) scores[h * ld + u] = t[h * NK + u];
  }
}

// Heads [0, NH) over all the keys, converting each key for them: one or two heads take two keys a
// step (more chains in flight), the last odd key alone; fetch: read the rows ahead.
template <int NH>
void f16_scores_group(const float* q, const uint16_t* k, size_t head_dim, size_t n, __m128 vscale, float* scores,
                      size_t ld, bool fetch) {
  constexpr int NK = NH <= 2 ? 2 : 1;
  size_t j = 0;
  for (; j + NK <= n; j += NK) {
    if (fetch) prefetch_ahead(k + (j + kReadAheadRows) * head_dim, NK * 2 * head_dim);
    f16_tile<NH, NK, false>(q, head_dim, k + j * head_dim, nullptr, vscale, scores + j, ld);
  }
  if constexpr (NK > 1) {
    if (j < n) f16_tile<NH, 1, false>(q, head_dim, k + j * head_dim, nullptr, vscale, scores + j, ld);
  }
}

void f16_scores_heads_sse(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                          float* scores, size_t ld) {
  const __m128 vscale = _mm_set1_ps(scale);
  if (n_heads > 4 && head_dim <= kF16MaxDim) {
    // More than 4 heads: each key converted once into kf, then the heads 4 at a time from there.
    alignas(16) float kf[kF16MaxDim];
    for (size_t j = 0; j < n; ++j) {
      prefetch_ahead(k + (j + kReadAheadRows) * head_dim, 2 * head_dim);
      for (size_t i = 0; i < head_dim; i += 8) {
        __m128 lo, hi;
        f16x8(k + j * head_dim + i, lo, hi);
        _mm_store_ps(kf + i, lo);
        _mm_store_ps(kf + i + 4, hi);
      }
      for (size_t h = 0; h < n_heads; h += 4) {
        const float* qh = q + h * head_dim;
        float* sh = scores + h * ld + j;
        switch (min_size(4, n_heads - h)) {
          case 4: f16_tile<4, 1, true>(qh, head_dim, nullptr, kf, vscale, sh, ld); break;
          case 3: f16_tile<3, 1, true>(qh, head_dim, nullptr, kf, vscale, sh, ld); break;
          case 2: f16_tile<2, 1, true>(qh, head_dim, nullptr, kf, vscale, sh, ld); break;
          default: f16_tile<1, 1, true>(qh, head_dim, nullptr, kf, vscale, sh, ld); break;
        }
      }
    }
    return;
  }
  for (size_t h = 0; h < n_heads; h += 4) {  // groups of up to 4 heads (one, a decode group)
    const float* qh = q + h * head_dim;
    float* sh = scores + h * ld;
    switch (min_size(4, n_heads - h)) {
      case 4: f16_scores_group<4>(qh, k, head_dim, n, vscale, sh, ld, h == 0); break;
      case 3: f16_scores_group<3>(qh, k, head_dim, n, vscale, sh, ld, h == 0); break;
      case 2: f16_scores_group<2>(qh, k, head_dim, n, vscale, sh, ld, h == 0); break;
      default: f16_scores_group<1>(qh, k, head_dim, n, vscale, sh, ld, h == 0); break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Softmax: exp without FMA.

// exp(x) for x <= 0 (softmax arguments), below −87 0 (as the AVX2 one). x = k·ln2 + r, |r| <= ln2/2:
// k·ln2 taken off in two parts (the high one has 15 significant bits, so k·ln2_hi is exact for
// |k| <= 126), then e^r = 1 + (r + r²·P(r)) with P the Taylor terms 1/2 .. 1/7! (truncation ~5e-9
// relative): the roundings of P and r²·P are scaled by r² and those of the last two adds are below
// an ulp in all, so within 2 ulp of std::exp without fused multiply-adds. 2^k (k >= −126, a normal
// scale) by the exponent bits: an exact product.
inline __m128 exp_neg(__m128 x) {
  const __m128 lo = _mm_set1_ps(-87.0f);
  const __m128 under = _mm_cmplt_ps(x, lo);
  x = _mm_max_ps(x, lo);
  const __m128 k =
      _mm_round_ps(_mm_mul_ps(x, _mm_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m128 r = _mm_sub_ps(x, _mm_mul_ps(k, _mm_set1_ps(0.693145751953125f)));
  r = _mm_sub_ps(r, _mm_mul_ps(k, _mm_set1_ps(1.428606765330187045e-06f)));
  __m128 p = _mm_set1_ps(1.0f / 5040.0f);
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f / 720.0f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f / 120.0f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f / 24.0f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(1.0f / 6.0f));
  p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(0.5f));
  const __m128 e = _mm_add_ps(_mm_set1_ps(1.0f), _mm_add_ps(r, _mm_mul_ps(_mm_mul_ps(r, r), p)));
  const __m128i pow2 = _mm_slli_epi32(_mm_add_epi32(_mm_cvtps_epi32(k), _mm_set1_epi32(127)), 23);
  return _mm_andnot_ps(under, _mm_mul_ps(e, _mm_castsi128_ps(pow2)));
}

// x[j] = exp(x[j] − mx) in place; returns Σ x (8 lanes in two 4-lane sums, then the tail in order).
float exp_shift_sum(float* x, size_t n, float mx) {
  const __m128 vm = _mm_set1_ps(mx);
  __m128 s0 = _mm_setzero_ps(), s1 = _mm_setzero_ps();
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m128 e0 = exp_neg(_mm_sub_ps(_mm_loadu_ps(x + j), vm));
    const __m128 e1 = exp_neg(_mm_sub_ps(_mm_loadu_ps(x + j + 4), vm));
    _mm_storeu_ps(x + j, e0);
    _mm_storeu_ps(x + j + 4, e1);
    s0 = _mm_add_ps(s0, e0);
    s1 = _mm_add_ps(s1, e1);
  }
  float sum = hsum_ps(_mm_add_ps(s0, s1));
  for (; j < n; ++j) {
    x[j] = _mm_cvtss_f32(exp_neg(_mm_set_ss(x[j] - mx)));
    sum += x[j];
  }
  return sum;
}

// In 4 independent chains for long rows (a max is exact in any order).
float max_of(const float* x, size_t n) {
  __m128 m0 = _mm_set1_ps(x[0]), m1 = m0, m2 = m0, m3 = m0;
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    m0 = _mm_max_ps(m0, _mm_loadu_ps(x + j));
    m1 = _mm_max_ps(m1, _mm_loadu_ps(x + j + 4));
    m2 = _mm_max_ps(m2, _mm_loadu_ps(x + j + 8));
    m3 = _mm_max_ps(m3, _mm_loadu_ps(x + j + 12));
  }
  for (; j + 4 <= n; j += 4) m0 = _mm_max_ps(m0, _mm_loadu_ps(x + j));
  float mx = hmax_ps(_mm_max_ps(_mm_max_ps(m0, m1), _mm_max_ps(m2, m3)));
  for (; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
  return mx;
}

// ---------------------------------------------------------------------------------------------
// Per-head V sums (the CpuVariant entries): the scalar twin's grouping per lane, 4 lanes a vector.

// Lanes [0, 4·NC) of out: terms of up to 4 keys summed pairwise ((t0 + t1) + (t2 + t3); a last
// group (t0 + t1) + t2, t0 + t1 or t0), then added to out, keys in order: the twin's adds.
template <int NC, class Term>
void accum_groups(size_t n, float* out, Term term) {
  __m128 o[NC];
  for (int c = 0; c < NC; ++c) o[c] = _mm_loadu_ps(out + 4 * c);
  for (size_t j = 0; j < n; j += 4) {
    const size_t g = min_size(4, n - j);
    for (int c = 0; c < NC; ++c) {
      __m128 s;
      if (g == 4) {
        s = _mm_add_ps(_mm_add_ps(term(j, c), term(j + 1, c)), _mm_add_ps(term(j + 2, c), term(j + 3, c)));
      } else if (g == 3) {
        s = _mm_add_ps(_mm_add_ps(term(j, c), term(j + 1, c)), term(j + 2, c));
      } else if (g == 2) {
        s = _mm_add_ps(term(j, c), term(j + 1, c));
      } else {
        s = term(j, c);
      }
      o[c] = _mm_add_ps(o[c], s);
    }
  }
  for (int c = 0; c < NC; ++c) _mm_storeu_ps(out + 4 * c, o[c]);
}

// All lanes of a head (head_dim a multiple of 4) in passes of 32, then one of what is left.
template <class MakeTerm>
void accum_lanes(size_t head_dim, size_t n, float* out, MakeTerm make) {
  size_t i0 = 0;
  for (; i0 + 32 <= head_dim; i0 += 32) accum_groups<8>(n, out + i0, make(i0));
  switch ((head_dim - i0) / 4) {
    case 7: accum_groups<7>(n, out + i0, make(i0)); break;
    case 6: accum_groups<6>(n, out + i0, make(i0)); break;
    case 5: accum_groups<5>(n, out + i0, make(i0)); break;
    case 4: accum_groups<4>(n, out + i0, make(i0)); break;
    case 3: accum_groups<3>(n, out + i0, make(i0)); break;
    case 2: accum_groups<2>(n, out + i0, make(i0)); break;
    case 1: accum_groups<1>(n, out + i0, make(i0)); break;
    default: break;
  }
}

// ---------------------------------------------------------------------------------------------
// Grouped fp16 V sums: out[h][i] = out[h][i] + p[h][j]·v[j][i] (a multiply, then an add), keys in
// order for each (head, lane). The probabilities broadcast once per key chunk into pb (a multiply
// then reads its operand from there). Head groups of up to 8; 1 to 4 heads take 2 to 8 vectors of
// lanes a pass (8 chains), 5 to 8 heads one. With up to 4 heads each V row's lanes of a pass are
// converted once for the pass's heads (a pass covers its own lanes: each value converted once). With
// more (VF) a chunk's rows are converted once into vf, 8 values a step, and every pass and head
// group reads them as f32 (the same values: the conversion is exact). 4 values a pass cost more
// than 8 a step, and a prefill tile's groups of 8 converted them each again: sse4 attention of 7
// heads of 64 0.91x the time, 28 heads 0.70x (docs/bench/cpu.md "The SSE4 variant, part 2").

constexpr size_t kPbKeys = 64;     // keys whose broadcast probabilities pb holds
constexpr size_t kPbHeads = 8;     // heads a group
constexpr size_t kVfFloats = 4096;  // f32 V values a chunk converts at once (16 KB): 64 keys of 64 dims

template <int NH, int NL, bool FETCH, bool VF>
void f16v_tile(const __m128* pb, const uint16_t* v, const float* vf, size_t head_dim, size_t nk, float* out, size_t i0,
               const AttnReadAhead& ahead) {
  __m128 o[NH][NL];
  for (int h = 0; h < NH; ++h) {
    for (int c = 0; c < NL; ++c) o[h][c] = _mm_loadu_ps(out + h * head_dim + i0 + 4 * c);
  }
  for (size_t j = 0; j < nk; ++j) {
    if constexpr (FETCH) read_ahead(ahead, j);
    const __m128* pj = pb + j * kPbHeads;
    if constexpr (VF) {
      const float* row = vf + j * head_dim + i0;
      for (int c = 0; c < NL; ++c) {
        const __m128 x = _mm_load_ps(row + 4 * c);
        for (int h = 0; h < NH; ++h) o[h][c] = _mm_add_ps(o[h][c], _mm_mul_ps(pj[h], x));
      }
    } else if constexpr (NL == 1) {
      const __m128 x = f16x4(v + j * head_dim + i0);
      for (int h = 0; h < NH; ++h) o[h][0] = _mm_add_ps(o[h][0], _mm_mul_ps(pj[h], x));
    } else {
      const uint16_t* row = v + j * head_dim + i0;
      for (int c = 0; c < NL; c += 2) {
        __m128 x0, x1;
        f16x8(row + 4 * c, x0, x1);
        for (int h = 0; h < NH; ++h) {
          o[h][c] = _mm_add_ps(o[h][c], _mm_mul_ps(pj[h], x0));
          o[h][c + 1] = _mm_add_ps(o[h][c + 1], _mm_mul_ps(pj[h], x1));
        }
      }
    }
  }
  for (int h = 0; h < NH; ++h) {
    for (int c = 0; c < NL; ++c) _mm_storeu_ps(out + h * head_dim + i0 + 4 * c, o[h][c]);
  }
}

template <int NH, int NL, bool VF>
void f16v_tile_any(const __m128* pb, const uint16_t* v, const float* vf, size_t head_dim, size_t nk, float* out,
                   size_t i0, const AttnReadAhead& ahead) {
  if (ahead.rows != nullptr) return f16v_tile<NH, NL, true, VF>(pb, v, vf, head_dim, nk, out, i0, ahead);
  f16v_tile<NH, NL, false, VF>(pb, v, vf, head_dim, nk, out, i0, ahead);
}

// Every lane of heads [0, NH) (head_dim a multiple of 8): passes of NL vectors, then of 2; the
// first pass reads the rows ahead when asked.
template <int NH, int NL, bool VF>
void f16v_passes(const __m128* pb, const uint16_t* v, const float* vf, size_t head_dim, size_t nk, float* out,
                 const AttnReadAhead& ahead) {
  const AttnReadAhead none{};
  size_t i0 = 0;
  for (; i0 + 4 * NL <= head_dim; i0 += 4 * NL) {
    f16v_tile_any<NH, NL, VF>(pb, v, vf, head_dim, nk, out, i0, i0 == 0 ? ahead : none);
  }
  if constexpr (NL > 2) {
    for (; i0 < head_dim; i0 += 8) f16v_tile_any<NH, 2, VF>(pb, v, vf, head_dim, nk, out, i0, i0 == 0 ? ahead : none);
  }
}

template <bool VF>
void f16v_group(size_t ng, const __m128* pb, const uint16_t* v, const float* vf, size_t head_dim, size_t nk, float* out,
                const AttnReadAhead& ahead) {
  switch (ng) {
    case 1: return f16v_passes<1, 8, VF>(pb, v, vf, head_dim, nk, out, ahead);
    case 2: return f16v_passes<2, 4, VF>(pb, v, vf, head_dim, nk, out, ahead);
    case 3: return f16v_passes<3, 2, VF>(pb, v, vf, head_dim, nk, out, ahead);
    case 4: return f16v_passes<4, 2, VF>(pb, v, vf, head_dim, nk, out, ahead);
    case 5: return f16v_passes<5, 1, VF>(pb, v, vf, head_dim, nk, out, ahead);
    case 6: return f16v_passes<6, 1, VF>(pb, v, vf, head_dim, nk, out, ahead);
    case 7: return f16v_passes<7, 1, VF>(pb, v, vf, head_dim, nk, out, ahead);
    default: return f16v_passes<8, 1, VF>(pb, v, vf, head_dim, nk, out, ahead);
  }
}

void f16_accum_v_heads_sse(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                           float* out) {
  alignas(16) __m128 pb[kPbKeys * kPbHeads];
  alignas(16) float vf[kVfFloats];
  const bool convert_once = n_heads > 4 && head_dim <= kVfFloats;
  const size_t chunk = convert_once ? min_size(kPbKeys, kVfFloats / head_dim) : kPbKeys;
  for (size_t j0 = 0; j0 < n; j0 += chunk) {
    const size_t nk = min_size(chunk, n - j0);
    const uint16_t* vj = v + j0 * head_dim;
    if (convert_once) {  // reading kReadAheadRows rows ahead as it goes, a line every 32 values
      const uint16_t* ahead = vj + kReadAheadRows * head_dim;
      for (size_t e = 0; e < nk * head_dim; e += 8) {
        if (e % 32 == 0) _mm_prefetch(reinterpret_cast<const char*>(ahead + e), _MM_HINT_T0);
        __m128 lo, hi;
        f16x8(vj + e, lo, hi);
        _mm_store_ps(vf + e, lo);
        _mm_store_ps(vf + e + 4, hi);
      }
    }
    for (size_t g0 = 0; g0 < n_heads; g0 += kPbHeads) {
      const size_t ng = min_size(kPbHeads, n_heads - g0);
      for (size_t j = 0; j < nk; ++j) {
        for (size_t h = 0; h < ng; ++h) pb[j * kPbHeads + h] = _mm_set1_ps(p[(g0 + h) * ldp + j0 + j]);
      }
      float* og = out + g0 * head_dim;
      if (convert_once) {
        f16v_group<true>(ng, pb, vj, vf, head_dim, nk, og, AttnReadAhead{});
      } else {
        const AttnReadAhead ahead =
            g0 == 0 ? AttnReadAhead{reinterpret_cast<const char*>(vj), 2 * head_dim, nullptr, 0} : AttnReadAhead{};
        f16v_group<false>(ng, pb, vj, nullptr, head_dim, nk, og, ahead);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Grouped packed V sums, attn.h's v16 rule: per run of kV16Run keys, head and scale block the int16
// codes c = nearbyint(w·32767/M) of the weights w = p·d (M their largest magnitude; cvtps2dq rounds
// to nearest even as std::nearbyint), then Σ c·q exact in int32 through pmaddwd over key pairs, then
// out += float(sum)·(M/32767). The same codes and sums as the scalar twin, so its bits.

constexpr size_t kV16Heads = 8;         // heads whose codes one pass holds
constexpr size_t kV16MaxBlocks = 8;     // scale blocks a head (more: the scalar twin)
constexpr size_t kV16Ld = kV16Run + 8;  // int16 codes a (head, block) row: the run and a zero pad

// Codes of heads [0, nh) for the keys [0, n) of a run: row (h·nb + b) of c at stride kV16Ld, and the
// scales s[h·nb + b] (0: M below kV16MinWeight, the block adds nothing; its codes are then 0: w·0);
// c[n] = 0 (a last odd key pairs with 0). ds: the keys' block scales as f32, [block][key].
void v16_codes(const float* p, size_t ldp, size_t nh, const float* ds, size_t nb, size_t n, int16_t* c, float* s) {
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
  for (size_t h = 0; h < nh; ++h) {
    const float* ph = p + h * ldp;
    for (size_t b = 0; b < nb; ++b) {
      const float* db = ds + b * kV16Run;
      __m128 mx = _mm_setzero_ps();
      size_t j = 0;
      for (; j + 4 <= n; j += 4) {
        mx = _mm_max_ps(mx, _mm_and_ps(_mm_mul_ps(_mm_loadu_ps(ph + j), _mm_load_ps(db + j)), abs_mask));
      }
      float m = hmax_ps(mx);
      for (; j < n; ++j) {
        const float a = std::fabs(ph[j] * db[j]);
        m = a > m ? a : m;
      }
      const bool on = m >= kV16MinWeight;
      s[h * nb + b] = on ? m / 32767.0f : 0.0f;
      const float inv = on ? 32767.0f / m : 0.0f;
      const __m128 vinv = _mm_set1_ps(inv);
      int16_t* row = c + (h * nb + b) * kV16Ld;
      for (j = 0; j + 8 <= n; j += 8) {
        const __m128i x0 = _mm_cvtps_epi32(_mm_mul_ps(_mm_mul_ps(_mm_loadu_ps(ph + j), _mm_load_ps(db + j)), vinv));
        const __m128i x1 =
            _mm_cvtps_epi32(_mm_mul_ps(_mm_mul_ps(_mm_loadu_ps(ph + j + 4), _mm_load_ps(db + j + 4)), vinv));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(row + j), _mm_packs_epi32(x0, x1));  // |c| <= 32767
      }
      for (; j < n; ++j) row[j] = static_cast<int16_t>(_mm_cvtss_si32(_mm_set_ss(ph[j] * db[j] * inv)));
      row[n] = 0;
    }
  }
}

// Two keys' int8 values at lanes [0, 8) widened to int16 and interleaved: lo = (a0, b0, a1, b1, ..)
// for lanes 0-3, hi for 4-7, one pmaddwd each against a (c_a, c_b) pair gives 4 lanes' Σ c·q.
inline void pair_rows(const int8_t* a, const int8_t* b, __m128i& lo, __m128i& hi) {
  const __m128i wa = _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)));
  const __m128i wb = b != nullptr ? _mm_cvtepi8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)))
                                  : _mm_setzero_si128();
  lo = _mm_unpacklo_epi16(wa, wb);
  hi = _mm_unpackhi_epi16(wa, wb);
}

// Heads [0, NH) (code rows c, scales s of their own blocks) over NC chunks of 8 lanes from i0 (a
// chunk inside one block: block a multiple of 8): keys in pairs (a last odd key with a zero row),
// the pair's codes broadcast per head, the int32 sums scaled and added to out.
template <int NH, int NC, bool FETCH>
void v16_tile(const int16_t* c, const float* s, size_t nb, const int8_t* q, size_t head_dim, size_t block, size_t n,
              float* out, size_t i0, const AttnReadAhead& ahead) {
  __m128i acc[NH][NC][2];
  const int16_t* cr[NH][NC];
  for (int h = 0; h < NH; ++h) {
    for (int k = 0; k < NC; ++k) {
      acc[h][k][0] = acc[h][k][1] = _mm_setzero_si128();
      cr[h][k] = c + (h * nb + (i0 + 8 * k) / block) * kV16Ld;
    }
  }
  auto pair = [&](size_t j, const int8_t* row_b) __attribute__((always_inline)) {
    __m128i lo[NC], hi[NC];
    for (int k = 0; k < NC; ++k) {
      pair_rows(q + j * head_dim + i0 + 8 * k, row_b != nullptr ? row_b + i0 + 8 * k : nullptr, lo[k], hi[k]);
    }
    for (int h = 0; h < NH; ++h) {
      for (int k = 0; k < NC; ++k) {
        int32_t w;
        std::memcpy(&w, cr[h][k] + j, 4);  // (c[j], c[j + 1])
        const __m128i cb = _mm_set1_epi32(w);
        acc[h][k][0] = _mm_add_epi32(acc[h][k][0], _mm_madd_epi16(lo[k], cb));
        acc[h][k][1] = _mm_add_epi32(acc[h][k][1], _mm_madd_epi16(hi[k], cb));
      }
    }
  };
  size_t j = 0;
  for (; j + 2 <= n; j += 2) {
    if constexpr (FETCH) {
      read_ahead(ahead, j);
      read_ahead(ahead, j + 1);
    }
    pair(j, q + (j + 1) * head_dim);
  }
  if (j < n) pair(j, nullptr);  // c[n] = 0
  for (int h = 0; h < NH; ++h) {
    for (int k = 0; k < NC; ++k) {
      const float sc = s[h * nb + (i0 + 8 * k) / block];
      if (sc == 0.0f) continue;
      const __m128 vs = _mm_set1_ps(sc);
      float* o = out + h * head_dim + i0 + 8 * k;
      _mm_storeu_ps(o, _mm_add_ps(_mm_loadu_ps(o), _mm_mul_ps(_mm_cvtepi32_ps(acc[h][k][0]), vs)));
      _mm_storeu_ps(o + 4, _mm_add_ps(_mm_loadu_ps(o + 4), _mm_mul_ps(_mm_cvtepi32_ps(acc[h][k][1]), vs)));
    }
  }
}

template <int NH, int NC>
void v16_tile_any(const int16_t* c, const float* s, size_t nb, const int8_t* q, size_t head_dim, size_t block,
                  size_t n, float* out, size_t i0, const AttnReadAhead& ahead) {
  if (ahead.rows != nullptr) return v16_tile<NH, NC, true>(c, s, nb, q, head_dim, block, n, out, i0, ahead);
  v16_tile<NH, NC, false>(c, s, nb, q, head_dim, block, n, out, i0, ahead);
}

// One run of at most kV16Run keys (block a multiple of 8, at most kV16MaxBlocks blocks).
void v16_run(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d, size_t head_dim,
             size_t block, size_t n, float* out, bool fetch) {
  const size_t nb = head_dim / block;
  // The run's block scales as f32, [block][key]: the n·nb fp16 values converted 4 at a time (in
  // place for one block, else through flat and spread).
  alignas(16) float ds[kV16MaxBlocks * kV16Run];
  alignas(16) float flat[kV16MaxBlocks * kV16Run];
  float* conv = nb == 1 ? ds : flat;
  size_t t = 0;
  for (; t + 4 <= n * nb; t += 4) _mm_storeu_ps(conv + t, f16x4(d + t));
  for (; t < n * nb; ++t) conv[t] = f16_at(d + t);
  if (nb > 1) {
    for (size_t j = 0; j < n; ++j) {
      for (size_t b = 0; b < nb; ++b) ds[b * kV16Run + j] = flat[j * nb + b];
    }
  }
  const AttnReadAhead ahead =
      fetch ? AttnReadAhead{reinterpret_cast<const char*>(q), head_dim, reinterpret_cast<const char*>(d), 2 * nb}
            : AttnReadAhead{};
  const AttnReadAhead none{};
  alignas(16) int16_t c[kV16Heads * kV16MaxBlocks * kV16Ld];
  float s[kV16Heads * kV16MaxBlocks];
  const size_t chunks = head_dim / 8;
  for (size_t g0 = 0; g0 < n_heads; g0 += kV16Heads) {
    const size_t ng = min_size(kV16Heads, n_heads - g0);
    v16_codes(p + g0 * ldp, ldp, ng, ds, nb, n, c, s);
    for (size_t h0 = 0; h0 < ng; h0 += 4) {  // passes of up to 4 heads, 8 chains of 4 lanes
      const size_t nh = min_size(4, ng - h0);
      const int16_t* ch = c + h0 * nb * kV16Ld;
      const float* sh = s + h0 * nb;
      float* oh = out + (g0 + h0) * head_dim;
      for (size_t k = 0; k < chunks;) {
        const AttnReadAhead& a = g0 == 0 && h0 == 0 && k == 0 ? ahead : none;
        const size_t i0 = 8 * k;
        if (nh <= 2 && k + 2 <= chunks) {  // one or two heads: two chunks a pass (more chains)
          if (nh == 2) {
            v16_tile_any<2, 2>(ch, sh, nb, q, head_dim, block, n, oh, i0, a);
          } else {
            v16_tile_any<1, 2>(ch, sh, nb, q, head_dim, block, n, oh, i0, a);
          }
          k += 2;
          continue;
        }
        switch (nh) {
          case 4: v16_tile_any<4, 1>(ch, sh, nb, q, head_dim, block, n, oh, i0, a); break;
          case 3: v16_tile_any<3, 1>(ch, sh, nb, q, head_dim, block, n, oh, i0, a); break;
          case 2: v16_tile_any<2, 1>(ch, sh, nb, q, head_dim, block, n, oh, i0, a); break;
          default: v16_tile_any<1, 1>(ch, sh, nb, q, head_dim, block, n, oh, i0, a); break;
        }
        k += 1;
      }
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The per-head entries (CpuVariant, cpu_variants.h).

float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim) {
  if (k8_block_size(head_dim) != 32) return scalar::k8_dot(a, da, b, db, head_dim);
  return dot32(a, da, b, db, head_dim);
}

void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim, size_t n,
               float scale, float* scores) {
  if (k8_block_size(head_dim) != 32 || head_dim / 32 > kK8MaxBlocks) {
    return scalar::k8_scores(q, dq, k, dk, head_dim, n, scale, scores);
  }
  k8_scores_pass(q, dq, 1, k, dk, head_dim, n, scale, scores, n, true);
}

void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores) {
  if (head_dim % 8 != 0) return scalar::f16_scores(q, k, head_dim, n, scale, scores);
  f16_scores_heads_sse(q, 1, k, head_dim, n, scale, scores, n);
}

void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out) {
  if (head_dim % 4 != 0) return scalar::f16_accum_v(p, v, head_dim, n, out);
  accum_lanes(head_dim, n, out, [&](size_t i0) {
    return [=](size_t j, int c) __attribute__((always_inline)) {
      return _mm_mul_ps(_mm_set1_ps(p[j]), f16x4(v + j * head_dim + i0 + 4 * c));
    };
  });
}

void softmax(float* x, size_t n) {
  const float sum = exp_shift_sum(x, n, max_of(x, n));
  const float inv = 1.0f / sum;
  const __m128 vinv = _mm_set1_ps(inv);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) _mm_storeu_ps(x + j, _mm_mul_ps(_mm_loadu_ps(x + j), vinv));
  for (; j < n; ++j) x[j] *= inv;
}

// coef = p[j]·fp16(d[j][b]) (f32), then coef·q per lane, as the twin (block a multiple of 4, so the
// 4 lanes of a vector share their scale). The coefficients of up to 64 keys at a time in cf (chunks
// from key 0 in multiples of 4: the twin's groups of 4 keys stay whole, and out holds the f32 sums
// between chunks, so the same adds).
void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out) {
  constexpr size_t kKeys = 64, kBlocks = 16;
  if (block == 0 || block % 4 != 0 || head_dim % block != 0 || head_dim / block > kBlocks) {
    return scalar::k8_accum_v(p, q, d, head_dim, block, n, out);
  }
  const size_t nb = head_dim / block;
  float cf[kKeys * kBlocks];
  for (size_t j0 = 0; j0 < n; j0 += kKeys) {
    const size_t nk = min_size(kKeys, n - j0);
    for (size_t t = 0; t < nk * nb; ++t) cf[t] = p[j0 + t / nb] * f16_at(d + j0 * nb + t);
    const int8_t* qj = q + j0 * head_dim;
    accum_lanes(head_dim, nk, out, [&](size_t i0) {
      return [=, &cf](size_t j, int c) __attribute__((always_inline)) {
        const size_t i = i0 + 4 * static_cast<size_t>(c);
        int32_t w;
        std::memcpy(&w, qj + j * head_dim + i, 4);
        return _mm_mul_ps(_mm_set1_ps(cf[j * nb + i / block]), _mm_cvtepi32_ps(_mm_cvtepi8_epi32(_mm_cvtsi32_si128(w))));
      };
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The grouped entries (AttnHeadsVariant, attn_heads.h).

namespace {

void k8_scores_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld) {
  if (k8_block_size(head_dim) != 32 || head_dim / 32 > kK8MaxBlocks) {
    return scalar::k8_scores_heads(q, dq, n_heads, k, dk, head_dim, n, scale, scores, ld);
  }
  const size_t nb = head_dim / 32;
  for (size_t h0 = 0; h0 < n_heads; h0 += kK8Heads) {
    k8_scores_pass(q + h0 * head_dim, dq + h0 * nb, min_size(kK8Heads, n_heads - h0), k, dk, head_dim, n, scale,
                   scores + h0 * ld, ld, h0 == 0);
  }
}

void f16_scores_heads(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld) {
  if (head_dim % 8 != 0) return scalar::f16_scores_heads(q, n_heads, k, head_dim, n, scale, scores, ld);
  f16_scores_heads_sse(q, n_heads, k, head_dim, n, scale, scores, ld);
}

void softmax_partial(float* x, size_t n, float* m, float* l) {
  *m = max_of(x, n);
  *l = exp_shift_sum(x, n, *m);
}

// A multiply then an add per (key, head, lane), keys in order (attn.h: within one f32 rounding per
// key of the scalar twin's std::fma). head_dim not a multiple of 8: the scalar twin.
void f16_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                       float* out) {
  if (head_dim % 8 != 0) return scalar::f16_accum_v_heads(p, ldp, n_heads, v, head_dim, n, out);
  f16_accum_v_heads_sse(p, ldp, n_heads, v, head_dim, n, out);
}

void k8_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                      size_t head_dim, size_t block, size_t n, float* out) {
  if (block == 0 || block % 8 != 0 || head_dim % block != 0 || head_dim / block > kV16MaxBlocks) {
    return scalar::k8_accum_v_heads(p, ldp, n_heads, q, d, head_dim, block, n, out);
  }
  const size_t nb = head_dim / block;
  for (size_t j0 = 0; j0 < n; j0 += kV16Run) {
    v16_run(p + j0, ldp, n_heads, q + j0 * head_dim, d + j0 * nb, head_dim, block, min_size(kV16Run, n - j0), out,
            true);
  }
}

// The scalar rule's operations 4 lanes at a time (scalar/k8_scalar.cpp; the AVX2 loop's steps), so
// the same bytes and scales: amax by max (a NaN |x| leaves amax, as std::max there), d = amax / 127,
// q = fmin(fmax(roundf(x / d), −127), 127) with x / d a true division and roundf's half away from
// zero built from a truncation (t = trunc(y), y − t exact, ±1 when |y − t| >= 0.5); a NaN quotient
// gives −127 (maxps returns its second operand). Blocks of other than 32 values: the scalar twin.
void k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d) {
  if (head_dim == 0 || head_dim % 32 != 0) return scalar::k8_quantize(x, head_dim, q, d);
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
  const __m128 sign_mask = _mm_castsi128_ps(_mm_set1_epi32(static_cast<int>(0x80000000u)));
  const __m128 one = _mm_set1_ps(1.0f), half = _mm_set1_ps(0.5f);
  const __m128 lo = _mm_set1_ps(-127.0f), hi = _mm_set1_ps(127.0f);
  for (size_t b = 0; b < head_dim / 32; ++b) {
    const float* xb = x + 32 * b;
    __m128 v[8];
    __m128 mx = _mm_setzero_ps();
    for (int k = 0; k < 8; ++k) {
      v[k] = _mm_loadu_ps(xb + 4 * k);
      mx = _mm_max_ps(_mm_and_ps(v[k], abs_mask), mx);  // NaN in the first operand: mx
    }
    const float db = hmax_ps(mx) / 127.0f;
    d[b] = f32_to_fp16(db);
    if (db == 0.0f) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 32 * b), _mm_setzero_si128());
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 32 * b + 16), _mm_setzero_si128());
      continue;
    }
    const __m128 vd = _mm_set1_ps(db);
    __m128i iv[8];
    for (int k = 0; k < 8; ++k) {
      const __m128 y = _mm_div_ps(v[k], vd);
      const __m128 t = _mm_round_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      const __m128 frac = _mm_and_ps(_mm_sub_ps(y, t), abs_mask);
      const __m128 away = _mm_or_ps(_mm_and_ps(y, sign_mask), one);  // ±1 with y's sign
      __m128 r = _mm_add_ps(t, _mm_and_ps(_mm_cmpge_ps(frac, half), away));
      r = _mm_min_ps(_mm_max_ps(r, lo), hi);  // a NaN quotient: −127, as std::fmax there
      iv[k] = _mm_cvttps_epi32(r);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 32 * b),
                     _mm_packs_epi16(_mm_packs_epi32(iv[0], iv[1]), _mm_packs_epi32(iv[2], iv[3])));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 32 * b + 16),
                     _mm_packs_epi16(_mm_packs_epi32(iv[4], iv[5]), _mm_packs_epi32(iv[6], iv[7])));
  }
}

}  // namespace

// kv_row_to_fp16 stays the scalar twin (see the top of the file).
const AttnHeadsVariant kAttnHeads = {&k8_scores_heads,   &f16_scores_heads, &softmax_partial,
                                     &f16_accum_v_heads, &k8_accum_v_heads, &k8_quantize,
                                     &scalar::kv_row_to_fp16};

}  // namespace alap::kernels::sse4
