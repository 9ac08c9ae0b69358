// A run record of docs/bench/cpu.md (session 57), not part of the build: one packed product (type,
// rows x cols, n_tok tokens; weights in huge pages) called REPS times, the AVX-512 prefill's tiles of
// two row groups on and off (kernels::set_pair_tiles) alternating each call; prints each way's best
// GMAC/s and the median of the calls' time ratios pairs / one group.
//   B=build/default; c++ -O2 -std=c++20 -I. -Ikernels/include -Itests/bench prodp.cpp -o prodp \
//     $B/kernels/cpu/libalap_kernels.a -lpthread
//   prodp TYPE ROWS COLS TOKENS REPS
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
      set_pair_tiles((m == 1) != (k % 2 == 1));
      const auto t0 = std::chrono::steady_clock::now();
      matmul(wv, a, y.data(), rows, 0, rows);
      tm[pair_tiles_allowed() ? 1 : 0] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    for (int m = 0; m < 2; ++m) best[m] = std::min(best[m], tm[m]);
    ratio.push_back(tm[1] / tm[0]);
  }
  std::sort(ratio.begin(), ratio.end());
  std::printf("%s %zux%zu %zu tokens: one group %.1f GMAC/s, pairs %.1f GMAC/s, time ratio pairs/one median %.3f\n", ty.c_str(), rows,
              cols, n_tok, double(rows) * cols * n_tok / best[0] / 1e9, double(rows) * cols * n_tok / best[1] / 1e9,
              ratio[ratio.size() / 2]);
}
