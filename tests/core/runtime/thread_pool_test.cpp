// ThreadPool: ranges cover [0, n) exactly once, the caller participates, exceptions propagate.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/runtime/thread_pool.h"

namespace alap {
namespace {

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (size_t threads : {1u, 2u, 3u, 5u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.n_threads(), threads);
    for (size_t n : {0u, 1u, 2u, 7u, 1000u}) {
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int> calls{0};
      pool.parallel_for(n, [&](size_t b, size_t e) {
        EXPECT_LT(b, e);
        ++calls;
        for (size_t i = b; i < e; ++i) ++hits[i];
      });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n " << n << " i " << i;
      EXPECT_LE(static_cast<size_t>(calls.load()), std::max<size_t>(threads, 1));
    }
  }
}

TEST(ThreadPool, IndexedRangesUseDistinctThreadsAndTheCaller) {
  ThreadPool pool(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::thread::id> ids(3);
    std::vector<int> seen(3, 0);
    pool.parallel_for_indexed(30, [&](size_t b, size_t e, size_t t) {
      ASSERT_LT(t, 3u);
      EXPECT_EQ(b, 10 * t);
      EXPECT_EQ(e, 10 * t + 10);
      ids[t] = std::this_thread::get_id();
      ++seen[t];
    });
    EXPECT_EQ(seen, std::vector<int>(3, 1));
    EXPECT_EQ(ids[0], std::this_thread::get_id());
    EXPECT_NE(ids[1], ids[0]);
    EXPECT_NE(ids[2], ids[1]);
  }
}

TEST(ThreadPool, OneThreadRunsInline) {
  ThreadPool pool(1);
  std::thread::id who;
  pool.parallel_for(5, [&](size_t b, size_t e) {
    EXPECT_EQ(b, 0u);
    EXPECT_EQ(e, 5u);
    who = std::this_thread::get_id();
  });
  EXPECT_EQ(who, std::this_thread::get_id());
}

TEST(ThreadPool, RethrowsAndStaysUsable) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for(10,
                                 [](size_t b, size_t) {
                                   if (b > 0) throw std::runtime_error("worker failed");
                                 }),
               std::runtime_error);
  std::atomic<size_t> sum{0};
  pool.parallel_for(100, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950u);
}

}  // namespace
}  // namespace alap
