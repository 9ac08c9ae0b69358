// A host emulation of the GPU library (kernels/gpu/ops.h and attn_k8.h) for tests without a GPU:
// built as a shared library (libalap_gpu_host.so) that GpuBackend loads with dlopen like the real
// one. "Device" memory is host memory with a budget; every op runs the CPU kernels (alap_kernels)
// the CPU forward pass uses, so GpuForward's orchestration is checked against Forward's logits.
// The quantised-activation buffer holds real int8 blocks read by the products (a stale or missing
// gpu_quantize_act_q8 gives wrong numbers, as on a GPU). Not a GPU simulator: no asynchrony.
// Graphs are "record and replay": between gpu_graph_capture_begin and _end every call that takes
// a stream is recorded with copies of its arguments (as a kernel node keeps its parameters) and
// runs only at gpu_graph_launch; gpu_stream_sync during a capture fails and spoils the capture,
// as on CUDA. So a caller that reads results of a captured step before launching it sees stale
// data here too.
//
// Environment: ALAP_HOST_GPU_MEMORY (bytes of "device" memory, default 1 GiB),
// ALAP_HOST_GPU_DEVICES=0 (report no device), ALAP_HOST_GPU_NO_GRAPHS=1 (capture fails to start, as
// on a runtime without graphs), ALAP_HOST_GPU_BLAS=1 (BLAS products emulated; their scratch
// ALAP_HOST_GPU_BLAS_SCRATCH bytes, default 256).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "alap/kernels/attn.h"
#include "alap/kernels/dtype.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"
#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/ops.h"

namespace {

thread_local std::string g_error;
std::mutex g_mu;
std::map<void*, size_t> g_allocs;
size_t g_allocated = 0;

int fail(const std::string& m) {
  g_error = m;
  return 1;
}

// The capture in progress on this thread (null: calls run now), and whether it was spoiled.
struct HostGraph {
  std::vector<std::function<int()>> calls;
};
thread_local HostGraph* g_capture = nullptr;
thread_local bool g_capture_spoiled = false;

// Records `call` when a capture is in progress (returns 0), else returns -1 (run now).
template <class F>
int record(F&& call) {
  if (g_capture == nullptr) return -1;
  g_capture->calls.emplace_back(std::forward<F>(call));
  return 0;
}
#define ALAP_HOST_RECORD(...) \
  if (int rc_ = record([=] { return __VA_ARGS__; }); rc_ >= 0) return rc_

uint64_t budget() {
  const char* e = std::getenv("ALAP_HOST_GPU_MEMORY");
  return e != nullptr ? std::strtoull(e, nullptr, 10) : (1ull << 30);
}

struct ActHeader {
  int32_t n_tokens;
  int32_t n_cols;
  int32_t pad[2];
};

size_t act_bytes(int n, int cols) {
  const size_t v = static_cast<size_t>(n) * static_cast<size_t>(cols);
  return sizeof(ActHeader) + v + 4 * (v / 32) * 2 + 4 * (v / 4);
}

// Pointers into an activation buffer laid out for n × cols: q, d, s, s4.
struct ActView {
  int8_t* q;
  float* d;
  int32_t* s;
  int32_t* s4;
};
ActView act_view(void* buf, int n, int cols) {
  const size_t v = static_cast<size_t>(n) * static_cast<size_t>(cols);
  uint8_t* p = static_cast<uint8_t*>(buf) + sizeof(ActHeader);
  ActView a{};
  a.q = reinterpret_cast<int8_t*>(p);
  a.d = reinterpret_cast<float*>(p + v);
  a.s = reinterpret_cast<int32_t*>(p + v + 4 * (v / 32));
  a.s4 = reinterpret_cast<int32_t*>(p + v + 8 * (v / 32));
  return a;
}

// One attention query row h of token t against n_keys cache rows (the CPU forward's arithmetic).
void attend(const float* qh, int D, int cap, int g, int n_keys, float scale, const int8_t* k_q, const uint16_t* k_d,
            const uint16_t* k_f16, const uint16_t* v, const int8_t* v_q, const uint16_t* v_d, float* out) {
  std::vector<float> scores(static_cast<size_t>(n_keys));
  const size_t Dz = static_cast<size_t>(D), row0 = static_cast<size_t>(g) * static_cast<size_t>(cap);
  if (k_q != nullptr) {
    std::vector<int8_t> qq(Dz);
    std::vector<uint16_t> qd(Dz / 32 + 1);
    alap::kernels::k8_quantize(qh, Dz, qq.data(), qd.data());
    alap::kernels::k8_scores(qq.data(), qd.data(), k_q + row0 * Dz, k_d + row0 * (Dz / 32), Dz,
                             static_cast<size_t>(n_keys), scale, scores.data());
  } else {
    alap::kernels::f16_scores(qh, k_f16 + row0 * Dz, Dz, static_cast<size_t>(n_keys), scale, scores.data());
  }
  alap::kernels::softmax(scores.data(), static_cast<size_t>(n_keys));
  std::fill(out, out + D, 0.0f);
  if (v_q != nullptr) {
    alap::kernels::k8_accum_v(scores.data(), v_q + row0 * Dz, v_d + row0 * (Dz / 32), Dz, 32,
                              static_cast<size_t>(n_keys), out);
  } else {
    alap::kernels::f16_accum_v(scores.data(), v + row0 * Dz, Dz, static_cast<size_t>(n_keys), out);
  }
}

}  // namespace

namespace alap::gpu {

extern "C" {

const char* gpu_error_message(void) { return g_error.c_str(); }

// ALAP_HOST_GPU_ABI: another version, for the test of the app's refusal.
int gpu_abi_version(void) {
  const char* e = std::getenv("ALAP_HOST_GPU_ABI");
  return e != nullptr ? std::atoi(e) : kGpuAbiVersion;
}

int gpu_device_count(int* count) {
  const char* e = std::getenv("ALAP_HOST_GPU_DEVICES");
  *count = e != nullptr ? std::atoi(e) : 1;
  if (*count == 0) g_error = "no device (host emulation with ALAP_HOST_GPU_DEVICES=0)";
  return 0;
}

int gpu_mem_info(uint64_t* free_bytes, uint64_t* total_bytes) {
  std::lock_guard<std::mutex> lock(g_mu);
  *total_bytes = budget();
  *free_bytes = *total_bytes > g_allocated ? *total_bytes - g_allocated : 0;
  return 0;
}

int gpu_device_open(int device, gpu_device_info* info) {
  if (device != 0) return fail("no device " + std::to_string(device));
  std::memset(info, 0, sizeof *info);
  std::snprintf(info->name, sizeof info->name, "Host emulation");
  std::snprintf(info->arch, sizeof info->arch, "host");
  gpu_mem_info(&info->free_bytes, &info->total_bytes);
  info->multiprocessors = 1;
  return 0;
}

int gpu_alloc(void** d_ptr, size_t bytes) {
  *d_ptr = nullptr;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_allocated + bytes > budget()) return fail("out of memory (host emulation)");
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (p == nullptr) return fail("out of memory");
  std::memset(p, 0xA5, bytes);  // garbage, as cudaMalloc gives
  g_allocs[p] = bytes;
  g_allocated += bytes;
  *d_ptr = p;
  return 0;
}

int gpu_release(void* d_ptr) {
  if (d_ptr == nullptr) return 0;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_allocs.find(d_ptr);
  if (it == g_allocs.end()) return fail("release of a pointer not allocated");
  g_allocated -= it->second;
  g_allocs.erase(it);
  std::free(d_ptr);
  return 0;
}

// Page-locked memory is plain memory here (ALAP_HOST_GPU_NO_PINNED=1: the runtime refuses it, as
// one whose lock limit is reached).
int gpu_host_alloc(void** h_ptr, size_t bytes) {
  *h_ptr = nullptr;
  const char* no = std::getenv("ALAP_HOST_GPU_NO_PINNED");
  if (no != nullptr && std::strcmp(no, "1") == 0) return fail("cannot lock host memory (host emulation)");
  void* p = std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
  if (p == nullptr) return fail("out of memory");
  *h_ptr = p;
  return 0;
}
int gpu_host_release(void* h_ptr) {
  std::free(h_ptr);
  return 0;
}

int gpu_copy_to_device(void* d, const void* h, size_t n, void* st) {
  ALAP_HOST_RECORD(gpu_copy_to_device(d, h, n, st));
  std::memcpy(d, h, n);
  return 0;
}
int gpu_copy_to_host(void* h, const void* d, size_t n, void* st) {
  ALAP_HOST_RECORD(gpu_copy_to_host(h, d, n, st));
  std::memcpy(h, d, n);
  return 0;
}
int gpu_copy_on_device(void* d, const void* s, size_t n, void* st) {
  ALAP_HOST_RECORD(gpu_copy_on_device(d, s, n, st));
  std::memmove(d, s, n);
  return 0;
}
int gpu_fill_zero(void* d, size_t n, void* st) {
  ALAP_HOST_RECORD(gpu_fill_zero(d, n, st));
  std::memset(d, 0, n);
  return 0;
}
int gpu_stream_create(void** stream) {
  static int token;
  *stream = &token;
  return 0;
}
int gpu_stream_destroy(void*) { return 0; }
int gpu_stream_sync(void*) {
  if (g_capture != nullptr) {
    g_capture_spoiled = true;
    return fail("gpu_stream_sync: the stream is being captured");
  }
  return 0;
}

int gpu_graph_capture_begin(void* stream) {
  if (stream == nullptr) return fail("gpu_graph_capture_begin: the default stream cannot be captured");
  if (const char* e = std::getenv("ALAP_HOST_GPU_NO_GRAPHS"); e != nullptr && std::string(e) == "1") {
    return fail("gpu_graph_capture_begin: graphs are off (ALAP_HOST_GPU_NO_GRAPHS=1)");
  }
  if (g_capture != nullptr) return fail("gpu_graph_capture_begin: a capture is already in progress");
  g_capture = new HostGraph();
  g_capture_spoiled = false;
  return 0;
}

int gpu_graph_capture_end(void* stream, void** graph_exec, int* updated) {
  if (updated != nullptr) *updated = 0;
  if (stream == nullptr || graph_exec == nullptr || g_capture == nullptr) return fail("gpu_graph_capture_end: no capture");
  HostGraph* g = g_capture;
  g_capture = nullptr;
  auto* exec = static_cast<HostGraph*>(*graph_exec);
  if (g_capture_spoiled) {
    delete g;
    delete exec;
    *graph_exec = nullptr;
    return fail("gpu_graph_capture_end: a call during the capture failed");
  }
  if (exec != nullptr) {  // "update in place" (the emulation has no topology to compare)
    exec->calls = std::move(g->calls);
    delete g;
    if (updated != nullptr) *updated = 1;
  } else {
    *graph_exec = g;
  }
  return 0;
}

int gpu_graph_launch(void* graph_exec, void*) {
  if (graph_exec == nullptr) return fail("gpu_graph_launch: graph_exec is null");
  if (g_capture != nullptr) return fail("gpu_graph_launch: launching a graph inside a capture is not emulated");
  for (const auto& call : static_cast<HostGraph*>(graph_exec)->calls) {
    if (const int rc = call(); rc != 0) return rc;
  }
  return 0;
}

int gpu_graph_destroy(void* graph_exec) {
  delete static_cast<HostGraph*>(graph_exec);
  return 0;
}

int gpu_matmul_supported(uint32_t dtype) {
  const auto* info = alap::kernels::dtype_info(dtype);
  return info != nullptr && info->weights_supported ? 1 : 0;
}

size_t gpu_act_q8_bytes(int n_tokens, int n_cols) { return act_bytes(n_tokens, n_cols); }

int gpu_quantize_act_q8(const float* d_x, void* d_xq, int n_tokens, int n_cols, void* st) {
  ALAP_HOST_RECORD(gpu_quantize_act_q8(d_x, d_xq, n_tokens, n_cols, st));
  if (n_cols % 32 != 0) return fail("gpu_quantize_act_q8: n_cols not a multiple of 32");
  ActHeader h{n_tokens, n_cols, {0, 0}};
  std::memcpy(d_xq, &h, sizeof h);
  const ActView a = act_view(d_xq, n_tokens, n_cols);
  alap::kernels::quantize_activations(d_x, static_cast<size_t>(n_tokens), static_cast<size_t>(n_cols), a.q, a.d, a.s,
                                      a.s4);
  return 0;
}

int gpu_matmul(uint32_t dtype, const void* d_w, int n_rows, int n_cols, const float* d_x, const void* d_xq,
               int n_tokens, float* d_y, float beta, void* st) {
  ALAP_HOST_RECORD(gpu_matmul(dtype, d_w, n_rows, n_cols, d_x, d_xq, n_tokens, d_y, beta, st));
  const auto* info = alap::kernels::dtype_info(dtype);
  if (info == nullptr || !info->weights_supported) return fail("gpu_matmul: unsupported type");
  const alap::kernels::WeightView w{static_cast<alap::kernels::DType>(dtype), d_w, static_cast<size_t>(n_rows),
                                    static_cast<size_t>(n_cols)};
  std::vector<float> y(static_cast<size_t>(n_tokens) * static_cast<size_t>(n_rows));
  if (info->block_elems != 1) {
    if (d_xq == nullptr) return fail("gpu_matmul: a quantised type needs d_xq");
    ActHeader h{};
    std::memcpy(&h, d_xq, sizeof h);
    if (h.n_tokens != n_tokens || h.n_cols != n_cols) {
      return fail("gpu_matmul: d_xq holds " + std::to_string(h.n_tokens) + "x" + std::to_string(h.n_cols) +
                  " activations, not " + std::to_string(n_tokens) + "x" + std::to_string(n_cols));
    }
    const ActView a = act_view(const_cast<void*>(d_xq), n_tokens, n_cols);
    const alap::kernels::QuantizedActs qa{d_x, a.q, a.d, a.s, a.s4, static_cast<size_t>(n_tokens),
                                          static_cast<size_t>(n_cols)};
    alap::kernels::matmul(w, qa, y.data(), static_cast<size_t>(n_rows), 0, static_cast<size_t>(n_rows));
  } else {  // plain types read x (the CPU forward's call, with no int8 blocks)
    const alap::kernels::QuantizedActs qa{d_x, nullptr, nullptr, nullptr, nullptr, static_cast<size_t>(n_tokens),
                                          static_cast<size_t>(n_cols)};
    alap::kernels::matmul(w, qa, y.data(), static_cast<size_t>(n_rows), 0, static_cast<size_t>(n_rows));
  }
  for (size_t i = 0; i < y.size(); ++i) d_y[i] = beta != 0.0f ? d_y[i] + y[i] : y[i];
  return 0;
}

// BLAS products: none unless ALAP_HOST_GPU_BLAS=1, which emulates them (fp16 weights and
// activations, fp32 sums) so that the forward pass's BLAS plumbing runs in tests without a GPU.
static std::atomic<unsigned> g_blas_products{0};

static bool emulate_blas() {
  const char* e = std::getenv("ALAP_HOST_GPU_BLAS");
  return e != nullptr && std::string(e) == "1";
}

// Its scratch: 256 bytes, or ALAP_HOST_GPU_BLAS_SCRATCH bytes (rounded up to 256) for the tests
// of a plan where the real library's ~100 MiB would cost a layer.
size_t gpu_blas_scratch_bytes(int max_tokens, int max_cols) {
  if (!emulate_blas() || max_tokens < 2 || max_cols <= 0) return 0;
  const char* e = std::getenv("ALAP_HOST_GPU_BLAS_SCRATCH");
  const unsigned long long bytes = e != nullptr ? std::strtoull(e, nullptr, 10) : 0;
  return bytes > 256 ? static_cast<size_t>((bytes + 255) / 256 * 256) : 256;
}

// "hostBLAS": ready under ALAP_HOST_GPU_BLAS=1, else not found; ALAP_HOST_GPU_BLAS_STATE=<a
// gpu_blas_state number> says that state instead (the tests of how each reason reaches people).
int gpu_blas_status(char* name, size_t name_len, char* file, size_t file_len) {
  const auto put = [](char* dst, size_t len, const char* v) {
    if (dst == nullptr || len == 0) return;
    std::snprintf(dst, len, "%s", v);
  };
  put(name, name_len, "hostBLAS");
  const char* forced = std::getenv("ALAP_HOST_GPU_BLAS_STATE");
  const int state = forced != nullptr && *forced != '\0' ? std::atoi(forced)
                    : emulate_blas()                      ? alap::gpu::gpu_blas_ready
                                                          : alap::gpu::gpu_blas_not_found;
  put(file, file_len, state == alap::gpu::gpu_blas_not_found ? "" : "libhostblas.so");
  return state;
}

int gpu_matmul_blas(uint32_t dtype, const void* d_w, int n_rows, int n_cols, const float* d_x, const void* d_xq,
                    int n_tokens, float* d_y, float beta, void* d_scratch, size_t scratch_bytes, void* st) {
  const auto* info = alap::kernels::dtype_info(dtype);
  if (!emulate_blas() || n_tokens < 2 || d_scratch == nullptr || scratch_bytes == 0 || info == nullptr ||
      !info->weights_supported || dtype == static_cast<uint32_t>(alap::kernels::DType::f32) || n_cols % 32 != 0) {
    return gpu_matmul(dtype, d_w, n_rows, n_cols, d_x, d_xq, n_tokens, d_y, beta, st);
  }
  ALAP_HOST_RECORD(gpu_matmul_blas(dtype, d_w, n_rows, n_cols, d_x, d_xq, n_tokens, d_y, beta, d_scratch,
                                   scratch_bytes, st));
  if (d_x == nullptr) return fail("gpu_matmul_blas: d_x is null");
  ++g_blas_products;
  auto half = [](float v) {
    if (std::isfinite(v)) v = std::clamp(v, -65504.0f, 65504.0f);
    return alap::kernels::fp16_to_f32(alap::kernels::f32_to_fp16(v));
  };
  const size_t C = static_cast<size_t>(n_cols), T = static_cast<size_t>(n_tokens);
  std::vector<float> x(T * C), row(C);
  for (size_t i = 0; i < x.size(); ++i) x[i] = half(d_x[i]);
  const size_t row_bytes = info->block_bytes * (C / info->block_elems);
  for (size_t r = 0; r < static_cast<size_t>(n_rows); ++r) {
    alap::kernels::dequantize_row(static_cast<alap::kernels::DType>(dtype),
                                  static_cast<const uint8_t*>(d_w) + r * row_bytes, row.data(), C);
    for (float& v : row) v = half(v);
    for (size_t t = 0; t < T; ++t) {
      float acc = 0.0f;
      for (size_t c = 0; c < C; ++c) acc += row[c] * x[t * C + c];
      float& y = d_y[t * static_cast<size_t>(n_rows) + r];
      y = beta != 0.0f ? beta * y + acc : acc;
    }
  }
  return 0;
}

int gpu_rms_norm(const float* d_x, const float* d_w, float* d_y, int n_cols, int n_rows, float eps, void* st) {
  ALAP_HOST_RECORD(gpu_rms_norm(d_x, d_w, d_y, n_cols, n_rows, eps, st));
  for (int r = 0; r < n_rows; ++r) {
    const float* x = d_x + static_cast<size_t>(r) * n_cols;
    float* y = d_y + static_cast<size_t>(r) * n_cols;
    double ss = 0.0;
    for (int i = 0; i < n_cols; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(ss / n_cols + eps));
    for (int i = 0; i < n_cols; ++i) y[i] = (d_w != nullptr ? d_w[i] : 1.0f) * (x[i] * inv);
  }
  return 0;
}

int gpu_add_bias(float* d_y, const float* d_b, int n_cols, int n_rows, void* st) {
  ALAP_HOST_RECORD(gpu_add_bias(d_y, d_b, n_cols, n_rows, st));
  for (int r = 0; r < n_rows; ++r) {
    for (int i = 0; i < n_cols; ++i) d_y[static_cast<size_t>(r) * n_cols + i] += d_b[i];
  }
  return 0;
}

int gpu_add(const float* a, const float* b, float* y, size_t n, void* st) {
  ALAP_HOST_RECORD(gpu_add(a, b, y, n, st));
  for (size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
  return 0;
}

int gpu_swiglu(const float* g, const float* u, float* out, size_t n, void* st) {
  ALAP_HOST_RECORD(gpu_swiglu(g, u, out, n, st));
  for (size_t i = 0; i < n; ++i) out[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
  return 0;
}

int gpu_rms_norm_q8(const float* d_x, const float* d_w, float* d_y, void* d_xq, int n_cols, int n_rows, float eps,
                    void* st) {
  ALAP_HOST_RECORD(gpu_rms_norm_q8(d_x, d_w, d_y, d_xq, n_cols, n_rows, eps, st));
  if (const int rc = gpu_rms_norm(d_x, d_w, d_y, n_cols, n_rows, eps, st); rc != 0) return rc;
  return gpu_quantize_act_q8(d_y, d_xq, n_rows, n_cols, st);
}

int gpu_swiglu_q8(const float* d_gate, const float* d_up, float* d_out, void* d_xq, int n_cols, int n_rows, void* st) {
  ALAP_HOST_RECORD(gpu_swiglu_q8(d_gate, d_up, d_out, d_xq, n_cols, n_rows, st));
  if (n_cols % 32 != 0) return fail("gpu_swiglu_q8: n_cols not a multiple of 32");
  gpu_swiglu(d_gate, d_up, d_out, static_cast<size_t>(n_cols) * static_cast<size_t>(n_rows), st);
  return gpu_quantize_act_q8(d_out, d_xq, n_rows, n_cols, st);
}

int gpu_rope(float* d_x, int n_tokens, int n_heads, int head_dim, int n_rot, int pos0, float freq_base,
             float freq_scale, const float* d_ff, int neox, void* st) {
  ALAP_HOST_RECORD(gpu_rope(d_x, n_tokens, n_heads, head_dim, n_rot, pos0, freq_base, freq_scale, d_ff, neox, st));
  const int half = n_rot / 2;
  for (int t = 0; t < n_tokens; ++t) {
    for (int i = 0; i < half; ++i) {
      const double f = d_ff != nullptr ? d_ff[i] : 1.0;
      const double inv = freq_scale * std::pow(static_cast<double>(freq_base), -2.0 * double(i) / n_rot) / f;
      const double ang = static_cast<double>(pos0 + t) * inv;
      const float cs = static_cast<float>(std::cos(ang)), sn = static_cast<float>(std::sin(ang));
      for (int h = 0; h < n_heads; ++h) {
        float* v = d_x + (static_cast<size_t>(t) * n_heads + h) * head_dim;
        const int i0 = neox ? i : 2 * i, i1 = neox ? i + half : 2 * i + 1;
        const float x0 = v[i0], x1 = v[i1];
        v[i0] = x0 * cs - x1 * sn;
        v[i1] = x0 * sn + x1 * cs;
      }
    }
  }
  return 0;
}

int gpu_bias_rope_1(float* d_x, const float* d_b, int n_heads, int n_rot_heads, int head_dim, int n_rot, int pos,
                    float freq_base, float freq_scale, const float* d_ff, int neox, void* st) {
  ALAP_HOST_RECORD(gpu_bias_rope_1(d_x, d_b, n_heads, n_rot_heads, head_dim, n_rot, pos, freq_base, freq_scale, d_ff,
                                   neox, st));
  if (n_rot_heads < 0 || n_rot_heads > n_heads) return fail("gpu_bias_rope_1: bad n_rot_heads");
  if (d_b != nullptr) gpu_add_bias(d_x, d_b, n_heads * head_dim, 1, st);
  if (n_rot_heads == 0) return 0;
  return gpu_rope(d_x, 1, n_rot_heads, head_dim, n_rot, pos, freq_base, freq_scale, d_ff, neox, st);
}

// The calls it stands for, in order (the device kernel is checked against them byte for byte): the
// bias, the q/k norms when given, RoPE, the two row stores. pos_dev is read when the call runs (at
// replay when captured), as the kernel reads it.
int gpu_rope_store_1(const gpu_rope_store_params* p, void* st) {
  if (g_capture != nullptr) return record([pc = *p, st] { return gpu_rope_store_1(&pc, st); });
  if (p->pos < 0 || p->pos >= p->capacity) return fail("gpu_rope_store_1: pos past the capacity");
  const int pos = p->pos_dev != nullptr ? *p->pos_dev : p->pos;
  if (pos < 0 || pos >= p->capacity) return 0;  // the kernel writes nothing then
  const int H = p->n_head, Hk = p->n_kv_head, D = p->head_dim;
  if (p->q_norm != nullptr || p->k_norm != nullptr) {
    if (p->bias != nullptr) gpu_add_bias(p->x, p->bias, (H + 2 * Hk) * D, 1, st);
    if (p->q_norm != nullptr) gpu_rms_norm(p->x, p->q_norm, p->x, D, H, p->norm_eps, st);
    float* kx = p->x + static_cast<size_t>(H) * D;
    if (p->k_norm != nullptr) gpu_rms_norm(kx, p->k_norm, kx, D, Hk, p->norm_eps, st);
    if (int rc = gpu_rope(p->x, 1, H + Hk, D, p->n_rot, pos, p->freq_base, p->freq_scale, p->freq_factors, p->neox, st);
        rc != 0)
      return rc;
  } else if (int rc = gpu_bias_rope_1(p->x, p->bias, H + 2 * Hk, H + Hk, D, p->n_rot, pos, p->freq_base,
                                      p->freq_scale, p->freq_factors, p->neox, st);
             rc != 0) {
    return rc;
  }
  float* k = p->x + static_cast<size_t>(H) * D;
  float* v = k + static_cast<size_t>(Hk) * D;
  const auto store = [&](float* x, int8_t* q, uint16_t* d, uint16_t* f16) {
    if (f16 != nullptr) return gpu_kv_f16_store(x, f16, 1, Hk, D, p->capacity, pos, st);
    const kv_k8_store_params kp{x, q, d, 1, Hk, D, p->capacity, pos};
    return kv_k8_store_run(&kp, st);
  };
  if (int rc = store(k, p->k_q, p->k_d, p->k_f16); rc != 0) return rc;
  return store(v, p->v_q, p->v_d, p->v_f16);
}

int gpu_get_rows(uint32_t dtype, const void* d_table, int n_rows, int n_cols, const int32_t* d_ids, int n_ids,
                 float* d_out, void* st) {
  ALAP_HOST_RECORD(gpu_get_rows(dtype, d_table, n_rows, n_cols, d_ids, n_ids, d_out, st));
  const auto* info = alap::kernels::dtype_info(dtype);
  if (info == nullptr) return fail("gpu_get_rows: unknown type");
  const size_t rb = alap::kernels::dtype_row_bytes(*info, static_cast<uint64_t>(n_cols));
  for (int i = 0; i < n_ids; ++i) {
    float* out = d_out + static_cast<size_t>(i) * n_cols;
    if (d_ids[i] < 0 || d_ids[i] >= n_rows) {
      std::fill(out, out + n_cols, 0.0f);
      continue;
    }
    alap::kernels::dequantize_row(static_cast<alap::kernels::DType>(dtype),
                                  static_cast<const uint8_t*>(d_table) + static_cast<size_t>(d_ids[i]) * rb, out,
                                  static_cast<size_t>(n_cols));
  }
  return 0;
}

int gpu_argmax(const float* d_x, int n, int32_t* d_out, void* st) {
  ALAP_HOST_RECORD(gpu_argmax(d_x, n, d_out, st));
  *d_out = static_cast<int32_t>(std::max_element(d_x, d_x + n) - d_x);
  return 0;
}

// The contract of ops.h, written plainly: a stable sort of the indices by logit (descending; the
// lower index first among equals), the first m kept, -0 given as +0 like the device's keys.
size_t gpu_logits_top_scratch_bytes(int n) { return n > 0 ? 8 : 0; }

int gpu_logits_top(const float* d_x, int n, int m, int32_t* d_out, void* d_scratch, void* st) {
  ALAP_HOST_RECORD(gpu_logits_top(d_x, n, m, d_out, d_scratch, st));
  if (n <= 0 || m < 1 || m > 256) return fail("gpu_logits_top: n must be positive and m in [1, 256]");
  std::vector<int32_t> order(static_cast<size_t>(n));
  int32_t first_nan = -1;
  for (int i = 0; i < n; ++i) {
    order[static_cast<size_t>(i)] = i;
    if (first_nan < 0 && std::isnan(d_x[i])) first_nan = i;
  }
  if (first_nan < 0) {  // (a NaN breaks the sort's ordering; the caller refuses the row anyway)
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return d_x[a] > d_x[b]; });
  }
  const int count = std::min(m, n);
  d_out[0] = first_nan;
  d_out[1] = count;
  for (int r = 0; r < count; ++r) {
    const float v = d_x[order[static_cast<size_t>(r)]];
    const float plus = v == 0.0f ? 0.0f : v;
    d_out[2 + r] = order[static_cast<size_t>(r)];
    std::memcpy(&d_out[2 + m + r], &plus, sizeof plus);
  }
  return 0;
}

int gpu_kv_f16_store(const float* d_x, uint16_t* d_cache, int n_tokens, int n_kv_head, int head_dim, int capacity,
                     int pos0, void* st) {
  ALAP_HOST_RECORD(gpu_kv_f16_store(d_x, d_cache, n_tokens, n_kv_head, head_dim, capacity, pos0, st));
  if (pos0 + n_tokens > capacity) return fail("gpu_kv_f16_store: past the capacity");
  for (int t = 0; t < n_tokens; ++t) {
    for (int h = 0; h < n_kv_head; ++h) {
      const float* src = d_x + (static_cast<size_t>(t) * n_kv_head + h) * head_dim;
      uint16_t* dst = d_cache + (static_cast<size_t>(h) * capacity + pos0 + t) * head_dim;
      for (int i = 0; i < head_dim; ++i) dst[i] = alap::kernels::f32_to_fp16(src[i]);
    }
  }
  return 0;
}

int kv_k8_store_run(const kv_k8_store_params* p, void* st) {
  if (g_capture != nullptr) return record([pc = *p, st] { return kv_k8_store_run(&pc, st); });
  if (p->head_dim % 32 != 0 || p->pos0 + p->n_tokens > p->capacity) return fail("kv_k8_store_run: bad shape");
  const size_t D = static_cast<size_t>(p->head_dim);
  for (int t = 0; t < p->n_tokens; ++t) {
    for (int h = 0; h < p->n_kv_head; ++h) {
      const size_t row = static_cast<size_t>(h) * p->capacity + p->pos0 + t;
      alap::kernels::k8_quantize(p->k_new + (static_cast<size_t>(t) * p->n_kv_head + h) * D, D, p->k_q + row * D,
                                 p->k_d + row * (D / 32));
    }
  }
  return 0;
}

size_t attn_decode_scratch_bytes(int n_head, int head_dim) {
  return static_cast<size_t>(n_head) * static_cast<size_t>(head_dim) * 4 + 64;
}

const char* attn_decode_check(const attn_decode_params* p, int) {
  if (p->head_dim % 32 != 0 || p->n_ctx < 1 || p->n_ctx > p->capacity) return "bad decode shape";
  return nullptr;
}
const char* attn_prefill_check(const attn_prefill_params* p) {
  if (p->head_dim % 32 != 0 || p->pos0 + p->n_q > p->capacity) return "bad prefill shape";
  return nullptr;
}

// The emulation's splits: 2 a launch, cut in tiles of 4 rows, so that the range one launch with
// pos_dev serves is short ([n_ctx, 2·round_up(⌈n_ctx/2⌉, 4)]) and the tests cross its end.
int attn_decode_ctx_limit(const attn_decode_params* p, int mode) {
  if (const char* m = attn_decode_check(p, mode)) {
    fail(m);
    return -1;
  }
  const int split_len = ((p->n_ctx + 1) / 2 + 3) / 4 * 4;
  return std::min(p->capacity, 2 * split_len);
}

static int decode(const attn_decode_params* p, int mode) {
  if (const char* m = attn_decode_check(p, mode)) return fail(m);
  const bool ok = mode == 0 ? (p->k_f16 && p->v) : mode == 1 ? (p->k_q && p->k_d && p->v) : (p->k_q && p->k_d && p->v_q && p->v_d);
  if (!ok) return fail("attention decode: a cache pointer of this mode is null");
  const int G = p->n_head / p->n_kv_head;
  // pos_dev: the rows of the position read now (at replay when captured). The device's result is
  // right only for positions the launch serves ([n_ctx, attn_decode_ctx_limit]); here any other
  // is an error, so a caller that replays a graph past its range fails in CI.
  int n_ctx = p->n_ctx;
  if (p->pos_dev != nullptr) {
    n_ctx = *p->pos_dev + 1;
    if (n_ctx < p->n_ctx || n_ctx > attn_decode_ctx_limit(p, mode)) {
      return fail("attention decode: device position " + std::to_string(n_ctx - 1) + " outside the launch's range");
    }
  }
  for (int h = 0; h < p->n_head; ++h) {
    attend(p->q + static_cast<size_t>(h) * p->head_dim, p->head_dim, p->capacity, h / G, n_ctx, p->scale,
           mode != 0 ? p->k_q : nullptr, p->k_d, p->k_f16, p->v, mode == 2 ? p->v_q : nullptr, p->v_d,
           p->out + static_cast<size_t>(h) * p->head_dim);
  }
  // out_q8: out quantised as gpu_quantize_act_q8 does it (this emulation's own block layout).
  if (p->out_q8 != nullptr) return gpu_quantize_act_q8(p->out, p->out_q8, 1, p->n_head * p->head_dim, nullptr);
  return 0;
}
// A decode call issued: recorded into the graph being captured, else run (in order: the emulation
// has nothing to overlap).
static int issue_decode(const attn_decode_params* p, int mode) {
  if (g_capture != nullptr) return record([pc = *p, mode] { return decode(&pc, mode); });
  return decode(p, mode);
}
int attn_f16_decode_run(const attn_decode_params* p, void*) { return issue_decode(p, 0); }
int attn_k8_decode_run(const attn_decode_params* p, void*) { return issue_decode(p, 1); }
int attn_k8v8_decode_run(const attn_decode_params* p, void*) { return issue_decode(p, 2); }

// Decode attention calls issued (captured or run) with and without kAttnLaunchPdl, for the tests
// of how GpuForward launches it (host_gpu_attn_decode_calls, below; not a library entry point).
std::atomic<unsigned> g_attn_decode_pdl{0}, g_attn_decode_plain{0};

int attn_decode_run_ex(const attn_decode_params* p, int mode, unsigned flags, void*) {
  if (mode < 0 || mode > 2) return fail("attn_decode_run_ex: mode must be 0 (f16), 1 (k8) or 2 (k8v8)");
  if ((flags & ~kAttnLaunchPdl) != 0) return fail("attn_decode_run_ex: unknown flag bits");
  ++((flags & kAttnLaunchPdl) != 0 ? g_attn_decode_pdl : g_attn_decode_plain);
  return issue_decode(p, mode);  // the flags only permit overlap
}

int attn_k8_prefill_run(const attn_prefill_params* p, void* st) {
  if (g_capture != nullptr) return record([pc = *p, st] { return attn_k8_prefill_run(&pc, st); });
  if (const char* m = attn_prefill_check(p)) return fail(m);
  if (!p->k_q || !p->k_d || !(p->v || (p->v_q && p->v_d))) return fail("attn_k8_prefill_run: null cache pointer");
  const int G = p->n_head / p->n_kv_head;
  for (int t = 0; t < p->n_q; ++t) {
    for (int h = 0; h < p->n_head; ++h) {
      const size_t at = (static_cast<size_t>(t) * p->n_head + h) * p->head_dim;
      attend(p->q + at, p->head_dim, p->capacity, h / G, p->pos0 + t + 1, p->scale, p->k_q, p->k_d, nullptr,
             p->v, p->v_q, p->v_d, p->out + at);
    }
  }
  return 0;
}

int attn_f16_prefill_run(const attn_f16_prefill_params* p, void* st) {
  if (g_capture != nullptr) return record([pc = *p, st] { return attn_f16_prefill_run(&pc, st); });
  if (p->head_dim % 32 != 0 || p->pos0 + p->n_q > p->capacity) return fail("attn_f16_prefill_run: bad shape");
  const int G = p->n_head / p->n_kv_head;
  for (int t = 0; t < p->n_q; ++t) {
    for (int h = 0; h < p->n_head; ++h) {
      const size_t at = (static_cast<size_t>(t) * p->n_head + h) * p->head_dim;
      attend(p->q + at, p->head_dim, p->capacity, h / G, p->pos0 + t + 1, p->scale, nullptr, nullptr, p->k_f16, p->v,
             nullptr, nullptr, p->out + at);
    }
  }
  return 0;
}

// Test hook: the products emulated as BLAS since the library was loaded.
unsigned host_gpu_blas_products() { return g_blas_products.load(); }

// Test hook: the decode attention calls since the library was loaded, as programmatic dependents
// and plain.
void host_gpu_attn_decode_calls(unsigned* pdl, unsigned* plain) {
  *pdl = g_attn_decode_pdl.load();
  *plain = g_attn_decode_plain.load();
}

}  // extern "C"

}  // namespace alap::gpu
