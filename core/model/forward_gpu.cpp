// GpuForward: the llama-family forward pass of forward.cpp issued as device calls through the op
// table of GpuBackend (one stream; host round trips only for the token ids in, the logits or the
// sampler's best of them (set_logits_top) out and, with partial offload, the hidden state handed
// to the CPU layers). Every device buffer is laid out once by layout(), which is also the memory
// plan checked against the free memory first.
// Decode steps (one token, every layer on the device) replay captured graphs (Impl::decode_graph).
// One graph serves a range of positions: the token id and the position go to the device with one
// copy before the launch, and the RoPE + row-store kernel and attention read the position there,
// so a step only launches. A graph serves the positions whose attention splits are those of its
// capture (attn_decode_ctx_limit: ~2048 positions on an H200 for a Llama-3-8B geometry); the next
// range's graph is captured while the device runs the last step of the one before, in the other
// of two executables. Where a layer cannot take that kernel (q, k and v biases not all present),
// or under ALAP_GPU_ONE_GRAPH=0, the position is baked into the graph instead: the graph of
// position p+1 is captured while the device runs the one of p, in the same two executables.
#include "core/model/forward_gpu.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"
#include "core/runtime/kv_cache.h"
#include "core/runtime/memory_plan.h"

namespace alap {

namespace {

constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kAlign = 256;
constexpr size_t kLogitRows = 8;  // rows of logits computed per output pass (LogitsMode::all)

// Whether the environment turns a default-on feature off (`NAME=0`), for measuring.
bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == "0";
}

// Offsets (bytes) into the three device buffers; kNone = absent.
struct LayerOffsets {
  uint64_t wq = kNone, wk = kNone, wv = kNone, wo = kNone, gate = kNone, up = kNone, down = kNone;
  uint64_t attn_norm = kNone, ffn_norm = kNone, bq = kNone, bk = kNone, bv = kNone, bo = kNone;
  uint64_t q_norm = kNone, k_norm = kNone;
  uint64_t k_q = kNone, k_d = kNone, k_f16 = kNone, v = kNone, v_q = kNone, v_d = kNone;  // KV buffer
  // wk follows wq and wv follows wk with no gap, all of one type: one product gives [q | k | v];
  // likewise up after gate. bk, bv follow bq likewise (qkv_bias).
  bool qkv_fused = false, gate_up_fused = false, qkv_bias = false;
};

struct Layout {
  std::vector<LayerOffsets> layers;
  uint64_t token_embd = kNone, output = kNone, output_norm = kNone, output_bias = kNone, rope_freqs = kNone;
  uint64_t weights_bytes = 0, kv_bytes = 0, scratch_bytes = 0;
  // scratch
  // q: [n][H·D] then k [n][Hk·D] then v [n][Hk·D] (for n = 1 the fused product's [q | k | v]);
  // gate: [n][F] then up [n][F] likewise.
  uint64_t x = 0, a = 0, q = 0, o = 0, gate = 0, xq = 0, ids = 0, logits = 0, attn = 0;
  uint64_t top = kNone, top_out = kNone;  // gpu_logits_top's scratch and its [2 + 2·256] words (all layers)
  uint64_t blas = 0, blas_bytes = 0;      // gpu_matmul_blas's scratch (prefill; 0 bytes: no BLAS)
  size_t logit_rows = 1;
};

struct Packer {
  uint64_t end = 0;
  uint64_t add(uint64_t bytes) {
    const uint64_t at = (end + kAlign - 1) / kAlign * kAlign;
    end = at + bytes;
    return at;
  }
  uint64_t add_vec(const std::vector<float>& v) { return v.empty() ? kNone : add(v.size() * sizeof(float)); }
  // Right after the previous piece (the caller checked that `end` is 16-byte aligned).
  uint64_t add_next(uint64_t bytes) {
    const uint64_t at = end;
    end += bytes;
    return at;
  }
  uint64_t total() const { return (end + kAlign - 1) / kAlign * kAlign; }
};

Layout make_layout(const Model& model, const GpuBackend& gpu, int32_t n_gpu, CacheMode mode, size_t cap,
                   size_t max_batch, bool blas) {
  const ModelHParams& hp = model.hparams();
  const ModelWeights& w = model.weights();
  const size_t B = max_batch, E = hp.n_embd, H = hp.n_head, Hk = hp.n_head_kv, Dk = hp.head_dim_k,
               Dv = hp.head_dim_v, F = hp.n_ff, V = hp.n_vocab;
  Layout L;
  if (n_gpu <= 0) return L;
  const bool all = n_gpu == hp.n_layer;
  Packer wp;
  L.layers.resize(static_cast<size_t>(n_gpu));
  for (size_t l = 0; l < L.layers.size(); ++l) {
    const LayerWeights& lw = w.layers[l];
    LayerOffsets& o = L.layers[l];
    // Matrices of one type and width stored back to back (each piece a multiple of 16 bytes, so
    // every part stays 16-byte aligned) are multiplied in one call when a step has one token.
    auto joinable = [](const kernels::WeightView& a, const kernels::WeightView& b) {
      return a.type == b.type && a.n_cols == b.n_cols && kernels::matrix_bytes(a) % 16 == 0;
    };
    o.qkv_fused = joinable(lw.wq, lw.wk) && joinable(lw.wk, lw.wv);
    o.wq = wp.add(kernels::matrix_bytes(lw.wq));
    o.wk = o.qkv_fused ? wp.add_next(kernels::matrix_bytes(lw.wk)) : wp.add(kernels::matrix_bytes(lw.wk));
    o.wv = o.qkv_fused ? wp.add_next(kernels::matrix_bytes(lw.wv)) : wp.add(kernels::matrix_bytes(lw.wv));
    o.wo = wp.add(kernels::matrix_bytes(lw.wo));
    o.gate_up_fused = joinable(lw.w_gate, lw.w_up);
    o.gate = wp.add(kernels::matrix_bytes(lw.w_gate));
    o.up = o.gate_up_fused ? wp.add_next(kernels::matrix_bytes(lw.w_up)) : wp.add(kernels::matrix_bytes(lw.w_up));
    o.down = wp.add(kernels::matrix_bytes(lw.w_down));
    o.attn_norm = wp.add_vec(lw.attn_norm);
    o.ffn_norm = wp.add_vec(lw.ffn_norm);
    o.qkv_bias = !lw.bq.empty() && !lw.bk.empty() && !lw.bv.empty();
    o.bq = wp.add_vec(lw.bq);
    o.bk = o.qkv_bias ? wp.add_next(lw.bk.size() * sizeof(float)) : wp.add_vec(lw.bk);
    o.bv = o.qkv_bias ? wp.add_next(lw.bv.size() * sizeof(float)) : wp.add_vec(lw.bv);
    o.bo = wp.add_vec(lw.bo);
    o.q_norm = wp.add_vec(lw.q_norm);
    o.k_norm = wp.add_vec(lw.k_norm);
  }
  L.rope_freqs = wp.add_vec(w.rope_freqs);
  if (all) {
    L.token_embd = wp.add(kernels::matrix_bytes(w.token_embd));
    L.output = w.output.data == w.token_embd.data ? L.token_embd : wp.add(kernels::matrix_bytes(w.output));
    L.output_norm = wp.add_vec(w.output_norm);
    L.output_bias = wp.add_vec(w.output_bias);
  }
  L.weights_bytes = wp.total();

  // KV: per layer K payload, K scales, V payload, V scales (the normative struct of arrays).
  Packer kp;
  const bool kpk = mode != CacheMode::f16, vpk = mode == CacheMode::k8v8;
  for (LayerOffsets& o : L.layers) {
    if (kpk) {
      o.k_q = kp.add(uint64_t(Hk) * cap * Dk);
      o.k_d = kp.add(uint64_t(Hk) * cap * (Dk / 32) * 2);
    } else {
      o.k_f16 = kp.add(uint64_t(Hk) * cap * Dk * 2);
    }
    if (vpk) {
      o.v_q = kp.add(uint64_t(Hk) * cap * Dv);
      o.v_d = kp.add(uint64_t(Hk) * cap * (Dv / 32) * 2);
    } else {
      o.v = kp.add(uint64_t(Hk) * cap * Dv * 2);
    }
  }
  L.kv_bytes = kp.total();

  Packer sp;
  const size_t max_cols = std::max({E, F, H * Dv});
  L.logit_rows = all ? std::min(B, kLogitRows) : 0;
  L.x = sp.add(B * E * 4);
  L.a = sp.add(B * E * 4);
  L.q = sp.add(B * (H + Hk) * Dk * 4 + B * Hk * Dv * 4);  // q, k, v
  L.o = sp.add(B * H * Dv * 4);
  L.gate = sp.add(B * F * 4 * 2);  // gate, up
  L.xq = sp.add(max_cols % 32 == 0 ? gpu.ops().gpu_act_q8_bytes(static_cast<int>(B), static_cast<int>(max_cols)) : 0);
  L.ids = sp.add((B + 1) * 4);  // a decode step's id, then its position (read by a one-graph step)
  L.logits = sp.add(std::max<size_t>(L.logit_rows, 1) * V * 4);
  L.attn = sp.add(gpu.ops().attn_decode_scratch_bytes(static_cast<int>(H), static_cast<int>(Dk)));
  L.blas_bytes = blas ? gpu.ops().gpu_blas_scratch_bytes(static_cast<int>(B), static_cast<int>(max_cols)) : 0;
  L.blas = sp.add(L.blas_bytes);
  if (all) {
    L.top = sp.add(gpu.ops().gpu_logits_top_scratch_bytes(static_cast<int>(V)));
    L.top_out = sp.add((2 + 2 * GpuForward::kMaxLogitsTop) * 4);
  }
  L.scratch_bytes = sp.total();
  return L;
}

}  // namespace

GpuMemoryPlan plan_gpu_memory(const Model& model, const GpuBackend& gpu, int32_t n_gpu_layers, CacheMode mode,
                              size_t capacity, size_t max_batch, bool blas) {
  const int32_t n = std::clamp<int32_t>(n_gpu_layers, 0, static_cast<int32_t>(model.hparams().n_layer));
  const Layout L = make_layout(model, gpu, n, mode, capacity, max_batch, blas);
  GpuMemoryPlan p;
  p.n_gpu_layers = n;
  p.weights_bytes = L.weights_bytes;
  p.kv_bytes = L.kv_bytes;
  p.scratch_bytes = L.scratch_bytes;
  return p;
}

uint64_t gpu_usable_bytes(const GpuBackend& gpu, double headroom) {
  const GpuMemInfo m = gpu.mem();
  const uint64_t keep = static_cast<uint64_t>(static_cast<double>(m.total_bytes) * headroom);
  return m.free_bytes > keep ? m.free_bytes - keep : 0;
}

int32_t auto_gpu_layers(const Model& model, const GpuBackend& gpu, CacheMode mode, size_t capacity, size_t max_batch,
                        uint64_t usable, bool blas) {
  for (int32_t n = static_cast<int32_t>(model.hparams().n_layer); n > 0; --n) {
    if (plan_gpu_memory(model, gpu, n, mode, capacity, max_batch, blas).total() <= usable) return n;
  }
  return 0;
}

GpuLayerFit fit_gpu_layers(const Model& model, const GpuBackend& gpu, CacheMode mode, size_t capacity, size_t max_batch,
                           uint64_t usable, bool blas_allowed) {
  const int32_t without = auto_gpu_layers(model, gpu, mode, capacity, max_batch, usable, false);
  if (!blas_allowed || without == 0) return {without, false};
  const int32_t with = auto_gpu_layers(model, gpu, mode, capacity, max_batch, usable, true);
  return with >= without ? GpuLayerFit{with, true} : GpuLayerFit{without, false};
}

GpuBlasUse prefill_blas_use(const GpuBackend& gpu, bool in_plan, bool allowed, size_t max_batch, int64_t n_cols,
                            std::string* name) {
  const GpuBackend::BlasStatus st = gpu.blas_status();
  if (name != nullptr) *name = st.name;
  if (in_plan) return GpuBlasUse::used;
  if (!allowed) return GpuBlasUse::off;
  switch (st.state) {
    case gpu::gpu_blas_not_built: return GpuBlasUse::not_built;
    case gpu::gpu_blas_off: return GpuBlasUse::off;
    case gpu::gpu_blas_not_found: return GpuBlasUse::not_found;
    case gpu::gpu_blas_not_looked_for: return GpuBlasUse::short_batches;  // no plan asked: batches too short
    case gpu::gpu_blas_ready:
    case gpu::gpu_blas_unchecked:
      // The library asks for no workspace at this batch (it does not take products this short), or
      // the plan left its workspace out for the layers' sake.
      return gpu.ops().gpu_blas_scratch_bytes(static_cast<int>(max_batch), static_cast<int>(n_cols)) == 0
                 ? GpuBlasUse::short_batches
                 : GpuBlasUse::no_memory;
    default: return GpuBlasUse::unusable;  // incomplete, failed its check, refused a product
  }
}

std::string gpu_unsupported_reason(const Model& model, const GpuBackend& gpu) {
  const ModelHParams& hp = model.hparams();
  if (hp.head_dim_k != hp.head_dim_v) {
    return "K and V head sizes differ (" + std::to_string(hp.head_dim_k) + ", " + std::to_string(hp.head_dim_v) + ")";
  }
  if (hp.head_dim_k % 32 != 0 || hp.head_dim_k > gpu::kAttnMaxHeadDim) {
    return "head size " + std::to_string(hp.head_dim_k) + " is not a multiple of 32 up to " +
           std::to_string(gpu::kAttnMaxHeadDim);
  }
  if (hp.n_gqa() > gpu::kAttnMaxGroup) {
    return std::to_string(hp.n_gqa()) + " query heads per KV head (the GPU kernels take up to " +
           std::to_string(gpu::kAttnMaxGroup) + ")";
  }
  if (hp.n_rot % 2 != 0 || hp.n_rot > hp.head_dim_k) return "rotary dimension " + std::to_string(hp.n_rot);
  auto check = [&](const kernels::WeightView& w, const std::string& name) -> std::string {
    const uint32_t t = static_cast<uint32_t>(w.type);
    if (gpu.ops().gpu_matmul_supported(t) == 0) {
      const auto* info = kernels::dtype_info(t);
      return "the GPU library cannot multiply " + name + " weights of type " + (info ? info->name : std::to_string(t));
    }
    return {};
  };
  const ModelWeights& w = model.weights();
  if (auto r = check(w.token_embd, "token_embd"); !r.empty()) return r;
  if (auto r = check(w.output, "output"); !r.empty()) return r;
  for (const LayerWeights& l : w.layers) {
    for (const auto* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      if (auto r = check(*m, "layer"); !r.empty()) return r;
    }
  }
  return {};
}

// Host memory the device's results are copied into, or its inputs copied from: page-locked memory
// from the library when it gives it (a copy then runs at the bus's rate with no staging copy and,
// to the device, without waiting for the host: a 150k-token vocabulary's row took 18 µs against
// 80 µs from ordinary memory on the H200 machine, docs/bench/gpu.md "Session 18"), else ordinary
// memory. Page-locked up to `pinned_max` elements (a few rows: decode steps and LogitsMode::last;
// a step's token ids); every token's logits of a long prefill (LogitsMode::all, hundreds of MB for
// perplexity) go to ordinary memory rather than lock that much. Contents are not kept across
// reserve.
template <class T>
class HostRows {
 public:
  HostRows() = default;
  HostRows(const HostRows&) = delete;
  HostRows& operator=(const HostRows&) = delete;
  ~HostRows() {
    if (pinned_ != nullptr) ops_->gpu_host_release(pinned_);
  }
  void init(const GpuOps* ops, bool pinned, size_t pinned_max) {
    ops_ = ops;
    want_pinned_ = pinned;
    pinned_max_ = pinned_max;
  }
  void reserve(size_t n) {
    if (want_pinned_ && pinned_ == nullptr) {  // pinned_max elements, locked once
      void* p = nullptr;
      if (ops_->gpu_host_alloc(&p, pinned_max_ * sizeof(T)) == 0 && p != nullptr) {
        pinned_ = static_cast<T*>(p);
      } else {
        want_pinned_ = false;  // refused (a lock limit): ordinary memory from now on
      }
    }
    use_pinned_ = pinned_ != nullptr && n <= pinned_max_;
    if (!use_pinned_ && plain_.size() < n) plain_.resize(n);
  }
  T* data() { return use_pinned_ ? pinned_ : plain_.data(); }
  bool pinned() const { return use_pinned_; }

 private:
  const GpuOps* ops_ = nullptr;
  bool want_pinned_ = false, use_pinned_ = false;
  size_t pinned_max_ = 0;
  T* pinned_ = nullptr;
  std::vector<T> plain_;
};

struct GpuForward::Impl {
  const Model* model = nullptr;
  std::shared_ptr<GpuBackend> gpu;
  const GpuOps* ops = nullptr;
  Layout L;
  DeviceBuffer weights, kv, scratch;
  void* stream = nullptr;
  // CPU part (layers [n_gpu, n_layer)), absent when every layer is on the GPU.
  std::unique_ptr<KvCache> host_cache;
  std::unique_ptr<Forward> host_forward;
  std::vector<float> host_x;      // [B][E] hidden state handed over / embeddings
  HostRows<int32_t> host_ids;     // [n] the run's token ids (page-locked up to a chunk)
  HostRows<float> logits;         // [n_out][V]
  // The best logits of a decode step (set_logits_top): m, or 0 for the row; allowed at all; the
  // device's words [2 + 2m] land in top_host; top_ids / top_logits unpacked from them.
  size_t top_m = 0;
  bool top_allowed = true;
  // Decode attention is launched as a programmatic dependent of the kernel before it (the RoPE +
  // cache-row store), like every other kernel of the step, so its launch and its first tiles of the
  // older rows overlap that kernel (kAttnLaunchPdl; the library ignores it where PDL does not
  // exist). H200, a decode step replayed: 0.6-6.3% less device time at 1k-32k keys, never more
  // (docs/bench/gpu.md "Session 33"). ALAP_GPU_ATTN_PDL=0 launches it plainly, for measuring.
  bool attn_pdl = true;
  HostRows<int32_t> top_host;
  std::vector<int32_t> top_ids;
  std::vector<float> top_logits;
  int64_t top_first_nan = -1;
  bool top_ready = false;         // the last run() left top_* (and returned an empty span)
  // Decode graphs: two executables used in turn (one may run while the other is re-captured);
  // prepared_pos: the position execs[prepared_slot] was last captured for (npos: none).
  // one_graph: an executable reads the position from the device (pos_dev) and serves the steps
  // whose key count n_ctx lies in [range_lo, range_hi] of its slot (empty: not captured for the
  // current best-logits count).
  bool graphs = true;
  bool one_graph = false;
  size_t range_lo[2] = {1, 1}, range_hi[2] = {0, 0};
  const int32_t* pos_dev = nullptr;  // while capturing a one-graph step: where its position is
  size_t capture_hi = 0;             // the capture's range end (attn_decode_ctx_limit, all layers)
  void* execs[2] = {nullptr, nullptr};
  size_t prepared_pos = std::numeric_limits<size_t>::max();
  int prepared_slot = 0;
  int launched_slot = -1;  // the executable of the last graph step (replay_last_step_us)
  uint64_t calls = 0;  // library calls enqueued (ck counts them)
  GpuStepStats stats;

  ~Impl() {
    for (void* e : execs) {
      if (e != nullptr && ops != nullptr) ops->gpu_graph_destroy(e);
    }
    if (stream != nullptr && ops != nullptr) ops->gpu_stream_destroy(stream);
  }

  void ck(int rc, const char* what) {
    ++calls;
    gpu->check(rc, what);
  }
  void sync(const char* what) const { gpu->check(ops->gpu_stream_sync(stream), what); }
  template <class T>
  T* w(uint64_t off) const {
    return off == kNone ? nullptr : weights.as<T>(off);
  }
  template <class T>
  T* c(uint64_t off) const {
    return off == kNone ? nullptr : kv.as<T>(off);
  }
  template <class T>
  T* s(uint64_t off) const {
    return scratch.as<T>(off);
  }

  void upload(uint64_t off, const void* src, size_t bytes) {
    if (off == kNone || bytes == 0) return;
    ck(ops->gpu_copy_to_device(weights.as<void>(off), src, bytes, stream), "copying weights to the device");
  }
  void upload_vec(uint64_t off, const std::vector<float>& v) { upload(off, v.data(), v.size() * sizeof(float)); }

  // y = W·x for the n rows of x (xq quantised from x already when quantised types need it); `rows`
  // rows of W's type and width from offset off (several matrices stored back to back). Prefill
  // products go through gpu_matmul_blas, which takes the vendor BLAS when it pays (x is valid).
  void matmul(const kernels::WeightView& wv, uint64_t off, const float* x, const void* xq, int n, float* y, float beta,
              size_t rows = 0) {
    const auto t = static_cast<uint32_t>(wv.type);
    const int r = static_cast<int>(rows != 0 ? rows : wv.n_rows), c = static_cast<int>(wv.n_cols);
    if (n > 1 && L.blas_bytes != 0) {
      ck(ops->gpu_matmul_blas(t, w<void>(off), r, c, x, xq, n, y, beta, s<void>(L.blas), L.blas_bytes, stream),
         "matrix product");
    } else {
      ck(ops->gpu_matmul(t, w<void>(off), r, c, x, xq, n, y, beta, stream), "matrix product");
    }
  }
  // Whether a product of `ws` over rows of `cols` reads int8 activations (quantised types).
  static bool wants_q8(int cols, std::initializer_list<const kernels::WeightView*> ws) {
    bool needed = false;
    for (const kernels::WeightView* wv : ws) {
      needed = needed || kernels::dtype_info(static_cast<uint32_t>(wv->type))->block_elems != 1;
    }
    return needed && cols % 32 == 0;
  }
  // Quantises x [n][cols] into the shared activation buffer for the products of `ws` when one of
  // them reads int8 activations (quantised types); returns it, or null when none does.
  const void* quantize(const float* x, int n, int cols, std::initializer_list<const kernels::WeightView*> ws) {
    if (!wants_q8(cols, ws)) return nullptr;
    void* xq = s<void>(L.xq);
    ck(ops->gpu_quantize_act_q8(x, xq, n, cols, stream), "quantising activations");
    return xq;
  }
  // y = rms_norm(x)·wn, and y quantised for the products of `ws` in the same launch when they
  // need it; returns the quantised buffer or null.
  const void* norm(const float* x, const float* wn, float* y, int n, int cols,
                   std::initializer_list<const kernels::WeightView*> ws) {
    const float eps = model->hparams().rms_eps;
    if (!wants_q8(cols, ws)) {
      ck(ops->gpu_rms_norm(x, wn, y, cols, n, eps, stream), "rms norm");
      return nullptr;
    }
    void* xq = s<void>(L.xq);
    ck(ops->gpu_rms_norm_q8(x, wn, y, xq, cols, n, eps, stream), "rms norm");
    return xq;
  }

  void layer(size_t l, int n, size_t pos0, CacheMode mode, size_t cap);
  // Output head for rows [first, first + n_out) of x: logits [n_out][V] to host_out, or (host_out
  // null, n_out ≤ logit_rows) left in the logits scratch.
  void output_rows(int first, int n_out, float* host_out);
  // Embedding lookup of the m ids in the ids buffer, every layer, the last row's logits in scratch.
  void device_step(int m, size_t pos0, CacheMode mode, size_t cap);
  // With top_m > 0: the top_m best of the logits scratch's first row into top_out (gpu_logits_top).
  void logits_top();
  // top_host's words into top_ids, top_logits, top_first_nan (after the copy and the sync).
  void unpack_top();
  // Captures the decode step at position pos ahead (as decode_graph captures the next one) when
  // graphs are on and warm (a first decode step has run plainly) and it is not prepared already.
  void prepare_decode(size_t pos, CacheMode mode, size_t cap);
  // Captures the decode step at position pos into execs[slot] (updated in place, or instantiated).
  // False when the runtime cannot (graphs are then off for good; nothing was enqueued).
  bool capture(int slot, size_t pos, CacheMode mode, size_t cap);
  // The decode step at pos0 from a graph (captured now unless prepared by the previous step), then
  // the graph of pos0 + 1 captured while the device runs it. False when nothing was launched.
  bool decode_graph(size_t pos0, CacheMode mode, size_t cap);
  void graphs_off(const std::string& why) {
    graphs = false;
    stats.graphs_off = why;
    for (void*& e : execs) {
      if (e != nullptr) ops->gpu_graph_destroy(e);  // one in flight is freed when it completes
      e = nullptr;
    }
    prepared_pos = std::numeric_limits<size_t>::max();
    drop_ranges();
  }
  void drop_ranges() {
    for (int k = 0; k < 2; ++k) range_lo[k] = 1, range_hi[k] = 0;
  }
  // The executable that is not the one launched last (which may still run): the one to capture into.
  int idle_slot() const { return launched_slot == 0 ? 1 : 0; }
  // The one-graph slot whose range holds n keys, or -1.
  int slot_for(size_t n) const {
    for (int k = 0; k < 2; ++k) {
      if (range_lo[k] <= n && n <= range_hi[k]) return k;
    }
    return -1;
  }
  // Captures the step at position pos into slot (one-graph mode) and records the range it serves.
  bool capture_range(int slot, size_t pos, CacheMode mode, size_t cap) {
    range_lo[slot] = 1, range_hi[slot] = 0;
    if (!capture(slot, pos, mode, cap)) return false;
    range_lo[slot] = pos + 1;
    range_hi[slot] = capture_hi;
    return true;
  }
  // Whether layer o's single-token step is one RoPE + row-store launch (gpu_rope_store_1): q, k, v
  // back to back (always) and their biases all present or all absent.
  static bool rope_store_fused(const LayerOffsets& o) {
    return o.qkv_bias || (o.bq == kNone && o.bk == kNone && o.bv == kNone);
  }
};

void GpuForward::Impl::layer(size_t l, int n, size_t pos0, CacheMode mode, size_t cap) {
  const ModelHParams& hp = model->hparams();
  const LayerWeights& lw = model->weights().layers[l];
  const LayerOffsets& o = L.layers[l];
  const int E = static_cast<int>(hp.n_embd), H = static_cast<int>(hp.n_head), Hk = static_cast<int>(hp.n_head_kv);
  const int D = static_cast<int>(hp.head_dim_k), F = static_cast<int>(hp.n_ff), C = static_cast<int>(cap);
  const float eps = hp.rms_eps;
  const size_t nz = static_cast<size_t>(n);
  float *x = s<float>(L.x), *a = s<float>(L.a);
  // q [n][H·D], k [n][Hk·D], v [n][Hk·D] back to back: for one token, the fused product's [q | k | v].
  float* q = s<float>(L.q);
  float* k = q + nz * static_cast<size_t>(H * D);
  float* v = k + nz * static_cast<size_t>(Hk * D);
  float *att = s<float>(L.o), *gate = s<float>(L.gate);
  float* up = gate + nz * static_cast<size_t>(F);

  // Attention block: a = norm(x); q, k, v = W·a (+ bias); q/k norm (qwen3); RoPE; K/V into the cache.
  const void* aq = norm(x, w<float>(o.attn_norm), a, n, E, {&lw.wq, &lw.wk, &lw.wv});
  if (n == 1 && o.qkv_fused) {
    matmul(lw.wq, o.wq, a, aq, n, q, 0.0f, lw.wq.n_rows + lw.wk.n_rows + lw.wv.n_rows);
  } else {
    matmul(lw.wq, o.wq, a, aq, n, q, 0.0f);
    matmul(lw.wk, o.wk, a, aq, n, k, 0.0f);
    matmul(lw.wv, o.wv, a, aq, n, v, 0.0f);
  }
  const int neox = hp.rope_type == RopeType::neox ? 1 : 0;
  const float* ff = w<float>(L.rope_freqs);
  const int n_rot = static_cast<int>(hp.n_rot), p0 = static_cast<int>(pos0);
  if (n == 1 && rope_store_fused(o)) {
    // One token, [q | k | v] of H + 2·Hk heads: the bias over all, the q/k norms (qwen3), RoPE on
    // the first H + Hk, then K and V into the cache, in one launch; at the device's position when
    // captured for a range of positions (pos_dev).
    gpu::gpu_rope_store_params p{};
    p.x = q;
    p.bias = o.qkv_bias ? w<float>(o.bq) : nullptr;
    p.n_head = H;
    p.n_kv_head = Hk;
    p.head_dim = D;
    p.n_rot = n_rot;
    p.pos = p0;
    p.freq_base = hp.rope_freq_base;
    p.freq_scale = hp.rope_freq_scale;
    p.freq_factors = ff;
    p.neox = neox;
    p.capacity = C;
    p.q_norm = w<float>(o.q_norm);
    p.k_norm = w<float>(o.k_norm);
    p.norm_eps = eps;
    p.pos_dev = pos_dev;
    if (mode == CacheMode::f16) {
      p.k_f16 = c<uint16_t>(o.k_f16);
    } else {
      p.k_q = c<int8_t>(o.k_q);
      p.k_d = c<uint16_t>(o.k_d);
    }
    if (mode == CacheMode::k8v8) {
      p.v_q = c<int8_t>(o.v_q);
      p.v_d = c<uint16_t>(o.v_d);
    } else {
      p.v_f16 = c<uint16_t>(o.v);
    }
    ck(ops->gpu_rope_store_1(&p, stream), "bias, rope and cache store (q, k, v)");
  } else {
    if (o.bq != kNone) ck(ops->gpu_add_bias(q, w<float>(o.bq), H * D, n, stream), "q bias");
    if (o.bk != kNone) ck(ops->gpu_add_bias(k, w<float>(o.bk), Hk * D, n, stream), "k bias");
    if (o.bv != kNone) ck(ops->gpu_add_bias(v, w<float>(o.bv), Hk * D, n, stream), "v bias");
    if (o.q_norm != kNone) ck(ops->gpu_rms_norm(q, w<float>(o.q_norm), q, D, n * H, eps, stream), "q norm");
    if (o.k_norm != kNone) ck(ops->gpu_rms_norm(k, w<float>(o.k_norm), k, D, n * Hk, eps, stream), "k norm");
    if (n == 1) {  // one token: its K heads follow its Q heads, [H + Hk][D]
      ck(ops->gpu_rope(q, 1, H + Hk, D, n_rot, p0, hp.rope_freq_base, hp.rope_freq_scale, ff, neox, stream),
         "rope (q, k)");
    } else {
      ck(ops->gpu_rope(q, n, H, D, n_rot, p0, hp.rope_freq_base, hp.rope_freq_scale, ff, neox, stream), "rope (q)");
      ck(ops->gpu_rope(k, n, Hk, D, n_rot, p0, hp.rope_freq_base, hp.rope_freq_scale, ff, neox, stream), "rope (k)");
    }
    if (mode == CacheMode::f16) {
      ck(ops->gpu_kv_f16_store(k, c<uint16_t>(o.k_f16), n, Hk, D, C, p0, stream), "storing K");
    } else {
      gpu::kv_k8_store_params p{k, c<int8_t>(o.k_q), c<uint16_t>(o.k_d), n, Hk, D, C, p0};
      ck(ops->kv_k8_store_run(&p, stream), "storing packed K");
    }
    if (mode == CacheMode::k8v8) {
      gpu::kv_k8_store_params p{v, c<int8_t>(o.v_q), c<uint16_t>(o.v_d), n, Hk, D, C, p0};
      ck(ops->kv_k8_store_run(&p, stream), "storing packed V");
    } else {
      ck(ops->gpu_kv_f16_store(v, c<uint16_t>(o.v), n, Hk, D, C, p0, stream), "storing V");
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Decode with a packed cache (k8, k8v8): the attention writes att's int8 blocks for the Wo product
  // itself (out_q8, the bytes gpu_quantize_act_q8 would write), so no quantiser launch. Not with the
  // f16 cache: there the Wo product, launched as the attention's dependent, started during it and
  // the 8B step got 4-6% slower (H200, docs/bench/gpu.md "Session 5"). Prefill quantises after it.
  const void* att_q = nullptr;
  if (n == 1) {
    gpu::attn_decode_params p{};
    p.q = q;
    p.k_q = c<int8_t>(o.k_q);
    p.k_d = c<uint16_t>(o.k_d);
    p.k_f16 = c<uint16_t>(o.k_f16);
    p.v = c<uint16_t>(o.v);
    p.v_q = c<int8_t>(o.v_q);
    p.v_d = c<uint16_t>(o.v_d);
    p.out = att;
    p.scratch = s<void>(L.attn);
    p.n_head = H;
    p.n_kv_head = Hk;
    p.head_dim = D;
    p.capacity = C;
    p.n_ctx = static_cast<int>(pos0) + 1;
    p.pos_dev = pos_dev;  // one graph for a range of positions: the rows it attends are read on the device
    p.n_split = 0;
    p.scale = scale;
    if (mode != CacheMode::f16 && wants_q8(H * D, {&lw.wo})) att_q = p.out_q8 = s<void>(L.xq);
    // attn_decode_run_ex numbers the modes 0 (f16), 1 (k8), 2 (k8v8), as CacheMode does.
    static_assert(static_cast<int>(CacheMode::k8) == 1 && static_cast<int>(CacheMode::k8v8) == 2);
    if (pos_dev != nullptr) {  // the positions this capture serves
      const int hi = ops->attn_decode_ctx_limit(&p, static_cast<int>(mode));
      if (hi < 0) gpu->check(-1, "the range of a decode graph");
      capture_hi = std::min(capture_hi, static_cast<size_t>(hi));
    }
    const unsigned flags = attn_pdl ? gpu::kAttnLaunchPdl : 0u;
    ck(ops->attn_decode_run_ex(&p, static_cast<int>(mode), flags, stream), "attention (decode)");
  } else if (mode == CacheMode::f16) {
    gpu::attn_f16_prefill_params p{q, c<uint16_t>(o.k_f16), c<uint16_t>(o.v), att, n, H, Hk, D, C,
                                   static_cast<int>(pos0), scale};
    ck(ops->attn_f16_prefill_run(&p, stream), "attention (prefill, f16)");
  } else {
    gpu::attn_prefill_params p{};
    p.q = q;
    p.k_q = c<int8_t>(o.k_q);
    p.k_d = c<uint16_t>(o.k_d);
    p.v = c<uint16_t>(o.v);
    p.v_q = c<int8_t>(o.v_q);
    p.v_d = c<uint16_t>(o.v_d);
    p.out = att;
    p.n_q = n;
    p.n_head = H;
    p.n_kv_head = Hk;
    p.head_dim = D;
    p.capacity = C;
    p.pos0 = static_cast<int>(pos0);
    p.scale = scale;
    ck(ops->attn_k8_prefill_run(&p, stream), "attention (prefill)");
  }
  if (att_q == nullptr) att_q = quantize(att, n, H * D, {&lw.wo});

  // x += Wo·att, residual fused (beta = 1); with a bias x += (Wo·att + bo), the CPU's order.
  if (o.bo == kNone) {
    matmul(lw.wo, o.wo, att, att_q, n, x, 1.0f);
  } else {
    matmul(lw.wo, o.wo, att, att_q, n, a, 0.0f);
    ck(ops->gpu_add_bias(a, w<float>(o.bo), E, n, stream), "attention output bias");
    ck(ops->gpu_add(x, a, x, nz * static_cast<size_t>(E), stream), "residual");
  }
  // FFN: x += W_down·(silu(W_gate·a) ⊙ W_up·a), a = norm(x).
  const void* fq = norm(x, w<float>(o.ffn_norm), a, n, E, {&lw.w_gate, &lw.w_up});
  if (n == 1 && o.gate_up_fused) {
    matmul(lw.w_gate, o.gate, a, fq, n, gate, 0.0f, lw.w_gate.n_rows + lw.w_up.n_rows);  // [gate | up]
  } else {
    matmul(lw.w_gate, o.gate, a, fq, n, gate, 0.0f);
    matmul(lw.w_up, o.up, a, fq, n, up, 0.0f);
  }
  const void* dq = nullptr;
  if (wants_q8(F, {&lw.w_down})) {
    dq = s<void>(L.xq);
    ck(ops->gpu_swiglu_q8(gate, up, gate, s<void>(L.xq), F, n, stream), "swiglu");
  } else {
    ck(ops->gpu_swiglu(gate, up, gate, nz * static_cast<size_t>(F), stream), "swiglu");
  }
  matmul(lw.w_down, o.down, gate, dq, n, x, 1.0f);
}

void GpuForward::Impl::output_rows(int first, int n_out, float* host_out) {
  const ModelHParams& hp = model->hparams();
  const ModelWeights& mw = model->weights();
  const int E = static_cast<int>(hp.n_embd);
  const size_t V = hp.n_vocab;
  float* x = s<float>(L.x);
  float* a = s<float>(L.a);
  float* lg = s<float>(L.logits);
  for (int r = 0; r < n_out; r += static_cast<int>(L.logit_rows)) {
    const int m = std::min(static_cast<int>(L.logit_rows), n_out - r);
    const void* aq = norm(x + static_cast<size_t>(first + r) * E, w<float>(L.output_norm), a, m, E, {&mw.output});
    matmul(mw.output, L.output, a, aq, m, lg, 0.0f);
    if (L.output_bias != kNone) ck(ops->gpu_add_bias(lg, w<float>(L.output_bias), static_cast<int>(V), m, stream), "output bias");
    if (host_out == nullptr) continue;
    ck(ops->gpu_copy_to_host(host_out + static_cast<size_t>(r) * V, lg, static_cast<size_t>(m) * V * sizeof(float), stream),
       "copying logits to the host");
  }
}

void GpuForward::Impl::logits_top() {
  if (top_m == 0) return;
  ck(ops->gpu_logits_top(s<float>(L.logits), static_cast<int>(model->hparams().n_vocab), static_cast<int>(top_m),
                         s<int32_t>(L.top_out), s<void>(L.top), stream),
     "the best logits");
}

void GpuForward::Impl::unpack_top() {
  const size_t V = model->hparams().n_vocab;
  const int32_t* w = top_host.data();  // [first NaN, count, ids [top_m], logits' bits [top_m]]
  const size_t count = static_cast<size_t>(w[1]);
  if (count != std::min(top_m, V)) {
    throw GpuError("GPU forward pass: the best logits came back with " + std::to_string(count) + " entries, not " +
                   std::to_string(std::min(top_m, V)));
  }
  top_first_nan = w[0];
  top_ids.assign(w + 2, w + 2 + count);
  top_logits.resize(count);
  std::memcpy(top_logits.data(), w + 2 + top_m, count * sizeof(float));
  top_ready = true;
}

void GpuForward::Impl::device_step(int m, size_t pos0, CacheMode mode, size_t cap) {
  const ModelWeights& mw = model->weights();
  ck(ops->gpu_get_rows(static_cast<uint32_t>(mw.token_embd.type), w<void>(L.token_embd),
                       static_cast<int>(mw.token_embd.n_rows), static_cast<int>(model->hparams().n_embd),
                       s<int32_t>(L.ids), m, s<float>(L.x), stream),
     "embedding lookup");
  for (size_t l = 0; l < L.layers.size(); ++l) layer(l, m, pos0, mode, cap);
}

bool GpuForward::Impl::capture(int slot, size_t pos, CacheMode mode, size_t cap) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  if (ops->gpu_graph_capture_begin(stream) != 0) {
    graphs_off(std::string("capture does not start: ") + ops->gpu_error_message());
    return false;
  }
  const uint64_t calls0 = calls;
  std::string failed;
  // One graph for a range of positions: the kernels that depend on it read it from the ids buffer's
  // slot after the id (run() copies both before each launch).
  pos_dev = one_graph ? s<int32_t>(L.ids) + 1 : nullptr;
  capture_hi = cap;
  try {
    device_step(1, pos, mode, cap);
    output_rows(0, 1, nullptr);
    logits_top();
  } catch (const GpuError& e) {
    failed = e.what();  // the capture is spoiled; end it below (the step then runs plainly)
  }
  pos_dev = nullptr;
  const uint64_t step_calls = calls - calls0;
  const auto t1 = Clock::now();
  int updated = 0;
  const int rc = ops->gpu_graph_capture_end(stream, &execs[slot], &updated);
  if (rc != 0 || !failed.empty()) {
    graphs_off(!failed.empty() ? failed : std::string("capture fails: ") + ops->gpu_error_message());
    return false;
  }
  auto us = [](Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
  stats.capture_us += us(t1 - t0);
  stats.instantiate_us += us(Clock::now() - t1);
  stats.graph_captures += 1;
  stats.graph_updates += updated != 0 ? 1 : 0;
  stats.calls_per_step = step_calls + 3;  // + the ids in, the graph launch, the logits out
  return true;
}

void GpuForward::Impl::prepare_decode(size_t pos, CacheMode mode, size_t cap) {
  if (!graphs || stats.decode_steps == 0 || pos >= cap) return;
  if (one_graph) {
    if (slot_for(pos + 1) < 0) capture_range(idle_slot(), pos, mode, cap);
    return;
  }
  if (prepared_pos == pos) return;
  prepared_pos = std::numeric_limits<size_t>::max();
  if (capture(prepared_slot, pos, mode, cap)) prepared_pos = pos;
}

bool GpuForward::Impl::decode_graph(size_t pos0, CacheMode mode, size_t cap) {
  // The executable for this step: the one whose range holds it (one graph a range), or the one
  // prepared for this position; else captured now, never into the one that may still run.
  int slot = one_graph ? slot_for(pos0 + 1) : (prepared_pos == pos0 ? prepared_slot : -1);
  if (slot < 0) {
    slot = one_graph ? idle_slot() : 0;
    if (!(one_graph ? capture_range(slot, pos0, mode, cap) : capture(slot, pos0, mode, cap))) return false;
    stats.blocking_captures += 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (ops->gpu_graph_launch(execs[slot], stream) != 0) {
    graphs_off(std::string("graph launch fails: ") + ops->gpu_error_message());
    return false;
  }
  stats.launch_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  stats.graph_steps += 1;
  launched_slot = slot;
  // The next step's graph, captured while the device runs this one: one graph a range, only when
  // the next step leaves this range; else every step.
  if (one_graph) {
    if (pos0 + 1 < cap && pos0 + 2 > range_hi[slot] && slot_for(pos0 + 2) < 0) {
      capture_range(1 - slot, pos0 + 1, mode, cap);
    }
    return true;
  }
  prepared_pos = std::numeric_limits<size_t>::max();
  if (pos0 + 1 < cap && capture(1 - slot, pos0 + 1, mode, cap)) {
    prepared_pos = pos0 + 1;
    prepared_slot = 1 - slot;
  }
  return true;
}

GpuForward::GpuForward(const Model& model, std::shared_ptr<GpuBackend> backend, const GpuForwardOptions& options)
    : impl_(std::make_unique<Impl>()), backend_(std::move(backend)), mode_(options.mode) {
  if (!backend_) throw ModelError("GPU forward pass: no GPU backend");
  const ModelHParams& hp = model.hparams();
  const std::string why = gpu_unsupported_reason(model, *backend_);
  if (!why.empty()) throw ModelError("this model cannot run on the GPU: " + why);
  KvShape shape{hp.n_layer, hp.n_head_kv, hp.head_dim_k, hp.head_dim_v};
  std::string why_mode;
  if (!packed_mode_supported(shape, mode_, &why_mode)) {
    throw ModelError(std::string("cache mode ") + cache_mode_name(mode_) + " is not possible: " + why_mode);
  }
  capacity_ = options.capacity;
  max_batch_ = std::max<size_t>(1, std::min(options.max_batch, std::max<size_t>(1, capacity_)));
  if (capacity_ == 0) throw ModelError("GPU forward pass: the context is 0 tokens");
  const int32_t n_layer = static_cast<int32_t>(hp.n_layer);
  const uint64_t usable = gpu_usable_bytes(*backend_, options.headroom);
  if (options.n_gpu_layers < 0) {
    const GpuLayerFit fit = fit_gpu_layers(model, *backend_, mode_, capacity_, max_batch_, usable, options.prefill_blas);
    n_gpu_ = fit.layers;
    blas_ = fit.blas;
  } else {
    n_gpu_ = std::min(options.n_gpu_layers, n_layer);
    // The BLAS's scratch only where the asked-for layers fit with it (where they do not fit at
    // all, the error below gives the figures without it).
    blas_ = options.prefill_blas &&
            plan_gpu_memory(model, *backend_, n_gpu_, mode_, capacity_, max_batch_, true).total() <= usable;
  }
  if (n_gpu_ <= 0) {
    throw ModelError("GPU: " + backend_->device_name() + " has " + format_bytes(usable) +
                     " usable (free memory less " + std::to_string(static_cast<int>(options.headroom * 100 + 0.5)) +
                     "% of the total kept free); not one layer fits beside a context of " +
                     std::to_string(capacity_) + " tokens in " + cache_mode_name(mode_));
  }
  plan_ = plan_gpu_memory(model, *backend_, n_gpu_, mode_, capacity_, max_batch_, blas_);
  if (plan_.total() > usable) {
    // The largest context that fits with these layers in each mode, and the layers that fit this one.
    const uint64_t fixed = plan_.weights_bytes + plan_.scratch_bytes;
    const uint64_t room = usable > fixed ? usable - fixed : 0;
    const KvShape gpu_shape{n_gpu_, hp.n_head_kv, hp.head_dim_k, hp.head_dim_v};
    std::string fits;
    for (CacheMode m : {CacheMode::f16, CacheMode::k8, CacheMode::k8v8}) {
      if (!packed_mode_supported(gpu_shape, m, nullptr)) continue;
      const uint64_t per_token = kv_cache_bytes(gpu_shape, m, 1).total;
      const uint64_t tokens = per_token > 0 ? (room / per_token) / 256 * 256 : 0;
      fits += std::string(fits.empty() ? "" : ", ") + cache_mode_name(m) + " " + std::to_string(tokens);
    }
    const int32_t fit_layers = auto_gpu_layers(model, *backend_, mode_, capacity_, max_batch_, usable, false);
    throw ModelError("GPU: " + std::to_string(n_gpu_) + " layers with a context of " + std::to_string(capacity_) +
                     " tokens in " + cache_mode_name(mode_) + " need " + format_bytes(plan_.total()) + " of " +
                     backend_->device_name() + "'s memory (weights " + format_bytes(plan_.weights_bytes) + ", cache " +
                     format_bytes(plan_.kv_bytes) + "), but " + format_bytes(usable) +
                     " is usable; with these layers the largest context that fits is (tokens) " + fits +
                     (fit_layers > 0 ? "; or use fewer GPU layers (" + std::to_string(fit_layers) + " fit this context)"
                                     : "; not one GPU layer fits this context: use a smaller one or the CPU"));
  }

  Impl& s = *impl_;
  s.model = &model;
  s.gpu = backend_;
  s.ops = &backend_->ops();
  s.L = make_layout(model, *backend_, n_gpu_, mode_, capacity_, max_batch_, blas_);
  blas_ = blas_ && s.L.blas_bytes != 0;  // the library has a BLAS (that passed its check)
  blas_use_ = alap::prefill_blas_use(*backend_, blas_, options.prefill_blas, max_batch_, hp.n_embd, &blas_name_);
  s.ck(s.ops->gpu_stream_create(&s.stream), "creating a stream");
  s.weights = DeviceBuffer(backend_, s.L.weights_bytes, "weights");
  s.kv = DeviceBuffer(backend_, s.L.kv_bytes, "KV cache");
  s.scratch = DeviceBuffer(backend_, s.L.scratch_bytes, "scratch");
  s.ck(s.ops->gpu_fill_zero(s.kv.get(), s.kv.bytes(), s.stream), "clearing the KV cache");
  s.ck(s.ops->gpu_fill_zero(s.scratch.get(), s.scratch.bytes(), s.stream), "clearing scratch");

  const ModelWeights& mw = model.weights();
  for (size_t l = 0; l < s.L.layers.size(); ++l) {
    const LayerWeights& lw = mw.layers[l];
    const LayerOffsets& o = s.L.layers[l];
    s.upload(o.wq, lw.wq.data, kernels::matrix_bytes(lw.wq));
    s.upload(o.wk, lw.wk.data, kernels::matrix_bytes(lw.wk));
    s.upload(o.wv, lw.wv.data, kernels::matrix_bytes(lw.wv));
    s.upload(o.wo, lw.wo.data, kernels::matrix_bytes(lw.wo));
    s.upload(o.gate, lw.w_gate.data, kernels::matrix_bytes(lw.w_gate));
    s.upload(o.up, lw.w_up.data, kernels::matrix_bytes(lw.w_up));
    s.upload(o.down, lw.w_down.data, kernels::matrix_bytes(lw.w_down));
    s.upload_vec(o.attn_norm, lw.attn_norm);
    s.upload_vec(o.ffn_norm, lw.ffn_norm);
    s.upload_vec(o.bq, lw.bq);
    s.upload_vec(o.bk, lw.bk);
    s.upload_vec(o.bv, lw.bv);
    s.upload_vec(o.bo, lw.bo);
    s.upload_vec(o.q_norm, lw.q_norm);
    s.upload_vec(o.k_norm, lw.k_norm);
  }
  s.upload_vec(s.L.rope_freqs, mw.rope_freqs);
  if (n_gpu_ == n_layer) {
    s.upload(s.L.token_embd, mw.token_embd.data, kernels::matrix_bytes(mw.token_embd));
    if (s.L.output != s.L.token_embd) s.upload(s.L.output, mw.output.data, kernels::matrix_bytes(mw.output));
    s.upload_vec(s.L.output_norm, mw.output_norm);
    s.upload_vec(s.L.output_bias, mw.output_bias);
  } else {
    KvCacheConfig hc = kv_cache_config(model, mode_, capacity_);
    hc.n_layer = static_cast<size_t>(n_layer - n_gpu_);
    s.host_cache = std::make_unique<KvCache>(hc);
    s.host_forward = std::make_unique<Forward>(model, max_batch_);
  }
  s.host_x.resize(max_batch_ * static_cast<size_t>(hp.n_embd));
  s.logits.init(s.ops, options.pinned_logits && !env_off("ALAP_GPU_PINNED"),
                kLogitRows * static_cast<size_t>(hp.n_vocab));
  s.logits.reserve(static_cast<size_t>(hp.n_vocab));
  s.stats.logits_pinned = s.logits.pinned();
  // A chunk's ids (a decode step's id and position), page-locked with the logits.
  s.host_ids.init(s.ops, s.logits.pinned(), max_batch_ + 1);
  s.host_ids.reserve(max_batch_ + 1);
  s.attn_pdl = !env_off("ALAP_GPU_ATTN_PDL");
  s.top_allowed = options.logits_top && !env_off("ALAP_GPU_TOP") && n_gpu_ == n_layer;
  if (s.top_allowed) {
    s.top_host.init(s.ops, s.logits.pinned(), 2 + 2 * kMaxLogitsTop);
    s.top_host.reserve(2 + 2 * kMaxLogitsTop);
  }
  s.sync("uploading the weights");
  if (!options.graphs) s.graphs_off("turned off by the caller");
  else if (env_off("ALAP_GPU_GRAPHS")) s.graphs_off("turned off (ALAP_GPU_GRAPHS=0)");
  else if (n_gpu_ != n_layer) s.graphs_off("layers run on the CPU");
  s.one_graph = s.graphs && !env_off("ALAP_GPU_ONE_GRAPH") &&
                std::all_of(s.L.layers.begin(), s.L.layers.end(),
                            [](const LayerOffsets& o) { return Impl::rope_store_fused(o); });
  s.stats.one_graph = s.one_graph;
}

const GpuStepStats& GpuForward::step_stats() const { return impl_->stats; }

double GpuForward::replay_last_step_us(int n) {
  Impl& s = *impl_;
  if (s.launched_slot < 0 || s.execs[s.launched_slot] == nullptr || n <= 0) return 0.0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    s.gpu->check(s.ops->gpu_graph_launch(s.execs[s.launched_slot], s.stream), "replaying a decode step");
  }
  s.sync("replaying a decode step");
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / n;
}

bool GpuForward::set_logits_top(size_t m) {
  Impl& s = *impl_;
  if (m > kMaxLogitsTop || !s.top_allowed) m = 0;
  if (m != s.top_m) {  // a prepared graph has the old m
    s.prepared_pos = std::numeric_limits<size_t>::max();
    s.drop_ranges();
  }
  s.top_m = m;
  return m > 0;
}

LogitsTop GpuForward::logits_top() const {
  const Impl& s = *impl_;
  if (!s.top_ready) throw ModelError("GPU forward pass: the last step left the logits row, not its best entries");
  return LogitsTop{s.top_ids, s.top_logits, static_cast<size_t>(s.model->hparams().n_vocab), s.top_first_nan};
}

void GpuForward::assume_filled(size_t n) {
  if (n > capacity_) throw ModelError("assume_filled: " + std::to_string(n) + " tokens exceed the context");
  if (impl_->host_forward) throw ModelError("assume_filled: layers run on the CPU");
  n_tokens_ = n;
}

GpuForward::~GpuForward() = default;

void GpuForward::clear() {
  n_tokens_ = 0;
  if (impl_->host_cache) impl_->host_cache->clear();
}

std::span<const float> GpuForward::run(ThreadPool& pool, std::span<const int32_t> tokens, size_t pos0, LogitsMode mode) {
  using Clock = std::chrono::steady_clock;
  const auto t_entry = Clock::now();
  const auto us = [](Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
  Impl& s = *impl_;
  const ModelHParams& hp = s.model->hparams();
  const size_t n = tokens.size(), V = hp.n_vocab, E = hp.n_embd;
  if (n == 0) throw ModelError("forward: empty batch");
  if (pos0 > n_tokens_) throw ModelError("forward: position " + std::to_string(pos0) + " leaves a gap in the cache");
  if (pos0 + n > capacity_) throw ModelError("forward: the KV cache is full (" + std::to_string(capacity_) + " tokens)");
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<size_t>(t) >= V) throw ModelError("forward: token id " + std::to_string(t) + " is outside the vocabulary");
  }
  const bool all = mode == LogitsMode::all;
  const bool all_gpu = !s.host_forward;
  s.top_ready = false;
  s.logits.reserve((all ? n : 1) * V);
  s.stats.logits_pinned = s.logits.pinned();
  // The caches are cut to pos0; from here a failure leaves them holding pos0 tokens.
  n_tokens_ = pos0;
  if (s.host_cache) s.host_cache->truncate(pos0);
  const ModelWeights& mw = s.model->weights();
  const size_t embd_row = kernels::dtype_row_bytes(*kernels::dtype_info(static_cast<uint32_t>(mw.token_embd.type)), E);

  for (size_t c = 0; c < n; c += max_batch_) {
    const size_t m = std::min(max_batch_, n - c);
    const bool last_chunk = c + m == n;
    float* x = s.s<float>(s.L.x);
    if (all_gpu) {
      // The ids stay in host_ids until the stream is synchronised (the copy may be asynchronous). A
      // decode step's position goes with its id (the one-graph step reads it on the device).
      const size_t with_pos = n == 1 ? 1 : 0;
      if (c == 0) {
        s.host_ids.reserve(n + with_pos);
        std::copy(tokens.begin(), tokens.end(), s.host_ids.data());
        if (with_pos != 0) s.host_ids.data()[1] = static_cast<int32_t>(pos0);
      }
      s.ck(s.ops->gpu_copy_to_device(s.s<int32_t>(s.L.ids), s.host_ids.data() + c, (m + with_pos) * sizeof(int32_t),
                                     s.stream),
           "copying token ids");
      if (n == 1) {
        // A decode step: replayed from a graph after the first one (which also warms the kernels'
        // one-time set-up outside any capture), plain launches when graphs are off or fail.
        const auto t_launch = Clock::now();
        const bool replayed = s.graphs && s.stats.decode_steps > 0 && s.decode_graph(pos0, mode_, capacity_);
        if (!replayed) {
          const auto t0 = Clock::now();
          const uint64_t calls0 = s.calls;
          s.device_step(1, pos0, mode_, capacity_);
          s.output_rows(0, 1, nullptr);
          s.logits_top();
          s.stats.enqueue_us += us(Clock::now() - t0);
          s.stats.calls_per_step = s.calls - calls0 + 2;  // + the ids and logits copies
        }
        s.stats.decode_steps += 1;
        if (s.top_m > 0) {
          s.ck(s.ops->gpu_copy_to_host(s.top_host.data(), s.s<int32_t>(s.L.top_out), (2 + 2 * s.top_m) * 4, s.stream),
               "copying the best logits to the host");
        } else {
          s.ck(s.ops->gpu_copy_to_host(s.logits.data(), s.s<float>(s.L.logits), V * sizeof(float), s.stream),
               "copying logits to the host");
        }
        const auto t_wait = Clock::now();
        s.sync("forward pass");
        n_tokens_ = pos0 + 1;
        if (replayed) {
          const auto t_end = Clock::now();
          s.stats.before_launch_us += us(t_launch - t_entry);
          s.stats.wait_us += us(t_end - t_wait);
          s.stats.step_us += us(t_end - t_entry);
        }
        if (s.top_m > 0) {
          s.unpack_top();
          return {};
        }
        break;
      }
      s.device_step(static_cast<int>(m), pos0 + c, mode_, capacity_);
      // One synchronisation per call unless every token's logits are asked for.
      if (all) {
        s.output_rows(0, static_cast<int>(m), s.logits.data() + c * V);
        s.sync("forward pass");
      } else if (last_chunk) {
        s.output_rows(static_cast<int>(m) - 1, 1, s.logits.data());
        // The answer's first decode step is captured while the device runs this chunk, as each
        // decode step captures its successor: the first token then does not wait for a capture.
        s.prepare_decode(pos0 + n, mode_, capacity_);
        s.sync("forward pass");
      }
    } else {
      for (size_t t = 0; t < m; ++t) {
        kernels::dequantize_row(mw.token_embd.type,
                                static_cast<const uint8_t*>(mw.token_embd.data) + static_cast<size_t>(tokens[c + t]) * embd_row,
                                &s.host_x[t * E], E);
      }
      s.ck(s.ops->gpu_copy_to_device(x, s.host_x.data(), m * E * sizeof(float), s.stream), "copying embeddings");
      for (size_t l = 0; l < static_cast<size_t>(n_gpu_); ++l) s.layer(l, static_cast<int>(m), pos0 + c, mode_, capacity_);
      s.ck(s.ops->gpu_copy_to_host(s.host_x.data(), x, m * E * sizeof(float), s.stream), "copying the hidden state");
      s.sync("forward pass (GPU layers)");
      const bool want = all || last_chunk;
      const std::span<const float> lg = s.host_forward->run_from_hidden(
          *s.host_cache, pool, s.host_x.data(), m, pos0 + c, static_cast<size_t>(n_gpu_), mode, want);
      if (want) std::copy(lg.begin(), lg.end(), s.logits.data() + (all ? c * V : 0));
    }
    n_tokens_ = pos0 + c + m;
  }
  return std::span<const float>(s.logits.data(), all ? n * V : V);
}

MemoryReport GpuForward::memory_report() const {
  const Impl& s = *impl_;
  const ModelHParams& hp = s.model->hparams();
  const KvShape shape{hp.n_layer, hp.n_head_kv, hp.head_dim_k, hp.head_dim_v};
  MemoryReport r;
  const KvBytes now = kv_cache_bytes(shape, mode_, n_tokens_);
  r.kv_fp16_bytes = kv_cache_bytes(shape, CacheMode::f16, n_tokens_).total;
  r.kv_bytes = now.total;
  r.k_bytes = now.k_bytes;
  r.v_bytes = now.v_bytes;
  r.kv_capacity_bytes = s.kv.bytes() + (s.host_cache ? s.host_cache->allocated_bytes() : 0);
  r.weights_bytes = s.weights.bytes();
  r.scratch_bytes = s.scratch.bytes() + (s.host_forward ? s.host_forward->scratch_bytes() : 0);
  try {
    const GpuMemInfo m = backend_->mem();
    r.device_total_bytes = m.total_bytes;
    r.device_free_bytes = m.free_bytes;
  } catch (const GpuError&) {
    r.device_total_bytes = backend_->total_bytes();
  }
  r.process_resident_bytes = process_resident_bytes();
  return r;
}

}  // namespace alap
