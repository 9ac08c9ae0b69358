// decode N tokens after a P-token prompt; median per-token wall time (session 47 profile harness)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include "core/model/forward.h"
#include "core/model/model.h"
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  size_t threads = std::atoi(argv[2]), P = std::atoi(argv[3]), N = std::atoi(argv[4]), rounds = std::atoi(argv[5]);
  CacheMode mode = std::strcmp(argv[6], "f16") == 0 ? CacheMode::f16 : std::strcmp(argv[6], "k8") == 0 ? CacheMode::k8 : CacheMode::k8v8;
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, mode, P + N + 8));
  Forward fwd(m, 512);
  std::vector<int32_t> toks(P);
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 37) % 8000;
  for (size_t s = 0; s < P; s += 512) fwd.run(cache, pool, std::span<const int32_t>(toks.data() + s, std::min<size_t>(512, P - s)), s);
  std::vector<double> t;
  for (size_t r = 0; r < rounds; ++r) {
    int32_t next = 7;
    for (size_t i = 0; i < N; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto lg = fwd.run(cache, pool, std::span<const int32_t>(&next, 1), P + i);
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      next = static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
    }
  }
  std::sort(t.begin(), t.end());
  std::printf("decode median %.1f us p10 %.1f us\n", t[t.size()/2]*1e6, t[t.size()/10]*1e6);
}
