// Tests of alap::kernels::matmul: the scalar oracle against a double-precision reference on the
// dequantised weights, and every fast variant this CPU runs against the scalar oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"

using namespace alap::kernels;

namespace {

const DType kAllTypes[] = {DType::f32,  DType::f16,  DType::bf16, DType::q4_0, DType::q4_1,
                           DType::q5_0, DType::q5_1, DType::q8_0, DType::q2_k, DType::q3_k,
                           DType::q4_k, DType::q5_k, DType::q6_k, DType::iq4_nl, DType::iq4_xs};

const char* name_of(DType t) { return dtype_info(static_cast<uint32_t>(t))->name; }

struct Problem {
  DType type;
  size_t n_rows, n_cols, n_tok;
  std::vector<uint8_t> w;      // [n_rows] rows of dtype_row_bytes(n_cols)
  std::vector<float> wf;       // dequantised [n_rows][n_cols]
  std::vector<float> x;        // [n_tok][n_cols]
};

Problem make_problem(DType t, size_t n_rows, size_t n_cols, size_t n_tok, uint32_t seed) {
  Problem p{t, n_rows, n_cols, n_tok, {}, {}, {}};
  const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
  const size_t row_bytes = dtype_row_bytes(info, n_cols);
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> src(n_cols);
  p.w.resize(n_rows * row_bytes);
  p.wf.resize(n_rows * n_cols);
  for (size_t r = 0; r < n_rows; ++r) {
    for (auto& v : src) v = nd(rng) * 0.05f;
    quantize_row(t, src.data(), p.w.data() + r * row_bytes, n_cols);
    dequantize_row(t, p.w.data() + r * row_bytes, p.wf.data() + r * n_cols, n_cols);
  }
  p.x.resize(n_tok * n_cols);
  for (auto& v : p.x) v = nd(rng) + 0.1f;
  p.x[0] = 4.0f;  // an outlier, as activations have
  return p;
}

// Runs matmul on rows [rb, re) into y [n_tok][ldy], ldy = n_rows + 3, other entries left at a sentinel.
std::vector<float> run(const Problem& p, size_t rb, size_t re) {
  const size_t ldy = p.n_rows + 3;
  std::vector<float> y(p.n_tok * ldy, -777.0f);
  matmul(WeightView{p.type, p.w.data(), p.n_rows, p.n_cols}, p.x.data(), p.n_tok, y.data(), ldy, rb, re);
  return y;
}

// Σ_c |W[r][c]|·|x[t][c]| (scale of f32 rounding), and the bound of quantising x to int8 per
// 32 values: Σ_c |W[r][c]|·(max|x| of c's block / 127)/2.
void bounds(const Problem& p, size_t r, size_t t, double& mag, double& actq) {
  mag = 0;
  actq = 0;
  const float* x = p.x.data() + t * p.n_cols;
  for (size_t b = 0; b < p.n_cols; b += 32) {
    double amax = 0;
    const size_t end = std::min(b + 32, p.n_cols);
    for (size_t c = b; c < end; ++c) amax = std::max(amax, double(std::fabs(x[c])));
    for (size_t c = b; c < end; ++c) {
      const double aw = std::fabs(double(p.wf[r * p.n_cols + c]));
      mag += aw * std::fabs(double(x[c]));
      actq += aw * amax / 127.0 / 2.0;
    }
  }
}

double reference(const Problem& p, size_t r, size_t t) {
  double acc = 0;
  for (size_t c = 0; c < p.n_cols; ++c) acc += double(p.wf[r * p.n_cols + c]) * p.x[t * p.n_cols + c];
  return acc;
}

void expect_rows(const Problem& p, const std::vector<float>& y, size_t rb, size_t re, bool act_quantised,
                 const std::string& what) {
  const size_t ldy = p.n_rows + 3;
  for (size_t t = 0; t < p.n_tok; ++t) {
    for (size_t r = 0; r < ldy; ++r) {
      const float got = y[t * ldy + r];
      if (r < rb || r >= re) {
        ASSERT_EQ(got, -777.0f) << what << ": wrote outside the rows, t " << t << " r " << r;
        continue;
      }
      double mag, actq;
      bounds(p, r, t, mag, actq);
      const double tol = 1e-5 * mag + (act_quantised ? 1.05 * actq : 0.0) + 1e-6;
      ASSERT_NEAR(got, reference(p, r, t), tol) << what << " t " << t << " r " << r;
    }
  }
}

}  // namespace

TEST(Matmul, ScalarMatchesDoubleReference) {
  force_scalar_kernels(true);
  EXPECT_STREQ(cpu_variant_name(), "scalar");
  for (DType t : kAllTypes) {
    const size_t block = dtype_info(static_cast<uint32_t>(t))->block_elems;
    const size_t n_cols = block == 256 ? 512 : 96;
    for (size_t n_tok : {size_t{1}, size_t{5}}) {
      const Problem p = make_problem(t, 7, n_cols, n_tok, 3 + static_cast<uint32_t>(t));
      expect_rows(p, run(p, 0, 7), 0, 7, false, std::string(name_of(t)) + " all rows n_tok " + std::to_string(n_tok));
      expect_rows(p, run(p, 2, 5), 2, 5, false, std::string(name_of(t)) + " rows 2..5");
    }
  }
  force_scalar_kernels(false);
}

// Every variant other than scalar that this CPU runs: close to the reference within the error of
// quantising the activations to int8 blocks of 32, and close to the scalar oracle.
TEST(Matmul, FastVariantsMatchScalarOracle) {
  int n_variants = 0;
  for (const char* v : {"sse4", "avx2", "avxvnni", "avx512vnni"}) {
    if (!set_cpu_variant(v)) continue;
    ++n_variants;
    ASSERT_STREQ(cpu_variant_name(), v);
    for (DType t : kAllTypes) {
      const size_t block = dtype_info(static_cast<uint32_t>(t))->block_elems;
      for (size_t n_blocks : {size_t{1}, size_t{3}, size_t{5}}) {  // odd sizes
        const size_t n_cols = block == 1 ? 32 * n_blocks + 8 : block * n_blocks;
        for (size_t n_tok : {size_t{1}, size_t{2}, size_t{5}}) {
          const Problem p = make_problem(t, 9, n_cols, n_tok, 100 + static_cast<uint32_t>(t) + 7 * n_tok);
          const std::string what = std::string(v) + " " + name_of(t) + " cols " + std::to_string(n_cols) +
                                   " n_tok " + std::to_string(n_tok);
          set_cpu_variant(v);
          const auto fast = run(p, 1, 8);
          force_scalar_kernels(true);
          const auto slow = run(p, 1, 8);
          const bool act_quantised = block != 1;
          expect_rows(p, fast, 1, 8, act_quantised, what);
          const size_t ldy = p.n_rows + 3;
          for (size_t i = 0; i < fast.size(); ++i) {
            double mag, actq;
            bounds(p, i % ldy < p.n_rows ? i % ldy : 0, i / ldy, mag, actq);
            ASSERT_NEAR(fast[i], slow[i], 2e-5 * mag + (act_quantised ? 1.05 * actq : 0.0) + 1e-6)
                << what << " index " << i;
          }
        }
      }
    }
  }
  set_cpu_variant("best");
  if (n_variants == 0) GTEST_SKIP() << "this CPU runs only the scalar variant";
}

TEST(Matmul, RejectsBadArguments) {
  const Problem p = make_problem(DType::q8_0, 4, 64, 1, 1);
  std::vector<float> y(8);
  EXPECT_THROW(matmul(WeightView{DType::q8_0, p.w.data(), 4, 64}, p.x.data(), 1, y.data(), 4, 3, 5),
               std::invalid_argument);
  EXPECT_THROW(matmul(WeightView{DType::q8_0, p.w.data(), 4, 48}, p.x.data(), 1, y.data(), 4, 0, 4),
               std::invalid_argument);
  EXPECT_THROW(matmul(WeightView{DType::iq3_s, p.w.data(), 4, 256}, p.x.data(), 1, y.data(), 4, 0, 4),
               std::invalid_argument);
}

TEST(Matmul, VariantNames) {
  EXPECT_TRUE(set_cpu_variant("scalar"));
  EXPECT_STREQ(cpu_variant_name(), "scalar");
  EXPECT_FALSE(set_cpu_variant("no-such-variant"));
  EXPECT_STREQ(cpu_variant_name(), "scalar");
  EXPECT_TRUE(set_cpu_variant("best"));
  force_scalar_kernels(false);
  const std::string best = cpu_variant_name();
  EXPECT_TRUE(best == "scalar" || best == "sse4" || best == "avx2" || best == "avxvnni" || best == "avx512vnni") << best;
}
