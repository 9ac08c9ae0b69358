// Tests of the int8-K cache arithmetic (DESIGN.md "KV cache formats (normative)"): the
// quantisation rule, k8_dot against an explicit reference in every variant, k8_scores.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "alap/kernels/fp16.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"

using namespace alap::kernels;

namespace {

// The rule written out: Σ_b float(int32 Σ a·b) · (fp16(da)·fp16(db)), f32, blocks in order.
float reference_dot(const std::vector<int8_t>& a, const std::vector<uint16_t>& da, const std::vector<int8_t>& b,
                    const std::vector<uint16_t>& db, size_t block) {
  float acc = 0.0f;
  for (size_t k = 0; k < da.size(); ++k) {
    int32_t s = 0;
    for (size_t i = 0; i < block; ++i) s += a[k * block + i] * b[k * block + i];
    acc += static_cast<float>(s) * (fp16_to_f32(da[k]) * fp16_to_f32(db[k]));
  }
  return acc;
}

struct Packed {
  std::vector<int8_t> q;
  std::vector<uint16_t> d;
};

Packed pack(const std::vector<float>& x) {
  const size_t block = k8_block_size(x.size());
  Packed p{std::vector<int8_t>(x.size()), std::vector<uint16_t>(x.size() / block)};
  k8_quantize(x.data(), x.size(), p.q.data(), p.d.data());
  return p;
}

std::vector<float> random_vec(size_t n, std::mt19937& rng, float scale = 1.0f) {
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (auto& e : v) e = nd(rng);
  return v;
}

}  // namespace

TEST(K8, BlockSize) {
  EXPECT_EQ(k8_block_size(16), 16u);
  EXPECT_EQ(k8_block_size(8), 8u);
  EXPECT_EQ(k8_block_size(32), 32u);
  EXPECT_EQ(k8_block_size(64), 32u);
  EXPECT_EQ(k8_block_size(128), 32u);
  EXPECT_EQ(k8_block_size(48), 0u);
  EXPECT_EQ(k8_block_size(0), 0u);
  std::vector<float> x(48, 1.0f);
  std::vector<int8_t> q(48);
  std::vector<uint16_t> d(2);
  EXPECT_THROW(k8_quantize(x.data(), 48, q.data(), d.data()), std::invalid_argument);
}

TEST(K8, QuantiseRuleExactHalvesAndExtremes) {
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;  // d = 1 exactly
  x[1] = 2.5f;    // exact half: away from zero → 3 (not 2, as round-to-even would give)
  x[2] = -2.5f;   // → -3
  x[3] = 0.5f;    // → 1
  x[4] = -0.49f;  // → 0
  x[5] = 126.5f;  // → 127
  x[6] = -127.0f;
  const Packed p = pack(x);
  EXPECT_EQ(p.d[0], 0x3C00);
  EXPECT_EQ(p.q[0], 127);
  EXPECT_EQ(p.q[1], 3);
  EXPECT_EQ(p.q[2], -3);
  EXPECT_EQ(p.q[3], 1);
  EXPECT_EQ(p.q[4], 0);
  EXPECT_EQ(p.q[5], 127);
  EXPECT_EQ(p.q[6], -127);
  EXPECT_EQ(p.q[7], 0);
}

TEST(K8, QuantiseUsesUnroundedF32Scale) {
  // max 1.0: d = 1/127 (f32); fp16(d) differs from d, but q must come from the f32 d.
  std::vector<float> x(16, 0.0f);
  x[0] = -1.0f;
  x[1] = 0.5f;  // 0.5 / (1/127) = 63.5 in exact arithmetic → 64 (f32 division gives 63.5 or just above)
  const Packed p = pack(x);
  const float d = 1.0f / 127.0f;
  EXPECT_EQ(p.d[0], f32_to_fp16(d));
  EXPECT_EQ(p.q[0], -127);
  EXPECT_EQ(p.q[1], static_cast<int8_t>(std::roundf(0.5f / d)));
  EXPECT_EQ(p.q[1], 64);
}

TEST(K8, ZeroBlockGivesZeroScaleAndQuants) {
  std::mt19937 rng(1);
  std::vector<float> x = random_vec(64, rng);
  for (size_t i = 32; i < 64; ++i) x[i] = 0.0f;
  const Packed p = pack(x);
  EXPECT_EQ(p.d[1], 0);
  for (size_t i = 32; i < 64; ++i) EXPECT_EQ(p.q[i], 0);
  std::vector<float> back(64);
  k8_dequantize(p.q.data(), p.d.data(), 64, back.data());
  for (size_t i = 32; i < 64; ++i) EXPECT_EQ(back[i], 0.0f);
}

// A model gone numerically wrong must not make the cache writer undefined: a NaN is left out of the
// block's max and stores -127 (the GPU writer's fmaxf rule); an infinity makes d infinite, its own
// value NaN (-127) and the finite values 0. The other block is untouched.
TEST(K8, NonFiniteValuesQuantiseDefined) {
  std::vector<float> x(64, 0.5f);
  x[3] = std::nanf("");
  x[40] = INFINITY;
  const Packed p = pack(x);
  EXPECT_EQ(p.d[0], f32_to_fp16(0.5f / 127.0f));
  EXPECT_EQ(p.q[3], -127);
  EXPECT_EQ(p.q[0], 127);
  EXPECT_EQ(p.q[40], -127);
  EXPECT_EQ(p.q[41], 0);
}

TEST(K8, MaxMapsToPlusMinus127AndRoundTrips) {
  std::mt19937 rng(2);
  for (size_t head_dim : {size_t{16}, size_t{64}, size_t{128}}) {
    const size_t block = k8_block_size(head_dim);
    for (int rep = 0; rep < 20; ++rep) {
      const auto x = random_vec(head_dim, rng, 3.0f);
      const Packed p = pack(x);
      std::vector<float> back(head_dim);
      k8_dequantize(p.q.data(), p.d.data(), head_dim, back.data());
      for (size_t b = 0; b < head_dim / block; ++b) {
        size_t arg = b * block;
        for (size_t i = b * block; i < (b + 1) * block; ++i) {
          if (std::fabs(x[i]) > std::fabs(x[arg])) arg = i;
        }
        EXPECT_EQ(p.q[arg], x[arg] > 0 ? 127 : -127);
        const float d = std::fabs(x[arg]) / 127.0f;
        for (size_t i = b * block; i < (b + 1) * block; ++i) {
          EXPECT_NEAR(back[i], x[i], 0.5f * d + std::fabs(x[i]) * 1e-3f);  // half a step + fp16 of d
        }
      }
    }
  }
}

TEST(K8, DotMatchesReferenceInEveryVariant) {
  std::mt19937 rng(3);
  for (const char* v : {"scalar", "avx2", "avxvnni", "avx512vnni"}) {
    if (!set_cpu_variant(v)) continue;
    for (size_t head_dim : {size_t{16}, size_t{32}, size_t{64}, size_t{96}, size_t{128}, size_t{256}}) {
      const size_t block = k8_block_size(head_dim);
      for (int rep = 0; rep < 10; ++rep) {
        const auto xa = random_vec(head_dim, rng), xb = random_vec(head_dim, rng, 2.0f);
        Packed a = pack(xa), b = pack(xb);
        if (rep == 0) {  // extreme lanes: every value ±127
          for (size_t i = 0; i < head_dim; ++i) {
            a.q[i] = (i % 3) ? 127 : -127;
            b.q[i] = (i % 2) ? -127 : 127;
          }
        }
        const float want = reference_dot(a.q, a.d, b.q, b.d, block);
        EXPECT_EQ(k8_dot(a.q.data(), a.d.data(), b.q.data(), b.d.data(), head_dim), want)
            << v << " head_dim " << head_dim;
        if (rep > 0) {  // and close to the f32 dot of the unquantised vectors
          double exact = 0, mag = 0;
          for (size_t i = 0; i < head_dim; ++i) {
            exact += double(xa[i]) * xb[i];
            mag += std::fabs(double(xa[i]) * xb[i]);
          }
          EXPECT_NEAR(want, exact, 0.02 * mag + 0.05) << head_dim;
        }
      }
    }
  }
  set_cpu_variant("best");
}

TEST(K8, ScoresAreScaledDotsInEveryVariant) {
  std::mt19937 rng(4);
  for (const char* v : {"scalar", "avx2", "avxvnni", "avx512vnni"}) {
    if (!set_cpu_variant(v)) continue;
    for (size_t head_dim : {size_t{16}, size_t{64}, size_t{128}}) {
      const size_t n = 19, nb = head_dim / k8_block_size(head_dim);  // two groups of 8 keys and a tail
      const Packed q = pack(random_vec(head_dim, rng));
      std::vector<int8_t> k(n * head_dim);
      std::vector<uint16_t> dk(n * nb);
      for (size_t j = 0; j < n; ++j) {
        const auto kv = random_vec(head_dim, rng);
        k8_quantize(kv.data(), head_dim, k.data() + j * head_dim, dk.data() + j * nb);
      }
      std::vector<float> scores(n + 1, -5.0f);
      k8_scores(q.q.data(), q.d.data(), k.data(), dk.data(), head_dim, n, 0.125f, scores.data());
      for (size_t j = 0; j < n; ++j) {
        const std::vector<int8_t> kj(k.begin() + j * head_dim, k.begin() + (j + 1) * head_dim);
        const std::vector<uint16_t> dkj(dk.begin() + j * nb, dk.begin() + (j + 1) * nb);
        EXPECT_EQ(scores[j], 0.125f * reference_dot(q.q, q.d, kj, dkj, k8_block_size(head_dim)))
            << v << " key " << j << " head_dim " << head_dim;
      }
      EXPECT_EQ(scores[n], -5.0f);
    }
  }
  set_cpu_variant("best");
}
