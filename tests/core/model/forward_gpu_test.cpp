// GpuForward's orchestration against the CPU Forward, run on the host emulation of the GPU library
// (tests/support/host_gpu_ops.cpp, loaded with dlopen like libalap_gpu.so): the emulation runs the
// CPU kernels, so logits agree to float rounding; a wrong buffer, offset, stale activation block,
// position or layer split shows as a large difference. Also the memory plan, the auto layer count
// and the refusals.
#include "core/model/forward_gpu.h"

#include <gtest/gtest.h>

#include "tests/support/scoped_env.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/core/model/tiny_model.h"

namespace alap {
namespace {

using kernels::DType;
using test::TinySpec;

using test::ScopedEnv;

std::shared_ptr<GpuBackend> host_backend() {
  GpuBackend::Probe p = GpuBackend::probe_paths({ALAP_GPU_HOST_LIBRARY});
  EXPECT_NE(p.backend, nullptr) << p.reason;
  return p.backend;
}

// The emulation runs the CPU kernels, but not always in the same grouping (the CPU forward splits
// rows over threads; a plain-type product of several tokens may sum in another order), so results
// differ by float rounding (~3e-7); where a rounding lands on an int8 quantisation step (packed
// cache, quantised activations) these random-weight models amplify one flipped step to ~1% of the
// logits. The CPU's packed V sum also rounds each probability·scale to 16 bits (the v16 rule of
// kernels/attn.h) where the GPU's runs fp16 probabilities: k8v8 cases moved by up to 3.03e-2
// (qwen2 Q8_0, three GPU layers, a decode step), hence the device check's limit of 5e-2 for that
// mode alone. A wrong buffer, offset, position or layer split gives differences of order 1 (the
// control at the end of SameLogitsAsCpuForward shows > 0.1).
constexpr double kTol = 3e-2;
double tol(CacheMode mode) { return mode == CacheMode::k8v8 ? 5e-2 : kTol; }

// Largest |a − b| over max |b|.
double rel_diff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0, m = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d = std::max(d, std::fabs(static_cast<double>(a[i]) - b[i]));
    m = std::max(m, std::fabs(static_cast<double>(b[i])));
  }
  return d / std::max(m, 1e-30);
}

TinySpec spec(const std::string& arch, DType t) {
  TinySpec s;
  s.arch = arch;
  s.wtype = t;
  s.n_layer = 3;
  s.V = 50;
  if (t == DType::q4_k || t == DType::iq4_xs) {  // rows of 256
    s.E = 256, s.H = 8, s.Hk = 2, s.Dk = 32, s.Dv = 32, s.F = 256;
  } else {
    s.E = 64, s.H = 4, s.Hk = 2, s.Dk = 32, s.Dv = 32, s.F = 96;
  }
  if (arch == "llama") s.rope_freqs = true, s.out_bias = true;
  if (arch == "qwen2") s.qkv_bias = true;
  if (arch == "qwen3") s.qk_norm = true;
  return s;
}

struct Case {
  std::string arch;
  DType wtype;
  CacheMode mode;
  int32_t gpu_layers;
};

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  const auto* info = kernels::dtype_info(static_cast<uint32_t>(i.param.wtype));
  std::string n = i.param.arch + "_" + info->name + "_" + cache_mode_name(i.param.mode) + "_gpu" +
                  std::to_string(i.param.gpu_layers);
  std::replace(n.begin(), n.end(), '-', 'm');
  return n;
}

class GpuForwardVsCpu : public ::testing::TestWithParam<Case> {};

// A tiny qwen2 Q8_0 model on the emulation library, a prompt, and options for short decode runs
// in k8 (prefill chunks of 4, so the prompt takes two).
struct ShortDecode {
  test::TinyFile tf = test::make_tiny(spec("qwen2", DType::q8_0));
  Model m = Model::from_file(tf.to_file());
  std::shared_ptr<GpuBackend> gpu = host_backend();
  std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9, 2, 6};
  static GpuForwardOptions options() {
    GpuForwardOptions o;
    o.mode = CacheMode::k8;
    o.capacity = 64;
    o.max_batch = 4;
    return o;
  }
};

// Prefill in chunks, decode steps, a re-prefill after cutting the cache, and all-token logits:
// every result matches the CPU forward pass over the same caches.
TEST_P(GpuForwardVsCpu, SameLogitsAsCpuForward) {
  const Case c = GetParam();
  ModelOptions mo;  // blocks of 32 on both sides (test::packed_reads_acts_256)
  mo.pack_cpu = !test::packed_reads_acts_256(c.wtype);
  const test::TinyFile tf = test::make_tiny(spec(c.arch, c.wtype));
  const Model m = Model::from_file(tf.to_file(), mo);
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu_unsupported_reason(m, *gpu), "");
  GpuForwardOptions o;
  o.n_gpu_layers = c.gpu_layers;
  o.mode = c.mode;
  o.capacity = 64;
  o.max_batch = 4;
  GpuForward g(m, gpu, o);
  EXPECT_EQ(g.n_gpu_layers(), c.gpu_layers < 0 ? 3 : std::min(c.gpu_layers, 3));
  KvCache cache(kv_cache_config(m, c.mode, 64));
  Forward f(m, 4);
  ThreadPool pool(2);

  const std::vector<int32_t> prompt{1, 7, 3, 49, 12, 0, 5, 33, 21, 8, 2};  // 3 chunks of ≤ 4
  const std::span<const float> r0 = f.run(cache, pool, prompt, 0);
  std::vector<float> ref(r0.begin(), r0.end());
  std::span<const float> got = g.run(pool, prompt, 0);
  EXPECT_LT(rel_diff(got, ref), tol(c.mode)) << "prefill";
  EXPECT_EQ(g.n_tokens(), prompt.size());
  int32_t next = 4;
  for (int step = 0; step < 6; ++step) {
    const std::span<const float> r = f.run(cache, pool, std::span<const int32_t>(&next, 1), cache.n_tokens());
    ref.assign(r.begin(), r.end());
    got = g.run(pool, std::span<const int32_t>(&next, 1), g.n_tokens());
    ASSERT_LT(rel_diff(got, ref), tol(c.mode)) << "decode step " << step;
    next = static_cast<int32_t>(std::max_element(ref.begin(), ref.end()) - ref.begin());
  }
  EXPECT_EQ(g.n_tokens(), prompt.size() + 6);
  // Prefix reuse: cut at 7 and evaluate 5 new tokens there.
  const std::vector<int32_t> tail{9, 10, 11, 40, 41};
  const std::span<const float> r2 = f.run(cache, pool, tail, 7);
  ref.assign(r2.begin(), r2.end());
  got = g.run(pool, tail, 7);
  EXPECT_LT(rel_diff(got, ref), tol(c.mode)) << "after truncation";
  EXPECT_EQ(g.n_tokens(), 12u);
  // All logits of a batch.
  const std::span<const float> ra = f.run(cache, pool, tail, 3, LogitsMode::all);
  ref.assign(ra.begin(), ra.end());
  got = g.run(pool, tail, 3, LogitsMode::all);
  ASSERT_EQ(got.size(), tail.size() * 50);
  EXPECT_LT(rel_diff(got, ref), tol(c.mode)) << "all logits";
  // A different context gives different logits (the check above can fail).
  const std::span<const float> other = g.run(pool, std::span<const int32_t>(&tail[0], 1), 0);
  const double control = rel_diff(other, std::span<const float>(ref).subspan(0, 50));
  EXPECT_GT(control, 0.1);

  const MemoryReport rep = g.memory_report();
  EXPECT_EQ(rep.device_total_bytes, 1ull << 30);
  EXPECT_EQ(rep.weights_bytes, g.plan().weights_bytes);
  EXPECT_EQ(rep.kv_bytes, kv_cache_bytes(KvShape{3, 2, 32, 32}, c.mode, 1).total);
  EXPECT_EQ(rep.kv_fp16_bytes, kv_cache_bytes(KvShape{3, 2, 32, 32}, CacheMode::f16, 1).total);
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (CacheMode mode : {CacheMode::f16, CacheMode::k8, CacheMode::k8v8}) {
    v.push_back({"llama", DType::f32, mode, -1});
    v.push_back({"qwen2", DType::q8_0, mode, 3});
    v.push_back({"llama", DType::q4_k, mode, 2});
  }
  v.push_back({"qwen3", DType::f16, CacheMode::k8, 99});
  v.push_back({"qwen3", DType::q8_0, CacheMode::f16, -1});  // q/k norms in the RoPE + row-store launch
  v.push_back({"qwen3", DType::q4_k, CacheMode::k8v8, 2});
  v.push_back({"qwen2", DType::q8_0, CacheMode::k8, 1});
  v.push_back({"llama", DType::q4_0, CacheMode::k8v8, 3});
  v.push_back({"qwen2", DType::iq4_nl, CacheMode::k8, -1});
  v.push_back({"llama", DType::iq4_xs, CacheMode::k8v8, 2});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuForwardVsCpu, ::testing::ValuesIn(cases()), case_name);

// Decode steps after the first replay a captured graph, with Q/K/V and gate/up multiplied in one
// call each, the norms and SwiGLU quantising in the same launch and the q/k/v bias added by the
// RoPE launch: 12 calls a layer for qwen2 in k8 (was 22). One graph serves a range of positions
// (the RoPE + row-store launch and attention read it on the device): captured once for the steps
// here, then only launched. Under ALAP_GPU_ONE_GRAPH=0 the position is baked in: the next
// position's graph is captured while this one runs, two executables updated in place in turn. The
// logits are those of plain launches bit for bit every way; graphs off by option, by environment
// or because capture fails leave the results unchanged.
TEST(GpuForward, DecodeStepsReplayAGraphOfFusedCalls) {
  const ShortDecode d;
  ASSERT_NE(d.gpu, nullptr);
  ThreadPool pool(1);
  // Runs the d.prompt and 5 decode steps; returns every step's logits.
  auto decode = [&](GpuForward& g) {
    std::vector<float> all;
    std::span<const float> lg = g.run(pool, d.prompt, 0);
    for (int step = 0; step < 5; ++step) {
      const int32_t next = static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
      lg = g.run(pool, std::span<const int32_t>(&next, 1), g.n_tokens());
      all.insert(all.end(), lg.begin(), lg.end());
    }
    return all;
  };
  GpuForwardOptions o = d.options();
  GpuForward with(d.m, d.gpu, o);
  const std::vector<float> a = decode(with);
  o.graphs = false;
  GpuForward without(d.m, d.gpu, o);
  const std::vector<float> b = decode(without);
  ASSERT_EQ(a.size(), 5u * 50u);
  EXPECT_EQ(a, b);

  // The benchmark's replay of the last step: the device's time alone, nothing moved.
  const size_t n_before = with.n_tokens();
  EXPECT_GT(with.replay_last_step_us(2), 0.0);
  EXPECT_EQ(with.n_tokens(), n_before);
  EXPECT_EQ(without.replay_last_step_us(2), 0.0);  // no graph to replay

  const GpuStepStats& sw = with.step_stats();
  EXPECT_EQ(sw.graphs_off, "");
  EXPECT_TRUE(sw.one_graph);
  EXPECT_EQ(sw.decode_steps, 5u);
  EXPECT_EQ(sw.graph_steps, 4u);        // the first step runs plainly
  EXPECT_EQ(sw.graph_captures, 1u);     // step 2 captures the graph (it serves 10–16 keys); 3–5 launch it
  EXPECT_EQ(sw.graph_updates, 0u);
  EXPECT_EQ(sw.blocking_captures, 1u);  // step 2's
  // 3 layers × 9 (bias, RoPE and both cache stores one call; the k8 attention writes the Wo
  // product's int8 activations itself) + embedding, output norm, output product; + ids in,
  // logits out, graph launch.
  EXPECT_EQ(sw.calls_per_step, 3u * 9u + 3u + 3u);

  // A second prompt: its first step (9 keys) is below that graph's range, so the prefill captures
  // one for 9–16 keys; every step replays it, with the same logits.
  const uint64_t graph_steps0 = with.step_stats().graph_steps, captures0 = with.step_stats().graph_captures;
  EXPECT_EQ(decode(with), a);
  EXPECT_EQ(with.step_stats().graph_steps - graph_steps0, 5u);
  EXPECT_EQ(with.step_stats().graph_captures - captures0, 1u);
  EXPECT_EQ(with.step_stats().blocking_captures, 1u);

  {  // The position baked into each graph: the same logits, one capture a step.
    ScopedEnv env("ALAP_GPU_ONE_GRAPH", "0");
    GpuForward baked(d.m, d.gpu, d.options());
    EXPECT_EQ(decode(baked), a);
    const GpuStepStats& sb = baked.step_stats();
    EXPECT_FALSE(sb.one_graph);
    EXPECT_EQ(sb.graph_steps, 4u);
    EXPECT_EQ(sb.graph_captures, 5u);     // step 2 captures its own graph and step 3's; 3–5 the next one
    EXPECT_EQ(sb.graph_updates, 3u);      // each executable is instantiated once, then updated in place
    EXPECT_EQ(sb.blocking_captures, 1u);  // step 2's own
    EXPECT_EQ(sb.calls_per_step, sw.calls_per_step);
    // A second prompt: its prefill captures the first decode step, so every step replays a graph.
    const uint64_t captures1 = sb.graph_captures;
    EXPECT_EQ(decode(baked), a);
    EXPECT_EQ(sb.graph_captures - captures1, 6u);  // one during the prefill, one a step
    EXPECT_EQ(sb.blocking_captures, 1u);           // none before a launch this time
  }

  const GpuStepStats& so = without.step_stats();
  EXPECT_EQ(so.graphs_off, "turned off by the caller");
  EXPECT_EQ(so.graph_steps, 0u);
  EXPECT_EQ(so.calls_per_step, 3u * 9u + 3u + 2u);

  {
    ScopedEnv env("ALAP_HOST_GPU_NO_GRAPHS", "1");  // capture fails: plain launches, same results
    o.graphs = true;
    GpuForward failing(d.m, d.gpu, o);
    EXPECT_EQ(decode(failing), a);
    EXPECT_EQ(failing.step_stats().graph_steps, 0u);
    EXPECT_NE(failing.step_stats().graphs_off.find("capture does not start"), std::string::npos)
        << failing.step_stats().graphs_off;
  }
  {
    ScopedEnv env("ALAP_GPU_GRAPHS", "0");
    GpuForward off(d.m, d.gpu, o);
    EXPECT_EQ(decode(off), a);
    EXPECT_EQ(off.step_stats().graph_steps, 0u);
  }
  // The logits land in page-locked memory when the library gives it, in ordinary memory when it
  // refuses or is told not to: the same logits every way.
  EXPECT_TRUE(sw.logits_pinned);
  {
    ScopedEnv env("ALAP_HOST_GPU_NO_PINNED", "1");
    GpuForward refused(d.m, d.gpu, o);
    EXPECT_EQ(decode(refused), a);
    EXPECT_FALSE(refused.step_stats().logits_pinned);
  }
  {
    ScopedEnv env("ALAP_GPU_PINNED", "0");
    GpuForward off(d.m, d.gpu, o);
    EXPECT_EQ(decode(off), a);
    EXPECT_FALSE(off.step_stats().logits_pinned);
  }
  // Every token's logits of a run longer than a few rows go to ordinary memory (not locked), and
  // the next decode step is page-locked again; the logits are the same as without page-locking.
  {
    const std::vector<int32_t> long_prompt{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};  // 11 rows > 8
    GpuForward g1(d.m, d.gpu, o);
    const std::span<const float> all1 = g1.run(pool, long_prompt, 0, LogitsMode::all);
    const std::vector<float> all_pinned(all1.begin(), all1.end());
    EXPECT_FALSE(g1.step_stats().logits_pinned);
    const int32_t next = 7;
    const std::span<const float> step1 = g1.run(pool, std::span<const int32_t>(&next, 1), g1.n_tokens());
    const std::vector<float> step_pinned(step1.begin(), step1.end());
    EXPECT_TRUE(g1.step_stats().logits_pinned);
    ScopedEnv env("ALAP_GPU_PINNED", "0");
    GpuForward g0(d.m, d.gpu, o);
    const std::span<const float> all0 = g0.run(pool, long_prompt, 0, LogitsMode::all);
    EXPECT_EQ(std::vector<float>(all0.begin(), all0.end()), all_pinned);
    const std::span<const float> step0 = g0.run(pool, std::span<const int32_t>(&next, 1), g0.n_tokens());
    EXPECT_EQ(std::vector<float>(step0.begin(), step0.end()), step_pinned);
  }
  // Layers on the CPU: no graphs.
  o.n_gpu_layers = 2;
  GpuForward split(d.m, d.gpu, o);
  decode(split);
  EXPECT_EQ(split.step_stats().graph_steps, 0u);
  EXPECT_EQ(split.step_stats().graphs_off, "layers run on the CPU");
}

// llama (no biases) and qwen3 (q/k norms) take the one RoPE + row-store launch a layer too, and so
// one graph for a range of positions: over 30 steps that cross several ranges, the graph steps
// give the plain launches' logits bit for bit, with 9 calls a layer (qwen3's norms, RoPE and
// stores were 5 launches of their own).
class OneGraph : public ::testing::TestWithParam<std::string> {};

TEST_P(OneGraph, ForEveryPositionSameLogitsAsPlainLaunches) {
  const test::TinyFile tf = test::make_tiny(spec(GetParam(), DType::q8_0));
  const Model m = Model::from_file(tf.to_file());
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  ThreadPool pool(1);
  auto decode = [&](GpuForward& g) {
    std::vector<float> all;
    std::span<const float> lg = g.run(pool, std::vector<int32_t>{3, 1, 4, 1, 5}, 0);
    for (int step = 0; step < 30; ++step) {
      const int32_t next = static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
      lg = g.run(pool, std::span<const int32_t>(&next, 1), g.n_tokens());
      all.insert(all.end(), lg.begin(), lg.end());
    }
    return all;
  };
  GpuForwardOptions o = ShortDecode::options();
  GpuForward with(m, gpu, o);
  const std::vector<float> a = decode(with);
  o.graphs = false;
  GpuForward without(m, gpu, o);
  EXPECT_EQ(a, decode(without));
  EXPECT_TRUE(with.step_stats().one_graph);
  EXPECT_EQ(with.step_stats().graph_steps, 29u);
  // The emulation's attention serves ranges of 7–8, 9–16, 17–24, 25–32 and 33–40 keys (steps of
  // 6–35 keys): one capture each, all but the first made while the step before runs.
  EXPECT_EQ(with.step_stats().graph_captures, 5u);
  EXPECT_EQ(with.step_stats().blocking_captures, 1u);
  // The tiny llama has biases on Wo (a bias and a residual call a layer) and on the output.
  const uint64_t extra = GetParam() == "llama" ? 3u * 2u + 1u : 0u;
  EXPECT_EQ(with.step_stats().calls_per_step, 3u * 9u + 3u + 3u + extra);
}

INSTANTIATE_TEST_SUITE_P(Archs, OneGraph, ::testing::Values(std::string("llama"), std::string("qwen3")));

// A decode step launches attention as a programmatic dependent of the kernel before it, like its
// other kernels (docs/bench/gpu.md "Session 33": 0.6-6.3% less device time a step on the H200), and
// plainly under ALAP_GPU_ATTN_PDL=0. The emulation counts the calls as they are issued (run or
// captured into a step's graph).
TEST(GpuForward, DecodeAttentionIsAProgrammaticDependent) {
  const ShortDecode d;
  ASSERT_NE(d.gpu, nullptr);
  void* lib = dlopen(ALAP_GPU_HOST_LIBRARY, RTLD_NOW | RTLD_NOLOAD);  // the backend's own handle
  ASSERT_NE(lib, nullptr);
  using Calls = void (*)(unsigned*, unsigned*);
  const auto calls = reinterpret_cast<Calls>(dlsym(lib, "host_gpu_attn_decode_calls"));
  ASSERT_NE(calls, nullptr);
  ThreadPool pool(1);
  // The prompt (prefill attention, not counted) and 4 decode steps: the decode calls issued.
  auto decode_calls = [&](unsigned& pdl, unsigned& plain) {
    unsigned pdl0 = 0, plain0 = 0;
    calls(&pdl0, &plain0);
    GpuForward g(d.m, d.gpu, ShortDecode::options());
    std::span<const float> lg = g.run(pool, d.prompt, 0);
    for (int step = 0; step < 4; ++step) {
      const int32_t next = static_cast<int32_t>(std::max_element(lg.begin(), lg.end()) - lg.begin());
      lg = g.run(pool, std::span<const int32_t>(&next, 1), g.n_tokens());
    }
    calls(&pdl, &plain);
    pdl -= pdl0, plain -= plain0;
  };
  unsigned pdl = 0, plain = 0;
  decode_calls(pdl, plain);
  EXPECT_EQ(pdl, 2u * 3u);  // 3 layers: the first step (plain launches) and the one graph's capture
  EXPECT_EQ(plain, 0u);
  {
    ScopedEnv env("ALAP_GPU_ATTN_PDL", "0");
    decode_calls(pdl, plain);
  }
  EXPECT_EQ(pdl, 0u);
  EXPECT_EQ(plain, 2u * 3u);
  dlclose(lib);
}

// Prefill products go through gpu_matmul_blas when the library has BLAS (emulated here with fp16
// weights and activations: ALAP_HOST_GPU_BLAS=1): every product of a chunk of more than one token
// (7 a layer), none of a decode step; the plan holds the BLAS scratch; the logits still match the
// CPU forward pass, for a quantised, a K-quant with layers left to the CPU, and an f16 model.
// Without BLAS in the library nothing changes.
// The host emulation's count of BLAS products (host_gpu_blas_products), or null. The library
// stays loaded while the test's backend holds it.
using ProductCount = unsigned (*)();
ProductCount blas_product_count() {
  void* lib = dlopen(ALAP_GPU_HOST_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return nullptr;
  const auto count = reinterpret_cast<ProductCount>(dlsym(lib, "host_gpu_blas_products"));
  dlclose(lib);
  return count;
}

TEST(GpuForward, PrefillProductsTakeTheBlasWhenTheLibraryHasIt) {
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  const ProductCount products = blas_product_count();
  ASSERT_NE(products, nullptr);
  ThreadPool pool(2);
  const std::vector<int32_t> prompt{1, 7, 3, 49, 12, 0, 5, 33, 21, 8, 2};  // chunks of 4, 4 and 3
  for (const Case& c : {Case{"qwen2", DType::q8_0, CacheMode::k8, -1}, Case{"llama", DType::q4_k, CacheMode::k8v8, 2},
                        Case{"qwen3", DType::f16, CacheMode::f16, -1}}) {
    SCOPED_TRACE(c.arch + " " + kernels::dtype_info(static_cast<uint32_t>(c.wtype))->name);
    ModelOptions mo;
    mo.pack_cpu = !test::packed_reads_acts_256(c.wtype);
    const test::TinyFile tf = test::make_tiny(spec(c.arch, c.wtype));
    const Model m = Model::from_file(tf.to_file(), mo);
    GpuForwardOptions o;
    o.n_gpu_layers = c.gpu_layers;
    o.mode = c.mode;
    o.capacity = 64;
    o.max_batch = 4;
    const int gpu_layers = c.gpu_layers < 0 ? 3 : c.gpu_layers;
    KvCache cache(kv_cache_config(m, c.mode, 64));
    Forward f(m, 4);
    const std::span<const float> r = f.run(cache, pool, prompt, 0);
    const std::vector<float> ref(r.begin(), r.end());
    const int32_t next = 4;
    const std::span<const float> r1 = f.run(cache, pool, std::span<const int32_t>(&next, 1), cache.n_tokens());
    const std::vector<float> ref1(r1.begin(), r1.end());

    const uint64_t plain_scratch = plan_gpu_memory(m, *gpu, gpu_layers, c.mode, 64, 4).scratch_bytes;
    const unsigned before = products();
    {
      ScopedEnv env("ALAP_HOST_GPU_BLAS", "1");
      EXPECT_GE(plan_gpu_memory(m, *gpu, gpu_layers, c.mode, 64, 4).scratch_bytes, plain_scratch + 256);
      GpuForward g(m, gpu, o);
      EXPECT_TRUE(g.prefill_blas());
      EXPECT_EQ(g.prefill_blas_use(), GpuBlasUse::used);
      EXPECT_EQ(g.blas_name(), "hostBLAS");
      EXPECT_LT(rel_diff(g.run(pool, prompt, 0), ref), tol(c.mode)) << "prefill";
      EXPECT_EQ(products() - before, 3u * 7u * static_cast<unsigned>(gpu_layers));
      EXPECT_LT(rel_diff(g.run(pool, std::span<const int32_t>(&next, 1), g.n_tokens()), ref1), tol(c.mode)) << "decode";
      EXPECT_EQ(products() - before, 3u * 7u * static_cast<unsigned>(gpu_layers));  // none for the decode step
    }
    GpuForward g(m, gpu, o);  // the library without BLAS
    EXPECT_FALSE(g.prefill_blas());
    EXPECT_EQ(g.prefill_blas_use(), GpuBlasUse::not_found);
    EXPECT_EQ(g.plan().scratch_bytes, plain_scratch);
    const unsigned without = products();
    EXPECT_LT(rel_diff(g.run(pool, prompt, 0), ref), tol(c.mode));
    EXPECT_EQ(products(), without);
  }
}

// Decode steps can send back only the m best logits: each step's entries are the row's best m in
// the sampler's order (the row from a forward without them), through graphs and plain launches;
// m changing between steps re-captures; whole rows come back after set_logits_top(0); refused
// with layers on the CPU, above the limit, or turned off.
TEST(GpuForward, DecodeStepsCanSendBackOnlyTheBestLogits) {
  const ShortDecode d;
  ASSERT_NE(d.gpu, nullptr);
  ThreadPool pool(1);
  const std::vector<int32_t> steps{7, 2, 9, 4, 4, 1};
  GpuForwardOptions o = d.options();
  // The rows of every decode step, whole.
  std::vector<std::vector<float>> rows;
  {
    GpuForward g(d.m, d.gpu, o);
    g.run(pool, d.prompt, 0);
    for (const int32_t t : steps) {
      const std::span<const float> lg = g.run(pool, std::span<const int32_t>(&t, 1), g.n_tokens());
      rows.emplace_back(lg.begin(), lg.end());
    }
    EXPECT_THROW(g.logits_top(), ModelError);
  }
  const size_t V = rows[0].size();
  for (const bool graphs : {true, false}) {
    o.graphs = graphs;
    GpuForward g(d.m, d.gpu, o);
    EXPECT_FALSE(g.set_logits_top(GpuForward::kMaxLogitsTop + 1));
    const std::span<const float> first = g.run(pool, d.prompt, 0);  // a prefill returns the row
    EXPECT_EQ(first.size(), V);
    const size_t ms[] = {5, 5, 12, 12, 0, 3};  // m per step (0: the row again)
    for (size_t i = 0; i < steps.size(); ++i) {
      EXPECT_EQ(g.set_logits_top(ms[i]), ms[i] > 0);
      const std::span<const float> lg = g.run(pool, std::span<const int32_t>(&steps[i], 1), g.n_tokens());
      if (ms[i] == 0) {
        EXPECT_EQ(std::vector<float>(lg.begin(), lg.end()), rows[i]) << "step " << i;
        continue;
      }
      EXPECT_TRUE(lg.empty());
      const LogitsTop top = g.logits_top();
      std::vector<int32_t> order(V);
      for (size_t j = 0; j < V; ++j) order[j] = static_cast<int32_t>(j);
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return rows[i][a] > rows[i][b]; });
      ASSERT_EQ(top.ids.size(), ms[i]);
      ASSERT_EQ(top.logits.size(), ms[i]);
      EXPECT_EQ(top.first_nan, -1);
      EXPECT_EQ(top.n_vocab, V);
      for (size_t r = 0; r < ms[i]; ++r) {
        EXPECT_EQ(top.ids[r], order[r]) << "step " << i << " rank " << r << " graphs " << graphs;
        EXPECT_EQ(top.logits[r], rows[i][order[r]]) << "step " << i << " rank " << r;
      }
    }
    if (graphs) {
      EXPECT_GT(g.step_stats().graph_steps, 0u);
    }
  }
  {
    ScopedEnv env("ALAP_GPU_TOP", "0");
    GpuForward off(d.m, d.gpu, o);
    EXPECT_FALSE(off.set_logits_top(5));
  }
  o.n_gpu_layers = 2;
  GpuForward split(d.m, d.gpu, o);
  EXPECT_FALSE(split.set_logits_top(5));
}

// The emulation's graphs record and replay: nothing runs during the capture, the launch runs it,
// a second capture updates the executable in place, and a synchronisation inside a capture spoils it.
TEST(GpuForward, HostEmulationGraphsRecordAndReplay) {
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  const GpuOps& ops = gpu->ops();
  void* stream = nullptr;
  ASSERT_EQ(ops.gpu_stream_create(&stream), 0);
  DeviceBuffer buf(gpu, 64), src(gpu, 64);
  const std::vector<uint8_t> ones(64, 1), twos(64, 2);
  ASSERT_EQ(ops.gpu_copy_to_device(buf.get(), ones.data(), 64, stream), 0);
  ASSERT_EQ(ops.gpu_copy_to_device(src.get(), twos.data(), 64, stream), 0);
  std::vector<uint8_t> host(64);
  void* exec = nullptr;
  int updated = -1;
  ASSERT_EQ(ops.gpu_graph_capture_begin(stream), 0);
  ASSERT_EQ(ops.gpu_fill_zero(buf.get(), 64, stream), 0);
  ASSERT_EQ(ops.gpu_graph_capture_end(stream, &exec, &updated), 0);
  EXPECT_EQ(updated, 0);
  ASSERT_NE(exec, nullptr);
  ASSERT_EQ(ops.gpu_copy_to_host(host.data(), buf.get(), 64, stream), 0);
  EXPECT_EQ(host, ones);  // not run yet
  ASSERT_EQ(ops.gpu_graph_launch(exec, stream), 0);
  ASSERT_EQ(ops.gpu_copy_to_host(host.data(), buf.get(), 64, stream), 0);
  EXPECT_EQ(host, std::vector<uint8_t>(64, 0));
  ASSERT_EQ(ops.gpu_graph_capture_begin(stream), 0);
  ASSERT_EQ(ops.gpu_copy_on_device(buf.get(), src.get(), 64, stream), 0);
  ASSERT_EQ(ops.gpu_graph_capture_end(stream, &exec, &updated), 0);
  EXPECT_EQ(updated, 1);
  ASSERT_EQ(ops.gpu_graph_launch(exec, stream), 0);
  ASSERT_EQ(ops.gpu_copy_to_host(host.data(), buf.get(), 64, stream), 0);
  EXPECT_EQ(host, twos);
  ASSERT_EQ(ops.gpu_graph_capture_begin(stream), 0);
  EXPECT_NE(ops.gpu_stream_sync(stream), 0);
  EXPECT_NE(ops.gpu_graph_capture_end(stream, &exec, &updated), 0);
  EXPECT_EQ(exec, nullptr);
  EXPECT_EQ(ops.gpu_graph_destroy(exec), 0);
  EXPECT_EQ(ops.gpu_stream_destroy(stream), 0);
}

// The BLAS's scratch never costs a layer: where leaving it out puts more layers on the device, the
// automatic choice leaves it out (and prefill takes the int8 kernels); asked-for layers that fit
// only without it run without it; where everything fits, it is taken.
TEST(GpuForward, PrefillBlasIsLeftOutWhereItWouldCostALayer) {
  const test::TinyFile tf = test::make_tiny(spec("qwen2", DType::q8_0));
  const Model m = Model::from_file(tf.to_file());
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  const ProductCount products = blas_product_count();
  ASSERT_NE(products, nullptr);
  ScopedEnv blas("ALAP_HOST_GPU_BLAS", "1");
  ScopedEnv blas_scratch("ALAP_HOST_GPU_BLAS_SCRATCH", std::to_string(4u << 20));
  const GpuMemoryPlan with = plan_gpu_memory(m, *gpu, 3, CacheMode::k8, 256, 8, true);
  const GpuMemoryPlan without = plan_gpu_memory(m, *gpu, 3, CacheMode::k8, 256, 8, false);
  ASSERT_EQ(with.scratch_bytes, without.scratch_bytes + (4u << 20));
  ThreadPool pool(1);
  const std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  auto budget_for = [](const GpuMemoryPlan& p) {  // usable = free − 5% of total: p and 4 KiB more
    return std::to_string(static_cast<uint64_t>(static_cast<double>(p.total()) / 0.95) + 4096);
  };
  GpuForwardOptions o;
  o.mode = CacheMode::k8;
  o.capacity = 256;
  o.max_batch = 8;
  {
    ScopedEnv memory("ALAP_HOST_GPU_MEMORY", budget_for(without));
    const uint64_t usable = gpu_usable_bytes(*gpu, 0.05);
    ASSERT_LT(usable, with.total());
    EXPECT_LT(auto_gpu_layers(m, *gpu, CacheMode::k8, 256, 8, usable, true), 3);
    const GpuLayerFit fit = fit_gpu_layers(m, *gpu, CacheMode::k8, 256, 8, usable);
    EXPECT_EQ(fit.layers, 3);
    EXPECT_FALSE(fit.blas);
    for (int32_t layers : {-1, 3}) {
      o.n_gpu_layers = layers;
      GpuForward g(m, gpu, o);
      EXPECT_EQ(g.n_gpu_layers(), 3);
      EXPECT_FALSE(g.prefill_blas());
      EXPECT_EQ(g.prefill_blas_use(), GpuBlasUse::no_memory);
      EXPECT_EQ(g.plan().scratch_bytes, without.scratch_bytes);
      const unsigned before = products();
      (void)g.run(pool, prompt, 0);
      EXPECT_EQ(products(), before) << "layers " << layers;
    }
  }
  {
    ScopedEnv memory("ALAP_HOST_GPU_MEMORY", budget_for(with));
    const GpuLayerFit fit = fit_gpu_layers(m, *gpu, CacheMode::k8, 256, 8, gpu_usable_bytes(*gpu, 0.05));
    EXPECT_EQ(fit.layers, 3);
    EXPECT_TRUE(fit.blas);
    EXPECT_FALSE(fit_gpu_layers(m, *gpu, CacheMode::k8, 256, 8, gpu_usable_bytes(*gpu, 0.05), false).blas);
    o.n_gpu_layers = -1;
    {
      GpuForward g(m, gpu, o);
      EXPECT_EQ(g.n_gpu_layers(), 3);
      EXPECT_TRUE(g.prefill_blas());
      EXPECT_EQ(g.plan().scratch_bytes, with.scratch_bytes);
      const unsigned before = products();
      (void)g.run(pool, prompt, 0);
      EXPECT_GT(products(), before);
    }
    o.prefill_blas = false;  // the caller's choice
    GpuForward off(m, gpu, o);
    EXPECT_FALSE(off.prefill_blas());
    EXPECT_EQ(off.prefill_blas_use(), GpuBlasUse::off);
    EXPECT_EQ(off.plan().scratch_bytes, without.scratch_bytes);
  }
}

// Why a forward pass runs its prompts without the vendor BLAS, from what the library says of it
// (gpu_blas_status; the host emulation says what ALAP_HOST_GPU_BLAS_STATE asks) and from the plan.
TEST(GpuForward, SaysWhyPromptsRunWithoutTheBlas) {
  const test::TinyFile tf = test::make_tiny(spec("qwen2", DType::q8_0));
  const Model m = Model::from_file(tf.to_file());
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  GpuForwardOptions o;
  o.capacity = 64;
  o.max_batch = 4;
  const struct {
    gpu::gpu_blas_state state;
    GpuBlasUse use;
  } cases[] = {{gpu::gpu_blas_not_built, GpuBlasUse::not_built},
               {gpu::gpu_blas_off, GpuBlasUse::off},
               {gpu::gpu_blas_not_found, GpuBlasUse::not_found},
               {gpu::gpu_blas_incomplete, GpuBlasUse::unusable},
               {gpu::gpu_blas_failed_check, GpuBlasUse::unusable},
               {gpu::gpu_blas_refused, GpuBlasUse::unusable},
               {gpu::gpu_blas_not_looked_for, GpuBlasUse::short_batches}};
  for (const auto& c : cases) {
    ScopedEnv state("ALAP_HOST_GPU_BLAS_STATE", std::to_string(static_cast<int>(c.state)));
    EXPECT_EQ(gpu->blas_status().state, c.state);
    GpuForward g(m, gpu, o);
    EXPECT_FALSE(g.prefill_blas());
    EXPECT_EQ(g.prefill_blas_use(), c.use) << "state " << c.state << ": " << gpu_blas_use_name(g.prefill_blas_use());
    EXPECT_EQ(g.blas_name(), "hostBLAS");
  }
  // A BLAS that is ready, but the library asks for no workspace at a one-token batch (the host
  // emulation takes products from 2 tokens, the real library from 128).
  ScopedEnv blas("ALAP_HOST_GPU_BLAS", "1");
  EXPECT_EQ(gpu->blas_status().state, gpu::gpu_blas_ready);
  EXPECT_EQ(gpu->blas_status().file, "libhostblas.so");
  o.max_batch = 1;
  GpuForward one(m, gpu, o);
  EXPECT_FALSE(one.prefill_blas());
  EXPECT_EQ(one.prefill_blas_use(), GpuBlasUse::short_batches);
  o.max_batch = 4;
  GpuForward four(m, gpu, o);
  EXPECT_EQ(four.prefill_blas_use(), GpuBlasUse::used);
}

TEST(GpuForward, PlanMatchesAllocationAndAutoLayersFitTheBudget) {
  const test::TinyFile tf = test::make_tiny(spec("qwen2", DType::q8_0));
  const Model m = Model::from_file(tf.to_file());
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  const GpuMemoryPlan p1 = plan_gpu_memory(m, *gpu, 1, CacheMode::k8, 256, 8);
  const GpuMemoryPlan p2 = plan_gpu_memory(m, *gpu, 2, CacheMode::k8, 256, 8);
  const GpuMemoryPlan p3 = plan_gpu_memory(m, *gpu, 3, CacheMode::k8, 256, 8);
  EXPECT_LT(p1.total(), p2.total());
  EXPECT_GT(p3.weights_bytes - p2.weights_bytes, p2.weights_bytes - p1.weights_bytes);  // + embeddings, output
  EXPECT_EQ(p2.kv_bytes, 2 * p1.kv_bytes);
  EXPECT_EQ(plan_gpu_memory(m, *gpu, 0, CacheMode::k8, 256, 8).total(), 0u);
  const GpuMemoryPlan pf = plan_gpu_memory(m, *gpu, 1, CacheMode::f16, 256, 8);
  EXPECT_GT(pf.kv_bytes, p1.kv_bytes);

  // A budget that holds two layers but not three (usable = free − 5% of total).
  const uint64_t budget = static_cast<uint64_t>(static_cast<double>(p2.total()) / 0.95) + 4096;
  ASSERT_LT(budget, static_cast<uint64_t>(static_cast<double>(p3.total()) / 0.95));
  ScopedEnv env("ALAP_HOST_GPU_MEMORY", std::to_string(budget));
  EXPECT_EQ(auto_gpu_layers(m, *gpu, CacheMode::k8, 256, 8, gpu_usable_bytes(*gpu, 0.05)), 2);
  GpuForwardOptions o;
  o.n_gpu_layers = -1;
  o.mode = CacheMode::k8;
  o.capacity = 256;
  o.max_batch = 8;
  GpuForward g(m, gpu, o);
  EXPECT_EQ(g.n_gpu_layers(), 2);
  EXPECT_EQ(gpu->mem().free_bytes, budget - p2.total());  // exactly the plan was allocated
  ThreadPool pool(1);
  KvCache cache(kv_cache_config(m, CacheMode::k8, 256));
  Forward f(m, 8);
  const std::vector<int32_t> prompt{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  const std::span<const float> r = f.run(cache, pool, prompt, 0);
  const std::vector<float> ref(r.begin(), r.end());
  EXPECT_LT(rel_diff(g.run(pool, prompt, 0), ref), kTol);
}

TEST(GpuForward, TooLargeNamesTheLargestContextPerMode) {
  const test::TinyFile tf = test::make_tiny(spec("llama", DType::f32));
  const Model m = Model::from_file(tf.to_file());
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  const GpuMemoryPlan small = plan_gpu_memory(m, *gpu, 3, CacheMode::k8, 512, 8);
  ScopedEnv env("ALAP_HOST_GPU_MEMORY", std::to_string(static_cast<uint64_t>(static_cast<double>(small.total()) / 0.95) + 4096));
  GpuForwardOptions o;
  o.n_gpu_layers = 3;
  o.mode = CacheMode::f16;
  o.capacity = 100000;
  o.max_batch = 8;
  try {
    GpuForward g(m, gpu, o);
    FAIL() << "a context far beyond the budget was accepted";
  } catch (const ModelError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("3 layers with a context of 100000 tokens in f16 need"), std::string::npos) << w;
    // k8 fits the 512 tokens the budget was sized for (518, rounded down to 256s); f16 fewer (397),
    // k8v8 more (747).
    EXPECT_NE(w.find("largest context that fits is (tokens) f16 256, k8 512, k8v8 512"), std::string::npos) << w;
    EXPECT_NE(w.find("not one GPU layer fits this context: use a smaller one or the CPU"), std::string::npos) << w;
  }
  // Twice the context the budget was sized for, in k8: two layers would fit, three do not.
  o.mode = CacheMode::k8;
  o.capacity = 1024;
  try {
    GpuForward g(m, gpu, o);
    FAIL() << "3 layers at twice the context that fits were accepted";
  } catch (const ModelError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("largest context that fits is (tokens) f16 256, k8 512, k8v8 512; or use fewer GPU layers (2 fit "
                     "this context)"),
              std::string::npos)
        << w;
  }
  EXPECT_EQ(gpu->mem().free_bytes, gpu->mem().total_bytes);  // nothing was allocated
}

TEST(GpuForward, RefusesWhatTheKernelsCannotRun) {
  TinySpec s = spec("llama", DType::f32);
  s.Dk = s.Dv = 16;  // head size not a multiple of 32
  const test::TinyFile tf = test::make_tiny(s);
  const Model m = Model::from_file(tf.to_file());
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu_unsupported_reason(m, *gpu), "head size 16 is not a multiple of 32 up to 256");
  GpuForwardOptions o;
  o.capacity = 32;
  EXPECT_THROW(GpuForward(m, gpu, o), ModelError);
}

TEST(GpuForward, RejectsBadInputLikeForward) {
  const test::TinyFile tf = test::make_tiny(spec("llama", DType::f32));
  const Model m = Model::from_file(tf.to_file());
  auto gpu = host_backend();
  ASSERT_NE(gpu, nullptr);
  GpuForwardOptions o;
  o.capacity = 8;
  o.max_batch = 4;
  GpuForward g(m, gpu, o);
  ThreadPool pool(1);
  const std::vector<int32_t> ok{1, 2, 3};
  EXPECT_THROW(g.run(pool, {}, 0), ModelError);
  EXPECT_THROW(g.run(pool, ok, 1), ModelError);  // gap
  const std::vector<int32_t> bad{1, 50};
  EXPECT_THROW(g.run(pool, bad, 0), ModelError);
  const std::vector<int32_t> nine(9, 1);
  EXPECT_THROW(g.run(pool, nine, 0), ModelError);  // beyond the capacity
  g.run(pool, ok, 0);
  EXPECT_EQ(g.n_tokens(), 3u);
  g.clear();
  EXPECT_EQ(g.n_tokens(), 0u);
}

}  // namespace
}  // namespace alap
