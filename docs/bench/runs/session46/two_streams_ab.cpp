// Session 46: one type's one-token packed product, cold (rotating ~400 MB of copies on huge pages), one
// group at a time against two groups at a time, alternating in one process: 9 rounds of `calls` calls each
// way; prints each round's GB/s (one/two) and the median time ratio one/two. THREADS=2: rows split in two
// halves on two threads. It needs a kernels library whose decode_k reads the environment variable TWO,
// i.e. d68fc4a's packed_vnni.cpp with two_streams_experiment.diff applied (the experiment; the
// shipped code reads two groups at a time always). Build (repo root):
//   git show d68fc4a:kernels/cpu/avx512_vnni/packed_vnni.cpp > /tmp/pv.cpp
//   patch /tmp/pv.cpp docs/bench/runs/session46/two_streams_experiment.diff
//   c++ -O3 -DNDEBUG -fPIC -ffp-contract=off -std=c++20 -mavx2 -mfma -mf16c -mavx512f -mavx512bw \
//       -mavx512dq -mavx512vl -mavx512vnni -Ikernels/include -Ikernels/cpu -c /tmp/pv.cpp -o /tmp/packed_vnni.cpp.o
//   cp build/default/kernels/cpu/libalap_kernels.a /tmp/lk.a && ar r /tmp/lk.a /tmp/packed_vnni.cpp.o
//   c++ -O3 -std=c++20 -Ikernels/include -Itests/bench docs/bench/runs/session46/two_streams_ab.cpp /tmp/lk.a \
//       -lpthread -o /tmp/two_streams_ab
//   /tmp/two_streams_ab q5_0 896 4864 600; THREADS=2 /tmp/two_streams_ab q5_0 896 4864 600
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include "alap/kernels/dtype.h"
#include "alap/kernels/huge_pages.h"
#include "alap/kernels/quant.h"
#include "bench_types.h"
#include <atomic>
#include <functional>
#include <thread>
namespace {
class Pair {
 public:
  Pair() : helper_([this] { loop(); }) {}
  ~Pair() { stop_ = true; gen_.fetch_add(1); helper_.join(); }
  void run(size_t n, const std::function<void(size_t)>& fn) {
    if (n == 1) return fn(0);
    fn_ = &fn; done_.store(false); gen_.fetch_add(1); fn(0);
    while (!done_.load()) {}
  }
 private:
  void loop() {
    uint64_t seen = 0;
    for (;;) { while (gen_.load() == seen) {} seen = gen_.load(); if (stop_) return; (*fn_)(1); done_.store(true); }
  }
  std::atomic<uint64_t> gen_{0}; std::atomic<bool> done_{true}; std::atomic<bool> stop_{false};
  const std::function<void(size_t)>* fn_ = nullptr; std::thread helper_;
};
}  // namespace
using namespace alap::kernels;
int main(int argc, char** argv) {
  DType t; alap::bench::type_by_name(argv[1], t);
  const size_t rows = std::stoul(argv[2]), cols = std::stoul(argv[3]); const int calls = std::atoi(argv[4]);
  const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
  const size_t rb = dtype_row_bytes(info, cols), bytes = rows * rb;
  const WeightView plain{t, nullptr, rows, cols};
  const size_t pb = packed_bytes(plain);
  const size_t n = (400u << 20) / pb + 1;
  std::vector<uint8_t> w(bytes);
  std::mt19937 rng(1); std::normal_distribution<float> nd(0, 1);
  std::vector<float> src(cols);
  for (size_t r = 0; r < rows; ++r) { for (auto& v : src) v = 0.05f * nd(rng); quantize_row(t, src.data(), w.data() + r * rb, cols); }
  auto* pk = static_cast<uint8_t*>(alloc_streamed(n * pb));
  std::vector<WeightView> wp(n);
  for (size_t k = 0; k < n; ++k) { WeightView u{t, w.data(), rows, cols}; pack_weights(u, pk + k * pb); wp[k] = u; wp[k].packed = pk + k * pb; }
  std::vector<float> x(cols), d(cols / 32), y(rows); std::vector<int8_t> q(cols); std::vector<int32_t> s(cols / 32), s4(cols / 4);
  for (auto& v : x) v = nd(rng);
  quantize_activations(x.data(), 1, cols, q.data(), d.data(), s.data(), s4.data());
  QuantizedActs a{x.data(), q.data(), d.data(), s.data(), s4.data(), 1, cols};
  // A/B in one process: rounds of `calls` calls each way, TWO unset then set (the experiment reads it).
  const size_t nt = std::getenv("THREADS") ? 2 : 1; Pair pair;
  const size_t half = rows / 2 / 16 * 16;
  std::vector<double> ra;
  for (int r = 0; r < 9; ++r) {
    double t[2];
    for (int k = 0; k < 2; ++k) {
      if (k) setenv("TWO", "1", 1); else unsetenv("TWO");
      auto t0 = std::chrono::steady_clock::now();
      for (int c = 0; c < calls; ++c) pair.run(nt, [&](size_t i) { const WeightView& wv = wp[(c + r * 7) % n]; if (nt == 1) matmul(wv, a, y.data(), rows, 0, rows); else matmul(wv, a, y.data(), rows, i ? half : 0, i ? rows : half); });
      t[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    ra.push_back(t[0] / t[1]);
    std::printf("%.1f/%.1f ", double(bytes) * calls / t[0] / 1e9, double(bytes) * calls / t[1] / 1e9);
  }
  std::sort(ra.begin(), ra.end());
  std::printf("\n%s %zux%zu: one/two time ratio median %.3f (range %.3f-%.3f)\n", argv[1], rows, cols, ra[4], ra[0], ra[8]);
}
