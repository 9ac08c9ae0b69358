// Cross-core cost on this machine: (1) a flag round trip between two threads; (2) a buffer written by
// one thread and then summed by the other (the hand-off of activations between pool threads), against
// the same sum when the reader wrote the buffer itself.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
alignas(64) std::atomic<unsigned> a{0};
alignas(64) std::atomic<unsigned> b{0};
int main() {
  const unsigned N = 200000;
  {
    std::thread t([&] { for (unsigned i = 1; i <= N; ++i) { while (a.load(std::memory_order_acquire) != i) __builtin_ia32_pause(); b.store(i, std::memory_order_release); } });
    auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = 1; i <= N; ++i) { a.store(i, std::memory_order_release); while (b.load(std::memory_order_acquire) != i) __builtin_ia32_pause(); }
    auto t1 = std::chrono::steady_clock::now();
    t.join();
    std::printf("flag round trip: %.3f us\n", std::chrono::duration<double>(t1 - t0).count() / N * 1e6);
  }
  for (size_t bytes : {4096u, 16384u, 65536u}) {
    std::vector<float> buf(bytes / 4, 1.0f);
    const unsigned R = 20000;
    a = 0; b = 0;
    volatile float sink = 0;
    double remote = 0;
    // The main thread writes, the other reads and answers; then the main thread writes and reads itself.
    std::thread t([&] {
      for (unsigned i = 1; i <= R; ++i) {
        while (a.load(std::memory_order_acquire) != i) __builtin_ia32_pause();
        float s = 0; for (float v : buf) s += v; sink = s;
        b.store(i, std::memory_order_release);
      }
    });
    auto t0 = std::chrono::steady_clock::now();
    for (unsigned i = 1; i <= R; ++i) {
      std::fill(buf.begin(), buf.end(), float(i & 7));
      a.store(i, std::memory_order_release);
      while (b.load(std::memory_order_acquire) != i) __builtin_ia32_pause();
    }
    auto t1 = std::chrono::steady_clock::now();
    t.join();
    remote = std::chrono::duration<double>(t1 - t0).count() / R * 1e6;
    auto t2 = std::chrono::steady_clock::now();
    for (unsigned i = 1; i <= R; ++i) {
      std::fill(buf.begin(), buf.end(), float(i & 7));
      float s = 0; for (float v : buf) s += v; sink = s;
    }
    auto t3 = std::chrono::steady_clock::now();
    const double local = std::chrono::duration<double>(t3 - t2).count() / R * 1e6;
    std::printf("%6zu bytes: written here, summed there + flag round trip %.3f us; written and summed here %.3f us\n",
                bytes, remote, local);
  }
}
