// ThreadPool: ranges cover [0, n) exactly once, the caller participates, exceptions propagate,
// idle workers stop spinning and sleep.
#include <gtest/gtest.h>

#include <time.h>

#include <atomic>
#include <chrono>
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

// Workers spin for a bounded time after a call (to catch the next call of a forward pass without
// a futex wake-up) and then sleep: an idle pool must not keep burning a core.
TEST(ThreadPool, IdleWorkersSleep) {
  ThreadPool pool(3);
  std::atomic<size_t> sum{0};
  pool.parallel_for(1000, [&](size_t b, size_t e) { sum += e - b; });
  ASSERT_EQ(sum.load(), 1000u);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // longer than any spin budget
  auto cpu_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
  };
  const double before = cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Two spinning workers would use ~400 ms of CPU here; sleeping ones next to nothing.
  EXPECT_LT(cpu_ms() - before, 40.0);
}

}  // namespace
}  // namespace alap
