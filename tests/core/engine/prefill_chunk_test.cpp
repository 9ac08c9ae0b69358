// choose_gpu_prefill_chunk: the GPU prefill batch takes 2048 or 1024 tokens only where the memory
// plan for that chunk keeps every layer on the device, fits the usable memory and costs at most
// max(weights / 8, 256 MiB) more than the 512-token plan; otherwise 512 (or the context).
#include <gtest/gtest.h>

#include <vector>

#include "core/engine/prefill_chunk.h"

namespace alap {
namespace {

constexpr uint64_t MiB = 1ull << 20;

// A plan whose scratch grows linearly with the chunk: fixed bytes + per_token · chunk; every layer
// fits while the total stays within `layers_fit_below` (auto layers shed layers past it).
struct FakePlans {
  uint64_t fixed = 0, per_token = 0, layers_fit_below = ~0ull;
  int32_t n_layer = 24;
  std::vector<size_t> asked;
  FakePlans(uint64_t fixed_bytes, uint64_t bytes_a_token) : fixed(fixed_bytes), per_token(bytes_a_token) {}
  PrefillChunkPlan operator()(size_t chunk) {
    asked.push_back(chunk);
    const uint64_t total = fixed + per_token * chunk;
    return {total <= layers_fit_below ? n_layer : n_layer - 1, total};
  }
};

size_t choose(FakePlans& f, size_t n_ctx, uint64_t weights, uint64_t usable) {
  return choose_gpu_prefill_chunk(n_ctx, f.n_layer, weights, usable, [&](size_t c) { return f(c); });
}

TEST(PrefillChunk, LargestThatFitsWithinTheAllowance) {
  FakePlans f(5000 * MiB, 200 * 1024);  // 8B-like: ~200 KiB of scratch a token
  EXPECT_EQ(choose(f, 32768, 4600 * MiB, 80000 * MiB), 2048u);
  EXPECT_EQ(f.asked, (std::vector<size_t>{512, 2048}));
}

TEST(PrefillChunk, StepsDownWhenTheLargerPlanDoesNotFit) {
  FakePlans f(5000 * MiB, 200 * 1024);
  const uint64_t at1024 = 5000 * MiB + 200 * 1024 * 1024ull;
  EXPECT_EQ(choose(f, 32768, 4600 * MiB, at1024), 1024u);         // 2048 is past the usable bytes
  EXPECT_EQ(choose(f, 32768, 4600 * MiB, at1024 - 1), 512u);      // so is 1024
  EXPECT_EQ(choose(f, 32768, 4600 * MiB, 5000 * MiB), 512u);      // even 512 does not: the caller's error
}

TEST(PrefillChunk, KeepsEveryLayerOnTheDevice) {
  FakePlans f(5000 * MiB, 200 * 1024);
  f.layers_fit_below = 5000 * MiB + 200 * 1024 * 1100ull;  // auto layers would shed one past ~1100 tokens
  EXPECT_EQ(choose(f, 32768, 4600 * MiB, 80000 * MiB), 1024u);
  f.layers_fit_below = 5000 * MiB + 200 * 1024 * 600ull;
  EXPECT_EQ(choose(f, 32768, 4600 * MiB, 80000 * MiB), 512u);
  f.layers_fit_below = 1;  // a partial offload already at 512: no larger chunk is tried
  f.asked.clear();
  EXPECT_EQ(choose(f, 32768, 4600 * MiB, 80000 * MiB), 512u);
  EXPECT_EQ(f.asked, (std::vector<size_t>{512}));
}

TEST(PrefillChunk, ExtraMemoryIsBoundedByTheWeightsOr256MiB) {
  // A small model: 360 MiB of weights, 40 KiB of scratch a token: 2048 costs 60 MiB more (< 256).
  FakePlans small(400 * MiB, 40 * 1024);
  EXPECT_EQ(choose(small, 4096, 360 * MiB, 24000 * MiB), 2048u);
  // Scratch of 300 KiB a token: 2048 costs 450 MiB more than 512, 1024 150 MiB; with 360 MiB of
  // weights the allowance is 256 MiB, so 1024.
  FakePlans wide(400 * MiB, 300 * 1024);
  EXPECT_EQ(choose(wide, 4096, 360 * MiB, 24000 * MiB), 1024u);
  // With 8 GiB of weights the allowance is 1 GiB: 2048.
  EXPECT_EQ(choose(wide, 4096, 8192 * MiB, 24000 * MiB), 2048u);
}

TEST(PrefillChunk, NeverLongerThanTheContext) {
  FakePlans f(100 * MiB, 1024);
  EXPECT_EQ(choose(f, 128, 100 * MiB, 24000 * MiB), 128u);
  EXPECT_EQ(choose(f, 512, 100 * MiB, 24000 * MiB), 512u);
  EXPECT_EQ(choose(f, 700, 100 * MiB, 24000 * MiB), 700u);
  EXPECT_EQ(choose(f, 1500, 100 * MiB, 24000 * MiB), 1500u);
}

// The CPU's chunk: 256 only where the AMX tiles run the products and two threads or more share
// them; 128 otherwise; never past the context.
TEST(PrefillChunk, CpuTakes256OnlyWithTheTilesAndTwoThreads) {
  EXPECT_EQ(choose_cpu_prefill_chunk(4096, 2, true), 256u);
  EXPECT_EQ(choose_cpu_prefill_chunk(4096, 16, true), 256u);
  EXPECT_EQ(choose_cpu_prefill_chunk(4096, 1, true), 128u);
  EXPECT_EQ(choose_cpu_prefill_chunk(4096, 2, false), 128u);
  EXPECT_EQ(choose_cpu_prefill_chunk(4096, 8, false), 128u);
  EXPECT_EQ(choose_cpu_prefill_chunk(200, 2, true), 200u);
  EXPECT_EQ(choose_cpu_prefill_chunk(64, 1, false), 64u);
}

}  // namespace
}  // namespace alap
