// Private to kernels/cpu: helpers the SSE4 variant's files share (SSSE3 + SSE4.1, the x86-64-v2
// level: every x86-64 CPU since Intel Nehalem and AMD Bulldozer, and the Atom-class Celeron and
// Pentium Silver chips of budget laptops, which have no AVX at all). No FMA and no F16C there: fp16
// is converted with integer steps, and multiply-adds round twice. Include only from files compiled
// with -mssse3 -msse4.1. Everything here has internal linkage (an unnamed namespace), so the ISA
// objects define no weak symbols (tests/kernels/cpu/isa_weak_symbols_check.sh).
#pragma once

#include <smmintrin.h>  // SSE4.1 (and SSSE3 below it)

#include <cstdint>
#include <cstring>

namespace alap::kernels::sse4 {
namespace {

// 4 fp16 values (the low 16 bits of each 32-bit lane of h) as f32, exactly, with no subnormal f32
// anywhere (an operation on one costs a microcode assist of ~100 cycles on many x86 cores): normal
// values rebias their exponent in integers (+112 << 23 after moving exponent and mantissa to f32's
// places); zeros and subnormals are their 10-bit mantissa converted to f32 times 2^-24 (exact);
// infinities and NaNs take f32's all-ones exponent; then the sign.
inline __m128 f16_lanes_to_f32(__m128i h) {
  const __m128i em = _mm_and_si128(h, _mm_set1_epi32(0x7FFF));
  const __m128i moved = _mm_slli_epi32(em, 13);
  const __m128i normal = _mm_add_epi32(moved, _mm_set1_epi32(112 << 23));
  const __m128 small = _mm_mul_ps(_mm_cvtepi32_ps(em), _mm_set1_ps(0x1p-24f));  // exponent 0: 0 or subnormal
  const __m128i infnan = _mm_or_si128(moved, _mm_set1_epi32(0x7F800000));
  __m128i mag = _mm_blendv_epi8(normal, _mm_castps_si128(small), _mm_cmplt_epi32(em, _mm_set1_epi32(0x0400)));
  mag = _mm_blendv_epi8(mag, infnan, _mm_cmpgt_epi32(em, _mm_set1_epi32(0x7BFF)));
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  return _mm_castsi128_ps(_mm_or_si128(mag, sign));
}

// 4 consecutive fp16 values at p as f32.
inline __m128 f16x4(const void* p) {
  return f16_lanes_to_f32(_mm_cvtepu16_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(p))));
}

// 8 consecutive fp16 values at p as two f32 vectors (lo: values 0-3, hi: 4-7).
inline void f16x8(const void* p, __m128& lo, __m128& hi) {
  const __m128i h = _mm_loadu_si128(static_cast<const __m128i*>(p));
  lo = f16_lanes_to_f32(_mm_unpacklo_epi16(h, _mm_setzero_si128()));
  hi = f16_lanes_to_f32(_mm_unpackhi_epi16(h, _mm_setzero_si128()));
}

// One fp16 value at p as f32.
inline float f16_at(const void* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  return _mm_cvtss_f32(f16_lanes_to_f32(_mm_cvtsi32_si128(h)));
}

// 4 consecutive bf16 values at p as f32 (exact).
inline __m128 bf16x4(const void* p) {
  return _mm_castsi128_ps(_mm_unpacklo_epi16(_mm_setzero_si128(), _mm_loadl_epi64(static_cast<const __m128i*>(p))));
}

inline float hsum_ps(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));
  v = _mm_add_ss(v, _mm_movehdup_ps(v));
  return _mm_cvtss_f32(v);
}

inline int32_t hsum_epi32(__m128i v) {
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0x4E));
  v = _mm_add_epi32(v, _mm_shuffle_epi32(v, 0xB1));
  return _mm_cvtsi128_si32(v);
}

inline __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// Σ u·s over 16 byte lanes as 4 int32, u unsigned, s signed, every pair |u0·s0 + u1·s1| < 2^15
// (pmaddubsw saturates beyond).
inline __m128i dot_u8s8(__m128i u, __m128i s) { return _mm_madd_epi16(_mm_maddubs_epi16(u, s), _mm_set1_epi16(1)); }

// Σ w·x for two signed int8 vectors (|w| <= 128, |x| <= 127): |w| times x with w's sign.
inline __m128i dot_s8s8(__m128i w, __m128i x) { return dot_u8s8(_mm_sign_epi8(w, w), _mm_sign_epi8(x, w)); }

}  // namespace
}  // namespace alap::kernels::sse4
