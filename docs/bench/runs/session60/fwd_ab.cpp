// session 60: 128-token prompts at depth D through two Forward objects, A built with its rows 16 bytes
// past a line (alap_exp_v = 9 at construction: as std::vector gave them) and B on 64-byte lines.
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
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, CacheMode::k8, D + P + 16));
  alap_exp_v = 9; Forward fa(m, 512); alap_exp_v = 0; Forward fb(m, 512);
  std::vector<int32_t> fill(D), toks(P);
  for (size_t i = 0; i < D; ++i) fill[i] = 5 + (i * 37) % 8000;
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
  if (D) fb.run(cache, pool, fill, 0);
  std::vector<double> ra;
  double ba = 1e9, bb = 1e9;
  for (size_t r = 0; r < rounds; ++r) {
    double t[2];
    for (int w = 0; w < 2; ++w) {
      Forward& f = (w ^ (r & 1)) ? fb : fa;
      const auto t0 = std::chrono::steady_clock::now();
      auto lg = f.run(cache, pool, toks, D);
      t[(w ^ (r & 1))] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      (void)lg;
    }
    ra.push_back(t[1] / t[0]);
    ba = std::min(ba, t[0]), bb = std::min(bb, t[1]);
  }
  std::sort(ra.begin(), ra.end());
  std::printf("%s thr %zu depth %zu: A (16 past) best %.1f ms, B (aligned) best %.1f ms; B/A time median %.3f [%.3f %.3f]\n", argv[1], threads, D,
              ba * 1e3, bb * 1e3, ra[ra.size() / 2], ra[ra.size() / 4], ra[3 * ra.size() / 4]);
}
