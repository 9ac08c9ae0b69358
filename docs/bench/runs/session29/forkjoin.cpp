// Session 29 measuring program: an empty parallel_for_chunked / parallel_for_indexed call of a 2-thread
// pool, 200000 times, five rounds (built against build/default's libraries; docs/bench/cpu.md).
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>
#include <algorithm>
#include "core/runtime/thread_pool.h"
using namespace alap;
int main() {
  ThreadPool pool(2);
  volatile size_t sink = 0;
  auto fn = [&](size_t b, size_t e, size_t) { sink = sink + e - b; };
  for (int r = 0; r < 5; ++r) {
    const int N = 200000;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < N; ++i) pool.parallel_for_chunked(2, 1, std::ref(fn));
    auto t1 = std::chrono::steady_clock::now();
    for (int i = 0; i < N; ++i) pool.parallel_for_indexed(2, std::ref(fn));
    auto t2 = std::chrono::steady_clock::now();
    std::printf("chunked %.3f us  indexed %.3f us\n", std::chrono::duration<double>(t1 - t0).count() / N * 1e6,
                std::chrono::duration<double>(t2 - t1).count() / N * 1e6);
  }
}
