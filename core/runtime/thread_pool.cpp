// ThreadPool: workers sleep on a futex-backed generation counter after a bounded spin, so the
// back-to-back parallel_for calls of a decode step or a prefill do not pay a wake-up each.
// Chunked calls let the caller finish alone when a worker is not scheduled (a loaded machine),
// and wake only as many threads as they have chunks.
#include "core/runtime/thread_pool.h"

#include "alap/kernels/probe.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace alap {

namespace {

// How long a worker waiting for the next call, and a caller waiting for its workers, spin before
// they sleep. A futex wake-up costs 20-30 µs on this project's KVM machines (p50; p99 40-120),
// against 0.1 µs for a spinning thread, and a forward pass issues a parallel call every 10-300 µs
// (prefill products, per-token work, decode's ~5 calls a layer) with gaps of a few µs to tens of µs
// between them, so a spin shorter than those gaps (the old 256 pauses, ~4 µs) paid the wake-up on
// most calls. The spin yields the CPU every ~16 µs, so on an oversubscribed machine a runnable
// thread (the caller doing the work) is not starved by a spinner; once a pass ends the workers
// sleep after this long. ALAP_POOL_SPIN_US overrides it (0 = sleep at once), for measuring.
std::chrono::microseconds spin_budget() {
  static const std::chrono::microseconds budget = [] {
    long us = 1000;
    if (const char* e = std::getenv("ALAP_POOL_SPIN_US")) us = std::max(0L, std::strtol(e, nullptr, 10));
    return std::chrono::microseconds(us);
  }();
  return budget;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or the budget is spent; true when done() held.
template <class Done>
bool spin_until(Done done) {
  if (done()) return true;
  const auto budget = spin_budget();
  if (budget.count() == 0) return false;
  const auto t0 = std::chrono::steady_clock::now();
  for (unsigned i = 1;; ++i) {
    cpu_relax();
    if (done()) return true;
    if (i % 64 == 0) {
      if (std::chrono::steady_clock::now() - t0 >= budget) return done();
      if (i % 1024 == 0) sched_yield();
    }
  }
}

}  // namespace

// A call is published as one 64-bit word: the call's number (high 32 bits), how many threads
// take part (bits 1..31; the caller is thread 0, so workers 1 .. participants-1 join) and whether
// it is chunked (bit 0). One word, so a worker never pairs one call's number with another call's
// kind. A worker whose index is not below the count skips the call without touching any shared
// line: a small product on a many-core machine wakes only the threads it can use (session 10:
// with all 16 threads of a 16-core machine joining every call, a 30M model's token was slower
// than with 8).
namespace {
constexpr uint64_t call_word(uint32_t number, size_t participants, bool chunked) {
  return (uint64_t{number} << 32) | (uint64_t{participants} << 1) | (chunked ? 1u : 0u);
}
constexpr uint32_t call_number(uint64_t w) { return static_cast<uint32_t>(w >> 32); }
constexpr size_t call_participants(uint64_t w) { return static_cast<size_t>((w & 0xffffffffu) >> 1); }
constexpr bool call_chunked(uint64_t w) { return (w & 1u) != 0; }
}  // namespace

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::atomic<uint64_t> call{0};  // the latest call (call_word); workers spin on it
  std::atomic<uint32_t> bell{0};  // the latest call's number; workers sleep on it (a futex word: a
                                  // 64-bit wait goes through libstdc++'s slow proxy path)
  std::atomic<uint32_t> pending{0};
  std::atomic<bool> stop{false};
  size_t n = 0;
  size_t n_threads = 1;
  const std::function<void(size_t, size_t, size_t)>* fn = nullptr;
  // Chunked calls: the next unclaimed index, the chunk size, whether late workers may still join,
  // and how many joined (the caller waits for those only). seq_cst: a worker's join and the
  // caller's close are ordered so that a joiner either sees the call closed or is waited for.
  // A worker that slept through a chunked call may read a later call's word and fields; it then
  // takes part in that later call, which is what the join protocol allows.
  size_t grain = 1;
  std::atomic<size_t> next{0};
  std::atomic<bool> open{false};
  std::atomic<uint32_t> joined{0};
  std::mutex error_mutex;
  std::exception_ptr error;

  void run_chunks(size_t thread) {
    for (;;) {
      const size_t begin = next.fetch_add(grain);
      if (begin >= n) return;
      try {
        (*fn)(begin, std::min(n, begin + grain), thread);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  }

  void join_chunks(size_t thread) {
    joined.fetch_add(1);
    if (open.load()) run_chunks(thread);
    if (joined.fetch_sub(1) == 1) joined.notify_one();
  }

  void run_range(size_t thread) {
    const size_t begin = n * thread / n_threads;
    const size_t end = n * (thread + 1) / n_threads;
    if (begin >= end) return;
    try {
      (*fn)(begin, end, thread);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }

  void publish(size_t participants, bool chunked) {
    const uint32_t number = call_number(call.load(std::memory_order_relaxed)) + 1;
    call.store(call_word(number, participants, chunked), std::memory_order_seq_cst);
    bell.store(number, std::memory_order_seq_cst);
    bell.notify_all();  // no system call when no worker sleeps (the wait's waiter count)
  }

  void worker_loop(size_t thread) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t w = seen;
      spin_until([&] { return (w = call.load(std::memory_order_acquire)) != seen; });
      while (w == seen) {
        bell.wait(call_number(seen), std::memory_order_acquire);
        w = call.load(std::memory_order_acquire);
      }
      seen = w;
      if (stop.load(std::memory_order_acquire)) return;
      if (thread >= call_participants(w)) continue;
      if (call_chunked(w)) {
        join_chunks(thread);
        continue;
      }
      run_range(thread);
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) pending.notify_one();
    }
  }
};

ThreadPool::ThreadPool(size_t n_threads) : impl_(std::make_unique<Impl>()) {
  if (n_threads == 0) n_threads = physical_core_count();
  n_threads_ = n_threads;
  impl_->n_threads = n_threads;
  impl_->workers.reserve(n_threads - 1);
  for (size_t t = 1; t < n_threads; ++t) {
    impl_->workers.emplace_back([this, t] { impl_->worker_loop(t); });
  }
}

ThreadPool::~ThreadPool() {
  impl_->stop.store(true, std::memory_order_release);
  impl_->publish(impl_->n_threads, false);  // every worker wakes, sees stop and returns
  for (auto& w : impl_->workers) w.join();
}

void ThreadPool::parallel_for(size_t n, const std::function<void(size_t begin, size_t end)>& fn) {
  parallel_for_indexed(n, [&fn](size_t begin, size_t end, size_t) { fn(begin, end); });
}

void ThreadPool::parallel_for_chunked(size_t n, size_t grain,
                                      const std::function<void(size_t begin, size_t end, size_t thread)>& fn) {
  if (n == 0) return;
  Impl& im = *impl_;
  grain = std::max<size_t>(1, grain);
  if (im.workers.empty() || n <= grain) {
    parallel_for_indexed(n, fn);
    return;
  }
  im.n = n;
  im.fn = &fn;
  im.error = nullptr;
  im.grain = grain;
  im.next.store(0);
  im.open.store(true);
  // As many threads as there are chunks: the others would find nothing to claim.
  im.publish(std::min(n_threads_, (n + grain - 1) / grain), true);
  im.run_chunks(0);
  im.open.store(false);
  uint32_t j = 0;
  spin_until([&] { return (j = im.joined.load()) == 0; });
  while (j != 0) {
    im.joined.wait(j);
    j = im.joined.load();
  }
  im.fn = nullptr;
  if (im.error) {
    std::exception_ptr e = im.error;
    im.error = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::parallel_for_indexed(size_t n,
                                      const std::function<void(size_t begin, size_t end, size_t thread)>& fn) {
  if (n == 0) return;
  Impl& im = *impl_;
  im.n = n;
  im.fn = &fn;
  im.error = nullptr;
  const size_t n_workers = im.workers.size();
  if (n_workers > 0 && n > 1) {
    im.pending.store(static_cast<uint32_t>(n_workers), std::memory_order_relaxed);
    im.publish(n_threads_, false);
    im.run_range(0);
    uint32_t left = 0;
    spin_until([&] { return (left = im.pending.load(std::memory_order_acquire)) == 0; });
    while (left != 0) {
      im.pending.wait(left, std::memory_order_acquire);
      left = im.pending.load(std::memory_order_acquire);
    }
  } else {
    // Inline: one range covering everything, as thread 0.
    const size_t saved = im.n_threads;
    im.n_threads = 1;
    im.run_range(0);
    im.n_threads = saved;
  }
  im.fn = nullptr;
  if (im.error) {
    std::exception_ptr e = im.error;
    im.error = nullptr;
    std::rethrow_exception(e);
  }
}

double measure_read_bandwidth_gbps(size_t n_threads) { return kernels::measure_read_bandwidth(n_threads).gbps; }

}  // namespace alap
