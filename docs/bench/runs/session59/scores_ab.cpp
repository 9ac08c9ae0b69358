// A run record of docs/bench/cpu.md (session 59), not part of the build: k8_scores_heads of R rows
// x n keys (head_dim HD), a temporary hook `bool alap_exp_spread` (defined here; in the library only
// while measuring, never in the tree) switching each call between the old path (A) and the new one
// (B), alternating; prints each way's best time and GMAC/s, the median of the time ratios, and
// whether the scores are the same bits. VARIANT=avx2 for the 256-bit kernels.
//   c++ -O2 -std=c++20 -I. -Ikernels/include scores_ab.cpp -o scores_ab build/exp/kernels/cpu/libalap_kernels.a -lpthread
//   [VARIANT=avx2] scores_ab R HD N REPS
// session 59: k8_scores_heads of R rows x 256 keys, head_dim HD: the general loop (A) against
// k8_scores_many (B, hook alap_exp_spread), alternating; checks the bits.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "alap/kernels/fp16.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"
bool alap_exp_spread = false;
using namespace alap::kernels;
int main(int argc, char** argv) {
  const size_t R = argc > 1 ? atoi(argv[1]) : 32, HD = argc > 2 ? atoi(argv[2]) : 64, n = argc > 3 ? atoi(argv[3]) : 256;
  const int reps = argc > 4 ? atoi(argv[4]) : 2000;
  if (!set_cpu_variant(getenv("VARIANT") ? getenv("VARIANT") : "avx512vnni")) return 3;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0, 1);
  const size_t nb = HD / 32;
  std::vector<int8_t> q(R * HD), k(n * HD);
  std::vector<uint16_t> dq(R * nb), dk(n * nb);
  std::vector<float> row(HD);
  for (size_t h = 0; h < R; ++h) { for (auto& v : row) v = nd(rng); k8_quantize(row.data(), HD, &q[h * HD], &dq[h * nb]); }
  for (size_t j = 0; j < n; ++j) { for (auto& v : row) v = nd(rng); k8_quantize(row.data(), HD, &k[j * HD], &dk[j * nb]); }
  const size_t ld = 256 + 16;
  std::vector<float> sa(R * ld, 0), sb(R * ld, 0);
  double best[2] = {1e9, 1e9};
  std::vector<double> ratio;
  for (int it = 0; it < 30; ++it) {
    double tm[2];
    for (int m = 0; m < 2; ++m) {
      const bool b = (m == 1) != (it % 2 == 1);
      alap_exp_spread = b;
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) k8_scores_heads(q.data(), dq.data(), R, k.data(), dk.data(), HD, n, 0.125f, (b ? sb : sa).data(), ld);
      tm[b] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    }
    best[0] = std::min(best[0], tm[0]), best[1] = std::min(best[1], tm[1]);
    ratio.push_back(tm[1] / tm[0]);
  }
  std::sort(ratio.begin(), ratio.end());
  const bool same = std::memcmp(sa.data(), sb.data(), sa.size() * 4) == 0;
  const double macs = double(R) * n * HD;
  std::printf("R %zu HD %zu n %zu: general %.2f us (%.0f GMAC/s), many %.2f us (%.0f GMAC/s), time B/A median %.3f, %s\n", R, HD, n,
              best[0] * 1e6, macs / best[0] / 1e9, best[1] * 1e6, macs / best[1] / 1e9, ratio[ratio.size() / 2], same ? "same bits" : "BITS DIFFER");
}
