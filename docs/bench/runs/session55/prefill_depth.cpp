// local harness: repeated prefill of P tokens at depth D, wall time per run
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include "core/model/forward.h"
#include "core/model/model.h"
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  size_t threads = std::atoi(argv[2]), P = std::atoi(argv[3]), reps = std::atoi(argv[4]), D = std::atoi(argv[5]);
  CacheMode mode = argc > 6 && argv[6][0] == 'f' ? CacheMode::f16 : CacheMode::k8;
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, mode, D + P + 16));
  Forward fwd(m, 512);
  std::vector<int32_t> fill(128);
  for (size_t d = 0; d < D; d += 128) {
    for (size_t i = 0; i < 128; ++i) fill[i] = 5 + ((d + i) * 37) % 8000;
    fwd.run(cache, pool, std::span(fill.data(), std::min<size_t>(128, D - d)), d);
  }
  std::vector<int32_t> toks(P);
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
  std::vector<double> t;
  for (size_t r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fwd.run(cache, pool, toks, D);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  if (std::getenv("HASH")) {
    auto lg = fwd.run(cache, pool, toks, D, LogitsMode::all);
    uint64_t h = 1469598103934665603ull;
    const unsigned char* b = reinterpret_cast<const unsigned char*>(lg.data());
    for (size_t i = 0; i < lg.size() * 4; ++i) h = (h ^ b[i]) * 1099511628211ull;
    std::printf("logits hash %016llx (%zu)\n", (unsigned long long)h, lg.size());
  }
  std::printf("median %.3f ms best %.3f ms  (%.0f tok/s median)\n", t[t.size() / 2] * 1e3, t[0] * 1e3, P / t[t.size() / 2]);
}
