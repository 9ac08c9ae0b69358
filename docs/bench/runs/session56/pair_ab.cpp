// A run record of docs/bench/cpu.md (session 56), not part of the build: whole prompts of P tokens
// at depth 0 with the AVX-512 prefill's tiles of two row groups on and off (kernels::set_pair_tiles),
// alternating in one process (rounds of one prompt each way), so that the guest's slow and fast
// spells fall on both; prints the median time each way and the median of the rounds' ratios, and
// checks that the logits of both ways are the same bits.
//   B=build/default; c++ -O2 -std=c++20 -I. -Ikernels/include docs/bench/runs/session56/pair_ab.cpp -o pair_ab \
//     $B/core/model/libalap_core_model.a $B/core/gguf/libalap_core_gguf.a $B/core/runtime/libalap_core_runtime.a \
//     -ldl $B/kernels/cpu/libalap_kernels.a -lpthread
//   pair_ab MODEL THREADS P ROUNDS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "alap/kernels/quant.h"
#include "core/model/forward.h"
#include "core/model/model.h"
using namespace alap;

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  Model m = Model::load(argv[1]);
  const size_t threads = std::atoi(argv[2]), P = std::atoi(argv[3]), rounds = std::atoi(argv[4]);
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, CacheMode::k8, P + 16));
  Forward fwd(m, 512);
  std::vector<int32_t> toks(P);
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
  auto once = [&](bool pairs) {
    kernels::set_pair_tiles(pairs);
    const auto t0 = std::chrono::steady_clock::now();
    fwd.run(cache, pool, toks, 0);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  once(true), once(false);  // warm both
  std::vector<double> on, off, ratio;
  for (size_t r = 0; r < rounds; ++r) {
    const bool first = r % 2 == 0;  // which way goes first alternates too
    const double a = once(first), b = once(!first);
    on.push_back(first ? a : b), off.push_back(first ? b : a);
    ratio.push_back(on.back() / off.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  kernels::set_pair_tiles(true);
  const std::span<const float> first = fwd.run(cache, pool, toks, 0);
  const std::vector<float> lon(first.begin(), first.end());
  kernels::set_pair_tiles(false);
  auto loff = fwd.run(cache, pool, toks, 0);
  const bool same = lon.size() == loff.size() && std::memcmp(lon.data(), loff.data(), lon.size() * 4) == 0;
  std::printf("%s threads %zu P %zu: pairs %.2f ms (%.0f tok/s), one group %.2f ms (%.0f tok/s), time ratio "
              "median %.3f [min %.3f max %.3f], logits %s\n",
              argv[1], threads, P, median(on) * 1e3, P / median(on), median(off) * 1e3, P / median(off), median(ratio),
              *std::min_element(ratio.begin(), ratio.end()), *std::max_element(ratio.begin(), ratio.end()),
              same ? "the same bits" : "DIFFER");
}
