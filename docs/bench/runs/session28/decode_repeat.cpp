// Session 28 measuring program (docs/bench/runs/session28/ab.sh builds and runs it).
// local harness: decode N tokens after a 64-token prompt; median per-token wall time
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "core/model/forward.h"
#include "core/model/model.h"
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  size_t threads = std::atoi(argv[2]), N = std::atoi(argv[3]), rounds = std::atoi(argv[4]);
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, CacheMode::k8, 2048));
  Forward fwd(m, 512);
  std::vector<int32_t> toks(64);
  for (size_t i = 0; i < 64; ++i) toks[i] = 5 + (i * 37) % 8000;
  std::vector<double> t;
  for (size_t r = 0; r < rounds; ++r) {
    fwd.run(cache, pool, toks, 0);
    int32_t next = 7;
    for (size_t i = 0; i < N; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto lg = fwd.run(cache, pool, std::span<const int32_t>(&next, 1), 64 + i);
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      next = static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
    }
  }
  std::sort(t.begin(), t.end());
  std::printf("decode median %.1f us p10 %.1f us\n", t[t.size()/2]*1e6, t[t.size()/10]*1e6);
}
