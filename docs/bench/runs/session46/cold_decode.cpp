// Session 46: the cold one-token packed product of one type and shape on one thread, rotating copies
// (400 MB, huge pages as the model's), against the same call on one copy (WARM=1). Build (repo root, after
// the default build):
//   c++ -O3 -std=c++20 -Ikernels/include -Itests/bench docs/bench/runs/session46/cold_decode.cpp \
//       build/default/kernels/cpu/libalap_kernels.a -lpthread -o /tmp/cold_decode
//   /tmp/cold_decode q5_0 896 4864 3000; WARM=1 /tmp/cold_decode q5_0 896 4864 3000
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
  const bool warm = std::getenv("WARM") != nullptr;
  auto t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < calls; ++c) matmul(wp[warm ? 0 : c % n], a, y.data(), rows, 0, rows);
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s %zux%zu %s: %.1f GB/s (file bytes), %.1f GB/s (packed bytes) %.2f us/call\n", argv[1], rows, cols, warm ? "warm" : "cold",
              double(bytes) * calls / sec / 1e9, double(pb) * calls / sec / 1e9, sec / calls * 1e6);
}
