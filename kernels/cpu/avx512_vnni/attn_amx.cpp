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

#include "alap/kernels/attn.h"
#include "alap/kernels/fp16.h"
#include "avx512_vnni/amx_avx512.h"
#include "avx512_vnni/transpose_avx512.h"
#include "cpu_features.h"
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

// amx_tiles_n with the values or keys as B tiles and both lo parts (hi·hi, hi·lo, lo·hi), from zero.
inline void tiles_hl(int ng, int nt, const uint16_t* wa, size_t ws, size_t wl, const uint16_t* xa, size_t xs,
                     size_t xl, size_t n_blocks, float* part) {
  amx_tiles_n<false, true, true>(ng, nt, wa, ws, wl, xa, xs, xl, n_blocks, part, true);
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

// ---- The pieces: keys, values and queries as tiles once a call, then slabs of 32 rows ----

// Packed keys [0, n) as int8 B tiles (64 dims of 16 keys a pass, transposed to dword columns): key
// tile t's block b at kb + 16·head_dim·t + 512·b, row c lane i = dims 4c..4c+3 of key 16t + i within
// the block; fk + 16·(nb·t + b): the 16 keys' block b scales (0 past n).
void k8_key_tiles(const int8_t* k, const uint16_t* dk, size_t head_dim, size_t n, int8_t* kb, float* fk) {
  const size_t nb = head_dim / 32;
  for (size_t j = 0, t = 0; j < n; j += 16, ++t) {
    const size_t rk = std::min<size_t>(16, n - j);
    for (size_t b = 0; b < nb; ++b) {
      for (size_t i = 0; i < 16; ++i) fk[16 * (nb * t + b) + i] = i < rk ? fp16_to_f32(dk[(j + i) * nb + b]) : 0.0f;
    }
    for (size_t z = 0; z < head_dim / 64; ++z) {
      __m512i r[16];
      for (size_t i = 0; i < 16; ++i) {
        r[i] = i < rk ? _mm512_loadu_si512(k + (j + i) * head_dim + 64 * z) : _mm512_setzero_si512();
      }
      transpose16(r);
      for (int c = 0; c < 16; ++c) _mm512_store_si512(kb + 16 * head_dim * t + 1024 * z + 64 * c, r[c]);
    }
  }
}

// Packed-K scores of rows [r0, min(n_rows, r0 + 32)) (r0 a multiple of 32; qa holds the packed
// queries [32·⌈n_rows/32⌉][head_dim], zero rows past n_rows, fq their block scales [n_rows][nb]).
// The vpdpbusd path's float steps on TDPBSSD's int32 sums: x = float(Σ)·(dq·dk) a block, the blocks
// added in order (the first is x itself), then the scale. sums: 4 tiles of [16][16] int32; acc:
// [32][16]. The packed-K tile configuration must be loaded.
void k8_scores_slab(const int8_t* qa, const float* fq, size_t n_rows, size_t r0, const int8_t* kb, const float* fk,
                    size_t head_dim, size_t n, float scale, float* scores, size_t ld, int32_t* sums, float* acc) {
  const size_t nb = head_dim / 32, r1 = std::min(n_rows, r0 + 32);
  const int8_t* q0 = qa + r0 * head_dim;
  const int8_t* q1 = q0 + 16 * head_dim;
  const __m512 vscale = _mm512_set1_ps(scale);
  for (size_t j = 0, t = 0; j < n; j += 16, ++t) {
    const size_t rk = std::min<size_t>(16, n - j);
    const int8_t* kt = kb + 16 * head_dim * t;
    const float* ft = fk + 16 * nb * t;
    for (size_t b = 0; b < nb; b += 2) {  // blocks b, b + 1: tiles (row tile, block) 0-3
      amx_load<6>(kt + 512 * b, 64);
      amx_load<7>(kt + 512 * (b + 1), 64);
      amx_zero<0>(), amx_zero<1>(), amx_zero<2>(), amx_zero<3>();
      amx_load<4>(q0 + 32 * b, head_dim);
      amx_load<5>(q1 + 32 * b, head_dim);
      amx_dot_i8<0, 4, 6>(), amx_dot_i8<1, 5, 6>();
      amx_load<4>(q0 + 32 * (b + 1), head_dim);
      amx_load<5>(q1 + 32 * (b + 1), head_dim);
      amx_dot_i8<2, 4, 7>(), amx_dot_i8<3, 5, 7>();
      amx_store<0>(sums), amx_store<1>(sums + 256), amx_store<2>(sums + 512), amx_store<3>(sums + 768);
      const __m512 fk0 = _mm512_load_ps(ft + 16 * b), fk1 = _mm512_load_ps(ft + 16 * (b + 1));
      for (size_t r = r0; r < r1; ++r) {
        const size_t i = r - r0;  // tile i / 16, row i % 16
        const int32_t* s0 = sums + 256 * (i / 16) + 16 * (i % 16);
        const __m512 d0 = _mm512_mul_ps(_mm512_set1_ps(fq[r * nb + b]), fk0);
        const __m512 d1 = _mm512_mul_ps(_mm512_set1_ps(fq[r * nb + b + 1]), fk1);
        const __m512 x0 = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(s0)), d0);
        const __m512 x1 = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(s0 + 512)), d1);
        const __m512 a = _mm512_add_ps(b == 0 ? x0 : _mm512_add_ps(_mm512_load_ps(acc + 16 * i), x0), x1);
        if (b + 2 < nb) {
          _mm512_store_ps(acc + 16 * i, a);
        } else {
          _mm512_mask_storeu_ps(scores + r * ld + j, first_lanes(rk), _mm512_mul_ps(vscale, a));
        }
      }
    }
  }
}

// fp16-K scores of rows [r0, min(n_rows, r0 + 32)) (r0 a multiple of 32): qa the queries' A tiles
// (bf16_rows, row tile t's chunk c at 512·(nc·t + c), lo at qa_lo), kb the keys' B tiles (bf16_keys,
// key tile t at 512·nc·t, lo at kb_lo). c: 4 tiles of [16][16] f32. The bf16 configuration.
void f16_scores_slab(const uint16_t* qa, size_t qa_lo, size_t n_rows, size_t r0, const uint16_t* kb, size_t kb_lo,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld, float* c) {
  const size_t nc = head_dim / 32, rt = r0 / 16;
  const int nt = n_rows > r0 + 16 ? 2 : 1;
  const __m512 vscale = _mm512_set1_ps(scale);
  for (size_t j = 0; j < n; j += 32) {  // two key tiles a pass
    const int nk = j + 16 < n ? 2 : 1;
    tiles_hl(nk, nt, kb + 512 * nc * (j / 16), 512 * nc, kb_lo, qa + 512 * nc * rt, 512 * nc, qa_lo, nc, c);
    for (size_t r = r0; r < std::min(n_rows, r0 + 32); ++r) {  // C tile (key tile kt, row tile t) at c + 256·(2t + kt)
      const size_t i = r - r0;
      for (int kt = 0; kt < nk; ++kt) {
        const size_t j0 = j + 16 * kt;
        _mm512_mask_storeu_ps(scores + r * ld + j0, first_lanes(n - j0),
                              _mm512_mul_ps(vscale, _mm512_load_ps(c + 256 * (2 * (i / 16) + kt) + 16 * (i % 16))));
      }
    }
  }
}

// out[r·head_dim + i] += Σ_j p[r·ldp + j]·v[j][i] for rows [r0, min(n_rows, r0 + 32)) (r0 a
// multiple of 32): vb the values' B tiles (bf16_values, n_chunks chunks, lo at vb_lo), pa scratch
// for the slab's A tiles (2·2·512·n_chunks words), c: 4 tiles of [16][16] f32. The bf16
// configuration.
void f16_accum_v_slab(const float* p, size_t ldp, size_t n_rows, size_t r0, const uint16_t* vb, size_t vb_lo,
                      size_t head_dim, size_t n, uint16_t* pa, float* c, float* out) {
  const size_t nkc = (n + 31) / 32, n_lt = head_dim / 16, rows = std::min<size_t>(32, n_rows - r0);
  const int nt = rows > 16 ? 2 : 1;
  const size_t pa_lo = 1024 * nkc;
  bf16_rows(p + r0 * ldp, ldp, rows, n, nt, nkc, pa, pa_lo);
  for (size_t lt = 0; lt < n_lt; lt += 2) {
    const int nl = lt + 1 < n_lt ? 2 : 1;
    tiles_hl(nl, nt, vb + 512 * nkc * lt, 512 * nkc, vb_lo, pa, 512 * nkc, pa_lo, nkc, c);
    for (size_t i = 0; i < rows; ++i) {  // C tile (lane tile l, row tile t) at c + 256·(2t + l)
      for (int l = 0; l < nl; ++l) {
        float* o = out + (r0 + i) * head_dim + 16 * (lt + l);
        const __m512 sum = _mm512_load_ps(c + 256 * (2 * (i / 16) + l) + 16 * (i % 16));
        _mm512_storeu_ps(o, _mm512_add_ps(_mm512_loadu_ps(o), sum));
      }
    }
  }
}

// The call-wide pieces, in this thread's scratch.
struct PackedQueries {  // k8: the queries padded to whole slabs, their scales, the keys' tiles
  int8_t* qa;
  float* fq;
  int8_t* kb;
  float* fk;
};
PackedQueries packed_tiles(const int8_t* q, const uint16_t* dq, size_t n_rows, const int8_t* k, const uint16_t* dk,
                           size_t head_dim, size_t n) {
  const size_t nb = head_dim / 32, n_pad = 32 * ((n_rows + 31) / 32), nkt = (n + 15) / 16;
  ScratchArray<int8_t> qa{kScratchAttnQ}, kb{kScratchAttnK};
  ScratchArray<float> f{kScratchAttnScales};
  qa.resize(n_pad * head_dim);
  kb.resize(16 * head_dim * nkt);
  f.resize(16 * nb * nkt + n_rows * nb);  // the keys' first: their rows of 16 are loaded aligned
  float* fk = f.data();
  float* fq = fk + 16 * nb * nkt;
  std::memcpy(qa.data(), q, n_rows * head_dim);
  std::memset(qa.data() + n_rows * head_dim, 0, (n_pad - n_rows) * head_dim);
  for (size_t i = 0; i < n_rows * nb; ++i) fq[i] = fp16_to_f32(dq[i]);
  k8_key_tiles(k, dk, head_dim, n, kb.data(), fk);
  return {qa.data(), fq, kb.data(), fk};
}
struct F16Tiles {  // fp16 K: the queries' A tiles and the keys' B tiles, and where their lo parts start
  uint16_t* qa;
  size_t qa_lo;
  uint16_t* kb;
  size_t kb_lo;
};
F16Tiles f16_tiles(const float* q, size_t n_rows, const uint16_t* k, size_t head_dim, size_t n) {
  const size_t nc = head_dim / 32, n_rt = (n_rows + 15) / 16, nkt = (n + 15) / 16;
  ScratchArray<uint16_t> qa{kScratchAttnQ}, kb{kScratchAttnK};
  const size_t qa_lo = 512 * nc * n_rt, kb_lo = 512 * nc * nkt;
  qa.resize(2 * qa_lo);
  kb.resize(2 * kb_lo);
  bf16_rows(q, head_dim, n_rows, head_dim, n_rt, nc, qa.data(), qa_lo);
  for (size_t t = 0; t < nkt; ++t) bf16_keys(k, head_dim, n, 16 * t, kb.data() + 512 * nc * t, kb_lo);
  return {qa.data(), qa_lo, kb.data(), kb_lo};
}
struct ValueTiles {  // fp16 V as B tiles, and slab scratch for the probabilities' A tiles
  uint16_t* vb;
  size_t vb_lo;
  uint16_t* pa;
};
ValueTiles value_tiles(const uint16_t* v, size_t head_dim, size_t n) {
  const size_t nkc = (n + 31) / 32;
  ScratchArray<uint16_t> vb{kScratchAttnV}, pa{kScratchAttnP};
  const size_t vb_lo = 512 * (head_dim / 16) * nkc;
  vb.resize(2 * vb_lo);
  pa.resize(2048 * nkc);
  bf16_values(v, head_dim, n, nkc, vb.data(), vb_lo);
  return {vb.data(), vb_lo, pa.data()};
}
float* sums_scratch() {  // 4 tiles of sums and a slab's [32][16] block accumulators
  ScratchArray<float> c{kScratchAttnC};
  c.resize(1024 + 512);
  return c.data();
}

// The packed-K tiles: AMX-INT8, and 64-byte passes of the head.
bool packed_k_tiles(size_t head_dim) { return cpu_features().amx_int8 && head_dim % 64 == 0 && head_dim <= 256; }

}  // namespace

bool k8_scores_amx(const int8_t* q, const uint16_t* dq, size_t n_rows, const int8_t* k, const uint16_t* dk,
                   size_t head_dim, size_t n, float scale, float* scores, size_t ld) {
  if (!packed_k_tiles(head_dim) || n_rows == 0 || n == 0) return false;
  const PackedQueries t = packed_tiles(q, dq, n_rows, k, dk, head_dim, n);
  float* c = sums_scratch();
  amx_load_config(amx_config_k8());
  for (size_t r0 = 0; r0 < n_rows; r0 += 32) {
    k8_scores_slab(t.qa, t.fq, n_rows, r0, t.kb, t.fk, head_dim, n, scale, scores, ld, reinterpret_cast<int32_t*>(c),
                   c + 1024);
  }
  amx_release();
  return true;
}

void f16_scores_amx(const float* q, size_t n_rows, const uint16_t* k, size_t head_dim, size_t n, float scale,
                    float* scores, size_t ld) {
  const F16Tiles t = f16_tiles(q, n_rows, k, head_dim, n);
  float* c = sums_scratch();
  amx_load_config(amx_config());
  for (size_t r0 = 0; r0 < n_rows; r0 += 32) {
    f16_scores_slab(t.qa, t.qa_lo, n_rows, r0, t.kb, t.kb_lo, head_dim, n, scale, scores, ld, c);
  }
  amx_release();
}

void f16_accum_v_amx(const float* p, size_t ldp, size_t n_rows, const uint16_t* v, size_t head_dim, size_t n,
                     float* out) {
  const ValueTiles t = value_tiles(v, head_dim, n);
  float* c = sums_scratch();
  amx_load_config(amx_config());
  for (size_t r0 = 0; r0 < n_rows; r0 += 32) {
    f16_accum_v_slab(p, ldp, n_rows, r0, t.vb, t.vb_lo, head_dim, n, t.pa, c, out);
  }
  amx_release();
}

bool attn_block_amx(const AttnBlock& b, size_t n_rows, size_t n, float scale, float* scores, size_t ld, float* m,
                    float* l, float* out) {
  const bool kp = b.kq != nullptr;
  if (b.vq != nullptr || b.head_dim_v % 16 != 0 || n_rows == 0 || n == 0) return false;
  if (kp ? !packed_k_tiles(b.head_dim_k) : b.head_dim_k % 32 != 0) return false;
  // Keys, values and queries as tiles once; then per slab of 32 rows its scores, each row's
  // softmax and the slab's V sum, while the slab's scores are in L1.
  PackedQueries pk{};
  F16Tiles fk{};
  if (kp) {
    pk = packed_tiles(b.qq, b.qd, n_rows, b.kq, b.kd, b.head_dim_k, n);
  } else {
    fk = f16_tiles(b.q, n_rows, b.k, b.head_dim_k, n);
  }
  const ValueTiles vt = value_tiles(b.v, b.head_dim_v, n);
  float* c = sums_scratch();
  const AmxConfig bf16 = amx_config(), k8 = amx_config_k8();
  std::fill(out, out + n_rows * b.head_dim_v, 0.0f);
  for (size_t r0 = 0; r0 < n_rows; r0 += 32) {
    if (kp) {
      amx_load_config(k8);
      k8_scores_slab(pk.qa, pk.fq, n_rows, r0, pk.kb, pk.fk, b.head_dim_k, n, scale, scores, ld,
                     reinterpret_cast<int32_t*>(c), c + 1024);
      amx_load_config(bf16);
    } else {
      if (r0 == 0) amx_load_config(bf16);
      f16_scores_slab(fk.qa, fk.qa_lo, n_rows, r0, fk.kb, fk.kb_lo, b.head_dim_k, n, scale, scores, ld, c);
    }
    softmax_partial_rows(scores + r0 * ld, ld, std::min<size_t>(32, n_rows - r0), n, m + r0, l + r0);
    f16_accum_v_slab(scores, ld, n_rows, r0, vt.vb, vt.vb_lo, b.head_dim_v, n, vt.pa, c, out);
  }
  amx_release();
  return true;
}

}  // namespace alap::kernels::avx512vnni
