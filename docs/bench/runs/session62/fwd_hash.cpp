// session 62: FNV hash of a prompt's logits (all tokens) and a few decode steps, per model, threads, cache mode
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "core/model/forward.h"
#include "core/model/model.h"
int alap_exp_v = 0;
using namespace alap;
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  const size_t threads = atoi(argv[2]), P = atoi(argv[3]);
  for (CacheMode mode : {CacheMode::f16, CacheMode::k8v8}) {
    ThreadPool pool(threads);
    KvCache cache(kv_cache_config(m, mode, P + 16));
    Forward f(m, 512);
    std::vector<int32_t> toks(P);
    for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 41) % 8000;
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](std::span<const float> v) { const auto* b = reinterpret_cast<const uint8_t*>(v.data()); for (size_t z = 0; z < v.size() * 4; ++z) h = (h ^ b[z]) * 1099511628211ull; };
    mix(f.run(cache, pool, toks, 0, LogitsMode::all));
    for (int s = 0; s < 3; ++s) { int32_t nx = 7 + s; mix(f.run(cache, pool, std::span(&nx, 1), cache.n_tokens())); }
    printf("%s thr %zu P %zu mode %d: %016llx\n", argv[1], threads, P, int(mode), (unsigned long long)h);
  }
}
