// ThreadPool::parallel_for_chunked: chunks cover [0, n) exactly once with the asked grain, thread
// ids are in range, it interleaves safely with the static split, a busy worker does not block the
// caller, and exceptions propagate.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/runtime/thread_pool.h"

namespace alap {
namespace {

TEST(ThreadPoolChunked, CoversEveryIndexOnceInGrainSizedChunks) {
  for (size_t threads : {size_t{1}, size_t{2}, size_t{4}}) {
    ThreadPool pool(threads);
    for (size_t n : {size_t{1}, size_t{5}, size_t{64}, size_t{1000}}) {
      for (size_t grain : {size_t{1}, size_t{7}, size_t{64}}) {
        std::vector<std::atomic<int>> hits(n);
        std::atomic<bool> bad{false};
        pool.parallel_for_chunked(n, grain, [&](size_t b, size_t e, size_t t) {
          if (b >= e || t >= threads) bad = true;
          if (threads > 1 && n > grain && (b % grain != 0 || (e - b != grain && e != n))) bad = true;
          for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
        });
        EXPECT_FALSE(bad.load()) << threads << " " << n << " " << grain;
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n " << n << " i " << i;
      }
    }
  }
}

TEST(ThreadPoolChunked, InterleavesWithStaticCallsManyTimes) {
  ThreadPool pool(3);
  std::atomic<uint64_t> sum{0};
  uint64_t want = 0;
  for (int round = 0; round < 3000; ++round) {
    const size_t n = 1 + static_cast<size_t>(round % 37);
    if (round % 3 == 0) {
      pool.parallel_for(n, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) sum += i;
      });
    } else {
      pool.parallel_for_chunked(n, 1 + static_cast<size_t>(round % 5), [&](size_t b, size_t e, size_t) {
        for (size_t i = b; i < e; ++i) sum += i;
      });
    }
    want += n * (n - 1) / 2;
  }
  EXPECT_EQ(sum.load(), want);
}

// Calls with fewer chunks than threads wake only that many threads; the others skip the call. Mixed
// with range calls (every thread), with pauses long enough for the workers to fall asleep between
// some calls, on more threads than this machine has CPUs: every index is still covered exactly once.
TEST(ThreadPoolChunked, CallsOfEveryWidthInterleaveWithSleepsAndRanges) {
  ThreadPool pool(8);
  std::atomic<uint64_t> sum{0};
  std::atomic<bool> bad{false};
  uint64_t want = 0;
  for (int round = 0; round < 2000; ++round) {
    const size_t chunks = 1 + static_cast<size_t>(round % 9);  // 1 .. 9 chunks: 1 .. 8 threads woken
    const size_t grain = 1 + static_cast<size_t>(round % 4);
    const size_t n = chunks * grain - static_cast<size_t>(round % 2 == 0 && grain > 1);
    if (round % 7 == 0) {
      pool.parallel_for(n, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) sum += i;
      });
    } else {
      pool.parallel_for_chunked(n, grain, [&](size_t b, size_t e, size_t t) {
        if (t >= 8 || b >= e || e > n) bad = true;
        for (size_t i = b; i < e; ++i) sum += i;
      });
    }
    want += n * (n - 1) / 2;
    if (round % 250 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));  // past the spin
  }
  EXPECT_FALSE(bad.load());
  EXPECT_EQ(sum.load(), want);
}

TEST(ThreadPoolChunked, CallerTakesTheWorkOfABusyWorker) {
  ThreadPool pool(2);
  std::atomic<size_t> by_caller{0};
  const auto caller = std::this_thread::get_id();
  // The first chunk a worker takes sleeps; the caller must be able to do the other chunks itself.
  std::atomic<bool> slept{false};
  pool.parallel_for_chunked(100, 1, [&](size_t b, size_t e, size_t) {
    if (std::this_thread::get_id() == caller) {
      by_caller += e - b;
    } else if (!slept.exchange(true)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  EXPECT_GE(by_caller.load(), 90u);
}

TEST(ThreadPoolChunked, RethrowsAndStaysUsable) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.parallel_for_chunked(50, 3,
                                         [](size_t b, size_t, size_t) {
                                           if (b == 21) throw std::runtime_error("chunk 21");
                                         }),
               std::runtime_error);
  std::atomic<size_t> count{0};
  pool.parallel_for_chunked(50, 3, [&](size_t b, size_t e, size_t) { count += e - b; });
  EXPECT_EQ(count.load(), 50u);
}

}  // namespace
}  // namespace alap
