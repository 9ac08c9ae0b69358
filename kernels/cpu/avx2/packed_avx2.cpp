// Plain AVX2 (no VNNI) products on row-interleaved weights (packed_layout.h), for laptops without
// vpdpbusd: the avxvnni kernels' tiles (8-row halves, up to 4 tokens, one token both halves) with
// each vpdpbusd done as vpmaddubsw (u8 x s8 -> s16 pairs) + vpaddw, the s16 sums widened with
// vpmaddwd by ones every few quads, before they could overflow (codes <= 15: 8 quads, <= 31: 4,
// <= 63: 2). Q8_0 (stored q + 128, which would saturate vpmaddubsw) takes |q| as the unsigned
// operand and x with q's sign (vpsignb), no offset: exact. Decode and prefill give the same bits.
// Not the VNNI kernels (avx_vnni/packed_avxvnni.cpp, avx512_vnni/packed_vnni.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_variants.h"
#include "packed_layout.h"

namespace alap::kernels::avx2 {

namespace {

constexpr int kTMax = 4;  // tokens per tile
constexpr size_t kG = packed::kRows;
constexpr size_t kAhead = 8192;  // decode prefetch distance, as the AVX-512 kernels

inline int32_t ld32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline __m256i bcst(const int8_t* p) { return _mm256_set1_epi32(ld32(p)); }
inline __m256i load32(const uint8_t* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
inline __m256 f16x8(const uint8_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
inline __m256 u8x8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline __m256 s8x8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
// Bit `bit` of every byte of v moved to bit 4 (0x10), the other bits cleared.
inline __m256i bit_to_4(__m256i v, int bit) {
  const __m256i s =
      bit <= 4 ? _mm256_sll_epi16(v, _mm_cvtsi32_si128(4 - bit)) : _mm256_srl_epi16(v, _mm_cvtsi32_si128(bit - 4));
  return _mm256_and_si256(s, _mm256_set1_epi8(0x10));
}

// Decode: part `part` of `parts` of the unit's `lines` lines kAhead on, spread over the unit's
// steps as in packed_vnni.cpp (a burst at the unit's start reads slower cold).
template <int T>
inline void prefetch_part(const uint8_t* p, int lines, int parts, int part) {
  if constexpr (T == 1) {
    for (int i = lines * part / parts; i < lines * (part + 1) / parts; ++i) {
      _mm_prefetch(reinterpret_cast<const char*>(p + kAhead + 64 * i), _MM_HINT_T0);
    }
  }
}

// As in packed_vnni.cpp: the tile's activations interleaved (quad j of block b, token t at int32
// (8b + j)·T + t; dx, ofs, xs at b·T + t; Q6_K's ofs at (2b + h)·T + t).
struct TileActs {
  const int8_t* x;
  const float* dx;
  const int32_t* ofs;
  const float* xs;
  size_t nb;
};

template <int T>
inline const int8_t* quad(const TileActs& a, size_t b, size_t j) {
  return a.x + 4 * ((8 * b + j) * T);
}

// H halves (from h0) × T tokens: acc[h][t] holds rows 8(h0+h)..+7 of token t.
template <int H, int T>
struct Acc {
  __m256 f[H][T];
};

template <int H, int T>
inline void start(__m256i (&p)[H][T], const int32_t* ofs) {
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) p[h][t] = ofs ? _mm256_set1_epi32(ofs[t]) : _mm256_setzero_si256();
}

// q[h][t] (s16 pair sums) += (half h0+h of the 64-byte vector at w, made by unpack: codes <= 63)
// · the quad at x (broadcast); |x| <= 127, so a pair is at most 63·127·2 = 16002.
template <int H, int T, class Unpack>
inline void dot_step(__m256i (&q)[H][T], const uint8_t* w, int h0, const int8_t* x, Unpack unpack) {
  for (int h = 0; h < H; ++h) {
    const __m256i wv = unpack(load32(w + 32 * (h0 + h)), h0 + h);
    for (int t = 0; t < T; ++t) q[h][t] = _mm256_add_epi16(q[h][t], _mm256_maddubs_epi16(wv, bcst(x + 4 * t)));
  }
}

// The same for Q8_0's signed codes (stored byte XOR 0x80): |q| (<= 128) times x with q's sign, a
// pair at most 128·127·2 = 32512; one quad per widen.
template <int H, int T>
inline void dot_step_signed(__m256i (&q)[H][T], const uint8_t* w, int h0, const int8_t* x) {
  for (int h = 0; h < H; ++h) {
    const __m256i wq = _mm256_xor_si256(load32(w + 32 * (h0 + h)), _mm256_set1_epi8(-128));
    const __m256i aw = _mm256_abs_epi8(wq);
    for (int t = 0; t < T; ++t) {
      q[h][t] = _mm256_add_epi16(q[h][t], _mm256_maddubs_epi16(aw, _mm256_sign_epi8(bcst(x + 4 * t), wq)));
    }
  }
}

template <int H, int T>
inline void clear16(__m256i (&q)[H][T]) {
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) q[h][t] = _mm256_setzero_si256();
}

// p[h][t] += the s16 pair sums of q[h][t] widened to int32 (one per row); q cleared.
template <int H, int T>
inline void widen(__m256i (&p)[H][T], __m256i (&q)[H][T]) {
  const __m256i ones = _mm256_set1_epi16(1);
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) p[h][t] = _mm256_add_epi32(p[h][t], _mm256_madd_epi16(q[h][t], ones));
  clear16<H, T>(q);
}

// acc[h][t] += cvt(p[h][t]) · (dw(h0+h) · dx[t]).
template <int H, int T, class Scale>
inline void scale_step(Acc<H, T>& acc, const __m256i (&p)[H][T], int h0, Scale dw, const float* dx) {
  for (int h = 0; h < H; ++h) {
    const __m256 s = dw(h0 + h);
    for (int t = 0; t < T; ++t) {
      acc.f[h][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p[h][t]), _mm256_mul_ps(s, _mm256_set1_ps(dx[t])), acc.f[h][t]);
    }
  }
}

struct Q8_0 {
  static constexpr int kOfs = 3, kOfsShift = 0;  // signed codes: no offset
  template <int H, int T>
  static void run(const uint8_t* g, const TileActs& a, int h0, Acc<H, T>& acc) {
    for (size_t b = 0; b < a.nb; ++b) {
      const packed::BlockAt at = packed::block_at(b, a.nb, 0, 512);
      const uint8_t* unit = g + at.scales - 32 * (b % 2);
      __m256i p[H][T], q[H][T];
      start<H, T>(p, nullptr);
      clear16<H, T>(q);
      for (int j = 0; j < 8; ++j) {
        prefetch_part<T>(unit, 17, 16, 8 * static_cast<int>(b % 2) + j);
        dot_step_signed<H, T>(q, g + at.quants + 64 * j, h0, quad<T>(a, b, static_cast<size_t>(j)));
        widen<H, T>(p, q);
      }
      scale_step<H, T>(
          acc, p, h0, [&](int h) { return f16x8(g + at.scales + 16 * h); }, a.dx + b * T);
    }
  }
};

template <bool kFive>
struct Q45_0 {
  static constexpr int kOfs = 1, kOfsShift = kFive ? 4 : 3;
  template <int H, int T>
  static void run(const uint8_t* g, const TileActs& a, int h0, Acc<H, T>& acc) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (size_t b = 0; b < a.nb; ++b) {
      const packed::BlockAt at = packed::block_at(b, a.nb, kFive ? 64 : 0, 256);
      if (b % 2 == 0) prefetch_part<T>(g + at.scales, kFive ? 11 : 9, 1, 0);
      __m256i p[H][T], q[H][T];
      start<H, T>(p, a.ofs + b * T);
      clear16<H, T>(q);
      for (int k = 0; k < 4; ++k) {
        const uint8_t* w = g + at.quants + 64 * k;
        if (kFive && k == 2) widen<H, T>(p, q);  // 4 quads of codes <= 31
        for (int hi = 0; hi < 2; ++hi) {
          dot_step<H, T>(q, w, h0, quad<T>(a, b, static_cast<size_t>(4 * hi + k)), [&](__m256i v, int h) {
            __m256i u = _mm256_and_si256(hi ? _mm256_srli_epi16(v, 4) : v, m4);
            if constexpr (kFive) u = _mm256_or_si256(u, bit_to_4(load32(g + at.extra + 32 * h), 2 * k + hi));
            return u;
          });
        }
      }
      widen<H, T>(p, q);
      scale_step<H, T>(
          acc, p, h0, [&](int h) { return f16x8(g + at.scales + 16 * h); }, a.dx + b * T);
    }
  }
};

template <bool kFive>
struct Q45_K {
  static constexpr int kOfs = 0, kOfsShift = 0;
  static constexpr size_t kBytes = kFive ? 2816 : 2304, kHead = kFive ? 2560 : 2048;
  template <int H, int T>
  static void run(const uint8_t* g, const TileActs& a, int h0, Acc<H, T>& acc) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m128i m6 = _mm_set1_epi8(0x3F), lo4 = _mm_set1_epi8(0x0F), top2 = _mm_set1_epi8(0x30);
    for (size_t u = 0; u < a.nb / 8; ++u) {
      const uint8_t* o = g + kBytes * u;
      prefetch_part<T>(o, static_cast<int>(kBytes / 64), 1, 0);  // at once (spread: slower cold)
      const __m128i* s = reinterpret_cast<const __m128i*>(o + kHead + 64);
      for (int j = 0; j < 8; ++j) {
        __m128i sc, m;  // 16 rows' scale and min bytes of sub-block j (k4_scale_min)
        if (j < 4) {
          sc = _mm_and_si128(_mm_loadu_si128(s + j), m6);
          m = _mm_and_si128(_mm_loadu_si128(s + j + 4), m6);
        } else {
          const __m128i a8 = _mm_loadu_si128(s + j + 4);
          sc = _mm_or_si128(_mm_and_si128(a8, lo4), _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128(s + j - 4), 2), top2));
          m = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(a8, 4), lo4),
                           _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128(s + j), 2), top2));
        }
        alignas(16) uint8_t scb[16], mb[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(scb), sc);
        _mm_store_si128(reinterpret_cast<__m128i*>(mb), m);
        const size_t b = 8 * u + static_cast<size_t>(j);
        for (int h = 0; h < H; ++h) {
          const __m256 mv = _mm256_mul_ps(f16x8(o + kHead + 32 + 16 * (h0 + h)), u8x8(mb + 8 * (h0 + h)));
          for (int t = 0; t < T; ++t) acc.f[h][t] = _mm256_fnmadd_ps(mv, _mm256_set1_ps(a.xs[b * T + t]), acc.f[h][t]);
        }
        __m256i p[H][T], q[H][T];
        start<H, T>(p, nullptr);
        clear16<H, T>(q);
        for (int k = 0; k < 8; ++k) {
          if (kFive && k == 4) widen<H, T>(p, q);  // 4 quads of codes <= 31
          dot_step<H, T>(q, o + 512 * (j / 2) + 64 * k, h0, quad<T>(a, b, static_cast<size_t>(k)),
                         [&](__m256i v, int h) {
                           __m256i w = _mm256_and_si256((j & 1) ? _mm256_srli_epi16(v, 4) : v, m4);
                           if constexpr (kFive) w = _mm256_or_si256(w, bit_to_4(load32(o + 2048 + 64 * k + 32 * h), j));
                           return w;
                         });
        }
        widen<H, T>(p, q);
        scale_step<H, T>(
            acc, p, h0, [&](int h) { return _mm256_mul_ps(f16x8(o + kHead + 16 * h), u8x8(scb + 8 * h)); },
            a.dx + b * T);
      }
    }
  }
};

struct Q6_K {
  static constexpr int kOfs = 2, kOfsShift = 0;
  template <int H, int T>
  static void run(const uint8_t* g, const TileActs& a, int h0, Acc<H, T>& acc) {
    const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
    for (size_t u = 0; u < a.nb / 8; ++u) {
      const uint8_t* o = g + 3360 * u;
      for (int j = 0; j < 8; ++j) {
        prefetch_part<T>(o, 53, 8, j);
        const uint8_t* nib = o + 384 * j;
        const size_t b = 8 * u + static_cast<size_t>(j);
        for (int hh = 0; hh < 2; ++hh) {  // half block: values 16hh..16hh+15
          __m256i p[H][T], q[H][T];
          start<H, T>(p, a.ofs + (2 * b + static_cast<size_t>(hh)) * T);
          clear16<H, T>(q);
          for (int z = 0; z < 4; ++z) {
            const int k = 2 * (z % 2) + hh;  // top bits 2k..2k+1 → bits 4..5
            if (z == 2) widen<H, T>(p, q);   // 2 quads of codes <= 63
            dot_step<H, T>(q, nib + 64 * z, h0, quad<T>(a, b, static_cast<size_t>(4 * hh + z)), [&](__m256i v, int h) {
              const __m256i n = _mm256_and_si256(hh ? _mm256_srli_epi16(v, 4) : v, m4);
              const __m256i tb = load32(nib + 256 + 64 * (z / 2) + 32 * h);
              const __m256i hs = k == 0   ? _mm256_slli_epi16(tb, 4)
                                 : k == 1 ? _mm256_slli_epi16(tb, 2)
                                 : k == 2 ? tb
                                          : _mm256_srli_epi16(tb, 2);
              return _mm256_or_si256(n, _mm256_and_si256(hs, m30));
            });
          }
          widen<H, T>(p, q);
          scale_step<H, T>(
              acc, p, h0,
              [&](int h) {
                return _mm256_mul_ps(f16x8(o + 3328 + 16 * h), s8x8(o + 3072 + 16 * (2 * j + hh) + 8 * h));
              },
              a.dx + b * T);
        }
      }
    }
  }
};

// Rows [8(h0+h), +8) of tokens [0, T) of one group into y (rows r0 + ..., masked to [rb, re)).
template <class K, int H, int T>
void tile(const uint8_t* g, const TileActs& a, int h0, float* y, size_t ldy, size_t r0, size_t rb, size_t re) {
  Acc<H, T> acc;
  for (int h = 0; h < H; ++h)
    for (int t = 0; t < T; ++t) acc.f[h][t] = _mm256_setzero_ps();
  K::template run<H, T>(g, a, h0, acc);
  for (int h = 0; h < H; ++h) {
    const size_t base = r0 + 8 * static_cast<size_t>(h0 + h);
    alignas(32) int32_t m[8];
    for (size_t i = 0; i < 8; ++i) m[i] = base + i >= rb && base + i < re ? -1 : 0;
    const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
    for (int t = 0; t < T; ++t) _mm256_maskstore_ps(y + static_cast<size_t>(t) * ldy + base, mask, acc.f[h][t]);
  }
}

template <class K>
void tile_t(size_t T, const uint8_t* g, const TileActs& a, int h0, float* y, size_t ldy, size_t r0, size_t rb,
            size_t re) {
  switch (T) {
    case 1:
      return tile<K, 1, 1>(g, a, h0, y, ldy, r0, rb, re);
    case 2:
      return tile<K, 1, 2>(g, a, h0, y, ldy, r0, rb, re);
    case 3:
      return tile<K, 1, 3>(g, a, h0, y, ldy, r0, rb, re);
    default:
      return tile<K, 1, 4>(g, a, h0, y, ldy, r0, rb, re);
  }
}

template <class K>
void block_terms(const QuantizedActs& a, size_t t, size_t nb, int32_t* ofs, float* xs) {
  for (size_t b = 0; b < nb; ++b) {
    const size_t i = t * nb + b;
    if constexpr (K::kOfs == 1) {
      ofs[b] = -(a.s[i] * (1 << K::kOfsShift));
    } else if constexpr (K::kOfs == 2) {
      for (size_t h = 0; h < 2; ++h) {
        const int32_t* s4 = a.s4 + 8 * i + 4 * h;
        ofs[2 * b + h] = -32 * (s4[0] + s4[1] + s4[2] + s4[3]);
      }
    } else if constexpr (K::kOfs == 0) {
      xs[b] = a.d[i] * static_cast<float>(a.s[i]);
    }
  }
}

template <class K>
void matmul_k(const WeightView& w, const QuantizedActs& a, float* y, size_t ldy, size_t rb, size_t re) {
  const size_t nb = a.n_cols / 32, n_tok = a.n_tok, n_ofs = K::kOfs == 2 ? 2 * nb : nb;
  const size_t gb = packed::group_bytes(w.type, w.n_cols);
  const auto* base = static_cast<const uint8_t*>(w.packed);
  const size_t g0 = rb / kG, g1 = (re + kG - 1) / kG;
  thread_local std::vector<int32_t> xi, ofs, tmp_ofs;
  thread_local std::vector<float> dxi, xs, tmp_xs;
  ofs.resize(n_tok * n_ofs);
  xs.resize(n_tok * nb);
  if (n_tok == 1) {  // both halves of a group in one pass
    block_terms<K>(a, 0, nb, ofs.data(), xs.data());
    const TileActs one{a.q, a.d, ofs.data(), xs.data(), nb};
    for (size_t g = g0; g < g1; ++g) tile<K, 2, 1>(base + g * gb, one, 0, y, ldy, g * kG, rb, re);
    return;
  }
  xi.resize(n_tok * nb * 8);
  dxi.resize(n_tok * nb);
  tmp_ofs.resize(n_ofs);
  tmp_xs.resize(nb);
  for (size_t t0 = 0; t0 < n_tok; t0 += kTMax) {
    const size_t T = std::min<size_t>(kTMax, n_tok - t0);
    for (size_t t = 0; t < T; ++t) {
      const int8_t* q = a.q + (t0 + t) * a.n_cols;
      for (size_t k = 0; k < nb * 8; ++k) xi[t0 * nb * 8 + k * T + t] = ld32(q + 4 * k);
      for (size_t b = 0; b < nb; ++b) dxi[t0 * nb + b * T + t] = a.d[(t0 + t) * nb + b];
      block_terms<K>(a, t0 + t, nb, tmp_ofs.data(), tmp_xs.data());
      for (size_t k = 0; k < n_ofs; ++k) ofs[t0 * n_ofs + k * T + t] = tmp_ofs[k];
      for (size_t b = 0; b < nb; ++b) xs[t0 * nb + b * T + t] = tmp_xs[b];
    }
  }
  auto acts = [&](size_t t0) {
    return TileActs{reinterpret_cast<const int8_t*>(xi.data() + t0 * nb * 8), dxi.data() + t0 * nb,
                    ofs.data() + t0 * n_ofs, xs.data() + t0 * nb, nb};
  };
  const size_t chunk = std::max<size_t>(kTMax, (size_t{1} << 19) / a.n_cols / kTMax * kTMax);
  for (size_t tc = 0; tc < n_tok; tc += chunk) {
    const size_t te = std::min(n_tok, tc + chunk);
    for (size_t g = g0; g < g1; ++g) {
      for (int h = 0; h < 2; ++h) {
        if (g * kG + 8 * static_cast<size_t>(h) >= re || g * kG + 8 * static_cast<size_t>(h) + 8 <= rb) continue;
        for (size_t t = tc; t < te; t += kTMax) {
          tile_t<K>(std::min<size_t>(kTMax, te - t), base + g * gb, acts(t), h, y + t * ldy, ldy, g * kG, rb, re);
        }
      }
    }
  }
}

}  // namespace

bool matmul_packed(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                   size_t row_end) {
  if (x.q == nullptr || w.n_rows % kG != 0 || packed::group_bytes(w.type, w.n_cols) == 0) return false;
  switch (w.type) {
    case DType::q8_0:
      matmul_k<Q8_0>(w, x, y, ldy, row_begin, row_end);
      return true;
    case DType::q4_0:
      matmul_k<Q45_0<false>>(w, x, y, ldy, row_begin, row_end);
      return true;
    case DType::q5_0:
      matmul_k<Q45_0<true>>(w, x, y, ldy, row_begin, row_end);
      return true;
    case DType::q4_k:
      matmul_k<Q45_K<false>>(w, x, y, ldy, row_begin, row_end);
      return true;
    case DType::q5_k:
      matmul_k<Q45_K<true>>(w, x, y, ldy, row_begin, row_end);
      return true;
    case DType::q6_k:
      matmul_k<Q6_K>(w, x, y, ldy, row_begin, row_end);
      return true;
    default:
      return false;
  }
}

}  // namespace alap::kernels::avx2
