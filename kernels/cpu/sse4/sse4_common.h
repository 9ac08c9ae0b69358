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

// fp16 → f32, exactly, without F16C and with no subnormal f32 anywhere: an f32 multiply or add
// with a subnormal operand takes a microcode assist (measured on this Zen 5: 36 ns a vector of four
// against 0.6; ~1% of f16 weights are subnormal in fp16), so the usual "exponent and mantissa times
// 2^112" form is not used. In steps:
//   f16_split (8 values in 16-bit lanes, once): em = the value without its sign; top = the sign,
//     and f32's all-ones exponent (0x7F80 in the high half) where em is inf or NaN;
//   f16_join (4 values, em and top in the high halves of 32-bit lanes): em << 13 rebiased by
//     112 << 23 in integers is the f32 of every normal fp16; for exponent 0 (zero, subnormal) the
//     rebias is 113 << 23 and 2^-14 comes off in f32 (2^-14·(1 + m/1024) − 2^-14 = m·2^-24,
//     exact by Sterbenz); infinities and NaNs keep their mantissa under the all-ones exponent of
//     top (143 | 255 = 255); then the sign. Matches fp16_to_f32 on all 65536 patterns (NaN
//     payloads included; signalling NaNs come out quiet, as with F16C).
inline void f16_split(__m128i h, __m128i& em, __m128i& top) {
  const __m128i sign = _mm_and_si128(h, _mm_set1_epi16(static_cast<short>(0x8000)));
  em = _mm_xor_si128(h, sign);
  top = _mm_or_si128(sign, _mm_and_si128(_mm_cmpgt_epi16(em, _mm_set1_epi16(0x7BFF)), _mm_set1_epi16(0x7F80)));
}

inline __m128 f16_join(__m128i em_hi, __m128i top_hi) {
  const __m128i moved = _mm_srli_epi32(em_hi, 3);                                // em << 13
  const __m128i exp0 = _mm_cmpgt_epi32(_mm_set1_epi32(0x00800000), moved);     // em < 0x400
  const __m128i rebias = _mm_add_epi32(_mm_set1_epi32(112 << 23), _mm_and_si128(exp0, _mm_set1_epi32(1 << 23)));
  const __m128 mag = _mm_sub_ps(_mm_castsi128_ps(_mm_add_epi32(moved, rebias)),
                                _mm_castsi128_ps(_mm_and_si128(exp0, _mm_set1_epi32(0x38800000))));  // 2^-14
  return _mm_or_ps(mag, _mm_castsi128_ps(top_hi));
}

// The fp16 values of the 16-bit lanes 0-3 of h as f32.
inline __m128 f16_words4(__m128i h) {
  __m128i em, top;
  f16_split(h, em, top);
  const __m128i z = _mm_setzero_si128();
  return f16_join(_mm_unpacklo_epi16(z, em), _mm_unpacklo_epi16(z, top));
}

// 4 consecutive fp16 values at p as f32.
inline __m128 f16x4(const void* p) { return f16_words4(_mm_loadl_epi64(static_cast<const __m128i*>(p))); }

// 8 consecutive fp16 values at p as f32 (lo: values 0-3, hi: 4-7).
inline void f16x8(const void* p, __m128& lo, __m128& hi) {
  __m128i em, top;
  f16_split(_mm_loadu_si128(static_cast<const __m128i*>(p)), em, top);
  const __m128i z = _mm_setzero_si128();
  lo = f16_join(_mm_unpacklo_epi16(z, em), _mm_unpacklo_epi16(z, top));
  hi = f16_join(_mm_unpackhi_epi16(z, em), _mm_unpackhi_epi16(z, top));
}

// One fp16 value at p as f32. Normal values (exponent 1-30: every scale in practice) in integer
// steps, the exponent rebiased by 112; zero, subnormals, infinities and NaNs through f16_words4.
inline float f16_at(const void* p) {
  uint16_t h;
  std::memcpy(&h, p, 2);
  const uint32_t e = h & 0x7C00u;
  if (e != 0 && e != 0x7C00u) [[likely]] {
    const uint32_t bits = (((h & 0x7FFFu) << 13) + (112u << 23)) | ((h & 0x8000u) << 16);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  return _mm_cvtss_f32(f16_words4(_mm_cvtsi32_si128(h)));
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

// [Σ a, Σ b, Σ c, Σ d] of four vectors of 4 int32 (exact).
inline __m128i hsum4_epi32(__m128i a, __m128i b, __m128i c, __m128i d) {
  return _mm_hadd_epi32(_mm_hadd_epi32(a, b), _mm_hadd_epi32(c, d));
}

inline __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// Σ u·s over 16 byte lanes as 4 int32, u unsigned, s signed, every pair |u0·s0 + u1·s1| < 2^15
// (pmaddubsw saturates beyond).
inline __m128i dot_u8s8(__m128i u, __m128i s) { return _mm_madd_epi16(_mm_maddubs_epi16(u, s), _mm_set1_epi16(1)); }

// Σ w·x for two signed int8 vectors (|w| <= 128, |x| <= 127): |w| times x with w's sign.
inline __m128i dot_s8s8(__m128i w, __m128i x) { return dot_u8s8(_mm_sign_epi8(w, w), _mm_sign_epi8(x, w)); }

}  // namespace
}  // namespace alap::kernels::sse4
