// Session 28 measuring program (docs/bench/runs/session28/ab.sh builds and runs it).
// local harness: repeated prefill of P tokens at depth 0, wall time per run
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
  size_t threads = std::atoi(argv[2]), P = std::atoi(argv[3]), reps = std::atoi(argv[4]);
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, CacheMode::k8, 2048));
  Forward fwd(m, 512);
  std::vector<int32_t> toks(P);
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 37) % 8000;
  std::vector<double> t;
  for (size_t r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fwd.run(cache, pool, toks, 0);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  std::printf("median %.3f ms best %.3f ms  (%.0f tok/s median)\n", t[t.size()/2]*1e3, t[0]*1e3, P / t[t.size()/2]);
}
