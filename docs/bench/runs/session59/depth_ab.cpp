// A run record of docs/bench/cpu.md (session 59), not part of the build: one real prefill of D tokens,
// then 128-token prompts at depth D with the hook `alap_exp_spread` off (A) and on (B) in rounds,
// which way goes first alternating; the median times, the median of the rounds' ratios, whether the
// logits are the same bits. Built against a build with the hook in the library (build/exp):
//   B=build/exp; c++ -O2 -std=c++20 -I. -Ikernels/include depth_ab.cpp -o depth_ab \
//     $B/core/model/libalap_core_model.a $B/core/gguf/libalap_core_gguf.a $B/core/runtime/libalap_core_runtime.a \
//     -ldl $B/kernels/cpu/libalap_kernels.a -lpthread
//   [ALAP_CPU_VARIANT=avx2] depth_ab MODEL THREADS P D ROUNDS [k8|k8v8|f16]
// session 59: prompts of P tokens at depth D, a hook (alap_exp_spread) off and on alternating per round
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "core/model/forward.h"
#include "core/model/model.h"
bool alap_exp_spread = false;
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  const size_t threads = std::atoi(argv[2]), P = std::atoi(argv[3]), D = std::atoi(argv[4]), rounds = std::atoi(argv[5]);
  const std::string ms = argc > 6 ? argv[6] : "k8";
  const CacheMode mode = ms == "f16" ? CacheMode::f16 : ms == "k8v8" ? CacheMode::k8v8 : CacheMode::k8;
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, mode, D + P + 16));
  Forward fwd(m, 512);
  std::vector<int32_t> fill(D), toks(P);
  for (size_t i = 0; i < D; ++i) fill[i] = 5 + (i * 37) % 8000;
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
  if (D) fwd.run(cache, pool, fill, 0);
  std::vector<float> la, lb;
  auto once = [&](bool b) {
    alap_exp_spread = b;
    const auto t0 = std::chrono::steady_clock::now();
    auto l = fwd.run(cache, pool, toks, D);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    (b ? lb : la).assign(l.begin(), l.end());
    return t;
  };
  std::vector<double> ta, tb, ratio;
  for (size_t r = 0; r < rounds; ++r) {
    const bool first = r % 2 == 1;
    const double x = once(first), y = once(!first);
    const double a = first ? y : x, b = first ? x : y;
    ta.push_back(a), tb.push_back(b), ratio.push_back(b / a);
  }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  const bool same = la.size() == lb.size() && std::memcmp(la.data(), lb.data(), la.size() * 4) == 0;
  std::printf("%s %s thr %zu P %zu depth %zu: A %.1f ms, B %.1f ms (medians), B/A median %.3f [%.3f, %.3f], logits %s\n",
              argv[1], ms.c_str(), threads, P, D, med(ta) * 1e3, med(tb) * 1e3, med(ratio),
              *std::min_element(ratio.begin(), ratio.end()), *std::max_element(ratio.begin(), ratio.end()),
              same ? "same bits" : "DIFFER");
}
