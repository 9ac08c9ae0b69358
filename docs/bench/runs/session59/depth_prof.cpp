// A run record of docs/bench/cpu.md (session 59), not part of the build: prompts of P tokens at depth D
// (after one real prefill of D tokens), repeated, for `perf record -e cpu-clock`; built as depth_ab.cpp.
//   depth_prof MODEL THREADS P D ROUNDS [k8|k8v8|f16]
// prompts of P tokens at depth D (the cache filled by one real prefill first), repeated, for perf
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "core/model/forward.h"
#include "core/model/model.h"
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  const size_t threads = std::atoi(argv[2]), P = std::atoi(argv[3]), D = std::atoi(argv[4]), rounds = std::atoi(argv[5]);
  const CacheMode mode = argc > 6 && std::string(argv[6]) == "f16" ? CacheMode::f16 : argc > 6 && std::string(argv[6]) == "k8v8" ? CacheMode::k8v8 : CacheMode::k8;
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, mode, D + P + 16));
  Forward fwd(m, 512);
  std::vector<int32_t> fill(D), toks(P);
  for (size_t i = 0; i < D; ++i) fill[i] = 5 + (i * 37) % 8000;
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
  if (D) fwd.run(cache, pool, fill, 0);
  double best = 1e9;
  for (size_t r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fwd.run(cache, pool, toks, D);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("depth %zu: best %.2f ms, %.1f tok/s\n", D, best * 1e3, P / best);
}
