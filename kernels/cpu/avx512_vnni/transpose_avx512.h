// The 16 × 16 dword transpose shared by the AVX-512-compiled kernels (packed K in attn_vnni.cpp,
// the AMX prefill's F16 / BF16 tiles in packed_vnni.cpp). In an anonymous namespace: every ISA file
// gets its own copy, never a weak symbol (isa_weak_symbols_check.sh). Include only from files
// compiled with the AVX-512 flags.
#pragma once

#include <immintrin.h>

namespace alap::kernels::avx512vnni {
namespace {

// r[i] (row i, 16 dwords) → r[c] lane i = old r[i] lane c. Always inlined (an out-of-line call
// passes the 16 rows through memory: measured 10% of a warm k8 decode attention).
__attribute__((always_inline)) inline void transpose16(__m512i* r) {
  __m512i t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  for (int k = 0; k < 16; k += 4) {  // u[k + m], 128-bit lane L: rows k..k+3 at column 4L + m
    u[k + 0] = _mm512_unpacklo_epi64(t[k + 0], t[k + 2]);
    u[k + 1] = _mm512_unpackhi_epi64(t[k + 0], t[k + 2]);
    u[k + 2] = _mm512_unpacklo_epi64(t[k + 1], t[k + 3]);
    u[k + 3] = _mm512_unpackhi_epi64(t[k + 1], t[k + 3]);
  }
  for (int m = 0; m < 4; ++m) {  // a 4×4 transpose of 128-bit lanes
    const __m512i v0 = _mm512_shuffle_i32x4(u[m], u[4 + m], 0x44), v1 = _mm512_shuffle_i32x4(u[m], u[4 + m], 0xEE);
    const __m512i v2 = _mm512_shuffle_i32x4(u[8 + m], u[12 + m], 0x44);
    const __m512i v3 = _mm512_shuffle_i32x4(u[8 + m], u[12 + m], 0xEE);
    r[m] = _mm512_shuffle_i32x4(v0, v2, 0x88);
    r[4 + m] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
    r[8 + m] = _mm512_shuffle_i32x4(v1, v3, 0x88);
    r[12 + m] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
  }
}

}  // namespace
}  // namespace alap::kernels::avx512vnni
