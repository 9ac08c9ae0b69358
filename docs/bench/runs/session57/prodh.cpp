// A run record of docs/bench/cpu.md (session 57), not part of the build: one packed product (type,
// rows x cols, n_tok tokens; weights in huge pages, as the model's) called REPS times with a switch
// alternating between two code paths (A, B) each call, so the guest's slow and fast spells fall on
// both; prints each path's best GMAC/s and the median of the calls' time ratios B / A.
// Built with -DPAIRS ("prodp"), the switch is kernels::set_pair_tiles (A one group, B pairs). Built
// without it ("prodh"), the switch is `bool alap_exp_spread` (true: B), a temporary hook in
// packed_vnni.cpp choosing the pair tiles' burst read-ahead (A, 3141b13's parent) or the spread one
// (B); that hook is not in the tree.
//   B=build/default; c++ -O2 -std=c++20 [-DPAIRS] -I. -Ikernels/include -Itests/bench prodh.cpp \
//     -o prodh $B/kernels/cpu/libalap_kernels.a -lpthread
//   prodh TYPE ROWS COLS TOKENS REPS    (DISTINCT=n: rows repeat every n; NOHUGE=1: no huge pages)
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
#ifdef PAIRS
inline void use_b(bool b) { alap::kernels::set_pair_tiles(b); }
inline bool using_b() { return alap::kernels::pair_tiles_allowed(); }
#else
extern bool alap_exp_spread;
inline void use_b(bool b) { alap_exp_spread = b; }
inline bool using_b() { return alap_exp_spread; }
#endif
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
      use_b((m == 1) != (k % 2 == 1));
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
