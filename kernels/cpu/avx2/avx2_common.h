// Private to kernels/cpu: the int8 activation blocks the AVX2 and AVX-512 VNNI matmuls share, and
// the driver that runs a per-row dot over a row range. Only for files built with -mavx2 -mfma -mf16c.
// Also the one-token (decode) products both 256-bit variants instantiate (dec256, below).
#pragma once

#include <immintrin.h>

#include <algorithm>

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

// The largest of v's 8 lanes (max_ps pairs in a fixed order: a NaN lane's fate is the same at
// every caller).
__attribute__((always_inline)) inline float hmax_ps(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline int32_t hsum_epi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

inline float f16_at(const uint8_t* p) { return _cvtsh_ss(load_u16(p)); }
inline __m256 f16x8(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline __m256 bf16x8(const uint8_t* p) {
  const __m256i h = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(h, 16));
}
// 8 values of an f16 (kBf16 false) or bf16 row as f32 (exact either way).
template <bool kBf16>
inline __m256 h16x8(const uint8_t* p) {
  return kBf16 ? bf16x8(p) : f16x8(p);
}
template <bool kBf16>
inline float h16_at(const uint8_t* p) {
  return kBf16 ? bf16_to_f32(load_u16(p)) : f16_at(p);
}

// f16 and bf16 decode (one token) reads rows four at a time: four streams a row apart, which the hardware
// prefetchers follow poorly. A pass reads 128 bytes of the group per 16 columns, so it asks for as
// many bytes at this pointer, advancing at that rate: the next group's bytes in address order (one
// stream), at least 8 KiB ahead for short rows. Reading ahead from the group's own start fetched the
// group's later rows while they were being read: 4096 columns, one thread, cold, on a Zen 5 core
// 17-19 GB/s, against 25-27 (the read probe's rate) reading the next group.
// The packed runs of four (H16Rows) are one stream already: 8 KiB past the pass's start.
inline const char* f16_group_ahead(const uint8_t* w, size_t row_bytes, bool fours) {
  return reinterpret_cast<const char*>(w) + (fours ? 8192 : std::max<size_t>(4 * row_bytes, 8192));
}
// One pass's read-ahead: the pass's 128 bytes at `ahead`, into L2 (prefetcht1) as the super-block
// types' since session 50, not into L1 (prefetcht0). On this project's AMX Xeon, cold, one thread,
// the eval model's shapes (512x1408, 1408x512, 512x8192): packed F16 at 89-92% of the read probe
// against 66-76%; two threads, F16 and BF16, 76-88% against 54-74%; the 256-bit passes 71-78%
// against 58-66% (not measured on AMD Zen).
// docs/bench/cpu.md, "f16 read-ahead into L2; the AMX prefill's token split (session 54)".
inline void h16_read_ahead(const char*& ahead) {
  __builtin_prefetch(ahead, 0, 2);
  __builtin_prefetch(ahead + 64, 0, 2);
  ahead += 128;
}
// The packed runs read ahead over a call's first kH16Ramp bytes only where light_read_ahead() is
// off (AMD Zen), all the way where it is on; the file's rows always. Zen 5, one and two threads,
// tokens alternating in one run (cpu_bench --read-ahead-ab), against reading ahead all the way:
// none 0.92-0.98 of the time on random Llama-3.2-1B f16 (matrices of 2-32 MB) but 1.09-1.15 on the
// eval model (0.5-1.4 MB; a call's rows 0.25-0.7 MB), the first 512 KiB 0.95-0.99 and 0.99-1.02.
// docs/bench/cpu.md, "Packed f16 and bf16 (session 26)".
constexpr size_t kH16Ramp = size_t{512} << 10;

// One-token (decode) weight products in 256 bits, shared by the AVX2 and AVX-VNNI variants. Each
// file instantiates them with its integer dot D: D::dot(init, u, s) = init + Σ of 4 adjacent u·s
// per int32 lane (u unsigned ≤ 128, s signed int8) — maddubs + madd (AVX2) or vpdpbusd (AVX-VNNI),
// the same integers either way — and D::kVecMins, how its Q4_K/Q5_K product adds the mins: true:
// the VNNI tile's vector FMA (−dmin·m_j · dx_j·s_j, lane j) at each super-block's start; false:
// the AVX2 row dot's scalar sum of ((dmin·m_j)·dx_j)·s_j, subtracted after the final sum.
//
// Every row gets the integer sums, f32 products, FMAs (one chain, block by block) and final sum of
// its variant's prefill path (the AVX-VNNI tile<K,1,1>, the AVX2 row dot) in the same order, so
// decode and prefill agree bit for bit (tests/kernels/cpu/fast_paths_test.cpp). That one FMA chain
// per row (4-cycle latency per block) is what bounded one row at a time; R rows per pass run R
// chains side by side. Per-block work is cut to what the bytes need: 8 blocks' fp16 scales
// gathered in general registers and converted together (blocks of 32), the K-quant scales and mins
// unpacked in general registers too, 5th and 6th bits moved into place with one shift, the offsets
// of Q4_0/Q5_0/Q6_K through the integer start value (−2^k·s4) shared by the R rows.
// The plain types' products (matmul_avx2.cpp): an f32 weight row dotted with f32 activations as
// two 8-lane FMA chains over 16-column steps (chain 0 the first 8 columns of a step, chain 1 the
// last 8), then one 8-column step into chain 0, hsum_ps(chain 0 + chain 1) and the scalar tail.
// dot_f32_finish is that ending, from the chains after the 16-column steps up to column c, so a
// tiled product that keeps each (row, token)'s two chains gives dot_f32's bits.
float dot_f32(const float* w, const float* x, size_t n);
float dot_f32_finish(__m256 a0, __m256 a1, const float* w, const float* x, size_t c, size_t n);
// The same ending for an f16 or bf16 row (t; the one-token products, which convert on the fly).
float dot_h16_finish(DType t, __m256 a0, __m256 a1, const uint8_t* w, const float* x, size_t c, size_t n);
// An f16 or bf16 row as f32 (exact).
void row_to_f32(DType t, const uint8_t* src, float* dst, size_t n);
// Rows [r, r + m) of a plain-type matrix (f32, f16, bf16) as f32, rows[i] = row r + i: the
// matrix's own rows for f32, else converted into buf + i·w.n_cols; from the packed runs of four where
// w has them (H16Rows), each whole run in the panel in one pass over its bytes (one stream).
void plain_panel(const WeightView& w, size_t r, size_t m, float* buf, const float** rows);

// Where the f16 / bf16 products read a matrix's rows: the file's (row r at r·row_bytes, its
// 16-column chunks 32 bytes apart), or the packed layout's runs of four rows (packed_layout.h, F16 /
// BF16; w.packed set): row r at its run's start + 32·(r mod 4), chunks 128 bytes apart, so four
// rows read side by side are one stream.
struct H16Rows {
  const uint8_t* base;
  size_t row_bytes;
  bool fours;
};
H16Rows h16_rows(const WeightView& w);

namespace {
inline const uint8_t* h16_row(const H16Rows& m, size_t r) {
  return m.fours ? m.base + r / 4 * 4 * m.row_bytes + 32 * (r % 4) : m.base + r * m.row_bytes;
}
inline size_t h16_step(const H16Rows& m) { return m.fours ? 128 : 32; }   // chunk s + 1 from chunk s
inline size_t h16_next(const H16Rows& m) { return m.fours ? 32 : m.row_bytes; }  // row r + 1 from r, in a four

// The one-token f16 / bf16 product's walk over rows [r, re), shared by the 256- and 512-bit passes:
// four at a time (whole runs of four where the rows are packed; rows that cut a run alone), the
// rest alone. one(r, row) does row r; four(r, row, ahead) rows r..r+3, ahead being the read-ahead
// pointer (f16_group_ahead) or null: the file's rows always read ahead, the runs as kH16Ramp says.
template <class One, class Four>
inline void h16_decode_rows(const H16Rows& m, size_t r, size_t re, One one, Four four) {
  const size_t ramp = !m.fours || light_read_ahead() ? SIZE_MAX : kH16Ramp / m.row_bytes + r;  // rows before it
  if (m.fours) {
    for (; r % 4 != 0 && r < re; ++r) one(r, h16_row(m, r));
  }
  for (; r + 4 <= re; r += 4) {
    const uint8_t* w = h16_row(m, r);
    four(r, w, r < ramp ? f16_group_ahead(w, m.row_bytes, m.fours) : nullptr);
  }
  for (; r < re; ++r) one(r, h16_row(m, r));
}

// IQ4_XS: the steps d·(ls_j − 32) of the 8 sub-blocks of the super-block at up (FORMATS.md §2.9),
// the 6-bit ls of all 8 unpacked with two variable shifts (bits 4j.. of scales_l, 2j.. of scales_h).
// The one-token products of the 256-bit (dec256::IQ4XS) and 512-bit (decode_iq4_xs) kernels.
inline __m256 iq4_xs_steps(const uint8_t* up) {
  const __m256i lo = _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(load_u32(up + 4))),
                                       _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
  const __m256i hi = _mm256_srlv_epi32(_mm256_set1_epi32(load_u16(up + 2)),  //
                                       _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
  const __m256i ls = _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi32(15)),
                                     _mm256_slli_epi32(_mm256_and_si256(hi, _mm256_set1_epi32(3)), 4));
  return _mm256_mul_ps(_mm256_set1_ps(f16_at(up)), _mm256_cvtepi32_ps(_mm256_sub_epi32(ls, _mm256_set1_epi32(32))));
}
}  // namespace

namespace {
namespace dec256 {

inline __m256i ld32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Prefetch the n bytes at p + ahead (past the matrix's end is harmless: prefetches do not fault).
inline void prefetch_ahead(const uint8_t* p, size_t n, size_t ahead) {
  const char* q = reinterpret_cast<const char*>(p) + ahead;
  for (size_t o = 0; o < n; o += 64) _mm_prefetch(q + o, _MM_HINT_T0);
}

// The fp16 scales at p, p + stride, ..., p + 7·stride as 8 floats.
inline __m256 f16x8(const uint8_t* p, size_t stride) {
  auto h = [&](int i) { return uint64_t{load_u16(p + static_cast<size_t>(i) * stride)}; };
  const uint64_t lo = h(0) | h(1) << 16 | h(2) << 32 | h(3) << 48;
  const uint64_t hi = h(4) | h(5) << 16 | h(6) << 32 | h(7) << 48;
  return _mm256_cvtph_ps(_mm_set_epi64x(static_cast<long long>(hi), static_cast<long long>(lo)));
}

// Blocks of 32: the quants of one block (unsigned, offset 2^kShift; Q8_0 signed, kShift −1).
struct B8_0 {
  static constexpr size_t kBytes = 34;
  static constexpr int kShift = -1;
  static __m256i w(const uint8_t* p) { return ld32(p + 2); }
};
// 16 bytes of nibbles → low nibbles in bytes 0..15, high in 16..31 (one broadcast load, a 32-bit
// shift of the upper copy by 4 and a mask: the bits shifted in from the next byte are masked off).
inline __m256i nibbles(const uint8_t* p) {
  const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_and_si256(_mm256_srlv_epi32(both, _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4)), _mm256_set1_epi8(0x0F));
}
struct B4_0 {
  static constexpr size_t kBytes = 18;
  static constexpr int kShift = 3;
  static __m256i w(const uint8_t* p) { return nibbles(p + 2); }
};
// IQ4_NL: Q4_0's nibbles, each an index into kIq4Values (one vpshufb): signed values, so Q8_0's
// sign path (|K| <= 127; K + 128 would saturate vpmaddubsw), exact for vpdpbusd too.
struct BIq4Nl {
  static constexpr size_t kBytes = 18;
  static constexpr int kShift = -1;
  static __m256i w(const uint8_t* p) {
    const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values));
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(k), nibbles(p + 2));
  }
};
struct B5_0 {
  static constexpr size_t kBytes = 22;
  static constexpr int kShift = 4;
  static __m256i w(const uint8_t* p) {  // byte e gets bit e of qh as 0x10
    const __m256i shuf = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
    const __m256i sel = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
    const __m256i qh = _mm256_set1_epi32(static_cast<int32_t>(load_u32(p + 2)));
    const __m256i v = _mm256_and_si256(_mm256_shuffle_epi8(qh, shuf), sel);
    const __m256i hb = _mm256_and_si256(_mm256_cmpeq_epi8(v, sel), _mm256_set1_epi8(0x10));
    return _mm256_or_si256(nibbles(p + 6), hb);
  }
};

// Q8_0 / Q4_0 / Q5_0 / IQ4_NL (K = B8_0, B4_0, B5_0, BIq4Nl), R rows: per group of 8 blocks each row's 8 scales
// d_b·dx_b in one vector, kept on the stack and broadcast per block from there. Every kernel's pf:
// prefetch each row's own bytes pf ahead as it goes (0: matvec prefetches whole rows instead).
template <class D, class K>
struct Blocks32 {
  template <int R>
  static void run(const uint8_t* const* rows, const QuantizedActs& a, float* out, size_t pf) {
    constexpr size_t B = K::kBytes;
    const size_t nb = a.n_cols / 32;
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    alignas(32) float sc[R][8];
    auto block = [&](size_t b, int i) {
      const __m256i xq = ld32(a.q + 32 * b);
      __m256i init = _mm256_setzero_si256();
      if constexpr (K::kShift >= 0) init = _mm256_sub_epi32(init, _mm256_slli_epi32(ld32(a.s4 + 8 * b), K::kShift));
      for (int r = 0; r < R; ++r) {
        const __m256i w = K::w(rows[r] + b * B);
        __m256i p;
        if constexpr (K::kShift < 0) {
          p = D::dot(init, _mm256_sign_epi8(w, w), _mm256_sign_epi8(xq, w));
        } else {
          p = D::dot(init, w, xq);
        }
        acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_broadcast_ss(&sc[r][i]), acc[r]);
      }
    };
    size_t g = 0;
    for (; g + 8 <= nb; g += 8) {
      for (int r = 0; r < R && pf != 0; ++r) prefetch_ahead(rows[r] + g * B, 8 * B, pf);
      const __m256 dx = _mm256_loadu_ps(a.d + g);
      for (int r = 0; r < R; ++r) _mm256_store_ps(sc[r], _mm256_mul_ps(f16x8(rows[r] + g * B, B), dx));
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) block(g + static_cast<size_t>(i), i);
    }
    for (int r = 0; r < R && pf != 0 && g < nb; ++r) prefetch_ahead(rows[r] + g * B, (nb - g) * B, pf);
    for (; g < nb; ++g) {
      for (int r = 0; r < R; ++r) sc[r][0] = f16_at(rows[r] + g * B) * a.d[g];
      block(g, 0);
    }
    for (int r = 0; r < R; ++r) out[r] = hsum_ps(acc[r]);
  }
};

// Q4_K / Q5_K, R rows: per super-block the 8 six-bit scales and the 8 mins unpacked four at a time
// in general registers (k4_scale_min, FORMATS.md §2.7.1; vector byte shuffles measured 5-14% slower)
// and moved over as two 8-byte vectors, the 8 products d·sc_j·dx_j made in one vector; Q5_K's bit j
// of each qh byte shifted to bit 4.
template <class D, bool kFive>
struct Q45K {
  template <int R>
  static void run(const uint8_t* const* rows, const QuantizedActs& a, float* out, size_t pf) {
    constexpr size_t B = kFive ? 176 : 144;
    const size_t nu = a.n_cols / 256;
    const __m256i m4 = _mm256_set1_epi8(0x0F), b4 = _mm256_set1_epi8(0x10);
    __m256 acc[R];
    float mins[R];
    for (int r = 0; r < R; ++r) {
      acc[r] = _mm256_setzero_ps();
      mins[r] = 0.0f;
    }
    alignas(32) float xs[R][8];
    alignas(32) float mt[8];
    for (size_t u = 0; u < nu; ++u) {
      const size_t b0 = u * 8;
      const __m256 dx = _mm256_loadu_ps(a.d + b0);
      const __m256 sf = _mm256_cvtepi32_ps(ld32(a.s + b0));
      for (int r = 0; r < R; ++r) {
        const uint8_t* up = rows[r] + u * B;
        if (pf != 0) prefetch_ahead(up, B, pf);
        const __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_u32(up))));  // d, dmin
        // k4_scale_min for all 8 blocks, 4 bytes at a time in general registers (free here)
        const uint64_t q0 = load_u32(up + 4), q1 = load_u32(up + 8), q2 = load_u32(up + 12);
        const uint64_t sc8 = (q0 & 0x3F3F3F3F) | ((q2 & 0x0F0F0F0F) | ((q0 >> 2) & 0x30303030)) << 32;
        const uint64_t m8 = (q1 & 0x3F3F3F3F) | (((q2 >> 4) & 0x0F0F0F0F) | ((q1 >> 2) & 0x30303030)) << 32;
        const __m256 scf = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(sc8))));
        const __m256 mf = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(m8))));
        const float dmin = _mm_cvtss_f32(_mm_movehdup_ps(dd));
        _mm256_store_ps(xs[r], _mm256_mul_ps(_mm256_mul_ps(_mm256_broadcastss_ps(dd), scf), dx));
        if constexpr (D::kVecMins) {
          acc[r] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(-dmin), mf), _mm256_mul_ps(dx, sf), acc[r]);
        } else {
          _mm256_store_ps(mt, _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(dmin), mf), dx), sf));
          for (int j = 0; j < 8; ++j) mins[r] += mt[j];
        }
      }
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const size_t b = b0 + 2 * static_cast<size_t>(k);
        const __m256i x0 = ld32(a.q + 32 * b), x1 = ld32(a.q + 32 * b + 32);
        for (int r = 0; r < R; ++r) {
          const uint8_t* up = rows[r] + u * B;
          const __m256i q = ld32(up + (kFive ? 48 : 16) + 32 * k);
          __m256i w0 = _mm256_and_si256(q, m4), w1 = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
          if constexpr (kFive) {  // bit 2k / 2k + 1 of each qh byte → bit 4
            const __m256i qh = ld32(up + 16);
            const __m256i h0 = k < 2 ? _mm256_slli_epi16(qh, 4 - 2 * k) : (k == 2 ? qh : _mm256_srli_epi16(qh, 2));
            const __m256i h1 = k < 2 ? _mm256_slli_epi16(qh, 3 - 2 * k) : _mm256_srli_epi16(qh, 2 * k - 3);
            w0 = _mm256_or_si256(w0, _mm256_and_si256(h0, b4));
            w1 = _mm256_or_si256(w1, _mm256_and_si256(h1, b4));
          }
          const __m256i p0 = D::dot(_mm256_setzero_si256(), w0, x0), p1 = D::dot(_mm256_setzero_si256(), w1, x1);
          acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_broadcast_ss(&xs[r][2 * k]), acc[r]);
          acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_broadcast_ss(&xs[r][2 * k + 1]), acc[r]);
        }
      }
    }
    for (int r = 0; r < R; ++r) out[r] = D::kVecMins ? hsum_ps(acc[r]) : hsum_ps(acc[r]) - mins[r];
  }
};

// Q6_K, R rows: block j = 4h + g takes ql's low or high nibbles and qh's bits 2g, 2g + 1 shifted
// straight to bits 4-5; the 16 int8 scales as two int32 vectors, one permute per block; the −32
// offset through the start value −32·s4.
template <class D>
struct Q6K {
  template <int R>
  static void run(const uint8_t* const* rows, const QuantizedActs& a, float* out, size_t pf) {
    const size_t nu = a.n_cols / 256;
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    alignas(32) float xs[R][8];
    for (size_t u = 0; u < nu; ++u) {
      const size_t b0 = u * 8;
      const __m256 dx = _mm256_loadu_ps(a.d + b0);
      __m256i sc[R][2];
      for (int r = 0; r < R; ++r) {
        const uint8_t* up = rows[r] + u * 210;
        if (pf != 0) prefetch_ahead(up, 210, pf);
        _mm256_store_ps(xs[r], _mm256_mul_ps(_mm256_set1_ps(f16_at(up + 208)), dx));
        sc[r][0] = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(up + 192)));
        sc[r][1] = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(up + 200)));
      }
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const int h = j / 4, g = j % 4;
        const size_t b = b0 + static_cast<size_t>(j);
        const __m256i xq = ld32(a.q + 32 * b);
        const __m256i init = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(ld32(a.s4 + 8 * b), 5));
        const __m256i pick = _mm256_setr_epi32(2 * (j % 4), 2 * (j % 4), 2 * (j % 4), 2 * (j % 4), 2 * (j % 4) + 1,
                                               2 * (j % 4) + 1, 2 * (j % 4) + 1, 2 * (j % 4) + 1);
        for (int r = 0; r < R; ++r) {
          const uint8_t* up = rows[r] + u * 210;
          const __m256i ql = ld32(up + 64 * h + 32 * (g & 1));
          const __m256i lo = (g & 2) ? _mm256_and_si256(_mm256_srli_epi16(ql, 4), m4) : _mm256_and_si256(ql, m4);
          const __m256i qh = ld32(up + 128 + 32 * h);
          const __m256i hb = g == 2 ? qh : (g < 2 ? _mm256_slli_epi16(qh, 4 - 2 * g) : _mm256_srli_epi16(qh, 2));
          const __m256i w = _mm256_or_si256(lo, _mm256_and_si256(hb, m30));
          const __m256i p = _mm256_mullo_epi32(D::dot(init, w, xq), _mm256_permutevar8x32_epi32(sc[r][h], pick));
          acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_broadcast_ss(&xs[r][j]), acc[r]);
        }
      }
    }
    for (int r = 0; r < R; ++r) out[r] = hsum_ps(acc[r]);
  }
};

// IQ4_XS, R rows: per super-block the 8 products d·(ls_j − 32)·dx_j in one vector (iq4_xs_steps);
// each sub-block's 16 bytes of nibbles through nibbles() and the value table, |K| times x with K's
// sign (K is never 0): the integers of the row dot and of the tile (whose K + 128 with the −128·Σx
// offset sums to the same), and their f32 steps in their order.
template <class D>
struct IQ4XS {
  template <int R>
  static void run(const uint8_t* const* rows, const QuantizedActs& a, float* out, size_t pf) {
    const size_t nu = a.n_cols / 256;
    const __m256i values = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values)));
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    alignas(32) float xs[R][8];
    for (size_t u = 0; u < nu; ++u) {
      const size_t b0 = u * 8;
      const __m256 dx = _mm256_loadu_ps(a.d + b0);
      for (int r = 0; r < R; ++r) {
        const uint8_t* up = rows[r] + u * 136;
        if (pf != 0) prefetch_ahead(up, 136, pf);
        _mm256_store_ps(xs[r], _mm256_mul_ps(iq4_xs_steps(up), dx));
      }
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const size_t b = b0 + static_cast<size_t>(j);
        const __m256i xq = ld32(a.q + 32 * b);
        for (int r = 0; r < R; ++r) {
          const __m256i w = _mm256_shuffle_epi8(values, nibbles(rows[r] + u * 136 + 8 + 16 * j));
          const __m256i p = D::dot(_mm256_setzero_si256(), _mm256_sign_epi8(w, w), _mm256_sign_epi8(xq, w));
          acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_broadcast_ss(&xs[r][j]), acc[r]);
        }
      }
    }
    for (int r = 0; r < R; ++r) out[r] = hsum_ps(acc[r]);
  }
};

// Rows [rb, re) of the matrix at base, R rows per pass (the rest one at a time). The hardware
// prefetcher follows one sequential stream but not R rows side by side, so the code asks for the
// bytes kAheadBytes further on itself (prefetcht0): rows up to kStreamRowBytes as whole rows at the
// start of each pass (as the AVX-512 decode_matvec), longer rows as each row's stream goes, per 8
// blocks or super-block (cold, one thread, 4096-4864 columns: 4-20% faster than whole rows; on
// 896-column Q8_0 rows 10-20% slower).
constexpr size_t kAheadBytes = 8192;
constexpr size_t kStreamRowBytes = 2048;

template <class Kern, int R>
void matvec(const uint8_t* base, size_t row_bytes, const QuantizedActs& a, float* y, size_t rb, size_t re) {
  if (row_bytes > kStreamRowBytes) {  // long rows: each row's stream asks for its own bytes ahead
    size_t r = rb;
    for (; r + R <= re; r += R) {
      const uint8_t* rows[R];
      for (int i = 0; i < R; ++i) rows[i] = base + (r + static_cast<size_t>(i)) * row_bytes;
      Kern::template run<R>(rows, a, y + r, kAheadBytes);
    }
    for (; r < re; ++r) {
      const uint8_t* rows[1] = {base + r * row_bytes};
      Kern::template run<1>(rows, a, y + r, kAheadBytes);
    }
    return;
  }
  const size_t ahead = std::max<size_t>(R, (kAheadBytes / row_bytes + R - 1) / R * R);
  size_t r = rb;
  for (; r + R <= re; r += R) {
    if (r + ahead < re) {  // the R rows `ahead` rows on, one prefetch per cache line
      const uint8_t* p = base + (r + ahead) * row_bytes;
      const uint8_t* e = base + std::min(re, r + ahead + R) * row_bytes;
      for (; p < e; p += 64) _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T0);
    }
    const uint8_t* rows[R];
    for (int i = 0; i < R; ++i) rows[i] = base + (r + static_cast<size_t>(i)) * row_bytes;
    Kern::template run<R>(rows, a, y + r, 0);
  }
  for (; r < re; ++r) {
    const uint8_t* rows[1] = {base + r * row_bytes};
    Kern::template run<1>(rows, a, y + r, 0);
  }
}

// Rows per pass (1, 2 or 4; the prefill tile's results do not depend on it).
template <class Kern>
void matvec_rows(int rpp, const uint8_t* base, size_t row_bytes, const QuantizedActs& a, float* y, size_t rb,
                 size_t re) {
  switch (rpp) {
    case 4: return matvec<Kern, 4>(base, row_bytes, a, y, rb, re);
    case 2: return matvec<Kern, 2>(base, row_bytes, a, y, rb, re);
    default: return matvec<Kern, 1>(base, row_bytes, a, y, rb, re);
  }
}

// The one-token product of rows [rb, re) of w for the types above (true), or false for others.
// Rows per pass as measured cold, one thread (matvec_bench, docs/bench/cpu.md "256-bit decode
// paths"): one FMA chain per row held Q4_0/Q5_0/Q4_K at 15-18 GB/s; two rows lift the unpacking
// types, four a little more for Q4_0; Q6_K rows over 2 KiB (4096 columns and up) read best alone.
template <class D>
bool decode(const WeightView& w, const QuantizedActs& a, float* y, size_t rb, size_t re) {
  const size_t n = a.n_cols;
  const auto* base = static_cast<const uint8_t*>(w.data);
  switch (w.type) {
    case DType::q8_0: matvec_rows<Blocks32<D, B8_0>>(2, base, n / 32 * 34, a, y, rb, re); return true;
    case DType::q4_0: matvec_rows<Blocks32<D, B4_0>>(4, base, n / 32 * 18, a, y, rb, re); return true;
    case DType::q5_0: matvec_rows<Blocks32<D, B5_0>>(2, base, n / 32 * 22, a, y, rb, re); return true;
    case DType::iq4_nl: matvec_rows<Blocks32<D, BIq4Nl>>(4, base, n / 32 * 18, a, y, rb, re); return true;
    case DType::q4_k: matvec_rows<Q45K<D, false>>(2, base, n / 256 * 144, a, y, rb, re); return true;
    case DType::q5_k: matvec_rows<Q45K<D, true>>(2, base, n / 256 * 176, a, y, rb, re); return true;
    case DType::q6_k: {
      const size_t rb6 = n / 256 * 210;
      matvec_rows<Q6K<D>>(rb6 <= 2048 ? 2 : 1, base, rb6, a, y, rb, re);
      return true;
    }
    case DType::iq4_xs: matvec_rows<IQ4XS<D>>(2, base, n / 256 * 136, a, y, rb, re); return true;
    default: return false;
  }
}

}  // namespace dec256
}  // namespace

}  // namespace alap::kernels::avx2
