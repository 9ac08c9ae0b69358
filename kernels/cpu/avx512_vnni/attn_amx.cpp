// Prompt attention on the AMX tile unit (amx_prefill(), quant.h; attn.h "_tiles"): a prefill
// tile's rows of query heads (core/model/attention_cpu.cpp: tokens × a KV group's heads) against a
// block of the group's keys, 16 rows × 16 keys (or 16 rows × 16 value lanes) a tile.
// - Packed-K scores (k8_scores_amx, behind k8_scores_heads): TDPBSSD sums each 32-value block's
//   signed codes into exact int32, the same integers the vpdpbusd path makes, and the float steps
//   after them are that path's (scales, the blocks in order, the scale): the same bits.
// - fp16 scores and the fp16 V sum (f16_scores_amx, f16_accum_v_amx): TDPBF16PS on bf16 parts. An
//   fp16 value (11 significant bits) is hi + lo exactly in bf16; an f32 query or probability is
//   hi + lo to 2^-17. The tiles sum hi·hi + hi·lo + lo·hi in f32 (the lo·lo term, ~2^-17 of a
//   product, is left out): not the FMA chain's bits, within ~2^-16 of each product.
// Every row (a query head of a token) and every key or lane is summed on its own, in an order
// that does not depend on the rows beside it, the rows' count or the thread.
// GCC 12's avx512fintrin.h builds 512-bit inserts and shuffles from _mm512_undefined_*(), which
// -Wmaybe-uninitialized reports at -O3 once inlined: a false positive in the system header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "alap/kernels/fp16.h"
#include "avx512_vnni/amx_avx512.h"
#include "avx512_vnni/transpose_avx512.h"
#include "cpu_variants.h"
#include "thread_scratch.h"

namespace alap::kernels::avx512vnni {

namespace {

inline __mmask16 first_lanes(size_t r) { return r >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << r) - 1u); }

// Rows [0, rows) of x (ld apart), columns [0, n), as bf16 A tiles: row tile t's chunk c (32
// columns) at out + 512·(t·n_chunks + c), row r's 32 values 64 bytes apart; hi = bf16(x) there,
// lo = bf16(x − hi) at out + lo_ofs. Zeros past n and for rows [rows, 16·n_tiles).
__attribute__((target("avx512bf16"))) void bf16_rows(const float* x, size_t ld, size_t rows, size_t n, size_t n_tiles,
                                                     size_t n_chunks, uint16_t* out, size_t lo_ofs) {
  for (size_t r = 0; r < 16 * n_tiles; ++r) {
    uint16_t* o = out + 512 * n_chunks * (r / 16) + 32 * (r % 16);
    for (size_t c = 0; c < n_chunks; ++c) {
      __m512i h = _mm512_setzero_si512(), l = _mm512_setzero_si512();
      const size_t j = 32 * c;
      if (r < rows) {
        const float* xr = x + r * ld + j;
        const __m512 v0 = _mm512_maskz_loadu_ps(first_lanes(n - j), xr);
        const __m512 v1 = n > j + 16 ? _mm512_maskz_loadu_ps(first_lanes(n - j - 16), xr + 16) : _mm512_setzero_ps();
        bf16_split(v0, v1, h, l);
      }
      _mm512_store_si512(o + 512 * c, h);
      _mm512_store_si512(o + lo_ofs + 512 * c, l);
    }
  }
}

// Value rows [0, n) of v ([n][head_dim] fp16) as bf16 B tiles: lane tile t's chunk c (keys
// 32c..32c+31) at out + 512·(t·n_chunks + c), pair row k (keys 32c + 2k, +1) 64 bytes apart, word
// 2i + e key 32c + 2k + e's lane 16t + i. hi is the value's f32 with the low 16 bits cleared and lo
// the rest, which fits a bf16 exactly (lo tiles at out + lo_ofs). Zeros past n.
void bf16_values(const uint16_t* v, size_t head_dim, size_t n, size_t n_chunks, uint16_t* out, size_t lo_ofs) {
  const size_t n_tiles = head_dim / 16;
  const __m512i top = _mm512_set1_epi32(static_cast<int>(0xFFFF0000u));
  for (size_t c = 0; c < n_chunks; ++c) {
    for (size_t k = 0; k < 16; ++k) {
      const size_t j = 32 * c + 2 * k;
      for (size_t t = 0; t < n_tiles; ++t) {
        __m512i h[2], l[2];
        for (size_t e = 0; e < 2; ++e) {
          const __m512 f = j + e < n ? _mm512_cvtph_ps(_mm256_loadu_si256(
                                           reinterpret_cast<const __m256i*>(v + (j + e) * head_dim + 16 * t)))
                                     : _mm512_setzero_ps();
          h[e] = _mm512_and_si512(_mm512_castps_si512(f), top);
          l[e] = _mm512_castps_si512(_mm512_sub_ps(f, _mm512_castsi512_ps(h[e])));
        }
        // even words: key j's top halves; odd words: key j + 1's
        uint16_t* o = out + 512 * (t * n_chunks + c) + 32 * k;
        _mm512_store_si512(o, _mm512_mask_blend_epi16(0xAAAAAAAAu, _mm512_srli_epi32(h[0], 16), h[1]));
        _mm512_store_si512(o + lo_ofs, _mm512_mask_blend_epi16(0xAAAAAAAAu, _mm512_srli_epi32(l[0], 16), l[1]));
      }
    }
  }
}

// Key rows [j, j + 16) of k ([n][head_dim] fp16; zeros from n) as bf16 B tiles: chunk c (dims
// 32c..32c+31) at out + 512·c, pair row d (dims 32c + 2d, +1) 64 bytes apart, dword i key j + i's
// pair; hi = bf16(k) and lo = k − hi (exact) at out + lo_ofs.
__attribute__((target("avx512bf16"))) void bf16_keys(const uint16_t* k, size_t head_dim, size_t n, size_t j,
                                                     uint16_t* out, size_t lo_ofs) {
  for (size_t c = 0; c < head_dim / 32; ++c) {
    __m512i h[16], l[16];
    for (size_t i = 0; i < 16; ++i) {
      h[i] = l[i] = _mm512_setzero_si512();
      if (j + i < n) {
        const uint16_t* kr = k + (j + i) * head_dim + 32 * c;
        bf16_split(_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(kr))),
                   _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(kr + 16))), h[i], l[i]);
      }
    }
    transpose16(h);
    transpose16(l);
    for (int d = 0; d < 16; ++d) {
      _mm512_store_si512(out + 512 * c + 32 * d, h[d]);
      _mm512_store_si512(out + lo_ofs + 512 * c + 32 * d, l[d]);
    }
  }
}

// amx_tiles over NG ∈ {1, 2} B tiles and NT ∈ {1, 2} A tiles, hi·hi, hi·lo and lo·hi (both lo).
inline void tiles_hl(int ng, int nt, const uint16_t* wa, size_t ws, size_t wl, const uint16_t* xa, size_t xs,
                     size_t xl, size_t n_blocks, float* part) {
  if (ng == 2) {
    nt == 2 ? amx_tiles<2, 2, false, true, true>(wa, ws, wl, xa, xs, xl, n_blocks, part, true)
            : amx_tiles<2, 1, false, true, true>(wa, ws, wl, xa, xs, xl, n_blocks, part, true);
  } else {
    nt == 2 ? amx_tiles<1, 2, false, true, true>(wa, ws, wl, xa, xs, xl, n_blocks, part, true)
            : amx_tiles<1, 1, false, true, true>(wa, ws, wl, xa, xs, xl, n_blocks, part, true);
  }
}

// The packed-K scores' tiles: C tmm0-3 (16 rows × 16 int32), A tmm4-5 (16 query rows × one block
// of 32 codes), B tmm6-7 (8 rows of 4 dims × 16 keys).
inline AmxConfig amx_config_k8() {
  AmxConfig c;
  for (int i = 0; i < 4; ++i) c.rows[i] = 16, c.colsb[i] = 64;
  for (int i = 4; i < 6; ++i) c.rows[i] = 16, c.colsb[i] = 32;
  for (int i = 6; i < 8; ++i) c.rows[i] = 8, c.colsb[i] = 64;
  return c;
}

}  // namespace

bool k8_scores_amx(const int8_t* q, const uint16_t* dq, size_t n_rows, const int8_t* k, const uint16_t* dk,
                   size_t head_dim, size_t n, float scale, float* scores, size_t ld) {
  if (head_dim % 64 != 0 || head_dim > 256 || n_rows == 0 || n == 0) return false;
  const size_t nb = head_dim / 32, n_rt = (n_rows + 15) / 16, n_pad = 32 * ((n_rows + 31) / 32);
  // The queries, zero rows to a whole pair of row tiles; each row's block scales; the sums.
  ScratchArray<int8_t> qa{kScratchAttnA};
  ScratchArray<int8_t> kb{kScratchAttnB};
  ScratchArray<float> cs{kScratchAttnC};
  qa.resize(n_pad * head_dim);
  kb.resize(32 * head_dim);
  cs.resize(1024 + 16 * n_rows + n_rows * nb);
  std::memcpy(qa.data(), q, n_rows * head_dim);
  std::memset(qa.data() + n_rows * head_dim, 0, (n_pad - n_rows) * head_dim);
  int32_t* sums = reinterpret_cast<int32_t*>(cs.data());  // 4 tiles of [16][16]
  float* acc = cs.data() + 1024;                            // [n_rows][16]
  float* fq = acc + 16 * n_rows;                            // [n_rows][nb]
  for (size_t i = 0; i < n_rows * nb; ++i) fq[i] = fp16_to_f32(dq[i]);
  const __m512 vscale = _mm512_set1_ps(scale);
  amx_load_config(amx_config_k8());
  for (size_t j = 0; j < n; j += 16) {
    const size_t rk = std::min<size_t>(16, n - j);
    alignas(64) float fk[8][16];  // block b's scale of key j + i (0 past n)
    for (size_t b = 0; b < nb; ++b) {
      for (size_t i = 0; i < 16; ++i) fk[b][i] = i < rk ? fp16_to_f32(dk[(j + i) * nb + b]) : 0.0f;
    }
    // B tiles: 64 dims (two blocks) of the 16 keys a pass, transposed to dword columns: block b's
    // tile at kb + 512·b, row c lane i = dims 4c..4c+3 of key j + i within the block.
    for (size_t z = 0; z < head_dim / 64; ++z) {
      __m512i t[16];
      for (size_t i = 0; i < 16; ++i) {
        t[i] = i < rk ? _mm512_loadu_si512(k + (j + i) * head_dim + 64 * z) : _mm512_setzero_si512();
      }
      transpose16(t);
      for (int c = 0; c < 16; ++c) _mm512_store_si512(kb.data() + 1024 * z + 64 * c, t[c]);
    }
    for (size_t rt = 0; rt < n_rt; rt += 2) {
      const int8_t* q0 = qa.data() + 16 * rt * head_dim;
      const int8_t* q1 = q0 + 16 * head_dim;
      for (size_t b = 0; b < nb; b += 2) {  // blocks b, b + 1: tiles (row tile, block) 0-3
        amx_load<6>(kb.data() + 512 * b, 64);
        amx_load<7>(kb.data() + 512 * (b + 1), 64);
        amx_zero<0>(), amx_zero<1>(), amx_zero<2>(), amx_zero<3>();
        amx_load<4>(q0 + 32 * b, head_dim);
        amx_load<5>(q1 + 32 * b, head_dim);
        amx_dot_i8<0, 4, 6>(), amx_dot_i8<1, 5, 6>();
        amx_load<4>(q0 + 32 * (b + 1), head_dim);
        amx_load<5>(q1 + 32 * (b + 1), head_dim);
        amx_dot_i8<2, 4, 7>(), amx_dot_i8<3, 5, 7>();
        amx_store<0>(sums), amx_store<1>(sums + 256), amx_store<2>(sums + 512), amx_store<3>(sums + 768);
        // The vpdpbusd path's float steps: x = float(Σ) · (dq · dk) a block, the blocks added in
        // order (the first is x itself).
        for (size_t r = 16 * rt; r < std::min(n_rows, 16 * rt + 32); ++r) {
          const size_t t = (r - 16 * rt) / 16, i = r % 16;
          __m512 a = b == 0 ? _mm512_setzero_ps() : _mm512_load_ps(acc + 16 * r);
          for (size_t e = 0; e < 2; ++e) {
            const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(fq[r * nb + b + e]), _mm512_load_ps(fk[b + e]));
            const __m512 x = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(sums + 256 * (2 * e + t) + 16 * i)), dd);
            a = b + e == 0 ? x : _mm512_add_ps(a, x);
          }
          if (b + 2 < nb) {
            _mm512_store_ps(acc + 16 * r, a);
          } else {
            _mm512_mask_storeu_ps(scores + r * ld + j, first_lanes(rk), _mm512_mul_ps(vscale, a));
          }
        }
      }
    }
  }
  amx_release();
  return true;
}

void f16_scores_amx(const float* q, size_t n_rows, const uint16_t* k, size_t head_dim, size_t n, float scale,
                    float* scores, size_t ld) {
  const size_t nc = head_dim / 32, n_rt = (n_rows + 15) / 16;
  ScratchArray<uint16_t> a{kScratchAttnA}, b{kScratchAttnB};
  ScratchArray<float> c{kScratchAttnC};
  const size_t a_lo = 512 * n_rt * nc, b_lo = 1024 * nc;
  a.resize(2 * a_lo);
  b.resize(2 * b_lo);
  c.resize(1024);
  bf16_rows(q, head_dim, n_rows, head_dim, n_rt, nc, a.data(), a_lo);
  const __m512 vscale = _mm512_set1_ps(scale);
  amx_load_config(amx_config());
  for (size_t j = 0; j < n; j += 32) {  // two key tiles a pass
    const int nk = j + 16 < n ? 2 : 1;
    for (int t = 0; t < nk; ++t) bf16_keys(k, head_dim, n, j + 16 * t, b.data() + 512 * nc * t, b_lo);
    for (size_t rt = 0; rt < n_rt; rt += 2) {
      const int nt = rt + 1 < n_rt ? 2 : 1;
      tiles_hl(nk, nt, b.data(), 512 * nc, b_lo, a.data() + 512 * nc * rt, 512 * nc, a_lo, nc, c.data());
      for (int t = 0; t < nt; ++t) {  // C tile (key tile kt, row tile t) at c + 256·(2t + kt)
        for (size_t r = 16 * (rt + t); r < std::min(n_rows, 16 * (rt + t + 1)); ++r) {
          for (int kt = 0; kt < nk; ++kt) {
            const size_t j0 = j + 16 * kt;
            _mm512_mask_storeu_ps(scores + r * ld + j0, first_lanes(n - j0),
                                  _mm512_mul_ps(vscale, _mm512_load_ps(c.data() + 256 * (2 * t + kt) + 16 * (r % 16))));
          }
        }
      }
    }
  }
  amx_release();
}

void f16_accum_v_amx(const float* p, size_t ldp, size_t n_rows, const uint16_t* v, size_t head_dim, size_t n,
                     float* out) {
  const size_t nkc = (n + 31) / 32, n_lt = head_dim / 16, n_rt = (n_rows + 15) / 16;
  ScratchArray<uint16_t> a{kScratchAttnA}, b{kScratchAttnB};
  ScratchArray<float> c{kScratchAttnC};
  const size_t a_lo = 512 * n_rt * nkc, b_lo = 512 * n_lt * nkc;
  a.resize(2 * a_lo);
  b.resize(2 * b_lo);
  c.resize(1024);
  bf16_rows(p, ldp, n_rows, n, n_rt, nkc, a.data(), a_lo);
  bf16_values(v, head_dim, n, nkc, b.data(), b_lo);
  amx_load_config(amx_config());
  for (size_t rt = 0; rt < n_rt; rt += 2) {
    const int nt = rt + 1 < n_rt ? 2 : 1;
    for (size_t lt = 0; lt < n_lt; lt += 2) {
      const int nl = lt + 1 < n_lt ? 2 : 1;
      tiles_hl(nl, nt, b.data() + 512 * nkc * lt, 512 * nkc, b_lo, a.data() + 512 * nkc * rt, 512 * nkc, a_lo, nkc,
               c.data());
      for (int t = 0; t < nt; ++t) {  // C tile (lane tile l, row tile t) at c + 256·(2t + l)
        for (size_t r = 16 * (rt + t); r < std::min(n_rows, 16 * (rt + t + 1)); ++r) {
          for (int l = 0; l < nl; ++l) {
            float* o = out + r * head_dim + 16 * (lt + l);
            _mm512_storeu_ps(o, _mm512_add_ps(_mm512_loadu_ps(o), _mm512_load_ps(c.data() + 256 * (2 * t + l) + 16 * (r % 16))));
          }
        }
      }
    }
  }
  amx_release();
}

}  // namespace alap::kernels::avx512vnni
