// Q8_0 (or TYPE env) 128-token products of several shapes, one process, round robin; GMAC/s per
// shape and each shape's rate over the first shape's in the same round (median).
#include <algorithm>
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
#include "tests/bench/bench_types.h"
using namespace alap::kernels;
using Clock = std::chrono::steady_clock;
int alap_exp_v = 0;
struct Shape { size_t rows, cols; WeightView w; std::vector<uint8_t> raw; std::vector<float> x, d; std::vector<int8_t> q; std::vector<int32_t> s, s4; std::vector<float> y; float* ya; float* yu; };
int main(int argc, char** argv) {
  const char* tn = getenv("TYPE") ? getenv("TYPE") : "q8_0";
  DType t; alap::bench::type_by_name(tn, t);
  const size_t n_tok = getenv("TOK") ? atoi(getenv("TOK")) : 128;
  const int rounds = argc > 1 ? atoi(argv[1]) : 15;
  std::vector<Shape> sh;
  std::mt19937 rng(3); std::normal_distribution<float> nd(0, 1);
  for (int i = 2; i < argc; ++i) {
    Shape s; sscanf(argv[i], "%zux%zu", &s.rows, &s.cols);
    const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
    const size_t rb = dtype_row_bytes(info, s.cols);
    s.raw.resize(rb * s.rows);
    std::vector<float> src(s.cols);
    for (size_t r = 0; r < s.rows; ++r) { for (auto& v : src) v = 0.05f * nd(rng); quantize_row(t, src.data(), s.raw.data() + r * rb, s.cols); }
    WeightView plain{t, s.raw.data(), s.rows, s.cols};
    auto* pk = static_cast<uint8_t*>(alloc_streamed(packed_bytes(plain)));
    pack_weights(plain, pk);
    s.w = plain; s.w.packed = pk;
    s.x.resize(n_tok * s.cols); for (auto& v : s.x) v = nd(rng);
    s.q.resize(n_tok * s.cols); s.d.resize(n_tok * s.cols / 32); s.s.resize(s.d.size()); s.s4.resize(n_tok * s.cols / 4);
    quantize_activations(s.x.data(), n_tok, s.cols, s.q.data(), s.d.data(), s.s.data(), s.s4.data());
    s.y.resize(n_tok * s.rows + 64); s.ya = static_cast<float*>(aligned_alloc(64, (n_tok * s.rows + 64) * 4)); s.yu = s.ya + 4;
    sh.push_back(std::move(s));
  }
  std::vector<int> vars;
  for (const char* p = getenv("VARS") ? getenv("VARS") : "0"; *p; ++p) if (*p >= '0' && *p <= '9') vars.push_back(*p - '0');
  const size_t nv = vars.size();
  std::vector<std::vector<double>> g(sh.size() * nv), r(sh.size() * nv);
  for (int k = 0; k < rounds; ++k) {
    std::vector<double> gm(sh.size() * nv);
    for (size_t jj = 0; jj < sh.size() * nv; ++jj) {
      const size_t ii = jj / nv * nv + (jj % nv + k) % nv;  // the variants' order rotated each round
      const size_t i = ii / nv; alap_exp_v = vars[ii % nv];
      auto& s = sh[i];
      QuantizedActs a{s.x.data(), s.q.data(), s.d.data(), s.s.data(), s.s4.data(), n_tok, s.cols};
      double bt = 1e9;
      for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = Clock::now();
        matmul(s.w, a, s.ya, s.rows, 0, s.rows);
        bt = std::min(bt, std::chrono::duration<double>(Clock::now() - t0).count());
      }
      gm[ii] = double(s.rows) * s.cols * n_tok / bt / 1e9;
      g[ii].push_back(gm[ii]);
    }
    for (size_t ii = 0; ii < sh.size() * nv; ++ii) r[ii].push_back(gm[ii] / gm[ii / nv * nv]);
  }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  for (size_t ii = 0; ii < sh.size() * nv; ++ii) { const size_t i = ii / nv;
    std::printf("%s %5zux%-5zu v%d median %.1f GMAC/s, best %.1f, rate over v%d %.3f\n", tn, sh[i].rows, sh[i].cols, vars[ii % nv], med(g[ii]), *std::max_element(g[ii].begin(), g[ii].end()), vars[0], med(r[ii])); }
}
