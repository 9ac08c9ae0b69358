// AVX2 + FMA + F16C matmul: F32/F16/BF16 in f32 FMA; Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K,
// IQ4_NL, IQ4_XS as integer dots (maddubs) of the weight quants with int8 activation blocks of 32,
// scaled in f32; one token of Q8_0/Q4_0/Q5_0/IQ4_NL/Q4_K/Q5_K/Q6_K/IQ4_XS through the 256-bit decode
// paths (avx2_common.h), bit-identical to these row dots. Other types go to the scalar twin. Built
// only with -mavx2 -mfma -mf16c; run only after cpuid.
#include <algorithm>

#include "avx2/avx2_common.h"
#include "thread_scratch.h"

namespace alap::kernels::avx2 {

namespace {

// Σ u·s over 32 byte lanes as 8 int32, u unsigned (< 128 here), s signed.
inline __m256i dot_u8s8(__m256i u, __m256i s) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
}
// Σ w·x for two signed int8 vectors (|w| <= 128 and |x| <= 127): |w| times x with w's sign.
inline __m256i dot_s8s8(__m256i w, __m256i x) { return dot_u8s8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)); }

// 32 nibbles of 16 bytes: low nibbles in bytes 0..15, high nibbles in 16..31 (Q4_0/Q5_0 order).
inline __m256i nibbles_lo_hi(const uint8_t* p) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_set1_epi8(0x0F);
  return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(b, 4), m), _mm_and_si128(b, m));
}

// Byte e = 0xFF where bit e of bits is set.
inline __m256i expand_bits32(uint32_t bits) {
  const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i sel = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(bits)), shuf);
  return _mm256_cmpeq_epi8(_mm256_and_si256(v, sel), sel);
}

inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m256i load_act(const ActRow& x, size_t b) { return load32(x.q + 32 * b); }

float dot_q8_0(const uint8_t* row, const ActRow& x, size_t n_cols) {
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < n_cols / 32; ++b) {
    const uint8_t* blk = row + 34 * b;
    const __m256i p = dot_s8s8(load32(blk + 2), load_act(x, b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(f16_at(blk) * x.d[b]), acc);
  }
  return hsum_ps(acc);
}

float dot_q4_0(const uint8_t* row, const ActRow& x, size_t n_cols) {
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < n_cols / 32; ++b) {
    const uint8_t* blk = row + 18 * b;
    const __m256i w = _mm256_sub_epi8(nibbles_lo_hi(blk + 2), _mm256_set1_epi8(8));
    const __m256i p = dot_s8s8(w, load_act(x, b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(f16_at(blk) * x.d[b]), acc);
  }
  return hsum_ps(acc);
}

// IQ4_NL: Q4_0's nibbles looked up in kIq4Values (one vpshufb), then the signed dot as Q4_0's.
float dot_iq4_nl(const uint8_t* row, const ActRow& x, size_t n_cols) {
  const __m256i lut = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values)));
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < n_cols / 32; ++b) {
    const uint8_t* blk = row + 18 * b;
    const __m256i p = dot_s8s8(_mm256_shuffle_epi8(lut, nibbles_lo_hi(blk + 2)), load_act(x, b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(f16_at(blk) * x.d[b]), acc);
  }
  return hsum_ps(acc);
}

float dot_q5_0(const uint8_t* row, const ActRow& x, size_t n_cols) {
  __m256 acc = _mm256_setzero_ps();
  for (size_t b = 0; b < n_cols / 32; ++b) {
    const uint8_t* blk = row + 22 * b;
    const __m256i hb = _mm256_and_si256(expand_bits32(load_u32(blk + 2)), _mm256_set1_epi8(0x10));
    const __m256i w = _mm256_sub_epi8(_mm256_or_si256(nibbles_lo_hi(blk + 6), hb), _mm256_set1_epi8(16));
    const __m256i p = dot_s8s8(w, load_act(x, b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(f16_at(blk) * x.d[b]), acc);
  }
  return hsum_ps(acc);
}

// Q4_1 and Q5_1 (y = d·q + m, q unsigned): Σ_b d·dx_b·Σ q·xq + m·dx_b·s_b.
template <bool kFiveBit>
float dot_q45_1(const uint8_t* row, const ActRow& x, size_t n_cols) {
  constexpr size_t kBytes = kFiveBit ? 24 : 20;
  __m256 acc = _mm256_setzero_ps();
  __m128 mins = _mm_setzero_ps();
  for (size_t b = 0; b < n_cols / 32; ++b) {
    const uint8_t* blk = row + kBytes * b;
    const __m128 dm = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_u32(blk))));  // d, m
    __m256i w = nibbles_lo_hi(blk + (kFiveBit ? 8 : 4));
    if constexpr (kFiveBit) w = _mm256_or_si256(w, _mm256_and_si256(expand_bits32(load_u32(blk + 4)), _mm256_set1_epi8(0x10)));
    const __m256i p = dot_u8s8(w, load_act(x, b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(_mm_cvtss_f32(dm) * x.d[b]), acc);
    // lane 1: m·(dx·s)
    mins = _mm_fmadd_ps(dm, _mm_set1_ps(x.d[b] * static_cast<float>(x.s[b])), mins);
  }
  return hsum_ps(acc) + _mm_cvtss_f32(_mm_movehdup_ps(mins));
}

// Q2_K: per 16 values y = d·(sc & 15)·q − dmin·(sc >> 4), q in 0..3 (FORMATS.md §2). Per block
// of 32: maddubs(q, xq) and maddubs(1, xq) (the pair sums of xq), each weighted by its 16-value
// groups' scales or mins with one madd, then scaled by d·dx and dmin·dx.
float dot_q2_k(const uint8_t* row, const ActRow& x, size_t n_cols) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i m3 = _mm256_set1_epi8(0x03), ones = _mm256_set1_epi8(1);
  // word i of lane half h: byte 2j + h of the scales (zero-extended), for block j
  const __m256i pick = _mm256_setr_epi8(0, -128, 0, -128, 0, -128, 0, -128, 0, -128, 0, -128, 0, -128, 0, -128,
                                        1, -128, 1, -128, 1, -128, 1, -128, 1, -128, 1, -128, 1, -128, 1, -128);
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + 84 * sb;
    const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_u32(blk + 80))));  // d, dmin
    const float d = _mm_cvtss_f32(dd), dmin = _mm_cvtss_f32(_mm_movehdup_ps(dd));
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk));
    const __m256i scs = _mm256_broadcastsi128_si256(_mm_and_si128(sc, _mm_set1_epi8(0x0F)));
    const __m256i mns = _mm256_broadcastsi128_si256(_mm_and_si128(_mm_srli_epi16(sc, 4), _mm_set1_epi8(0x0F)));
    for (int h = 0; h < 2; ++h) {
      const __m256i q = load32(blk + 16 + 32 * h);
      for (int g = 0; g < 4; ++g) {
        const int j = 4 * h + g;
        const size_t b = 8 * sb + static_cast<size_t>(j);
        const __m256i w = _mm256_and_si256(_mm256_srli_epi16(q, 2 * g), m3);
        const __m256i xq = load_act(x, b);
        const __m256i sel = _mm256_add_epi8(pick, _mm256_set1_epi16(static_cast<short>(2 * j)));
        const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(w, xq), _mm256_shuffle_epi8(scs, sel));
        const __m256i pm = _mm256_madd_epi16(_mm256_maddubs_epi16(ones, xq), _mm256_shuffle_epi8(mns, sel));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * x.d[b]), acc);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(pm), _mm256_set1_ps(-dmin * x.d[b]), acc);
      }
    }
  }
  return hsum_ps(acc);
}

// Q3_K: y = d·(scale_k − 32)·q per 16 values, q = q2 − 4·(1 − hbit) in −4..3 (FORMATS.md §2);
// signed dots (|q| with x's sign flipped where q < 0) weighted by the signed scales with one madd.
float dot_q3_k(const uint8_t* row, const ActRow& x, size_t n_cols) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i m3 = _mm256_set1_epi8(0x03), four = _mm256_set1_epi8(4);
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + 110 * sb;
    const float d = f16_at(blk + 108);
    const uint8_t* s = blk + 96;
    alignas(32) int16_t scale[16];
    for (int k = 0; k < 16; ++k) scale[k] = static_cast<int16_t>(q3_k_scale(s, k));
    const __m256i hm = load32(blk);
    for (int h = 0; h < 2; ++h) {
      const __m256i q = load32(blk + 32 + 32 * h);
      for (int g = 0; g < 4; ++g) {
        const int j = 4 * h + g;
        const size_t b = 8 * sb + static_cast<size_t>(j);
        const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << j));
        const __m256i hb = _mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit);  // 0xFF where set
        // q2 − 4 + 4·hbit: subtract 4 where the bit is clear
        const __m256i w = _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(q, 2 * g), m3), _mm256_andnot_si256(hb, four));
        const __m256i xq = load_act(x, b);
        const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(xq, w));
        const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(scale[2 * j + 1]), _mm_set1_epi16(scale[2 * j]));
        const __m256i p = _mm256_madd_epi16(p16, scales);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * x.d[b]), acc);
      }
    }
  }
  return hsum_ps(acc);
}

// Q4_K and Q5_K: Σ_j d·sc_j·dx_j·Σ q·xq − dmin·m_j·dx_j·Σ xq, per sub-block j of 32.
template <bool kFiveBit>
float dot_q45_k(const uint8_t* row, const ActRow& x, size_t n_cols) {
  constexpr size_t kBytes = kFiveBit ? 176 : 144;
  __m256 acc = _mm256_setzero_ps();
  float mins = 0.0f;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + kBytes * sb;
    const float d = f16_at(blk), dmin = f16_at(blk + 2);
    const uint8_t* qs = blk + (kFiveBit ? 48 : 16);
    __m256i qh = _mm256_setzero_si256();
    if constexpr (kFiveBit) qh = load32(blk + 16);
    for (int p = 0; p < 4; ++p) {
      const __m256i q = load32(qs + 32 * p);
      __m256i u[2] = {_mm256_and_si256(q, m4), _mm256_and_si256(_mm256_srli_epi16(q, 4), m4)};
      for (int half = 0; half < 2; ++half) {
        const int j = 2 * p + half;
        const size_t b = 8 * sb + static_cast<size_t>(j);
        if constexpr (kFiveBit) {
          const __m256i bit = _mm256_set1_epi8(static_cast<char>(1 << j));
          const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(qh, bit), bit);
          u[half] = _mm256_or_si256(u[half], _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
        }
        int sc, m;
        k4_scale_min(blk + 4, j, sc, m);
        const __m256i dot = dot_u8s8(u[half], load_act(x, b));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), _mm256_set1_ps(d * static_cast<float>(sc) * x.d[b]), acc);
        mins += dmin * static_cast<float>(m) * x.d[b] * static_cast<float>(x.s[b]);
      }
    }
  }
  return hsum_ps(acc) - mins;
}

float dot_q6_k(const uint8_t* row, const ActRow& x, size_t n_cols) {
  __m256 acc = _mm256_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0x0F), m2 = _mm256_set1_epi8(0x03);
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + 210 * sb;
    const auto* sc = reinterpret_cast<const int8_t*>(blk + 192);
    const float d = f16_at(blk + 208);
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = load32(blk + 64 * h), ql1 = load32(blk + 64 * h + 32);
      const __m256i qh = load32(blk + 128 + 32 * h);
      const __m256i lo[4] = {_mm256_and_si256(ql0, m4), _mm256_and_si256(ql1, m4),
                             _mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4),
                             _mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4)};
      for (int g = 0; g < 4; ++g) {
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), m2);
        const __m256i w = _mm256_sub_epi8(_mm256_or_si256(lo[g], _mm256_slli_epi16(hi, 4)), _mm256_set1_epi8(32));
        const size_t b = 8 * sb + static_cast<size_t>(4 * h + g);
        const __m256i xq = load_act(x, b);
        const __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(xq, w));
        const int k = 2 * (4 * h + g);  // scale of elements 0..15; k + 1 for 16..31
        const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(sc[k + 1]), _mm_set1_epi16(sc[k]));
        const __m256i p = _mm256_madd_epi16(p16, scales);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(d * x.d[b]), acc);
      }
    }
  }
  return hsum_ps(acc);
}

// IQ4_XS: each sub-block's codes through the value table (vpshufb: K[q], signed, never 0), then
// |K|·x with K's sign (a pair at most 127·127·2, within vpmaddubsw's s16); d·(ls − 32)·dx in f32.
float dot_iq4_xs(const uint8_t* row, const ActRow& x, size_t n_cols) {
  const __m256i values = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values)));
  __m256 acc = _mm256_setzero_ps();
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + 136 * sb;
    const float d = f16_at(blk);
    for (int j = 0; j < 8; ++j) {
      const size_t b = 8 * sb + static_cast<size_t>(j);
      const __m256i w = _mm256_shuffle_epi8(values, nibbles_lo_hi(blk + 8 + 16 * j));
      const __m256i p = dot_s8s8(w, load_act(x, b));
      const float dw = d * static_cast<float>(iq4_xs_scale(blk, j));
      acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_set1_ps(dw * x.d[b]), acc);
    }
  }
  return hsum_ps(acc);
}

// The 256-bit one-token products (avx2_common.h, dec256) with maddubs + madd: the integers and f32
// steps of the row dots above (Q4_K/Q5_K: the scalar mins sum, subtracted at the end).
struct Avx2Dot {
  static constexpr bool kVecMins = false;
  static __m256i dot(__m256i init, __m256i u, __m256i s) { return _mm256_add_epi32(init, dot_u8s8(u, s)); }
};

// dot_f32_finish's ending for an f16 or bf16 row (dot_h16_finish below, exported, picks one).
template <bool kBf16>
float h16_finish(__m256 a0, __m256 a1, const uint8_t* w, const float* x, size_t c, size_t n) {
  for (; c + 8 <= n; c += 8) a0 = _mm256_fmadd_ps(h16x8<kBf16>(w + 2 * c), _mm256_loadu_ps(x + c), a0);
  float s = hsum_ps(_mm256_add_ps(a0, a1));
  for (; c < n; ++c) s += h16_at<kBf16>(w + 2 * c) * x[c];
  return s;
}

// A row of the packed runs of four (H16Rows; n a multiple of 16) as f32: its 16-column chunks are
// 128 bytes apart.
template <bool kBf16>
void fours_row_to_f32(const uint8_t* src, float* dst, size_t n) {
  for (size_t c = 0; c < n; c += 16, src += 128) {
    _mm256_storeu_ps(dst + c, h16x8<kBf16>(src));
    _mm256_storeu_ps(dst + c + 8, h16x8<kBf16>(src + 16));
  }
}

// A whole run of four (rows at dst + k·n, k < 4), reading the run's bytes in order.
template <bool kBf16>
void fours_to_f32(const uint8_t* src, float* dst, size_t n) {
  for (size_t c = 0; c < n; c += 16) {
    for (size_t k = 0; k < 4; ++k, src += 32) {
      _mm256_storeu_ps(dst + k * n + c, h16x8<kBf16>(src));
      _mm256_storeu_ps(dst + k * n + c + 8, h16x8<kBf16>(src + 16));
    }
  }
}

template <bool kBf16>
void h16_to_f32(const uint8_t* src, float* dst, size_t n) {
  size_t c = 0;
  for (; c + 8 <= n; c += 8) _mm256_storeu_ps(dst + c, h16x8<kBf16>(src + 2 * c));
  for (; c < n; ++c) dst[c] = h16_at<kBf16>(src + 2 * c);
}

// An f16 or bf16 row dotted with f32 activations, converting as it goes: dot_f32's chains and
// ending on the exact f32 values, so the same bits as the row converted first (prefill's panels).
// The row's 16-column chunks are `step` bytes apart (H16Rows); a packed row has no columns after
// its last chunk (n a multiple of 16), so h16_finish reads none of it.
template <bool kBf16>
float dot_h16_f32(const uint8_t* w, size_t step, const float* x, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  size_t c = 0;
  for (const uint8_t* p = w; c + 16 <= n; c += 16, p += step) {
    a0 = _mm256_fmadd_ps(h16x8<kBf16>(p), _mm256_loadu_ps(x + c), a0);
    a1 = _mm256_fmadd_ps(h16x8<kBf16>(p + 16), _mm256_loadu_ps(x + c + 8), a1);
  }
  return h16_finish<kBf16>(a0, a1, w, x, c, n);
}

// dot_h16_f32 of four rows (`next` bytes apart) at once, each row's two chains and sums exactly as
// there (bit for bit): x is loaded once per 16 columns for the four, and the 8 chains are
// independent, so the loop runs at the FMA throughput where one row waits on its FMA latency
// (one row: ~8 bytes a cycle, ~30 GB/s, under what one core streams). `ahead`: the read-ahead
// pointer (f16_group_ahead), advancing 128 bytes a pass; null: none.
template <bool kBf16>
void dot_h16_f32_x4(const uint8_t* w, size_t next, size_t step, const char* ahead, const float* x, size_t n,
                    float* out) {
  __m256 a[4][2];
  for (auto& r : a) r[0] = r[1] = _mm256_setzero_ps();
  size_t c = 0;
  for (const uint8_t* p = w; c + 16 <= n; c += 16, p += step) {
    if (ahead != nullptr) h16_read_ahead(ahead);
    const __m256 x0 = _mm256_loadu_ps(x + c), x1 = _mm256_loadu_ps(x + c + 8);
    for (int r = 0; r < 4; ++r) {
      a[r][0] = _mm256_fmadd_ps(h16x8<kBf16>(p + r * next), x0, a[r][0]);
      a[r][1] = _mm256_fmadd_ps(h16x8<kBf16>(p + r * next + 16), x1, a[r][1]);
    }
  }
  for (int r = 0; r < 4; ++r) out[r] = h16_finish<kBf16>(a[r][0], a[r][1], w + r * next, x, c, n);
}

// Rows [r, row_end), walked by h16_decode_rows.
template <bool kBf16>
void decode_h16(const H16Rows& m, const float* x, size_t n, float* y, size_t r, size_t row_end) {
  const size_t step = h16_step(m), next = h16_next(m);
  h16_decode_rows(
      m, r, row_end, [&](size_t i, const uint8_t* w) { y[i] = dot_h16_f32<kBf16>(w, step, x, n); },
      [&](size_t i, const uint8_t* w, const char* ahead) { dot_h16_f32_x4<kBf16>(w, next, step, ahead, x, n, y + i); });
}

// One chain of dot_f32 (half = 0: the first 8 columns of every 16-column step, 1: the last 8) over
// columns [c0, c1) for R rows x T tokens at once: R·T accumulators, R + T operands a step (R, T <= 3:
// 15 registers), so a step is R + T loads for R·T FMAs.
template <int R, int T>
[[gnu::always_inline]] inline void plain_chain(const float* const* w, const float* const* x, size_t c0, size_t c1,
                                               int half, __m256* acc) {
  __m256 a[R][T];
#pragma GCC unroll 3
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 3
    for (int k = 0; k < T; ++k) a[i][k] = c0 == 0 ? _mm256_setzero_ps() : acc[i * T + k];
  }
  for (size_t c = c0 + 8 * static_cast<size_t>(half); c < c1; c += 16) {
    __m256 wv[R], xv[T];
#pragma GCC unroll 3
    for (int i = 0; i < R; ++i) wv[i] = _mm256_loadu_ps(w[i] + c);
#pragma GCC unroll 3
    for (int k = 0; k < T; ++k) xv[k] = _mm256_loadu_ps(x[k] + c);
#pragma GCC unroll 3
    for (int i = 0; i < R; ++i) {
#pragma GCC unroll 3
      for (int k = 0; k < T; ++k) a[i][k] = _mm256_fmadd_ps(wv[i], xv[k], a[i][k]);
    }
  }
#pragma GCC unroll 3
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 3
    for (int k = 0; k < T; ++k) acc[i * T + k] = a[i][k];
  }
}

// Tile (R rows, T tokens from x) over columns [c0, c1): chain 0 of its pairs, then chain 1; acc
// holds the tile's chains (R·T of chain 0, then R·T of chain 1) between segments.
template <int R, int T>
[[gnu::always_inline]] inline void plain_segment(const float* const* w, const float* x, size_t n, size_t c0, size_t c1,
                                                 __m256* acc) {
  const float* xs[T];
  for (int k = 0; k < T; ++k) xs[k] = x + static_cast<size_t>(k) * n;
  plain_chain<R, T>(w, xs, c0, c1, 0, acc);
  plain_chain<R, T>(w, xs, c0, c1, 1, acc + R * T);
}

// hsum_ps(v[p]) for p < 8 (v[p] = chain 0 + chain 1 of a pair), the same adds of the same lanes in
// the same order, eight pairs at once: element 4j + m of the result is pair 2m + j.
inline __m256 plain_finish8(const __m256* v) {
  __m256 e[4];
  for (int m = 0; m < 4; ++m) {  // a 128-bit lane j: pair 2m + j's low half + its high half
    e[m] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * m], v[2 * m + 1], 0x20),
                         _mm256_permute2f128_ps(v[2 * m], v[2 * m + 1], 0x31));
  }
  __m256 g[2];
  for (int h = 0; h < 2; ++h) {  // s + movehl(s): elements 0, 1 of e[2h], then of e[2h + 1]
    g[h] = _mm256_add_ps(_mm256_shuffle_ps(e[2 * h], e[2 * h + 1], 0x44), _mm256_shuffle_ps(e[2 * h], e[2 * h + 1], 0xEE));
  }
  // s[0] + s[1]: element m of lane j is pair 2m + j.
  return _mm256_add_ps(_mm256_shuffle_ps(g[0], g[1], 0x88), _mm256_shuffle_ps(g[0], g[1], 0xDD));
}

// y[k * ldy + i] = hsum_ps(a0[p] + a1[p]) for the np pairs p = i * tt + k of a tile (tt tokens).
inline void plain_ends(const __m256* a0, const __m256* a1, size_t np, size_t tt, float* y, size_t ldy) {
  for (size_t p0 = 0; p0 < np; p0 += 8) {
    __m256 v[8];
    for (size_t q = 0; q < 8; ++q) v[q] = p0 + q < np ? _mm256_add_ps(a0[p0 + q], a1[p0 + q]) : _mm256_setzero_ps();
    alignas(32) float s[8];
    _mm256_store_ps(s, plain_finish8(v));
    for (size_t q = 0; q < 8 && p0 + q < np; ++q) {
      const size_t p = p0 + q;
      y[(tt == 3 ? p % 3 : 0) * ldy + (tt == 3 ? p / 3 : p)] = s[4 * (q % 2) + q / 2];
    }
  }
}

// Columns a segment takes: R rows of them (at most 3 x 2 KB) stay in L1 while every token triple of
// the block meets them, each triple's (6 KB) twice, the second time from L1.
constexpr size_t kSegmentColumns = 512;
constexpr size_t kMaxBlockTokens = 48;

// R rows (R <= 3) x the n_tok tokens of a block (n_tok <= kMaxBlockTokens): token triples, the tokens
// left over one at a time, a segment of columns at a time; each (row, token) keeps dot_f32's two
// chains (each chain's FMAs in dot_f32's order) and ending, so it has dot_f32's bits, and decode's.
template <int R>
void plain_rows(const float* const* w, const float* x, size_t n_tok, size_t n, float* y, size_t ldy) {
  constexpr size_t kTile = 2 * R * 3;                    // a tile's chains, at the stride of a triple
  __m256 acc[kTile * (kMaxBlockTokens / 3 + 2)];  // the triples and up to 2 tokens left over
  const size_t n16 = n / 16 * 16, full = n_tok / 3 * 3;
  if (n16 == 0) {
    for (size_t i = 0; i < (full / 3 + (n_tok - full)) * kTile; ++i) acc[i] = _mm256_setzero_ps();
  }
  for (size_t c = 0; c < n16; c += kSegmentColumns) {
    const size_t c1 = std::min(n16, c + kSegmentColumns);
    size_t j = 0;
    for (size_t t = 0; t < full; t += 3, ++j) plain_segment<R, 3>(w, x + t * n, n, c, c1, acc + j * kTile);
    for (size_t t = full; t < n_tok; ++t, ++j) plain_segment<R, 1>(w, x + t * n, n, c, c1, acc + j * kTile);
  }
  for (size_t t = 0, j = 0; t < n_tok; ++j) {
    const size_t tt = t < full ? 3 : 1;
    const __m256* a0 = acc + j * kTile;
    const __m256* a1 = a0 + R * tt;
    if (n16 == n) {  // no columns left over: dot_f32_finish is hsum_ps(chain 0 + chain 1)
      plain_ends(a0, a1, R * tt, tt, y + t * ldy, ldy);
      t += tt;
      continue;
    }
    for (size_t i = 0; i < R; ++i) {
      for (size_t k = 0; k < tt; ++k) {
        y[(t + k) * ldy + i] = dot_f32_finish(a0[i * tt + k], a1[i * tt + k], w[i], x + (t + k) * n, n16, n);
      }
    }
    t += tt;
  }
}

// f32 bytes of a prefill panel (rows converted once, held in L2) and of a block of its tokens
// (held in L2 beside it while every row triple of the panel meets them).
constexpr size_t kPanelBytes = 128 << 10, kTokenBlockBytes = 192 << 10, kMaxPanelRows = 192;

// A panel of rows: its tokens a block at a time, three rows at a time (plain_rows), the rows left
// over together.
void plain_tiles(const float* const* rows, size_t n_rows, const float* x, size_t n_tok, size_t n, float* y,
                 size_t ldy, size_t r0) {
  const size_t block = std::min(kMaxBlockTokens, std::max<size_t>(3, kTokenBlockBytes / (4 * n) / 3 * 3));
  for (size_t t = 0; t < n_tok; t += block) {
    const size_t nt = std::min(block, n_tok - t);
    const float* xt = x + t * n;
    float* yt = y + t * ldy + r0;
    size_t r = 0;
    for (; r + 3 <= n_rows; r += 3) plain_rows<3>(rows + r, xt, nt, n, yt + r, ldy);
    if (n_rows - r == 2) plain_rows<2>(rows + r, xt, nt, n, yt + r, ldy);
    if (n_rows - r == 1) plain_rows<1>(rows + r, xt, nt, n, yt + r, ldy);
  }
}

void matmul_plain(const WeightView& w, const float* x, size_t n_tok, float* y, size_t ldy, size_t row_begin,
                  size_t row_end) {
  const size_t n = w.n_cols;
  size_t r = row_begin;
  if (n_tok == 1 && w.type != DType::f32) {  // decode: convert on the fly, four rows at a time
    if (w.type == DType::bf16) return decode_h16<true>(h16_rows(w), x, n, y, r, row_end);
    return decode_h16<false>(h16_rows(w), x, n, y, r, row_end);
  }
  // Prefill: a panel of rows, each converted once (f16, bf16) and reused by every token. No
  // containers in this file (thread_scratch.h).
  const size_t panel = std::min(kMaxPanelRows, std::max<size_t>(3, kPanelBytes / (4 * n) / 3 * 3));
  float* buf = static_cast<float*>(thread_scratch(kScratchRows, panel * n * sizeof(float)));
  const float* rows[kMaxPanelRows];
  for (; r < row_end; r += panel) {
    const size_t m = std::min(panel, row_end - r);
    plain_panel(w, r, m, buf, rows);
    plain_tiles(rows, m, x, n_tok, n, y, ldy, r);
  }
}

}  // namespace

// Plain types: f32 rows (converted once per row when needed) dotted with f32 activations.
// dot_f32_finish stays out of line: the AVX-512 file calls it too, and an inline function of the
// shared header compiled there would be an AVX-512 copy that the linker may pick for this file's
// calls as well (illegal instructions on AVX2 machines; seen in the ASan build, session 20).
float dot_f32_finish(__m256 a0, __m256 a1, const float* w, const float* x, size_t c, size_t n) {
  for (; c + 8 <= n; c += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + c), _mm256_loadu_ps(x + c), a0);
  float s = hsum_ps(_mm256_add_ps(a0, a1));
  for (; c < n; ++c) s += w[c] * x[c];
  return s;
}

float dot_h16_finish(DType t, __m256 a0, __m256 a1, const uint8_t* w, const float* x, size_t c, size_t n) {
  return t == DType::bf16 ? h16_finish<true>(a0, a1, w, x, c, n) : h16_finish<false>(a0, a1, w, x, c, n);
}

float dot_f32(const float* w, const float* x, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  size_t c = 0;
  for (; c + 16 <= n; c += 16) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + c), _mm256_loadu_ps(x + c), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + c + 8), _mm256_loadu_ps(x + c + 8), a1);
  }
  return dot_f32_finish(a0, a1, w, x, c, n);
}

void plain_panel(const WeightView& w, size_t r, size_t m, float* buf, const float** rows) {
  const size_t n = w.n_cols;
  const size_t row_bytes = dtype_row_bytes(*dtype_info(static_cast<uint32_t>(w.type)), n);
  if (w.type == DType::f32) {
    const auto* base = static_cast<const uint8_t*>(w.data);
    for (size_t i = 0; i < m; ++i) rows[i] = reinterpret_cast<const float*>(base + (r + i) * row_bytes);
    return;
  }
  const H16Rows h = h16_rows(w);
  const bool bf16 = w.type == DType::bf16;
  for (size_t i = 0; i < m;) {
    float* dst = buf + i * n;
    if (!h.fours) {
      row_to_f32(w.type, h16_row(h, r + i), dst, n);
    } else if ((r + i) % 4 == 0 && i + 4 <= m) {  // a whole run: its bytes in order, into 4 rows
      (bf16 ? fours_to_f32<true> : fours_to_f32<false>)(h16_row(h, r + i), dst, n);
      for (size_t k = 0; k < 4; ++k) rows[i + k] = dst + k * n;
      i += 4;
      continue;
    } else {
      (bf16 ? fours_row_to_f32<true> : fours_row_to_f32<false>)(h16_row(h, r + i), dst, n);
    }
    rows[i++] = dst;
  }
}

H16Rows h16_rows(const WeightView& w) {
  const size_t row_bytes = dtype_row_bytes(*dtype_info(static_cast<uint32_t>(w.type)), w.n_cols);
  const bool fours = w.packed != nullptr && (w.type == DType::f16 || w.type == DType::bf16);
  return H16Rows{static_cast<const uint8_t*>(fours ? w.packed : w.data), row_bytes, fours};
}

void row_to_f32(DType t, const uint8_t* src, float* dst, size_t n) {
  if (t == DType::bf16) return h16_to_f32<true>(src, dst, n);
  h16_to_f32<false>(src, dst, n);
}

void matmul_act_q8(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                   size_t row_end, RowDot row_dot) {
  const size_t n = w.n_cols, nb = n / 32;
  const size_t row_bytes = dtype_row_bytes(*dtype_info(static_cast<uint32_t>(w.type)), n);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (size_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = base + r * row_bytes;
    for (size_t t = 0; t < x.n_tok; ++t) {
      const ActRow a{x.q + t * n, x.d + t * nb, x.s + t * nb};
      y[t * ldy + r] = row_dot(row, a, n);
    }
  }
}

void matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end) {
  RowDot dot = nullptr;
  switch (w.type) {
    case DType::f32:
    case DType::f16:
    case DType::bf16: return matmul_plain(w, x.x, x.n_tok, y, ldy, row_begin, row_end);
    case DType::q8_0: dot = dot_q8_0; break;
    case DType::q4_0: dot = dot_q4_0; break;
    case DType::q5_0: dot = dot_q5_0; break;
    case DType::iq4_nl: dot = dot_iq4_nl; break;
    case DType::q4_1: dot = dot_q45_1<false>; break;
    case DType::q5_1: dot = dot_q45_1<true>; break;
    case DType::q2_k: dot = dot_q2_k; break;
    case DType::q3_k: dot = dot_q3_k; break;
    case DType::q4_k: dot = dot_q45_k<false>; break;
    case DType::q5_k: dot = dot_q45_k<true>; break;
    case DType::q6_k: dot = dot_q6_k; break;
    case DType::iq4_xs: dot = dot_iq4_xs; break;
    default: return scalar::matmul_q(w, x, y, ldy, row_begin, row_end);
  }
  if (x.q == nullptr) return scalar::matmul_q(w, x, y, ldy, row_begin, row_end);
  if (x.n_tok == 1 && dec256::decode<Avx2Dot>(w, x, y, row_begin, row_end)) return;
  matmul_act_q8(w, x, y, ldy, row_begin, row_end, dot);
}

}  // namespace alap::kernels::avx2
