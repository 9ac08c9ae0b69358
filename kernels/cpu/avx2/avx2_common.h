// Private to kernels/cpu: the int8 activation blocks the AVX2 and AVX-512 VNNI matmuls share, and
// the driver that runs a per-row dot over a row range. Only for files built with -mavx2 -mfma -mf16c.
#pragma once

#include <immintrin.h>

#include "cpu_variants.h"

namespace alap::kernels::avx2 {

// One token's activations quantised to int8 in blocks of 32: x[c] ≈ d[c/32]·q[c], s[b] = Σ q of block b.
struct ActRow {
  const int8_t* q;  // [n_cols]
  const float* d;   // [n_cols / 32]
  const int32_t* s; // [n_cols / 32]
};

// dot of one weight row (n_cols / 32 blocks of 32 activations) with one token.
using RowDot = float (*)(const uint8_t* row, const ActRow& x, size_t n_cols);

// y[t][r] = row_dot(W[r], x[t]) for r in [row_begin, row_end), t in [0, n_tok) on activations
// quantised once per call (QuantizedActs), each weight row dotted with every token while in L1.
void matmul_act_q8(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                   size_t row_end, RowDot row_dot);

inline float hsum_ps(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

inline float f16_at(const uint8_t* p) { return _cvtsh_ss(load_u16(p)); }

}  // namespace alap::kernels::avx2
