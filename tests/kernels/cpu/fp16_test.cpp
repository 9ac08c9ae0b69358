#include "alap/kernels/fp16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

using namespace alap::kernels;

TEST(Fp16, KnownValues) {
  EXPECT_EQ(f32_to_fp16(0.5f), 0x3800);
  EXPECT_EQ(f32_to_fp16(0.25f), 0x3400);
  EXPECT_EQ(f32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_fp16(65520.0f), 0x7C00);  // rounds up to inf
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f32_to_fp16(std::ldexp(1.0f, -26)), 0x0000);
  EXPECT_FLOAT_EQ(fp16_to_f32(0x3800), 0.5f);
  EXPECT_FLOAT_EQ(fp16_to_f32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(fp16_to_f32(0x7C00)));
  EXPECT_TRUE(std::isnan(fp16_to_f32(0x7E00)));
}

TEST(Fp16, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = fp16_to_f32(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_fp16(f), h) << "h=" << h;
  }
}

TEST(Fp16, RoundsToNearestEven) {
  // 1 + 2^-11 lies exactly between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  EXPECT_EQ(f32_to_fp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  // 1 + 3*2^-11 lies between 1+2^-10 (odd) and 1+2^-9 (even): goes up.
  EXPECT_EQ(f32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
}

TEST(Bf16, RoundTripAndRounding) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_FLOAT_EQ(bf16_to_f32(0x3F80), 1.0f);
  // 1 + 2^-8 is a tie between 1.0 and 1 + 2^-7: rounds to even (1.0).
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()) & 0x7FC0, 0x7FC0);
}
