// AVX-512 VNNI products on row-interleaved weights (packed_layout.h): one weight zmm holds the
// same quad of 16 rows; vpdpbusd takes the token's 4 activation bytes broadcast from memory, so
// 16 rows × 1 token per instruction, then one conversion + scale + FMA per (16 rows, token, block)
// and no horizontal sums. Tiles of up to 8 tokens reuse each weight zmm (Q5_K, Q6_K, Q3_K, Q2_K, and
// Q4_K's tiles of two row groups: the group's codes unpacked to bytes once per column pass, not once
// per tile). Not the unpacked paths (vnni/vnni_kernels.inc). Decode (1 token) runs the same per-lane
// f32 steps as every tile size, and the int32 sums are exact whatever their order, so all batch
// sizes give the same bits. On CPUs with AMX, prefill from 32 tokens runs on the tile unit in bf16
// instead (amx_k, below): not these bits.
// GCC 12's avx512fintrin.h converts from _mm512_undefined_*(), which -Wmaybe-uninitialized reports
// once inlined at -O3: a false positive in the system header (as in matmul_vnni.cpp).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "avx512_vnni/amx_avx512.h"
#include "avx512_vnni/exp_avx512.h"
#include "avx512_vnni/transpose_avx512.h"
#include "cpu_variants.h"
#include "packed_layout.h"
#include "thread_scratch.h"

namespace alap::kernels::avx512vnni {

namespace {

constexpr int kTMax = 8;  // tokens per tile
constexpr size_t kG = packed::kRows;
constexpr size_t kPass = 32;  // blocks of 32 per column pass of the unpacked one-group tiles (a multiple of 8)
// The pair tiles' unpacked column pass: a whole row of each group up to this many blocks (a multiple of
// 8; 8192 columns: 2 x 256 blocks of Q4_K's 640 unpacked bytes, 320 KiB, in L2). Passes of 16 blocks,
// which stayed in L1, took 1.03-1.06x the time of whole rows on 2048- and 8192-column Q4_K, Q4_0 and
// Q5_0 products, 1.04x on 896 x 896 Q5_0; and only one pass can stream its outputs (stream_outputs()):
// 4864 x 896 Q4_0 and Q5_0 1.13-1.15x (docs/bench/cpu.md, session 61).
constexpr size_t kPairPassMax = 256;

inline int32_t ld32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
// acc + w · (the 4 bytes at x broadcast to every lane): one vpdpbusd with an embedded broadcast
// ({1to16}). GCC 12 emits a vpbroadcastd and a vpdpbusd for the intrinsics: two instructions for
// one (Q4_K/Q5_K prefill measured 5-7% faster with the one).
inline __m512i dpbusd_bcst(__m512i acc, __m512i w, const int8_t* x) {
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const int32_t*>(x)));
  return acc;
}
// The same product with the token's 4 bytes broadcast to a register first (bcast32), for the pair
// tiles below, where one broadcast feeds the dots of two row groups.
inline __m512i bcast32(const int8_t* x) {
  __m512i b;
  __asm__("vpbroadcastd %1, %0" : "=v"(b) : "m"(*reinterpret_cast<const int32_t*>(x)));
  return b;
}
inline __m512i dpbusd_reg(__m512i acc, __m512i w, __m512i b) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(w), "v"(b));
  return acc;
}
inline __m512i load64(const uint8_t* p) { return _mm512_loadu_si512(p); }
inline __m512 f16x16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// One token (decode) streams the matrix once, front to back (the layout is one stream): each
// unit of blocks asks for its kLines lines kAhead bytes further on (prefetcht0; the super-block
// types prefetcht1, below), as the unpacked decode does, spread over the unit's kParts steps (part
// `part` asks for its share). 8192: best or level for Q8_0 and Q6_K among 0, 2048, 4096, 12288 and
// 16384 bytes, and in those runs level with prefetcht1 (Q8_0 again in session 22 on Zen 5, where
// the 256-bit kernels gain from it; Q6_K gained in session 50's slower memory state) or one
// prefetch per two lines. Spread, not all at the unit's start: a burst of 53
// (Q6_K) held Q6_K decode at 0.92x of the unpacked path, spread it reads 1.07x (cold, one thread,
// packed_bench; docs/bench/cpu.md).
// Q8_0, Q4_0 and Q4_1 also have a pass without it (kReadAhead false), run where light_read_ahead()
// (quant.h) says: on AMD Zen. Random Llama-3.2-1B, token time without/with, tokens alternating in
// one run, 1 and 2 threads: Zen 5 Q8_0 0.78-0.95, the Q4_0 file (its output is Q8_0) 0.90-0.94,
// Qwen2.5-0.5B Q4_1 (output Q8_0 without on both sides) 0.91-0.99; the H200 host's Xeon, 1 and 4
// threads, Q8_0 0.97-1.03, the Q4_0 file 1.20-1.27. Q5_0 and Q5_1 measured level on Zen 5 (Q5_0
// 1.16-1.19 on the Xeon), the K-quants 1.1-1.8 on Zen 5: they keep it.
// docs/bench/cpu.md, "Decode read-ahead by vendor (session 25)".
// kLocality: 3 = prefetcht0 (into L1), 2 = prefetcht1 (into L2). The super-block types (Q2_K-Q6_K,
// IQ4_XS) read ahead into L2 (kSuperLocality). Cold, on one Zen 5 core whose memory read 15-16 GB/s
// a thread: Q6_K at 85-89% of the read probe instead of 61-76%, Q3_K 80-82% instead of 60-74%,
// Q4_K 79-82% instead of 73-80%, Q2_K, Q5_K and IQ4_XS 2-8% higher, two threads alike; random
// Llama-3.2-1B Q4_K decode 0.84-0.87x the time (1 and 2 threads), Q3_K 0.72-0.78x; an H100 host's
// Xeon, Llama-3.2-1B Q4_K, 1 and 4 threads: 0.89-1.00x. The blocks of 32 read level to 3% slower
// with it and keep prefetcht0. docs/bench/cpu.md, "Read-ahead into L2 for the super-block types
// (session 50)".
constexpr size_t kAhead = 8192;
constexpr int kSuperLocality = 2;
template <int T, int kLines, int kParts, int kLocality = 3>
inline void prefetch_part(const uint8_t* p, int part) {
  if constexpr (T == 1) {
    for (int i = kLines * part / kParts; i < kLines * (part + 1) / kParts; ++i) {
      __builtin_prefetch(p + kAhead + 64 * i, 0, kLocality);
    }
  }
}

// The activations of one tile of T tokens, interleaved so that one pointer walks them all:
// x: block b, quad j, token t at int32 index (8b + j)·T + t; dx, ofs (the int32 that cancels the
// weights' unsigned offset) and xs (dx·s, for the Q4_K mins): block b, token t at b·T + t (Q6_K's
// ofs: half block n = 2b + h at n·T + t; Q2_K's ofs: the block's two half-block sums as s16, at
// b·T + t). One token is the caller's own arrays.
struct TileActs {
  const int8_t* x;
  const float* dx;
  const int32_t* ofs;
  const float* xs;
  size_t nb;
  // The pair tiles (K::run2, Unpacked::run2): bytes [ahead, ahead + ahead_bytes) of the next
  // groups' weights (the packed codes; of an unpacked pass, its columns), asked for into L1 a line a
  // block (read_ahead), none where null.
  const uint8_t* ahead = nullptr;
  size_t ahead_bytes = 0;
};

// Block b's lines of the tile's read-ahead: line b, b + nb, … of the range. Spread over the tile's
// blocks, not asked for in a burst before it: the burst's prefetches waited for fill buffers (8% of
// a Q8_0 2048 x 2048 product's samples on the Ice Lake Xeon, weights in L3).
inline void read_ahead(const TileActs& a, size_t b) {
  for (size_t l = 64 * b; l < a.ahead_bytes; l += 64 * a.nb) {
    _mm_prefetch(reinterpret_cast<const char*>(a.ahead + l), _MM_HINT_T0);
  }
}

// Share j of m of the bytes [p, p + bytes) as a's read-ahead.
inline TileActs with_share(TileActs a, const uint8_t* p, size_t bytes, size_t j, size_t m) {
  const size_t lo = j * bytes / m, hi = (j + 1) * bytes / m;
  a.ahead = p + lo, a.ahead_bytes = hi - lo;
  return a;
}

// The int32 sums of the dot steps start at kMagic (the bits of 1.5·2^23) plus their offset: their
// bits are then the float 1.5·2^23 + sum, exactly (|sum| < 2^22 for every type here: at most
// 32·128·127), and scale_step takes the sum's float from them inside its first FMA. Every type's sums
// start there (block_terms puts it in their offsets), the blocks of 32 too, which had converted
// theirs with vcvtdq2ps while the step was a subtraction (Q5_0 -3% then).
constexpr int32_t kMagic = 0x4B400000;

// kMagic's float, times dw: exact wherever a step takes it, because dw is an fp16 scale, or one
// times an integer of at most 8 bits (a K-quant's d·scale), so it has at most 19 significant bits.
inline __m512 magic_times(__m512 dw) { return _mm512_mul_ps(dw, _mm512_set1_ps(12582912.0f)); }

// acc[t] += (float(p[t]) · dw) · dx[t] for a block, each product rounded: the one f32 step of
// every type. The sums start at kMagic, so the first product is one fused op: the FMA of the bits'
// float (1.5·2^23 + sum) times dw less 1.5·2^23·dw (exact: magic_times) rounds sum · dw once, as a
// conversion and a multiply would. So a token's step takes two dot-port ops, not three; mdw is made
// once for every token. Ice Lake: the kernel's Q8_0 products 1.03x, the other types level; a
// microbenchmark of Q8_0's pair block 1.00-1.06x (docs/bench/cpu.md, session 58).
template <int T>
inline void scale_step(__m512 (&acc)[T], const __m512i (&p)[T], __m512 dw, const float* dx) {
  const __m512 mdw = magic_times(dw);
  for (int t = 0; t < T; ++t) {
    acc[t] = _mm512_fmadd_ps(_mm512_fmsub_ps(_mm512_castsi512_ps(p[t]), dw, mdw), _mm512_set1_ps(dx[t]), acc[t]);
  }
}

// p[t] += w · the quad of token t at x (broadcast); the one-token case keeps two chains on
// alternate quads (int32 sums are exact in any order).
template <int T>
inline void dot_step(__m512i (&p)[T], __m512i (&p2)[T], bool second, __m512i w, const int8_t* x) {
  for (int t = 0; t < T; ++t) {
    if (T == 1 && second) {
      p2[t] = dpbusd_bcst(p2[t], w, x + 4 * t);
    } else {
      p[t] = dpbusd_bcst(p[t], w, x + 4 * t);
    }
  }
}

// The int32 sums' start: ofs[t] where given (kMagic plus the type's offset: block_terms), else
// kMagic. So each start is one broadcast load, not a scalar add and a move to the vector unit (two
// dot-port ops on the Ice Lake Xeon).
template <int T>
inline void start(__m512i (&p)[T], __m512i (&p2)[T], const int32_t* ofs) {
  for (int t = 0; t < T; ++t) {
    p[t] = _mm512_set1_epi32(ofs ? ofs[t] : kMagic);
    p2[t] = _mm512_setzero_si512();
  }
}

template <int T>
inline void join(__m512i (&p)[T], __m512i (&p2)[T]) {
  if constexpr (T == 1) p[0] = _mm512_add_epi32(p[0], p2[0]);
}

// The pair tiles' dot step (K::run2): the quad of token t at x broadcast once, for group 0's
// codes w0 and group 1's w1.
template <int T>
inline void dot_step2(__m512i (&p)[2][T], __m512i w0, __m512i w1, const int8_t* x) {
  for (int t = 0; t < T; ++t) {
    const __m512i xb = bcast32(x + 4 * t);
    p[0][t] = dpbusd_reg(p[0][t], w0, xb);
    p[1][t] = dpbusd_reg(p[1][t], w1, xb);
  }
}

// Quad j of block b of the tile's tokens.
template <int T>
inline const int8_t* quad(const TileActs& a, size_t b, size_t j) {
  return a.x + 4 * ((8 * b + j) * T);
}

// Q2_K's mins of one block: acc[t] −= float(m0·S0 + m1·S1) · (dmin · dx[t]), one vpmaddwd a token:
// mp holds each row's two 4-bit mins as s16 (half 0 low), sp[t] the token's half-block sums S0, S1
// of its int8 activations as s16 (|S| <= 16·128 = 2048; the int32 sum is exact).
template <int T>
inline void min_step(__m512 (&acc)[T], __m512i mp, __m512 dm, const int32_t* sp, const float* dx) {
  for (int t = 0; t < T; ++t) {
    const __m512 ms = _mm512_cvtepi32_ps(_mm512_madd_epi16(mp, _mm512_set1_epi32(sp[t])));
    acc[t] = _mm512_fnmadd_ps(ms, _mm512_mul_ps(dm, _mm512_set1_ps(dx[t])), acc[t]);
  }
}

// One half block (16 values, 4 quads) of the types with a scale per 16 values (Q6_K, Q3_K,
// Q2_K, and their unpacked prefill form): the dot steps of its 4 code vectors (code(z): quad z's)
// from the start ofs (null: none), then its f32 scale step (scale(): d·scale of the 16 rows).
template <int T, class Code, class Scale>
__attribute__((always_inline)) inline void half_block(__m512 (&acc)[T], const TileActs& a, size_t b, int h,
                                                      const int32_t* ofs, Code code, Scale scale) {
  __m512i p[T], p2[T];
  start<T>(p, p2, ofs);
#pragma GCC unroll 4
  for (int z = 0; z < 4; ++z) {
    dot_step<T>(p, p2, z & 1, code(z), quad<T>(a, b, 4 * static_cast<size_t>(h) + static_cast<size_t>(z)));
  }
  join<T>(p, p2);
  scale_step<T>(acc, p, scale(), a.dx + b * T);
}

// Prefill of Q5_K, Q6_K, Q3_K and Q2_K (and the other types' pair tiles but Q8_0's) on a group's
// blocks unpacked once per column pass (the types' unpack()), not once per tile: block b at kBytes·b
// holds its 8 code vectors (vector k pairs with quad k of the activations) and its f32 scale
// vectors, so a tile's inner loop is loads and vpdpbusd (Q5_K: its fifth-bit merge, Q6_K: its
// top-bit shifts were ~4 ALU ops a weight vector in every tile). The per-(token, block) f32 steps
// are those of the types' run(), in the same order, on the same f32 scale values, so the bits match
// the one-token path.
// Q2_K (kHalfMins): d·scale of each half block, then the rows' (min of half 0 | min of half 1 << 16)
// pairs and dmin, for the block's min step (min_step). The pair tiles of Q4_0, Q5_0, IQ4_NL and
// IQ4_XS (kPlain): their codes (Q4_0 q + 8, Q5_0 q + 16, the IQ4s' table entries K + 128; the offset
// in ofs) and the block's scale, one f32 vector; their one-group tiles read the packed codes, so
// kPlain has run2 only. Q4_1 and Q5_1 take kMins with their min negated.
enum Form { kMins, kHalves, kHalfMins, kPlain };  // Q5_K: d·scale, dmin·min; Q6_K, Q3_K: d·scale of each half
template <Form F>
struct Unpacked {
  static constexpr size_t kBytes = F == kHalfMins ? 512 + 256 : F == kPlain ? 512 + 64 : 512 + 128;
  template <int T>
  static void run(const uint8_t* s, const TileActs& a, __m512 (&acc)[T]) {
    static_assert(F != kPlain, "kPlain is read by the pair tiles only");
    for (size_t b = 0; b < a.nb; ++b, s += kBytes) {
      if constexpr (F == kMins) {
        const __m512 mv = _mm512_loadu_ps(s + 576);
        for (int t = 0; t < T; ++t) acc[t] = _mm512_fnmadd_ps(mv, _mm512_set1_ps(a.xs[b * T + t]), acc[t]);
        __m512i p[T], p2[T];
        start<T>(p, p2, nullptr);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) dot_step<T>(p, p2, k & 1, load64(s + 64 * k), quad<T>(a, b, k));
        join<T>(p, p2);
        scale_step<T>(acc, p, _mm512_loadu_ps(s + 512), a.dx + b * T);
      } else {
        if constexpr (F == kHalfMins) {
          min_step<T>(acc, load64(s + 640), _mm512_loadu_ps(s + 704), a.ofs + b * T, a.dx + b * T);
        }
        for (int h = 0; h < 2; ++h) {
          half_block<T>(
              acc, a, b, h, F == kHalfMins ? nullptr : a.ofs + (2 * b + h) * T,
              [&](int z) { return load64(s + 64 * (4 * h + z)); }, [&] { return _mm512_loadu_ps(s + 512 + 64 * h); });
        }
      }
    }
  }
  // Two groups' passes (s[0], s[1]) over the same T tokens (pair_tile): each token's quad broadcast
  // once for both groups' dots; each group's f32 steps are run()'s, in its order: the same bits.
  template <int T>
  static void run2(const uint8_t* const (&s)[2], const TileActs& a, __m512 (&acc)[2][T]) {
#pragma GCC unroll 1
    for (size_t b = 0; b < a.nb; ++b) {
      const uint8_t* u[2] = {s[0] + kBytes * b, s[1] + kBytes * b};
      read_ahead(a, b);
      __m512i p[2][T], unused[T];
      if constexpr (F == kPlain || F == kMins) {  // one scale a block (kMins: its min step first)
        for (int r = 0; r < 2; ++r) {
          if constexpr (F == kMins) {
            const __m512 mv = _mm512_loadu_ps(u[r] + 576);
            for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fnmadd_ps(mv, _mm512_set1_ps(a.xs[b * T + t]), acc[r][t]);
          }
          start<T>(p[r], unused, F == kPlain ? a.ofs + b * T : nullptr);
        }
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) dot_step2<T>(p, load64(u[0] + 64 * k), load64(u[1] + 64 * k), quad<T>(a, b, k));
        for (int r = 0; r < 2; ++r) scale_step<T>(acc[r], p[r], _mm512_loadu_ps(u[r] + 512), a.dx + b * T);
      } else {
        if constexpr (F == kHalfMins) {
          for (int r = 0; r < 2; ++r) {
            min_step<T>(acc[r], load64(u[r] + 640), _mm512_loadu_ps(u[r] + 704), a.ofs + b * T, a.dx + b * T);
          }
        }
        for (int h = 0; h < 2; ++h) {
          for (int r = 0; r < 2; ++r) start<T>(p[r], unused, F == kHalfMins ? nullptr : a.ofs + (2 * b + h) * T);
#pragma GCC unroll 4
          for (int z = 0; z < 4; ++z) {
            const int k = 4 * h + z;
            dot_step2<T>(p, load64(u[0] + 64 * k), load64(u[1] + 64 * k), quad<T>(a, b, static_cast<size_t>(k)));
          }
          for (int r = 0; r < 2; ++r) scale_step<T>(acc[r], p[r], _mm512_loadu_ps(u[r] + 512 + 64 * h), a.dx + b * T);
        }
      }
    }
  }
};

// The AMX prefill (amx_k below) reads a column pass of a group unpacked into blocks of kAmxBytes:
// 8 vectors of signed int8 codes q (vector k = quad k of the 16 rows, lane r = row r; the first
// four vectors are half block 0), then f32 vectors at byte 512 on, from which a weight is S·q + O:
//   kAmxPlain    (Q8_0, Q4_0, Q5_0, IQ4_NL, IQ4_XS): the block's scale S of each row
//   kAmxMinAdd   (Q4_1, Q5_1): S, then the min m (O = m)
//   kAmxMinSub   (Q4_K, Q5_K): Unpacked<kMins>'s bytes: S = d·scale, dmin·min (O = −dmin·min)
//   kAmxHalves   (Q6_K, Q3_K): Unpacked<kHalves>'s bytes (S of each half block), the codes less the
//                types' offset
//   kAmxHalfMins (Q2_K): Unpacked<kHalfMins>'s bytes (O = −dmin·min of each half block)
// The blocks-of-32 types and IQ4_XS write them with amx_unpack(); the types with an unpacked VNNI
// prefill form take their unpack() (amx_pass, below).
enum AmxForm { kAmxPlain, kAmxMinAdd, kAmxMinSub, kAmxHalves, kAmxHalfMins };
constexpr size_t amx_bytes(AmxForm f) { return f == kAmxPlain ? 576 : f == kAmxHalfMins ? 768 : 640; }
constexpr bool amx_halves(AmxForm f) { return f == kAmxHalves || f == kAmxHalfMins; }

// Unpacked<kHalves> codes u of every block of [b0, b1) less off (Q6_K 32, Q3_K 4): signed codes.
inline void amx_signed_codes(uint8_t* s, size_t n_blocks, int off) {
  for (size_t b = 0; b < n_blocks; ++b, s += amx_bytes(kAmxHalves)) {
    for (int k = 0; k < 8; ++k) {
      const __m512i u = _mm512_load_si512(s + 64 * k);
      _mm512_store_si512(s + 64 * k, _mm512_sub_epi8(u, _mm512_set1_epi8(static_cast<char>(off))));
    }
  }
}

// kReadAhead false: the one-token pass without its read-ahead (light_read_ahead(), quant.h).
template <bool kReadAhead = true>
struct Q8_0 {
  static constexpr bool kDirect = true;  // prefill reads the packed codes as they are
  static constexpr int kOfs = 1;       // ofs per block
  static constexpr int kOfsShift = 7;  // stored q + 128: ofs = −128·s
  static constexpr AmxForm kAmx = kAmxPlain;
  static void amx_unpack(const uint8_t* g, size_t b0, size_t b1, size_t nb, uint8_t* s) {
    for (size_t b = b0; b < b1; ++b, s += amx_bytes(kAmx)) {
      const packed::BlockAt at = packed::block_at(b, nb, 0, 512);
      for (int j = 0; j < 8; ++j) {
        _mm512_store_si512(s + 64 * j, _mm512_xor_si512(load64(g + at.quants + 64 * j), _mm512_set1_epi8(-128)));
      }
      _mm512_store_ps(s + 512, f16x16(g + at.scales));
    }
  }
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    size_t b0 = 0;
    if constexpr (T == 1) {  // whole pairs: four chains, the f32 steps of the loop below in order
      constexpr size_t kQuants0 = packed::in_unit(0, 2, 0, 512).quants;  // the pair's 16 quant vectors
      for (; b0 + 2 <= a.nb; b0 += 2) {
        const uint8_t* u = g + packed::pair_bytes(0, 512) * (b0 / 2);
        __m512i p[4];
        p[0] = _mm512_set1_epi32(a.ofs[b0]), p[1] = _mm512_setzero_si512();
        p[2] = _mm512_set1_epi32(a.ofs[b0 + 1]), p[3] = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) {
          if constexpr (kReadAhead) prefetch_part<T, 17, 16>(u, j);
          p[(j / 8) * 2 + (j & 1)] = dpbusd_bcst(p[(j / 8) * 2 + (j & 1)], load64(u + kQuants0 + 64 * j),
                                                 a.x + 4 * (8 * b0 + static_cast<size_t>(j)));
        }
        for (int k = 0; k < 2; ++k) {
          const __m512i pk[1] = {_mm512_add_epi32(p[2 * k], p[2 * k + 1])};
          scale_step<1>(acc, pk, f16x16(u + packed::in_unit(static_cast<size_t>(k), 2, 0, 512).scales),
                        a.dx + b0 + static_cast<size_t>(k));
        }
      }
    }
    for (size_t b = b0; b < a.nb; ++b) {
      const packed::BlockAt at = packed::block_at(b, a.nb, 0, 512);
      __m512i p[T], p2[T];
      start<T>(p, p2, a.ofs + b * T);
      const uint8_t* wb = g + at.quants;
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        // the pair's 1088 bytes over its 16 quad vectors
        if constexpr (kReadAhead) {
          prefetch_part<T, 17, 16>(g + at.scales - 32 * (b % 2), 8 * static_cast<int>(b % 2) + j);
        }
        dot_step<T>(p, p2, j & 1, load64(wb + 64 * j), quad<T>(a, b, j));
      }
      join<T>(p, p2);
      scale_step<T>(acc, p, f16x16(g + at.scales), a.dx + b * T);
    }
  }
  // Two row groups over the same tokens (pair_tile), each group's steps run()'s: the same bits.
  static constexpr bool kPairTiles = true;
  static constexpr size_t kPairMinBlocks = 16;  // pair_min_blocks()
  template <int T>
  static void run2(const uint8_t* const (&g)[2], const TileActs& a, __m512 (&acc)[2][T]) {
#pragma GCC unroll 1
    for (size_t b = 0; b < a.nb; ++b) {
      read_ahead(a, b);
      const packed::BlockAt at = packed::block_at(b, a.nb, 0, 512);
      __m512i p[2][T], unused[T];
      start<T>(p[0], unused, a.ofs + b * T);
      start<T>(p[1], unused, a.ofs + b * T);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        dot_step2<T>(p, load64(g[0] + at.quants + 64 * j), load64(g[1] + at.quants + 64 * j), quad<T>(a, b, j));
      }
      for (int r = 0; r < 2; ++r) scale_step<T>(acc[r], p[r], f16x16(g[r] + at.scales), a.dx + b * T);
    }
  }
};

// Q4_0 / Q5_0 (kMin false: codes q + 8 or q + 16, offset from ofs) and Q4_1 / Q5_1 (kMin true:
// codes q, value d·q + m, so acc += m · dx·s a block, before its scale step).
template <bool kFive, bool kMin, bool kReadAhead = true>
struct Q45_01 {
  static constexpr bool kDirect = true;
  static constexpr int kOfs = kMin ? 0 : 1;
  static constexpr int kOfsShift = kFive ? 4 : 3;  // codes are q + 16 (Q5_0) or q + 8 (Q4_0)
  static constexpr size_t kMins = packed::q45_mins(kMin), kExtra = packed::q45_extra(kFive, kMin);
  static constexpr size_t kUnit = packed::pair_bytes(kExtra, 256);  // a pair of blocks (packed_layout.h)
  static constexpr int kPairLines = static_cast<int>(kUnit / 64);  // 9, 10, 11, 12
  // The codes of nibble vector k of a block (raw): quads k (low nibbles) and 4 + k (high), with
  // the fifth bits from hb merged for Q5_0 / Q5_1.
  __attribute__((always_inline)) static void codes(__m512i raw, __m512i hb, int k, __m512i& lo, __m512i& hi) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
    lo = _mm512_and_si512(raw, m4);
    hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
    if constexpr (kFive) {
      const __mmask64 l5 = _mm512_test_epi8_mask(hb, _mm512_set1_epi8(static_cast<char>(1 << (2 * k))));
      const __mmask64 h5 = _mm512_test_epi8_mask(hb, _mm512_set1_epi8(static_cast<char>(2 << (2 * k))));
      lo = _mm512_mask_add_epi8(lo, l5, lo, b4);
      hi = _mm512_mask_add_epi8(hi, h5, hi, b4);
    }
  }
  static constexpr AmxForm kAmx = kMin ? kAmxMinAdd : kAmxPlain;
  static constexpr Form kForm = kMin ? Form::kMins : Form::kPlain;  // (kMins here is a byte count)
  // Blocks [b0, b1): their codes as block() makes them, the scale at byte 512 and the min at 576.
  // For the AMX tiles the codes less their offset where there is no min; for the pair tiles'
  // Unpacked<kForm> (kVnni) the codes as they are and the min negated (kMins subtracts it: the same
  // FMA, bit for bit).
  template <bool kVnni>
  static void unpack_to(const uint8_t* g, size_t b0, size_t b1, size_t nb, uint8_t* s) {
    static_assert(amx_bytes(kAmx) == Unpacked<kForm>::kBytes);
    const __m512i off = _mm512_set1_epi8(kMin || kVnni ? 0 : (kFive ? 16 : 8));
    for (size_t b = b0; b < b1; ++b, s += amx_bytes(kAmx)) {
      const packed::BlockAt at = packed::block_at(b, nb, kExtra, 256);
      __m512i hb = _mm512_setzero_si512();
      if constexpr (kFive) hb = load64(g + at.extra + kMins);
      for (int k = 0; k < 4; ++k) {
        __m512i lo, hi;
        codes(load64(g + at.quants + 64 * k), hb, k, lo, hi);
        _mm512_store_si512(s + 64 * k, _mm512_sub_epi8(lo, off));
        _mm512_store_si512(s + 64 * (4 + k), _mm512_sub_epi8(hi, off));
      }
      _mm512_store_ps(s + 512, f16x16(g + at.scales));
      if constexpr (kMin) {
        const __m512 m = f16x16(g + at.extra);
        _mm512_store_ps(s + 576, kVnni ? _mm512_xor_ps(m, _mm512_set1_ps(-0.0f)) : m);
      }
    }
  }
  static void amx_unpack(const uint8_t* g, size_t b0, size_t b1, size_t nb, uint8_t* s) {
    unpack_to<false>(g, b0, b1, nb, s);
  }
  static void unpack(const uint8_t* g, size_t b0, size_t b1, size_t nb, uint8_t* s) {
    unpack_to<true>(g, b0, b1, nb, s);
  }
  // decode_k runs one token over two groups at a time (one_token<2>).
  static constexpr int kStreams = 2;
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    if constexpr (T == 1) {
      __m512 one[1][1] = {{acc[0]}};
      one_token<1>({g}, a, one);
      acc[0] = one[0][0];
    } else {
      for (size_t b = 0; b < a.nb; ++b) block_at<T>(g, b, a, acc);
    }
  }
  // One token over S groups (S = 1, 2), their blocks in turn. Whole pairs of blocks at constant
  // offsets in their unit (packed_layout.h: scales, extra bytes, nibble vectors, each two blocks'),
  // so that no block's addresses are computed at run time: warm, in L1, Q5_0 72 -> 90 GB/s and Q4_0
  // 77 -> 101 on Zen 5 (docs/bench/cpu.md, "Q4_0 / Q5_0 decode a pair of blocks a step (session
  // 39)"). Two groups read as two streams: cold, one Zen 5 core then reads Q5_0 1.06-1.32x as fast
  // and Q4_0 0.96-1.16x (one stream left it at 70-85% of the read probe; docs/bench/cpu.md, "Two
  // streams a pass for the blocks of 32 (session 46)"). Each group's sums are its own, in the same
  // order: the same bits as one group at a time.
  template <int S>
  static void one_token(const uint8_t* const (&g)[S], const TileActs& a, __m512 (&acc)[S][1]) {
    size_t b0 = 0;
    for (; b0 + 2 <= a.nb; b0 += 2) {
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const packed::BlockAt at = packed::in_unit(static_cast<size_t>(h), 2, kExtra, 256);
#pragma GCC unroll 2
        for (int s = 0; s < S; ++s) {
          const uint8_t* u = g[s] + kUnit * (b0 / 2);
          block<1>(u + at.scales, u + at.extra, u + at.quants, u, 4 * h, b0 + h, a, acc[s]);
        }
      }
    }
    for (int s = 0; s < S; ++s) {
      if (b0 < a.nb) block_at<1>(g[s], b0, a, acc[s]);
    }
  }
  // Two row groups over the same tokens on the unpacked pass (Unpacked<kForm>::run2): the nibble
  // masks and shifts (and Q5's fifth bits) done once a pass, not in every tile: 0.69-0.73x the time
  // of one-group tiles against 0.77-0.98x reading the packed codes in the tiles (docs/bench/cpu.md,
  // session 58). Each group's steps are block()'s: the same bits.
  static constexpr bool kPairTiles = true;
  static constexpr bool kPairUnpacked = true;
  static constexpr size_t kPairMinBlocks = 16;  // pair_min_blocks()
  // Block b of the group at g, its addresses computed (an odd last block; prefill).
  template <int T>
  __attribute__((always_inline)) static void block_at(const uint8_t* g, size_t b, const TileActs& a, __m512 (&acc)[T]) {
    const packed::BlockAt at = packed::block_at(b, a.nb, kExtra, 256);
    block<T>(g + at.scales, g + at.extra, g + at.quants, g + at.scales - 32 * (b % 2), 4 * static_cast<int>(b % 2), b,
             a, acc);
  }
  // Block b: its scales, extra bytes and nibble vectors; its pair unit's start and the first of the
  // unit's 8 read-ahead parts that it asks for.
  template <int T>
  __attribute__((always_inline)) static void block(const uint8_t* scales, const uint8_t* extra, const uint8_t* wb,
                                                   const uint8_t* pair, int part0, size_t b, const TileActs& a,
                                                   __m512 (&acc)[T]) {
    if constexpr (kMin) {
      const __m512 m = f16x16(extra);
      for (int t = 0; t < T; ++t) acc[t] = _mm512_fmadd_ps(m, _mm512_set1_ps(a.xs[b * T + t]), acc[t]);
    }
    __m512i p[T], p2[T];
    start<T>(p, p2, kMin ? nullptr : a.ofs + b * T);
    __m512i hb = _mm512_setzero_si512();
    if constexpr (kFive) hb = load64(extra + kMins);
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      if constexpr (kReadAhead) prefetch_part<T, kPairLines, 8>(pair, part0 + k);
      __m512i lo, hi;
      codes(load64(wb + 64 * k), hb, k, lo, hi);
      dot_step<T>(p, p2, false, lo, quad<T>(a, b, k));
      dot_step<T>(p, p2, true, hi, quad<T>(a, b, 4 + k));
    }
    join<T>(p, p2);
    scale_step<T>(acc, p, f16x16(scales), a.dx + b * T);
  }
};

// kIq4Values (FORMATS.md §2.9) in each 128-bit lane: K, the AMX tiles' signed codes, or K + 128
// (kUnsigned), vpdpbusd's unsigned operand, whose 128 the sums' start (ofs = −128·s) cancels.
template <bool kUnsigned>
inline __m512i iq4_lut() {
  const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4Values));
  return _mm512_broadcast_i32x4(kUnsigned ? _mm_xor_si128(k, _mm_set1_epi8(-128)) : k);
}

// The table entries (lut: iq4_lut) of a nibble vector's low (lo) and high (hi) nibbles: IQ4_NL's
// and IQ4_XS's codes.
__attribute__((always_inline)) inline void iq4_lookup(__m512i raw, __m512i lut, __m512i& lo, __m512i& hi) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  lo = _mm512_shuffle_epi8(lut, _mm512_and_si512(raw, m4));
  hi = _mm512_shuffle_epi8(lut, _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4));
}

// IQ4_NL: Q4_0's packed nibbles (packed_layout.h), each an index into kIq4Values (FORMATS.md
// §2.9): one vpshufb a nibble vector looks up K + 128 (1..241, the unsigned operand; vpdpbusd does
// not saturate), and ofs = −128·s cancels the 128, as for Q8_0's stored q + 128. The sums and f32
// steps are Q4_0's otherwise.
template <bool kReadAhead = true>
struct Iq4Nl {
  static constexpr bool kDirect = true;
  static constexpr int kOfs = 1;
  static constexpr int kOfsShift = 7;
  static constexpr int kPairLines = 9;  // a pair: 2 · (32 + 256) bytes
  static constexpr AmxForm kAmx = kAmxPlain;
  static constexpr Form kForm = kPlain;
  // Blocks [b0, b1): their codes through the table (kVnni: K + 128, as run() reads them, for the
  // pair tiles' Unpacked<kPlain>; else K, for the AMX tiles) and the scale.
  template <bool kVnni>
  static void unpack_to(const uint8_t* g, size_t b0, size_t b1, size_t nb, uint8_t* s) {
    static_assert(amx_bytes(kAmx) == Unpacked<kForm>::kBytes);
    const __m512i lut = iq4_lut<kVnni>();
    for (size_t b = b0; b < b1; ++b, s += amx_bytes(kAmx)) {
      const packed::BlockAt at = packed::block_at(b, nb, 0, 256);
      for (int j = 0; j < 4; ++j) {
        __m512i lo, hi;
        iq4_lookup(load64(g + at.quants + 64 * j), lut, lo, hi);
        _mm512_store_si512(s + 64 * j, lo);
        _mm512_store_si512(s + 64 * (4 + j), hi);
      }
      _mm512_store_ps(s + 512, f16x16(g + at.scales));
    }
  }
  static void amx_unpack(const uint8_t* g, size_t b0, size_t b1, size_t nb, uint8_t* s) {
    unpack_to<false>(g, b0, b1, nb, s);
  }
  static void unpack(const uint8_t* g, size_t b0, size_t b1, size_t nb, uint8_t* s) {
    unpack_to<true>(g, b0, b1, nb, s);
  }
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    const __m512i lut = iq4_lut<true>();
    for (size_t b = 0; b < a.nb; ++b) {
      const packed::BlockAt at = packed::block_at(b, a.nb, 0, 256);
      __m512i p[T], p2[T];
      start<T>(p, p2, a.ofs + b * T);
      const uint8_t* wb = g + at.quants;
      const uint8_t* pair = g + at.scales - 32 * (b % 2);
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        if constexpr (kReadAhead) prefetch_part<T, kPairLines, 8>(pair, 4 * static_cast<int>(b % 2) + j);
        __m512i lo, hi;
        iq4_lookup(load64(wb + 64 * j), lut, lo, hi);
        dot_step<T>(p, p2, false, lo, quad<T>(a, b, j));
        dot_step<T>(p, p2, true, hi, quad<T>(a, b, 4 + j));
      }
      join<T>(p, p2);
      scale_step<T>(acc, p, f16x16(g + at.scales), a.dx + b * T);
    }
  }
  // Two row groups over the same tokens on the unpacked pass (Unpacked<kPlain>::run2), the table
  // look-ups once a pass (0.71-0.72x the time of one-group tiles against 0.82x looking up in the
  // tiles; docs/bench/cpu.md, session 58). Each group's steps are run()'s: the same bits.
  static constexpr bool kPairTiles = true;
  static constexpr bool kPairUnpacked = true;
  static constexpr size_t kPairMinBlocks = 16;  // pair_min_blocks()
};

template <bool kFive>
struct Q45_K {
  static constexpr bool kDirect = !kFive;  // Q4_K's one-group tiles unpack their nibbles (measured faster)
  // Pair tiles on the unpacked pass (Unpacked<kMins>::run2), Q4_K too: on the Ice Lake Xeon the
  // tile's own nibble and scale unpacking took the dot ports (see pair_unpacked()).
  static constexpr bool kPairTiles = true;
  static constexpr bool kPairUnpacked = true;
  static constexpr size_t kPairMinBlocks = 16;  // pair_min_blocks()
  static constexpr Form kForm = kMins;
  static constexpr int kOfs = 0;  // mins instead: acc −= dmin·m_j · (dx·s)_j
  static constexpr int kOfsShift = 0;
  static constexpr size_t kBytes = kFive ? 2816 : 2304, kHead = kFive ? 2560 : 2048;  // d at kHead
  static constexpr AmxForm kAmx = kAmxMinSub;
  // The 16 rows' 6-bit scale and min of sub-block j (k4_scale_min) from the super-block's 12-byte
  // groups at s.
  __attribute__((always_inline)) static void scale_min(const __m128i* s, int j, __m128i& sc, __m128i& m) {
    const __m128i m6 = _mm_set1_epi8(0x3F), lo4 = _mm_set1_epi8(0x0F), top2 = _mm_set1_epi8(0x30);
    if (j < 4) {
      sc = _mm_and_si128(_mm_loadu_si128(s + j), m6);
      m = _mm_and_si128(_mm_loadu_si128(s + j + 4), m6);
    } else {
      const __m128i a8 = _mm_loadu_si128(s + j + 4);
      sc = _mm_or_si128(_mm_and_si128(a8, lo4), _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128(s + j - 4), 2), top2));
      m = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(a8, 4), lo4),
                       _mm_and_si128(_mm_srli_epi16(_mm_loadu_si128(s + j), 2), top2));
    }
  }
  // The codes of vector k of sub-block j of the super-block at o (Q5_K: the fifth bit merged).
  __attribute__((always_inline)) static __m512i codes(const uint8_t* o, int j, int k) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    const __m512i raw = load64(o + 512 * (j / 2) + 64 * k);
    __m512i w = (j & 1) ? _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4) : _mm512_and_si512(raw, m4);
    if constexpr (kFive) {  // bit j of the quad's qh bytes is bit 4
      const __mmask64 hb =
          _mm512_test_epi8_mask(load64(o + 2048 + 64 * k), _mm512_set1_epi8(static_cast<char>(1 << j)));
      w = _mm512_mask_add_epi8(w, hb, w, _mm512_set1_epi8(0x10));
    }
    return w;
  }
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    for (size_t u = 0; u < a.nb / 8; ++u) {
      const uint8_t* o = g + kBytes * u;
      const __m512 d = f16x16(o + kHead), dm = f16x16(o + kHead + 32);
      const __m128i* s = reinterpret_cast<const __m128i*>(o + kHead + 64);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        __m128i sc, m;
        scale_min(s, j, sc, m);
        // Spread over the sub-blocks: into L2 that reads cold Q4_K and Q5_K at 79-82% of the probe
        // against 75-79% asking at the super-block's start (into L1 a burst had read faster).
        prefetch_part<T, static_cast<int>(kBytes / 64), 8, kSuperLocality>(o, j);
        const size_t b = 8 * u + static_cast<size_t>(j);
        const __m512 mv = _mm512_mul_ps(dm, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(m)));
        for (int t = 0; t < T; ++t) acc[t] = _mm512_fnmadd_ps(mv, _mm512_set1_ps(a.xs[b * T + t]), acc[t]);
        __m512i p[T], p2[T];
        start<T>(p, p2, nullptr);
#pragma GCC unroll 8
        for (int k = 0; k < 8; ++k) dot_step<T>(p, p2, k & 1, codes(o, j, k), quad<T>(a, b, k));
        join<T>(p, p2);
        scale_step<T>(acc, p, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(sc))), a.dx + b * T);
      }
    }
  }
  // The group's codes, d·scale and dmin·min (the f32 values run() makes), as Unpacked<kMins> reads them.
  static void unpack(const uint8_t* g, size_t b0, size_t b1, size_t, uint8_t* s) {
    for (size_t u = b0 / 8; u < b1 / 8; ++u) {
      const uint8_t* o = g + kBytes * u;
      const __m512 d = f16x16(o + kHead), dm = f16x16(o + kHead + 32);
      const __m128i* sp = reinterpret_cast<const __m128i*>(o + kHead + 64);
      for (int j = 0; j < 8; ++j, s += Unpacked<kMins>::kBytes) {
        __m128i sc, m;
        scale_min(sp, j, sc, m);
        for (int k = 0; k < 8; ++k) _mm512_storeu_si512(s + 64 * k, codes(o, j, k));
        _mm512_storeu_ps(s + 512, _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(sc))));
        _mm512_storeu_ps(s + 576, _mm512_mul_ps(dm, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(m))));
      }
    }
  }
};

struct Q6_K {
  static constexpr bool kDirect = false;
  static constexpr bool kPairTiles = true;  // Unpacked<kForm>::run2
  static constexpr Form kForm = kHalves;
  static constexpr int kOfs = 2;  // ofs per half block: −32 · Σ of the half's 16 values
  static constexpr int kOfsShift = 0;
  static constexpr int32_t kHalfOfs = 32;
  static constexpr AmxForm kAmx = kAmxHalves;
  // The 6-bit codes of vector z of half h of the block whose nibble vectors are at nib.
  static __m512i code(const uint8_t* nib, int h, int z) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
    const __m512i raw = load64(nib + 64 * z);
    const __m512i n = h ? _mm512_srli_epi16(raw, 4) : raw;
    const __m512i tb = load64(nib + 256 + 64 * (z / 2));
    const int k = 2 * (z % 2) + h;  // top bits 2k..2k+1 → bits 4..5
    const __m512i hs = k == 0   ? _mm512_slli_epi16(tb, 4)
                       : k == 1 ? _mm512_slli_epi16(tb, 2)
                       : k == 2 ? tb
                                : _mm512_srli_epi16(tb, 2);
    return _mm512_ternarylogic_epi32(n, _mm512_and_si512(hs, m30), m4, 0xEC);  // (n & 15) | hs
  }
  static __m512 scale(const uint8_t* o, __m512 dd, int n) {  // d · scale n of the 16 rows
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 3072 + 16 * n));
    return _mm512_mul_ps(dd, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc8)));
  }
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    for (size_t u = 0; u < a.nb / 8; ++u) {
      const uint8_t* o = g + 3360 * u;
      const __m512 dd = f16x16(o + 3328);
#pragma GCC unroll 1
      for (int j = 0; j < 8; ++j) {
        prefetch_part<T, 53, 8, kSuperLocality>(o, j);
        const uint8_t* nib = o + 384 * j;
        const size_t b = 8 * u + static_cast<size_t>(j);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          half_block<T>(
              acc, a, b, h, a.ofs + (2 * b + h) * T, [&](int z) { return code(nib, h, z); },
              [&] { return scale(o, dd, 2 * j + h); });
        }
      }
    }
  }
  static void unpack(const uint8_t* g, size_t b0, size_t b1, size_t, uint8_t* s) {
    for (size_t u = b0 / 8; u < b1 / 8; ++u) {
      const uint8_t* o = g + 3360 * u;
      const __m512 dd = f16x16(o + 3328);
      for (int j = 0; j < 8; ++j, s += Unpacked<kHalves>::kBytes) {
        for (int h = 0; h < 2; ++h) {
          for (int z = 0; z < 4; ++z) _mm512_storeu_si512(s + 64 * (4 * h + z), code(o + 384 * j, h, z));
          _mm512_storeu_ps(s + 512 + 64 * h, scale(o, dd, 2 * j + h));
        }
      }
    }
  }
};

// Q3_K on Q6_K's plan: 16 values per scale, codes u = q + 4 (0..7) read as unsigned, ofs per half
// block −4 · Σ of its 16 values; the rows' 6-bit scales unpacked to int8 once a super-block.
struct Q3_K {
  static constexpr bool kDirect = false;
  static constexpr bool kPairTiles = true;  // Unpacked<kForm>::run2
  static constexpr Form kForm = kHalves;
  static constexpr int kOfs = 2;
  static constexpr int kOfsShift = 0;
  static constexpr int32_t kHalfOfs = 4;
  static constexpr AmxForm kAmx = kAmxHalves;
  // The 3-bit codes of quad k (0..7) of the block whose 3 code vectors are at c: 1 or 2 ops a
  // quad (c_0..c_5 whole in a byte), 4 for c_6 and c_7 (low 2 bits and top bit in two vectors).
  static __m512i code(const uint8_t* c, int k) {
    const __m512i m7 = _mm512_set1_epi8(7), m3 = _mm512_set1_epi8(3);
    if (k < 6) {
      const __m512i v = load64(c + 64 * (k / 2));
      return _mm512_and_si512(k % 2 ? _mm512_srli_epi16(v, 3) : v, m7);
    }
    const __m512i top = _mm512_and_si512(load64(c + 128), _mm512_set1_epi8(static_cast<char>(k == 6 ? 0x40 : 0x80)));
    const __m512i hb = k == 6 ? _mm512_srli_epi16(top, 4) : _mm512_srli_epi16(top, 5);  // bit 2, the rest 0
    return _mm512_ternarylogic_epi32(_mm512_srli_epi16(load64(c + 64 * (k - 6)), 6), hb, m3, 0xE4);  // m3 ? lo : hb
  }
  // sc[16n + r] = scale n (−32..31) of row r, for the super-block at o.
  static void scales(const uint8_t* o, int8_t* sc) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m6 = _mm512_set1_epi8(0x3F), k32 = _mm512_set1_epi8(32);
    const __m512i z0 = load64(o + 1536), z1 = load64(o + 1600), z2 = load64(o + 1664);  // bytes 0-3, 4-7, 8-11
    const __m512i lo[4] = {z0, z1, _mm512_srli_epi16(z0, 4), _mm512_srli_epi16(z1, 4)};
    const __m512i hi[4] = {_mm512_slli_epi16(z2, 4), _mm512_slli_epi16(z2, 2), z2, _mm512_srli_epi16(z2, 2)};
    for (int q = 0; q < 4; ++q) {  // scales 4q..4q+3: low 4 bits from lo, bits 4-5 from hi
      const __m512i v = _mm512_and_si512(_mm512_ternarylogic_epi32(lo[q], hi[q], m4, 0xE4), m6);
      _mm512_storeu_si512(sc + 64 * q, _mm512_sub_epi8(v, k32));
    }
  }
  static __m512 scale(const int8_t* sc, __m512 dd, int n) {  // d · scale n of the 16 rows
    const __m128i sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sc + 16 * n));
    return _mm512_mul_ps(dd, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc8)));
  }
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    alignas(64) int8_t sc[256];
    for (size_t u = 0; u < a.nb / 8; ++u) {
      const uint8_t* o = g + 1760 * u;
      const __m512 dd = f16x16(o + 1728);
      scales(o, sc);
#pragma GCC unroll 1
      for (int j = 0; j < 8; ++j) {
        prefetch_part<T, 28, 8, kSuperLocality>(o, j);
        const uint8_t* c = o + 192 * j;
        const size_t b = 8 * u + static_cast<size_t>(j);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          half_block<T>(
              acc, a, b, h, a.ofs + (2 * b + h) * T, [&](int z) { return code(c, 4 * h + z); },
              [&] { return scale(sc, dd, 2 * j + h); });
        }
      }
    }
  }
  static void unpack(const uint8_t* g, size_t b0, size_t b1, size_t, uint8_t* s) {
    alignas(64) int8_t sc[256];
    for (size_t u = b0 / 8; u < b1 / 8; ++u) {
      const uint8_t* o = g + 1760 * u;
      const __m512 dd = f16x16(o + 1728);
      scales(o, sc);
      for (int j = 0; j < 8; ++j, s += Unpacked<kHalves>::kBytes) {
        for (int k = 0; k < 8; ++k) _mm512_storeu_si512(s + 64 * k, code(o + 192 * j, k));
        for (int h = 0; h < 2; ++h) _mm512_storeu_ps(s + 512 + 64 * h, scale(sc, dd, 2 * j + h));
      }
    }
  }
};

// Q2_K on Q3_K's plan (16 values a scale, codes 0..3 unsigned, no offset) plus a min a half block:
// y += d·sc·Σq·x − dmin·m·Σx. The code sums of each half block get their f32 scale step as Q3_K;
// the mins one step a block (min_step), from each token's half-block sums (ofs, as s16 pairs).
struct Q2_K {
  static constexpr bool kDirect = false;
  static constexpr bool kPairTiles = true;  // Unpacked<kForm>::run2
  static constexpr Form kForm = kHalfMins;
  static constexpr int kOfs = 3;  // ofs per block: S0 & 0xFFFF | S1 << 16
  static constexpr int kOfsShift = 0;
  static constexpr AmxForm kAmx = kAmxHalfMins;
  // The 2-bit codes of quad z of the half block whose code vector is at c.
  static __m512i code(const uint8_t* c, int z) {
    const __m512i v = load64(c);
    return _mm512_and_si512(z ? _mm512_srli_epi16(v, 2 * z) : v, _mm512_set1_epi8(3));
  }
  static __m512 scale(const uint8_t* o, __m512 dd, int n) {  // d · scale n (low nibble) of the 16 rows
    const __m512i s = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 1024 + 16 * n)));
    return _mm512_mul_ps(dd, _mm512_cvtepi32_ps(_mm512_and_si512(s, _mm512_set1_epi32(15))));
  }
  static __m512i mins(const uint8_t* o, int j) {  // the rows' mins of half blocks 2j, 2j+1 as s16 pairs
    const __m512i m0 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 1024 + 32 * j)));
    const __m512i m1 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(o + 1040 + 32 * j)));
    return _mm512_or_si512(_mm512_srli_epi32(m0, 4), _mm512_slli_epi32(_mm512_srli_epi32(m1, 4), 16));
  }
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    for (size_t u = 0; u < a.nb / 8; ++u) {
      const uint8_t* o = g + 1344 * u;
      const __m512 dd = f16x16(o + 1280), dm = f16x16(o + 1312);
#pragma GCC unroll 1
      for (int j = 0; j < 8; ++j) {
        prefetch_part<T, 21, 8, kSuperLocality>(o, j);
        const uint8_t* c = o + 128 * j;
        const size_t b = 8 * u + static_cast<size_t>(j);
        min_step<T>(acc, mins(o, j), dm, a.ofs + b * T, a.dx + b * T);
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
          half_block<T>(
              acc, a, b, h, nullptr, [&](int z) { return code(c + 64 * h, z); },
              [&] { return scale(o, dd, 2 * j + h); });
        }
      }
    }
  }
  static void unpack(const uint8_t* g, size_t b0, size_t b1, size_t, uint8_t* s) {
    for (size_t u = b0 / 8; u < b1 / 8; ++u) {
      const uint8_t* o = g + 1344 * u;
      const __m512 dd = f16x16(o + 1280), dm = f16x16(o + 1312);
      for (int j = 0; j < 8; ++j, s += Unpacked<kHalfMins>::kBytes) {
        for (int k = 0; k < 8; ++k) _mm512_storeu_si512(s + 64 * k, code(o + 128 * j + 64 * (k / 4), k % 4));
        for (int h = 0; h < 2; ++h) _mm512_storeu_ps(s + 512 + 64 * h, scale(o, dd, 2 * j + h));
        _mm512_storeu_si512(s + 640, mins(o, j));
        _mm512_storeu_ps(s + 704, dm);
      }
    }
  }
};

// IQ4_XS: each sub-block's nibbles through the value table as K + 128 (1..241, unsigned; one
// vpshufb a nibble vector) and the offset −128·Σx from the block sums, as Q8_0's q + 128; then the
// f32 step with d·(ls − 32). The rows' 6-bit scales are unpacked to int8 once a super-block.
struct IQ4_XS {
  static constexpr bool kDirect = true;
  static constexpr int kOfs = 1;
  static constexpr int kOfsShift = 7;
  // sc[64·(b % 2) + 16·(b / 2) + r] = sub-block b's ls − 32 of row r, for the super-block at o:
  // low 4 bits from scales_l[b / 2] (even b: its low nibble, odd: its high one), bits 4-5 from
  // bits 2(b % 4)..+1 of scales_h byte b / 4.
  static void scales(const uint8_t* o, int8_t* sc) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), m6 = _mm512_set1_epi8(0x3F), k32 = _mm512_set1_epi8(32);
    const __m512i l = load64(o + 2112);  // 128-bit lane i: scales_l[i] of the 16 rows
    const __m512i h01 = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(o + 2080)));
    const __m512i h = _mm512_shuffle_i64x2(h01, h01, 0x50);  // lanes: scales_h bytes 0, 0, 1, 1
    // Lane i's shift of scales_h to sub-block 2i's bits (0, 4, 0, 4); 2i + 1's: 2 more.
    const __m512i even = _mm512_setr_epi32(0, 0, 0, 0, 0x40004, 0x40004, 0x40004, 0x40004, 0, 0, 0, 0, 0x40004,
                                           0x40004, 0x40004, 0x40004);
    const __m512i odd = _mm512_add_epi16(even, _mm512_set1_epi16(2));
    const __m512i he = _mm512_slli_epi16(_mm512_srlv_epi16(h, even), 4);  // bits 4-5: the top bits
    const __m512i ho = _mm512_slli_epi16(_mm512_srlv_epi16(h, odd), 4);
    const __m512i se = _mm512_ternarylogic_epi32(l, he, m4, 0xE4);  // m4 ? l : he
    const __m512i so = _mm512_ternarylogic_epi32(_mm512_srli_epi16(l, 4), ho, m4, 0xE4);
    _mm512_store_si512(sc, _mm512_sub_epi8(_mm512_and_si512(se, m6), k32));
    _mm512_store_si512(sc + 64, _mm512_sub_epi8(_mm512_and_si512(so, m6), k32));
  }
  // Sub-block j's d·(ls − 32) of the 16 rows, from d and scales()'s sc.
  static __m512 sub_scale(__m512 d, const int8_t* sc, int j) {
    const __m128i s8 = _mm_load_si128(reinterpret_cast<const __m128i*>(sc + 64 * (j % 2) + 16 * (j / 2)));
    return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(s8)));
  }
  static constexpr AmxForm kAmx = kAmxPlain;
  // Sub-blocks [b0, b1) (whole super-blocks) in blocks of 576 bytes: their codes through the value
  // table (kVnni: K + 128, as run() reads them, for the pair tiles' Unpacked<kPlain>; else K, for
  // the AMX tiles) and d·(ls − 32), as run() makes it.
  template <bool kVnni>
  static void unpack_to(const uint8_t* g, size_t b0, size_t b1, uint8_t* s) {
    static_assert(amx_bytes(kAmx) == Unpacked<kPlain>::kBytes);
    const __m512i values = iq4_lut<kVnni>();
    alignas(64) int8_t sc[128];
    for (size_t u = b0 / 8; u < b1 / 8; ++u) {
      const uint8_t* o = g + 2176 * u;
      const __m512 d = f16x16(o + 2048);
      scales(o, sc);
      for (int j = 0; j < 8; ++j, s += Unpacked<kPlain>::kBytes) {
        for (int q = 0; q < 4; ++q) {
          __m512i lo, hi;
          iq4_lookup(load64(o + 256 * j + 64 * q), values, lo, hi);
          _mm512_store_si512(s + 64 * q, lo);
          _mm512_store_si512(s + 64 * (4 + q), hi);
        }
        _mm512_store_ps(s + 512, sub_scale(d, sc, j));
      }
    }
  }
  static void amx_unpack(const uint8_t* g, size_t b0, size_t b1, size_t, uint8_t* s) { unpack_to<false>(g, b0, b1, s); }
  // Pair tiles on the unpacked pass (Unpacked<kPlain>::run2): the table look-ups (four dot-port ops a
  // nibble vector) done once a pass, not in every tile, as Q4_K's nibbles (see pair_unpacked()).
  static constexpr bool kPairTiles = true;
  static constexpr bool kPairUnpacked = true;
  static constexpr size_t kPairMinBlocks = 16;  // pair_min_blocks()
  static constexpr Form kForm = kPlain;
  static void unpack(const uint8_t* g, size_t b0, size_t b1, size_t, uint8_t* s) { unpack_to<true>(g, b0, b1, s); }
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    const __m512i values = iq4_lut<true>();
    alignas(64) int8_t sc[128];
    for (size_t u = 0; u < a.nb / 8; ++u) {
      const uint8_t* o = g + 2176 * u;
      const __m512 d = f16x16(o + 2048);
      scales(o, sc);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        // Spread over the sub-blocks, as Q45_K's: cold 83-84% of the probe against 79-81%.
        prefetch_part<T, 34, 8, kSuperLocality>(o, j);
        const size_t b = 8 * u + static_cast<size_t>(j);
        __m512i p[T], p2[T];
        start<T>(p, p2, a.ofs + b * T);
        const uint8_t* wb = o + 256 * j;
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          __m512i lo, hi;
          iq4_lookup(load64(wb + 64 * q), values, lo, hi);
          dot_step<T>(p, p2, false, lo, quad<T>(a, b, static_cast<size_t>(q)));
          dot_step<T>(p, p2, true, hi, quad<T>(a, b, static_cast<size_t>(4 + q)));
        }
        join<T>(p, p2);
        scale_step<T>(acc, p, sub_scale(d, sc, j), a.dx + b * T);
      }
    }
  }
};

// A tile's finished outputs: 16 rows of one token, one 64-byte line of y (tiles write whole lines:
// stream_outputs() checks the alignment). stream: a non-temporal store, which writes the line to memory
// without first reading it into the cache (see stream_outputs()); a group's partial mask stores plainly.
inline void store_out(float* d, __mmask16 mask, __m512 v, bool stream) {
  if (stream && mask == 0xFFFF) {
    _mm512_stream_ps(d, v);
  } else {
    _mm512_mask_storeu_ps(d, mask, v);
  }
}

// Whether a prefill call of n_tok tokens over rows [rb, re) stores its outputs non-temporally: where they
// are more than an L2 holds (kStreamBytes), each tile's 64-byte stores missed the cache, and every one
// first read its line (from L3 or DRAM) only to overwrite it whole. 128-token products of 4864 x 896
// Q8_0 (Qwen2.5-0.5B's gate and up) ran 1.20x as fast with these stores, 8192 x 2048 1.07x; whole
// prompts of random Qwen2.5-0.5B Q8_0 and Q4_K took 0.95-0.98x the time with one and two threads (Ice
// Lake Xeon).
// Outputs that fit in L2 stay in the cache for the step that reads them next, and a tile over several
// column passes reads its sums back, so only a call's one pass streams (docs/bench/cpu.md, session 61).
// The stores need the rows on 64-byte lines (the forward pass's AlignedVector rows); the call ends with
// an sfence, so the threads that read y after the pool's join see them.
constexpr size_t kStreamBytes = size_t{1} << 20;
inline bool stream_outputs(const float* y, size_t ldy, size_t n_tok, size_t rows) {
  return n_tok * rows * sizeof(float) >= kStreamBytes && reinterpret_cast<uintptr_t>(y) % 64 == 0 && ldy % kG == 0;
}

// Inlined into matmul_k: a tile GCC keeps out of line stores its accumulators to the stack after
// every block (measured 15% slower on Q5_0).
#define ALAP_INLINE __attribute__((always_inline)) inline
template <class K, int T>
ALAP_INLINE void tile(const uint8_t* g, const TileActs& a, float* y, size_t ldy, size_t r0, __mmask16 mask,
                      bool stream) {
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  K::template run<T>(g, a, acc);
  for (int t = 0; t < T; ++t) store_out(y + static_cast<size_t>(t) * ldy + r0, mask, acc[t], stream);
}

// The same over a column pass: acc starts from y (the earlier passes' sums) unless first; stream only
// on the last pass.
template <class K, int T>
ALAP_INLINE void tile_pass(const uint8_t* g, const TileActs& a, float* y, size_t ldy, size_t r0, __mmask16 mask,
                           bool first, bool stream) {
  __m512 acc[T];
  for (int t = 0; t < T; ++t) {
    acc[t] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, y + static_cast<size_t>(t) * ldy + r0);
  }
  K::template run<T>(g, a, acc);
  for (int t = 0; t < T; ++t) store_out(y + static_cast<size_t>(t) * ldy + r0, mask, acc[t], stream);
}

// Two row groups over T tokens in one tile (K::run2), group r's rows at yr[r] (token t at yr[r] + t·ldy);
// over a column pass, acc starts from them (the earlier passes' sums) unless first; stream only on the
// last pass. kSwiglu (matmul_swiglu: group 0 of gate, group 1 the same rows of up): the last pass stores
// SiLU(gate)·up at yr[0] alone, the earlier ones both groups' sums.
template <class K, int T, bool kSwiglu>
ALAP_INLINE void pair_tile(const uint8_t* const (&g)[2], const TileActs& a, float* const (&yr)[2], size_t ldy,
                           const __mmask16 (&mask)[2], bool first, bool last, bool stream) {
  __m512 acc[2][T];
  for (int r = 0; r < 2; ++r) {
    for (int t = 0; t < T; ++t) {
      acc[r][t] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask[r], yr[r] + static_cast<size_t>(t) * ldy);
    }
  }
  K::template run2<T>(g, a, acc);
  if (kSwiglu && last) {
    for (int t = 0; t < T; ++t) {
      store_out(yr[0] + static_cast<size_t>(t) * ldy, mask[0], silu_mul16(acc[0][t], acc[1][t]), stream);
    }
    return;
  }
  for (int r = 0; r < 2; ++r) {
    for (int t = 0; t < T; ++t) store_out(yr[r] + static_cast<size_t>(t) * ldy, mask[r], acc[r][t], stream);
  }
}

template <class K, bool kSwiglu, int... Ts>
ALAP_INLINE void pair_tile_impl(std::integer_sequence<int, Ts...>, size_t T, const uint8_t* const (&g)[2],
                                const TileActs& a, float* const (&yr)[2], size_t ldy, const __mmask16 (&mask)[2],
                                bool first, bool last, bool stream) {
  (void)((T == Ts + 1 ? (pair_tile<K, Ts + 1, kSwiglu>(g, a, yr, ldy, mask, first, last, stream), true) : false) ||
         ...);
}

template <class K, int... Ts>
ALAP_INLINE void tile_pass_impl(std::integer_sequence<int, Ts...>, size_t T, const uint8_t* g, const TileActs& a,
                                float* y, size_t ldy, size_t r0, __mmask16 mask, bool first, bool stream) {
  (void)((T == Ts + 1 ? (tile_pass<K, Ts + 1>(g, a, y, ldy, r0, mask, first, stream), true) : false) || ...);
}

template <class K, int... Ts>
ALAP_INLINE void tile_t_impl(std::integer_sequence<int, Ts...>, size_t T, const uint8_t* g, const TileActs& a,
                             float* y, size_t ldy, size_t r0, __mmask16 mask, bool stream) {
  (void)((T == Ts + 1 ? (tile<K, Ts + 1>(g, a, y, ldy, r0, mask, stream), true) : false) || ...);
}

template <class K>
ALAP_INLINE void tile_t(size_t T, const uint8_t* g, const TileActs& a, float* y, size_t ldy, size_t r0,
                        __mmask16 mask, bool stream) {
  tile_t_impl<K>(std::make_integer_sequence<int, kTMax>{}, T, g, a, y, ldy, r0, mask, stream);
}

// Types whose tiles take two row groups at once (K::run2, or Unpacked::run2 on both groups' unpacked
// column passes): each token's quad broadcast once for both groups' dots, in tiles of at most kTPair
// tokens (2 · kTPair int32 sums and f32 accumulators in registers). On an Ice Lake Xeon a tile of
// one group issued a broadcast load a vpdpbusd, and the broadcasts, more than the dot ports, held it
// at 0.35-0.4 of the dot peak; pairs run the products 1.1-1.4x as fast (docs/bench/cpu.md, "The
// dot-peak probe on Intel cores; tiles of two row groups (session 56)"). Rows of at least
// pair_min_blocks<K>() blocks of 32 take them.
constexpr int kTPair = 6;
template <class K>
constexpr bool pair_tiles() {
  if constexpr (requires { K::kPairTiles; }) return K::kPairTiles;
  return false;
}
// 32 (1024 columns) unless the type says less (K::kPairMinBlocks). One process, pairs against one
// group alternating, 128 tokens, one thread, time (docs/bench/cpu.md, sessions 57 and 58): 512
// columns Q8_0 0.69-0.94x, Q4_K 0.69-0.74x, Q5_K 0.70-0.82x, IQ4_XS 0.66x; on unpacked passes (session
// 58) Q4_0 0.74-0.79x, Q4_1 0.79-0.83x, Q5_0 0.71-0.73x, Q5_1 0.75-0.84x, IQ4_NL 0.76-0.83x; 896
// columns Q8_0 0.66-0.87x, Q5_0 0.70-0.75x, Q5_1 0.72-0.78x. The types that keep 32: Q6_K 1.00-1.04x
// at 512, Q3_K 0.82-1.02x, Q2_K 1.06-1.20x (session 57).
template <class K>
constexpr size_t pair_min_blocks() {
  if constexpr (requires { K::kPairMinBlocks; }) return K::kPairMinBlocks;
  return 32;
}
// Whether the pair tiles read both groups' column passes unpacked (K::unpack, Unpacked::run2), not
// the packed codes (K::run2). Every type but Q8_0 does, though the 4- and 5-bit ones' one-group tiles
// read the codes: in a pair tile on the Ice Lake Xeon, Q4_K's nibble masks and shifts and its scale
// and min unpacking took the dot ports (every 512-bit integer or f32 op does there), about 0.5 of
// the tile's ops with the FP steps; unpacked once per pass they do not recur in every tile
// (docs/bench/cpu.md, session 57; session 58: the blocks of 32 and IQ4_XS alike).
template <class K>
constexpr bool pair_unpacked() {
  if constexpr (requires { K::kPairUnpacked; }) return K::kPairUnpacked;
  return !K::kDirect;
}

// The bytes [p + lo, p + hi) asked for into L1 in a burst, a line at a time.
inline void prefetch_lines(const uint8_t* p, size_t lo, size_t hi) {
  for (size_t l = lo; l < hi; l += 64) _mm_prefetch(reinterpret_cast<const char*>(p + l), _MM_HINT_T0);
}

// Share i of n of the bytes [p, p + bytes) asked for into L1 (the one-group tiles' prefill: the next
// group's weights, spread over the tiles of the current one).
inline void prefetch_share(const uint8_t* p, size_t bytes, size_t i, size_t n) {
  prefetch_lines(p, i * bytes / n, (i + 1) * bytes / n);
}

// A block's two half-block sums of int8 activations (s4: its 8 quad sums) as s16 pairs, half 0 low.
inline int32_t half_sums(const int32_t* s4) {
  const uint32_t s0 = static_cast<uint32_t>(s4[0] + s4[1] + s4[2] + s4[3]) & 0xFFFFu;
  const uint32_t s1 = static_cast<uint32_t>(s4[4] + s4[5] + s4[6] + s4[7]) & 0xFFFFu;
  return static_cast<int32_t>(s0 | (s1 << 16));
}

// ofs / xs of token t, block b (or half block) as the type wants them (ofs: the start of the sums,
// kMagic included; |offset| <= 128·32·128, so kMagic + offset fits).
template <class K>
void block_terms(const QuantizedActs& a, size_t t, size_t nb, int32_t* ofs, float* xs) {
  for (size_t b = 0; b < nb; ++b) {
    const size_t i = t * nb + b;
    if constexpr (K::kOfs == 1) {
      ofs[b] = kMagic - a.s[i] * (1 << K::kOfsShift);
    } else if constexpr (K::kOfs == 2) {
      for (size_t h = 0; h < 2; ++h) {
        const int32_t* s4 = a.s4 + 8 * i + 4 * h;
        ofs[2 * b + h] = kMagic - K::kHalfOfs * (s4[0] + s4[1] + s4[2] + s4[3]);
      }
    } else if constexpr (K::kOfs == 3) {
      ofs[b] = half_sums(a.s4 + 8 * i);
    } else {
      xs[b] = a.d[i] * static_cast<float>(a.s[i]);
    }
  }
}

// interleave() of 2-7 rows, whole steps of 16 ints a row: the T vectors a step reads (16 ints of
// each row) give its T vectors out, each by a two-source permute of rows 2p and 2p + 1 for every
// pair p, blended by row (Interleave<T>'s tables, made at compile time). Returns the ints done.
template <int T>
struct Interleave {
  static constexpr int kPairs = (T + 1) / 2;
  alignas(64) int32_t perm[T][kPairs][16] = {};  // out vector j, pair p: lane i from row 2p (i) or 2p + 1 (16 + i)
  __mmask16 rows[T][kPairs] = {};               // the lanes of out vector j that pair p fills
  constexpr Interleave() {
    for (int j = 0; j < T; ++j) {
      for (int i = 0; i < 16; ++i) {
        const int e = 16 * j + i, t = e % T, p = t / 2;
        perm[j][p][i] = (t % 2) * 16 + e / T;
        rows[j][p] = static_cast<__mmask16>(rows[j][p] | (1u << i));
      }
    }
  }
};

template <int T>
size_t interleave_steps(const uint8_t* q0, size_t stride, size_t n, int32_t* dst) {
  static constexpr Interleave<T> kTab;
  size_t k = 0;
  for (; k + 16 <= n; k += 16) {
    __m512i r[T];
    for (int t = 0; t < T; ++t) r[t] = _mm512_loadu_si512(q0 + t * stride + 4 * k);
    for (int j = 0; j < T; ++j) {
      __m512i out = _mm512_setzero_si512();
      for (int p = 0; p < Interleave<T>::kPairs; ++p) {
        const __m512i idx = _mm512_load_si512(kTab.perm[j][p]);
        const __m512i v = 2 * p + 1 < T ? _mm512_permutex2var_epi32(r[2 * p], idx, r[2 * p + 1])
                                        : _mm512_permutexvar_epi32(idx, r[2 * p]);
        out = p == 0 ? v : _mm512_mask_blend_epi32(kTab.rows[j][p], out, v);
      }
      _mm512_storeu_si512(dst + T * k + 16 * j, out);
    }
  }
  return k;
}

inline size_t interleave_few(const uint8_t* q0, size_t stride, size_t n, size_t T, int32_t* dst) {
  switch (T) {
    case 2: return interleave_steps<2>(q0, stride, n, dst);
    case 3: return interleave_steps<3>(q0, stride, n, dst);
    case 4: return interleave_steps<4>(q0, stride, n, dst);
    case 5: return interleave_steps<5>(q0, stride, n, dst);
    case 6: return interleave_steps<6>(q0, stride, n, dst);
    default: return interleave_steps<7>(q0, stride, n, dst);
  }
}

// T rows of n int32 (row t at src + t·stride bytes) interleaved as TileActs reads them: int k of row
// t at dst[T·k + t], copied as bytes (the callers' scales and terms are floats). A tile's int8
// activations (int k: token t's k-th group of 4 bytes) and its per-block terms. Eight rows by an
// 8 × 16 transpose of int32 a step (two unpack stages, then two 128-bit shuffle stages, 16 ints a
// store); one row by copies; 2-7 rows by permutes (interleave_few); the last ints one value at a
// time: the same ints.
// The scalar copies of the pair tiles' 5 and 6 tokens cost the work of ~40 rows of weights in every
// product call (docs/bench/cpu.md, session 60).
inline void interleave(const void* src, size_t stride, size_t n, size_t T, int32_t* dst) {
  const auto* q0 = static_cast<const uint8_t*>(src);
  size_t k = 0;
  for (; T == 8 && k + 16 <= n; k += 16) {
    __m512i r[8], a[8], b[8];
    for (int t = 0; t < 8; ++t) r[t] = _mm512_loadu_si512(q0 + t * stride + 4 * k);
    for (int t = 0; t < 8; t += 2) {  // per 128-bit lane L: (4L, 4L+1 | 4L+2, 4L+3) of tokens t, t+1
      a[t] = _mm512_unpacklo_epi32(r[t], r[t + 1]);
      a[t + 1] = _mm512_unpackhi_epi32(r[t], r[t + 1]);
    }
    for (int h = 0; h < 2; ++h) {  // b[4h + m], lane L: int 4L + m of tokens 4h .. 4h + 3
      b[4 * h + 0] = _mm512_unpacklo_epi64(a[4 * h], a[4 * h + 2]);
      b[4 * h + 1] = _mm512_unpackhi_epi64(a[4 * h], a[4 * h + 2]);
      b[4 * h + 2] = _mm512_unpacklo_epi64(a[4 * h + 1], a[4 * h + 3]);
      b[4 * h + 3] = _mm512_unpackhi_epi64(a[4 * h + 1], a[4 * h + 3]);
    }
    __m512i lo[4], hi[4];  // lanes 0–1 of b[m] and b[4 + m], lanes 2–3
    for (int m = 0; m < 4; ++m) {
      lo[m] = _mm512_shuffle_i32x4(b[m], b[4 + m], 0x44);
      hi[m] = _mm512_shuffle_i32x4(b[m], b[4 + m], 0xEE);
    }
    int32_t* out = dst + 8 * k;  // ints 2j and 2j + 1 of the 8 tokens: 16 ints
    for (int m = 0; m < 4; m += 2) {
      _mm512_storeu_si512(out + 16 * (0 + m / 2), _mm512_shuffle_i32x4(lo[m], lo[m + 1], 0x88));  // int m
      _mm512_storeu_si512(out + 16 * (2 + m / 2), _mm512_shuffle_i32x4(lo[m], lo[m + 1], 0xDD));  // 4 + m
      _mm512_storeu_si512(out + 16 * (4 + m / 2), _mm512_shuffle_i32x4(hi[m], hi[m + 1], 0x88));  // 8 + m
      _mm512_storeu_si512(out + 16 * (6 + m / 2), _mm512_shuffle_i32x4(hi[m], hi[m + 1], 0xDD));  // 12 + m
    }
  }
  for (; T == 1 && k + 16 <= n; k += 16) _mm512_storeu_si512(dst + k, _mm512_loadu_si512(q0 + 4 * k));
  if (T > 1 && T < 8 && k + 16 <= n) k = interleave_few(q0, stride, n, T, dst);
  for (; k < n; ++k) {
    for (size_t t = 0; t < T; ++t) std::memcpy(dst + T * k + t, q0 + t * stride + 4 * k, 4);
  }
}

// The rows of group g that [rb, re) holds, as a lane mask.
inline __mmask16 group_mask(size_t g, size_t rb, size_t re) {
  const size_t lo = std::max(rb, g * kG) - g * kG, hi = std::min(re, g * kG + kG) - g * kG;
  return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
}

// ofs words a token of nb blocks (Q6_K: one a half block).
template <class K>
constexpr size_t ofs_words(size_t nb) {
  return K::kOfs == 2 ? 2 * nb : nb;
}

// ---- Prefill on the AMX tile unit in bf16 (amx_prefill(), quant.h) ----
// A column pass of a group, unpacked as the VNNI prefill does (amx_pass: signed codes, the f32
// scale and offset of each row), becomes the rows' weights in bf16, w = bf16(S_h·q + O_h) (S_h, O_h:
// the scale and offset of the half block h of 16 columns), and the tokens' f32 activations become
// bf16 too (QuantizedActs::x; not its int8 blocks). TDPBF16PS then sums a whole row in f32 inside
// the tile, 16 tokens × 16 rows × 32 columns an instruction, and a tile leaves the unit once a pass.
// The int8 tiles (TDPBSSD, session 51) had to take every block's sums out of the tile for the
// block's scales: 16 conversions and FMAs a block and tile beside each product, so they ran at
// 1.1-1.3x the VNNI tiles' rate where these run at 1.4-2.4x (docs/bench/cpu.md, "Prefill on the
// AMX tiles in bf16 (session 52)", runs/session52/amx_products.log).
// Not the VNNI path's bits: bf16 keeps 8 significant bits of each weight and activation (2^-9
// relative), where the VNNI path rounds each activation to int8 steps of its block's max / 127. On
// random rows these results lie 3x closer to the exact product than the VNNI path's.
// Here a B tile is 16 pair rows (columns 2p, 2p + 1) × the 16 rows, 64 bytes a pair row, and an A
// tile 16 tokens × 32 columns (QuantTiles; packed F16 / BF16 take them the other way round, below).
// Blocks [b0, b1) of the group at g in K's AMX form at s: its own amx_unpack(), or the unpack() of
// its VNNI prefill form (Unpacked<F>'s bytes), the half-block types' codes less their offset.
template <class K>
void amx_pass(const uint8_t* g, size_t b0, size_t b1, size_t nb, uint8_t* s) {
  if constexpr (requires { K::amx_unpack(g, b0, b1, nb, s); }) {
    K::amx_unpack(g, b0, b1, nb, s);
  } else {
    K::unpack(g, b0, b1, nb, s);
    if constexpr (K::kAmx == kAmxHalves) amx_signed_codes(s, b1 - b0, K::kHalfOfs);
  }
}

// S_h and O_h of half h of the block in AMX form at sb, lane r = row r.
template <AmxForm F>
ALAP_INLINE void bf16_terms(const uint8_t* sb, int h, __m512& S, __m512& O) {
  S = _mm512_load_ps(sb + 512 + (amx_halves(F) ? 64 * h : 0));
  O = _mm512_setzero_ps();
  if constexpr (F == kAmxMinAdd) O = _mm512_load_ps(sb + 576);
  if constexpr (F == kAmxMinSub) O = _mm512_sub_ps(O, _mm512_load_ps(sb + 576));
  if constexpr (F == kAmxHalfMins) {  // −dmin·m_h: m_h the low (h 0) or high s16 of each row's pair
    const __m512i mp = _mm512_load_si512(sb + 640);
    const __m512i m = h == 0 ? _mm512_srai_epi32(_mm512_slli_epi32(mp, 16), 16) : _mm512_srai_epi32(mp, 16);
    O = _mm512_sub_ps(O, _mm512_mul_ps(_mm512_load_ps(sb + 704), _mm512_cvtepi32_ps(m)));
  }
}

// n_blocks blocks in K's AMX form at s to B tiles of bf16 at out (512 values a block: pair row p
// of 16 rows × 2 at 32·p). Quad k of the codes (16 rows × 4 columns, row r at lanes 4r..4r+3)
// gives pair rows 2k and 2k + 1.
template <AmxForm F>
__attribute__((target("avx512bf16"))) void bf16_weights(const uint8_t* s, size_t n_blocks, uint16_t* out) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i quarter = _mm512_srli_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), 2);
  for (size_t b = 0; b < n_blocks; ++b, s += amx_bytes(F), out += 512) {
    for (int h = 0; h < 2; ++h) {
      __m512 S, O, sq[4], oq[4];  // lane i of quarter q: row 4q + i / 4
      bf16_terms<F>(s, h, S, O);
      for (int q = 0; q < 4; ++q) {
        const __m512i idx = _mm512_add_epi32(quarter, _mm512_set1_epi32(4 * q));
        sq[q] = _mm512_permutexvar_ps(idx, S), oq[q] = _mm512_permutexvar_ps(idx, O);
      }
      for (int z = 0; z < 4; ++z) {
        const int k = 4 * h + z;
        __m512 f[4];
        for (int q = 0; q < 4; ++q) {
          const __m128i c = _mm_load_si128(reinterpret_cast<const __m128i*>(s + 64 * k + 16 * q));
          f[q] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(c)), sq[q], oq[q]);
        }
        // dword e of lo: row e / 2's columns 4k + 2(e % 2), +1 (rows 0-7); of hi: rows 8-15
        const __m512i lo = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f[1], f[0]));
        const __m512i hi = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(f[3], f[2]));
        _mm512_store_si512(out + 32 * (2 * k), _mm512_permutex2var_epi32(lo, even, hi));
        _mm512_store_si512(out + 32 * (2 * k + 1), _mm512_permutex2var_epi32(lo, odd, hi));
      }
    }
  }
}

// Tokens [t0, t1) of x ([n_tok][n_cols] f32; t0 a multiple of 16) to bf16 A tiles at out, zeros
// from n_tok on: tile i's block b at 512·(nb·i + b), its 16 tokens' 32 values 64 bytes apart (a
// row of x is 4 KB and more: tile loads that stride over it alias in L1 and L2).
__attribute__((target("avx512bf16"))) void bf16_acts(const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1,
                                                     uint16_t* out) {
  const size_t nb = n_cols / 32;
  for (size_t t = t0; t < t1; ++t) {
    const float* r = x + t * n_cols;
    uint16_t* o = out + 512 * nb * ((t - t0) / 16) + 32 * (t % 16);
    for (size_t b = 0; b < nb; ++b) {
      const __m512i v = t < n_tok ? reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(_mm512_loadu_ps(r + 32 * b + 16),
                                                                                  _mm512_loadu_ps(r + 32 * b)))
                                  : _mm512_setzero_si512();
      _mm512_store_si512(o + 512 * b, v);
    }
  }
}

// ---- F16 / BF16 weights on the AMX tiles ----
// The packed runs of four (packed_layout.h) hold each row's 32 columns of a block as two 32-byte
// pieces, so here the weights are the A operand (tile row = weight row: the pieces side by side,
// no transpose) and the activations the B operand, transposed once a call to pairs of columns ×
// 16 tokens; the C tile is [row][token] and is transposed on its way to y. BF16 weights are exact
// in one A tile. An F16 weight w (11 significant bits) is hi + lo exactly, hi = bf16(w) and lo =
// w − hi (at most 4 significant bits). An activation x is hi + lo to 2^-17 (hi = bf16(x), lo =
// bf16(x − hi)). The products wh·xh + wh·xl + wl·xh (BF16: wh·xh + wh·xl) leave each term within
// ~2^-16 of w·x, as near as the f32 sums, where bf16 activations alone moved the F16 files' logits
// 3-6x further from transformers' than their f16 storage does (HfReference's F16 cases: 5.2e-3
// against a 1.5e-3 cap).

// Tokens [t0, t1) of x ([n_tok][n_cols] f32; t0 a multiple of 16) to bf16 B tiles at out, zeros
// from n_tok on: tile i's block b at 512·(nb·i + b), pair row k (columns 2k, 2k + 1) of its 16
// tokens at 32·k; x − bf16(x) as bf16 the same way at out_lo.
__attribute__((target("avx512bf16"))) void h16_acts(const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1,
                                                    uint16_t* out, uint16_t* out_lo) {
  const size_t nb = n_cols / 32;
  for (size_t i = 0; t0 + 16 * i < t1; ++i) {
    for (size_t b = 0; b < nb; ++b) {
      __m512i r[16], l[16];
      for (size_t t = 0; t < 16; ++t) {
        const size_t tok = t0 + 16 * i + t;
        const float* p = x + tok * n_cols + 32 * b;
        r[t] = l[t] = _mm512_setzero_si512();
        if (tok < n_tok) bf16_split(_mm512_loadu_ps(p), _mm512_loadu_ps(p + 16), r[t], l[t]);
      }
      transpose16(r);
      transpose16(l);
      uint16_t* o = out + 512 * (nb * i + b);
      uint16_t* ol = out_lo + 512 * (nb * i + b);
      for (int k = 0; k < 16; ++k) _mm512_store_si512(o + 32 * k, r[k]), _mm512_store_si512(ol + 32 * k, l[k]);
    }
  }
}

// Blocks [b0, b1) of the group whose runs of four start at g (run i at i·run_bytes) to A tiles:
// block b's row r at hi + 512·(b − b0) + 32·r; for F16 also lo (w − hi) beside it at lo.
template <bool kBf16>
__attribute__((target("avx512bf16"))) void h16_weights(const uint8_t* g, size_t run_bytes, size_t b0, size_t b1,
                                                       uint16_t* hi, uint16_t* lo) {
  for (size_t b = b0; b < b1; ++b, hi += 512, lo += 512) {
    for (int r = 0; r < 16; ++r) {
      const uint8_t* p = g + (r / 4) * run_bytes + 256 * b + 32 * (r % 4);  // chunks 2b, 2b + 1 at p, p + 128
      const __m256i c0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
      const __m256i c1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 128));
      if constexpr (kBf16) {
        _mm512_store_si512(hi + 32 * r, _mm512_inserti64x4(_mm512_castsi256_si512(c0), c1, 1));
      } else {
        __m512i h, l;
        bf16_split(_mm512_cvtph_ps(c0), _mm512_cvtph_ps(c1), h, l);
        _mm512_store_si512(hi + 32 * r, h);
        _mm512_store_si512(lo + 32 * r, l);
      }
    }
  }
}

// The two forms amx_run takes: a pass of a group's weights as tiles (hi, and lo for F16) and a
// chunk's activations as tiles (hi, and lo for F16 / BF16), kWeightsA, kLo and kXLo as for
// amx_tiles.
// The packed int8-code types (K): the pass unpacked (amx_pass) and made bf16 B tiles.
template <class K>
struct QuantTiles {
  static constexpr bool kWeightsA = false, kLo = false, kXLo = false;
  static constexpr ActsTiles kActs = ActsTiles::rows;
  const uint8_t* base;
  size_t gb, nb;
  uint8_t* scratch;  // one pass of a group in K's AMX form
  void weights(size_t g, size_t b0, size_t b1, uint16_t* hi, uint16_t*) const {
    amx_pass<K>(base + g * gb, b0, b1, nb, scratch);
    bf16_weights<K::kAmx>(scratch, b1 - b0, hi);
  }
  static void acts(const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1, uint16_t* out, uint16_t*) {
    bf16_acts(x, n_tok, n_cols, t0, t1, out);
  }
};
// Packed F16 / BF16: the rows' pieces side by side as A tiles, the activations transposed.
template <bool kBf16>
struct H16Tiles {
  static constexpr bool kWeightsA = true, kLo = !kBf16, kXLo = true;
  static constexpr ActsTiles kActs = ActsTiles::pairs;
  const uint8_t* base;
  size_t gb;
  void weights(size_t g, size_t b0, size_t b1, uint16_t* hi, uint16_t* lo) const {
    h16_weights<kBf16>(base + g * gb, gb / 4, b0, b1, hi, lo);
  }
  static void acts(const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1, uint16_t* out, uint16_t* lo) {
    h16_acts(x, n_tok, n_cols, t0, t1, out, lo);
  }
};

// Rows [rb, re) of y for a's tokens on the AMX tiles in form f: chunks of tiles of 16 tokens, pairs
// of groups, column passes of kAmxPass blocks whose weights are converted once and serve every
// tile pair of the chunk. The activations' tiles are a.tiles where the caller made them in this
// form (quant.h make_acts_tiles: one chunk, the same values), else converted here a chunk at a time.
constexpr size_t kAmxPass = 16;  // blocks a column pass (a multiple of 8: the super-block types)
template <class T>
void amx_run(const T& f, const QuantizedActs& a, float* y, size_t ldy, size_t rb, size_t re) {
  const size_t nb = a.n_cols / 32, n_tok = a.n_tok, n_cols = a.n_cols;
  const size_t g0 = rb / kG, g1 = (re + kG - 1) / kG;
  const size_t n_tiles = (n_tok + 15) / 16;
  constexpr size_t kLoOfs = 2 * kAmxPass * 512;  // F16: the lo tiles after both groups' hi tiles
  const bool given = a.tiles != nullptr && a.tiles_form == T::kActs;
  // Chunks of tiles of at most 2 MiB of bf16 activations: 128 tokens (the engine's CPU batch) at
  // 8192 columns in one chunk, so each weight is converted once a call. Cold 2048 x 8192, 128
  // tokens: 1.15-1.2x the rate of 1 MiB chunks (two of them); 4 MiB level; 8192 x 2048 level.
  const size_t per_chunk = given ? n_tiles : std::max<size_t>(1, (size_t{2} << 20) / (32 * n_cols));
  ScratchArray<uint16_t> xb{kScratchBf16Acts}, wb{kScratchBf16Rows};
  ScratchArray<float> part{kScratchRows};
  wb.resize(2 * kLoOfs);
  const size_t chunk_values = 16 * std::min(per_chunk, n_tiles) * n_cols;
  if (!given) xb.resize((T::kXLo ? 2 : 1) * chunk_values);
  const size_t x_lo = given ? a.tiles_lo : chunk_values;  // the lo tiles, this many words after the hi ones (kXLo)
  part.resize(512 * std::min(per_chunk, n_tiles));
  amx_load_config(amx_config());
  for (size_t c0 = 0; c0 < n_tiles; c0 += per_chunk) {
    const size_t c1 = std::min(n_tiles, c0 + per_chunk);
    if (!given) T::acts(a.x, n_tok, n_cols, 16 * c0, 16 * c1, xb.data(), xb.data() + (T::kXLo ? chunk_values : 0));
    const uint16_t* x_tiles = given ? a.tiles : xb.data();
    for (size_t g = g0; g < g1; g += 2) {
      const int ng = g + 1 < g1 ? 2 : 1;
      for (size_t b0 = 0; b0 < nb; b0 += kAmxPass) {
        const size_t b1 = std::min(nb, b0 + kAmxPass);
        for (int j = 0; j < ng; ++j) {
          f.weights(g + j, b0, b1, wb.data() + j * kAmxPass * 512, wb.data() + kLoOfs + j * kAmxPass * 512);
        }
        for (size_t i = c0; i < c1; i += 2) {
          const uint16_t* xa = x_tiles + 16 * (i - c0) * n_cols + 512 * b0;
          float* pt = part.data() + 512 * (i - c0);
          const size_t xs = 16 * n_cols, ws = kAmxPass * 512, n = b1 - b0;
          const int nt = i + 1 < c1 ? 2 : 1;
          amx_tiles_n<T::kWeightsA, T::kLo, T::kXLo>(ng, nt, wb.data(), ws, kLoOfs, xa, xs, x_lo, n, pt, b0 == 0);
        }
      }
      for (int j = 0; j < ng; ++j) {  // the groups' sums to y ([row][token] ones transposed first)
        const __mmask16 mask = group_mask(g + j, rb, re);
        for (size_t i = c0; i < c1; ++i) {
          const size_t t0 = 16 * i, m = std::min<size_t>(16, n_tok - t0);
          const float* pt = part.data() + 512 * (i - c0) + 256 * j;
          __m512i v[16];
          for (int r = 0; r < 16; ++r) v[r] = _mm512_load_si512(pt + 16 * r);
          if constexpr (T::kWeightsA) transpose16(v);
          for (size_t t = 0; t < m; ++t) {
            _mm512_mask_storeu_ps(y + (t0 + t) * ldy + (g + j) * kG, mask, _mm512_castsi512_ps(v[t]));
          }
        }
      }
    }
  }
  amx_release();
}

template <class K>
void amx_k(const WeightView& w, const QuantizedActs& a, float* y, size_t ldy, size_t rb, size_t re) {
  ScratchArray<uint8_t> scratch{kScratchUnpacked};
  scratch.resize(kAmxPass * amx_bytes(K::kAmx));
  const QuantTiles<K> f{static_cast<const uint8_t*>(w.packed), packed::group_bytes(w.type, w.n_cols), a.n_cols / 32,
                        scratch.data()};
  amx_run(f, a, y, ldy, rb, re);
}

// Prefill on packed F16 / BF16 (n_cols a multiple of 32).
template <bool kBf16>
void amx_h16_k(const WeightView& w, const QuantizedActs& a, float* y, size_t ldy, size_t rb, size_t re) {
  amx_run(H16Tiles<kBf16>{static_cast<const uint8_t*>(w.packed), packed::group_bytes(w.type, w.n_cols)}, a, y, ldy, rb,
          re);
}

// Prefill takes the AMX tiles from this many tokens (a tile is 16), where a pass's conversion to
// bf16 serves two tiles or more (quant.h).
constexpr size_t kAmxMinTokens = kAmxPrefillMinTokens;
// F16 / BF16 from 16 (against the FMA products; the eval f16 file's prompts, one thread): 4 tokens
// 0.6-0.7x, 8 level, 16 1.7-1.9x, 24 1.9-2.2x.
constexpr size_t kAmxMinTokensH16 = 16;

// One token: its interleaved layout is its own, so only ofs / xs are made.
template <class K>
void decode_k(const WeightView& w, const QuantizedActs& a, float* y, size_t ldy, size_t rb, size_t re) {
  const size_t nb = a.n_cols / 32;
  const size_t gb = packed::group_bytes(w.type, w.n_cols);
  const auto* base = static_cast<const uint8_t*>(w.packed);
  ScratchArray<int32_t> ofs{kScratchOfs};
  ScratchArray<float> xs{kScratchSums};
  ofs.resize(ofs_words<K>(nb));
  xs.resize(nb);
  block_terms<K>(a, 0, nb, ofs.data(), xs.data());
  const TileActs one{a.q, a.d, ofs.data(), xs.data(), nb};
  size_t g = rb / kG;
  const size_t g_end = (re + kG - 1) / kG;
  if constexpr (requires { K::kStreams; }) {
    // Two groups at a time, one from each half of the range: two long streams (K::one_token).
    const size_t half = (g_end - g) / 2;
    for (size_t i = 0; i < half; ++i) {
      const size_t ga = g + i, gb2 = g + half + i;
      __m512 acc[2][1] = {{_mm512_setzero_ps()}, {_mm512_setzero_ps()}};
      K::template one_token<2>({base + ga * gb, base + gb2 * gb}, one, acc);
      _mm512_mask_storeu_ps(y + ga * kG, group_mask(ga, rb, re), acc[0][0]);
      _mm512_mask_storeu_ps(y + gb2 * kG, group_mask(gb2, rb, re), acc[1][0]);
    }
    g += 2 * half;  // an odd count's last group
  }
  for (; g < g_end; ++g) {
    tile<K, 1>(base + g * gb, one, y, ldy, g * kG, group_mask(g, rb, re), false);
  }
}

// Whether a call of n_tok tokens on a packed int8-code type (K) runs on the AMX tiles.
inline bool k_on_tiles(size_t n_tok) { return n_tok >= kAmxMinTokens && amx_prefill(); }

// Token tiles (prefill) of one matrix (kSwiglu false: y = w·x), or of SwiGLU's two (kSwiglu: w is gate,
// base2 up's packed codes of the same type and shape, y = SiLU(gate·x)·(up·x) and y2 up's scratch,
// both ldy apart; pair tiles only). False where kSwiglu finds no fused form (one token, the AMX
// tiles, rows too short for pair tiles): the caller then runs the products one at a time.
template <class K, bool kSwiglu>
bool tiles_k(const WeightView& w, const uint8_t* base2, const QuantizedActs& a, float* y, float* y2, size_t ldy,
             size_t rb, size_t re) {
  const size_t nb = a.n_cols / 32, n_tok = a.n_tok, n_ofs = ofs_words<K>(nb);
  const size_t gb = packed::group_bytes(w.type, w.n_cols);
  const auto* base = static_cast<const uint8_t*>(w.packed);
  const size_t g0 = rb / kG, g1 = (re + kG - 1) / kG;
  const bool pairs = pair_tiles<K>() && nb >= pair_min_blocks<K>() && pair_tiles_allowed();
  if (kSwiglu && (n_tok == 1 || k_on_tiles(n_tok) || !pairs)) return false;
  ScratchArray<int32_t> xi{kScratchActs}, ofs{kScratchOfs}, tmp_ofs{kScratchOfsOne};
  ScratchArray<float> dxi{kScratchActScale}, xs{kScratchSums}, tmp_xs{kScratchSumsOne};
  ScratchArray<uint8_t> scratch{kScratchUnpacked};  // one column pass of a group, unpacked (!kDirect prefill)
  ofs.resize(n_tok * n_ofs);
  xs.resize(n_tok * nb);
  // m tiles of at most kTMax tokens (pair types: kTPair), as even as can be (65 tokens: 9 tiles of
  // 7-8, not 8 of 8 and one of 1): tile i holds tokens [i·n/m, (i+1)·n/m).
  const size_t tile_max = pairs ? kTPair : kTMax;
  const size_t n_tiles = (n_tok + tile_max - 1) / tile_max;
  auto tile_begin = [&](size_t i) { return i * n_tok / n_tiles; };
  // Every token's activations re-laid per tile (a few ops per value, once per call).
  xi.resize(n_tok * nb * 8);
  dxi.resize(n_tok * nb);
  const size_t pair_pass = std::min(nb, kPairPassMax);  // blocks of each group's unpacked pass (pair tiles)
  if constexpr (pair_unpacked<K>()) scratch.resize(std::max(kPass, 2 * pair_pass) * Unpacked<K::kForm>::kBytes);
  tmp_ofs.resize(kTMax * n_ofs);  // a tile's tokens' terms, a row each, before they are interleaved
  tmp_xs.resize(kTMax * nb);
  for (size_t i = 0; i < n_tiles; ++i) {
    const size_t t0 = tile_begin(i), T = tile_begin(i + 1) - t0;
    interleave(a.q + t0 * a.n_cols, a.n_cols, nb * 8, T, xi.data() + t0 * nb * 8);
    interleave(a.d + t0 * nb, 4 * nb, nb, T, reinterpret_cast<int32_t*>(dxi.data() + t0 * nb));
    for (size_t t = 0; t < T; ++t) block_terms<K>(a, t0 + t, nb, tmp_ofs.data() + t * n_ofs, tmp_xs.data() + t * nb);
    if constexpr (K::kOfs == 0) {  // the terms block_terms makes: xs, else ofs
      interleave(tmp_xs.data(), 4 * nb, nb, T, reinterpret_cast<int32_t*>(xs.data() + t0 * nb));
    } else {
      interleave(tmp_ofs.data(), 4 * n_ofs, n_ofs, T, ofs.data() + t0 * n_ofs);
    }
  }
  auto acts = [&](size_t t0) {  // the tile that starts at token t0
    return TileActs{reinterpret_cast<const int8_t*>(xi.data() + t0 * nb * 8), dxi.data() + t0 * nb,
                    ofs.data() + t0 * n_ofs, xs.data() + t0 * nb, nb};
  };
  // Tiles in chunks whose int8 activations stay in L2 while each group's weights are reused. The
  // next group's weights are prefetched while this group's tiles run: a whole model reads its
  // weights from DRAM, and the first tile of a group waited for them (packed_bench, weights out of
  // the L3: Q4_K +17-34%, Q5_0 +8-12%, Q8_0 +3-8%, Q5_K/Q6_K 8192x2048 +5-10%).
  const size_t per_chunk = std::max<size_t>(1, (size_t{1} << 19) / a.n_cols / tile_max);
  const bool stream = stream_outputs(y, ldy, n_tok, re - rb);
  // The unpacked types: the tile of tokens from t over the column pass [b0, b1).
  auto pass_acts = [&](size_t t, size_t T, size_t b0, size_t b1) {
    TileActs pa = acts(t);
    pa.x += 4 * 8 * b0 * T, pa.dx += b0 * T, pa.ofs += (K::kOfs == 2 ? 2 : 1) * b0 * T, pa.xs += b0 * T;
    pa.nb = b1 - b0;
    return pa;
  };
  // The columns [b0, b1) of the group at p into L1 (the unpacked types: the next group's pass).
  auto prefetch_columns = [&](const uint8_t* p, size_t b0, size_t b1) {
    prefetch_lines(p, b0 * gb / nb, b1 * gb / nb);
  };
  for (size_t c0 = 0; c0 < n_tiles; c0 += per_chunk) {
    const size_t c1 = std::min(n_tiles, c0 + per_chunk);
    for (size_t g = g0; g < g1; ++g) {
      const __mmask16 mask = group_mask(g, rb, re);
      if constexpr (pair_tiles<K>()) {
        // Groups g and g + 1 in pair tiles (kSwiglu: group g of gate and of up), the next pair's
        // weights read ahead: pair_at(r, k) is member r of the k-th pair on from this one (null past g1).
        if (pairs && (kSwiglu || g + 1 < g1)) {
          auto pair_at = [&](size_t r, size_t k) -> const uint8_t* {
            const size_t gg = kSwiglu ? g + k : g + 2 * k + r;
            return gg < g1 ? (kSwiglu && r == 1 ? base2 : base) + gg * gb : nullptr;
          };
          const __mmask16 masks[2] = {mask, kSwiglu ? mask : group_mask(g + 1, rb, re)};
          auto outs = [&](size_t t, float* (&yr)[2]) {
            yr[0] = y + t * ldy + g * kG;
            yr[1] = kSwiglu ? y2 + t * ldy + g * kG : yr[0] + kG;
          };
          const size_t n = c1 - c0, half = n / 2;
          if constexpr (!pair_unpacked<K>()) {
            const uint8_t* pair[2] = {pair_at(0, 0), pair_at(1, 0)};
            // Each tile asks for its share of the next pair's bytes: one range (g + 2, g + 3 follow
            // each other), or for SwiGLU the next gate group over the first half of the tiles and
            // the next up group over the second (one tile: both in a burst).
            const uint8_t* next = pair_at(0, 1);
            const size_t ahead = kSwiglu ? gb : std::min<size_t>(2, g1 - (g + 2)) * gb;
            if (kSwiglu && n == 1 && next != nullptr) {
              prefetch_lines(next, 0, gb);
              prefetch_lines(pair_at(1, 1), 0, gb);
            }
            for (size_t i = c0; i < c1; ++i) {
              const size_t t = tile_begin(i), k = i - c0;
              TileActs ta = acts(t);
              if (!kSwiglu) {
                ta = with_share(ta, next, ahead, k, n);
              } else if (next != nullptr && n > 1) {
                ta = k < half ? with_share(ta, next, ahead, k, half)
                              : with_share(ta, pair_at(1, 1), ahead, k - half, n - half);
              }
              float* yr[2];
              outs(t, yr);
              pair_tile_impl<K, kSwiglu>(std::make_integer_sequence<int, kTPair>{}, tile_begin(i + 1) - t, pair, ta, yr,
                                         ldy, masks, true, true, stream);
            }
          } else {
            // Both groups' column passes unpacked side by side, pair_pass blocks each (whole rows up to
            // kPairPassMax), once for every tile.
            uint8_t* const out[2] = {scratch.data(), scratch.data() + pair_pass * Unpacked<K::kForm>::kBytes};
            const uint8_t* const pass[2] = {out[0], out[1]};
            // The same columns of the next pair are read ahead over the pass's tiles: its first member's
            // in the first half of the tiles, its second's in the second (one tile: in a burst).
            for (size_t b0 = 0; b0 < nb; b0 += pair_pass) {
              const size_t b1 = std::min(nb, b0 + pair_pass), cols = b0 * gb / nb, len = b1 * gb / nb - cols;
              for (size_t r = 0; r < 2; ++r) {
                K::unpack(pair_at(r, 0), b0, b1, nb, out[r]);
                if (n == 1 && pair_at(r, 1) != nullptr) prefetch_columns(pair_at(r, 1), b0, b1);
              }
              for (size_t i = c0; i < c1; ++i) {
                const size_t t = tile_begin(i), T = tile_begin(i + 1) - t, k = i - c0, r = k < half ? 0 : 1;
                TileActs pa = pass_acts(t, T, b0, b1);
                if (n > 1 && pair_at(r, 1) != nullptr) {
                  const size_t j = r == 0 ? k : k - half, m = r == 0 ? half : n - half;
                  pa = with_share(pa, pair_at(r, 1) + cols, len, j, m);
                }
                float* yr[2];
                outs(t, yr);
                const bool one_pass = b0 == 0 && b1 == nb;
                pair_tile_impl<Unpacked<K::kForm>, kSwiglu>(std::make_integer_sequence<int, kTPair>{}, T, pass, pa, yr,
                                                            ldy, masks, b0 == 0, b1 == nb, stream && one_pass);
              }
            }
          }
          if (!kSwiglu) ++g;
          continue;
        }
      }
      if constexpr (K::kDirect) {
        for (size_t i = c0; i < c1; ++i) {
          // the next group's weights, a share before each tile (see below)
          if (g + 1 < g1) prefetch_share(base + (g + 1) * gb, gb, i - c0, c1 - c0);
          const size_t t = tile_begin(i);
          tile_t<K>(tile_begin(i + 1) - t, base + g * gb, acts(t), y + t * ldy, ldy, g * kG, mask, stream);
        }
      } else {
        // Column passes of kPass blocks, so that the pass's unpacked codes stay in L1 for every tile.
        for (size_t b0 = 0; b0 < nb; b0 += kPass) {
          const size_t b1 = std::min(nb, b0 + kPass);
          K::unpack(base + g * gb, b0, b1, nb, scratch.data());
          if (g + 1 < g1) prefetch_columns(base + (g + 1) * gb, b0, b1);  // the same columns of the next group
          for (size_t i = c0; i < c1; ++i) {
            const size_t t = tile_begin(i), T = tile_begin(i + 1) - t;
            tile_pass_impl<Unpacked<K::kForm>>(std::make_integer_sequence<int, kTMax>{}, T, scratch.data(),
                                               pass_acts(t, T, b0, b1), y + t * ldy, ldy, g * kG, mask, b0 == 0,
                                               stream && b0 == 0 && b1 == nb);
          }
        }
      }
    }
  }
  if (stream) _mm_sfence();  // the non-temporal stores ordered before the pool's join (see stream_outputs())
  return true;
}

template <class K>
void matmul_k(const WeightView& w, const QuantizedActs& a, float* y, size_t ldy, size_t rb, size_t re) {
  if (a.n_tok == 1) return decode_k<K>(w, a, y, ldy, rb, re);
  if (k_on_tiles(a.n_tok)) return amx_k<K>(w, a, y, ldy, rb, re);
  tiles_k<K, false>(w, nullptr, a, y, nullptr, ldy, rb, re);
}

template <class K>
bool swiglu_k(const WeightView& gate, const WeightView& up, const QuantizedActs& a, float* h, float* up_out,
              size_t ldh, size_t rb, size_t re) {
  return tiles_k<K, true>(gate, static_cast<const uint8_t*>(up.packed), a, h, up_out, ldh, rb, re);
}

// The light types (Q8_0, Q4_0, Q4_1, IQ4_NL): one token through KQuiet, their pass without the software
// read-ahead, where light_read_ahead() (quant.h) says so; otherwise K as every type.
template <class K, class KQuiet>
void light_k(const WeightView& w, const QuantizedActs& a, float* y, size_t ldy, size_t rb, size_t re) {
  if (a.n_tok == 1 && !light_read_ahead()) return decode_k<KQuiet>(w, a, y, ldy, rb, re);
  matmul_k<K>(w, a, y, ldy, rb, re);
}

// fn(K{}, KQuiet{}) for the kernels of packed type t: K for prompts, KQuiet for one token where
// light_read_ahead() says so (the light types' pass without the read-ahead; the others' own K, so that
// light_k<K, K> is matmul_k<K>). False for a type with no kernel here (fn is not called).
template <class Fn>
bool with_kernels(DType t, Fn&& fn) {
  switch (t) {
    case DType::q8_0: return fn(Q8_0<>{}, Q8_0<false>{});
    case DType::q4_0: return fn(Q45_01<false, false>{}, Q45_01<false, false, false>{});
    case DType::iq4_nl: return fn(Iq4Nl<>{}, Iq4Nl<false>{});
    case DType::q5_0: return fn(Q45_01<true, false>{}, Q45_01<true, false>{});
    case DType::q4_1: return fn(Q45_01<false, true>{}, Q45_01<false, true, false>{});
    case DType::q5_1: return fn(Q45_01<true, true>{}, Q45_01<true, true>{});
    case DType::q4_k: return fn(Q45_K<false>{}, Q45_K<false>{});
    case DType::q5_k: return fn(Q45_K<true>{}, Q45_K<true>{});
    case DType::q6_k: return fn(Q6_K{}, Q6_K{});
    case DType::q3_k: return fn(Q3_K{}, Q3_K{});
    case DType::q2_k: return fn(Q2_K{}, Q2_K{});
    case DType::iq4_xs: return fn(IQ4_XS{}, IQ4_XS{});
    default: return false;  // f16/bf16 (the AMX tiles or the unpacked path), or no packed form
  }
}

#undef ALAP_INLINE

}  // namespace

namespace {
inline bool is_h16(DType t) { return t == DType::f16 || t == DType::bf16; }
// Whether matmul_packed takes the tiles for n_tok tokens on a matrix it multiplies (n_rows a
// multiple of kG, a packed layout of its type).
bool tiles_take(const WeightView& w, size_t n_tok) {
  if (is_h16(w.type)) return n_tok >= kAmxMinTokensH16 && amx_prefill() && w.n_cols % 32 == 0;
  return k_on_tiles(n_tok);  // every other packed type is a K of matmul_packed's switch (matmul_k)
}
}  // namespace

ActsTiles packed_tiles_form(const WeightView& w, size_t n_tok) {
  if (w.n_rows % kG != 0 || packed::group_bytes(w.type, w.n_cols) == 0 || !tiles_take(w, n_tok)) return ActsTiles::none;
  return is_h16(w.type) ? H16Tiles<false>::kActs : QuantTiles<Q8_0<>>::kActs;  // amx_run's forms (every K's alike)
}

void make_acts_tiles(ActsTiles f, const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1,
                     uint16_t* out) {
  const size_t n_pad = 16 * ((n_tok + 15) / 16), end = std::min(n_pad, 16 * ((t1 + 15) / 16));
  if (f == ActsTiles::rows) bf16_acts(x, n_tok, n_cols, t0, end, out + t0 * n_cols);
  if (f == ActsTiles::pairs) h16_acts(x, n_tok, n_cols, t0, end, out + t0 * n_cols, out + (n_pad + t0) * n_cols);
}

bool matmul_packed(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                   size_t row_end) {
  if (w.n_rows % kG != 0 || packed::group_bytes(w.type, w.n_cols) == 0) return false;
  const bool tiles = tiles_take(w, x.n_tok);
  if (tiles && is_h16(w.type)) {
    w.type == DType::bf16 ? amx_h16_k<true>(w, x, y, ldy, row_begin, row_end)
                          : amx_h16_k<false>(w, x, y, ldy, row_begin, row_end);
    return true;
  }
  if (x.q == nullptr && !tiles) return false;  // without int8 blocks only the tiles run (reads_int8_acts, quant.h)
  return with_kernels(w.type, [&](auto k, auto quiet) {
    light_k<decltype(k), decltype(quiet)>(w, x, y, ldy, row_begin, row_end);
    return true;
  });
}

bool matmul_swiglu_packed(const WeightView& gate, const WeightView& up, const QuantizedActs& x, float* h, float* up_out,
                          size_t ldh, size_t row_begin, size_t row_end) {
  if (gate.n_rows % kG != 0 || packed::group_bytes(gate.type, gate.n_cols) == 0) return false;
  return with_kernels(gate.type, [&](auto k, auto) {
    return swiglu_k<decltype(k)>(gate, up, x, h, up_out, ldh, row_begin, row_end);
  });
}

}  // namespace alap::kernels::avx512vnni
