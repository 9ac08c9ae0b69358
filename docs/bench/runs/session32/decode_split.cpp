// Session 32 measuring program (ab.sh here builds and runs it): a P-token prompt, then N decode
// tokens x R rounds; per token the median wall time, the time inside the pool's parallel calls,
// the time outside them (the calling thread's serial steps) and the attention run outside a
// parallel call. The pool's three entry points and CpuAttention::run are wrapped at link time
// (-Wl,--wrap, see ab.sh). CACHE=f16 for the f16 cache (default k8); COLD=1 reads 96 MB before
// every token (a cold token, as cpu_bench's paired tokens after their read probe).
//   decode_split MODEL THREADS N R [P]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <functional>
#include "core/model/forward.h"
#include "core/model/model.h"
using namespace alap;
using clk = std::chrono::steady_clock;
static double g_in = 0; static long g_calls = 0;
extern "C" void __real__ZN4alap10ThreadPool20parallel_for_chunkedEmmRKSt8functionIFvmmmEE(void*, size_t, size_t, const std::function<void(size_t,size_t,size_t)>&);
extern "C" void __wrap__ZN4alap10ThreadPool20parallel_for_chunkedEmmRKSt8functionIFvmmmEE(void* p, size_t n, size_t g, const std::function<void(size_t,size_t,size_t)>& f) {
  auto t0 = clk::now(); __real__ZN4alap10ThreadPool20parallel_for_chunkedEmmRKSt8functionIFvmmmEE(p, n, g, f);
  g_in += std::chrono::duration<double>(clk::now() - t0).count(); ++g_calls; }
extern "C" void __real__ZN4alap10ThreadPool20parallel_for_indexedEmRKSt8functionIFvmmmEE(void*, size_t, const std::function<void(size_t,size_t,size_t)>&);
extern "C" void __wrap__ZN4alap10ThreadPool20parallel_for_indexedEmRKSt8functionIFvmmmEE(void* p, size_t n, const std::function<void(size_t,size_t,size_t)>& f) {
  auto t0 = clk::now(); __real__ZN4alap10ThreadPool20parallel_for_indexedEmRKSt8functionIFvmmmEE(p, n, f);
  g_in += std::chrono::duration<double>(clk::now() - t0).count(); ++g_calls; }
extern "C" void __real__ZN4alap10ThreadPool12parallel_forEmRKSt8functionIFvmmEE(void*, size_t, const std::function<void(size_t,size_t)>&);
extern "C" void __wrap__ZN4alap10ThreadPool12parallel_forEmRKSt8functionIFvmmEE(void* p, size_t n, const std::function<void(size_t,size_t)>& f) {
  auto t0 = clk::now(); __real__ZN4alap10ThreadPool12parallel_forEmRKSt8functionIFvmmEE(p, n, f);
  g_in += std::chrono::duration<double>(clk::now() - t0).count(); ++g_calls; }
static double g_att = 0;
extern "C" void __real__ZN4alap12CpuAttention3runERKNS_7KvCacheERNS_10ThreadPoolEmPKfmmmfPf(void*, const void*, void*, size_t, const float*, size_t, size_t, size_t, float, float*);
extern "C" void __wrap__ZN4alap12CpuAttention3runERKNS_7KvCacheERNS_10ThreadPoolEmPKfmmmfPf(void* s, const void* c, void* p, size_t l, const float* q, size_t n, size_t pos0, size_t H, float sc, float* o) {
  double in0 = g_in; auto t0 = clk::now(); __real__ZN4alap12CpuAttention3runERKNS_7KvCacheERNS_10ThreadPoolEmPKfmmmfPf(s, c, p, l, q, n, pos0, H, sc, o);
  g_att += std::chrono::duration<double>(clk::now() - t0).count() - (g_in - in0); }
int main(int argc, char** argv) {
  Model m = Model::load(argv[1]);
  size_t threads = std::atoi(argv[2]), N = std::atoi(argv[3]), rounds = std::atoi(argv[4]);
  ThreadPool pool(threads); const char* cm = getenv("CACHE");
  KvCache cache(kv_cache_config(m, cm && cm[0]=='f' ? CacheMode::f16 : CacheMode::k8, 8192));
  Forward fwd(m, 512);
  size_t P = argc > 5 ? std::atoi(argv[5]) : 64; std::vector<int32_t> toks(P);
  for (size_t i = 0; i < P; ++i) toks[i] = 5 + (i * 37) % 8000;
  std::vector<double> t, tin, tout, tat;
  const bool cold = getenv("COLD") != nullptr; std::vector<char> flush(cold ? (size_t{96} << 20) : 0, 1); volatile long sink = 0; std::vector<long> nc;
  for (size_t r = 0; r < rounds; ++r) {
    fwd.run(cache, pool, std::span<const int32_t>(toks.data(), P), 0);
    int32_t next = 7;
    for (size_t i = 0; i < N; ++i) {
      if (cold) { for (size_t k = 0; k < flush.size(); k += 64) sink = sink + flush[k]; flush[i % flush.size()]++; }
      g_in = 0; g_calls = 0; g_att = 0;
      auto t0 = clk::now();
      auto lg = fwd.run(cache, pool, std::span<const int32_t>(&next, 1), P + i);
      double dt = std::chrono::duration<double>(clk::now() - t0).count();
      t.push_back(dt); tin.push_back(g_in); tout.push_back(dt - g_in - g_att); tat.push_back(g_att); nc.push_back(g_calls);
      next = static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
    }
  }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size()/2]*1e6; };
  std::printf("token %.1f us, in pool calls %.1f, outside %.1f, attention outside pool %.1f, calls %ld\n", med(t), med(tin), med(tout), med(tat), nc[0]);
}
