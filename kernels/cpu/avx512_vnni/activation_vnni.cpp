// AVX-512 elementwise steps of the forward pass: the activation quantiser (quant.h
// quantize_activations, byte for byte the scalar twin's q, d, s and s4) and SwiGLU's gate
// (activation.h silu_mul, within a few ulp of the twin), 16 lanes at a time.
//
// The quantiser takes 16 blocks of 32 at a time. The AVX2 one reduces each block's max|x| and its
// sums to a scalar and divides twice a block; here the 16 maxima and the 16 sums come out of one
// transposing reduction each (every instruction serves four to sixteen blocks), the two divisions
// run once for 16 blocks, and two blocks' codes are packed, clamped and summed (vpdpbusd by ones
// gives the four-value sums s4) as one 64-byte vector. Blocks left over (fewer than 16) go through
// the AVX2 code, whose bytes are the same.
// GCC 12's avx512fintrin.h converts from _mm512_undefined_*(), which -W(maybe-)uninitialized reports
// once inlined at -O3: a false positive in the system header (as in matmul_vnni.cpp).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "avx512_vnni/exp_avx512.h"
#include "cpu_variants.h"

namespace alap::kernels::avx512vnni {

namespace {

// Halves of 2·k and 2·k + 1 of v[0..8) are the 8 lanes of block 2·k, 2·k + 1 (v[k] holds two
// blocks: lanes 0–7 and 8–15). Returns the 16 blocks' reductions, block b in lane b; op is the
// (associative, commutative) reduction on 16 lanes of float (max) or int32 (add) seen as __m512i.
// The permutation of 16 int32 lanes that transposes them as a 4 × 4 matrix: lane 4·i + j takes
// lane 4·j + i. Both transposing steps below end with it.
inline __m512i transpose_4x4_lanes(__m512i v) {
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), v);
}

template <class Op>
inline __m512i reduce_16_blocks(const __m512i (&v)[8], Op op) {
  __m512i w[4], x[2];
  // Per 128-bit lane: 4 partials of one block. w[j] holds blocks 4j .. 4j + 3 in its lanes 0–3.
  for (int j = 0; j < 4; ++j) {
    const __m512i a = v[2 * j], b = v[2 * j + 1];
    w[j] = op(_mm512_shuffle_i32x4(a, b, 0x88), _mm512_shuffle_i32x4(a, b, 0xDD));
  }
  // Per 128-bit lane: 2 partials each of two blocks.
  for (int j = 0; j < 2; ++j) {
    const __m512i a = w[2 * j], b = w[2 * j + 1];
    x[j] = op(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
  }
  // Per 128-bit lane: 4 blocks' results.
  const __m512 a = _mm512_castsi512_ps(x[0]), b = _mm512_castsi512_ps(x[1]);
  const __m512i r = op(_mm512_castps_si512(_mm512_shuffle_ps(a, b, 0x88)),
                       _mm512_castps_si512(_mm512_shuffle_ps(a, b, 0xDD)));
  // Lane 4·L + i of r is block L + 4·i; the transpose puts block b in lane b.
  return transpose_4x4_lanes(r);
}

inline __m512i max_ps_i(__m512i a, __m512i b) {
  return _mm512_castps_si512(_mm512_max_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(b)));
}
inline __m512i add_epi32(__m512i a, __m512i b) { return _mm512_add_epi32(a, b); }

// 16 blocks of 32 values from x: q [512], d [16], s [16], s4 [128].
inline void quantize_16_blocks(const float* x, int8_t* q, float* d, int32_t* s, int32_t* s4) {
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  __m512i m[8];
  for (int j = 0; j < 8; ++j) {  // blocks 2j, 2j + 1: the max of each block's two halves
    const float* p = x + 64 * j;
    const __m512 a = _mm512_max_ps(_mm512_and_ps(_mm512_loadu_ps(p), abs_mask),
                                   _mm512_and_ps(_mm512_loadu_ps(p + 16), abs_mask));
    const __m512 b = _mm512_max_ps(_mm512_and_ps(_mm512_loadu_ps(p + 32), abs_mask),
                                   _mm512_and_ps(_mm512_loadu_ps(p + 48), abs_mask));
    // lanes 0–7: a's halves, lanes 8–15: b's halves
    const __m512 lo = _mm512_shuffle_f32x4(a, b, 0x44), hi = _mm512_shuffle_f32x4(a, b, 0xEE);
    m[j] = _mm512_castps_si512(_mm512_max_ps(lo, hi));
  }
  const __m512 amax = _mm512_castsi512_ps(reduce_16_blocks(m, max_ps_i));
  const __m512 db = _mm512_div_ps(amax, _mm512_set1_ps(127.0f));
  const __mmask16 nz = _mm512_cmp_ps_mask(db, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  const __m512 id = _mm512_maskz_div_ps(nz, _mm512_set1_ps(1.0f), db);
  _mm512_storeu_ps(d, db);
  alignas(64) float ids[16];
  _mm512_store_ps(ids, id);

  const __m512i ones = _mm512_set1_epi8(1), lim = _mm512_set1_epi8(-127);
  __m512i s4v[8];
  for (int j = 0; j < 8; ++j) {  // blocks 2j, 2j + 1: 64 codes
    const float* p = x + 64 * j;
    const __m512 i0 = _mm512_set1_ps(ids[2 * j]), i1 = _mm512_set1_ps(ids[2 * j + 1]);
    // cvtps2dq rounds to nearest even (the default MXCSR), as nearbyint; NaN or out of range gives
    // INT32_MIN, which the saturating packs make −128 and the max below −127, the twin's rule.
    const __m512i c0 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(p), i0));
    const __m512i c1 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(p + 16), i0));
    const __m512i c2 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(p + 32), i1));
    const __m512i c3 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(p + 48), i1));
    // packs work per 128-bit lane: lane L of the bytes holds c0[4L..4L+4), c1[..], c2[..], c3[..]
    // (int32 4L + m of the packed bytes is c_m's 4L..4L+4); the transpose puts them in order
    const __m512i b8 = _mm512_packs_epi16(_mm512_packs_epi32(c0, c1), _mm512_packs_epi32(c2, c3));
    const __m512i qv = _mm512_max_epi8(transpose_4x4_lanes(b8), lim);
    _mm512_storeu_si512(q + 64 * j, qv);
    s4v[j] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, qv);
    _mm512_storeu_si512(s4 + 16 * j, s4v[j]);
  }
  _mm512_storeu_si512(s, reduce_16_blocks(s4v, add_epi32));
}

}  // namespace

void quantize_acts(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4) {
  const size_t nb = n_tok * (n_cols / 32);  // the blocks are contiguous across tokens
  size_t b = 0;
  for (; b + 16 <= nb; b += 16) quantize_16_blocks(x + 32 * b, q + 32 * b, d + b, s + b, s4 + 8 * b);
  if (b < nb) avx2::quantize_acts(x + 32 * b, 1, 32 * (nb - b), q + 32 * b, d + b, s + b, s4 + 8 * b);
}

// The tail too in a (masked) 16-lane step, so that each value is silu_mul16's wherever it sits: the
// SwiGLU tiles (packed_vnni.cpp) give these bits on any row range.
void silu_mul(float* gate, const float* up, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(gate + i, silu_mul16(_mm512_loadu_ps(gate + i), _mm512_loadu_ps(up + i)));
  }
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i), u = _mm512_maskz_loadu_ps(m, up + i);
    _mm512_mask_storeu_ps(gate + i, m, silu_mul16(g, u));
  }
}

// norm.h's rule with its 8 double sums as the lanes of one vector, the tail and the final order
// as the scalar twin: the same bits.
void rmsnorm(const float* x, const float* w, size_t n, float eps, float* out) {
  __m512d acc = _mm512_setzero_pd();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d a = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
    acc = _mm512_add_pd(acc, _mm512_mul_pd(a, a));
  }
  alignas(64) double part[8];  // the 8 sums, as scalar::rms_inverse (cpu_variants.h) finishes them
  _mm512_store_pd(part, acc);
  const float inv = scalar::rms_inverse(part, x, i, n, eps);
  const __m512 vinv = _mm512_set1_ps(inv);
  for (i = 0; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(out + i, _mm512_mul_ps(_mm512_loadu_ps(w + i), _mm512_mul_ps(_mm512_loadu_ps(x + i), vinv)));
  }
  for (; i < n; ++i) out[i] = w[i] * (x[i] * inv);
}

}  // namespace alap::kernels::avx512vnni
