#include "core/runtime/thread_pool.h"
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <atomic>
int main(int argc, char** argv) {
  alap::ThreadPool pool(2);
  std::atomic<int> sink{0};
  const int N = 20000;
  std::vector<double> med;
  for (int rep = 0; rep < 7; ++rep) {
    std::vector<double> t(N);
    for (int i = 0; i < N; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      pool.parallel_for_chunked(2, 1, [&](size_t b, size_t e, size_t th) { sink.fetch_add(int(b + e + th), std::memory_order_relaxed); });
      t[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    }
    std::sort(t.begin(), t.end());
    std::printf("chunked(2) call: median %.3f us, p10 %.3f, p90 %.3f\n", t[N / 2], t[N / 10], t[9 * N / 10]);
  }
}
