// kernels/gpu/attn_splits.h on the host (no GPU): the split plan of decode attention keeps its
// invariants on every device size and geometry, not only the H200's 132 SMs that the device tests
// run on, and gives the splits measured in docs/bench/gpu.md "Session 35" there.
#include "kernels/gpu/attn_splits.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using alap::gpu::attn_plan_splits;
using alap::gpu::attn_split_plan;
using alap::gpu::attn_split_query;
using alap::gpu::kAttnMaxSplit;

attn_split_query query(int n_ctx, int sms, int occupancy, int blocks, int tile, int row_bytes, bool device_pos,
                       int capacity = 40000) {
  attn_split_query q;
  q.n_ctx = n_ctx;
  q.capacity = capacity;
  q.sms = sms;
  q.occupancy = occupancy;
  q.blocks = blocks;
  q.tile = tile;
  q.row_bytes = row_bytes;
  q.device_pos = device_pos;
  return q;
}

int div_up(int a, int b) { return (a + b - 1) / b; }

// Every plan: whole tiles, no empty split, at most kAttnMaxSplit splits; a launch cut for a lower
// bound lo covers every row up to its limit, and for every n_ctx in [lo, limit] a plain launch has
// the same split length (so the same bits) and no more splits than were launched.
TEST(AttnSplits, InvariantsOnEveryDeviceAndGeometry) {
  int plans = 0;
  for (int sms : {132, 96, 48, 24, 20, 8})
    for (int occupancy : {1, 2, 3})
      for (int blocks : {1, 2, 8, 16, 32, 64})
        for (int tile : {16, 32, 128})
          for (int row_bytes : {0, 136, 196, 256, 392, 520}) {
            const std::string tag = "sms " + std::to_string(sms) + " occupancy " + std::to_string(occupancy) +
                                    " blocks " + std::to_string(blocks) + " tile " + std::to_string(tile) +
                                    " row_bytes " + std::to_string(row_bytes);
            for (int lo = 1; lo <= 40000; lo += lo < 300 ? 7 : 997) {
              const attn_split_plan dev = attn_plan_splits(query(lo, sms, occupancy, blocks, tile, row_bytes, true));
              ++plans;
              ASSERT_EQ(dev.split_len % tile, 0) << tag;
              ASSERT_GE(dev.split_len, tile) << tag;
              ASSERT_GE(dev.n_split, 1) << tag;
              ASSERT_LE(dev.n_split, kAttnMaxSplit) << tag;
              ASSERT_GE(dev.limit, lo) << tag << " lo " << lo;
              ASSERT_LE(dev.limit, 40000) << tag;
              ASSERT_LE(static_cast<long long>(dev.limit), static_cast<long long>(dev.split_len) * dev.n_split)
                  << tag << " lo " << lo;
              // The range, densely near both ends and sparsely between.
              for (int n = lo; n <= dev.limit; n += (n - lo < 64 || dev.limit - n < 64) ? 1 : 61) {
                const attn_split_plan plain = attn_plan_splits(query(n, sms, occupancy, blocks, tile, row_bytes, false));
                ASSERT_EQ(plain.split_len, dev.split_len) << tag << " lo " << lo << " n " << n;
                ASSERT_EQ(plain.n_split, div_up(n, plain.split_len)) << tag << " n " << n;
                ASSERT_LE(plain.n_split, dev.n_split) << tag << " lo " << lo << " n " << n;
              }
            }
          }
  EXPECT_GT(plans, 100000);
}

// A split count the caller gives is kept (tests and benches use it), rule or not.
TEST(AttnSplits, CallersSplitCountIsKept) {
  for (int n_split : {1, 7, 16, 128}) {
    attn_split_query q = query(5000, 132, 2, 2, 128, 196, false);
    q.n_split = n_split;
    const attn_split_plan p = attn_plan_splits(q);
    EXPECT_EQ(p.split_len, div_up(div_up(5000, n_split), 128) * 128);
    EXPECT_EQ(p.n_split, div_up(5000, p.split_len));
  }
}

// The splits measured on the H200 (132 SMs, the matrix-unit body's 128-row tiles), plain launches.
TEST(AttnSplits, SplitsMeasuredOnTheH200) {
  const auto plain = [](int n_ctx, int occupancy, int blocks, int row_bytes) {
    return attn_plan_splits(query(n_ctx, 132, occupancy, blocks, 128, row_bytes, false, 40000));
  };
  // Qwen2.5-0.5B, k8 (2 KV heads of 64, 7 query heads: one slice; 196-byte rows; occupancy 2):
  // 32 splits of 512 rows at 16k (126 of 128 before), 7 of 128 at 769 rows as before.
  EXPECT_EQ(plain(16129, 2, 2, 196).split_len, 512);
  EXPECT_EQ(plain(16129, 2, 2, 196).n_split, 32);
  EXPECT_EQ(plain(32513, 2, 2, 196).n_split, 32);
  EXPECT_EQ(plain(769, 2, 2, 196).n_split, 7);
  // Qwen2.5-1.5B, k8 (2 KV heads of 128: 392-byte rows; occupancy 1): 192 KB splits allow 65 at 33k.
  EXPECT_EQ(plain(33001, 1, 2, 392).split_len, 512);
  EXPECT_EQ(plain(33001, 1, 2, 392).n_split, 65);
  // Llama-3.2-1B, k8 (8 KV heads of 64, occupancy 2): one block an SM at 4k (16 splits of 256),
  // two past ~8k rows (a wave of 33 a KV head: 10000 rows in 27 splits of 384, the merge's 313).
  EXPECT_EQ(plain(3841, 2, 8, 196).split_len, 256);
  EXPECT_EQ(plain(3841, 2, 8, 196).n_split, 16);
  EXPECT_EQ(plain(10000, 2, 8, 196).split_len, 384);
  EXPECT_EQ(attn_plan_splits(query(10000, 132, 2, 8, 128, 196, true)).n_split, 33);
  EXPECT_EQ(attn_plan_splits(query(3841, 132, 2, 8, 128, 196, true)).n_split, 16);
  // Llama-3-8B, k8 (8 KV heads of 128, occupancy 1): one wave of 16 splits, as before.
  EXPECT_EQ(plain(32768, 1, 8, 392).split_len, 2048);
  EXPECT_EQ(plain(32768, 1, 8, 392).n_split, 16);
  EXPECT_EQ(plain(3841, 1, 8, 392).split_len, 256);
  // The scalar body (row_bytes 0) keeps one wave's share: 128 splits of 128 rows at 16k.
  EXPECT_EQ(plain(16129, 2, 2, 0).split_len, 128);
  EXPECT_EQ(plain(16129, 2, 2, 0).n_split, 127);
}

}  // namespace
