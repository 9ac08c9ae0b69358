// softmax_partial row by row against softmax_partial_rows (four rows side by side, the same bits):
// 32 rows of 256 keys, each pass after a copy of the rows (~0.35 us). Build: g++ -O2 -std=c++20
// -Ikernels/include softmax_rows.cpp build/default/kernels/cpu/libalap_kernels.a -lpthread
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#include "alap/kernels/attn.h"
namespace alap::kernels::avx512vnni {  // kernels/cpu/cpu_variants.h, attn_heads.h
void softmax_partial_rows(float* x, size_t ld, size_t rows, size_t n, float* m, float* l);
void softmax_partial(float* x, size_t n, float* m, float* l);
}  // namespace alap::kernels::avx512vnni
using namespace alap::kernels;
int main() {
  const size_t rows = 32, n = 256;
  std::vector<float> x0(rows * n), x(rows * n), m(rows), l(rows);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0, 3);
  for (auto& e : x0) e = nd(rng);
  for (int rep = 0; rep < 3; ++rep) {
    for (int v = 0; v < 2; ++v) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 20000; ++i) {
        x = x0;
        if (v == 0) {
          for (size_t r = 0; r < rows; ++r) avx512vnni::softmax_partial(&x[r * n], n, &m[r], &l[r]);
        } else {
          avx512vnni::softmax_partial_rows(x.data(), n, rows, n, m.data(), l.data());
        }
      }
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 20000;
      std::printf("%s: %.3f us per 32 rows (incl. copy)\n", v ? "rows" : "single", us);
    }
  }
}
