// Session 28 measuring program (docs/bench/runs/session28/ab.sh builds and runs it).
#include <chrono>
#include <cstdio>
#include <vector>
#include <random>
#include "alap/kernels/activation.h"
#include "alap/kernels/quant.h"
int main() {
  const size_t n = 64 * 1408;
  std::vector<float> g(n), u(n), g0(n);
  std::mt19937 r(1); std::normal_distribution<float> nd(0, 2);
  for (auto& x : g0) x = nd(r);
  for (auto& x : u) x = nd(r);
  double best = 1e9;
  for (int rep = 0; rep < 200; ++rep) {
    g = g0;
    auto t0 = std::chrono::steady_clock::now();
    alap::kernels::silu_mul(g.data(), u.data(), n);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("silu_mul %zu values: %.1f us, %.3f ns/value\n", n, best * 1e6, best * 1e9 / n);
  std::vector<int8_t> q(n); std::vector<float> d(n/32); std::vector<int32_t> s(n/32), s4(n/4);
  best = 1e9;
  for (int rep = 0; rep < 200; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    alap::kernels::quantize_activations(g0.data(), 64, 1408, q.data(), d.data(), s.data(), s4.data());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("quantize_activations %zu values: %.1f us, %.3f ns/value\n", n, best * 1e6, best * 1e9 / n);
}
