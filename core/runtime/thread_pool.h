// A fixed pool of worker threads for the forward pass: parallel_for splits [0, n) into one
// contiguous range per thread, the calling thread runs the first range. Not a task queue.
//
//   alap::ThreadPool pool(4);                      // 4 threads in all: the caller + 3 workers
//   pool.parallel_for(n_rows, [&](size_t begin, size_t end) { /* rows [begin, end) */ });
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace alap {

class ThreadPool {
 public:
  // n_threads counts the calling thread: 1 = no workers (everything runs inline);
  // 0 = std::thread::hardware_concurrency().
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

 private:
  struct Impl;
  size_t n_threads_ = 1;
  std::unique_ptr<Impl> impl_;
};

}  // namespace alap
