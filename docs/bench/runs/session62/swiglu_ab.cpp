// session 62: matmul_swiglu on TYPE gate/up pairs FxE (args "FxE"), 128 tokens, one thread: fused (v0) against
// the two products + silu_mul (v1, hook), rotated each round; median time ratio v0/v1 and GMAC/s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>
#include "alap/kernels/dtype.h"
#include "alap/kernels/huge_pages.h"
#include "alap/kernels/quant.h"
#include "tests/bench/bench_types.h"
using namespace alap::kernels;
using Clock = std::chrono::steady_clock;
int alap_exp_v = 0;
int main(int argc, char** argv) {
  const char* tn = getenv("TYPE") ? getenv("TYPE") : "q8_0";
  DType t; alap::bench::type_by_name(tn, t);
  const size_t n_tok = 128; const int rounds = atoi(argv[1]);
  std::mt19937 rng(3); std::normal_distribution<float> nd(0, 1);
  for (int i = 2; i < argc; ++i) {
    size_t F, E; sscanf(argv[i], "%zux%zu", &F, &E);
    const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
    const size_t rb = dtype_row_bytes(info, E);
    WeightView w[2]; std::vector<uint8_t> raw[2];
    for (int m = 0; m < 2; ++m) {
      raw[m].resize(rb * F); std::vector<float> src(E);
      for (size_t r = 0; r < F; ++r) { for (auto& v : src) v = 0.05f * nd(rng); quantize_row(t, src.data(), raw[m].data() + r * rb, E); }
      w[m] = WeightView{t, raw[m].data(), F, E};
      auto* pk = static_cast<uint8_t*>(alloc_streamed(packed_bytes(w[m]))); pack_weights(w[m], pk); w[m].packed = pk;
    }
    std::vector<float> x(n_tok * E); for (auto& v : x) v = nd(rng);
    std::vector<int8_t> q(n_tok * E); std::vector<float> d(n_tok * E / 32); std::vector<int32_t> s(d.size()), s4(n_tok * E / 4);
    quantize_activations(x.data(), n_tok, E, q.data(), d.data(), s.data(), s4.data());
    QuantizedActs a{x.data(), q.data(), d.data(), s.data(), s4.data(), n_tok, E};
    float* h = static_cast<float*>(aligned_alloc(64, n_tok * F * 4)); float* u = static_cast<float*>(aligned_alloc(64, n_tok * F * 4));
    std::vector<double> rat; double best[2] = {1e9, 1e9};
    for (int k = 0; k < rounds; ++k) {
      double tt[2];
      for (int j = 0; j < 2; ++j) {
        const int v = (j + k) % 2; alap_exp_v = v;
        const auto t0 = Clock::now();
        matmul_swiglu(w[0], w[1], a, h, u, F, 0, F);
        tt[v] = std::chrono::duration<double>(Clock::now() - t0).count(); best[v] = std::min(best[v], tt[v]);
      }
      rat.push_back(tt[0] / tt[1]);
    }
    std::sort(rat.begin(), rat.end());
    printf("%s %zux%zu x2: fused best %.2f ms (%.1f GMAC/s), unfused best %.2f ms; fused/unfused median %.3f [%.3f %.3f]\n", tn, F, E,
           best[0] * 1e3, 2.0 * F * E * n_tok / best[0] / 1e9, best[1] * 1e3, rat[rat.size() / 2], rat[rat.size() / 4], rat[3 * rat.size() / 4]);
  }
}
