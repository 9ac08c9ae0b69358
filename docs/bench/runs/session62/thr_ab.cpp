// session 62: whole prompts with a 1-thread and a 2-thread pool alternately; speedup per round
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "core/model/forward.h"
#include "core/model/model.h"
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  const size_t P = atoi(argv[2]), D = atoi(argv[3]), rounds = atoi(argv[4]);
  ThreadPool p1(1), p2(2);
  KvCache cache(kv_cache_config(m, CacheMode::k8, D + P + 16));
  Forward f(m, 512);
  std::vector<int32_t> fill(D), toks(P);
  for (size_t i = 0; i < D; ++i) fill[i] = 5 + (i * 37) % 8000;
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
  if (D) f.run(cache, p2, fill, 0);
  std::vector<double> sp; double b1 = 1e9, b2 = 1e9;
  for (size_t r = 0; r < rounds; ++r) {
    double t[2];
    for (int k = 0; k < 2; ++k) {
      const int v = (k + r) % 2;
      const auto t0 = std::chrono::steady_clock::now();
      f.run(cache, v ? p2 : p1, toks, D);
      t[v] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    b1 = std::min(b1, t[0]); b2 = std::min(b2, t[1]); sp.push_back(t[0] / t[1]);
  }
  std::sort(sp.begin(), sp.end());
  std::printf("%s: 1 thr best %.1f ms, 2 thr best %.1f ms, speedup median %.3f [%.3f %.3f]\n", argv[1], b1 * 1e3, b2 * 1e3,
              sp[sp.size() / 2], sp[sp.size() / 4], sp[3 * sp.size() / 4]);
}
