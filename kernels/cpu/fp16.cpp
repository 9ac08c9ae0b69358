// fp16/bf16 conversions: scalar bit manipulation (no dependency on F16C, the oracle that vectorised
// conversions are tested against), and fp16_to_f32_row with an F16C path chosen by cpuid.
#include "alap/kernels/fp16.h"

#include "cpu_features.h"

#include <immintrin.h>

#include <bit>
#include <cstring>

namespace alap::kernels {

float fp16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;  // signed zero
    } else {
      // subnormal: normalise the mantissa
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      mant &= 0x3FFu;
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mant << 13);
    }
  } else if (exp == 0x1F) {
    bits = sign | 0x7F800000u | (mant << 13);  // inf or NaN (payload kept)
  } else {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

uint16_t f32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) {  // inf or NaN
    const uint32_t mant = abs & 0x7FFFFFu;
    return static_cast<uint16_t>(sign | 0x7C00u | (mant ? (0x200u | (mant >> 13)) : 0u));
  }
  if (abs >= 0x477FF000u) {  // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7C00u);
  }
  if (abs < 0x38800000u) {  // below the smallest normal fp16 (2^-14): subnormal or zero
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // < 2^-25 rounds to zero
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14..24 for this range
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // normal: rebias the exponent and round the mantissa to 10 bits, nearest even
  uint32_t h = ((abs - 0x38000000u) >> 13);
  const uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_f32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t f32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

namespace {
// F16C conversion, 8 at a time (exact, as the scalar rule); chosen at run time by cpuid.
__attribute__((target("avx,f16c"))) void fp16_to_f32_row_f16c(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
  for (; i < n; ++i) dst[i] = fp16_to_f32(src[i]);
}
}  // namespace

void fp16_to_f32_row_scalar(const uint16_t* src, float* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(src[i]);
}

void fp16_to_f32_row(const uint16_t* src, float* dst, size_t n) {
  static const bool f16c = cpu_features().f16c;
  if (f16c) return fp16_to_f32_row_f16c(src, dst, n);
  fp16_to_f32_row_scalar(src, dst, n);
}

void f32_to_fp16_row(const float* src, uint16_t* dst, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[i] = f32_to_fp16(src[i]);
}

}  // namespace alap::kernels
