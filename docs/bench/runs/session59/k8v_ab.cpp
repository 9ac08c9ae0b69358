// A run record of docs/bench/cpu.md (session 59), not part of the build (a variant not kept):
// k8_accum_v_heads (k8v8's V sums, the v16 rule) of R rows, hook off (A) and on (B), alternating;
// built and run as scores_ab.cpp (k8v_ab R HD N REPS).
// session 59: k8_accum_v_heads (k8v8's prompt V sums) of R rows, hook off (A) / on (B)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "alap/kernels/attn.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"
bool alap_exp_spread = false;
using namespace alap::kernels;
int main(int argc, char** argv) {
  const size_t R = argc > 1 ? atoi(argv[1]) : 32, HD = argc > 2 ? atoi(argv[2]) : 64, n = argc > 3 ? atoi(argv[3]) : 256;
  const int reps = argc > 4 ? atoi(argv[4]) : 1000;
  if (!set_cpu_variant("avx512vnni")) return 3;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0, 1);
  const size_t ld = 256, nb = HD / 32;
  std::vector<float> p(R * ld);
  for (auto& x : p) x = std::fabs(nd(rng));
  std::vector<int8_t> v(n * HD);
  std::vector<uint16_t> d(n * nb);
  std::vector<float> row(HD);
  for (size_t j = 0; j < n; ++j) { for (auto& x : row) x = nd(rng); k8_quantize(row.data(), HD, &v[j * HD], &d[j * nb]); }
  std::vector<float> oa(R * HD), ob(R * HD);
  double best[2] = {1e9, 1e9};
  std::vector<double> ratio;
  for (int it = 0; it < 30; ++it) {
    double tm[2];
    for (int m = 0; m < 2; ++m) {
      const bool b = (m == 1) != (it % 2 == 1);
      alap_exp_spread = b;
      auto& o = b ? ob : oa;
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) { std::fill(o.begin(), o.end(), 0.0f); k8_accum_v_heads(p.data(), ld, R, v.data(), d.data(), HD, 32, n, o.data()); }
      tm[b] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    }
    best[0] = std::min(best[0], tm[0]), best[1] = std::min(best[1], tm[1]);
    ratio.push_back(tm[1] / tm[0]);
  }
  std::sort(ratio.begin(), ratio.end());
  const bool same = std::memcmp(oa.data(), ob.data(), oa.size() * 4) == 0;
  const double macs = double(R) * n * HD;
  std::printf("R %zu HD %zu n %zu: A %.2f us (%.1f GMAC/s), B %.2f us (%.1f GMAC/s), B/A median %.3f, %s\n", R, HD, n,
              best[0] * 1e6, macs / best[0] / 1e9, best[1] * 1e6, macs / best[1] / 1e9, ratio[ratio.size() / 2], same ? "same bits" : "BITS DIFFER");
}
