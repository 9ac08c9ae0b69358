// SSSE3 + SSE4.1 matrix products (the sse4 variant, for x86-64 CPUs without AVX2: the Atom-class
// Celeron and Pentium Silver chips of budget laptops, Sandy Bridge, older AMD). Every quantised type
// the AVX2 variant takes is an integer dot (pmaddubsw + pmaddwd) of the weight codes with the int8
// activation blocks of 32 (QuantizedActs), two 16-byte halves a block, four blocks' sums gathered
// (phaddd) and scaled in f32 as one vector. Codes stay unsigned where they fit pmaddubsw's 16-bit
// pairs; their offsets (and Q2_K's mins) come off in integers through the activations' sums per 32
// values, or per 16 where the scales are per 16 (sums16). F32, F16 and BF16 rows are dotted with
// the f32 activations, f16 converted with integer steps (no F16C here). No FMA on these CPUs: f32
// multiply-adds round twice. Results are within the int8 activations' error of the scalar oracle
// (tests/kernels/cpu/matmul_test.cpp) and, per (token, row), do not depend on the batch, the row
// range or the thread. Prompts take a row against up to 8 tokens at once (its codes unpacked once
// for them). No packed (row-interleaved) form: the rows are read where the file has them. Built
// only with -mssse3 -msse4.1; run only after cpuid.
#include <algorithm>

#include "cpu_variants.h"
#include "sse4/sse4_common.h"
#include "thread_scratch.h"

namespace alap::kernels::sse4 {

namespace {

// One token's activations quantised in blocks of 32: x[c] ≈ d[c/32]·q[c], s[b] = Σ q of block b.
struct ActRow {
  const int8_t* q;
  const float* d;
  const int32_t* s;
  const int16_t* s16 = nullptr;  // Σ q of each 16 values (Q2_K's mins, Q3_K's and Q6_K's code offsets)
};

using RowDot = float (*)(const uint8_t* row, const ActRow& x, size_t n_cols);
// A row against nt <= kTileTokens tokens at once, the same bits as its RowDot on each (prefill).
using RowTile = void (*)(const uint8_t* row, const ActRow* xs, size_t nt, size_t n_cols, float* out);

inline __m128i act_lo(const ActRow& x, size_t b) { return load16(x.q + 32 * b); }
inline __m128i act_hi(const ActRow& x, size_t b) { return load16(x.q + 32 * b + 16); }

// Bytes 0-15 of lo = 0x10 where bits 0-15 of bits are set, bytes 0-15 of hi where bits 16-31 are
// (the fifth bit of Q5_0 / Q5_1 codes): each byte takes its bit's byte of bits, keeps the bit, and
// becomes 0x10 where it is set.
inline void fifth_bits(uint32_t bits, __m128i& lo, __m128i& hi) {
  const __m128i v = _mm_cvtsi32_si128(static_cast<int>(bits));
  const __m128i sel = _mm_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull)), bit4 = _mm_set1_epi8(0x10);
  const __m128i spread_lo = _mm_shuffle_epi8(v, _mm_set_epi64x(0x0101010101010101, 0));
  const __m128i spread_hi = _mm_shuffle_epi8(v, _mm_set_epi64x(0x0303030303030303, 0x0202020202020202));
  lo = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(spread_lo, sel), sel), bit4);
  hi = _mm_and_si128(_mm_cmpeq_epi8(_mm_and_si128(spread_hi, sel), sel), bit4);
}

// The 16 low nibbles (values 0-15 of a Q4_0-ordered block) and the 16 high ones (values 16-31).
inline void nibbles(const uint8_t* p, __m128i& lo, __m128i& hi) {
  const __m128i b = load16(p), m = _mm_set1_epi8(0x0F);
  lo = _mm_and_si128(b, m);
  hi = _mm_and_si128(_mm_srli_epi16(b, 4), m);
}

// Σ u·xq over block b for unsigned codes u (values 0-15 in lo, 16-31 in hi), in 4 int32 lanes.
// Codes are at most 31, so the two halves' pair sums (|Σ| <= 2·2·31·127) add in 16 bits before the
// one pmaddwd.
inline __m128i unsigned_dot(__m128i lo, __m128i hi, const ActRow& x, size_t b) {
  const __m128i pairs = _mm_add_epi16(_mm_maddubs_epi16(lo, act_lo(x, b)), _mm_maddubs_epi16(hi, act_hi(x, b)));
  return _mm_madd_epi16(pairs, _mm_set1_epi16(1));
}

// The sums of blocks b..b+3 in lanes 0-3 (phaddd), for unsigned codes whose 16-value halves have
// their own int16 weights: block b + g's halves u[g][0], u[g][1] weighted by w[g][0], w[g][1] in
// pmaddwd (the K-quants with scales per 16). Exact in int32.
[[gnu::always_inline]] inline __m128i weighted_sums4(const __m128i (*u)[2], const __m128i (*w)[2], const ActRow& x,
                                                     size_t b) {
  __m128i p[4];
#pragma GCC unroll 4
  for (int g = 0; g < 4; ++g) {
    p[g] = _mm_add_epi32(_mm_madd_epi16(_mm_maddubs_epi16(u[g][0], act_lo(x, b + g)), w[g][0]),
                         _mm_madd_epi16(_mm_maddubs_epi16(u[g][1], act_hi(x, b + g)), w[g][1]));
  }
  return hsum4_epi32(p[0], p[1], p[2], p[3]);
}

// The rows' bytes are asked for this far ahead (prefetcht0) of the step that reads them, one stream
// in address order: each step of a row (four blocks of 32, a super-block) asks for its own bytes'
// lines kAheadBytes on, spread over the row, where a burst of a whole row's lines at the row's start
// (session 48) held the cold one-token products at 35-55% of the read probe on one Zen 5 core.
// Spread, they take 0.65-0.86x the time cold and 0.70-0.96x warm (from L3) (docs/bench/cpu.md "The
// SSE4 variant, part 2"; 2, 4 and 8 KB ahead measured alike). Without any, the hardware prefetchers
// alone left them at 40-50% of the burst's rate.
constexpr size_t kAheadBytes = 4096;

[[gnu::always_inline]] inline void read_ahead(const uint8_t* p, size_t bytes) {
  for (size_t b = 0; b < bytes; b += 64) _mm_prefetch(reinterpret_cast<const char*>(p + b), _MM_HINT_T0);
}

// A step's read-ahead: the lines of its kSpan bytes, kAheadBytes on (the next step covers a line
// this one's last byte may start).
template <size_t kSpan>
[[gnu::always_inline]] inline void step_ahead(const uint8_t* p) {
  read_ahead(p + kAheadBytes, kSpan);
}

// A block of 32's weight codes as the per-token dot takes them: u the unsigned bytes pmaddubsw
// multiplies (values 0-15 in lo, 16-31 in hi), and for signed codes s, whose signs go onto the
// activations (|w| times x with w's sign).
struct Codes {
  __m128i u_lo, u_hi, s_lo, s_hi;
};

// Σ over block b of signed codes c (|w| and w) times xq, the pair sums of its first and second 16
// values weighted by the int16 lanes of w_lo and w_hi (ones for a plain sum), in 4 int32 lanes.
inline __m128i signed_dot(const Codes& c, const ActRow& x, size_t b, __m128i w_lo, __m128i w_hi) {
  return _mm_add_epi32(_mm_madd_epi16(_mm_maddubs_epi16(c.u_lo, _mm_sign_epi8(act_lo(x, b), c.s_lo)), w_lo),
                       _mm_madd_epi16(_mm_maddubs_epi16(c.u_hi, _mm_sign_epi8(act_hi(x, b), c.s_hi)), w_hi));
}

// Σ w·xq of block b in 4 int32 lanes, for Dot's codes as they are: signed (Dot::kSigned) or
// unsigned, their offset not yet taken off (rows_blocks32 does that). The same integers whatever the
// lanes.
template <class Dot>
inline __m128i raw_dot(const Codes& c, const ActRow& x, size_t b) {
  if constexpr (Dot::kSigned) {
    return signed_dot(c, x, b, _mm_set1_epi16(1), _mm_set1_epi16(1));
  } else {
    return unsigned_dot(c.u_lo, c.u_hi, x, b);
  }
}

// Signed codes lo, hi as Codes (|w| and w).
inline Codes signed_codes(__m128i lo, __m128i hi) { return {_mm_sign_epi8(lo, lo), _mm_sign_epi8(hi, hi), lo, hi}; }

// The blocks of 32 with an fp16 scale d in their first two bytes (Q8_0, Q4_0, Q5_0, IQ4_NL, and
// Q4_1 / Q5_1 with an fp16 min m after it): each block's integer dot summed exactly, four blocks at a
// time, less the codes' offset times the four blocks' activation sums (Dot::kOffShift: offset
// 1 << kOffShift; 0 for none), then their four scales converted together and applied as one vector
// with the activations' four scales: acc += float(Σ_b)·(d_b·dx_b) in lanes b, and for the mins
// acc += m_b·(dx_b·float(s_b)). Blocks past the last multiple of 4 go one at a time. Tokens in tiles
// of up to kTileTokens per row: a row's codes are unpacked once for the tile and each token runs the
// steps above on them, so a (row, token) result has the same bits alone (decode) or in any batch.
// (The tile functions are always inlined: dot_one gets a copy for one token, with no loops over tokens.)
constexpr size_t kTileTokens = 8;

// The one-token product (RowDot) of a tile function: the tile for one token, inlined.
template <auto kRows>
float dot_one(const uint8_t* row, const ActRow& x, size_t n_cols) {
  float y;
  kRows(row, &x, 1, n_cols, &y);
  return y;
}

// The fp16 values at byte offset kAt of four blocks kBytes apart, as f32.
template <size_t kBytes, size_t kAt>
inline __m128 f16_of_blocks4(const uint8_t* blk) {
  return f16_words4(_mm_setr_epi16(static_cast<short>(load_u16(blk + kAt)), static_cast<short>(load_u16(blk + kBytes + kAt)),
                                   static_cast<short>(load_u16(blk + 2 * kBytes + kAt)),
                                   static_cast<short>(load_u16(blk + 3 * kBytes + kAt)), 0, 0, 0, 0));
}

template <size_t kBytes, class Dot>
[[gnu::always_inline]] inline void rows_blocks32(const uint8_t* row, const ActRow* xs, size_t nt, size_t n_cols, float* out) {
  const size_t nb = n_cols / 32;
  __m128 acc[kTileTokens];
  float tail[kTileTokens];
  for (size_t t = 0; t < nt; ++t) acc[t] = _mm_setzero_ps(), tail[t] = 0.0f;
  size_t b = 0;
  for (; b + 4 <= nb; b += 4) {
    const uint8_t* blk = row + kBytes * b;
    step_ahead<4 * kBytes>(blk);
    const Codes c[4] = {Dot::unpack(blk), Dot::unpack(blk + kBytes), Dot::unpack(blk + 2 * kBytes),
                        Dot::unpack(blk + 3 * kBytes)};
    const __m128 d = f16_of_blocks4<kBytes, 0>(blk);
    __m128 m = _mm_setzero_ps();
    if constexpr (Dot::kMin) m = f16_of_blocks4<kBytes, 2>(blk);
    for (size_t t = 0; t < nt; ++t) {
      const ActRow& x = xs[t];
      __m128i sums = hsum4_epi32(raw_dot<Dot>(c[0], x, b), raw_dot<Dot>(c[1], x, b + 1), raw_dot<Dot>(c[2], x, b + 2),
                                 raw_dot<Dot>(c[3], x, b + 3));
      if constexpr (Dot::kOffShift != 0) {
        sums = _mm_sub_epi32(sums, _mm_slli_epi32(load16(x.s + b), Dot::kOffShift));
      }
      const __m128 dx = _mm_loadu_ps(x.d + b);
      acc[t] = _mm_add_ps(acc[t], _mm_mul_ps(_mm_cvtepi32_ps(sums), _mm_mul_ps(d, dx)));
      if constexpr (Dot::kMin) {
        acc[t] = _mm_add_ps(acc[t], _mm_mul_ps(m, _mm_mul_ps(dx, _mm_cvtepi32_ps(load16(x.s + b)))));
      }
    }
  }
  for (; b < nb; ++b) {
    const uint8_t* blk = row + kBytes * b;
    const Codes c = Dot::unpack(blk);
    const float d = f16_at(blk), m = Dot::kMin ? f16_at(blk + 2) : 0.0f;
    for (size_t t = 0; t < nt; ++t) {
      const ActRow& x = xs[t];
      int32_t sum = hsum_epi32(raw_dot<Dot>(c, x, b));
      if constexpr (Dot::kOffShift != 0) sum -= x.s[b] << Dot::kOffShift;
      tail[t] += static_cast<float>(sum) * (d * x.d[b]);
      if constexpr (Dot::kMin) tail[t] += m * (x.d[b] * static_cast<float>(x.s[b]));
    }
  }
  for (size_t t = 0; t < nt; ++t) out[t] = hsum_ps(acc[t]) + tail[t];
}

struct Q8_0Dot {
  static constexpr bool kSigned = true, kMin = false;
  static constexpr int kOffShift = 0;
  static Codes unpack(const uint8_t* blk) { return signed_codes(load16(blk + 2), load16(blk + 18)); }
};

// The unsigned 4- and 5-bit codes: nibbles at byte kCodes (Q4_0-ordered), for five bits the fifth
// bits as a 32-bit word at kCodes - 4.
template <bool kFiveBit, size_t kCodes, int kShift, bool kHasMin>
struct UnsignedDot {
  static constexpr bool kSigned = false, kMin = kHasMin;
  static constexpr int kOffShift = kShift;
  static Codes unpack(const uint8_t* blk) {
    Codes c{};
    nibbles(blk + kCodes, c.u_lo, c.u_hi);
    if constexpr (kFiveBit) {
      __m128i lo, hi;
      fifth_bits(load_u32(blk + kCodes - 4), lo, hi);
      c.u_lo = _mm_or_si128(c.u_lo, lo);
      c.u_hi = _mm_or_si128(c.u_hi, hi);
    }
    return c;
  }
};

using Q4_0Dot = UnsignedDot<false, 2, 3, false>;  // d, 16 bytes of nibbles; q - 8
using Q5_0Dot = UnsignedDot<true, 6, 4, false>;   // d, qh, nibbles; q - 16
using Q4_1Dot = UnsignedDot<false, 4, 0, true>;   // d, m, nibbles; d·q + m
using Q5_1Dot = UnsignedDot<true, 8, 0, true>;    // d, m, qh, nibbles

// IQ4_NL: Q4_0's nibbles looked up in kIq4Values (pshufb), then a signed dot.
struct Iq4NlDot {
  static constexpr bool kSigned = true, kMin = false;
  static constexpr int kOffShift = 0;
  static Codes unpack(const uint8_t* blk) {
    const __m128i lut = load16(kIq4Values);
    __m128i lo, hi;
    nibbles(blk + 2, lo, hi);
    return signed_codes(_mm_shuffle_epi8(lut, lo), _mm_shuffle_epi8(lut, hi));
  }
};

// Q2_K: per 16 values y = d·(sc & 15)·q − dmin·(sc >> 4), q in 0..3 (FORMATS.md §2). A 16-byte half
// of a block is one scale group: Σ q·xq weighted by the group's scale in pmaddwd, both halves of a
// block summed in integers and four blocks at once (phaddd); the mins of four blocks in one pmaddwd
// of the activations' 16-value sums (s16) with the eight groups' mins, exact in int32; then d·dx and
// dmin·dx in f32 as vectors. Tokens in tiles (rows_blocks32): each half super-block's codes, scale
// words and mins made once for the tile.
[[gnu::always_inline]] inline void rows_q2_k(const uint8_t* row, const ActRow* xs, size_t nt, size_t n_cols, float* out) {
  const __m128i m3 = _mm_set1_epi8(0x03), m4 = _mm_set1_epi8(0x0F);
  __m128 acc[kTileTokens];
  for (size_t t = 0; t < nt; ++t) acc[t] = _mm_setzero_ps();
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + 84 * sb;
    step_ahead<84>(blk);
    const __m128 dd = f16_words4(_mm_cvtsi32_si128(static_cast<int>(load_u32(blk + 80))));  // d, dmin
    const __m128 d = _mm_shuffle_ps(dd, dd, 0x00), dmin = _mm_shuffle_ps(dd, dd, 0x55);
    const __m128i sc8 = load16(blk);
    const __m128i sc = _mm_and_si128(sc8, m4), mn = _mm_and_si128(_mm_srli_epi16(sc8, 4), m4);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m128i q0 = load16(blk + 16 + 32 * h), q1 = load16(blk + 32 + 32 * h);
      // groups 8h .. 8h + 7 as int16: the scales (one word broadcast a group) and the mins
      const __m128i sc16 = _mm_cvtepu8_epi16(h == 0 ? sc : _mm_srli_si128(sc, 8));
      const __m128i mn16 = _mm_cvtepu8_epi16(h == 0 ? mn : _mm_srli_si128(mn, 8));
      __m128i w[4][2], s[4][2];
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        w[g][0] = _mm_and_si128(_mm_srli_epi16(q0, 2 * g), m3);
        w[g][1] = _mm_and_si128(_mm_srli_epi16(q1, 2 * g), m3);
        for (int k = 0; k < 2; ++k) {
          const int e = 2 * (2 * g + k);  // byte of group 2g + k's word
          s[g][k] = _mm_shuffle_epi8(sc16, _mm_set1_epi16(static_cast<short>(((e + 1) << 8) | e)));
        }
      }
      for (size_t t = 0; t < nt; ++t) {
        const ActRow& x = xs[t];
        const size_t b = 8 * sb + 4 * static_cast<size_t>(h);
        const __m128i sums = weighted_sums4(w, s, x, b);
        const __m128i mins = _mm_madd_epi16(load16(x.s16 + 2 * b), mn16);
        const __m128 dx = _mm_loadu_ps(x.d + b);
        acc[t] = _mm_add_ps(acc[t], _mm_mul_ps(_mm_cvtepi32_ps(sums), _mm_mul_ps(d, dx)));
        acc[t] = _mm_sub_ps(acc[t], _mm_mul_ps(_mm_cvtepi32_ps(mins), _mm_mul_ps(dmin, dx)));
      }
    }
  }
  for (size_t t = 0; t < nt; ++t) out[t] = hsum_ps(acc[t]);
}

// Q3_K: y = d·(scale_k − 32)·q per 16 values, q = q2 − 4·(1 − hbit) in −4..3 (FORMATS.md §2). The
// codes go unsigned, u = q + 4 = q2 | hbit << 2 in 0..7: each 16-byte half's Σ u·xq weighted by its
// scale in pmaddwd, four blocks summed at once (phaddd), less 4·Σ scale·(16-value sums of xq) for
// the four blocks in one pmaddwd (s16): the same integers as the signed codes give. Then d·dx as
// one vector. Tokens in tiles (rows_blocks32): each half super-block's codes and scales made once
// for the tile.
[[gnu::always_inline]] inline void rows_q3_k(const uint8_t* row, const ActRow* xs, size_t nt, size_t n_cols, float* out) {
  const __m128i m3 = _mm_set1_epi8(0x03);
  __m128 acc[kTileTokens];
  for (size_t t = 0; t < nt; ++t) acc[t] = _mm_setzero_ps();
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + 110 * sb;
    step_ahead<110>(blk);
    const __m128 d = _mm_set1_ps(f16_at(blk + 108));
    const uint8_t* s = blk + 96;
    alignas(16) int16_t sc[16];
    for (int k = 0; k < 16; ++k) sc[k] = static_cast<int16_t>(q3_k_scale(s, k));
    const __m128i hm[2] = {load16(blk), load16(blk + 16)};
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const __m128i q[2] = {load16(blk + 32 + 32 * h), load16(blk + 48 + 32 * h)};
      const __m128i sc16 = _mm_load_si128(reinterpret_cast<const __m128i*>(sc + 8 * h));  // groups 8h..8h+7
      __m128i u[4][2], w[4][2];
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        const int j = 4 * h + g;
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {
          // bit j of each hmask byte to bit 2, its only bit (j is a constant here)
          const __m128i hb = _mm_and_si128(hm[half], _mm_set1_epi8(static_cast<char>(1 << j)));
          const __m128i h4 = j < 2 ? _mm_slli_epi16(hb, 2 - j) : j > 2 ? _mm_srli_epi16(hb, j - 2) : hb;
          u[g][half] = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(q[half], 2 * g), m3), h4);
          w[g][half] = _mm_set1_epi16(sc[2 * j + half]);
        }
      }
      for (size_t t = 0; t < nt; ++t) {
        const ActRow& x = xs[t];
        const size_t b = 8 * sb + 4 * static_cast<size_t>(h);
        const __m128i dots = weighted_sums4(u, w, x, b);
        const __m128i sums = _mm_sub_epi32(dots, _mm_slli_epi32(_mm_madd_epi16(load16(x.s16 + 2 * b), sc16), 2));
        acc[t] = _mm_add_ps(acc[t], _mm_mul_ps(_mm_cvtepi32_ps(sums), _mm_mul_ps(d, _mm_loadu_ps(x.d + b))));
      }
    }
  }
  for (size_t t = 0; t < nt; ++t) out[t] = hsum_ps(acc[t]);
}

// Q4_K and Q5_K: Σ_j d·sc_j·dx_j·Σ q·xq − dmin·m_j·dx_j·Σ xq, per sub-block j of 32. The codes of
// sub-blocks 2p and 2p+1 are the low and high nibbles of the same 32 bytes. A super-block's eight
// integer dots are summed exactly four at a time and weighted by their 6-bit scales in int32 (at
// most 32·31·127·63 < 2^31), then scaled by d·dx as one vector; the mins likewise from the
// activations' block sums. Tokens in tiles (rows_blocks32): a super-block's codes and scales are
// unpacked once for the tile, and each token runs the same steps on them.
template <bool kFiveBit>
[[gnu::always_inline]] inline void rows_q45_k(const uint8_t* row, const ActRow* xs, size_t nt, size_t n_cols, float* out) {
  constexpr size_t kBytes = kFiveBit ? 176 : 144;
  const __m128i m4 = _mm_set1_epi8(0x0F);
  __m128 acc[kTileTokens];
  for (size_t t = 0; t < nt; ++t) acc[t] = _mm_setzero_ps();
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + kBytes * sb;
    step_ahead<kBytes>(blk);
    const uint8_t* qs = blk + (kFiveBit ? 48 : 16);
    __m128i qh[2] = {_mm_setzero_si128(), _mm_setzero_si128()};
    if constexpr (kFiveBit) qh[0] = load16(blk + 16), qh[1] = load16(blk + 32);
    __m128i u[8][2];
#pragma GCC unroll 4
    for (int p = 0; p < 4; ++p) {
      const __m128i q[2] = {load16(qs + 32 * p), load16(qs + 32 * p + 16)};
#pragma GCC unroll 2
      for (int nib = 0; nib < 2; ++nib) {
        const int j = 2 * p + nib;
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {
          u[j][half] = _mm_and_si128(nib == 0 ? q[half] : _mm_srli_epi16(q[half], 4), m4);
          if constexpr (kFiveBit) {  // bit j of each qh byte moved to bit 4 (j is a constant here)
            const __m128i bit = _mm_and_si128(qh[half], _mm_set1_epi8(static_cast<char>(1 << j)));
            const __m128i b4 = j < 4 ? _mm_slli_epi16(bit, 4 - j) : j > 4 ? _mm_srli_epi16(bit, j - 4) : bit;
            u[j][half] = _mm_or_si128(u[j][half], b4);
          }
        }
      }
    }
    // The 6-bit scales and mins of sub-blocks 0-3 and 4-7 (k4_scale_min's rule on 32-bit words of
    // the 12 scale bytes), widened to int32.
    const uint32_t w0 = load_u32(blk + 4), w1 = load_u32(blk + 8), w2 = load_u32(blk + 12);
    const uint32_t sc_lo = w0 & 0x3F3F3F3F, mn_lo = w1 & 0x3F3F3F3F;
    const uint32_t sc_hi = (w2 & 0x0F0F0F0F) | (((w0 >> 6) & 0x03030303) << 4);
    const uint32_t mn_hi = ((w2 >> 4) & 0x0F0F0F0F) | (((w1 >> 6) & 0x03030303) << 4);
    const __m128i sc[2] = {_mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(sc_lo))),
                           _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(sc_hi)))};
    const __m128i mn[2] = {_mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(mn_lo))),
                           _mm_cvtepu8_epi32(_mm_cvtsi32_si128(static_cast<int>(mn_hi)))};
    const __m128 dd = f16_words4(_mm_cvtsi32_si128(static_cast<int>(load_u32(blk))));  // d, dmin in lanes 0, 1
    const __m128 d = _mm_shuffle_ps(dd, dd, 0x00), dmin = _mm_shuffle_ps(dd, dd, 0x55);
    for (size_t t = 0; t < nt; ++t) {
      const ActRow& x = xs[t];
      const float* xd = x.d + 8 * sb;
      const int32_t* xsum = x.s + 8 * sb;
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        __m128i dots[4];
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) dots[g] = unsigned_dot(u[4 * h + g][0], u[4 * h + g][1], x, 8 * sb + static_cast<size_t>(4 * h + g));
        const __m128i sums = hsum4_epi32(dots[0], dots[1], dots[2], dots[3]);
        const __m128i weighted = _mm_mullo_epi32(sums, sc[h]);
        // s·mn as pmaddwd of 16-bit halves: |s| <= 32·127 is its low half (the high half 0 or -1
        // meets mn's zero high half), so the same int32 as a pmulld, in one instruction everywhere.
        const __m128i mins = _mm_madd_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xsum + 4 * h)), mn[h]);
        const __m128 dx = _mm_loadu_ps(xd + 4 * h);
        acc[t] = _mm_add_ps(acc[t], _mm_mul_ps(_mm_cvtepi32_ps(weighted), _mm_mul_ps(d, dx)));
        acc[t] = _mm_sub_ps(acc[t], _mm_mul_ps(_mm_cvtepi32_ps(mins), _mm_mul_ps(dmin, dx)));
      }
    }
  }
  for (size_t t = 0; t < nt; ++t) out[t] = hsum_ps(acc[t]);
}

// Q6_K: y = d·sc·(q − 32) per 16 values, q in 0..63, sc int8 (FORMATS.md §2). The codes stay
// unsigned: each 16-byte half's Σ q·xq weighted by its scale in pmaddwd, four blocks summed at once
// (phaddd), less 32·Σ sc·(16-value sums of xq) for the four blocks in one pmaddwd (s16): the same
// integers as the signed codes give. Then d·dx as one vector. Tokens in tiles (rows_blocks32): a
// super-block's codes and scale words made once for the tile.
[[gnu::always_inline]] inline void rows_q6_k(const uint8_t* row, const ActRow* xs, size_t nt, size_t n_cols, float* out) {
  const __m128i m4 = _mm_set1_epi8(0x0F), m30 = _mm_set1_epi8(0x30);
  __m128 acc[kTileTokens];
  for (size_t t = 0; t < nt; ++t) acc[t] = _mm_setzero_ps();
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + 210 * sb;
    step_ahead<210>(blk);
    const __m128i sc8 = load16(blk + 192);
    const __m128i sc16[2] = {_mm_cvtepi8_epi16(sc8), _mm_cvtepi8_epi16(_mm_srli_si128(sc8, 8))};
    const __m128 d = _mm_set1_ps(f16_at(blk + 208));
    __m128i u[8][2];      // block 4h + g: its first 16 values, the next 16
    __m128i scale[8][2];
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {
        // low bits: bytes 0-31 of the 64 (ql0) for blocks g = 0 and 2, bytes 32-63 (ql1) for 1 and 3;
        // the low nibble for g < 2, the high one for g >= 2
        const __m128i ql0 = load16(blk + 64 * h + 16 * half), ql1 = load16(blk + 64 * h + 32 + 16 * half);
        const __m128i qh = load16(blk + 128 + 32 * h + 16 * half);
        const __m128i lo[4] = {_mm_and_si128(ql0, m4), _mm_and_si128(ql1, m4), _mm_and_si128(_mm_srli_epi16(ql0, 4), m4),
                               _mm_and_si128(_mm_srli_epi16(ql1, 4), m4)};
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
          const int k = 2 * (4 * h + g) + half;  // this half's scale
          // bits 2g, 2g + 1 of each qh byte to bits 4, 5 (g is a constant here)
          const __m128i hi = g < 2 ? _mm_and_si128(_mm_slli_epi16(qh, 4 - 2 * g), m30)
                                   : g > 2 ? _mm_and_si128(_mm_srli_epi16(qh, 2 * g - 4), m30) : _mm_and_si128(qh, m30);
          const __m128i pick = _mm_set1_epi16(static_cast<int16_t>(((2 * (k % 8) + 1) << 8) | (2 * (k % 8))));
          u[4 * h + g][half] = _mm_or_si128(lo[g], hi);
          scale[4 * h + g][half] = _mm_shuffle_epi8(sc16[k / 8], pick);
        }
      }
    }
    for (size_t t = 0; t < nt; ++t) {
      const ActRow& x = xs[t];
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const size_t b = 8 * sb + 4 * static_cast<size_t>(h);
        const __m128i dots = weighted_sums4(u + 4 * h, scale + 4 * h, x, b);
        const __m128i sums = _mm_sub_epi32(dots, _mm_slli_epi32(_mm_madd_epi16(load16(x.s16 + 2 * b), sc16[h]), 5));
        acc[t] = _mm_add_ps(acc[t], _mm_mul_ps(_mm_cvtepi32_ps(sums), _mm_mul_ps(d, _mm_loadu_ps(x.d + b))));
      }
    }
  }
  for (size_t t = 0; t < nt; ++t) out[t] = hsum_ps(acc[t]);
}

// IQ4_XS: each sub-block's codes through the value table, then a signed dot weighted in pmaddwd by
// its scale ls − 32 (|Σ| per lane <= 2·2·127·127·32); four sub-blocks' sums at once (phaddd), then
// d·dx in f32 as one vector. Tokens in tiles (rows_blocks32): each half super-block's codes and
// scales made once for the tile.
[[gnu::always_inline]] inline void rows_iq4_xs(const uint8_t* row, const ActRow* xs, size_t nt, size_t n_cols, float* out) {
  const __m128i values = load16(kIq4Values);
  __m128 acc[kTileTokens];
  for (size_t t = 0; t < nt; ++t) acc[t] = _mm_setzero_ps();
  for (size_t sb = 0; sb < n_cols / 256; ++sb) {
    const uint8_t* blk = row + 136 * sb;
    step_ahead<136>(blk);
    const __m128 d = _mm_set1_ps(f16_at(blk));
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      Codes c[4];
      __m128i w[4];
#pragma GCC unroll 4
      for (int g = 0; g < 4; ++g) {
        const int j = 4 * h + g;
        __m128i lo, hi;
        nibbles(blk + 8 + 16 * j, lo, hi);
        c[g] = signed_codes(_mm_shuffle_epi8(values, lo), _mm_shuffle_epi8(values, hi));
        w[g] = _mm_set1_epi16(static_cast<short>(iq4_xs_scale(blk, j)));
      }
      for (size_t t = 0; t < nt; ++t) {
        const ActRow& x = xs[t];
        const size_t b = 8 * sb + 4 * static_cast<size_t>(h);
        const __m128i sums = hsum4_epi32(signed_dot(c[0], x, b, w[0], w[0]), signed_dot(c[1], x, b + 1, w[1], w[1]),
                                         signed_dot(c[2], x, b + 2, w[2], w[2]), signed_dot(c[3], x, b + 3, w[3], w[3]));
        acc[t] = _mm_add_ps(acc[t], _mm_mul_ps(_mm_cvtepi32_ps(sums), _mm_mul_ps(d, _mm_loadu_ps(x.d + b))));
      }
    }
  }
  for (size_t t = 0; t < nt; ++t) out[t] = hsum_ps(acc[t]);
}

// The activations' sums of each 16 values (|Σ| <= 16·127, int16), every token, in this thread's
// scratch: [token][n_cols / 16], from their sums of each 4 (QuantizedActs::s4). n_cols is a multiple
// of 256 (the types that read them).
const int16_t* sums16(const QuantizedActs& x) {
  const size_t per_tok = x.n_cols / 16;
  auto* out = static_cast<int16_t*>(thread_scratch(kScratchSums, x.n_tok * per_tok * sizeof(int16_t)));
  for (size_t t = 0; t < x.n_tok; ++t) {
    const int32_t* s4 = x.s4 + t * (x.n_cols / 4);
    for (size_t c = 0; c < x.n_cols; c += 128) {  // 8 sums: each the 4 sums of 4 in a vector, two hadds
      __m128i f[8];
      for (int k = 0; k < 8; ++k) f[k] = load16(s4 + c / 4 + 4 * k);
      const __m128i lo = _mm_hadd_epi32(_mm_hadd_epi32(f[0], f[1]), _mm_hadd_epi32(f[2], f[3]));
      const __m128i hi = _mm_hadd_epi32(_mm_hadd_epi32(f[4], f[5]), _mm_hadd_epi32(f[6], f[7]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + t * per_tok + c / 16), _mm_packs_epi32(lo, hi));
    }
  }
  return out;
}

// Token t of x as an ActRow, with its 16-value sums from s16 (null: none).
ActRow act_row(const QuantizedActs& x, const int16_t* s16, size_t t) {
  const size_t n = x.n_cols, nb = n / 32;
  return ActRow{x.q + t * n, x.d + t * nb, x.s + t * nb, s16 != nullptr ? s16 + t * (n / 16) : nullptr};
}

// y[t][r] = row_dot(W[r], x[t]): each weight row dotted with every token while it is in L1.
void matmul_act_q8(const WeightView& w, const QuantizedActs& x, const int16_t* s16, float* y, size_t ldy,
                   size_t row_begin, size_t row_end, RowDot row_dot) {
  const size_t n = w.n_cols;
  const size_t row_bytes = dtype_row_bytes(*dtype_info(static_cast<uint32_t>(w.type)), n);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (size_t r = row_begin; r < row_end; ++r) {
    const uint8_t* row = base + r * row_bytes;
    for (size_t t = 0; t < x.n_tok; ++t) y[t * ldy + r] = row_dot(row, act_row(x, s16, t), n);
  }
}

// y[t][r] for the batch's tokens in tiles of kTileTokens, each row's codes unpacked once a tile.
void matmul_tiles(const WeightView& w, const QuantizedActs& x, const int16_t* s16, float* y, size_t ldy,
                  size_t row_begin, size_t row_end, RowTile tile) {
  const size_t n = w.n_cols;
  const size_t row_bytes = dtype_row_bytes(*dtype_info(static_cast<uint32_t>(w.type)), n);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (size_t t0 = 0; t0 < x.n_tok; t0 += kTileTokens) {
    const size_t nt = std::min(kTileTokens, x.n_tok - t0);
    ActRow xs[kTileTokens];
    for (size_t t = 0; t < nt; ++t) xs[t] = act_row(x, s16, t0 + t);
    float out[kTileTokens];
    for (size_t r = row_begin; r < row_end; ++r) {
      tile(base + r * row_bytes, xs, nt, n, out);
      for (size_t t = 0; t < nt; ++t) y[(t0 + t) * ldy + r] = out[t];
    }
  }
}

// An f32 row (n values) dotted with x: four chains of 4 lanes over 16 columns a step, the columns
// after the last 16 one at a time; the same steps for every row and token.
float dot_f32(const float* w, const float* x, size_t n) {
  __m128 a[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
  size_t c = 0;
  for (; c + 16 <= n; c += 16) {
    for (int k = 0; k < 4; ++k) a[k] = _mm_add_ps(a[k], _mm_mul_ps(_mm_loadu_ps(w + c + 4 * k), _mm_loadu_ps(x + c + 4 * k)));
  }
  float s = hsum_ps(_mm_add_ps(_mm_add_ps(a[0], a[1]), _mm_add_ps(a[2], a[3])));
  for (; c < n; ++c) s += w[c] * x[c];
  return s;
}

// Row src of type t (f16 or bf16, n values) as f32 in dst, exactly.
void h16_row_to_f32(DType t, const uint8_t* src, float* dst, size_t n) {
  size_t c = 0;
  if (t == DType::bf16) {
    for (; c + 4 <= n; c += 4) {
      if (c % 32 == 0) step_ahead<64>(src + 2 * c);
      _mm_storeu_ps(dst + c, bf16x4(src + 2 * c));
    }
    for (; c < n; ++c) dst[c] = bf16_to_f32(load_u16(src + 2 * c));
    return;
  }
  for (; c + 8 <= n; c += 8) {
    if (c % 32 == 0) step_ahead<64>(src + 2 * c);
    __m128 lo, hi;
    f16x8(src + 2 * c, lo, hi);
    _mm_storeu_ps(dst + c, lo);
    _mm_storeu_ps(dst + c + 4, hi);
  }
  for (; c < n; ++c) dst[c] = f16_at(src + 2 * c);
}

// F32, F16 and BF16 weights against the f32 activations: each row converted once (into this
// thread's scratch) and dotted with every token of the batch.
void matmul_plain(const WeightView& w, const float* x, size_t n_tok, float* y, size_t ldy, size_t row_begin,
                  size_t row_end) {
  const size_t n = w.n_cols;
  const size_t row_bytes = dtype_row_bytes(*dtype_info(static_cast<uint32_t>(w.type)), n);
  const auto* base = static_cast<const uint8_t*>(w.data);
  float* buf = w.type == DType::f32 ? nullptr : static_cast<float*>(thread_scratch(kScratchRows, n * sizeof(float)));
  for (size_t r = row_begin; r < row_end; ++r) {
    const uint8_t* src = base + r * row_bytes;
    if (buf == nullptr) read_ahead(src + kAheadBytes, row_bytes);  // f32; f16 and bf16 as they convert
    const float* row = reinterpret_cast<const float*>(src);
    if (buf != nullptr) {
      h16_row_to_f32(w.type, src, buf, n);
      row = buf;
    }
    for (size_t t = 0; t < n_tok; ++t) y[t * ldy + r] = dot_f32(row, x + t * n, n);
  }
}

}  // namespace

void matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end) {
  RowDot dot = nullptr;
  RowTile tile = nullptr;
  switch (w.type) {
    case DType::f32:
    case DType::f16:
    case DType::bf16: return matmul_plain(w, x.x, x.n_tok, y, ldy, row_begin, row_end);
    case DType::q8_0: dot = dot_one<rows_blocks32<34, Q8_0Dot>>, tile = rows_blocks32<34, Q8_0Dot>; break;
    case DType::q4_0: dot = dot_one<rows_blocks32<18, Q4_0Dot>>, tile = rows_blocks32<18, Q4_0Dot>; break;
    case DType::q5_0: dot = dot_one<rows_blocks32<22, Q5_0Dot>>, tile = rows_blocks32<22, Q5_0Dot>; break;
    case DType::iq4_nl: dot = dot_one<rows_blocks32<18, Iq4NlDot>>, tile = rows_blocks32<18, Iq4NlDot>; break;
    case DType::q4_1: dot = dot_one<rows_blocks32<20, Q4_1Dot>>, tile = rows_blocks32<20, Q4_1Dot>; break;
    case DType::q5_1: dot = dot_one<rows_blocks32<24, Q5_1Dot>>, tile = rows_blocks32<24, Q5_1Dot>; break;
    case DType::q2_k: dot = dot_one<rows_q2_k>, tile = rows_q2_k; break;
    case DType::q3_k: dot = dot_one<rows_q3_k>, tile = rows_q3_k; break;
    case DType::q4_k: dot = dot_one<rows_q45_k<false>>, tile = rows_q45_k<false>; break;
    case DType::q5_k: dot = dot_one<rows_q45_k<true>>, tile = rows_q45_k<true>; break;
    case DType::q6_k: dot = dot_one<rows_q6_k>, tile = rows_q6_k; break;
    case DType::iq4_xs: dot = dot_one<rows_iq4_xs>, tile = rows_iq4_xs; break;
    default: return scalar::matmul_q(w, x, y, ldy, row_begin, row_end);
  }
  if (x.q == nullptr) return scalar::matmul_q(w, x, y, ldy, row_begin, row_end);
  const bool per16 = w.type == DType::q2_k || w.type == DType::q3_k || w.type == DType::q6_k;  // scales per 16
  const int16_t* s16 = per16 ? sums16(x) : nullptr;
  if (x.n_tok > 1 && tile != nullptr) return matmul_tiles(w, x, s16, y, ldy, row_begin, row_end, tile);
  matmul_act_q8(w, x, s16, y, ldy, row_begin, row_end, dot);
}

// The scalar twins where one token's or one row's work is too small to matter (activation
// quantising: the same bytes by definition; SiLU and RMSNorm: the scalar rules).
const CpuVariant kVariant = {"sse4",      &matmul,     &scalar::quantize_acts, &k8_dot,     &k8_scores,
                             &f16_scores, &f16_accum_v, &softmax,              &k8_accum_v, nullptr};

}  // namespace alap::kernels::sse4
