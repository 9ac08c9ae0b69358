// KvCache: the normative struct-of-arrays layout (offsets, strides, alignment), k8 round trips
// against the quantisation rule, byte counts equal to memory_plan's, truncate and refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "alap/kernels/fp16.h"
#include "core/runtime/kv_cache.h"
#include "core/runtime/memory_plan.h"
#include "core/runtime/memory_report.h"

namespace alap {
namespace {

KvCacheConfig cfg(CacheMode mode, size_t cap = 16, size_t hk = 2, size_t dk = 64, size_t dv = 64, size_t layers = 3) {
  KvCacheConfig c;
  c.mode = mode;
  c.n_layer = layers;
  c.n_head_kv = hk;
  c.head_dim_k = dk;
  c.head_dim_v = dv;
  c.capacity = cap;
  return c;
}

std::vector<float> random_vec(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(KvCache, LayoutIsStructOfArraysPerLayer) {
  for (CacheMode mode : {CacheMode::f16, CacheMode::k8, CacheMode::k8v8}) {
    SCOPED_TRACE(cache_mode_name(mode));
    KvCache c(cfg(mode, 16, 2, 64, 32));
    const bool kp = mode != CacheMode::f16, vp = mode == CacheMode::k8v8;
    const size_t rows = 2 * 16;  // [n_head_kv][capacity]
    const KvLayerLayout L0 = c.layer_layout(0), L1 = c.layer_layout(1);
    EXPECT_EQ(L0.k_offset, 0u);
    EXPECT_EQ(L0.k_bytes, rows * 64 * (kp ? 1 : 2));
    EXPECT_EQ(L0.k_scales_bytes, kp ? rows * 2 * 2 : 0u);  // 64/32 scales of 2 bytes
    EXPECT_EQ(L0.k_scales_offset, L0.k_bytes);
    EXPECT_EQ(L0.v_offset, L0.k_scales_offset + L0.k_scales_bytes);
    EXPECT_EQ(L0.v_bytes, rows * 32 * (vp ? 1 : 2));
    EXPECT_EQ(L0.v_scales_bytes, vp ? rows * 1 * 2 : 0u);
    EXPECT_EQ(L1.k_offset, L0.v_scales_offset + L0.v_scales_bytes);
    for (size_t l = 0; l < 3; ++l) {
      const KvLayerLayout L = c.layer_layout(l);
      for (size_t off : {L.k_offset, L.k_scales_offset, L.v_offset, L.v_scales_offset}) EXPECT_EQ(off % 16, 0u);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(c.data()) % 16, 0u);
      // Head g, position j of layer l: payload row (g·capacity + j)·head_dim.
      for (size_t g = 0; g < 2; ++g) {
        const uint8_t* k = kp ? reinterpret_cast<const uint8_t*>(c.k_q8(l, g)) : reinterpret_cast<const uint8_t*>(c.k_f16(l, g));
        EXPECT_EQ(static_cast<size_t>(k - c.data()), L.k_offset + g * 16 * 64 * (kp ? 1 : 2));
        const uint8_t* v = vp ? reinterpret_cast<const uint8_t*>(c.v_q8(l, g)) : reinterpret_cast<const uint8_t*>(c.v_f16(l, g));
        EXPECT_EQ(static_cast<size_t>(v - c.data()), L.v_offset + g * 16 * 32 * (vp ? 1 : 2));
        if (kp) {
          EXPECT_EQ(reinterpret_cast<const uint8_t*>(c.k_scales(l, g)) - c.data(),
                    static_cast<ptrdiff_t>(L.k_scales_offset + g * 16 * 2 * 2));
        }
      }
    }
    // memory_plan's bytes at full capacity (all arrays are multiples of 16 bytes here).
    const KvBytes plan = kv_cache_bytes(c.shape(), mode, 16);
    EXPECT_EQ(c.allocated_bytes(), plan.total);
    EXPECT_EQ(3 * (L0.k_bytes + L0.k_scales_bytes), plan.k_bytes);
    EXPECT_EQ(3 * (L0.v_bytes + L0.v_scales_bytes), plan.v_bytes);
  }
}

TEST(KvCache, StoresF16AtTheNormativeAddress) {
  KvCache c(cfg(CacheMode::f16, 8, 2, 32, 32, 2));
  const std::vector<float> k = random_vec(64, 1), v = random_vec(64, 2);
  c.store(1, 5, k.data(), v.data());
  const auto* base = reinterpret_cast<const uint16_t*>(c.data() + c.layer_layout(1).k_offset);
  EXPECT_EQ(base[(1 * 8 + 5) * 32 + 7], kernels::f32_to_fp16(k[32 + 7]));  // head 1, pos 5, lane 7
  const auto* vb = reinterpret_cast<const uint16_t*>(c.data() + c.layer_layout(1).v_offset);
  EXPECT_EQ(vb[(0 * 8 + 5) * 32 + 31], kernels::f32_to_fp16(v[31]));
  std::vector<float> out(32);
  c.read_k(1, 1, 5, out.data());
  for (size_t i = 0; i < 32; ++i) EXPECT_NEAR(out[i], k[32 + i], 2e-3 * std::fabs(k[32 + i]) + 1e-6);
}

// k8 store → read: q = round(x/d), d = max|x|/127 as fp16; bytes checked against the rule.
TEST(KvCache, K8RoundTripFollowsTheRule) {
  KvCache c(cfg(CacheMode::k8v8, 4, 2, 64, 64, 1));
  std::vector<float> k = random_vec(128, 3, 2.0f), v = random_vec(128, 4);
  for (size_t i = 64; i < 96; ++i) k[i] = 0.0f;  // head 1, block 0 all zero: d = 0, q = 0
  c.store(0, 2, k.data(), v.data());
  for (size_t g = 0; g < 2; ++g) {
    const int8_t* q = c.k_q8(0, g) + 2 * 64;
    const uint16_t* d = c.k_scales(0, g) + 2 * 2;
    for (size_t b = 0; b < 2; ++b) {
      float amax = 0;
      for (size_t i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(k[g * 64 + b * 32 + i]));
      const float dd = amax / 127.0f;
      EXPECT_EQ(d[b], kernels::f32_to_fp16(dd));
      for (size_t i = 0; i < 32; ++i) {
        const float x = k[g * 64 + b * 32 + i];
        const int expect = dd == 0.0f ? 0 : static_cast<int>(std::lround(x / dd));
        EXPECT_NEAR(q[b * 32 + i], expect, 1) << "g " << g << " b " << b << " i " << i;  // ties may round either way
        EXPECT_LE(std::abs(int{q[b * 32 + i]}), 127);
      }
    }
    std::vector<float> out(64);
    c.read_k(0, g, 2, out.data());
    for (size_t i = 0; i < 64; ++i) {
      // Dequantised exactly as fp16(d)·q, within d/2 (+ the fp16 rounding of d) of the input.
      const float dq = kernels::fp16_to_f32(d[i / 32]);
      EXPECT_EQ(out[i], dq * static_cast<float>(q[i]));
      EXPECT_LE(std::fabs(out[i] - k[g * 64 + i]), dq * (0.5f + 127.0f / 1024.0f) + 1e-7f);
    }
    c.read_v(0, g, 2, out.data());
    for (size_t i = 0; i < 64; ++i) EXPECT_NEAR(out[i], v[g * 64 + i], 0.04f);
  }
  EXPECT_EQ(c.k_q8(0, 1)[2 * 64 + 0], 0);
  EXPECT_EQ(c.k_scales(0, 1)[2 * 2 + 0], 0);
  EXPECT_EQ(c.k_f16(0, 0), nullptr);
  EXPECT_EQ(c.v_f16(0, 0), nullptr);
}

// store_heads writes only the named KV heads' rows, the same bytes store writes for them: heads
// stored in two parts equal one store, in every mode, and a bad head range is refused.
TEST(KvCache, StoreHeadsWritesOnlyItsHeads) {
  for (CacheMode mode : {CacheMode::f16, CacheMode::k8, CacheMode::k8v8}) {
    KvCache whole(cfg(mode, 4, 4, 64, 64, 2)), parts(cfg(mode, 4, 4, 64, 64, 2));
    const std::vector<float> k = random_vec(4 * 64, 5), v = random_vec(4 * 64, 6);
    whole.store(1, 3, k.data(), v.data());
    parts.store_heads(1, 3, 1, 3, k.data(), v.data());
    std::vector<float> got(64), want(64), zero(64, 0.0f);
    for (size_t g = 0; g < 4; ++g) {  // heads 0 and 3 not yet written
      parts.read_k(1, g, 3, got.data());
      whole.read_k(1, g, 3, want.data());
      EXPECT_EQ(got, g == 1 || g == 2 ? want : zero) << cache_mode_name(mode) << " head " << g;
    }
    parts.store_heads(1, 3, 0, 1, k.data(), v.data());
    parts.store_heads(1, 3, 3, 4, k.data(), v.data());
    parts.store_heads(1, 3, 2, 2, k.data(), v.data());  // an empty range writes nothing
    EXPECT_EQ(std::memcmp(parts.data(), whole.data(), whole.allocated_bytes()), 0) << cache_mode_name(mode);
    EXPECT_THROW(parts.store_heads(1, 3, 3, 5, k.data(), v.data()), KvCacheError);
    EXPECT_THROW(parts.store_heads(1, 3, 2, 1, k.data(), v.data()), KvCacheError);
  }
}

TEST(KvCache, SmallHeadDimIsOneBlock) {
  KvCache c(cfg(CacheMode::k8, 4, 1, 16, 16, 1));
  EXPECT_EQ(c.block_k(), 16u);
  EXPECT_EQ(c.layer_layout(0).k_scales_bytes, 4u * 1 * 2);
}

TEST(KvCache, TokensTruncateAndClear) {
  KvCache c(cfg(CacheMode::k8, 8));
  EXPECT_EQ(c.n_tokens(), 0u);
  c.set_n_tokens(6);
  c.truncate(4);
  EXPECT_EQ(c.n_tokens(), 4u);
  EXPECT_THROW(c.truncate(5), KvCacheError);
  EXPECT_THROW(c.set_n_tokens(9), KvCacheError);
  const std::vector<float> k(128, 1.0f);
  EXPECT_THROW(c.store(0, 8, k.data(), k.data()), KvCacheError);
  EXPECT_THROW(c.store(3, 0, k.data(), k.data()), KvCacheError);
  c.clear();
  EXPECT_EQ(c.n_tokens(), 0u);
}

TEST(KvCache, RefusesPackedHeadDim48) {
  EXPECT_NO_THROW(KvCache(cfg(CacheMode::f16, 4, 2, 48, 48)));
  EXPECT_NO_THROW(KvCache(cfg(CacheMode::k8, 4, 2, 64, 48)));  // V stays f16 in k8
  try {
    KvCache c(cfg(CacheMode::k8, 4, 2, 48, 48));
    FAIL();
  } catch (const KvCacheError& e) {
    EXPECT_STREQ(e.what(),
                 "KV cache mode k8 needs a K head_dim that is a multiple of 32 (or below 32); this model has head_dim "
                 "48: use --cache f16");
  }
  EXPECT_THROW(KvCache(cfg(CacheMode::k8v8, 4, 2, 64, 48)), KvCacheError);
  EXPECT_THROW(KvCache(cfg(CacheMode::f16, 0)), KvCacheError);
}

TEST(MemoryReport, UsesMemoryPlanAndProcMeminfo) {
  KvCache c(cfg(CacheMode::k8, 32));
  c.set_n_tokens(10);
  const MemoryReport r = make_memory_report(c, 1000, 200);
  const KvBytes k8 = kv_cache_bytes(c.shape(), CacheMode::k8, 10), f16 = kv_cache_bytes(c.shape(), CacheMode::f16, 10);
  EXPECT_EQ(r.kv_bytes, k8.total);
  EXPECT_EQ(r.k_bytes, k8.k_bytes);
  EXPECT_EQ(r.v_bytes, k8.v_bytes);
  EXPECT_EQ(r.kv_fp16_bytes, f16.total);
  // 3 layers · 2 heads · 10 tokens · 64: K 1.0625 B/value, V 2 B/value.
  EXPECT_EQ(r.k_bytes, 3u * 2 * 10 * 68);
  EXPECT_EQ(r.kv_fp16_bytes, 3u * 2 * 10 * 64 * 4);
  EXPECT_EQ(r.kv_capacity_bytes, c.allocated_bytes());
  EXPECT_EQ(r.weights_bytes, 1000u);
  EXPECT_EQ(r.scratch_bytes, 200u);
  const auto sys = read_system_memory();
  ASSERT_TRUE(sys.has_value());
  EXPECT_GT(r.device_total_bytes, 0u);
  EXPECT_LE(r.device_free_bytes, r.device_total_bytes);
  EXPECT_GT(r.process_resident_bytes, 0u);
}

}  // namespace
}  // namespace alap
