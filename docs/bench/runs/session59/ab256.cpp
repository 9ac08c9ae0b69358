// A run record of docs/bench/cpu.md (session 59), not part of the build (a change not kept): plain
// AVX2 products from avx2/packed256.inc compiled twice in this file, with (avx2y, A) and without
// (avx2x, B) an empty asm pinning each int sum to a register. The pin (`in_order`, switched off by
// ALAP_EXP_NO_ORDER) was in the .inc only while measuring; it is not in the tree, so this file
// builds only against that temporary form:
//   c++ -O3 -DNDEBUG -std=c++20 -mavx2 -mfma -mf16c -I. -Ikernels/include -Ikernels/cpu -Itests/bench ab256.cpp \
//     -o ab256 build/exp/kernels/cpu/libalap_kernels.a -lpthread
//   ab256 TYPE ROWS COLS TOKENS REPS
#define ALAP_PACKED256_VNNI 0
#define ALAP_PACKED256_NS avx2x
#define ALAP_EXP_NO_ORDER 1
#include "kernels/cpu/avx2/packed256.inc"
#undef ALAP_PACKED256_NS
#undef ALAP_EXP_NO_ORDER
#define ALAP_PACKED256_NS avx2y
#include "kernels/cpu/avx2/packed256.inc"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>
#include "alap/kernels/dtype.h"
#include "alap/kernels/huge_pages.h"
#include "alap/kernels/quant.h"
#include "bench_types.h"
using namespace alap::kernels;
int main(int argc, char** argv) {
  const std::string ty = argc > 1 ? argv[1] : "q8_0";
  const size_t rows = argc > 2 ? atoi(argv[2]) : 2048, cols = argc > 3 ? atoi(argv[3]) : 2048,
               n_tok = argc > 4 ? atoi(argv[4]) : 128, reps = argc > 5 ? atoi(argv[5]) : 20;
  if (!set_cpu_variant("avx2")) return 3;
  DType t{};
  if (!alap::bench::type_by_name(ty, t)) return 2;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  const size_t rb = dtype_row_bytes(*dtype_info(static_cast<uint32_t>(t)), cols);
  std::vector<uint8_t> w(rb * rows);
  std::vector<float> src(cols);
  for (size_t r = 0; r < rows; ++r) {
    for (auto& v : src) v = 0.05f * nd(rng);
    quantize_row(t, src.data(), w.data() + r * rb, cols);
  }
  WeightView wv{t, w.data(), rows, cols};
  uint8_t* pk = static_cast<uint8_t*>(alloc_streamed(packed_bytes(wv)));
  pack_weights(wv, pk);
  wv.packed = pk;
  std::vector<float> x(n_tok * cols), d(n_tok * cols / 32), d256(n_tok * cols / 256);
  for (auto& v : x) v = nd(rng);
  std::vector<int8_t> q(n_tok * cols), q256(n_tok * cols);
  std::vector<int32_t> s(d.size()), s4(n_tok * cols / 4);
  quantize_activations(x.data(), n_tok, cols, q.data(), d.data(), s.data(), s4.data());
  quantize_activations_256(x.data(), n_tok, cols, q256.data(), d256.data());
  QuantizedActs a{x.data(), q.data(), d.data(), s.data(), s4.data(), n_tok, cols, q256.data(), d256.data()};
  std::vector<float> y(n_tok * rows), y2(n_tok * rows);
  double best[2] = {1e30, 1e30};
  std::vector<double> ratio;
  for (size_t k = 0; k < reps; ++k) {
    double tm[2];
    for (int m = 0; m < 2; ++m) {
      const bool b = (m == 1) != (k % 2 == 1);
      const auto t0 = std::chrono::steady_clock::now();
      const bool ok = b ? avx2x::matmul_packed(wv, a, y2.data(), rows, 0, rows)
                        : avx2y::matmul_packed(wv, a, y.data(), rows, 0, rows);
      if (!ok) return 4;
      tm[b ? 1 : 0] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    for (int m = 0; m < 2; ++m) best[m] = std::min(best[m], tm[m]);
    ratio.push_back(tm[1] / tm[0]);
  }
  std::sort(ratio.begin(), ratio.end());
  const bool same = std::equal(y.begin(), y.end(), y2.begin());
  std::printf("%s %zux%zu %zu tokens: A (barriers) %.1f GMAC/s, B (none) %.1f GMAC/s, time B/A median %.3f, %s\n",
              ty.c_str(), rows, cols, n_tok, double(rows) * cols * n_tok / best[0] / 1e9,
              double(rows) * cols * n_tok / best[1] / 1e9, ratio[ratio.size() / 2], same ? "same bits" : "BITS DIFFER");
}
