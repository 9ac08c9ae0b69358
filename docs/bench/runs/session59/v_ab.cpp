// A run record of docs/bench/cpu.md (session 59), not part of the build (a variant not kept):
// f16_accum_v_heads of R rows, accum_heads (A) against each 32-lane pass of V converted once (B, the
// hook); built and run as scores_ab.cpp (v_ab R HD N REPS).
// session 59: f16_accum_v_heads of R rows x n keys, head_dim HD: accum_heads (A) against f16_accum_v_many (B, hook)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "alap/kernels/attn.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/quant.h"
bool alap_exp_spread = false;
using namespace alap::kernels;
int main(int argc, char** argv) {
  const size_t R = argc > 1 ? atoi(argv[1]) : 32, HD = argc > 2 ? atoi(argv[2]) : 64, n = argc > 3 ? atoi(argv[3]) : 256;
  const int reps = argc > 4 ? atoi(argv[4]) : 1000;
  if (!set_cpu_variant("avx512vnni")) return 3;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0, 1);
  const size_t ld = 256;
  std::vector<float> p(R * ld);
  for (auto& x : p) x = std::fabs(nd(rng));
  std::vector<uint16_t> v(n * HD);
  for (auto& x : v) x = f32_to_fp16(nd(rng));
  std::vector<float> oa(R * HD, 0.5f), ob(R * HD, 0.5f);
  double best[2] = {1e9, 1e9};
  std::vector<double> ratio;
  for (int it = 0; it < 30; ++it) {
    double tm[2];
    for (int m = 0; m < 2; ++m) {
      const bool b = (m == 1) != (it % 2 == 1);
      alap_exp_spread = b;
      auto& o = b ? ob : oa;
      const auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < reps; ++r) { std::fill(o.begin(), o.end(), 0.5f); f16_accum_v_heads(p.data(), ld, R, v.data(), HD, n, o.data()); }
      tm[b] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    }
    best[0] = std::min(best[0], tm[0]), best[1] = std::min(best[1], tm[1]);
    ratio.push_back(tm[1] / tm[0]);
  }
  std::sort(ratio.begin(), ratio.end());
  const bool same = std::memcmp(oa.data(), ob.data(), oa.size() * 4) == 0;
  const double macs = double(R) * n * HD;
  std::printf("R %zu HD %zu n %zu: accum_heads %.2f us (%.1f GMAC/s), many %.2f us (%.1f GMAC/s), B/A median %.3f, %s\n", R, HD, n,
              best[0] * 1e6, macs / best[0] / 1e9, best[1] * 1e6, macs / best[1] / 1e9, ratio[ratio.size() / 2], same ? "same bits" : "BITS DIFFER");
}
