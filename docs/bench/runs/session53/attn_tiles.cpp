// Times the prompt-tile attention kernels warm, AMX on and off alternating (docs/bench/cpu.md "Prompt
// attention on the AMX tiles (session 53)"): packed-K scores (k8_scores_heads), fp16 scores and V sums
// (f16_scores_tiles, f16_accum_v_tiles), whole blocks (attn_block_tiles), softmax_partial; ROWS x 256
// keys x HEAD_DIM. Build: g++ -O2 -std=c++20 -Ikernels/include attn_tiles.cpp
// build/default/kernels/cpu/libalap_kernels.a -lpthread; run: attn_tiles ROWS HEAD_DIM REPS.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "alap/kernels/attn.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"
using namespace alap::kernels;
int main(int argc, char** argv) {
  size_t rows = argc > 1 ? atoi(argv[1]) : 32, hd = argc > 2 ? atoi(argv[2]) : 64, n = 256;
  int reps = argc > 3 ? atoi(argv[3]) : 2000;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  std::vector<float> q(rows * hd), p(rows * n), s(rows * n), o(rows * hd);
  for (auto& x : q) x = nd(rng);
  for (auto& x : p) x = std::fabs(nd(rng));
  std::vector<uint16_t> kf(n * hd), qd(rows * hd / 32), kd(n * hd / 32);
  std::vector<int8_t> qq(rows * hd), kq(n * hd);
  std::vector<float> row(hd);
  for (size_t j = 0; j < n; ++j) {
    for (auto& x : row) x = nd(rng);
    for (size_t i = 0; i < hd; ++i) kf[j * hd + i] = f32_to_fp16(row[i]);
    k8_quantize(row.data(), hd, &kq[j * hd], &kd[j * hd / 32]);
  }
  for (size_t r = 0; r < rows; ++r) k8_quantize(&q[r * hd], hd, &qq[r * hd], &qd[r * hd / 32]);
  auto t = [&](const char* name, auto&& f) {
    for (int amx : {0, 1, 0, 1}) {
      set_amx_prefill(amx);
      f();
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) f();
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / reps;
      std::printf("%-10s rows %zu hd %zu amx %d: %.2f us  %.1f GMAC/s\n", name, rows, hd, amx, us,
                  rows * n * hd / us / 1e3);
    }
  };
  t("k8scores",
    [&] { k8_scores_heads(qq.data(), qd.data(), rows, kq.data(), kd.data(), hd, n, 0.125f, s.data(), n); });
  t("f16scores", [&] { f16_scores_tiles(q.data(), rows, kf.data(), hd, n, 0.125f, s.data(), n); });
  t("f16accv", [&] { f16_accum_v_tiles(p.data(), n, rows, kf.data(), hd, n, o.data()); });
  std::vector<float> mm(rows), ll(rows);
  AttnBlock b8, b16;  // packed K and fp16 V; fp16 K and V (the keys serve as the values)
  b8.head_dim_k = b8.head_dim_v = b16.head_dim_k = b16.head_dim_v = hd;
  b8.qq = qq.data(), b8.qd = qd.data(), b8.kq = kq.data(), b8.kd = kd.data(), b8.v = kf.data();
  b16.q = q.data(), b16.k = kf.data(), b16.v = kf.data();
  t("blockk8", [&] { attn_block_tiles(b8, rows, n, 0.125f, s.data(), n, mm.data(), ll.data(), o.data()); });
  t("blockf16", [&] { attn_block_tiles(b16, rows, n, 0.125f, s.data(), n, mm.data(), ll.data(), o.data()); });
  t("softmax", [&] {
    float m, l;
    for (size_t r = 0; r < rows; ++r) softmax_partial(&s[r * n], n, &m, &l);
  });
}
