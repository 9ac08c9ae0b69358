// Session 41: one plain-weight prefill product alone (kernels::matmul on f16, or f32 with a 5th
// argument starting with 3), warm, best of REPS; the checksum of y shows that two builds agree.
// ALAP_CPU_VARIANT picks the variant. Build against a kernels archive:
//   c++ -O2 -std=c++20 -I. -Ikernels/include plain_alone.cpp -o plain_alone \
//       build/default/kernels/cpu/libalap_kernels.a -lpthread
//   ./plain_alone ROWS COLS TOKENS [REPS] [3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"
using namespace alap::kernels;
using Clock = std::chrono::steady_clock;
int main(int argc, char** argv) {
  const size_t rows = std::atoi(argv[1]), cols = std::atoi(argv[2]), nt = std::atoi(argv[3]);
  const int reps = argc > 4 ? std::atoi(argv[4]) : 20;
  const DType t = (argc > 5 && argv[5][0] == '3') ? DType::f32 : DType::f16;
  const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
  const size_t rb = dtype_row_bytes(info, cols);
  std::vector<uint8_t> w(rows * rb);
  std::mt19937 rng(1); std::normal_distribution<float> nd(0, 1);
  std::vector<float> src(cols);
  for (size_t r = 0; r < rows; ++r) { for (auto& v : src) v = 0.05f * nd(rng); quantize_row(t, src.data(), w.data() + r * rb, cols); }
  std::vector<float> x(nt * cols), y(nt * rows);
  for (auto& v : x) v = nd(rng);
  WeightView wv{t, w.data(), rows, cols};
  QuantizedActs a{x.data(), nullptr, nullptr, nullptr, nullptr, nt, cols};
  double best = 1e30;
  for (int k = 0; k < reps; ++k) {
    auto t0 = Clock::now();
    matmul(wv, a, y.data(), rows, 0, rows);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  double cs = 0; for (float v : y) cs += v;
  std::printf("%s %zux%zu x%zu tok: %.1f GMAC/s (%.3f ms) cs %.6g\n", info.name, rows, cols, nt, rows * cols * nt / best / 1e9, best * 1e3, cs);
}
