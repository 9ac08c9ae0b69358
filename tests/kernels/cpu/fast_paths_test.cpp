// Tests of the fast paths added for speed: activation quantisation (byte-identical in every
// variant), matmul on pre-quantised activations (identical whatever the token batch or row split),
// the attention inner loops against their scalar twins, F16C fp16_to_f32_row, and the probes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/activation.h"
#include "alap/kernels/attn.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/norm.h"
#include "alap/kernels/probe.h"
#include "alap/kernels/quant.h"
#include "quantised_acts.h"

using namespace alap::kernels;

namespace {

const char* const kVariants[] = {"scalar", "sse4", "avx2", "avxvnni", "avx512vnni"};

using test::Acts;
using test::quantise;

std::vector<float> random_x(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = nd(rng);
  return x;
}

}  // namespace

// 3 tokens of 1408 columns: 132 blocks, so the AVX-512 quantiser's groups of 16 blocks (8 of them,
// across the tokens' boundaries) and its 4 left over; each block its own scale, so a block's
// values or sums landing in another's slot changes the bytes.
TEST(FastPaths, QuantizeActivationsIsTheSameInEveryVariant) {
  const size_t n_tok = 3, n_cols = 1408;
  std::vector<float> x = random_x(n_tok * n_cols, 5);
  for (size_t b = 0; b < n_tok * n_cols / 32; ++b) {
    for (size_t l = 0; l < 32; ++l) x[32 * b + l] *= 0.25f + 0.1f * static_cast<float>(b % 17);
  }
  x[7] = 0.5f / 127.0f * 3.0f;  // halfway cases and an all-zero block
  for (size_t c = 64; c < 96; ++c) x[c] = 0.0f;
  x[100] = 2.5f;
  x[101] = -2.5f;
  x[1500] = std::numeric_limits<float>::infinity();  // a block with inf: d = inf, its codes 0 or −127
  x[1530] = -std::numeric_limits<float>::infinity();
  x[4200] = 1e30f;  // the largest value of its block
  force_scalar_kernels(true);
  const Acts want = quantise(x, n_tok, n_cols);
  for (size_t i = 0; i < want.d.size(); ++i) {  // the rule, spelled out
    int32_t sum = 0;
    for (int l = 0; l < 32; ++l) sum += want.q[32 * i + l];
    ASSERT_EQ(want.s[i], sum);
    ASSERT_EQ(want.s4[8 * i + 3], want.q[32 * i + 12] + want.q[32 * i + 13] + want.q[32 * i + 14] + want.q[32 * i + 15]);
  }
  EXPECT_EQ(want.d[2], 0.0f);
  for (const char* v : kVariants) {
    if (!set_cpu_variant(v)) continue;
    const Acts got = quantise(x, n_tok, n_cols);
    EXPECT_EQ(got.q, want.q) << v;
    EXPECT_EQ(got.d, want.d) << v;
    EXPECT_EQ(got.s, want.s) << v;
    EXPECT_EQ(got.s4, want.s4) << v;
  }
  set_cpu_variant("best");
  std::vector<int8_t> q(40);
  std::vector<float> d(2);
  std::vector<int32_t> s(2), s4(10);
  EXPECT_THROW(quantize_activations(x.data(), 1, 40, q.data(), d.data(), s.data(), s4.data()), std::invalid_argument);
}

// Blocks of 256 (the K-quant products' activations on plain AVX2): the rule of the blocks of 32
// over 256 values, the same bytes in every variant.
TEST(FastPaths, QuantizeActivations256IsTheSameInEveryVariant) {
  const size_t n_tok = 2, n_cols = 768;
  std::vector<float> x = random_x(n_tok * n_cols, 6);
  for (size_t c = 256; c < 512; ++c) x[c] = 0.0f;  // an all-zero block
  x[600] = 9.0f;                                   // d = 9/127; values near ±(k + 0.5)·d
  x[601] = 9.0f / 127.0f * 2.5f;
  x[602] = -9.0f / 127.0f * 3.5f;
  force_scalar_kernels(true);
  std::vector<int8_t> want(n_tok * n_cols);
  std::vector<float> dw(n_tok * n_cols / 256);
  quantize_activations_256(x.data(), n_tok, n_cols, want.data(), dw.data());
  EXPECT_EQ(dw[1], 0.0f);
  EXPECT_EQ(dw[2], 9.0f / 127.0f);
  EXPECT_EQ(want[600], 127);
  for (size_t i = 0; i < want.size(); ++i) {  // the rule, spelled out
    const float d = dw[i / 256];
    const float r = d != 0.0f ? std::nearbyint(x[i] * (1.0f / d)) : 0.0f;
    ASSERT_EQ(want[i], static_cast<int8_t>(std::clamp(r, -127.0f, 127.0f))) << i;
  }
  for (const char* v : kVariants) {
    if (!set_cpu_variant(v)) continue;
    std::vector<int8_t> got(want.size());
    std::vector<float> dg(dw.size());
    quantize_activations_256(x.data(), n_tok, n_cols, got.data(), dg.data());
    EXPECT_EQ(got, want) << v;
    EXPECT_EQ(dg, dw) << v;
  }
  set_cpu_variant("best");
  EXPECT_THROW(quantize_activations_256(x.data(), 1, 288, want.data(), dw.data()), std::invalid_argument);
}

namespace {

// One call over all tokens and rows of an n_rows-row matrix against token-by-token calls on the row
// ranges [cuts[i], cuts[i+1]) (one token: the decode paths) and against the f32-activation overload.
void expect_split_independent(const char* v, DType t, size_t n_cols, size_t n_rows = 11,
                              const std::vector<size_t>& cuts = {0, 3, 4, 9, 11}) {
  const size_t n_tok = 7;
  const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
  const size_t rb = dtype_row_bytes(info, n_cols);
  std::vector<uint8_t> w(n_rows * rb);
  const std::vector<float> wf = random_x(n_rows * n_cols, 9);
  for (size_t r = 0; r < n_rows; ++r) quantize_row(t, wf.data() + r * n_cols, w.data() + r * rb, n_cols);
  const WeightView wv{t, w.data(), n_rows, n_cols};
  const std::vector<float> x = random_x(n_tok * n_cols, 10);
  const Acts a = quantise(x, n_tok, n_cols);
  std::vector<float> all(n_tok * n_rows), split(n_tok * n_rows), plain(n_tok * n_rows);
  matmul(wv, a.view(x.data(), n_tok, n_cols), all.data(), n_rows, 0, n_rows);
  matmul(wv, x.data(), n_tok, plain.data(), n_rows, 0, n_rows);
  for (size_t tok = 0; tok < n_tok; ++tok) {
    const QuantizedActs one{x.data() + tok * n_cols, a.q.data() + tok * n_cols, a.d.data() + tok * n_cols / 32,
                            a.s.data() + tok * n_cols / 32, a.s4.data() + tok * n_cols / 4, 1, n_cols};
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      matmul(wv, one, split.data() + tok * n_rows, n_rows, cuts[i], cuts[i + 1]);
    }
  }
  const std::string what = std::string(v) + " " + info.name + " cols " + std::to_string(n_cols);
  EXPECT_EQ(all, split) << what;
  EXPECT_EQ(all, plain) << what;
  double err = 0, mag = 0;  // and it is the product (loose: activations are int8)
  for (size_t tok = 0; tok < n_tok; ++tok) {
    for (size_t r = 0; r < n_rows; ++r) {
      std::vector<float> row(n_cols);
      dequantize_row(t, w.data() + r * rb, row.data(), n_cols);
      double ref = 0;
      for (size_t c = 0; c < n_cols; ++c) ref += double(row[c]) * x[tok * n_cols + c];
      err = std::max(err, std::fabs(ref - all[tok * n_rows + r]));
      mag = std::max(mag, std::fabs(ref));
    }
  }
  EXPECT_LT(err, 0.03 * mag) << what;
}

}  // namespace

// For each variant and type, on short rows and on rows long enough for every unrolled decode loop
// (odd block counts): batch and row splits give the same bits.
TEST(FastPaths, MatmulIsIndependentOfBatchAndRowSplit) {
  const DType types[] = {DType::f16,  DType::q4_0, DType::q5_0, DType::q8_0, DType::q4_k, DType::q5_k,
                         DType::q6_k, DType::q4_1, DType::q5_1, DType::q2_k, DType::q3_k, DType::iq4_nl,
                         DType::iq4_xs};
  for (const char* v : kVariants) {
    if (!set_cpu_variant(v)) continue;
    for (DType t : types) {
      const bool k_quant = dtype_info(static_cast<uint32_t>(t))->block_elems == 256;
      for (size_t n_cols : k_quant ? std::vector<size_t>{512, 256 * 9} : std::vector<size_t>{96, 32 * 37}) {
        expect_split_independent(v, t, n_cols);
      }
    }
  }
  set_cpu_variant("best");
}

// The one-token paths take 1, 2 or 4 rows per pass (more on short rows) and the blocks of 32 in
// groups of 8: ranges of 1 to 7 rows leave every tail of a pass, and the column counts give group
// tails of 1 and 7 blocks, short rows and long ones (over 4 KiB: Q8_0 4352 bytes, Q6_K 4200).
// Q2_K and Q3_K (no packed layout) over 1, 5 and 20 super-blocks: 84-2200 bytes a row; IQ4_XS 136-2720.
TEST(FastPaths, DecodeMatchesPrefillOnEveryRowsPerPassTail) {
  const DType types[] = {DType::q8_0, DType::q4_0, DType::q5_0, DType::q4_k, DType::q5_k,
                         DType::q6_k, DType::q2_k, DType::q3_k, DType::iq4_nl, DType::iq4_xs};
  const std::vector<size_t> cuts = {0, 1, 3, 6, 10, 15, 21, 28};
  for (const char* v : kVariants) {
    if (!set_cpu_variant(v)) continue;
    for (DType t : types) {
      const bool k_quant = dtype_info(static_cast<uint32_t>(t))->block_elems == 256;
      const std::vector<size_t> cols = k_quant ? std::vector<size_t>{256, 256 * 5, 256 * 20}
                                               : std::vector<size_t>{32 * 9, 32 * 15, 4096};
      for (size_t n_cols : cols) {
        expect_split_independent(v, t, n_cols, 28, cuts);
      }
    }
  }
  set_cpu_variant("best");
}

// f16 and bf16 weights, one token: rows go four at a time through one loop and the rest one by
// one; both must give each row the same bits, also on column counts with an 8-column and a scalar
// tail (not multiples of 32, so through the f32-activation overload).
TEST(FastPaths, HalfDecodeRowsAloneOrInFours) {
  for (const char* v : kVariants) {
    if (!set_cpu_variant(v)) continue;
    for (DType t : {DType::f16, DType::bf16}) {
      for (size_t n_cols : {size_t{40}, size_t{104}, size_t{107}, size_t{1184}}) {
        const size_t n_rows = 11, rb = 2 * n_cols;
        std::vector<uint8_t> w(n_rows * rb);
        const std::vector<float> wf = random_x(n_rows * n_cols, 21);
        for (size_t r = 0; r < n_rows; ++r) quantize_row(t, wf.data() + r * n_cols, w.data() + r * rb, n_cols);
        const WeightView wv{t, w.data(), n_rows, n_cols};
        const std::vector<float> x = random_x(n_cols, 22);
        std::vector<float> fours(n_rows), ones(n_rows), wrow(n_cols);
        matmul(wv, x.data(), 1, fours.data(), n_rows, 0, n_rows);  // 2 passes of 4, then 3 alone
        for (size_t r = 0; r < n_rows; ++r) matmul(wv, x.data(), 1, ones.data(), n_rows, r, r + 1);
        const char* name = dtype_info(static_cast<uint32_t>(t))->name;
        EXPECT_EQ(fours, ones) << v << " " << name << " cols " << n_cols;
        for (size_t r = 0; r < n_rows; ++r) {
          dequantize_row(t, w.data() + r * rb, wrow.data(), n_cols);
          double ref = 0;
          for (size_t c = 0; c < n_cols; ++c) ref += double(wrow[c]) * x[c];
          EXPECT_NEAR(ones[r], ref, 1e-4 * (1 + std::fabs(ref))) << v << " " << name << " row " << r;
        }
      }
    }
  }
  set_cpu_variant("best");
}

// Plain weight types with several tokens go through register tiles (AVX2: 3 rows x 3 tokens, one
// chain at a time over segments of columns, in panels of rows and blocks of tokens; AVX-512: 4 x 4)
// that keep each (row, token)'s two 8-lane chains: every result must have the bits of the same row
// and token alone (one token: the decode path), on every tail of rows, tokens and columns (an
// 8-column step, a scalar tail, rows shorter than one 16-column step, several column segments),
// and over several panels and token blocks (long rows: AVX2 panels of 6 rows, blocks of 9 tokens).
TEST(FastPaths, PlainPrefillTilesGiveDecodeBits) {
  struct Shape {
    size_t n_cols, n_rows;
    std::vector<size_t> n_toks;
  };
  const std::vector<size_t> toks = {2, 3, 4, 5, 9};
  // 1184 and 8208 columns (multiples of 16) take the AVX-512 tiles: rows 1..16 are groups of 8, 4, 2
  // and 1; 8208 columns make panels of 8 rows, blocks of 6 tokens and a last segment of 16 columns.
  const std::vector<Shape> shapes = {{8, 11, toks},    {40, 11, toks},   {104, 11, toks}, {107, 11, toks},
                                     {1184, 16, toks}, {4104, 16, {20}}, {8208, 16, {20}}};
  for (const char* v : kVariants) {
    if (!set_cpu_variant(v)) continue;
    for (DType t : {DType::f32, DType::f16, DType::bf16}) {
      const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
      for (const Shape& shape : shapes) {
        const size_t n_cols = shape.n_cols, n_rows = shape.n_rows, rb = dtype_row_bytes(info, n_cols);
        std::vector<uint8_t> w(n_rows * rb);
        const std::vector<float> wf = random_x(n_rows * n_cols, 31);
        for (size_t r = 0; r < n_rows; ++r) quantize_row(t, wf.data() + r * n_cols, w.data() + r * rb, n_cols);
        const WeightView wv{t, w.data(), n_rows, n_cols};
        for (size_t n_tok : shape.n_toks) {
          const std::vector<float> x = random_x(n_tok * n_cols, 32 + static_cast<uint32_t>(n_tok));
          std::vector<float> all(n_tok * n_rows), one(n_tok * n_rows);
          matmul(wv, x.data(), n_tok, all.data(), n_rows, 1, n_rows);  // rows from 1: every tail of a tile
          for (size_t tok = 0; tok < n_tok; ++tok) {
            for (size_t r = 1; r < n_rows; ++r) matmul(wv, x.data() + tok * n_cols, 1, one.data() + tok * n_rows, n_rows, r, r + 1);
          }
          for (size_t tok = 0; tok < n_tok; ++tok) {
            for (size_t r = 1; r < n_rows; ++r) {
              ASSERT_EQ(std::memcmp(&all[tok * n_rows + r], &one[tok * n_rows + r], 4), 0)
                  << v << " " << info.name << " cols " << n_cols << " n_tok " << n_tok << " row " << r << " token " << tok;
            }
          }
        }
      }
    }
  }
  set_cpu_variant("best");
}

TEST(FastPaths, AttentionLoopsMatchScalarTwins) {
  std::mt19937 rng(12);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (size_t head_dim : {size_t{64}, size_t{128}, size_t{16}}) {
    const size_t n = 37, block = k8_block_size(head_dim), nb = head_dim / block;
    std::vector<float> q(head_dim), p(n);
    std::vector<uint16_t> k(n * head_dim), vd(n * nb);
    std::vector<int8_t> vq(n * head_dim);
    for (auto& e : q) e = nd(rng);
    for (auto& e : p) e = std::fabs(nd(rng)) / float(n);
    for (auto& e : k) e = f32_to_fp16(nd(rng));
    for (size_t j = 0; j < n; ++j) {
      std::vector<float> row(head_dim);
      for (auto& e : row) e = nd(rng);
      k8_quantize(row.data(), head_dim, vq.data() + j * head_dim, vd.data() + j * nb);
    }
    force_scalar_kernels(true);
    std::vector<float> s_want(n), o_want(head_dim, 0.25f), o8_want(head_dim, -0.5f);
    f16_scores(q.data(), k.data(), head_dim, n, 0.125f, s_want.data());
    f16_accum_v(p.data(), k.data(), head_dim, n, o_want.data());
    k8_accum_v(p.data(), vq.data(), vd.data(), head_dim, block, n, o8_want.data());
    for (size_t j = 0; j < n; ++j) {  // the scalar twin is the dot
      double ref = 0;
      for (size_t i = 0; i < head_dim; ++i) ref += double(q[i]) * fp16_to_f32(k[j * head_dim + i]);
      ASSERT_NEAR(s_want[j], 0.125 * ref, 1e-4);
    }
    for (const char* v : kVariants) {
      if (!set_cpu_variant(v)) continue;
      std::vector<float> s(n + 1, 9.0f), o(head_dim, 0.25f), o8(head_dim, -0.5f);
      f16_scores(q.data(), k.data(), head_dim, n, 0.125f, s.data());
      f16_accum_v(p.data(), k.data(), head_dim, n, o.data());
      k8_accum_v(p.data(), vq.data(), vd.data(), head_dim, block, n, o8.data());
      for (size_t j = 0; j < n; ++j) EXPECT_NEAR(s[j], s_want[j], 1e-5f * (1.0f + std::fabs(s_want[j]))) << v;
      EXPECT_EQ(s[n], 9.0f) << v;
      EXPECT_EQ(o, o_want) << v << " head_dim " << head_dim;  // same order of adds: bit for bit
      EXPECT_EQ(o8, o8_want) << v << " head_dim " << head_dim;
    }
  }
  set_cpu_variant("best");
}

TEST(FastPaths, SoftmaxMatchesScalarTwin) {
  std::mt19937 rng(21);
  std::normal_distribution<float> nd(0.0f, 6.0f);
  for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{33}, size_t{1000}}) {
    std::vector<float> x(n);
    for (auto& e : x) e = nd(rng);
    if (n > 2) x[1] = -200.0f;  // underflows to 0
    force_scalar_kernels(true);
    std::vector<float> want = x;
    softmax(want.data(), n);
    double total = 0;
    for (float e : want) total += e;
    ASSERT_NEAR(total, 1.0, 1e-5);
    for (const char* v : kVariants) {
      if (!set_cpu_variant(v)) continue;
      std::vector<float> got = x;
      softmax(got.data(), n);
      for (size_t j = 0; j < n; ++j) ASSERT_NEAR(got[j], want[j], 2e-6f * want[j] + 1e-30f) << v << " n " << n << " j " << j;
      if (n > 2) {
        EXPECT_EQ(got[1], 0.0f) << v;
      }
    }
  }
  set_cpu_variant("best");
}

TEST(FastPaths, Fp16RowMatchesScalarForEveryPattern) {
  std::vector<uint16_t> src(65536 + 5);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i);
  std::vector<float> a(src.size()), b(src.size());
  fp16_to_f32_row(src.data(), a.data(), src.size());
  fp16_to_f32_row_scalar(src.data(), b.data(), src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (std::isnan(b[i])) {  // F16C quiets signalling NaNs; a NaN stays a NaN
      ASSERT_TRUE(std::isnan(a[i])) << "pattern " << i;
      continue;
    }
    ASSERT_EQ(std::memcmp(&a[i], &b[i], 4), 0) << "pattern " << i;
  }
  EXPECT_EQ(a[0x3C00], 1.0f);
}

// The sse4 variant converts fp16 with integer steps (no F16C, and no subnormal f32 on the way):
// every one of the 65536 patterns through its V sum (p = 1 on a zero start: out = +0 + value),
// against the scalar conversion.
TEST(FastPaths, Sse4Fp16ConversionForEveryPattern) {
  if (!set_cpu_variant("sse4")) GTEST_SKIP() << "this CPU has no SSE4.1";
  std::vector<uint16_t> v(65536);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint16_t>(i);
  std::vector<float> out(v.size(), 0.0f);
  const float p = 1.0f;
  f16_accum_v(&p, v.data(), v.size(), 1, out.data());
  set_cpu_variant("best");
  for (size_t i = 0; i < v.size(); ++i) {
    const float want = fp16_to_f32(static_cast<uint16_t>(i)) + 0.0f;
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(out[i])) << "pattern " << i;
      continue;
    }
    ASSERT_EQ(std::memcmp(&out[i], &want, 4), 0) << "pattern " << i << ": " << out[i] << " against " << want;
  }
}

// The same for its one-value conversion (block scales; integer steps for normal values, the vector
// steps for the rest): every pattern as a packed-K scale, d_a = pattern and d_b = 1 on a dot of 1.
TEST(FastPaths, Sse4ScaleConversionForEveryPattern) {
  if (!set_cpu_variant("sse4")) GTEST_SKIP() << "this CPU has no SSE4.1";
  std::vector<int8_t> a(32, 0), b(32, 0);
  a[5] = 1, b[5] = 1;
  const uint16_t one = 0x3C00;
  std::vector<float> out(65536);
  for (size_t i = 0; i < out.size(); ++i) {
    const uint16_t d = static_cast<uint16_t>(i);
    out[i] = k8_dot(a.data(), &d, b.data(), &one, 32);
  }
  set_cpu_variant("best");
  for (size_t i = 0; i < out.size(); ++i) {
    const float want = 0.0f + fp16_to_f32(static_cast<uint16_t>(i));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(out[i])) << "pattern " << i;
      continue;
    }
    ASSERT_EQ(std::memcmp(&out[i], &want, 4), 0) << "pattern " << i << ": " << out[i] << " against " << want;
  }
}

// A dot peak no CPU this engine runs on falls below, emulated ones included: real cores read tens to
// hundreds of GMAC/s, the qemu-user runs of this test (tests/kernels/cpu/CMakeLists.txt) 0.5-1.5,
// lower on a loaded machine. A probe that timed or counted wrongly by 1000x would read below it.
constexpr double kMinDotPeak = 0.05;

TEST(FastPaths, ProbesMeasureSomething) {
  const BandwidthProbe bw = measure_read_bandwidth(1, size_t{8} << 20, 2);
  EXPECT_EQ(bw.n_threads, 1u);
  EXPECT_GT(bw.gbps, 0.1);
  EXPECT_LT(bw.gbps, 10000.0);
  const DotPeakProbe dp = measure_int8_dot_peak(1, 0, 0.02);
  if (dp.lanes == 0) GTEST_SKIP() << "no SIMD int8 dot on this CPU";
  EXPECT_GT(dp.gmacs, kMinDotPeak);
  EXPECT_LT(dp.gmacs, 1e5);
}

// The 256-bit dot peak is the active variant's own dot (packed_bench and cpu_bench divide that
// variant's products by it): a plain-AVX2 variant picked on an AVX-512 CPU was measured against the
// EVEX vpdpbusd it never runs, about twice its maddubs + madd rate on Zen 5.
TEST(FastPaths, DotPeakOf256BitsFollowsTheVariant) {
  const struct {
    const char* variant;
    const char* isa;
    size_t lanes;
  } cases[] = {{"sse4", "sse4", 16}, {"avx2", "avx2", 32}, {"avxvnni", "avxvnni", 32}, {"avx512vnni", "avx512vnni-256", 32}};
  size_t ran = 0;
  for (const auto& c : cases) {
    if (!set_cpu_variant(c.variant)) continue;
    const DotPeakProbe dp = measure_int8_dot_peak(1, 32, 0.005);
    set_cpu_variant("best");
    ++ran;
    EXPECT_STREQ(dp.isa, c.isa) << c.variant;
    EXPECT_EQ(dp.lanes, c.lanes) << c.variant;
    EXPECT_GT(dp.gmacs, kMinDotPeak) << c.variant;
  }
  if (ran == 0) GTEST_SKIP() << "no SIMD variant on this CPU";
}

// The FMA peak (plain-weight prefill's ceiling) is the width the active variant's plain products run.
TEST(FastPaths, FmaPeakFollowsTheVariant) {
  const struct {
    const char* variant;
    const char* isa;
    size_t lanes;
  } cases[] = {{"scalar", "", 0}, {"sse4", "", 0}, {"avx2", "fma-256", 8}, {"avxvnni", "fma-256", 8}, {"avx512vnni", "fma-512", 16}};
  for (const auto& c : cases) {
    if (!set_cpu_variant(c.variant)) continue;
    const DotPeakProbe fp = measure_f32_fma_peak(1, 0.005);
    set_cpu_variant("best");
    EXPECT_STREQ(fp.isa, c.isa) << c.variant;
    EXPECT_EQ(fp.lanes, c.lanes) << c.variant;
    if (c.lanes == 0) {
      EXPECT_EQ(fp.gmacs, 0.0) << c.variant;
    } else {
      EXPECT_GT(fp.gmacs, 0.5) << c.variant;
      EXPECT_LT(fp.gmacs, 1e5) << c.variant;
    }
  }
}

// ReadProbe's slices, read on the caller's own threads (cpu_bench runs them on its pool): slice t
// holds bytes t + 1, so its sum of 64-bit words is known; a slice past the last reads nothing.
TEST(FastPaths, ReadProbeSlicesReadTheirOwnBytes) {
  ReadProbe probe(3, size_t{3} << 20);
  ASSERT_EQ(probe.n_threads(), 3u);
  const size_t slice = probe.bytes() / 3;
  ASSERT_EQ(slice % 128, 0u);
  for (size_t t = 0; t < 3; ++t) {
    const unsigned long long want = static_cast<unsigned long long>(slice / 8) * (t + 1) * 0x0101010101010101ull;
    EXPECT_EQ(probe.read_slice(t), want) << "slice " << t;
  }
  EXPECT_EQ(probe.read_slice(3), 0u);
  EXPECT_GT(probe.pass(), 0.1);
}

// RMSNorm: the scalar twin is the formula (within a float's rounding of a long double reference),
// and every variant gives its bits exactly, into a separate row and in place, on lengths with and
// without a tail of the 8 partial sums (the forward pass's rows are 512, 896, 2048, ... wide; head
// norms 64 or 128), on rows of large and tiny values.
TEST(FastPaths, RmsNormIsTheScalarRuleInEveryVariant) {
  uint32_t seed = 30;
  for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{13}, size_t{64}, size_t{128}, size_t{515}, size_t{896},
                   size_t{2048}}) {
    for (float scale : {1.0f, 3e3f, 1e-4f}) {
      std::vector<float> x = random_x(n, ++seed), w = random_x(n, ++seed);
      for (float& v : x) v *= scale;
      const float eps = 1e-5f;
      force_scalar_kernels(true);
      std::vector<float> want(n);
      rmsnorm(x.data(), w.data(), n, eps, want.data());
      long double ss = 0;
      for (float v : x) ss += static_cast<long double>(v) * v;
      const long double inv = 1.0L / std::sqrt(ss / n + eps);
      for (size_t i = 0; i < n; ++i) {
        const double ref = static_cast<double>(w[i] * x[i] * inv);
        ASSERT_NEAR(want[i], ref, 4e-7 * std::fabs(ref) + 1e-30) << "n=" << n << " i=" << i;
      }
      for (const char* v : kVariants) {
        if (!set_cpu_variant(v)) continue;
        std::vector<float> got(n, -1.0f), in_place = x;
        rmsnorm(x.data(), w.data(), n, eps, got.data());
        rmsnorm(in_place.data(), w.data(), n, eps, in_place.data());
        ASSERT_EQ(0, std::memcmp(got.data(), want.data(), n * sizeof(float))) << v << " n=" << n << " scale=" << scale;
        ASSERT_EQ(0, std::memcmp(in_place.data(), want.data(), n * sizeof(float))) << v << " n=" << n;
      }
      set_cpu_variant("best");
    }
  }
}

// SwiGLU's gate: every variant within a few ulp of the scalar twin (std::exp), over the range a
// gate takes and past both ends of exp's float range, on lengths that leave a tail.
TEST(FastPaths, SiluMulMatchesTheScalarTwin) {
  std::vector<float> g = random_x(1027, 11), u = random_x(1027, 12);
  for (size_t i = 0; i < g.size(); ++i) g[i] *= 6.0f;
  const float edges[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 80.0f, -80.0f, 87.0f, -87.0f, 88.5f, -88.5f,
                         89.0f, -89.0f, 104.0f, -104.0f, 1e30f, -1e30f, 0.6931472f, -0.3465736f};
  for (size_t i = 0; i < std::size(edges); ++i) g[3 * i + 1] = edges[i];
  force_scalar_kernels(true);
  std::vector<float> want = g;
  silu_mul(want.data(), u.data(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {  // the twin is the formula
    ASSERT_EQ(want[i], g[i] / (1.0f + std::exp(-g[i])) * u[i]) << i;
  }
  for (const char* v : kVariants) {
    if (!set_cpu_variant(v)) continue;
    for (size_t n : {size_t{1027}, size_t{8}, size_t{5}}) {
      std::vector<float> got(g.begin(), g.begin() + n);
      silu_mul(got.data(), u.data(), n);
      for (size_t i = 0; i < n; ++i) {
        // 2 ulp of exp, 1 of the add, division and product each; at exp's overflow edge a
        // value of a float's smallest normal's size may be −0 in one and not the other.
        const float tol = 6e-7f * std::fabs(want[i]) + 1e-36f;
        ASSERT_NEAR(got[i], want[i], tol) << v << " n=" << n << " i=" << i << " g=" << g[i];
      }
    }
  }
  set_cpu_variant("best");
}
