// The AMX tile unit as the AVX-512-compiled kernels use it: the tile configuration, the tile
// instructions, the bf16 split of f32 values and the tile loop of the bf16 products. Shared by the
// prefill products (packed_vnni.cpp) and the prompt attention tiles (attn_amx.cpp). In an anonymous
// namespace, like transpose_avx512.h: every ISA file gets its own copy, never a weak symbol
// (isa_weak_symbols_check.sh). Include only from files compiled with the AVX-512 flags; run only
// where amx_prefill() (quant.h) holds.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace alap::kernels::avx512vnni {
namespace {

struct alignas(64) AmxConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};
// Tiles: C (sums) tmm0-3, A tmm4-5, B tmm6-7 (amx_tiles says which operand holds the weights),
// each 16 rows of 64 bytes. An unconfigured tile faults.
inline AmxConfig amx_config() {
  AmxConfig c;
  for (int i = 0; i < 8; ++i) c.rows[i] = 16, c.colsb[i] = 64;
  return c;
}
// The tile instructions as GCC's AT&T syntax spells them; every load and store names memory.
inline void amx_load_config(const AmxConfig& c) { __asm__ volatile("ldtilecfg %0" : : "m"(c) : "memory"); }
inline void amx_release() { __asm__ volatile("tilerelease" : : : "memory"); }
template <int N>
inline void amx_zero() {
  __asm__ volatile("tilezero %%tmm%c0" : : "i"(N));
}
template <int N>
inline void amx_load(const void* p, size_t stride) {
  __asm__ volatile("tileloadd (%0,%1,1), %%tmm%c2" : : "r"(p), "r"(stride), "i"(N) : "memory");
}
template <int N>
inline void amx_store(void* p, size_t stride = 64) {
  __asm__ volatile("tilestored %%tmm%c2, (%0,%1,1)" : : "r"(p), "r"(stride), "i"(N) : "memory");
}
template <int C, int A, int B>
inline void amx_dot() {  // C += A · B, bf16 pairs into f32
  __asm__ volatile("tdpbf16ps %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
}
template <int C, int A, int B>
inline void amx_dot_i8() {  // C += A · B, signed bytes by signed bytes in fours into int32 (AMX-INT8)
  __asm__ volatile("tdpbssd %%tmm%c2, %%tmm%c1, %%tmm%c0" : : "i"(C), "i"(A), "i"(B));
}

// hi = bf16(v) of 32 f32 values (v1 the upper 16) and lo = bf16(v − hi), 32 words each.
__attribute__((target("avx512bf16"))) inline void bf16_split(__m512 v0, __m512 v1, __m512i& hi, __m512i& lo) {
  hi = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(v1, v0));
  // hi as f32: each bf16 word in the top half of its lane
  const __m512 h0 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_castsi512_si256(hi)), 16));
  const __m512 h1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(hi, 1)), 16));
  lo = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(_mm512_sub_ps(v1, h1), _mm512_sub_ps(v0, h0)));
}

// The tile loop of the bf16 products (the prefill's two forms, and the prompt attention tiles).
// NG groups × NT tiles of 16 tokens over n_blocks blocks: C tile 2j + t (group j, tile t) starts
// at zero (first) or from part + 256·(2t + j) and goes back there. Group j's weight tiles at
// wa + j·wstride (kLo: its lo tiles lstride on), tile t's activation tiles at xa + t·xstride
// (kXLo: their lo tiles xlstride on), 512 values a block; the products hi·hi, then lo·hi (kLo)
// and hi·lo (kXLo). kWeightsA: the weights are the A operand (tmm4 + j; the sums [row][token]),
// else the B operand (tmm6 + j, the activations tmm4 + t; the sums [token][row]).
template <int NG, int NT, bool kWeightsA, bool kLo, bool kXLo>
__attribute__((always_inline)) inline void amx_tiles(const uint16_t* wa, size_t wstride, size_t lstride,
                                                     const uint16_t* xa, size_t xstride, size_t xlstride,
                                                     size_t n_blocks, float* part, bool first) {
  constexpr int W = kWeightsA ? 4 : 6, X = kWeightsA ? 6 : 4;
  auto each = [&](auto&& f) {
    f(std::integral_constant<int, 0>{}, std::integral_constant<int, 0>{});
    if constexpr (NT > 1) f(std::integral_constant<int, 0>{}, std::integral_constant<int, 1>{});
    if constexpr (NG > 1) f(std::integral_constant<int, 1>{}, std::integral_constant<int, 0>{});
    if constexpr (NG > 1 && NT > 1) f(std::integral_constant<int, 1>{}, std::integral_constant<int, 1>{});
  };
  auto dots = [&] {
    each([&](auto j, auto t) {
      if constexpr (kWeightsA) {
        amx_dot<2 * j + t, W + j, X + t>();
      } else {
        amx_dot<2 * j + t, X + t, W + j>();
      }
    });
  };
  each([&](auto j, auto t) {
    if (first) {
      amx_zero<2 * j + t>();
    } else {
      amx_load<2 * j + t>(part + 256 * (2 * t + j), 64);
    }
  });
  auto weights = [&](size_t o) {
    amx_load<W>(wa + o, 64);
    if constexpr (NG > 1) amx_load<W + 1>(wa + wstride + o, 64);
  };
  auto acts = [&](size_t o) {
    amx_load<X>(xa + o, 64);
    if constexpr (NT > 1) amx_load<X + 1>(xa + xstride + o, 64);
  };
  for (size_t b = 0; b < n_blocks; ++b) {
    acts(512 * b), weights(512 * b), dots();
    if constexpr (kLo) weights(lstride + 512 * b), dots();
    if constexpr (kXLo) {
      if constexpr (kLo) weights(512 * b);
      acts(xlstride + 512 * b), dots();
    }
  }
  each([&](auto j, auto t) { amx_store<2 * j + t>(part + 256 * (2 * t + j)); });
}

// amx_tiles with ng groups and nt tiles (1 or 2 each) chosen at run time.
template <bool kWeightsA, bool kLo, bool kXLo>
__attribute__((always_inline)) inline void amx_tiles_n(int ng, int nt, const uint16_t* wa, size_t wstride,
                                                       size_t lstride, const uint16_t* xa, size_t xstride,
                                                       size_t xlstride, size_t n_blocks, float* part, bool first) {
  constexpr bool A = kWeightsA, L = kLo, XL = kXLo;
  if (ng == 2) {
    nt == 2 ? amx_tiles<2, 2, A, L, XL>(wa, wstride, lstride, xa, xstride, xlstride, n_blocks, part, first)
            : amx_tiles<2, 1, A, L, XL>(wa, wstride, lstride, xa, xstride, xlstride, n_blocks, part, first);
  } else {
    nt == 2 ? amx_tiles<1, 2, A, L, XL>(wa, wstride, lstride, xa, xstride, xlstride, n_blocks, part, first)
            : amx_tiles<1, 1, A, L, XL>(wa, wstride, lstride, xa, xstride, xlstride, n_blocks, part, first);
  }
}

}  // namespace
}  // namespace alap::kernels::avx512vnni
