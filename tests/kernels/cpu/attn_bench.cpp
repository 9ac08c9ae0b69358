// Google Benchmark of the grouped-head decode attention kernels (alap/kernels/attn.h, kv_k8.h
// "_heads"), one thread, per CPU variant: one KV group of G query heads (head_dim 64, the eval
// model's and Llama-3.2's) over blocks of 256 keys, as core/model/attention_cpu.cpp runs them, and
// a prefill tile's 32 query rows (rows:32).
// Reports seconds a key (counter per_key, printed as e.g. 5.1n) and bytes/s. Two settings:
// - warm: the same block again and again (its K and V in L1/L2): what the arithmetic costs;
// - cold: the blocks of a 256 MiB cache walked in order, as decode walks a long context (DRAM):
//   what the kernels reach when memory is also the limit (bytes = K and V bytes read).
// The *_all kernels are attn_block_heads (what decode runs: the AVX2 variants read a block's V
// while its scores run), the *_calls ones the same steps as separate calls (each pass reading its
// own rows ahead). To compare them on a noisy machine, interleave the repetitions:
// --benchmark_filter='attn_heads/(f16|k8|k8v8)_(all|calls)/avx2/G:4/cold'
// --benchmark_repetitions=20 --benchmark_enable_random_interleaving=true --benchmark_min_time=0.05
// Not a test: built into kernels_cpu_bench, not run by ctest. Filter with --benchmark_filter.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/attn.h"
#include "alap/kernels/dtype.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/huge_pages.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"

using namespace alap::kernels;

namespace {

constexpr size_t kDim = 64;
constexpr size_t kBlock = 256;                 // core/model/attention_cpu.h kKeyBlock
constexpr size_t kColdBytes = size_t{256} << 20;

enum class Kernel { f16_scores, k8_scores, f16_v, k8_v, f16_all, k8_all, k8v8_all, f16_calls, k8_calls, k8v8_calls };

// n values in memory like the KV cache's (alloc_streamed: huge pages where Linux gives them), so
// that the kernels' read-ahead is measured as decode sees it. Held for the whole process.
template <class T>
T* streamed(size_t n) {
  auto* p = static_cast<T*>(alloc_streamed(n * sizeof(T)));
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

struct Cache {  // every key of a cold walk; a warm run uses its first block only
  size_t n_keys = 0;
  uint16_t *kf = nullptr, *vf = nullptr;  // fp16 rows
  int8_t *kq = nullptr, *vq = nullptr;    // packed rows
  uint16_t *kd = nullptr, *vd = nullptr;  // their scales [n][kDim / 32]
};

const Cache& cache() {
  static const Cache c = [] {
    Cache c;
    // fp16 K + fp16 V is the largest form: 256 bytes a key.
    c.n_keys = kColdBytes / (4 * kDim);
    std::mt19937 rng(5);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    const size_t nb = kDim / k8_block_size(kDim);
    c.kf = streamed<uint16_t>(c.n_keys * kDim);
    c.vf = streamed<uint16_t>(c.n_keys * kDim);
    c.kq = streamed<int8_t>(c.n_keys * kDim);
    c.vq = streamed<int8_t>(c.n_keys * kDim);
    c.kd = streamed<uint16_t>(c.n_keys * nb);
    c.vd = streamed<uint16_t>(c.n_keys * nb);
    std::vector<float> row(kDim);
    for (size_t j = 0; j < c.n_keys; ++j) {
      for (auto& e : row) e = nd(rng);
      kv_row_to_fp16(row.data(), kDim, &c.kf[j * kDim]);
      k8_quantize(row.data(), kDim, &c.kq[j * kDim], &c.kd[j * nb]);
      for (auto& e : row) e = nd(rng);
      kv_row_to_fp16(row.data(), kDim, &c.vf[j * kDim]);
      k8_quantize(row.data(), kDim, &c.vq[j * kDim], &c.vd[j * nb]);
    }
    return c;
  }();
  return c;
}

size_t bytes_per_key(Kernel k) {
  switch (k) {
    case Kernel::f16_scores: case Kernel::f16_v: return 2 * kDim;
    case Kernel::k8_scores: case Kernel::k8_v: return kDim + 2 * (kDim / 32);
    case Kernel::f16_all: case Kernel::f16_calls: return 4 * kDim;
    case Kernel::k8_all: case Kernel::k8_calls: return 3 * kDim + 2 * (kDim / 32);
    case Kernel::k8v8_all: case Kernel::k8v8_calls: return 2 * (kDim + 2 * (kDim / 32));
  }
  return 0;
}

void bm_attn(benchmark::State& state, Kernel kernel, const char* variant, size_t n_heads, bool cold) {
  if (!set_cpu_variant(variant)) {
    state.SkipWithError("variant not available on this CPU");
    return;
  }
  const Cache& c = cache();
  const size_t nb = kDim / k8_block_size(kDim), block_size = k8_block_size(kDim);
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> q(n_heads * kDim);
  for (auto& e : q) e = nd(rng) * 0.3f;
  std::vector<int8_t> qq(n_heads * kDim);
  std::vector<uint16_t> qd(n_heads * nb);
  for (size_t h = 0; h < n_heads; ++h) k8_quantize(&q[h * kDim], kDim, &qq[h * kDim], &qd[h * nb]);
  std::vector<float> scores(n_heads * kBlock), p(n_heads * kBlock), out(n_heads * kDim, 0.0f), m(n_heads),
      l(n_heads);
  for (auto& e : p) e = std::fabs(nd(rng)) / kBlock;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kDim));
  const size_t n_blocks = cold ? c.n_keys / kBlock : 1;
  const bool k8k = kernel == Kernel::k8_scores || kernel == Kernel::k8_all || kernel == Kernel::k8v8_all ||
                   kernel == Kernel::k8_calls || kernel == Kernel::k8v8_calls;
  const bool do_scores = kernel != Kernel::f16_v && kernel != Kernel::k8_v;
  const bool do_v = kernel != Kernel::f16_scores && kernel != Kernel::k8_scores;
  const bool k8v = kernel == Kernel::k8_v || kernel == Kernel::k8v8_all || kernel == Kernel::k8v8_calls;
  const bool block = kernel == Kernel::f16_all || kernel == Kernel::k8_all || kernel == Kernel::k8v8_all;
  size_t b = 0;
  for (auto _ : state) {
    const size_t k0 = b * kBlock;
    b = b + 1 == n_blocks ? 0 : b + 1;
    if (block) {  // attn_block_heads: the decode step as one call
      AttnBlock ab;
      ab.head_dim_k = ab.head_dim_v = kDim, ab.block_v = block_size;
      if (k8k) {
        ab.qq = qq.data(), ab.qd = qd.data(), ab.kq = &c.kq[k0 * kDim], ab.kd = &c.kd[k0 * nb];
      } else {
        ab.q = q.data(), ab.k = &c.kf[k0 * kDim];
      }
      if (k8v) {
        ab.vq = &c.vq[k0 * kDim], ab.vd = &c.vd[k0 * nb];
      } else {
        ab.v = &c.vf[k0 * kDim];
      }
      attn_block_heads(ab, n_heads, kBlock, scale, scores.data(), kBlock, m.data(), l.data(), out.data());
      benchmark::DoNotOptimize(out.data());
      continue;
    }
    float* pr = p.data();
    if (do_scores) {
      if (k8k) {
        k8_scores_heads(qq.data(), qd.data(), n_heads, &c.kq[k0 * kDim], &c.kd[k0 * nb], kDim, kBlock, scale,
                        scores.data(), kBlock);
      } else {
        f16_scores_heads(q.data(), n_heads, &c.kf[k0 * kDim], kDim, kBlock, scale, scores.data(), kBlock);
      }
      if (do_v) {
        for (size_t h = 0; h < n_heads; ++h) softmax_partial(&scores[h * kBlock], kBlock, &m[h], &l[h]);
        pr = scores.data();
        std::fill(out.begin(), out.end(), 0.0f);  // as attn_block_heads: the sum from 0
      }
    }
    if (do_v) {
      if (k8v) {
        k8_accum_v_heads(pr, kBlock, n_heads, &c.vq[k0 * kDim], &c.vd[k0 * nb], kDim, block_size, kBlock, out.data());
      } else {
        f16_accum_v_heads(pr, kBlock, n_heads, &c.vf[k0 * kDim], kDim, kBlock, out.data());
      }
    }
    benchmark::DoNotOptimize(scores.data());
    benchmark::DoNotOptimize(out.data());
  }
  const auto keys = static_cast<int64_t>(state.iterations() * kBlock);
  state.SetItemsProcessed(keys);
  state.SetBytesProcessed(keys * static_cast<int64_t>(bytes_per_key(kernel)));
  state.counters["per_key"] =
      benchmark::Counter(static_cast<double>(keys), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  set_cpu_variant("best");
}

const int kRegistered = [] {
  const std::pair<Kernel, const char*> kernels[] = {
      {Kernel::f16_scores, "f16_scores"}, {Kernel::k8_scores, "k8_scores"}, {Kernel::f16_v, "f16_v"},
      {Kernel::k8_v, "k8_v"},             {Kernel::f16_all, "f16_all"},     {Kernel::k8_all, "k8_all"},
      {Kernel::k8v8_all, "k8v8_all"},     {Kernel::f16_calls, "f16_calls"}, {Kernel::k8_calls, "k8_calls"},
      {Kernel::k8v8_calls, "k8v8_calls"}};
  for (const char* v : {"scalar", "avx2", "avxvnni", "avx512vnni"}) {
    for (const auto& [k, kname] : kernels) {
      for (bool cold : {false, true}) {
        const std::string name = std::string("attn_heads/") + kname + "/" + v + "/G:4/" + (cold ? "cold" : "warm");
        benchmark::RegisterBenchmark(name.c_str(), bm_attn, k, v, size_t{4}, cold)->Unit(benchmark::kMicrosecond);
      }
      // A prefill tile's 32 query rows (8 tokens of a 4-head group) over the same blocks, warm.
      const std::string tile = std::string("attn_heads/") + kname + "/" + v + "/rows:32/warm";
      benchmark::RegisterBenchmark(tile.c_str(), bm_attn, k, v, size_t{32}, false)->Unit(benchmark::kMicrosecond);
    }
  }
  return 0;
}();

}  // namespace
