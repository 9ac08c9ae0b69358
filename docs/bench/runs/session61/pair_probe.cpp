// session 61: does the dot probe track the prompt's slow spells? probe, prompt, probe, ... printed per round
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "alap/kernels/probe.h"
#include "core/model/forward.h"
#include "core/model/model.h"
int alap_exp_v = 0;
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  const size_t threads = atoi(argv[2]), P = atoi(argv[3]), rounds = atoi(argv[4]);
  const double ps = argc > 5 ? atof(argv[5]) : 0.05;
  ThreadPool pool(threads);
  KvCache cache(kv_cache_config(m, CacheMode::k8, P + 16));
  Forward f(m, 512);
  std::vector<int32_t> toks(P);
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
  f.run(cache, pool, toks, 0);
  for (size_t r = 0; r < rounds; ++r) {
    const double a = kernels::measure_int8_dot_peak(threads, 0, ps).gmacs;
    const auto t0 = std::chrono::steady_clock::now();
    f.run(cache, pool, toks, 0);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double b = kernels::measure_int8_dot_peak(threads, 0, ps).gmacs;
    std::printf("%2zu probe %.1f prompt %.1f ms (%.1f tok/s) probe %.1f  ratio-to-mean-probe %.3f\n", r, a, s * 1e3, P / s, b, (P / s) / ((a + b) / 2));
  }
}
