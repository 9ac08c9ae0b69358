// A fixed pool of worker threads for the forward pass: parallel_for splits [0, n) into one
// contiguous range per thread, the calling thread runs the first range; parallel_for_chunked
// hands out chunks to whichever thread is free. Not a task queue.
//
//   alap::ThreadPool pool(4);                      // 4 threads in all: the caller + 3 workers
//   pool.parallel_for(n_rows, [&](size_t begin, size_t end) { /* rows [begin, end) */ });
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "core/runtime/cpu_topology.h"  // physical_core_count(): the n_threads = 0 default

namespace alap {

class ThreadPool {
 public:
  // n_threads counts the calling thread: 1 = no workers (everything runs inline);
  // 0 = physical_core_count(), one thread per physical core this process may run on (SMT
  // siblings, CPUs outside its affinity mask and, beside P-cores, E-cores not counted).
  explicit ThreadPool(size_t n_threads = 1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t n_threads() const { return n_threads_; }

  // Calls fn(begin, end) on disjoint ranges covering [0, n) — at most n_threads() ranges, the
  // split depends only on n and n_threads() — and returns when all are done. Empty ranges are
  // not called. Not reentrant: call from one thread at a time, never from inside fn.
  // An exception thrown by fn is rethrown here (the first one).
  void parallel_for(size_t n, const std::function<void(size_t begin, size_t end)>& fn);

  // The same split, also telling fn which thread runs the range (0 = the caller, < n_threads()),
  // so fn can use per-thread scratch without locking.
  void parallel_for_indexed(size_t n, const std::function<void(size_t begin, size_t end, size_t thread)>& fn);

  // Dynamic split: [0, n) in chunks of `grain` (>= 1) claimed by whichever thread is free first,
  // the caller included, so a worker the OS has not scheduled (a busy machine) does not hold the
  // call up: the caller waits only for workers that took part. Only as many threads as there are
  // chunks (ceil(n / grain)) are woken; the others skip the call. fn may run several chunks on one
  // thread; `thread` (< n_threads()) names the running thread, for per-thread scratch. Use it when
  // the result does not depend on which thread runs which chunk.
  void parallel_for_chunked(size_t n, size_t grain,
                            const std::function<void(size_t begin, size_t end, size_t thread)>& fn);

 private:
  struct Impl;
  size_t n_threads_ = 1;
  std::unique_ptr<Impl> impl_;
};

// This machine's memory read bandwidth in GB/s (1e9 bytes) with n_threads threads (0 = all),
// measured now (kernels::measure_read_bandwidth: best of a few passes over 512 MiB). For
// benchmarks that print the decode floor beside the measured decode time (alap-cli bench).
double measure_read_bandwidth_gbps(size_t n_threads = 0);

}  // namespace alap
