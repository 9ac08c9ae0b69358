// Tests of kernels/cpu dequantisation and the reference quantisers: the FORMATS.md §2.8 worked
// Q4_K block, hand-built blocks of every type checked element by element, round-trip error bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/quant.h"

using namespace alap::kernels;

namespace {

std::vector<float> deq(DType t, const std::vector<uint8_t>& bytes, size_t n) {
  std::vector<float> y(n, -12345.0f);
  dequantize_row(t, bytes.data(), y.data(), n);
  return y;
}

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v & 0xFF);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}

}  // namespace

TEST(Dequant, WorkedQ4KBlockOfFormatsMd) {
  std::vector<uint8_t> b(144);
  b[0] = 0x00; b[1] = 0x38;  // d = 0.5
  b[2] = 0x00; b[3] = 0x34;  // dmin = 0.25
  const uint8_t s[12] = {0x41, 0x02, 0x03, 0xC4, 0x81, 0x00, 0x02, 0x3F, 0x25, 0x10, 0xF7, 0x0F};
  std::memcpy(b.data() + 4, s, 12);
  for (int k = 0; k < 128; ++k) b[16 + k] = static_cast<uint8_t>(k);
  const auto y = deq(DType::q4_k, b, 256);
  const struct { int e; float y; } table[] = {
      {0, -0.25f}, {1, 0.25f},   {15, 7.25f},  {31, 7.25f},   {32, 0.0f},   {63, 1.0f},   {64, -0.5f},
      {96, -11.75f}, {127, -9.75f}, {128, -8.5f}, {160, -0.25f}, {192, -3.75f}, {224, 189.0f}, {255, 220.5f}};
  for (const auto& row : table) EXPECT_EQ(y[row.e], row.y) << "element " << row.e;
}

TEST(Dequant, PlainTypes) {
  const float src[4] = {1.5f, -2.25f, 0.0f, 65504.0f};
  std::vector<uint8_t> b32(16);
  std::memcpy(b32.data(), src, 16);
  EXPECT_EQ(deq(DType::f32, b32, 4), std::vector<float>(src, src + 4));
  std::vector<uint8_t> b16(8);
  put16(b16, 0, 0x3E00); put16(b16, 2, 0xC080); put16(b16, 4, 0x8000); put16(b16, 6, 0x7BFF);
  EXPECT_EQ(deq(DType::f16, b16, 4), (std::vector<float>{1.5f, -2.25f, -0.0f, 65504.0f}));
  std::vector<uint8_t> bb(8);
  put16(bb, 0, 0x3FC0); put16(bb, 2, 0xC010); put16(bb, 4, 0x0000); put16(bb, 6, 0x4780);
  EXPECT_EQ(deq(DType::bf16, bb, 4), (std::vector<float>{1.5f, -2.25f, 0.0f, 65536.0f}));
}

TEST(Dequant, Q4_0LowNibblesFirst) {
  std::vector<uint8_t> b(18);
  put16(b, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const auto y = deq(DType::q4_0, b, 32);
  EXPECT_EQ(y[0], -4.0f);    // nibble 0 → (0-8)/2
  EXPECT_EQ(y[15], 3.5f);    // low nibble of qs[15] = 15
  EXPECT_EQ(y[16], 3.5f);    // high nibble of qs[0] = 15
  EXPECT_EQ(y[31], -4.0f);   // high nibble of qs[15] = 0
  EXPECT_EQ(y[5], -1.5f);
  EXPECT_EQ(y[21], 1.0f);    // high nibble of qs[5] = 10
}

TEST(Dequant, Q4_1AddsMin) {
  std::vector<uint8_t> b(20);
  put16(b, 0, 0x3800);  // d = 0.5
  put16(b, 2, 0xBC00);  // m = -1
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const auto y = deq(DType::q4_1, b, 32);
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[15], 6.5f);
  EXPECT_EQ(y[16], 6.5f);
  EXPECT_EQ(y[31], -1.0f);
}

TEST(Dequant, Q5_0FifthBitIsBitEOfQh) {
  std::vector<uint8_t> b(22);
  put16(b, 0, 0x3C00);  // d = 1
  const uint32_t qh = 0x80010003u;  // elements 0, 1, 16, 31 have the 5th bit
  std::memcpy(b.data() + 2, &qh, 4);
  for (int j = 0; j < 16; ++j) b[6 + j] = static_cast<uint8_t>(j | (j << 4));
  const auto y = deq(DType::q5_0, b, 32);
  EXPECT_EQ(y[0], 0.0f);     // 0|16 - 16
  EXPECT_EQ(y[1], 1.0f);     // 1|16 - 16
  EXPECT_EQ(y[2], -14.0f);   // 2 - 16
  EXPECT_EQ(y[16], 0.0f);    // high nibble of qs[0] = 0, bit 16 set
  EXPECT_EQ(y[17], -15.0f);  // high nibble of qs[1] = 1, bit 17 clear
  EXPECT_EQ(y[31], 15.0f);   // 15|16 - 16
  EXPECT_EQ(y[15], -1.0f);
}

TEST(Dequant, Q5_1UnsignedWithMin) {
  std::vector<uint8_t> b(24);
  put16(b, 0, 0x3800);  // d = 0.5
  put16(b, 2, 0x3800);  // m = 0.5
  const uint32_t qh = 0x80000004u;  // elements 2 and 31
  std::memcpy(b.data() + 4, &qh, 4);
  for (int j = 0; j < 16; ++j) b[8 + j] = static_cast<uint8_t>(j | (j << 4));
  const auto y = deq(DType::q5_1, b, 32);
  EXPECT_EQ(y[2], 0.5f * 18 + 0.5f);
  EXPECT_EQ(y[3], 0.5f * 3 + 0.5f);
  EXPECT_EQ(y[31], 0.5f * 31 + 0.5f);
  EXPECT_EQ(y[30], 0.5f * 14 + 0.5f);
}

TEST(Dequant, Q8_0SignedBytes) {
  std::vector<uint8_t> b(34);
  put16(b, 0, 0x3400);  // d = 0.25
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  b[2 + 31] = 0x80;  // -128
  const auto y = deq(DType::q8_0, b, 32);
  EXPECT_EQ(y[0], -4.0f);
  EXPECT_EQ(y[16], 0.0f);
  EXPECT_EQ(y[30], 3.5f);
  EXPECT_EQ(y[31], -32.0f);
}

TEST(Dequant, Q2_KScaleMinNibbles) {
  std::vector<uint8_t> b(84);
  b[0] = 0x23;   // k=0: scale 3, min 2
  b[2] = 0x15;   // k=2: scale 5, min 1
  b[4] = 0xF0;   // k=4: scale 0, min 15
  b[6] = 0x0F;   // k=6: scale 15, min 0
  b[15] = 0x47;  // k=15: scale 7, min 4
  b[16 + 0] = 0xE4;  // qs[0]: g0=0 g1=1 g2=2 g3=3
  b[16 + 63] = 0x40; // qs[63]: g3 = 1
  put16(b, 80, 0x3C00);  // d = 1
  put16(b, 82, 0x3800);  // dmin = 0.5
  const auto y = deq(DType::q2_k, b, 256);
  EXPECT_EQ(y[0], -1.0f);
  EXPECT_EQ(y[32], 4.5f);
  EXPECT_EQ(y[64], -7.5f);
  EXPECT_EQ(y[96], 45.0f);
  EXPECT_EQ(y[255], 5.0f);
  EXPECT_EQ(y[1], -1.0f);  // q = 0: only the min
}

TEST(Dequant, Q3_KHmaskAndSixBitScales) {
  std::vector<uint8_t> b(110);
  uint8_t* hmask = b.data();
  uint8_t* qs = b.data() + 32;
  uint8_t* s = b.data() + 96;
  s[0] = 0xA5;   // low4 of scale 0 = 5, of scale 8 = 10
  s[8] = 0x12;   // high2 of scale 0 = 2 (bits 0-1), of scale 4 = 0, of scale 8 = 1 (bits 4-5)
  s[7] = 0xF0;   // low4 of scale 15 = 15
  s[11] = 0xC0;  // high2 of scale 15 = 3 (bits 6-7)
  qs[0] = 0x1B;  // g0=3 g1=2 g2=1 g3=0
  hmask[0] = 0x05;  // bits 0 and 2: (h0,g0) and (h0,g2) have hb = 1
  qs[32] = 0x01;    // h1 g0: q2 = 1, hmask bit 4 clear
  qs[63] = 0x80;    // h1 g3 l31: q2 = 2
  hmask[31] = 0x80; // bit 7: h1 g3
  put16(b, 108, 0x3800);  // d = 0.5
  const auto y = deq(DType::q3_k, b, 256);
  EXPECT_EQ(y[0], 0.5f * 5 * 3);        // scale (5|2<<4)-32 = 5, q = 3
  EXPECT_EQ(y[32], 0.5f * -32 * -2);    // scale 2 = -32, q = 2 - 4
  EXPECT_EQ(y[64], 0.5f * -32 * 1);     // scale 4 = -32, q = 1 (hb set)
  EXPECT_EQ(y[96], 0.5f * -32 * -4);    // scale 6 = -32, q = 0 - 4
  EXPECT_EQ(y[128], 0.5f * -6 * -3);    // scale 8 = (10|1<<4)-32 = -6, q = 1 - 4
  EXPECT_EQ(y[255], 0.5f * 31 * 2);     // scale 15 = 63-32, q = 2 (hb set)
  EXPECT_EQ(y[16], 0.5f * -32 * -4);    // scale 1 = -32, q = -4
}

TEST(Dequant, Q5_KHighBitFromQhBitJ) {
  std::vector<uint8_t> b(176);
  put16(b, 0, 0x3C00);  // d = 1
  put16(b, 2, 0x3800);  // dmin = 0.5
  const uint8_t s[12] = {0x41, 0x02, 0x03, 0xC4, 0x81, 0x00, 0x02, 0x3F, 0x25, 0x10, 0xF7, 0x0F};
  std::memcpy(b.data() + 4, s, 12);  // (sc, m) = (1,1) (2,0) (3,2) (4,63) (21,34) (0,1) (7,15) (63,0)
  b[16 + 0] = 0x81;   // qh[0]: bits 0 and 7
  b[16 + 31] = 0x02;  // qh[31]: bit 1
  for (int k = 0; k < 128; ++k) b[48 + k] = static_cast<uint8_t>(k);
  const auto y = deq(DType::q5_k, b, 256);
  EXPECT_EQ(y[0], 1.0f * 16 - 0.5f);     // j0: q 0 | 16
  EXPECT_EQ(y[31], 1.0f * 15 - 0.5f);    // j0 l31: qs[31] low = 15, no bit
  EXPECT_EQ(y[32], 0.0f);                // j1: q 0, bit 1 of qh[0] clear, m 0
  EXPECT_EQ(y[63], 2.0f * 17);           // j1 l31: qs[31] high = 1, bit 1 of qh[31]
  EXPECT_EQ(y[224], 63.0f * 22);         // j7 l0: qs[96] high = 6, bit 7 of qh[0]
  EXPECT_EQ(y[128], 21.0f * 0 - 0.5f * 34);
}

TEST(Dequant, Q6_KSignedScales) {
  std::vector<uint8_t> b(210);
  uint8_t* ql = b.data();
  uint8_t* qh = b.data() + 128;
  auto* sc = reinterpret_cast<int8_t*>(b.data() + 192);
  ql[0] = 0x21;    // e0 low nibble 1, e64 high nibble 2
  qh[0] = 0xE4;    // g0 hi 0, g1 hi 1, g2 hi 2, g3 hi 3
  ql[32] = 0x0F;   // e32 low nibble 15, e96 high nibble 0
  ql[127] = 0xA0;  // e255 high nibble 10
  qh[63] = 0x40;   // e255 (h1 g3 l31) hi = 1
  sc[0] = -3;
  sc[2] = -128;
  sc[4] = 7;
  sc[6] = 2;
  sc[15] = 5;
  put16(b, 208, 0x4000);  // d = 2
  const auto y = deq(DType::q6_k, b, 256);
  EXPECT_EQ(y[0], 2.0f * -3 * -31);
  EXPECT_EQ(y[1], 2.0f * -3 * -32);
  EXPECT_EQ(y[32], 2.0f * -128 * -1);
  EXPECT_EQ(y[64], 2.0f * 7 * 2);
  EXPECT_EQ(y[96], 2.0f * 2 * 16);
  EXPECT_EQ(y[255], 2.0f * 5 * -6);
  EXPECT_EQ(y[16], 0.0f);  // sc[1] = 0
}

// IQ4_NL: Q4_0's bytes, each code an index into FORMATS.md §2.9's table instead of code - 8.
TEST(Dequant, Iq4NlCodesIndexTheTable) {
  std::vector<uint8_t> b(18);
  put16(b, 0, 0x3800);  // d = 0.5
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  const auto y = deq(DType::iq4_nl, b, 32);
  const float table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], 0.5f * table[j]) << "element " << j;             // low nibbles first
    EXPECT_EQ(y[j + 16], 0.5f * table[15 - j]) << "element " << j + 16;
  }
  EXPECT_EQ(y[0], -63.5f);
  EXPECT_EQ(y[16], 56.5f);
}

// IQ4_XS: 6-bit sub-block scales (4 low bits in scales_l, 2 high bits in scales_h) minus 32, and
// each sub-block's 16 bytes with its first 16 values in the low nibbles.
TEST(Dequant, Iq4XsSixBitScalesAndSubBlockNibbles) {
  std::vector<uint8_t> b(136);
  put16(b, 0, 0x3400);  // d = 0.25
  put16(b, 2, 0x19AC);  // scales_h: high bits of ls = {0, 63, 32, 33, 16, 47, 31, 1}
  const uint8_t sl[4] = {0xF0, 0x10, 0xF0, 0x1F};
  std::memcpy(b.data() + 4, sl, 4);
  for (int k = 0; k < 128; ++k) b[8 + k] = static_cast<uint8_t>(k);  // sub-block s: codes 0..15, then s
  const auto y = deq(DType::iq4_xs, b, 256);
  // scales ls - 32 = {-32, 31, 0, 1, -16, 15, -1, -31}
  const struct { int e; float y; } table[] = {
      {0, 1016.0f},   {17, 1016.0f},  {37, -271.25f}, {52, -806.0f},   {71, 0.0f},    {111, 28.25f},
      {127, -16.25f}, {136, -4.0f},   {176, -131.25f}, {204, -13.25f}, {224, 984.25f}, {255, 77.5f}};
  for (const auto& row : table) EXPECT_EQ(y[row.e], row.y) << "element " << row.e;
}

TEST(Dequant, RejectsUnsupportedTypesByName) {
  std::vector<uint8_t> b(292);
  float y[256];
  try {
    dequantize_row(DType::q8_k, b.data(), y, 256);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("Q8_K"), std::string::npos) << e.what();
  }
  EXPECT_THROW(dequantize_row(DType::iq2_xxs, b.data(), y, 256), std::invalid_argument);
  EXPECT_THROW(dequantize_row(static_cast<DType>(4), b.data(), y, 32), std::invalid_argument);
  EXPECT_THROW(quantize_row(DType::q8_1, y, b.data(), 32), std::invalid_argument);
  EXPECT_THROW(dequantize_row(DType::q4_0, b.data(), y, 48), std::invalid_argument);  // not whole blocks
}

// Quantise random data and dequantise: the relative RMS error stays under a per-type bound
// (about a quarter of a quantisation step of the type, measured with margin).
struct RoundTrip {
  DType type;
  double max_rel_rms;
};

class QuantRoundTrip : public ::testing::TestWithParam<RoundTrip> {};

TEST_P(QuantRoundTrip, DequantisesCloseToInput) {
  const RoundTrip p = GetParam();
  const DTypeInfo* info = dtype_info(static_cast<uint32_t>(p.type));
  ASSERT_NE(info, nullptr);
  const size_t n = 1024;
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = nd(rng) * (i < 512 ? 1.0f : 0.01f) + (i >= 768 ? 0.02f : 0.0f);
  x[3] = 0.0f;
  std::vector<uint8_t> q(dtype_row_bytes(*info, n));
  quantize_row(p.type, x.data(), q.data(), n);
  std::vector<float> y(n);
  dequantize_row(p.type, q.data(), y.data(), n);
  // Per 256-element chunk (so the small-magnitude half is checked on its own scale).
  for (size_t c = 0; c < n; c += 256) {
    double err = 0, ref = 0;
    for (size_t i = c; i < c + 256; ++i) {
      err += (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
      ref += double(x[i]) * x[i];
    }
    EXPECT_LE(std::sqrt(err / ref), p.max_rel_rms) << info->name << " chunk " << c / 256;
  }
  // An all-zero input gives zeros.
  std::vector<float> z(n, 0.0f);
  quantize_row(p.type, z.data(), q.data(), n);
  dequantize_row(p.type, q.data(), y.data(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 0.0f) << info->name << " element " << i;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantRoundTrip,
                         ::testing::Values(RoundTrip{DType::f32, 0.0}, RoundTrip{DType::f16, 3e-4},
                                           RoundTrip{DType::bf16, 2.5e-3}, RoundTrip{DType::q8_0, 0.007},
                                           RoundTrip{DType::q5_0, 0.055}, RoundTrip{DType::q5_1, 0.05},
                                           RoundTrip{DType::q4_0, 0.11}, RoundTrip{DType::q4_1, 0.10},
                                           RoundTrip{DType::q6_k, 0.025}, RoundTrip{DType::q5_k, 0.05},
                                           RoundTrip{DType::q4_k, 0.10}, RoundTrip{DType::q3_k, 0.2},
                                           RoundTrip{DType::q2_k, 0.44}, RoundTrip{DType::iq4_nl, 0.11},
                                           RoundTrip{DType::iq4_xs, 0.11}),
                         [](const auto& info) {
                           return std::string(dtype_info(static_cast<uint32_t>(info.param.type))->name);
                         });

// Per element: Q8_0 is within half a step, Q4_0/Q5_0 within one step (the positive extreme may clamp).
TEST(QuantRoundTrip, ElementBoundsOf32Blocks) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> ud(-3.0f, 3.0f);
  std::vector<float> x(32 * 64);
  for (auto& v : x) v = ud(rng);
  for (DType t : {DType::q8_0, DType::q4_0, DType::q5_0, DType::q4_1, DType::q5_1}) {
    const DTypeInfo* info = dtype_info(static_cast<uint32_t>(t));
    std::vector<uint8_t> q(dtype_row_bytes(*info, x.size()));
    quantize_row(t, x.data(), q.data(), x.size());
    std::vector<float> y(x.size());
    dequantize_row(t, q.data(), y.data(), x.size());
    for (size_t b = 0; b < x.size() / 32; ++b) {
      uint16_t dh;
      std::memcpy(&dh, q.data() + b * info->block_bytes, 2);
      const float d = std::fabs(fp16_to_f32(dh));
      const float step = (t == DType::q8_0 || t == DType::q4_1 || t == DType::q5_1) ? 0.5f * d : d;
      for (size_t i = b * 32; i < b * 32 + 32; ++i) {
        ASSERT_LE(std::fabs(y[i] - x[i]), step * 1.01f + 3e-3f) << info->name << " element " << i;
      }
    }
  }
}
