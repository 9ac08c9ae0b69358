// Tests of the int8-K cache arithmetic (DESIGN.md "KV cache formats (normative)"): the
// quantisation rule, k8_dot against an explicit reference in every variant, k8_scores.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>
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
  for (const char* v : {"scalar", "sse4", "avx2", "avxvnni", "avx512vnni"}) {
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
  for (const char* v : {"scalar", "sse4", "avx2", "avxvnni", "avx512vnni"}) {
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

// The quantiser is dispatched (the vector variants run 8 lanes with a truncation-built roundf):
// every variant must write the scalar twin's bytes and scales, ties and edges included.
TEST(K8, QuantiseIsTheScalarRuleInEveryVariant) {
  std::mt19937 rng(5);
  std::vector<std::vector<float>> inputs;
  for (size_t head_dim : {size_t{8}, size_t{16}, size_t{32}, size_t{64}, size_t{128}, size_t{256}}) {
    for (float scale : {1.0f, 1e-3f, 3e4f}) inputs.push_back(random_vec(head_dim, rng, scale));
  }
  // amax 127 makes d exactly 1: x/d = k + 0.5 are exact ties (roundf: away from zero, not to even).
  std::vector<float> ties(64);
  for (size_t i = 0; i < 64; ++i) ties[i] = (i % 2 ? -1.0f : 1.0f) * (static_cast<float>(i % 31) + 0.5f);
  ties[0] = 127.0f;
  ties[5] = 0.49999997f;
  ties[6] = -0.49999997f;
  ties[7] = -0.0f;
  ties[8] = 126.5f;
  ties[9] = -126.5f;
  ties[33] = 127.0f;
  ties[34] = 1e-42f;  // subnormal
  ties[35] = -2.5f;
  inputs.push_back(ties);
  std::vector<float> tiny(64, 0.0f);  // block 0: d underflows to 0; block 1: subnormal d
  tiny[1] = 1e-45f;
  tiny[2] = -1e-45f;
  for (size_t i = 32; i < 64; ++i) tiny[i] = static_cast<float>(static_cast<int>(i) - 48) * 1e-41f;
  inputs.push_back(tiny);
  std::vector<float> huge = random_vec(64, rng, 1e37f);
  huge[3] = 3.4e38f;
  huge[4] = -3.4e38f;
  inputs.push_back(huge);
  std::vector<float> odd(64, 0.25f);  // NaN beside finite values; an infinity
  odd[10] = std::nanf("");
  odd[11] = -std::nanf("");
  odd[50] = -INFINITY;
  odd[51] = 1.0f;
  inputs.push_back(odd);
  for (size_t r = 0; r < 40; ++r) {  // keys whose x/d land near .5 often: x = (k + 0.5 ± ulp)·amax/127
    std::vector<float> x(64);
    std::uniform_int_distribution<int> code(-127, 127), ulp(-2, 2);
    const float amax = std::ldexp(1.0f + static_cast<float>(r) / 64.0f, static_cast<int>(r % 7) - 3);
    for (size_t i = 0; i < 64; ++i) {
      const float y = static_cast<float>(code(rng)) + 0.5f;
      x[i] = std::nextafter(y * (amax / 127.0f), 0.0f) + static_cast<float>(ulp(rng)) * std::ldexp(amax, -30);
    }
    x[0] = amax;
    x[32] = -amax;
    inputs.push_back(x);
  }
  int checked = 0;
  for (const auto& x : inputs) {
    const size_t nb = x.size() / k8_block_size(x.size());
    set_cpu_variant("scalar");
    std::vector<int8_t> want_q(x.size());
    std::vector<uint16_t> want_d(nb);
    k8_quantize(x.data(), x.size(), want_q.data(), want_d.data());
    for (const char* v : {"sse4", "avx2", "avxvnni", "avx512vnni"}) {
      if (!set_cpu_variant(v)) continue;
      std::vector<int8_t> q(x.size() + 1, 55);
      std::vector<uint16_t> d(nb + 1, 55);
      k8_quantize(x.data(), x.size(), q.data(), d.data());
      EXPECT_EQ(std::vector<int8_t>(q.begin(), q.end() - 1), want_q) << v << " head_dim " << x.size();
      EXPECT_EQ(std::vector<uint16_t>(d.begin(), d.end() - 1), want_d) << v << " head_dim " << x.size();
      EXPECT_EQ(q.back(), 55);
      EXPECT_EQ(d.back(), 55);
      ++checked;
    }
  }
  set_cpu_variant("best");
  // The ties themselves, from the rule: 2.5 -> 3, -2.5 -> -3, 126.5 -> 127, 0.49999997 -> 0.
  const Packed t = pack(ties);
  EXPECT_EQ(t.d[0], f32_to_fp16(1.0f));
  EXPECT_EQ(t.q[2], 3);
  EXPECT_EQ(t.q[35], -3);
  EXPECT_EQ(t.q[8], 127);
  EXPECT_EQ(t.q[9], -127);
  EXPECT_EQ(t.q[5], 0);
  EXPECT_EQ(t.q[1], -2);  // -1.5
  if (std::strcmp(cpu_variant_name(), "scalar") == 0) GTEST_SKIP() << "this CPU runs only the scalar variant";
  EXPECT_GE(checked, 1);
}

// The f16 cache's row writer: f32_to_fp16 of each value in every variant (tails of every length).
TEST(K8, CacheRowToFp16IsTheScalarRuleInEveryVariant) {
  std::mt19937 rng(6);
  std::vector<float> x(300);
  std::uniform_int_distribution<uint32_t> bits;
  for (auto& e : x) e = std::bit_cast<float>(bits(rng));  // every exponent: subnormals, inf, NaN
  const float edges[] = {65504.0f, 65519.99f, 65520.0f, -65520.0f, 0x1p-24f, 0x1p-25f, 0x1.000002p-25f, 0x1.8p-24f,
                         1.0f + 0x1p-11f, 1.0f + 0x1p-11f + 0x1p-23f, 1.0f + 0x1.8p-10f, -0.0f, 0.0f, 0x1p-14f,
                         0x1.ffcp-15f, INFINITY, -INFINITY, std::nanf(""), 1e-40f, 3.0f};
  for (size_t i = 0; i < std::size(edges); ++i) x[i] = edges[i];
  std::vector<uint16_t> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = f32_to_fp16(x[i]);
  int checked = 0;
  for (const char* v : {"scalar", "sse4", "avx2", "avxvnni", "avx512vnni"}) {
    if (!set_cpu_variant(v)) continue;
    for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{64}, size_t{300}}) {
      for (size_t off : {size_t{0}, size_t{3}}) {
        if (off + n > x.size()) continue;
        std::vector<uint16_t> out(n + 1, 0xABCD);
        kv_row_to_fp16(x.data() + off, n, out.data());
        EXPECT_EQ(std::vector<uint16_t>(out.begin(), out.end() - 1),
                  std::vector<uint16_t>(want.begin() + off, want.begin() + off + n))
            << v << " n " << n << " off " << off;
        EXPECT_EQ(out.back(), 0xABCD);
        ++checked;
      }
    }
  }
  set_cpu_variant("best");
  if (std::strcmp(cpu_variant_name(), "scalar") == 0) GTEST_SKIP() << "this CPU runs only the scalar variant";
  EXPECT_GE(checked, 12);
}
