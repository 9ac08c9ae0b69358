// Benchmark of GPU decode attention (f16, k8, k8v8) in Llama-3-8B geometry (32 query heads, 8 KV
// heads, head_dim 128, batch 1) at several contexts: time per step (device events, median of many
// replays of a captured graph, cache copies rotated so that the data read is far larger than L2),
// bytes of cache read per step, achieved GB/s against a device-to-device copy measured in the same
// run. Besides attention calls back to back (graph, direct launches, and graph with programmatic
// dependent launch), it times a decode-step pair: the cache store of the new token's K row
// (kv_k8_store_run, the kernel that precedes attention in a step) followed by the attention, with
// and without PDL, and the store alone; and plain device copies of the same size (what a kernel's
// fixed cost weighs at that size). Not a test (not run by ctest; correctness is attn_gpu_test).
// Usage:
//   attn_gpu_bench [--ctx 1024,4096,...] [--reps N] [--mode f16|k8|k8v8] [--sweep] [--no-prefill] [--no-step]
//                  [--no-copy] [--stamps]   (stamps: with a library built with -DALAP_ATTN_DIAG=4, per-block phase times)
//                  [--stamp-dump N] (DIAG 4: every block's stamps and SM, N calls) [--gpc-map] (nvcc builds: SMs by GPC)
//   --sweep: forced split counts 8..32 at each --ctx (graph times)
//   --prefill-only: no decode timings; the prefill attention (k8, k8v8, f16) in three model geometries
//                   only, scalar kernels against the default (matrix-unit) dispatch
//   --no-scalar: the prefill timings of the default dispatch alone (to compare builds of it)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/ops.h"

namespace {

constexpr int kHeads = 32, kKvHeads = 8, kHeadDim = 128;
constexpr size_t kRotateBytes = size_t(4) * 60 * 1000 * 1000;  // 4× the H200's 60 MB L2

// Deterministic random bytes (xorshift64*), fast enough for gigabytes.
struct rng64 {
  uint64_t x;
  uint64_t next() {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return x * 0x2545F4914F6CDD1DULL;
  }
};

// Finite fp16 bits of magnitude in [2^-6, 2): sign, exponent 9..15, random mantissa.
uint16_t random_half(uint64_t r) {
  return static_cast<uint16_t>(((r & 1u) << 15) | ((9 + (r >> 1) % 7) << 10) | ((r >> 8) & 0x3ffu));
}

void fill_halves(std::vector<uint16_t>& v, uint64_t seed) {
  rng64 g{seed};
  for (auto& h : v) h = random_half(g.next());
}
void fill_bytes(std::vector<int8_t>& v, uint64_t seed) {
  rng64 g{seed};
  for (size_t i = 0; i < v.size(); i += 8) {
    const uint64_t r = g.next();
    for (size_t k = 0; k < 8 && i + k < v.size(); ++k) {
      const int8_t b = static_cast<int8_t>(r >> (8 * k));
      v[i + k] = b == -128 ? int8_t{127} : b;
    }
  }
}

template <class T>
T* to_device(const std::vector<T>& host) {
  T* ptr = nullptr;
  ALAP_GPU_CHECK(alap_gpu_malloc(&ptr, host.size() * sizeof(T)));
  ALAP_GPU_CHECK(alap_gpu_memcpy(ptr, host.data(), host.size() * sizeof(T), alap_gpu_memcpy_h2d));
  return ptr;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Median over `reps` timings of fn(stream) enqueued `per` times (ms per call). graph: captured once
// and replayed (no host launch cost); else direct launches.
template <class Fn>
double time_ms(alap_gpu_stream_t stream, int per, int reps, bool graph, Fn fn) {
  alap_gpu_event_t start, stop;
  ALAP_GPU_CHECK(alap_gpu_event_create(&start));
  ALAP_GPU_CHECK(alap_gpu_event_create(&stop));
  alap_gpu_graph_t g = nullptr;
  alap_gpu_graph_exec_t exec = nullptr;
  if (graph) {
    ALAP_GPU_CHECK(alap_gpu_stream_begin_capture(stream));
    for (int i = 0; i < per; ++i) fn(i);
    ALAP_GPU_CHECK(alap_gpu_stream_end_capture(stream, &g));
    ALAP_GPU_CHECK(alap_gpu_graph_instantiate(&exec, g));
  }
  const auto enqueue = [&] {
    if (graph) {
      ALAP_GPU_CHECK(alap_gpu_graph_launch(exec, stream));
    } else {
      for (int i = 0; i < per; ++i) fn(i);
    }
  };
  for (int w = 0; w < 3; ++w) enqueue();  // warm-up
  ALAP_GPU_CHECK(alap_gpu_stream_synchronize(stream));
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    ALAP_GPU_CHECK(alap_gpu_event_record(start, stream));
    enqueue();
    ALAP_GPU_CHECK(alap_gpu_event_record(stop, stream));
    ALAP_GPU_CHECK(alap_gpu_event_synchronize(stop));
    float ms = 0.0f;
    ALAP_GPU_CHECK(alap_gpu_event_elapsed_ms(&ms, start, stop));
    t.push_back(double(ms) / per);
  }
  ALAP_GPU_CHECK(alap_gpu_get_last_error());
  if (graph) {
    ALAP_GPU_CHECK(alap_gpu_graph_exec_destroy(exec));
    ALAP_GPU_CHECK(alap_gpu_graph_destroy(g));
  }
  ALAP_GPU_CHECK(alap_gpu_event_destroy(start));
  ALAP_GPU_CHECK(alap_gpu_event_destroy(stop));
  return median(t);
}

// Device-to-device copy bandwidth, counting bytes read plus bytes written.
double copy_gbps(alap_gpu_stream_t stream, int reps) {
  const size_t bytes = size_t(1) << 30;
  char *a = nullptr, *b = nullptr;
  ALAP_GPU_CHECK(alap_gpu_malloc(&a, bytes));
  ALAP_GPU_CHECK(alap_gpu_malloc(&b, bytes));
  ALAP_GPU_CHECK(alap_gpu_memset(a, 0x5a, bytes));
  const double ms = time_ms(stream, 1, reps, false, [&](int) {
    ALAP_GPU_CHECK(alap_gpu_memcpy_async(b, a, bytes, alap_gpu_memcpy_d2d, stream));
  });
  ALAP_GPU_CHECK(alap_gpu_free(a));
  ALAP_GPU_CHECK(alap_gpu_free(b));
  return 2.0 * bytes / (ms * 1e6);
}

enum mode_t_ { m_f16 = 0, m_k8 = 1, m_k8v8 = 2 };
const char* mode_name(int m) { return m == m_f16 ? "f16" : (m == m_k8 ? "k8" : "k8v8"); }

// Cache bytes a step reads at n_ctx: K (and its scales) and V (and its scales) of every KV head.
size_t step_bytes(int mode, int n_ctx) {
  const size_t vals = size_t(kKvHeads) * n_ctx * kHeadDim;
  const size_t k = mode == m_f16 ? 2 * vals : vals + vals / 32 * 2;
  const size_t v = mode == m_k8v8 ? vals + vals / 32 * 2 : 2 * vals;
  return k + v;
}

struct result {
  int mode, ctx, copies, n_split;
  double us_graph, us_stream, us_pdl;
  double us_store, us_step, us_step_pdl;  // store alone, store + attention, the same with PDL (0: not run)
  double us_copy, us_copy_half;           // same-size copies (bytes, bytes / 2), graph (0: not run)
  size_t bytes;
};

// Same-size copies: a graph of `per` device-to-device copies of `bytes` (rotated over as many
// buffers as the attention's cache copies, so that L2 does not hold them), µs per copy. A copy of
// the attention's bytes reads what the attention reads (and writes as much); one of half of them
// moves as many bytes in all (read + write), the measure of the large-copy bandwidth.
double same_size_copy_us(size_t bytes, int copies, int per, int reps, alap_gpu_stream_t stream) {
  char *src = nullptr, *dst = nullptr;
  ALAP_GPU_CHECK(alap_gpu_malloc(&src, bytes * copies));
  ALAP_GPU_CHECK(alap_gpu_malloc(&dst, bytes * copies));
  ALAP_GPU_CHECK(alap_gpu_memset(src, 0x5a, bytes * copies));
  ALAP_GPU_CHECK(alap_gpu_memset(dst, 0, bytes * copies));
  const double us = 1000.0 * time_ms(stream, per, reps, true, [&](int i) {
    const size_t off = size_t(i % copies) * bytes;
    ALAP_GPU_CHECK(alap_gpu_memcpy_async(dst + off, src + off, bytes, alap_gpu_memcpy_d2d, stream));
  });
  ALAP_GPU_CHECK(alap_gpu_free(src));
  ALAP_GPU_CHECK(alap_gpu_free(dst));
  return us;
}

// One cache copy of one mode (capacity = n_ctx) on the device.
struct cache_copy {
  void* k = nullptr;   // int8 or fp16 payload
  uint16_t* kd = nullptr;
  void* v = nullptr;
  uint16_t* vd = nullptr;
};

// --stamps: the %globaltimer stamps that a -DALAP_ATTN_DIAG=4 build leaves in the scratch
// (kAttnStampSlots per block, at the partial slots of splits 64..127 of the last query head) after the
// last call of a graph: per phase, min / median / max over the blocks of (stamp − earliest block start), µs.
constexpr int kStampBlocks = 32 * kHeadDim / alap::gpu::kAttnStampSlots;
std::vector<unsigned long long> read_stamps(const void* scratch) {
  std::vector<unsigned long long> st(size_t(kStampBlocks) * alap::gpu::kAttnStampSlots);
  const char* base = static_cast<const char*>(scratch) +
                     sizeof(float) * (size_t(kHeads - 1) * alap::gpu::kAttnMaxSplit + 64) * kHeadDim;
  ALAP_GPU_CHECK(alap_gpu_memcpy(st.data(), base, st.size() * sizeof(unsigned long long), alap_gpu_memcpy_d2h));
  return st;
}
void print_stamps(const void* scratch, int mode, int ctx) {
  constexpr int S = alap::gpu::kAttnStampSlots;
  const std::vector<unsigned long long> st = read_stamps(scratch);
  unsigned long long t0 = ~0ull;
  int n = 0;
  for (int b = 0; b < kStampBlocks; ++b)
    if (st[size_t(b) * S] != 0) {
      t0 = std::min(t0, st[size_t(b) * S]);
      ++n;
    }
  static const char* names[8] = {"start", "q ready", "1st tile", "warp0 done", "all done", "partials", "counted", "merged"};
  std::printf("stamps %-4s %6d (%d blocks; min/median/max us after the first start):", mode_name(mode), ctx, n);
  for (int i = 0; i < 8; ++i) {
    std::vector<double> v;
    for (int b = 0; b < kStampBlocks; ++b)
      if (st[size_t(b) * S] != 0 && st[size_t(b) * S + i] != 0) v.push_back(double(st[size_t(b) * S + i] - t0) / 1000.0);
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    std::printf(" | %s %.2f/%.2f/%.2f", names[i], v.front(), v[v.size() / 2], v.back());
  }
  std::printf("\n");
}

// --stamp-dump N (round 11, the SM map): N times, 4 calls back to back then the last one's stamps, one
// line per block: "sdump mode ctx call kv split sm start q first w0done alldone partials counted merged
// | the 8 warps' ends | warp 0 at 1/4, 1/2, 3/4 of its tiles" (µs after that call's earliest block start;
// -1 = not stamped).
void dump_stamps(const void* scratch, int mode, int ctx, int call) {
  constexpr int S = alap::gpu::kAttnStampSlots;
  const std::vector<unsigned long long> st = read_stamps(scratch);
  unsigned long long t0 = ~0ull;
  for (int b = 0; b < kStampBlocks; ++b)
    if (st[size_t(b) * S] != 0) t0 = std::min(t0, st[size_t(b) * S]);
  const auto us = [&](unsigned long long t) { return t == 0 ? -1.0 : double(t - t0) / 1000.0; };
  for (int b = 0; b < kStampBlocks; ++b) {
    const unsigned long long* s = st.data() + size_t(b) * S;
    if (s[0] == 0) continue;
    std::printf("sdump %s %d %d %d %d %d", mode_name(mode), ctx, call, b % kKvHeads, b / kKvHeads, int(s[8]) - 1);
    for (int i = 0; i < 8; ++i) std::printf(" %.3f", us(s[i]));
    std::printf(" |");
    for (int w = 0; w < 8; ++w) std::printf(" %.3f", us(s[10 + w]));
    std::printf(" | %.3f %.3f %.3f\n", us(s[18]), us(s[19]), us(s[20]));
  }
}

#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
// --gpc-map (round 11; nvcc builds only, the CMake build compiles this file as C++): which SMs share a
// GPC. A thread-block cluster always runs on one GPC, so each cluster of C blocks (one block an SM: 200 KB
// of shared memory each) names C SMs of one GPC; SMs that shared any cluster are joined (union-find) over
// full-device launches of C = 16, 12, 9, 8, 6, 5, 4, 3, 2. Limit: SMs that never shared a cluster stay
// apart, so a GPC may come out in pieces, but two GPCs never come out as one.
__global__ void gpc_probe_kernel(int* sm_of_block) {
  unsigned sm = 0;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(sm));
  if (threadIdx.x == 0) sm_of_block[blockIdx.x] = int(sm);
  const long long t0 = clock64();
  while (clock64() - t0 < 400000) {  // stay resident so the whole launch is one placement
  }
}

void gpc_map() {
  constexpr int kMaxSm = 1024;
  constexpr size_t kSmem = 200 * 1024;
  std::vector<int> parent(kMaxSm);
  for (int i = 0; i < kMaxSm; ++i) parent[i] = i;
  const auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<bool> seen(kMaxSm, false);
  ALAP_GPU_CHECK(cudaFuncSetAttribute(gpc_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSmem)));
  ALAP_GPU_CHECK(cudaFuncSetAttribute(gpc_probe_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int* d_sm = nullptr;
  ALAP_GPU_CHECK(cudaMalloc(&d_sm, sizeof(int) * 4096));
  for (const int c : {16, 12, 9, 8, 6, 5, 4, 3, 2}) {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = unsigned(c);
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(unsigned(c));
    cfg.blockDim = dim3(32);
    cfg.dynamicSmemBytes = kSmem;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int n_clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&n_clusters, gpc_probe_kernel, &cfg) != cudaSuccess || n_clusters <= 0) {
      (void)cudaGetLastError();
      std::printf("gpcmap C=%d: not launchable\n", c);
      continue;
    }
    cfg.gridDim = dim3(unsigned(n_clusters * c));
    ALAP_GPU_CHECK(cudaLaunchKernelEx(&cfg, gpc_probe_kernel, d_sm));
    ALAP_GPU_CHECK(cudaDeviceSynchronize());
    std::vector<int> sm(size_t(n_clusters) * c);
    ALAP_GPU_CHECK(cudaMemcpy(sm.data(), d_sm, sizeof(int) * sm.size(), cudaMemcpyDeviceToHost));
    std::printf("gpcmap C=%d: %d clusters:", c, n_clusters);
    for (int k = 0; k < n_clusters; ++k) {
      std::printf(" [");
      for (int j = 0; j < c; ++j) {
        const int x = sm[size_t(k) * c + j];
        if (x < 0 || x >= kMaxSm) continue;
        seen[x] = true;
        std::printf(j ? " %d" : "%d", x);
        const int r0 = find(sm[size_t(k) * c]), r1 = find(x);
        if (r0 >= 0 && r0 < kMaxSm) parent[r1] = r0;
      }
      std::printf("]");
    }
    std::printf("\n");
  }
  ALAP_GPU_CHECK(cudaFree(d_sm));
  std::vector<std::vector<int>> groups(kMaxSm);
  for (int i = 0; i < kMaxSm; ++i)
    if (seen[i]) groups[find(i)].push_back(i);
  int k = 0;
  for (const auto& gr : groups)
    if (!gr.empty()) {
      std::printf("gpc %d (%zu SMs):", k++, gr.size());
      for (const int x : gr) std::printf(" %d", x);
      std::printf("\n");
    }
}
#else
void gpc_map() { std::printf("gpcmap: not built (needs an nvcc build of this file)\n"); }
#endif

result bench_one(int mode, int ctx, int reps, int n_split, alap_gpu_stream_t stream, bool step, bool stamps,
                 bool same_copy, int stamp_dump) {
  const size_t vals = size_t(kKvHeads) * ctx * kHeadDim;
  const size_t per_copy = step_bytes(mode, ctx);
  const int copies = int(std::max<size_t>(2, (kRotateBytes + per_copy - 1) / per_copy));
  // Host data once, copied into every device copy (the rotation defeats L2, not the values).
  std::vector<uint16_t> h_half(vals), h_scales(vals / 32);
  std::vector<int8_t> h_bytes(vals);
  fill_halves(h_half, 1234 + ctx);
  fill_bytes(h_bytes, 99 + ctx);
  {
    rng64 g{7 + uint64_t(ctx)};
    for (auto& s : h_scales) s = static_cast<uint16_t>((8u << 10) | (g.next() & 0x3ffu));  // about 2^-7
  }
  std::vector<cache_copy> cc(copies);
  for (auto& c : cc) {
    if (mode == m_f16) {
      c.k = to_device(h_half);
    } else {
      c.k = to_device(h_bytes);
      c.kd = to_device(h_scales);
    }
    if (mode == m_k8v8) {
      c.v = to_device(h_bytes);
      c.vd = to_device(h_scales);
    } else {
      c.v = to_device(h_half);
    }
  }
  std::vector<float> h_q(size_t(kHeads) * kHeadDim);
  {
    rng64 g{42};
    for (auto& x : h_q) x = float(int(g.next() % 2001) - 1000) / 500.0f;
  }
  float* q = to_device(h_q);
  float* out = nullptr;
  ALAP_GPU_CHECK(alap_gpu_malloc(&out, h_q.size() * sizeof(float)));
  const size_t scratch_bytes = alap::gpu::attn_decode_scratch_bytes(kHeads, kHeadDim);
  void* scratch = nullptr;
  ALAP_GPU_CHECK(alap_gpu_malloc(reinterpret_cast<char**>(&scratch), scratch_bytes));
  ALAP_GPU_CHECK(alap_gpu_memset(scratch, 0, scratch_bytes));

  std::vector<alap::gpu::attn_decode_params> params(copies);
  for (int i = 0; i < copies; ++i) {
    alap::gpu::attn_decode_params& p = params[i];
    p = {};
    p.q = q;
    p.out = out;
    p.scratch = scratch;
    p.n_head = kHeads;
    p.n_kv_head = kKvHeads;
    p.head_dim = kHeadDim;
    p.capacity = ctx;
    p.n_ctx = ctx;
    p.n_split = n_split;
    p.scale = 1.0f / std::sqrt(float(kHeadDim));
    if (mode == m_f16) {
      p.k_f16 = static_cast<const uint16_t*>(cc[i].k);
    } else {
      p.k_q = static_cast<const int8_t*>(cc[i].k);
      p.k_d = cc[i].kd;
    }
    if (mode == m_k8v8) {
      p.v_q = static_cast<const int8_t*>(cc[i].v);
      p.v_d = cc[i].vd;
    } else {
      p.v = static_cast<const uint16_t*>(cc[i].v);
    }
  }
  const auto attend = [&](int i, unsigned flags) {
    const alap::gpu::attn_decode_params& p = params[i % copies];
    if (alap::gpu::attn_decode_run_ex(&p, mode, flags, stream) != 0) {
      std::fprintf(stderr, "error: %s\n", alap::gpu::gpu_error_message());
      std::exit(1);
    }
  };
  // The step's store: the new token's K row into row ctx − 1 of the copy about to be read (k8, k8v8)
  // or into a one-row packed buffer (f16, whose cache has no packed K; same kernel, same cost).
  std::vector<float> h_knew(size_t(kKvHeads) * kHeadDim, 0.5f);
  float* knew = to_device(h_knew);
  int8_t* dummy_q = nullptr;
  uint16_t* dummy_d = nullptr;
  ALAP_GPU_CHECK(alap_gpu_malloc(&dummy_q, size_t(kKvHeads) * kHeadDim));
  ALAP_GPU_CHECK(alap_gpu_malloc(&dummy_d, size_t(kKvHeads) * kHeadDim / 32 * 2));
  const auto store = [&](int i) {
    alap::gpu::kv_k8_store_params sp{knew, dummy_q, dummy_d, 1, kKvHeads, kHeadDim, 1, 0};
    if (mode != m_f16) {
      sp.k_q = static_cast<int8_t*>(cc[i % copies].k);
      sp.k_d = cc[i % copies].kd;
      sp.capacity = ctx;
      sp.pos0 = ctx - 1;
    }
    if (alap::gpu::kv_k8_store_run(&sp, stream) != 0) {
      std::fprintf(stderr, "error: %s\n", alap::gpu::gpu_error_message());
      std::exit(1);
    }
  };
  const int per = std::max(copies, 20);
  result r{};
  r.mode = mode;
  r.ctx = ctx;
  r.copies = copies;
  r.n_split = n_split;
  r.bytes = per_copy;
  r.us_graph = 1000.0 * time_ms(stream, per, reps, true, [&](int i) { attend(i, 0u); });
  if (stamps) print_stamps(scratch, mode, ctx);
  for (int c = 0; c < stamp_dump; ++c) {
    for (int k = 0; k < 4; ++k) attend(4 * c + k, 0u);
    ALAP_GPU_CHECK(alap_gpu_stream_synchronize(stream));
    dump_stamps(scratch, mode, ctx, c);
  }
  r.us_stream = 1000.0 * time_ms(stream, per, reps, false, [&](int i) { attend(i, 0u); });
  r.us_pdl = 1000.0 * time_ms(stream, per, reps, true, [&](int i) { attend(i, alap::gpu::kAttnLaunchPdl); });
  if (step) {
    r.us_store = 1000.0 * time_ms(stream, per, reps, true, store);
    r.us_step = 1000.0 * time_ms(stream, per, reps, true, [&](int i) {
      store(i);
      attend(i, 0u);
    });
    r.us_step_pdl = 1000.0 * time_ms(stream, per, reps, true, [&](int i) {
      store(i);
      attend(i, alap::gpu::kAttnLaunchPdl);
    });
  }
  ALAP_GPU_CHECK(alap_gpu_stream_synchronize(stream));
  ALAP_GPU_CHECK(alap_gpu_free(knew));
  ALAP_GPU_CHECK(alap_gpu_free(dummy_q));
  ALAP_GPU_CHECK(alap_gpu_free(dummy_d));
  for (auto& c : cc) {
    ALAP_GPU_CHECK(alap_gpu_free(c.k));
    ALAP_GPU_CHECK(alap_gpu_free(c.v));
    if (c.kd) ALAP_GPU_CHECK(alap_gpu_free(c.kd));
    if (c.vd) ALAP_GPU_CHECK(alap_gpu_free(c.vd));
  }
  ALAP_GPU_CHECK(alap_gpu_free(q));
  ALAP_GPU_CHECK(alap_gpu_free(out));
  ALAP_GPU_CHECK(alap_gpu_free(scratch));
  if (same_copy) {  // after the caches are freed: the copies need as much memory again
    r.us_copy = same_size_copy_us(per_copy, copies, per, reps, stream);
    r.us_copy_half = same_size_copy_us(per_copy / 2, copies, per, reps, stream);
  }
  return r;
}

// Prefill attention of n_q tokens after pos0 cached rows (f16: K and V fp16; k8: V fp16; k8v8: V
// int8 + scales), in a model's geometry; effective TFLOP/s of the causal QK and PV products
// (2·2·n_head·head_dim·n_q·(pos0 + (n_q + 1)/2) operations). Random cache contents (timing only). Each
// case is timed twice each way, alternating: the scalar kernels (ALAP_GPU_PREFILL_MMA=0) and the
// default dispatch (matrix units on CUDA at head_dim 64/128; ALAP_GPU_PREFILL_MMA as the bench was
// started with, e.g. 1/2/4 forcing the rows a block).
struct prefill_geometry {
  const char* name;
  int heads, kv_heads, head_dim;
};

// --no-scalar: time only the default dispatch (its two runs), for comparing builds of it.
bool g_prefill_scalar = true;

void bench_prefill(const prefill_geometry& geo, int n_q, int pos0, int mode, int reps, alap_gpu_stream_t stream) {
  const int capacity = pos0 + n_q;
  const bool packed_v = mode == 2;
  const size_t vals = size_t(geo.kv_heads) * capacity * geo.head_dim;
  std::vector<uint16_t> h_half(vals), h_scales(vals / 32, uint16_t(8u << 10));
  std::vector<int8_t> h_bytes(vals), h_vbytes(vals);
  fill_halves(h_half, 5);
  fill_bytes(h_bytes, 6);
  fill_bytes(h_vbytes, 7);
  std::vector<float> h_q(size_t(n_q) * geo.heads * geo.head_dim);
  rng64 g{43};
  for (auto& x : h_q) x = float(int(g.next() % 2001) - 1000) / 500.0f;
  int8_t* kq = mode != 0 ? to_device(h_bytes) : nullptr;
  int8_t* vq = packed_v ? to_device(h_vbytes) : nullptr;
  uint16_t* kd = mode != 0 ? to_device(h_scales) : nullptr;
  uint16_t* vd = packed_v ? to_device(h_scales) : nullptr;
  uint16_t* v = packed_v ? nullptr : to_device(h_half);
  uint16_t* kf = mode == 0 ? to_device(h_half) : nullptr;
  float* q = to_device(h_q);
  float* out = nullptr;
  ALAP_GPU_CHECK(alap_gpu_malloc(&out, h_q.size() * sizeof(float)));
  alap::gpu::attn_prefill_params p{};
  p.q = q;
  p.k_q = kq;
  p.k_d = kd;
  p.v = v;
  p.v_q = vq;
  p.v_d = vd;
  p.out = out;
  p.n_q = n_q;
  p.n_head = geo.heads;
  p.n_kv_head = geo.kv_heads;
  p.head_dim = geo.head_dim;
  p.capacity = capacity;
  p.pos0 = pos0;
  p.scale = 1.0f / std::sqrt(float(geo.head_dim));
  alap::gpu::attn_f16_prefill_params pf{q, kf, v, out, n_q, geo.heads, geo.kv_heads, geo.head_dim, capacity, pos0, p.scale};
  const double flops = 2.0 * 2.0 * geo.heads * geo.head_dim * double(n_q) * (pos0 + (n_q + 1) / 2.0);
  const char* env = std::getenv("ALAP_GPU_PREFILL_MMA");
  const std::string chosen = env != nullptr ? env : "";
  double best[2] = {1e30, 1e30};
  std::printf("prefill %-4s %-12s n_q=%5d pos0=%6d:", mode == 0 ? "f16" : packed_v ? "k8v8" : "k8", geo.name, n_q, pos0);
  for (int run = 0; run < 4; ++run) {
    const int k = run % 2;  // 0 scalar, 1 default
    if (k == 0 && !g_prefill_scalar) continue;
    if (k == 0) setenv("ALAP_GPU_PREFILL_MMA", "0", 1);
    else if (chosen.empty()) unsetenv("ALAP_GPU_PREFILL_MMA");
    else setenv("ALAP_GPU_PREFILL_MMA", chosen.c_str(), 1);
    const double ms = time_ms(stream, 1, reps, false, [&](int) {
      const int rc = mode == 0 ? alap::gpu::attn_f16_prefill_run(&pf, stream) : alap::gpu::attn_k8_prefill_run(&p, stream);
      if (rc != 0) {
        std::fprintf(stderr, "error: %s\n", alap::gpu::gpu_error_message());
        std::exit(1);
      }
    });
    best[k] = std::min(best[k], ms);
    std::printf(" %s %.1f", k == 0 ? "scalar" : "new", ms * 1e3);
  }
  if (g_prefill_scalar) {
    std::printf(" us | best scalar %.1f new %.1f us (%.2fx), new %.1f TFLOP/s effective (causal)\n", best[0] * 1e3,
                best[1] * 1e3, best[0] / best[1], flops / (best[1] * 1e9));
  } else {
    std::printf(" us | best scalar - new %.1f us, new %.1f TFLOP/s effective (causal)\n", best[1] * 1e3,
                flops / (best[1] * 1e9));
  }
  std::fflush(stdout);
  if (chosen.empty()) unsetenv("ALAP_GPU_PREFILL_MMA");
  else setenv("ALAP_GPU_PREFILL_MMA", chosen.c_str(), 1);
  for (void* ptr : {static_cast<void*>(kq), static_cast<void*>(vq), static_cast<void*>(kd), static_cast<void*>(vd),
                    static_cast<void*>(v), static_cast<void*>(kf), static_cast<void*>(q), static_cast<void*>(out)})
    if (ptr != nullptr) ALAP_GPU_CHECK(alap_gpu_free(ptr));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ctxs = {1024, 4096, 16384, 32768, 131072};
  int reps = 50;
  bool sweep = false, prefill = true, step = true, stamps = false, same_copy = true, gpc = false;
  int stamp_dump = 0;
  std::vector<int> modes = {m_f16, m_k8, m_k8v8};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ctx" && i + 1 < argc) {
      ctxs.clear();
      for (const char* s = argv[++i]; *s;) {
        ctxs.push_back(std::atoi(s));
        while (*s && *s != ',') ++s;
        if (*s == ',') ++s;
      }
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (a == "--sweep") {
      sweep = true;
    } else if (a == "--no-prefill") {
      prefill = false;
    } else if (a == "--no-scalar") {
      g_prefill_scalar = false;
    } else if (a == "--prefill-only") {
      ctxs.clear();
    } else if (a == "--no-step") {
      step = false;
    } else if (a == "--no-copy") {
      same_copy = false;
    } else if (a == "--stamps") {
      stamps = true;
    } else if (a == "--stamp-dump" && i + 1 < argc) {
      stamp_dump = std::atoi(argv[++i]);
    } else if (a == "--gpc-map") {
      gpc = true;
    } else if (a == "--mode" && i + 1 < argc) {
      const std::string m = argv[++i];
      modes = {m == "f16" ? m_f16 : (m == "k8" ? m_k8 : m_k8v8)};
    } else {
      std::fprintf(stderr,
                   "usage: attn_gpu_bench [--ctx N,N,...] [--reps N] [--mode f16|k8|k8v8] [--sweep] [--no-prefill] "
                   "[--prefill-only] [--no-scalar] [--no-step] [--no-copy] [--stamps] [--stamp-dump N] [--gpc-map]\n");
      return 2;
    }
  }
  try {
    alap_gpu_device_prop_t prop{};
    ALAP_GPU_CHECK(alap_gpu_get_device_properties(&prop, 0));
    alap_gpu_stream_t stream;
    ALAP_GPU_CHECK(alap_gpu_stream_create(&stream));
    std::printf("device: %s, %d multiprocessors, L2 %.0f MB\n", prop.name, prop.multiProcessorCount,
                prop.l2CacheSize / 1e6);
    if (gpc) gpc_map();
    const double copy = copy_gbps(stream, 20);
    std::printf("copy bandwidth (device-to-device, read+write): %.0f GB/s\n", copy);
    std::printf("geometry: %d query heads, %d KV heads, head_dim %d, batch 1; median of %d replays\n", kHeads,
                kKvHeads, kHeadDim, reps);
    std::printf("us/step: graph of attention calls back to back; us(launch): direct launches; us(pdl): graph, PDL;\n"
                "store/+attn/+attn pdl: graph of (K row store, attention) pairs, us per pair; attn in step = pair - store;\n"
                "cpy: graph of copies of MB/step bytes (us), attn/cpy = us/step over it; cpy/2: copies of half of them\n"
                "(as many bytes read + written as the attention reads), %%same = cpy/2 over us/step\n");
    std::printf("%-5s %7s %7s %10s %10s %8s %9s %8s %6s %7s %8s %10s %8s %8s %7s %8s %7s %6s\n", "mode", "ctx", "copies",
                "us/step", "us(launch)", "us(pdl)", "MB/step", "GB/s", "%copy", "store", "+attn", "+attn pdl", "attn",
                "attn pdl", "cpy", "attn/cpy", "cpy/2", "%same");
    std::vector<result> all;
    for (int ctx : ctxs)
      for (int mode : modes) {
        const result r = bench_one(mode, ctx, reps, 0, stream, step, stamps, same_copy, stamp_dump);
        const double gbps = r.bytes / (r.us_graph * 1e3);
        std::printf("%-5s %7d %7d %10.2f %10.2f %8.2f %9.2f %8.0f %5.1f%% %7.2f %8.2f %10.2f %8.2f %8.2f %7.2f %8.2f %7.2f "
                    "%5.1f%%\n",
                    mode_name(mode), ctx, r.copies, r.us_graph, r.us_stream, r.us_pdl, r.bytes / 1e6, gbps,
                    100.0 * gbps / copy, r.us_store, r.us_step, r.us_step_pdl, r.us_step - r.us_store,
                    r.us_step_pdl - r.us_store, r.us_copy, r.us_copy > 0 ? r.us_graph / r.us_copy : 0.0,
                    r.us_copy_half, 100.0 * r.us_copy_half / r.us_graph);
        std::fflush(stdout);
        all.push_back(r);
      }
    for (int ctx : ctxs) {
      double t[3] = {0, 0, 0}, tp[3] = {0, 0, 0}, ts[3] = {0, 0, 0}, tsp[3] = {0, 0, 0};
      for (const result& r : all)
        if (r.ctx == ctx) {
          t[r.mode] = r.us_graph;
          tp[r.mode] = r.us_pdl;
          ts[r.mode] = r.us_step - r.us_store;
          tsp[r.mode] = r.us_step_pdl - r.us_store;
        }
      std::printf("ctx %6d: k8 %.2fx faster than f16, k8v8 %.2fx (pdl: %.2fx, %.2fx; in step: %.2fx, %.2fx; in step, pdl: "
                  "%.2fx, %.2fx)\n",
                  ctx, t[0] / t[1], t[0] / t[2], tp[0] / tp[1], tp[0] / tp[2], ts[0] / ts[1], ts[0] / ts[2],
                  tsp[0] / tsp[1], tsp[0] / tsp[2]);
    }
    if (sweep) {
      std::printf("split sweep (us/step, graph):\n");
      for (int ctx : ctxs)
        for (int mode : modes)
          for (int ns : {8, 12, 16, 24, 32}) {
            const result r = bench_one(mode, ctx, reps, ns, stream, false, false, false, 0);
            const double gbps = r.bytes / (r.us_graph * 1e3);
            std::printf("  %-5s ctx %6d n_split %3d: %8.2f us  %6.0f GB/s\n", mode_name(mode), ctx, ns, r.us_graph, gbps);
          }
    }
    if (prefill) {
      // Llama-3-8B from position 0 and the last 2048-token chunk of a 32k prompt (the engine's chunk on
      // a large GPU); a 128-token chunk at the end of a 4k and a 32k prefill in Llama-3.2-1B (32 / 8
      // heads) and Qwen2.5-0.5B (14 / 2) geometry, head_dim 64.
      const prefill_geometry l8{"llama3-8b", kHeads, kKvHeads, kHeadDim}, l1{"llama3.2-1b", 32, 8, 64},
          q05{"qwen2.5-0.5b", 14, 2, 64};
      for (int mode : {1, 2, 0}) {
        bench_prefill(l8, 512, 0, mode, 10, stream);
        bench_prefill(l8, 4096, 0, mode, 5, stream);
        bench_prefill(l8, 2048, 32768 - 2048, mode, 3, stream);
        for (const prefill_geometry& geo : {l1, q05})
          for (int end : {4096, 32768}) bench_prefill(geo, 128, end - 128, mode, 20, stream);
      }
    }
    ALAP_GPU_CHECK(alap_gpu_stream_destroy(stream));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
