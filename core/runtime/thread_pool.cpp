// ThreadPool: workers sleep on a futex-backed generation counter (after a short spin, so the
// back-to-back parallel_for calls of one decode step do not pay a wake-up each). Chunked calls
// let the caller finish alone when a worker is not scheduled (a loaded machine).
#include "core/runtime/thread_pool.h"

#include "alap/kernels/probe.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace alap {

namespace {

// Short busy wait before sleeping: a decode step issues ~5 parallel_for calls per layer, each
// a few microseconds long. Kept short (a pause is ~100 cycles on recent x86): long spins starve
// the other threads when cores are oversubscribed (measured: 20000 pauses made 2-thread decode
// 15x slower on a loaded 2-core machine).
constexpr int kSpinIterations = 256;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::atomic<uint32_t> generation{0};
  std::atomic<uint32_t> pending{0};
  bool stop = false;  // written and read under state_mutex
  size_t n = 0;
  size_t n_threads = 1;
  const std::function<void(size_t, size_t, size_t)>* fn = nullptr;
  // Chunked calls: the next unclaimed index, the chunk size, whether late workers may still join,
  // and how many joined (the caller waits for those only). seq_cst: a worker's join and the
  // caller's close are ordered so that a joiner either sees the call closed or is waited for.
  std::mutex state_mutex;  // a call's kind and generation are published together under it
  bool chunked = false;
  size_t grain = 1;
  std::atomic<size_t> next{0};
  std::atomic<bool> open{false};
  std::atomic<uint32_t> joined{0};

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
  std::mutex error_mutex;
  std::exception_ptr error;

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

  void worker_loop(size_t thread) {
    uint32_t seen = 0;
    for (;;) {
      uint32_t g = generation.load(std::memory_order_acquire);
      for (int i = 0; g == seen && i < kSpinIterations; ++i) {
        cpu_relax();
        g = generation.load(std::memory_order_acquire);
      }
      while (g == seen) {
        generation.wait(seen, std::memory_order_acquire);
        g = generation.load(std::memory_order_acquire);
      }
      // The call now published (a worker that slept through a chunked call wakes into a later one).
      bool is_chunked;
      bool stopping;
      {
        std::lock_guard<std::mutex> lock(state_mutex);
        seen = generation.load(std::memory_order_relaxed);
        is_chunked = chunked;
        stopping = stop;  // read under the lock: a late worker may still be here when the pool is destroyed
      }
      if (stopping) return;
      if (is_chunked) {
        join_chunks(thread);
        continue;
      }
      run_range(thread);
      if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) pending.notify_one();
    }
  }
};

ThreadPool::ThreadPool(size_t n_threads) : impl_(std::make_unique<Impl>()) {
  if (n_threads == 0) n_threads = std::max(1u, std::thread::hardware_concurrency());
  n_threads_ = n_threads;
  impl_->n_threads = n_threads;
  impl_->workers.reserve(n_threads - 1);
  for (size_t t = 1; t < n_threads; ++t) {
    impl_->workers.emplace_back([this, t] { impl_->worker_loop(t); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->state_mutex);
    impl_->stop = true;
    impl_->generation.fetch_add(1, std::memory_order_release);
  }
  impl_->generation.notify_all();
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
  {
    std::lock_guard<std::mutex> lock(im.state_mutex);
    im.chunked = true;
    im.generation.fetch_add(1, std::memory_order_seq_cst);
  }
  im.generation.notify_all();
  im.run_chunks(0);
  im.open.store(false);
  uint32_t j = im.joined.load();
  for (int i = 0; j != 0 && i < kSpinIterations; ++i) {
    cpu_relax();
    j = im.joined.load();
  }
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
    {
      std::lock_guard<std::mutex> lock(im.state_mutex);
      im.chunked = false;
      im.generation.fetch_add(1, std::memory_order_release);
    }
    im.generation.notify_all();
    im.run_range(0);
    uint32_t left = im.pending.load(std::memory_order_acquire);
    for (int i = 0; left != 0 && i < kSpinIterations; ++i) {
      cpu_relax();
      left = im.pending.load(std::memory_order_acquire);
    }
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
