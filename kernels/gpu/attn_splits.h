// How decode attention cuts the context into splits (flash-decoding): plain C++, shared by the
// launcher (attn_k8.hip) and the host check of its invariants (tests/kernels/gpu/attn_splits_test).
//
// One wave: as many blocks as are resident on the device at once (batch-1 decode has only n_kv_head
// blocks otherwise), each split a multiple of the body's tile of rows. For the matrix-unit body
// (row_bytes > 0, the automatic count) two more rules, measured on the H200 (docs/bench/gpu.md
// "Session 35"):
// - The merge's share: the last block of a KV head reads the splits' partials 16 at a time, one L2
//   round trip each, while every split streams its rows at one SM's pace. Past kAttnMergeSplits
//   splits the merge costs more than the shorter streams save, unless each split would still stream
//   more than kAttnSplitBytes: a Qwen2.5-0.5B step at 16k context took 714 µs with 126 splits a KV
//   head and 617 with 32; Qwen2.5-1.5B at 32k (64 splits of 200 KB) was slower with 20.
// - While one block an SM would stream at most kAttnShortSplitBytes a split, a second block an SM
//   (occupancy 2: head_dim 64) only shares the SM's bandwidth: Llama-3.2-1B at 4k took 584 µs with
//   two blocks an SM and 560 with one (at 32k, 200 KB a split, two were faster).
// The scalar body (row_bytes 0) keeps one wave's share: it streams a split with the whole block, and
// capped at 32 splits the Qwen2.5-0.5B step at 16k took 1.28x as long (H200).
//
// Under a position read on the device (pos_dev) a launch is cut for a lower bound n_ctx and serves
// every n_ctx' up to `limit` with the split length a launch for n_ctx' would have, so the same bits:
// every bound on the split length grows with n_ctx, and the one-block-an-SM switch ends the range.
#pragma once

#include <algorithm>

#include "kernels/gpu/attn_k8.h"

namespace alap::gpu {

inline constexpr int kAttnMergeSplits = 32;
inline constexpr int kAttnSplitBytes = 192 << 10;
inline constexpr int kAttnShortSplitBytes = 100 << 10;

struct attn_split_query {
  int n_ctx = 1;        // rows attended (with device_pos: a lower bound)
  int capacity = 1;     // rows the cache holds
  int n_split = 0;      // the caller's split count, 0 = automatic
  int sms = 1;          // multiprocessors (CUs) of the device
  int occupancy = 1;    // blocks of the kernel resident on one multiprocessor
  int blocks = 1;       // blocks a split has: KV heads × slices of the group
  int tile = 16;        // rows a split is a multiple of
  bool device_pos = false;
  int row_bytes = 0;    // bytes of one KV head's cache row (0: the scalar body's plain wave)
};

struct attn_split_plan {
  int split_len = 0;  // rows a split
  int n_split = 0;    // splits launched (with device_pos every block of the wave; those past the rows leave)
  int limit = 0;      // the largest n_ctx this launch serves (attn_decode_ctx_limit), ≤ capacity
};

inline attn_split_plan attn_plan_splits(const attn_split_query& q) {
  const auto clamp = [](int n) { return n < 1 ? 1 : (n > kAttnMaxSplit ? kAttnMaxSplit : n); };
  const auto div_up = [](long long a, long long b) { return (a + b - 1) / b; };
  const auto rows_of = [&](long long rows) { return int(div_up(rows, q.tile) * q.tile); };
  const bool rule = q.n_split <= 0 && q.row_bytes > 0;
  const int blocks = std::max(1, q.blocks), per_sm = q.sms / blocks;
  int want = clamp(q.n_split > 0 ? q.n_split : q.sms * q.occupancy / blocks);
  long long limit = q.capacity;
  if (rule && q.occupancy > 1) {
    const long long short_ctx = (long long)kAttnShortSplitBytes * clamp(per_sm) / q.row_bytes;
    if (q.n_ctx <= short_ctx) want = clamp(per_sm), limit = short_ctx;
  }
  attn_split_plan p;
  p.split_len = rows_of(div_up(q.n_ctx, want));
  int served = want;
  if (rule) {
    const int by_merge = rows_of(div_up(q.n_ctx, kAttnMergeSplits));
    const int by_bytes = rows_of(div_up(kAttnSplitBytes, q.row_bytes));
    p.split_len = std::max(p.split_len, std::min(by_merge, by_bytes));
    if (by_bytes > p.split_len) served = std::min(want, kAttnMergeSplits);
  }
  p.n_split = q.device_pos ? want : int(div_up(q.n_ctx, p.split_len));  // no split is empty
  p.limit = int(std::min<long long>(std::min<long long>(limit, (long long)p.split_len * served), q.capacity));
  return p;
}

}  // namespace alap::gpu
