// AVX-512 VNNI grouped-head attention (attn_heads.h): all query heads of one KV group per pass
// over 16 keys. Packed K: the 16 rows are transposed to dword columns once and biased to
// unsigned (k + 128), then each head is one broadcast vpdpbusd per 4 dims, minus 128·Σq per
// block (bit for bit scalar::k8_scores); a single head instead one vpdpbusd per key and 64 bytes,
// then the dwords summed per block. fp16 K: rows converted and half transposed, one FMA per
// head and 4 dims of 4 keys, 4 heads per load of the keys (up to 8 heads of 64 or 128 kept in
// registers, a second conversion for heads 5-8; more heads through a stack array). fp16 V: each
// row converted once a pass, one FMA per head and 16 lanes, up to 14 heads × 32 lanes (a prompt
// tile's rows), 4 heads × 64 lanes or one head × 128 lanes per pass. Packed V (attn.h's v16 rule):
// p·d as int16 codes per head and block, pairs of rows widened and interleaved once per pass, one
// vpdpwssd per head and 16 lanes.
// A head's results never depend on the heads or keys beside it in a call (CPU prefill tiles rely
// on it; attn_heads_test checks it).
// GCC 12's avx512fintrin.h builds 512-bit inserts and shuffles from _mm512_undefined_*(), which
// -Wmaybe-uninitialized reports at -O3 once inlined: a false positive in the system header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "alap/kernels/kv_k8.h"
#include "attn_heads.h"
#include "avx512_vnni/exp_avx512.h"
#include "avx512_vnni/transpose_avx512.h"
#include "cpu_variants.h"

namespace alap::kernels::avx512vnni {

namespace {

constexpr size_t kMaxHeads = 32;  // heads per group the stack tables hold (more: per-head path)

inline __mmask16 tail_mask(size_t r) { return static_cast<__mmask16>((1u << r) - 1u); }

// fp16 scales of block b for keys j..j+r−1 (r <= 16; the rest 0) as 16 floats.
__attribute__((always_inline)) inline __m512 key_scales(const uint16_t* dk, size_t nb, size_t j, size_t r, size_t b) {
  if (nb == 2 && r == 16) {
    const __m512i v = _mm512_loadu_si512(dk + j * 2);
    const __m512i idx = _mm512_setr_epi32(0x00020000, 0x00060004, 0x000A0008, 0x000E000C, 0x00120010, 0x00160014,
                                          0x001A0018, 0x001E001C, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i sel = _mm512_permutexvar_epi16(_mm512_add_epi16(idx, _mm512_set1_epi16(static_cast<short>(b))), v);
    return _mm512_cvtph_ps(_mm512_castsi512_si256(sel));
  }
  if (nb == 4 && r == 16) {  // head_dim 128: the 16 keys' 64 scales in two loads, key i's at 4i + b
    const __m512i idx = _mm512_setr_epi32(0x00040000, 0x000C0008, 0x00140010, 0x001C0018, 0x00240020, 0x002C0028,
                                          0x00340030, 0x003C0038, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i sel = _mm512_permutex2var_epi16(_mm512_loadu_si512(dk + j * 4),
                                                  _mm512_add_epi16(idx, _mm512_set1_epi16(static_cast<short>(b))),
                                                  _mm512_loadu_si512(dk + j * 4 + 32));
    return _mm512_cvtph_ps(_mm512_castsi512_si256(sel));
  }
  alignas(32) uint16_t t[16] = {};
  for (size_t i = 0; i < r; ++i) t[i] = dk[(j + i) * nb + b];
  return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(t)));
}

// Σ of one 32-value block of a packed query (the dpbusd bias: keys enter as k + 128).
inline int32_t block_sum(const int8_t* qb) {
  int32_t s = 0;
  for (size_t i = 0; i < 32; ++i) s += qb[i];
  return s;
}

// Each row's −128·Σq (the start of its dpbusd chains) and fp16 scale as a float, per block of 32.
template <size_t HD>
inline void query_terms(const int8_t* q, const uint16_t* dq, size_t n_heads, int32_t (*nbias)[HD / 32],
                        float (*fq)[HD / 32]) {
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t b = 0; b < HD / 32; ++b) {
      nbias[h][b] = -128 * block_sum(q + h * HD + 32 * b);
      fq[h][b] = _cvtsh_ss(dq[h * (HD / 32) + b]);
    }
  }
}

// 64 bytes from kr of keys 0..r−1 (rows HD bytes apart; r <= 16, the rest zero), transposed: t[c]
// lane i holds dims 4c..4c+3 of key i, as k + 128 (the unsigned operand of vpdpbusd).
template <size_t HD>
__attribute__((always_inline)) inline void keys_transposed(const int8_t* kr, size_t r, __m512i (&t)[16]) {
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  if (r == 16) {  // whole groups: no per-row test
    for (size_t i = 0; i < 16; ++i) t[i] = _mm512_xor_si512(_mm512_loadu_si512(kr + i * HD), flip);
  } else {
    for (size_t i = 0; i < 16; ++i) {
      t[i] = i < r ? _mm512_xor_si512(_mm512_loadu_si512(kr + i * HD), flip) : _mm512_setzero_si512();
    }
  }
  transpose16(t);
}

// Packed-K scores with the head dimension HD (64 or 128) and the head count NH (1..8) fixed at
// compile time: the same operations per head as k8_scores_heads below (bit for bit), with row
// addresses as constants and every head's dpbusd chains unrolled side by side, so the chains of
// the NH heads overlap and the sums of a row stay in registers across its 64-byte passes (the
// general loop below kept its 16 row pointers on the stack and ran one head at a time: ~7.7
// cycles a key for 4 heads of 64, ~5 here; docs/bench/cpu.md "Decode attention at depth, part 2
// (session 8)").
template <size_t HD, int NH>
void k8_scores_fixed(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t n, float scale,
                     float* scores, size_t ld) {
  constexpr size_t nb = HD / 32;
  int32_t nbias[NH][nb];  // −128·Σ q over each block
  float fq[NH][nb];
  query_terms<HD>(q, dq, NH, nbias, fq);
  const __m512 vscale = _mm512_set1_ps(scale);
  for (size_t j = 0; j < n; j += 16) {
    const size_t r = std::min<size_t>(16, n - j);
    prefetch_ahead(k + (j + kReadAheadRows) * HD, 16 * HD);  // keys ahead (attn_heads.h)
    prefetch_ahead(dk + (j + kReadAheadRows) * nb, 16 * 2 * nb);
    __m512 a[NH];
    for (size_t c0 = 0; c0 < nb; c0 += 2) {  // 64 bytes (2 blocks) of every row per pass
      __m512i t[16];
      keys_transposed<HD>(k + j * HD + 32 * c0, r, t);  // t[c] lane i: dims 4c..4c+3 of key j+i, as k + 128
      __m512 fk[2];
      for (size_t b = 0; b < 2; ++b) fk[b] = key_scales(dk, nb, j, r, c0 + b);
      for (size_t b = 0; b < 2; ++b) {
        __m512i s0[NH], s1[NH];
        for (int h = 0; h < NH; ++h) {
          s0[h] = _mm512_set1_epi32(nbias[h][c0 + b]);
          s1[h] = _mm512_setzero_si512();
        }
        for (int c = 0; c < 8; c += 2) {
          for (int h = 0; h < NH; ++h) {
            const int8_t* qb = q + h * HD + 32 * (c0 + b) + 4 * c;
            int32_t w0, w1;
            std::memcpy(&w0, qb, 4);
            std::memcpy(&w1, qb + 4, 4);
            s0[h] = _mm512_dpbusd_epi32(s0[h], t[8 * b + c], _mm512_set1_epi32(w0));
            s1[h] = _mm512_dpbusd_epi32(s1[h], t[8 * b + c + 1], _mm512_set1_epi32(w1));
          }
        }
        for (int h = 0; h < NH; ++h) {
          const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(fq[h][c0 + b]), fk[b]);
          const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0[h], s1[h])), dd);
          a[h] = c0 == 0 && b == 0 ? x : _mm512_add_ps(a[h], x);  // the first block: 0 + x is x
        }
      }
    }
    for (int h = 0; h < NH; ++h) _mm512_mask_storeu_ps(scores + h * ld + j, tail_mask(r), _mm512_mul_ps(vscale, a[h]));
  }
}

// The int32 sums of 16 keys' rows s[i] (16 dwords each; dwords 0-7 one 32-value block, 8-15 the
// next) per block: lo lane i = Σ of s[i]'s dwords 0-7, hi lane i = Σ of dwords 8-15. Pairs of
// rows, then quads, then 128-bit lanes: 30 shuffles and 14 adds (integer sums: any order is exact).
__attribute__((always_inline)) inline void block_sums16(const __m512i (&s)[16], __m512i& lo, __m512i& hi) {
  __m512i u[8], v[4];
  for (int i = 0; i < 8; ++i) {  // 128-bit lane L: keys 2i, 2i+1, 2i, 2i+1 over 2 of the lane's dwords
    u[i] = _mm512_add_epi32(_mm512_unpacklo_epi32(s[2 * i], s[2 * i + 1]), _mm512_unpackhi_epi32(s[2 * i], s[2 * i + 1]));
  }
  for (int m = 0; m < 4; ++m) {  // 128-bit lane L: keys 4m..4m+3 over the lane's 4 dwords
    v[m] = _mm512_add_epi32(_mm512_unpacklo_epi64(u[2 * m], u[2 * m + 1]), _mm512_unpackhi_epi64(u[2 * m], u[2 * m + 1]));
  }
  // [keys 0-3 lo, keys 0-3 hi, keys 4-7 lo, keys 4-7 hi], then the same for keys 8-15
  const __m512i a = _mm512_add_epi32(_mm512_shuffle_i32x4(v[0], v[1], 0x88), _mm512_shuffle_i32x4(v[0], v[1], 0xDD));
  const __m512i b = _mm512_add_epi32(_mm512_shuffle_i32x4(v[2], v[3], 0x88), _mm512_shuffle_i32x4(v[2], v[3], 0xDD));
  lo = _mm512_shuffle_i32x4(a, b, 0x88);
  hi = _mm512_shuffle_i32x4(a, b, 0xDD);
}

// Packed-K scores of a single query head (multi-head attention), head_dim HD (64 or 128): one
// vpdpbusd per key and 64 bytes against the query's own 64 bytes, then the 16 keys' dwords summed
// per block (block_sums16) instead of the 16 rows transposed first (64 shuffles a 64-byte pass,
// which one head's 8 vpdpbusd could not hide). The int32 block sums are the same integers, and
// the float steps after them (scales, the blocks' sum in order, the scale) are k8_scores_fixed's:
// the same bits.
template <size_t HD>
void k8_scores_one(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t n, float scale,
                   float* scores) {
  constexpr size_t nb = HD / 32, nz = HD / 64;
  int32_t nbias[nb];  // −128·Σ q over each block
  float fq[nb];
  for (size_t b = 0; b < nb; ++b) {
    nbias[b] = -128 * block_sum(q + 32 * b);
    fq[b] = _cvtsh_ss(dq[b]);
  }
  __m512i qz[nz];
  for (size_t z = 0; z < nz; ++z) qz[z] = _mm512_loadu_si512(q + 64 * z);
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512 vscale = _mm512_set1_ps(scale);
  for (size_t j = 0; j < n; j += 16) {
    const size_t r = std::min<size_t>(16, n - j);
    prefetch_ahead(k + (j + kReadAheadRows) * HD, 16 * HD);  // keys ahead (attn_heads.h)
    prefetch_ahead(dk + (j + kReadAheadRows) * nb, 16 * 2 * nb);
    __m512 a;
#pragma GCC unroll 2
    for (size_t z = 0; z < nz; ++z) {  // 64 bytes (2 blocks) of every row per pass
      const int8_t* kr = k + j * HD + 64 * z;
      const auto row = [&](size_t i) {
        return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(_mm512_loadu_si512(kr + i * HD), flip),
                                   qz[z]);
      };
      __m512i s[16];
      if (r == 16) {  // whole groups: no per-row test
        for (size_t i = 0; i < 16; ++i) s[i] = row(i);
      } else {
        for (size_t i = 0; i < 16; ++i) s[i] = i < r ? row(i) : _mm512_setzero_si512();
      }
      __m512i sb[2];
      block_sums16(s, sb[0], sb[1]);
      for (size_t b = 0; b < 2; ++b) {
        const size_t blk = 2 * z + b;
        const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(fq[blk]), key_scales(dk, nb, j, r, blk));
        const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_set1_epi32(nbias[blk]), sb[b])), dd);
        a = blk == 0 ? x : _mm512_add_ps(a, x);  // the first block: 0 + x is x
      }
    }
    _mm512_mask_storeu_ps(scores + j, tail_mask(r), _mm512_mul_ps(vscale, a));
  }
}

// NH rows of k8_scores_many over two sets of 16 keys (e = 0, 1): each set's transposed codes (tb[e]:
// zmm 8·b + c holds quad c of block b, as k + 128) and scales (fk[e][b]) against rows q (their
// −128·Σq starts and scales in nbias, fq); k8_scores_fixed's operations per row and key in its order.
// Each broadcast of a row's quad serves both sets' dots.
template <size_t HD, int NH>
__attribute__((always_inline)) inline void scores_rows(const int8_t* q, const int32_t (*nbias)[HD / 32],
                                                       const float (*fq)[HD / 32], const __m512i (*tb)[2 * HD / 8],
                                                       const __m512 (*fk)[HD / 32], __m512 vscale, float* scores,
                                                       size_t ld, const __mmask16 (&tail)[2]) {
  constexpr size_t nb = HD / 32;
  __m512 a[2][NH];
  for (size_t b = 0; b < nb; ++b) {
    __m512i s[2][NH];
    for (int h = 0; h < NH; ++h) s[0][h] = s[1][h] = _mm512_set1_epi32(nbias[h][b]);
    for (int c = 0; c < 8; ++c) {
      const __m512i t0 = _mm512_load_si512(&tb[0][8 * b + c]), t1 = _mm512_load_si512(&tb[1][8 * b + c]);
      for (int h = 0; h < NH; ++h) {
        int32_t w;
        std::memcpy(&w, q + h * HD + 32 * b + 4 * c, 4);
        const __m512i x = _mm512_set1_epi32(w);
        s[0][h] = _mm512_dpbusd_epi32(s[0][h], t0, x);
        s[1][h] = _mm512_dpbusd_epi32(s[1][h], t1, x);
      }
    }
    for (int e = 0; e < 2; ++e) {
      for (int h = 0; h < NH; ++h) {
        const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(fq[h][b]), fk[e][b]);
        const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(s[e][h]), dd);
        a[e][h] = b == 0 ? x : _mm512_add_ps(a[e][h], x);  // the first block: 0 + x is x
      }
    }
  }
  for (int e = 0; e < 2; ++e) {
    for (int h = 0; h < NH; ++h) {
      _mm512_mask_storeu_ps(scores + h * ld + 16 * e, tail[e], _mm512_mul_ps(vscale, a[e][h]));
    }
  }
}

// Packed-K scores of more rows than k8_scores_fixed holds (a prompt tile's 32: 8 tokens × a group's
// heads), head_dim HD (64 or 128): every 32 keys transposed once into L1 (tb) for all the rows,
// which then run 4 at a time (scores_rows), each row k8_scores_fixed's operations: the same bits.
// The general loop below, which took these rows one at a time with one broadcast a vpdpbusd, ran
// at 110-125 GMAC/s on the Ice Lake Xeon; this at 135-150 (0.61-0.79x the time, 12-32 rows of 64
// and 128; 8 rows at a time spilled, 6 gave 0.70-0.81x), 128-token prompts at depth 4096 0.92-0.99x
// (docs/bench/cpu.md, session 59).
template <size_t HD>
void k8_scores_many(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                    size_t n, float scale, float* scores, size_t ld) {
  constexpr size_t nb = HD / 32;
  int32_t nbias[kMaxHeads][nb];  // −128·Σ q over each block
  float fq[kMaxHeads][nb];
  query_terms<HD>(q, dq, n_heads, nbias, fq);
  const __m512 vscale = _mm512_set1_ps(scale);
  alignas(64) __m512i tb[2][2 * HD / 8];
  __m512 fk[2][nb];
  for (size_t j = 0; j < n; j += 32) {
    __mmask16 tail[2];
    for (size_t e = 0; e < 2; ++e) {
      const size_t je = j + 16 * e, r = je < n ? std::min<size_t>(16, n - je) : 0;
      tail[e] = tail_mask(r);
      prefetch_ahead(k + (je + kReadAheadRows) * HD, 16 * HD);  // keys ahead (attn_heads.h)
      prefetch_ahead(dk + (je + kReadAheadRows) * nb, 16 * 2 * nb);
      for (size_t c0 = 0; c0 < nb; c0 += 2) {  // 64 bytes (2 blocks) of every key per pass
        __m512i t[16];
        keys_transposed<HD>(k + je * HD + 32 * c0, r, t);
        for (size_t c = 0; c < 16; ++c) _mm512_store_si512(&tb[e][8 * c0 + c], t[c]);
        for (size_t b = 0; b < 2; ++b) fk[e][c0 + b] = r > 0 ? key_scales(dk, nb, je, r, c0 + b) : _mm512_setzero_ps();
      }
    }
    size_t h0 = 0;
    for (; h0 + 4 <= n_heads; h0 += 4) {
      scores_rows<HD, 4>(q + h0 * HD, nbias + h0, fq + h0, tb, fk, vscale, scores + h0 * ld + j, ld, tail);
    }
    const int8_t* qr = q + h0 * HD;
    float* sr = scores + h0 * ld + j;
    switch (n_heads - h0) {
      case 1: scores_rows<HD, 1>(qr, nbias + h0, fq + h0, tb, fk, vscale, sr, ld, tail); break;
      case 2: scores_rows<HD, 2>(qr, nbias + h0, fq + h0, tb, fk, vscale, sr, ld, tail); break;
      case 3: scores_rows<HD, 3>(qr, nbias + h0, fq + h0, tb, fk, vscale, sr, ld, tail); break;
      default: break;
    }
  }
}

template <size_t HD>
bool k8_scores_fixed_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                           size_t n, float scale, float* scores, size_t ld) {
  switch (n_heads) {
    case 1: k8_scores_one<HD>(q, dq, k, dk, n, scale, scores); return true;
    case 2: k8_scores_fixed<HD, 2>(q, dq, k, dk, n, scale, scores, ld); return true;
    case 3: k8_scores_fixed<HD, 3>(q, dq, k, dk, n, scale, scores, ld); return true;
    case 4: k8_scores_fixed<HD, 4>(q, dq, k, dk, n, scale, scores, ld); return true;
    case 5: k8_scores_fixed<HD, 5>(q, dq, k, dk, n, scale, scores, ld); return true;
    case 6: k8_scores_fixed<HD, 6>(q, dq, k, dk, n, scale, scores, ld); return true;
    case 7: k8_scores_fixed<HD, 7>(q, dq, k, dk, n, scale, scores, ld); return true;
    case 8: k8_scores_fixed<HD, 8>(q, dq, k, dk, n, scale, scores, ld); return true;
    default:  // a prompt tile's rows
      if (n_heads > kMaxHeads) return false;
      k8_scores_many<HD>(q, dq, n_heads, k, dk, n, scale, scores, ld);
      return true;
  }
}

}  // namespace

void k8_scores_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld) {
  if (head_dim == 64 && k8_scores_fixed_heads<64>(q, dq, n_heads, k, dk, n, scale, scores, ld)) return;
  if (head_dim == 128 && k8_scores_fixed_heads<128>(q, dq, n_heads, k, dk, n, scale, scores, ld)) return;
  if (k8_block_size(head_dim) != 32 || head_dim > 256) {
    return avx2::k8_scores_heads(q, dq, n_heads, k, dk, head_dim, n, scale, scores, ld);
  }
  const size_t nb = head_dim / 32;
  if (n_heads > kMaxHeads) {  // heads in chunks of kMaxHeads (the same scores per head)
    for (size_t h0 = 0; h0 < n_heads; h0 += kMaxHeads) {
      k8_scores_heads(q + h0 * head_dim, dq + h0 * nb, std::min(kMaxHeads, n_heads - h0), k, dk, head_dim, n, scale,
                      scores + h0 * ld, ld);
    }
    return;
  }
  int32_t bias[kMaxHeads][8];  // 128·Σ q over each block
  float fq[kMaxHeads][8];
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t b = 0; b < nb; ++b) {
      bias[h][b] = 128 * block_sum(q + h * head_dim + 32 * b);
      fq[h][b] = _cvtsh_ss(dq[h * nb + b]);
    }
  }
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512 vscale = _mm512_set1_ps(scale);
  alignas(64) float acc[kMaxHeads][16];
  for (size_t j = 0; j < n; j += 16) {
    const size_t r = std::min<size_t>(16, n - j);
    prefetch_ahead(k + (j + kReadAheadRows) * head_dim, 16 * head_dim);  // keys ahead (attn_heads.h)
    prefetch_ahead(dk + (j + kReadAheadRows) * nb, 16 * 2 * nb);
    for (size_t c0 = 0; c0 < nb; c0 += 2) {  // 64 bytes (2 blocks) of every row per pass
      const size_t nbc = std::min<size_t>(2, nb - c0);
      const bool last = c0 + nbc == nb;
      const int8_t* kr = k + j * head_dim + 32 * c0;
      __m512i t[16];
      if (r == 16 && nbc == 2) {  // whole rows: straight loads (no per-row test)
        for (size_t i = 0; i < 16; ++i) t[i] = _mm512_xor_si512(_mm512_loadu_si512(kr + i * head_dim), flip);
      } else {
        const __mmask64 bytes = nbc == 2 ? ~__mmask64{0} : __mmask64{0xFFFFFFFFu};
        for (size_t i = 0; i < 16; ++i) {
          t[i] = i < r ? _mm512_xor_si512(_mm512_maskz_loadu_epi8(bytes, kr + i * head_dim), flip)
                       : _mm512_setzero_si512();
        }
      }
      transpose16(t);  // t[c] lane i: dims 4c..4c+3 of key j+i, as k + 128
      __m512 fk[2];
      for (size_t b = 0; b < nbc; ++b) fk[b] = key_scales(dk, nb, j, r, c0 + b);
      for (size_t h = 0; h < n_heads; ++h) {
        __m512 a = _mm512_setzero_ps();
        for (size_t b = 0; b < nbc; ++b) {
          const int8_t* qb = q + h * head_dim + 32 * (c0 + b);
          // −128·Σq as the first chain's start: the same int32 sum as subtracting it at the end.
          __m512i s0 = _mm512_set1_epi32(-bias[h][c0 + b]), s1 = _mm512_setzero_si512();
          for (int c = 0; c < 8; c += 2) {
            int32_t w0, w1;
            std::memcpy(&w0, qb + 4 * c, 4);
            std::memcpy(&w1, qb + 4 * c + 4, 4);
            s0 = _mm512_dpbusd_epi32(s0, t[8 * b + c], _mm512_set1_epi32(w0));
            s1 = _mm512_dpbusd_epi32(s1, t[8 * b + c + 1], _mm512_set1_epi32(w1));
          }
          const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(fq[h][c0 + b]), fk[b]);
          const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1)), dd);
          // The scalar rule's acc = 0 + x for a row's first block is x itself (x is never −0: the
          // scales are >= 0 and an int32 converts to +0).
          if (c0 == 0 && b == 0) {
            a = x;
          } else {
            a = _mm512_add_ps(c0 != 0 && b == 0 ? _mm512_load_ps(acc[h]) : a, x);
          }
        }
        if (last) {
          _mm512_mask_storeu_ps(scores + h * ld + j, tail_mask(r), _mm512_mul_ps(vscale, a));
        } else {
          _mm512_store_ps(acc[h], a);
        }
      }
    }
  }
}

namespace {
// Queries laid out for the half-transposed keys: qa [h][c][m][16], lane L of each 16 holding
// q[16c + 4L + m] four times, so one FMA per (k, m) serves a head (f16_scores_heads below).
void lay_out_queries(const float* q, size_t n_heads, size_t head_dim, float* qa) {
  const size_t nc = head_dim / 16;
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t c = 0; c < nc; ++c) {
      for (size_t m = 0; m < 4; ++m) {
        for (size_t L = 0; L < 4; ++L) {
          for (size_t i = 0; i < 4; ++i) qa[((h * nc + c) * 4 + m) * 16 + 4 * L + i] = q[h * head_dim + 16 * c + 4 * L + m];
        }
      }
    }
  }
}

// One head's 4 accumulators (rows 4k..4k+3 in a[k], 4 lanes a dim group) summed over their 128-bit
// lanes into the 16 keys' scores, scaled and stored (the first r).
__attribute__((always_inline)) inline void store_key_sums(const __m512 (&a)[4], size_t r, __m512 vscale, float* dst) {
  const __m512 b0 = _mm512_add_ps(_mm512_shuffle_f32x4(a[0], a[1], 0x44), _mm512_shuffle_f32x4(a[0], a[1], 0xEE));
  const __m512 b1 = _mm512_add_ps(_mm512_shuffle_f32x4(a[2], a[3], 0x44), _mm512_shuffle_f32x4(a[2], a[3], 0xEE));
  const __m512 sum = _mm512_add_ps(_mm512_shuffle_f32x4(b0, b1, 0x88), _mm512_shuffle_f32x4(b0, b1, 0xDD));
  _mm512_mask_storeu_ps(dst, tail_mask(r), _mm512_mul_ps(sum, vscale));
}

// Heads h0..h0+NH−1 against 16 half-transposed keys u [nc][16]: 4 accumulators per head (rows
// 4k..4k+3 in a_k), each u value loaded once for the NH heads; per head the same FMA order
// whatever NH, so a head's scores do not depend on the heads beside it.
template <int NH>
inline void score_heads(const float* qa, size_t nc, size_t h0, const __m512* u, size_t r, __m512 vscale, float* scores,
                        size_t ld) {
  __m512 a[NH][4];
  for (int h = 0; h < NH; ++h) {
    for (int k = 0; k < 4; ++k) a[h][k] = _mm512_setzero_ps();
  }
  for (size_t c = 0; c < nc; ++c) {
    const __m512* uc = u + 16 * c;
    for (int m = 0; m < 4; ++m) {
      const __m512 u0 = uc[m], u1 = uc[4 + m], u2 = uc[8 + m], u3 = uc[12 + m];
      for (int h = 0; h < NH; ++h) {
        const __m512 qv = _mm512_load_ps(qa + ((h0 + h) * nc * 4 + 4 * c + m) * 16);
        a[h][0] = _mm512_fmadd_ps(u0, qv, a[h][0]);
        a[h][1] = _mm512_fmadd_ps(u1, qv, a[h][1]);
        a[h][2] = _mm512_fmadd_ps(u2, qv, a[h][2]);
        a[h][3] = _mm512_fmadd_ps(u3, qv, a[h][3]);
      }
    }
  }
  for (int h = 0; h < NH; ++h) store_key_sums(a[h], r, vscale, scores + (h0 + h) * ld);
}

// Rows x[i] (16 floats) → u: pairs of lanes interleaved across 4 rows (unpack by 32 then by 64 bits),
// the half transpose both fp16 score paths use before their per-head FMAs.
__attribute__((always_inline)) inline void half_transpose(const __m512* x, __m512* u) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(x[i], x[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(x[i], x[i + 1]);
  }
  for (int b = 0; b < 16; b += 4) {
    const __m512d t0 = _mm512_castps_pd(t[b]), t1 = _mm512_castps_pd(t[b + 1]);
    const __m512d t2 = _mm512_castps_pd(t[b + 2]), t3 = _mm512_castps_pd(t[b + 3]);
    u[b + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[b + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[b + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[b + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
}

// fp16 scores of NH <= 4 heads of dimension HD (64 or 128) for the 16 keys at j (the first r):
// f16_scores_heads below with each 16-dim chunk's half-transposed rows kept in registers and used at
// once (there: all chunks stored to a stack array, then read back per head). Per head the same FMAs
// in the same order (chunk, then m) and the same lane sum: the same bits. qa: these heads' laid-out
// queries; scores: the first head's row.
template <size_t HD, int NH>
__attribute__((always_inline)) inline void f16_scores_16keys(const float* qa, const uint16_t* k, size_t j, size_t r,
                                                             __m512 vscale, float* scores, size_t ld) {
  constexpr size_t nc = HD / 16;
  __m512 a[NH][4];
  for (int h = 0; h < NH; ++h) {
    for (int b = 0; b < 4; ++b) a[h][b] = _mm512_setzero_ps();
  }
  for (size_t c = 0; c < nc; ++c) {
    __m512 x[16], u[16];
    const uint16_t* kc = k + j * HD + 16 * c;
    for (size_t i = 0; i < 16; ++i) {
      x[i] = r == 16 || i < r ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(kc + i * HD)))
                              : _mm512_setzero_ps();
    }
    half_transpose(x, u);
    for (int m = 0; m < 4; ++m) {
      for (int h = 0; h < NH; ++h) {
        const __m512 qv = _mm512_load_ps(qa + ((h * nc + c) * 4 + m) * 16);
        for (int b = 0; b < 4; ++b) a[h][b] = _mm512_fmadd_ps(u[4 * b + m], qv, a[h][b]);
      }
    }
  }
  for (int h = 0; h < NH; ++h) store_key_sums(a[h], r, vscale, scores + h * ld + j);
}

// NA + NB heads (NA, NB <= 4) of dimension HD: each 16 keys through f16_scores_16keys for the first
// NA heads, then again (the keys' chunks converted and transposed a second time, from L1) for the
// other NB. Measured against the stack array of f16_scores_heads (7 heads of 64, the Qwen2.5
// groups): docs/bench/cpu.md "Qwen's groups of 7 heads (session 47)".
template <size_t HD, int NA, int NB>
void f16_scores_fixed(const float* q, const uint16_t* k, size_t n, float scale, float* scores, size_t ld) {
  constexpr size_t nc = HD / 16;
  alignas(64) float qa[(NA + NB) * nc * 4 * 16];  // [h][c][m][16]
  lay_out_queries(q, NA + NB, HD, qa);
  const __m512 vscale = _mm512_set1_ps(scale);
  for (size_t j = 0; j < n; j += 16) {
    const size_t r = std::min<size_t>(16, n - j);
    prefetch_ahead(k + (j + kReadAheadRows) * HD, 16 * 2 * HD);
    f16_scores_16keys<HD, NA>(qa, k, j, r, vscale, scores, ld);
    if constexpr (NB > 0) f16_scores_16keys<HD, NB>(qa + NA * nc * 4 * 16, k, j, r, vscale, scores + NA * ld, ld);
  }
}

template <size_t HD>
bool f16_scores_fixed_heads(const float* q, size_t n_heads, const uint16_t* k, size_t n, float scale, float* scores,
                            size_t ld) {
  switch (n_heads) {
    case 1: f16_scores_fixed<HD, 1, 0>(q, k, n, scale, scores, ld); return true;
    case 2: f16_scores_fixed<HD, 2, 0>(q, k, n, scale, scores, ld); return true;
    case 3: f16_scores_fixed<HD, 3, 0>(q, k, n, scale, scores, ld); return true;
    case 4: f16_scores_fixed<HD, 4, 0>(q, k, n, scale, scores, ld); return true;
    case 5: f16_scores_fixed<HD, 3, 2>(q, k, n, scale, scores, ld); return true;
    case 6: f16_scores_fixed<HD, 3, 3>(q, k, n, scale, scores, ld); return true;
    case 7: f16_scores_fixed<HD, 4, 3>(q, k, n, scale, scores, ld); return true;
    case 8: f16_scores_fixed<HD, 4, 4>(q, k, n, scale, scores, ld); return true;
    default: return false;
  }
}
}  // namespace

// fp16 K, 16 keys per pass: each 16-dim chunk of the 16 rows converted once and half transposed
// (two unpack stages: 128-bit lane L of u[4k + m] holds rows 4k..4k+3 at dim 4L + m), so each
// head needs one FMA per (k, m) against its query laid out to match (q[4L + m] in lane L), and
// one 4-way lane sum per 16 keys at the end.
void f16_scores_heads(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld) {
  constexpr size_t kQa = 16384;  // floats of laid-out queries: 4 per query value
  if (head_dim == 64 && f16_scores_fixed_heads<64>(q, n_heads, k, n, scale, scores, ld)) return;
  if (head_dim == 128 && f16_scores_fixed_heads<128>(q, n_heads, k, n, scale, scores, ld)) return;
  if (head_dim % 16 != 0 || head_dim > 256) {
    return avx2::f16_scores_heads(q, n_heads, k, head_dim, n, scale, scores, ld);
  }
  if (4 * n_heads * head_dim > kQa) {  // heads in chunks (each head's scores are the same either way)
    const size_t per = kQa / (4 * head_dim);
    for (size_t h0 = 0; h0 < n_heads; h0 += per) {
      f16_scores_heads(q + h0 * head_dim, std::min(per, n_heads - h0), k, head_dim, n, scale, scores + h0 * ld, ld);
    }
    return;
  }
  const size_t nc = head_dim / 16;
  alignas(64) float qa[kQa];  // [h][c][m][16]
  lay_out_queries(q, n_heads, head_dim, qa);
  __m512 u[16 * 16];  // [c][4k + m]
  const __m512 vscale = _mm512_set1_ps(scale);
  for (size_t j = 0; j < n; j += 16) {
    const size_t r = std::min<size_t>(16, n - j);
    prefetch_ahead(k + (j + kReadAheadRows) * head_dim, 16 * 2 * head_dim);
    for (size_t c = 0; c < nc; ++c) {
      __m512 x[16];
      const uint16_t* kc = k + j * head_dim + 16 * c;
      if (r == 16) {  // whole groups: straight loads (no per-row test)
        for (size_t i = 0; i < 16; ++i) {
          x[i] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(kc + i * head_dim)));
        }
      } else {
        for (size_t i = 0; i < 16; ++i) {
          x[i] = i < r ? _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(kc + i * head_dim)))
                       : _mm512_setzero_ps();
        }
      }
      half_transpose(x, u + 16 * c);
    }
    size_t h = 0;
    for (; h + 4 <= n_heads; h += 4) score_heads<4>(qa, nc, h, u, r, vscale, scores + j, ld);
    switch (n_heads - h) {
      case 3: score_heads<3>(qa, nc, h, u, r, vscale, scores + j, ld); break;
      case 2: score_heads<2>(qa, nc, h, u, r, vscale, scores + j, ld); break;
      case 1: score_heads<1>(qa, nc, h, u, r, vscale, scores + j, ld); break;
      default: break;
    }
  }
}

namespace {
// V sums for NH heads over lanes [i0, i0 + 16·NC): each key's row converted once (column(i) gives
// the loader of lanes [i, i + 16) of key j), then one FMA per head and 16 lanes, keys in order
// (the scalar twin's std::fma chain, bit for bit). LDP: p's row stride when it is the
// attention's key block (addresses then differ by constants: no pointer per head to keep), 0 for
// any stride.
template <int NH, int NC, size_t LDP, class Column>
void accum_heads_tile(const float* p, size_t ldp_any, size_t head_dim, size_t n, float* out, size_t i0, Column column,
                      const AttnReadAhead& ahead) {
  const size_t ldp = LDP != 0 ? LDP : ldp_any;
  __m512 o[NH][NC];
  for (int h = 0; h < NH; ++h) {
    for (int c = 0; c < NC; ++c) o[h][c] = _mm512_loadu_ps(out + h * head_dim + i0 + 16 * c);
  }
  auto body = [&](auto load, size_t j0, size_t j1, bool fetch) {
    for (size_t j = j0; j < j1; ++j) {
      if (fetch) read_ahead(ahead, j);
      __m512 x[NC];
      for (int c = 0; c < NC; ++c) x[c] = load[c](j);
      for (int h = 0; h < NH; ++h) {
        const __m512 pb = _mm512_set1_ps(p[h * ldp + j]);
        for (int c = 0; c < NC; ++c) o[h][c] = _mm512_fmadd_ps(pb, x[c], o[h][c]);
      }
    }
  };
  decltype(column(size_t{0})) load[NC];
  for (int c = 0; c < NC; ++c) load[c] = column(i0 + 16 * c);
  if (ahead.rows != nullptr) {
    body(load, 0, n, true);
  } else {
    body(load, 0, n, false);
  }
  for (int h = 0; h < NH; ++h) {
    for (int c = 0; c < NC; ++c) _mm512_storeu_ps(out + h * head_dim + i0 + 16 * c, o[h][c]);
  }
}

template <int NC, size_t LDP, class Column>
void accum_heads_lanes(const float* p, size_t ldp, size_t nh, size_t head_dim, size_t n, float* out, size_t i0,
                       Column column, const AttnReadAhead& ahead) {
  switch (nh) {  // nh <= kVRowsMax (for_v_passes)
    case 14:
      if constexpr (NC <= 2) return accum_heads_tile<14, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 13:
      if constexpr (NC <= 2) return accum_heads_tile<13, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 12:
      if constexpr (NC <= 2) return accum_heads_tile<12, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 11:
      if constexpr (NC <= 2) return accum_heads_tile<11, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 10:
      if constexpr (NC <= 2) return accum_heads_tile<10, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 9:
      if constexpr (NC <= 2) return accum_heads_tile<9, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 8:
      if constexpr (NC <= 2) return accum_heads_tile<8, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 7:
      if constexpr (NC <= 2) return accum_heads_tile<7, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 6:
      if constexpr (NC <= 2) return accum_heads_tile<6, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 5:
      if constexpr (NC <= 2) return accum_heads_tile<5, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 4:
      if constexpr (NC <= 4) return accum_heads_tile<4, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 3:
      if constexpr (NC <= 4) return accum_heads_tile<3, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    case 2:
      if constexpr (NC <= 4) return accum_heads_tile<2, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
      break;
    default: return accum_heads_tile<1, NC, LDP>(p, ldp, head_dim, n, out, i0, column, ahead);
  }
}

// The most rows (heads) one pass of a V sum holds: 14 × 32 lanes, 28 of the 32 zmm registers. A
// prompt tile's rows (its tokens × a KV group's heads, e.g. 8 × 7) took groups of 8: each key's two
// conversions of V (four dot-port ops) then served 16 FMAs, now up to 28: random Qwen2.5-0.5B Q8_0
// prompts at depth 4096 0.96x the time with one thread, Llama-3.2-1B 0.99x (docs/bench/cpu.md,
// session 61).
constexpr size_t kVRowsMax = 14;

// The passes of a V sum over n_heads heads: in as few groups of at most kVRowsMax as can be, as even
// as can be (a KV group's up to 8 heads: one; 56: 4 × 14; 32: 11, 11, 10); a group of up to 4 heads
// takes 64 lanes a pass, then 32, then a last 16; a single head (multi-head attention: a KV group
// of one) 128 lanes a pass first, so that it too runs 8 FMA chains. pass(nc, h0, nh, i0, ahead)
// runs one pass of nc·16 lanes from i0 for heads [h0, h0 + nh) (nc a std::integral_constant);
// only the first pass carries the read-ahead. Each lane's chain over the keys is the same
// whatever the pass: the bits do not depend on the heads beside a head.
template <class Pass>
void for_v_passes(size_t n_heads, size_t head_dim, const AttnReadAhead& ahead, Pass&& pass) {
  const AttnReadAhead none{};
  const size_t n_groups = (n_heads + kVRowsMax - 1) / kVRowsMax;  // none for no heads
  for (size_t k = 0, h0 = 0; k < n_groups; ++k) {
    const size_t h1 = n_heads * (k + 1) / n_groups, nh = h1 - h0;
    const auto ra = [&](size_t i0) -> const AttnReadAhead& { return h0 == 0 && i0 == 0 ? ahead : none; };
    size_t i0 = 0;
    if (nh == 1) {
      for (; i0 + 128 <= head_dim; i0 += 128) pass(std::integral_constant<int, 8>{}, h0, nh, i0, ra(i0));
    }
    if (nh <= 4) {
      for (; i0 + 64 <= head_dim; i0 += 64) pass(std::integral_constant<int, 4>{}, h0, nh, i0, ra(i0));
    }
    for (; i0 + 32 <= head_dim; i0 += 32) pass(std::integral_constant<int, 2>{}, h0, nh, i0, ra(i0));
    if (i0 < head_dim) pass(std::integral_constant<int, 1>{}, h0, nh, i0, ra(i0));
    h0 = h1;
  }
}

// Heads in groups of up to kVRowsMax with lanes in pairs of 16 (up to 28 accumulators, a last 16
// alone), or for a group of up to 4 heads 64 lanes at a time (each p broadcast serves 4 FMAs).
// The first pass over the keys also prefetches the following n rows (attn_heads.h read_ahead).
template <size_t LDP, class Column>
void accum_heads_ld(const float* p, size_t ldp, size_t n_heads, size_t head_dim, size_t n, float* out, Column column,
                    const AttnReadAhead& ahead) {
  for_v_passes(n_heads, head_dim, ahead, [&](auto nc, size_t h0, size_t nh, size_t i0, const AttnReadAhead& a) {
    accum_heads_lanes<decltype(nc)::value, LDP>(p + h0 * ldp, ldp, nh, head_dim, n, out + h0 * head_dim, i0, column, a);
  });
}

// Lanes [i, i + 16) of fp16 V rows j.
struct F16Column {
  const uint16_t* v = nullptr;  // row 0 at lane i
  size_t head_dim = 0;
  __m512 operator()(size_t j) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + j * head_dim)));
  }
};

constexpr size_t kBlockLd = 256;  // core/model/attention_cpu.h kKeyBlock: the scores' row stride there

template <class Column>
void accum_heads(const float* p, size_t ldp, size_t n_heads, size_t head_dim, size_t n, float* out, Column column,
                 const AttnReadAhead& ahead) {
  if (ldp == kBlockLd) return accum_heads_ld<kBlockLd>(p, ldp, n_heads, head_dim, n, out, column, ahead);
  accum_heads_ld<0>(p, ldp, n_heads, head_dim, n, out, column, ahead);
}
}  // namespace

void f16_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                       float* out) {
  if (head_dim % 16 != 0) return avx2::f16_accum_v_heads(p, ldp, n_heads, v, head_dim, n, out);
  const AttnReadAhead ahead{reinterpret_cast<const char*>(v), 2 * head_dim, nullptr, 0};
  accum_heads(
      p, ldp, n_heads, head_dim, n, out,
      [v, head_dim](size_t i) { return F16Column{v + i, head_dim}; },
      ahead);
}

namespace {
// The v16 V sum (attn.h): int16 codes of p·d per head and block, pairs of keys through vpdpwssd.
constexpr size_t kV16Heads = 8;            // heads whose codes one pass of the call holds
constexpr size_t kV16Ld = kV16Run + 32;    // int16 codes a (head, block) row: a run, a zero pad
constexpr size_t kV16Blocks = 8;           // head_dim <= 256 in blocks of 32 (more: avx2)

// Codes of heads [0, nh) of p (row stride ldp) for the keys [0, n) of a run, block b of each:
// c[(b·kV16Heads + h)·kV16Ld + j] (a tile's rows then sit at constant offsets from one pointer) and
// the scale s[h·nb + b] (0: the block adds nothing, its codes 0).
// ds [block][kV16Run] holds the keys' scales as floats. For odd n, c[n] is 0 (a code step of 32
// writes it from masked, zero weights), so a last odd key pairs with 0.
template <size_t NB>
void v16_codes_nb(const float* p, size_t ldp, size_t nh, const float* ds, size_t n, int16_t* c, float* s) {
  constexpr size_t nb = NB;
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  // packs_epi32 interleaves its two sources by 128-bit lanes; this puts the 32 codes in key order.
  const __m512i order = _mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7);
  for (size_t h = 0; h < nh; ++h) {
    const float* ph = p + h * ldp;
    // Every block's largest |p·d| in one pass over p.
    __m512 mx[NB];
#pragma GCC unroll 8
    for (size_t b = 0; b < nb; ++b) mx[b] = _mm512_setzero_ps();
    auto max_step = [&](size_t j, __mmask16 m) __attribute__((always_inline)) {
      const __m512 pv = _mm512_maskz_loadu_ps(m, ph + j);
#pragma GCC unroll 8
      for (size_t b = 0; b < nb; ++b) {
        const __m512 w = _mm512_mul_ps(pv, _mm512_maskz_load_ps(m, ds + b * kV16Run + j));
        mx[b] = _mm512_max_ps(mx[b], _mm512_and_ps(w, abs_mask));
      }
    };
    size_t j = 0;
    for (; j + 16 <= n; j += 16) max_step(j, 0xFFFF);
    if (j < n) max_step(j, tail_mask(n - j));
    __m512 inv[NB];
    bool any = false;
#pragma GCC unroll 8
    for (size_t b = 0; b < nb; ++b) {
      const float mb = _mm512_reduce_max_ps(mx[b]);
      const bool on = mb >= kV16MinWeight;
      s[h * nb + b] = on ? mb / 32767.0f : 0.0f;
      inv[b] = _mm512_set1_ps(on ? 32767.0f / mb : 0.0f);  // 0: codes 0 (w·0 = 0, p finite)
      any = any || on;
    }
    if (!any) {
      for (size_t b = 0; b < nb; ++b) {
        int16_t* row = c + (b * kV16Heads + h) * kV16Ld;
        std::fill(row, row + n + 1, int16_t{0});
      }
      continue;
    }
    // The codes, 32 keys a step (the rows hold kV16Ld >= n rounded up to 32 codes).
    auto code_step = [&](size_t j, __mmask16 m0, __mmask16 m1) __attribute__((always_inline)) {
      const __m512 p0 = _mm512_maskz_loadu_ps(m0, ph + j), p1 = _mm512_maskz_loadu_ps(m1, ph + j + 16);
#pragma GCC unroll 8
      for (size_t b = 0; b < nb; ++b) {
        const float* db = ds + b * kV16Run + j;
        const __m512i x0 = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_mul_ps(p0, _mm512_maskz_load_ps(m0, db)), inv[b]));
        const __m512i x1 =
            _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_mul_ps(p1, _mm512_maskz_load_ps(m1, db + 16)), inv[b]));
        _mm512_storeu_si512(c + (b * kV16Heads + h) * kV16Ld + j,
                            _mm512_permutexvar_epi64(order, _mm512_packs_epi32(x0, x1)));
      }
    };
    for (j = 0; j + 32 <= n; j += 32) code_step(j, 0xFFFF, 0xFFFF);
    if (j < n) {
      code_step(j, tail_mask(std::min<size_t>(16, n - j)), j + 16 < n ? tail_mask(n - j - 16) : __mmask16{0});
    }
  }
}

void v16_codes(const float* p, size_t ldp, size_t nh, const float* ds, size_t nb, size_t n, int16_t* c, float* s) {
  switch (nb) {
    case 1: return v16_codes_nb<1>(p, ldp, nh, ds, n, c, s);
    case 2: return v16_codes_nb<2>(p, ldp, nh, ds, n, c, s);
    case 3: return v16_codes_nb<3>(p, ldp, nh, ds, n, c, s);
    case 4: return v16_codes_nb<4>(p, ldp, nh, ds, n, c, s);
    case 5: return v16_codes_nb<5>(p, ldp, nh, ds, n, c, s);
    case 6: return v16_codes_nb<6>(p, ldp, nh, ds, n, c, s);
    case 7: return v16_codes_nb<7>(p, ldp, nh, ds, n, c, s);
    default: return v16_codes_nb<8>(p, ldp, nh, ds, n, c, s);
  }
}

// V sums of NH heads over NCH chunks of 32 lanes from i0 (one scale block each): keys in pairs,
// each pair's two rows widened to int16 and interleaved (unpacklo/hi: dword lanes (row j, row j + 1)
// of dims 8L..8L+3 and 8L+4..8L+7 in 128-bit lane L), then one vpdpwssd per head, chunk and half
// against the pair's codes. The exact int32 sums, put back in dim order, times the block's scale,
// are added to out.
// Pairs of keys [0, np) of `rows` (pair t: rows 2t and 2t + 1) into acc. The pairs go in groups
// of kV16Group, each summed from zero in its own registers and then added to acc: with acc
// itself carried from pair to pair through vpdpwssd, GCC 12 kept each accumulator in two
// registers and moved one to the other every pair (a third of the loop's instructions, perf
// annotate); the unrolled group carries nothing from pair to pair.
constexpr size_t kV16Group = 8;

template <int NH, int NCH, bool FETCH>
__attribute__((always_inline)) inline void v16_pair(__m512i (&part)[NH][NCH][2], const int8_t* rows, size_t head_dim,
                                                    const int16_t* codes, size_t j, const AttnReadAhead& ahead,
                                                    bool first) {
  if constexpr (FETCH) {
    read_ahead(ahead, j);
    read_ahead(ahead, j + 1);
  }
  __m512i lo[NCH], hi[NCH];
#pragma GCC unroll 32
  for (int k = 0; k < NCH; ++k) {
    const __m512i a =
        _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + j * head_dim + 32 * k)));
    const __m512i b =
        _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + (j + 1) * head_dim + 32 * k)));
    lo[k] = _mm512_unpacklo_epi16(a, b);
    hi[k] = _mm512_unpackhi_epi16(a, b);
  }
#pragma GCC unroll 32
  for (int h = 0; h < NH; ++h) {
#pragma GCC unroll 32
    for (int k = 0; k < NCH; ++k) {
      int32_t pair;
      std::memcpy(&pair, codes + (k * kV16Heads + h) * kV16Ld + j, 4);
      const __m512i cb = _mm512_set1_epi32(pair);
      const __m512i z = _mm512_setzero_si512();
      part[h][k][0] = _mm512_dpwssd_epi32(first ? z : part[h][k][0], lo[k], cb);
      part[h][k][1] = _mm512_dpwssd_epi32(first ? z : part[h][k][1], hi[k], cb);
    }
  }
}

template <int NH, int NCH, bool FETCH>
__attribute__((always_inline)) inline void v16_pairs(__m512i (&acc)[NH][NCH][2], const int8_t* rows, size_t head_dim,
                                                     const int16_t* codes, size_t np, const AttnReadAhead& ahead) {
  auto add = [&](const __m512i (&part)[NH][NCH][2]) __attribute__((always_inline)) {
#pragma GCC unroll 32
    for (int h = 0; h < NH; ++h) {
#pragma GCC unroll 32
      for (int k = 0; k < NCH; ++k) {
        acc[h][k][0] = _mm512_add_epi32(acc[h][k][0], part[h][k][0]);
        acc[h][k][1] = _mm512_add_epi32(acc[h][k][1], part[h][k][1]);
      }
    }
  };
  size_t t = 0;
  for (; t + kV16Group <= np; t += kV16Group) {
    __m512i part[NH][NCH][2];
#pragma GCC unroll 8
    for (size_t u = 0; u < kV16Group; ++u) {
      v16_pair<NH, NCH, FETCH>(part, rows, head_dim, codes, 2 * (t + u), ahead, u == 0);
    }
    add(part);
  }
  for (; t < np; ++t) {
    __m512i part[NH][NCH][2];
    v16_pair<NH, NCH, FETCH>(part, rows, head_dim, codes, 2 * t, ahead, true);
    add(part);
  }
}

template <int NH, int NCH>
void v16_tile(const int16_t* c, const float* s, size_t nb, const int8_t* q, size_t head_dim, size_t n, float* out,
              size_t i0, const AttnReadAhead& ahead) {
  const size_t b0 = i0 / 32;
  __m512i acc[NH][NCH][2];
#pragma GCC unroll 32
  for (int h = 0; h < NH; ++h) {
#pragma GCC unroll 32
    for (int k = 0; k < NCH; ++k) acc[h][k][0] = acc[h][k][1] = _mm512_setzero_si512();
  }
  // Codes of head h, chunk k at cb0 + (k·kV16Heads + h)·kV16Ld: constant offsets.
  const int16_t* cb0 = c + b0 * kV16Heads * kV16Ld;
  if (ahead.rows != nullptr) {
    v16_pairs<NH, NCH, true>(acc, q + i0, head_dim, cb0, n / 2, ahead);
  } else {
    v16_pairs<NH, NCH, false>(acc, q + i0, head_dim, cb0, n / 2, ahead);
  }
  if (n % 2 != 0) {  // the last key with a zero row (its partner's code is 0: c[n] = 0)
    alignas(32) int8_t last[2 * 32 * NCH] = {};
    std::memcpy(last, q + (n - 1) * head_dim + i0, 32 * NCH);
    v16_pairs<NH, NCH, false>(acc, last, 32 * NCH, cb0 + (n - 1), 1, ahead);
  }
  // lo dword 4L + m is dim 8L + m, hi dword 4L + m dim 8L + 4 + m.
  const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int h = 0; h < NH; ++h) {
    for (int k = 0; k < NCH; ++k) {
      const float sc = s[h * nb + b0 + k];
      if (sc == 0.0f) continue;
      const __m512 vs = _mm512_set1_ps(sc);
      float* o = out + h * head_dim + i0 + 32 * k;
      const __m512i d0 = _mm512_permutex2var_epi32(acc[h][k][0], first, acc[h][k][1]);
      const __m512i d1 = _mm512_permutex2var_epi32(acc[h][k][0], second, acc[h][k][1]);
      _mm512_storeu_ps(o, _mm512_add_ps(_mm512_loadu_ps(o), _mm512_mul_ps(_mm512_cvtepi32_ps(d0), vs)));
      _mm512_storeu_ps(o + 16, _mm512_add_ps(_mm512_loadu_ps(o + 16), _mm512_mul_ps(_mm512_cvtepi32_ps(d1), vs)));
    }
  }
}

template <int NCH>
void v16_heads(size_t nh, const int16_t* c, const float* s, size_t nb, const int8_t* q, size_t head_dim, size_t n,
               float* out, size_t i0, const AttnReadAhead& ahead) {
  switch (nh) {
    case 8: if constexpr (NCH == 1) return v16_tile<8, NCH>(c, s, nb, q, head_dim, n, out, i0, ahead); break;
    case 7: if constexpr (NCH == 1) return v16_tile<7, NCH>(c, s, nb, q, head_dim, n, out, i0, ahead); break;
    case 6: if constexpr (NCH == 1) return v16_tile<6, NCH>(c, s, nb, q, head_dim, n, out, i0, ahead); break;
    case 5: if constexpr (NCH == 1) return v16_tile<5, NCH>(c, s, nb, q, head_dim, n, out, i0, ahead); break;
    case 4: if constexpr (NCH <= 2) return v16_tile<4, NCH>(c, s, nb, q, head_dim, n, out, i0, ahead); break;
    case 3: if constexpr (NCH <= 2) return v16_tile<3, NCH>(c, s, nb, q, head_dim, n, out, i0, ahead); break;
    case 2: return v16_tile<2, NCH>(c, s, nb, q, head_dim, n, out, i0, ahead);
    default: return v16_tile<1, NCH>(c, s, nb, q, head_dim, n, out, i0, ahead);
  }
}

// One run of at most kV16Run keys.
void v16_run(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d, size_t head_dim,
             size_t n, float* out) {
  const size_t nb = head_dim / 32;
  alignas(64) float ds[kV16Blocks * kV16Run];  // [block][key]
  size_t j = 0;
  if (nb == 1) {
    for (; j + 16 <= n; j += 16) {
      _mm512_store_ps(ds + j, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + j))));
    }
  } else if (nb == 2) {  // 16 keys' scale pairs: evens to block 0, odds to block 1
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (; j + 16 <= n; j += 16) {
      const __m512 lo = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + 2 * j)));
      const __m512 hi = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d + 2 * j + 16)));
      _mm512_store_ps(ds + j, _mm512_permutex2var_ps(lo, even, hi));
      _mm512_store_ps(ds + kV16Run + j, _mm512_permutex2var_ps(lo, odd, hi));
    }
  }
  for (; j < n; ++j) {
    for (size_t b = 0; b < nb; ++b) ds[b * kV16Run + j] = _cvtsh_ss(d[j * nb + b]);
  }
  const AttnReadAhead ahead{reinterpret_cast<const char*>(q), head_dim, reinterpret_cast<const char*>(d), 2 * nb};
  const AttnReadAhead none{};
  alignas(64) int16_t c[kV16Heads * kV16Blocks * kV16Ld];
  float s[kV16Heads * kV16Blocks];
  for (size_t h0 = 0; h0 < n_heads; h0 += kV16Heads) {
    const size_t nh = std::min(kV16Heads, n_heads - h0);
    v16_codes(p + h0 * ldp, ldp, nh, ds, nb, n, c, s);
    float* oh = out + h0 * head_dim;
    // Chunks of 32 lanes: four a pass for one or two heads, two for three or four, else one.
    const size_t per = nh <= 2 ? 4 : nh <= 4 ? 2 : 1;
    for (size_t k = 0; k < nb;) {
      const AttnReadAhead& a = h0 == 0 && k == 0 ? ahead : none;
      const size_t left = nb - k;
      if (per >= 4 && left >= 4) {
        v16_heads<4>(nh, c, s, nb, q, head_dim, n, oh, 32 * k, a);
        k += 4;
      } else if (per >= 2 && left >= 2) {
        v16_heads<2>(nh, c, s, nb, q, head_dim, n, oh, 32 * k, a);
        k += 2;
      } else {
        v16_heads<1>(nh, c, s, nb, q, head_dim, n, oh, 32 * k, a);
        k += 1;
      }
    }
  }
}
}  // namespace

// The v16 rule of attn.h: per run of keys, the scales converted once, then per 8 heads their codes
// (v16_codes) and the passes of pairs of keys through vpdpwssd (v16_tile). Blocks of other than 32
// values or head_dim past 256: the 256-bit variant (the same rule).
void k8_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                      size_t head_dim, size_t block, size_t n, float* out) {
  if (block != 32 || head_dim % 32 != 0 || head_dim / 32 > kV16Blocks) {
    return avx2::k8_accum_v_heads(p, ldp, n_heads, q, d, head_dim, block, n, out);
  }
  const size_t nb = head_dim / 32;
  for (size_t j0 = 0; j0 < n; j0 += kV16Run) {
    v16_run(p + j0, ldp, n_heads, q + j0 * head_dim, d + j0 * nb, head_dim, std::min(kV16Run, n - j0), out);
  }
}

namespace {
// exp(x) for x <= 0 in 16 lanes: the AVX2 variant's exp_neg (2^k · degree-6 polynomial of r,
// x = k·ln2 + r), so each value is the same; below −87 the result is 0.
inline __m512 exp_neg16(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.0f);
  const __mmask16 under = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
  x = _mm512_max_ps(x, lo);
  __m512 k;
  const __m512 p = exp_reduced16(x, k);
  // p·2^k in one vscalefps (the AVX2 twin builds 2^k's bits and multiplies: the same exact
  // product, rounded once either way; k >= −126 here, so 2^k is a normal number there too).
  return _mm512_maskz_scalef_ps(static_cast<__mmask16>(~under), p, k);
}
}  // namespace

namespace {
// softmax_partial of R rows side by side (their operations interleaved, each row's the same as
// alone): 16 lanes at a time, the tail masked; the sum adds lanes in a tree (within rounding of
// the scalar twin's in-order sum).
template <int R>
__attribute__((always_inline)) inline void softmax_rows(float* const (&x)[R], size_t n, float* const (&m)[R],
                                                        float* const (&l)[R]) {
  // The max in 4 independent chains (a max is exact in any order; one chain of 16 waits on
  // each max's latency).
  __m512 vmx[R], vm1[R], vm2[R], vm3[R];
  for (int r = 0; r < R; ++r) vmx[r] = vm1[r] = vm2[r] = vm3[r] = _mm512_set1_ps(x[r][0]);
  size_t j = 0;
  for (; j + 64 <= n; j += 64) {
    for (int r = 0; r < R; ++r) {
      vmx[r] = _mm512_max_ps(vmx[r], _mm512_loadu_ps(x[r] + j));
      vm1[r] = _mm512_max_ps(vm1[r], _mm512_loadu_ps(x[r] + j + 16));
      vm2[r] = _mm512_max_ps(vm2[r], _mm512_loadu_ps(x[r] + j + 32));
      vm3[r] = _mm512_max_ps(vm3[r], _mm512_loadu_ps(x[r] + j + 48));
    }
  }
  for (; j + 16 <= n; j += 16) {
    for (int r = 0; r < R; ++r) vmx[r] = _mm512_max_ps(vmx[r], _mm512_loadu_ps(x[r] + j));
  }
  const __mmask16 tail = tail_mask(n - j);
  __m512 vm[R], s0[R], s1[R];
  float mx[R];
  for (int r = 0; r < R; ++r) {
    if (j < n) vmx[r] = _mm512_mask_max_ps(vmx[r], tail, vmx[r], _mm512_maskz_loadu_ps(tail, x[r] + j));
    vmx[r] = _mm512_max_ps(_mm512_max_ps(vmx[r], vm1[r]), _mm512_max_ps(vm2[r], vm3[r]));
    mx[r] = _mm512_reduce_max_ps(vmx[r]);
    vm[r] = _mm512_set1_ps(mx[r]);
    s0[r] = s1[r] = _mm512_setzero_ps();
  }
  j = 0;
  for (; j + 32 <= n; j += 32) {
    for (int r = 0; r < R; ++r) {
      const __m512 e0 = exp_neg16(_mm512_sub_ps(_mm512_loadu_ps(x[r] + j), vm[r]));
      const __m512 e1 = exp_neg16(_mm512_sub_ps(_mm512_loadu_ps(x[r] + j + 16), vm[r]));
      _mm512_storeu_ps(x[r] + j, e0);
      _mm512_storeu_ps(x[r] + j + 16, e1);
      s0[r] = _mm512_add_ps(s0[r], e0);
      s1[r] = _mm512_add_ps(s1[r], e1);
    }
  }
  for (; j < n; j += 16) {
    const __mmask16 mk = tail_mask(std::min<size_t>(16, n - j));
    for (int r = 0; r < R; ++r) {
      const __m512 e = _mm512_maskz_mov_ps(mk, exp_neg16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mk, x[r] + j), vm[r])));
      _mm512_mask_storeu_ps(x[r] + j, mk, e);
      s0[r] = _mm512_add_ps(s0[r], e);
    }
  }
  for (int r = 0; r < R; ++r) {
    *m[r] = mx[r];
    *l[r] = _mm512_reduce_add_ps(_mm512_add_ps(s0[r], s1[r]));
  }
}
}  // namespace

void softmax_partial(float* x, size_t n, float* m, float* l) { softmax_rows<1>({x}, n, {m}, {l}); }

// Rows four at a time: a row's max and sum wait on their reductions' latency, which the other rows'
// work fills (32 rows of 256 keys: 0.83x the time of one row after another; a prompt tile's slabs in
// attn_amx.cpp, and attn_block_heads' query heads).
void softmax_partial_rows(float* x, size_t ld, size_t rows, size_t n, float* m, float* l) {
  size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    softmax_rows<4>({x + r * ld, x + (r + 1) * ld, x + (r + 2) * ld, x + (r + 3) * ld}, n,
                    {m + r, m + r + 1, m + r + 2, m + r + 3}, {l + r, l + r + 1, l + r + 2, l + r + 3});
  }
  for (; r < rows; ++r) softmax_rows<1>({x + r * ld}, n, {m + r}, {l + r});
}

// k8_quantize a block of 32 as two 16-lane vectors, with the operations of the AVX2 form
// (avx2/attn_avx2.cpp: the scalar rule's bytes and scales, ties, NaNs and infinities included):
// amax by max (a NaN |x| leaves the running max, as std::max does), d = amax / 127 in f32 and its
// fp16 by vcvtps2ph (round to nearest even, as f32_to_fp16), q = fmin(fmax(roundf(x / d), −127),
// 127) with a true division and roundf built from a truncation. Blocks of other than 32 values go
// to the AVX2 form (which passes them to the scalar twin).
void k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d) {
  if (head_dim == 0 || head_dim % 32 != 0) return avx2::k8_quantize(x, head_dim, q, d);
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7FFFFFFF));
  const __m512 sign_mask = _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int>(0x80000000u)));
  const __m512 one = _mm512_set1_ps(1.0f), half = _mm512_set1_ps(0.5f);
  const __m512 lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  for (size_t b = 0; b < head_dim / 32; ++b) {
    const __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
    // NaN in the first operand: the second (the running max) is kept.
    const __m512 mx = _mm512_max_ps(_mm512_and_ps(v1, abs_mask), _mm512_max_ps(_mm512_and_ps(v0, abs_mask), _mm512_setzero_ps()));
    const float db = _mm512_reduce_max_ps(mx) / 127.0f;
    d[b] = static_cast<uint16_t>(_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(db), _MM_FROUND_TO_NEAREST_INT), 0));
    if (db == 0.0f) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(q + 32 * b), _mm256_setzero_si256());
      continue;
    }
    const __m512 vd = _mm512_set1_ps(db);
    for (int k = 0; k < 2; ++k) {
      const __m512 y = _mm512_div_ps(k == 0 ? v0 : v1, vd);
      const __m512 t = _mm512_roundscale_ps(y, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
      const __m512 frac = _mm512_and_ps(_mm512_sub_ps(y, t), abs_mask);
      const __m512 away = _mm512_or_ps(_mm512_and_ps(y, sign_mask), one);  // ±1 with y's sign
      __m512 r = _mm512_mask_add_ps(t, _mm512_cmp_ps_mask(frac, half, _CMP_GE_OQ), t, away);
      r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);  // a NaN quotient: −127, as std::fmax there
      _mm_storeu_si128(reinterpret_cast<__m128i*>(q + 32 * b + 16 * k), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(r)));
    }
  }
}

const AttnHeadsVariant kAttnHeads = {&k8_scores_heads, &f16_scores_heads, &softmax_partial, &f16_accum_v_heads,
                                     &k8_accum_v_heads, &k8_quantize, &avx2::kv_row_to_fp16};

}  // namespace alap::kernels::avx512vnni
