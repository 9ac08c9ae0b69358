// The forward pass on the GPU (through GpuBackend's op table): weights of the first N layers and
// their KV cache in device memory, the remaining layers on the CPU (Forward::run_from_hidden with
// a host KvCache of those layers only). Same contract as Forward::run; owns both caches. Not the
// kernels (kernels/gpu) and not the choice of backend (core/engine).
//
//   auto probe = alap::GpuBackend::probe();                       // backend or a reason
//   alap::GpuForwardOptions o;  o.n_gpu_layers = -1;  o.mode = alap::CacheMode::k8;  o.capacity = 4096;
//   alap::GpuForward fwd(model, probe.backend, o);                // throws ModelError if it does not fit
//   std::span<const float> logits = fwd.run(pool, prompt_ids, 0); // [n_vocab] on the host
//   logits = fwd.run(pool, std::span(&next, 1), fwd.n_tokens());
//   fwd.set_logits_top(40);                                       // decode steps: the 40 best only
//   fwd.run(pool, std::span(&next, 1), fwd.n_tokens());           // empty span; fwd.logits_top()
//
// A single-token step with every layer on the device is captured as a graph and replayed
// (gpu_graph_* of kernels/gpu/ops.h). Positions and the context length are kernel parameters, so
// each position has its own capture: the graph of the next position is captured (an executable
// updated in place) while the device runs this one, which hides its host cost. The first such
// step and any step where capture fails run as plain launches. Q/K/V and gate/up weights of a layer are stored
// back to back when their types match, so a decode step multiplies each pair/triple in one call.
//
// Device memory (one allocation each): weights (layers [0, N); token_embd, output, output_norm
// only when N = n_layer; rope_freqs), KV cache of N layers in the layouts of kernels/gpu/attn_k8.h
// (k8: int8 K + fp16 scales, fp16 V; k8v8: both packed; f16), scratch for max_batch tokens. All of
// it is compared with the device's free memory minus the headroom before anything is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/runtime/gpu_backend.h"
#include "core/runtime/gpu_blas_use.h"
#include "core/runtime/memory_report.h"
#include "core/sample/logits_top.h"

namespace alap {

struct GpuForwardOptions {
  int32_t n_gpu_layers = -1;  // -1: as many as fit (auto_gpu_layers); N > n_layer means all
  CacheMode mode = CacheMode::k8;
  size_t capacity = 4096;     // context, tokens
  size_t max_batch = 128;     // prefill chunk (tokens per pass)
  double headroom = 0.05;     // fraction of the device's total memory left free
  bool graphs = true;         // replay decode steps from a captured graph (ALAP_GPU_GRAPHS=0 also turns it off)
  bool pinned_logits = true;  // logits (and token ids) in page-locked host memory (ALAP_GPU_PINNED=0 also turns it off)
  bool logits_top = true;     // set_logits_top may take effect (ALAP_GPU_TOP=0 also turns it off)
  // Prefill products may take the vendor BLAS (gpu_matmul_blas) where the library has one; its
  // scratch is then part of the plan. Even when true, it is left out where its scratch would cost
  // a layer on the device (fit_gpu_layers) or make the asked-for layers not fit: a prompt may be
  // slower, but every decode step keeps its layers on the device.
  bool prefill_blas = true;
};

// Host-side cost of the single-token steps (every layer on the GPU), for benchmarks.
struct GpuStepStats {
  uint64_t decode_steps = 0;     // single-token steps run with every layer on the device
  uint64_t graph_steps = 0;      // of them, replayed from a captured graph
  uint64_t graph_captures = 0;   // captures (one a graph step, made while the previous one runs)
  uint64_t graph_updates = 0;    // of those, the executable updated in place (the rest instantiated)
  uint64_t blocking_captures = 0;  // of those, made just before their own launch (nothing to overlap)
  uint64_t calls_per_step = 0;   // library calls of the last such step (kernels and copies)
  double enqueue_us = 0;         // host time issuing the calls of the plain steps, all of them
  double capture_us = 0;         // host time issuing calls into captures, all captures
  double instantiate_us = 0;     // host time ending captures (update or instantiate), all captures
  double launch_us = 0;          // host time in gpu_graph_launch, all graph steps
  double step_us = 0;            // host time inside run(), all graph steps
  double before_launch_us = 0;   // of it, from run()'s entry to the graph's launch
  double wait_us = 0;            // of it, in the step's last synchronisation (the device's remaining work)
  std::string graphs_off;        // why graphs are not used ("" when they are)
  bool one_graph = false;        // a graph serves a range of positions (read on the device); else one a position
  bool logits_pinned = false;    // the logits land in page-locked host memory
};

// Bytes the GPU part takes for n_gpu_layers layers (exactly what the constructor allocates).
struct GpuMemoryPlan {
  int32_t n_gpu_layers = 0;
  uint64_t weights_bytes = 0;
  uint64_t kv_bytes = 0;
  uint64_t scratch_bytes = 0;
  uint64_t total() const { return weights_bytes + kv_bytes + scratch_bytes; }
};
// blas: with the scratch of the vendor BLAS for prefill products (0 bytes where the library has none).
GpuMemoryPlan plan_gpu_memory(const Model& model, const GpuBackend& gpu, int32_t n_gpu_layers, CacheMode mode,
                              size_t capacity, size_t max_batch, bool blas = true);

// Device memory the plan may use now: free − headroom·total.
uint64_t gpu_usable_bytes(const GpuBackend& gpu, double headroom);

// The most layers (0..n_layer) whose plan fits in `usable` bytes with this context.
int32_t auto_gpu_layers(const Model& model, const GpuBackend& gpu, CacheMode mode, size_t capacity,
                        size_t max_batch, uint64_t usable, bool blas = true);

// The most layers that fit, and whether the prefill BLAS comes with them: with it (blas_allowed)
// unless leaving its scratch out puts more layers on the device.
struct GpuLayerFit {
  int32_t layers = 0;
  bool blas = false;
};
GpuLayerFit fit_gpu_layers(const Model& model, const GpuBackend& gpu, CacheMode mode, size_t capacity, size_t max_batch,
                           uint64_t usable, bool blas_allowed = true);

// Why long prompts' products do (in_plan: its workspace is in the device plan) or do not take the
// vendor BLAS: allowed is GpuForwardOptions::prefill_blas, max_batch the prefill batch, n_cols any
// product's columns. name (may be null) gets the BLAS's name ("cuBLAS", "rocBLAS"; "" when the
// library has none). Asks the library: gpu_blas_status (which opens nothing), and where its BLAS is
// ready or unchecked but not in the plan, gpu_blas_scratch_bytes at max_batch (0: batches too short
// for it; else no memory), which then neither opens nor checks anything new.
GpuBlasUse prefill_blas_use(const GpuBackend& gpu, bool in_plan, bool allowed, size_t max_batch, int64_t n_cols,
                            std::string* name);

// Why this model cannot run on this backend at all (head_dim not a multiple of 32 or above 256,
// K and V head sizes differ, more than 16 query heads per KV head, a weight type the library
// cannot multiply); empty when it can.
std::string gpu_unsupported_reason(const Model& model, const GpuBackend& gpu);

class GpuForward {
 public:
  // Throws ModelError when the model cannot run on the GPU, or when the plan does not fit the
  // device's free memory (the message names the largest context that fits in each cache mode
  // with these layers, and how many layers fit this context); GpuError when a device call fails.
  GpuForward(const Model& model, std::shared_ptr<GpuBackend> backend, const GpuForwardOptions& options);
  ~GpuForward();
  GpuForward(const GpuForward&) = delete;
  GpuForward& operator=(const GpuForward&) = delete;

  // Forward::run's contract: tokens[0..n) at positions pos0.. (pos0 <= n_tokens(); the caches are
  // cut to pos0 first), logits of the last token (or of all, LogitsMode::all) on the host, valid
  // until the next call; on return n_tokens() == pos0 + n. `pool` runs the CPU layers.
  std::span<const float> run(ThreadPool& pool, std::span<const int32_t> tokens, size_t pos0,
                             LogitsMode mode = LogitsMode::last);

  // Decode steps send back the m best logits instead of the row (m <= kMaxLogitsTop; 0: the row
  // again): a single-token run() with every layer on the device then returns an empty span and
  // leaves them in logits_top(). The sampler draws from them exactly as from the row when m is
  // sampler_top_wanted or more (core/sample). Returns whether it takes effect: not with layers on
  // the CPU, m above the limit, or when turned off (GpuForwardOptions::logits_top, ALAP_GPU_TOP=0).
  // On the H200 machine this took ~0.1 ms off each token of a 150k-token vocabulary
  // (docs/bench/gpu.md "Session 19").
  static constexpr size_t kMaxLogitsTop = 256;
  bool set_logits_top(size_t m);
  // The last decode step's best logits, valid until the next run(); throws ModelError when that
  // run() returned the row.
  LogitsTop logits_top() const;

  size_t n_tokens() const { return n_tokens_; }
  // Benchmarks only: takes the first n cache positions as filled without computing them (their
  // rows hold zeros or stale values), so a decode step at depth n costs what it costs after a real
  // prefill of n tokens (attention reads every row either way). Every layer must be on the device.
  void assume_filled(size_t n);
  // Benchmarks only: replays the last decode step's graph n times back to back (the same position
  // and token again, so the cache and the results are unchanged) and returns the wall time of
  // each, µs: the device's time for a step without the host's part between steps. 0 when no step
  // has replayed a graph.
  double replay_last_step_us(int n);
  size_t capacity() const { return capacity_; }
  void clear();
  CacheMode mode() const { return mode_; }
  int32_t n_gpu_layers() const { return n_gpu_; }
  // Whether the plan holds the vendor BLAS's scratch (the library has one and it costs no layer):
  // long prompts' weight products may take it.
  bool prefill_blas() const { return blas_; }
  // Why it does or does not (the free function prefill_blas_use), and the BLAS's name ("cuBLAS").
  GpuBlasUse prefill_blas_use() const { return blas_use_; }
  const std::string& blas_name() const { return blas_name_; }
  size_t max_batch() const { return max_batch_; }
  const GpuMemoryPlan& plan() const { return plan_; }
  const GpuStepStats& step_stats() const;
  GpuBackend& backend() const { return *backend_; }

  // The report of DESIGN.md "Memory report": KV figures for the whole model (device and host
  // layers), weights_bytes = device-resident weights, device_* from the GPU runtime.
  MemoryReport memory_report() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<GpuBackend> backend_;
  CacheMode mode_;
  size_t capacity_ = 0, max_batch_ = 0, n_tokens_ = 0;
  int32_t n_gpu_ = 0;
  bool blas_ = false;
  GpuBlasUse blas_use_ = GpuBlasUse::none;
  std::string blas_name_;
  GpuMemoryPlan plan_;
};

}  // namespace alap
