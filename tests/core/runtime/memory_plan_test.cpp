// core/runtime/memory_plan: exact KV cache bytes per cache mode (DESIGN.md "KV cache formats").
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/runtime/memory_plan.h"

namespace alap {
namespace {

TEST(MemoryPlan, ModeNamesRoundTrip) {
  for (CacheMode m : {CacheMode::f16, CacheMode::k8, CacheMode::k8v8}) {
    EXPECT_EQ(parse_cache_mode(cache_mode_name(m)), m);
  }
  EXPECT_STREQ(cache_mode_name(CacheMode::k8v8), "k8v8");
  EXPECT_FALSE(parse_cache_mode("q8_0").has_value());
  EXPECT_FALSE(parse_cache_mode("").has_value());
  EXPECT_FALSE(parse_cache_mode("K8").has_value());
}

TEST(MemoryPlan, HeadDim64Savings) {
  // alap-eval-30m: 8 layers, 2 KV heads, head_dim 64.
  const KvShape s{8, 2, 64, 64};
  const uint64_t n = 4096;
  const KvBytes f16 = kv_cache_bytes(s, CacheMode::f16, n);
  const KvBytes k8 = kv_cache_bytes(s, CacheMode::k8, n);
  const KvBytes k8v8 = kv_cache_bytes(s, CacheMode::k8v8, n);
  EXPECT_EQ(f16.k_bytes, 8u * 2 * 4096 * 64 * 2);  // 8 MiB
  EXPECT_EQ(f16.v_bytes, f16.k_bytes);
  EXPECT_EQ(f16.total, 2 * f16.k_bytes);
  EXPECT_EQ(k8.k_bytes, 8u * 2 * 4096 * (64 + 2 * 2));  // int8 + 2 fp16 scales a head vector
  EXPECT_EQ(k8.k_bytes * 32, f16.k_bytes * 17);         // exactly 0.53125 of f16
  EXPECT_EQ(k8.v_bytes, f16.v_bytes);
  EXPECT_EQ(k8v8.v_bytes, k8.k_bytes);
  EXPECT_EQ(k8v8.total, k8v8.k_bytes + k8v8.v_bytes);
  // k8 saves 23.4375 % of the whole cache, k8v8 46.875 %.
  EXPECT_EQ((f16.total - k8.total) * 1000000, f16.total * 234375);
  EXPECT_EQ((f16.total - k8v8.total) * 1000, f16.total * 46875 / 100);
  EXPECT_DOUBLE_EQ(1.0 - static_cast<double>(k8v8.total) / static_cast<double>(f16.total), 0.46875);
}

TEST(MemoryPlan, SmallAndOddHeadDims) {
  // head_dim 8 (stories260K): one block of 8 values, one fp16 scale.
  EXPECT_EQ(kv_packed_block_size(8), 8);
  EXPECT_EQ(kv_head_vector_bytes(8, true), 8u + 2);
  EXPECT_EQ(kv_head_vector_bytes(8, false), 16u);
  const KvShape tiny{5, 4, 8, 8};
  EXPECT_EQ(kv_cache_bytes(tiny, CacheMode::k8, 512).k_bytes, 5u * 4 * 512 * 10);
  EXPECT_EQ(kv_packed_block_size(128), 32);
  EXPECT_EQ(kv_head_vector_bytes(128, true), 128u + 8);
  EXPECT_EQ(kv_packed_block_size(48), 0);
  EXPECT_EQ(kv_packed_block_size(0), 0);

  // head_dim 48: packed modes refused with a reason; f16 fine.
  const KvShape odd{2, 2, 48, 64};
  std::string why;
  EXPECT_TRUE(packed_mode_supported(odd, CacheMode::f16, &why));
  EXPECT_FALSE(packed_mode_supported(odd, CacheMode::k8, &why));
  EXPECT_NE(why.find("K head dimension (48)"), std::string::npos) << why;
  EXPECT_THROW(kv_cache_bytes(odd, CacheMode::k8, 16), std::invalid_argument);
  EXPECT_EQ(kv_cache_bytes(odd, CacheMode::f16, 16).total, 2u * 2 * 16 * (48 + 64) * 2);
  const KvShape odd_v{2, 2, 64, 40};
  EXPECT_TRUE(packed_mode_supported(odd_v, CacheMode::k8, nullptr));
  EXPECT_FALSE(packed_mode_supported(odd_v, CacheMode::k8v8, &why));
  EXPECT_NE(why.find("V head dimension (40)"), std::string::npos) << why;
  EXPECT_FALSE(packed_mode_supported(KvShape{1, 1, 0, 0}, CacheMode::k8, nullptr));
  EXPECT_FALSE(packed_mode_supported(KvShape{-1, 1, 64, 64}, CacheMode::f16, nullptr));
}

TEST(MemoryPlan, ZeroTokensAndOverflow) {
  EXPECT_EQ(kv_cache_bytes(KvShape{8, 2, 64, 64}, CacheMode::k8, 0).total, 0u);
  EXPECT_THROW(kv_cache_bytes(KvShape{1 << 30, 1 << 30, 64, 64}, CacheMode::f16, uint64_t{1} << 40), std::invalid_argument);
}

}  // namespace
}  // namespace alap
