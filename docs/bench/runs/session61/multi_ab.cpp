// session 61: whole prompts at depth D, hook values VARS (digits, e.g. "508") round robin in one process;
// per variant the best time and the median of its time over the first variant's in the same round.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "core/model/forward.h"
#include "core/model/model.h"
int alap_exp_v = 0;
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  const size_t threads = atoi(argv[2]), P = atoi(argv[3]), D = atoi(argv[4]), rounds = atoi(argv[5]);
  std::vector<int> vars;
  for (const char* p = getenv("VARS") ? getenv("VARS") : "0"; *p; ++p) vars.push_back(*p - '0');
  const size_t nv = vars.size();
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, CacheMode::k8, D + P + 16));
  Forward f(m, 512);
  std::vector<int32_t> fill(D), toks(P);
  for (size_t i = 0; i < D; ++i) fill[i] = 5 + (i * 37) % 8000;
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
  if (D) f.run(cache, pool, fill, 0);
  std::vector<std::vector<double>> ratio(nv);
  std::vector<double> best(nv, 1e9);
  for (size_t r = 0; r < rounds; ++r) {
    std::vector<double> t(nv);
    for (size_t k = 0; k < nv; ++k) {
      const size_t v = (k + r) % nv;  // rotate the order each round
      alap_exp_v = vars[v];
      const auto t0 = std::chrono::steady_clock::now();
      f.run(cache, pool, toks, D);
      t[v] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      best[v] = std::min(best[v], t[v]);
    }
    for (size_t v = 0; v < nv; ++v) ratio[v].push_back(t[v] / t[0]);
  }
  for (size_t v = 0; v < nv; ++v) {
    auto x = ratio[v];
    std::sort(x.begin(), x.end());
    std::printf("%s thr %zu depth %zu v%d: best %.1f ms, time over v%d median %.3f [%.3f %.3f]\n", argv[1], threads, D,
                vars[v], best[v] * 1e3, vars[0], x[x.size() / 2], x[x.size() / 4], x[3 * x.size() / 4]);
  }
}
