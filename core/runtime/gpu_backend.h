// The GPU backend as the engine sees it: the shared library libalap_gpu.so (kernels/gpu) loaded at
// run time with dlopen, every extern "C" call of kernels/gpu/ops.h and kernels/gpu/attn_k8.h
// resolved by name into a table, the device opened, and device buffers owned RAII-style.
// A build or machine without the library or a device costs nothing: probe() says why in plain
// words and the engine runs on the CPU. Not the forward pass (core/model/forward_gpu.h).
//
//   alap::GpuBackend::Probe p = alap::GpuBackend::probe();
//   if (!p.backend) std::fprintf(stderr, "%s\n", p.reason.c_str());   // CPU from here on
//   else {
//     alap::GpuBackend& gpu = *p.backend;                              // gpu.device_name(), gpu.mem()
//     alap::DeviceBuffer buf(p.backend, 1 << 20);                      // throws GpuError when full
//     gpu.check(gpu.ops().gpu_fill_zero(buf.get(), buf.bytes(), nullptr), "clearing");
//   }
//
// Search order: $ALAP_GPU_LIBRARY (a path; when set, only it), then dirname(/proc/self/exe)/
// libalap_gpu.so, dirname(/proc/self/exe)/../lib/alap/libalap_gpu.so, the build tree's library
// (when this build made one), then the plain soname through the loader's path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

// Only for the signatures and parameter structs: both headers are plain C++ (no GPU includes).
#include "kernels/gpu/attn_k8.h"
#include "kernels/gpu/ops.h"

namespace alap {

// A failed device call: the message names what was being done and the library's own message.
class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every function the library must export, in one list (X-macro).
#define ALAP_GPU_FUNCTIONS(X)                                                                     \
  X(gpu_abi_version) X(gpu_device_count) X(gpu_device_open) X(gpu_mem_info) X(gpu_alloc)          \
  X(gpu_release) X(gpu_copy_to_device) X(gpu_copy_to_host) X(gpu_host_alloc) X(gpu_host_release)  \
  X(gpu_copy_on_device) X(gpu_fill_zero) X(gpu_stream_create) X(gpu_stream_destroy)               \
  X(gpu_stream_sync) X(gpu_matmul_supported) X(gpu_act_q8_bytes) X(gpu_quantize_act_q8)           \
  X(gpu_matmul) X(gpu_rms_norm) X(gpu_add_bias) X(gpu_add) X(gpu_swiglu) X(gpu_rope)              \
  X(gpu_get_rows) X(gpu_argmax) X(gpu_logits_top_scratch_bytes) X(gpu_logits_top)                 \
  X(gpu_kv_f16_store) X(attn_f16_prefill_run) X(attn_decode_scratch_bytes) X(attn_decode_check)   \
  X(attn_f16_decode_run) X(attn_k8_decode_run) X(attn_k8v8_decode_run) X(attn_decode_run_ex)      \
  X(attn_decode_ctx_limit) X(attn_prefill_check) X(attn_k8_prefill_run) X(kv_k8_store_run)        \
  X(gpu_rms_norm_q8) X(gpu_swiglu_q8) X(gpu_bias_rope_1) X(gpu_rope_store_1)                      \
  X(gpu_graph_capture_begin) X(gpu_graph_capture_end) X(gpu_graph_launch) X(gpu_graph_destroy)    \
  X(gpu_blas_scratch_bytes) X(gpu_matmul_blas) X(gpu_blas_status)                                 \
  X(gpu_error_message)

// The resolved entry points, named as in the headers: ops().gpu_alloc(&p, n).
struct GpuOps {
#define ALAP_GPU_OPS_MEMBER(name) decltype(&::alap::gpu::name) name = nullptr;
  ALAP_GPU_FUNCTIONS(ALAP_GPU_OPS_MEMBER)
#undef ALAP_GPU_OPS_MEMBER
};

struct GpuMemInfo {
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
};

class GpuBackend {
 public:
  // A ready backend, or (backend null) the reason in plain words: no library, a library that does
  // not load or lacks a symbol, or no device.
  // Why probe() found no usable backend, for callers that word it themselves (the app translates).
  enum class Failure { none, no_library, load_failed, incomplete_library, no_device };
  struct Probe {
    std::shared_ptr<GpuBackend> backend;
    std::string reason;
    Failure failure = Failure::none;
  };

  // Searches the default places (see the header comment) and opens device 0.
  static Probe probe();
  // The same over an explicit list of library paths (a name without '/' goes through the loader's
  // search path). For tests and tools.
  static Probe probe_paths(const std::vector<std::string>& candidates);
  // The default candidates, in order.
  static std::vector<std::string> default_candidates();

  ~GpuBackend();
  GpuBackend(const GpuBackend&) = delete;
  GpuBackend& operator=(const GpuBackend&) = delete;

  const GpuOps& ops() const { return ops_; }
  const std::string& library_path() const { return path_; }
  const std::string& device_name() const { return name_; }
  const std::string& arch() const { return arch_; }
  int multiprocessors() const { return multiprocessors_; }
  int runtime_version() const { return runtime_version_; }
  uint64_t total_bytes() const { return total_bytes_; }
  // Free and total device memory now. Throws GpuError when the runtime fails.
  GpuMemInfo mem() const;
  // "NVIDIA H200 (sm_90, 139.8 GiB)"
  std::string describe() const;

  // Throws GpuError("<what>: <gpu_error_message()>") when rc != 0.
  void check(int rc, const char* what) const;

  // The library's vendor BLAS (gpu_blas_status): its state, name ("cuBLAS") and the file opened.
  struct BlasStatus {
    int state = gpu::gpu_blas_not_built;  // a gpu::gpu_blas_state
    std::string name, file;
  };
  BlasStatus blas_status() const;

 private:
  GpuBackend() = default;
  void* handle_ = nullptr;
  GpuOps ops_;
  std::string path_, name_, arch_;
  int multiprocessors_ = 0, runtime_version_ = 0;
  uint64_t total_bytes_ = 0;
};

// One device allocation, released on destruction. Holds the backend alive.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Allocates `bytes` (at least 1). Throws GpuError naming the size when the device refuses.
  DeviceBuffer(std::shared_ptr<GpuBackend> backend, size_t bytes, const char* what = "device buffer");
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as(size_t byte_offset = 0) const {
    return reinterpret_cast<T*>(static_cast<uint8_t*>(ptr_) + byte_offset);
  }
  size_t bytes() const { return bytes_; }

 private:
  void reset() noexcept;
  std::shared_ptr<GpuBackend> backend_;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace alap
