// A run record of docs/bench/cpu.md (session 59), not part of the build. Built as
// ../session57/prodh.cpp: c++ -O2 -std=c++20 -I. -Ikernels/include -Itests/bench prodc.cpp -o prodc \
//   build/default/kernels/cpu/libalap_kernels.a -lpthread;  prodc TYPE ROWS COLS TOKENS REPS [COPIES=16]
// session 59: prodh with A = warm weights (one copy), B = cold (a rotation of COPIES copies > L3)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"
#include "alap/kernels/huge_pages.h"
#include "bench_types.h"
static bool g_b = false;
inline void use_b(bool b) { g_b = b; }
inline bool using_b() { return g_b; }
using namespace alap::kernels;
int main(int argc, char** argv) {
  const std::string ty = argc > 1 ? argv[1] : "q8_0";
  const size_t rows = argc > 2 ? atoi(argv[2]) : 2048, cols = argc > 3 ? atoi(argv[3]) : 2048,
               n_tok = argc > 4 ? atoi(argv[4]) : 128, reps = argc > 5 ? atoi(argv[5]) : 100;
  DType t{};
  if (!alap::bench::type_by_name(ty, t)) return 2;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const size_t rb = dtype_row_bytes(*dtype_info(static_cast<uint32_t>(t)), cols);
  std::vector<uint8_t> w(rb * rows);
  std::vector<float> src(cols);
  const size_t distinct = getenv("DISTINCT") ? atoi(getenv("DISTINCT")) : rows;
  for (size_t r = 0; r < rows; ++r) {
    if (r >= distinct) { std::memcpy(w.data() + r * rb, w.data() + (r % distinct) * rb, rb); continue; }
    for (auto& v : src) v = 0.05f * nd(rng);
    quantize_row(t, src.data(), w.data() + r * rb, cols);
  }
  WeightView wv{t, w.data(), rows, cols};
  uint8_t* pk = getenv("NOHUGE") ? static_cast<uint8_t*>(std::aligned_alloc(64, (packed_bytes(wv) + 63) / 64 * 64))
                                 : static_cast<uint8_t*>(alloc_streamed(packed_bytes(wv)));
  pack_weights(wv, pk);
  const size_t n_copies = getenv("COPIES") ? atoi(getenv("COPIES")) : 16;
  std::vector<uint8_t*> copies{pk};
  for (size_t c = 1; c < n_copies; ++c) {
    copies.push_back(static_cast<uint8_t*>(alloc_streamed(packed_bytes(wv))));
    pack_weights(wv, copies.back());
  }
  size_t next_copy = 0;
  wv.packed = pk;
  std::vector<float> x(n_tok * cols), d(n_tok * cols / 32);
  for (auto& v : x) v = nd(rng);
  std::vector<int8_t> q(n_tok * cols);
  std::vector<int32_t> s(d.size()), s4(n_tok * cols / 4);
  quantize_activations(x.data(), n_tok, cols, q.data(), d.data(), s.data(), s4.data());
  QuantizedActs a{x.data(), q.data(), d.data(), s.data(), s4.data(), n_tok, cols};
  std::vector<float> y(n_tok * rows);
  double best[2] = {1e30, 1e30};
  std::vector<double> ratio;
  for (size_t k = 0; k < reps; ++k) {
    double tm[2];
    for (int m = 0; m < 2; ++m) {
      use_b((m == 1) != (k % 2 == 1));
      if (using_b()) {  // cold: the next copy of the rotation
        next_copy = next_copy % (n_copies - 1) + 1;
        wv.packed = copies[next_copy];
      } else {
        wv.packed = pk;  // warm: copy 0 every time
      }
      const auto t0 = std::chrono::steady_clock::now();
      matmul(wv, a, y.data(), rows, 0, rows);
      tm[using_b() ? 1 : 0] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    for (int m = 0; m < 2; ++m) best[m] = std::min(best[m], tm[m]);
    ratio.push_back(tm[1] / tm[0]);
  }
  std::sort(ratio.begin(), ratio.end());
  std::printf("%s %zux%zu %zu tokens: A %.1f GMAC/s, B %.1f GMAC/s, time ratio B/A median %.3f\n", ty.c_str(), rows,
              cols, n_tok, double(rows) * cols * n_tok / best[0] / 1e9, double(rows) * cols * n_tok / best[1] / 1e9,
              ratio[ratio.size() / 2]);
}
