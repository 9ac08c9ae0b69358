// The device calls of ops.h: device count and selection, memory, copies, streams, graph capture
// and replay (update in place when only parameters changed). Each returns
// non-zero with a message naming the call and the runtime's reason (never aborts); a failed
// allocation also clears the runtime's last-error slot so the next kernel launch is not blamed.
// Not the kernels (matmul.hip, ops_elementwise.hip).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/gpu/gpu_api_util.h"
#include "kernels/gpu/gpu_pdl.h"
#include "kernels/gpu/gpu_port.h"
#include "kernels/gpu/ops.h"

namespace alap::gpu {

namespace {

void check(alap_gpu_error_t err, const char* what) {
  if (err == alap_gpu_success) return;
  (void)alap_gpu_get_last_error();  // non-sticky errors must not resurface at the next launch
  throw std::runtime_error(std::string(what) + ": " + alap_gpu_error_string(err));
}

std::string mib(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

bool pdl_enabled() {
#if defined(ALAP_GPU_BACKEND_CUDA)
  static const bool on = [] {
    const char* env = std::getenv("ALAP_GPU_PDL");
    if (env != nullptr && std::strcmp(env, "0") == 0) return false;
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return false;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
    return major >= 9;
  }();
  return on;
#else
  return false;
#endif
}

extern "C" {

int gpu_abi_version(void) { return kGpuAbiVersion; }

int gpu_device_count(int* count) {
  if (count != nullptr) *count = 0;
  std::string why;
  const int rc = gpu_api_call("gpu_device_count", [&] {
    if (count == nullptr) throw std::invalid_argument("count is null");
    int n = 0;
    const alap_gpu_error_t err = alap_gpu_get_device_count(&n);
    if (err == alap_gpu_success) {
      *count = n;
      if (n == 0) why = "gpu_device_count: the runtime found no GPU";
      return;
    }
    (void)alap_gpu_get_last_error();
#if defined(ALAP_GPU_BACKEND_CUDA)
    const bool no_device = err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
                           err == cudaErrorSystemDriverMismatch || err == cudaErrorCompatNotSupportedOnDevice;
#else
    const bool no_device = err == hipErrorNoDevice || err == hipErrorInsufficientDriver;
#endif
    if (!no_device) throw std::runtime_error(std::string("runtime failed to start: ") + alap_gpu_error_string(err));
    why = std::string("gpu_device_count: no usable GPU: ") + alap_gpu_error_string(err);
  });
  if (rc == 0 && !why.empty()) gpu_error_slot() = why;  // count 0 is not a failure, but says why
  return rc;
}

int gpu_device_open(int device, gpu_device_info* info) {
  return gpu_api_call("gpu_device_open", [&] {
    int n = 0;
    check(alap_gpu_get_device_count(&n), "device count");
    if (device < 0 || device >= n)
      throw std::invalid_argument("device " + std::to_string(device) + " does not exist (" + std::to_string(n) +
                                  " found)");
    check(alap_gpu_set_device(device), "set device");
    if (info == nullptr) return;
    alap_gpu_device_prop_t prop{};
    check(alap_gpu_get_device_properties(&prop, device), "device properties");
    std::memset(info, 0, sizeof(*info));
    std::snprintf(info->name, sizeof(info->name), "%s", prop.name);
#if defined(ALAP_GPU_BACKEND_CUDA)
    std::snprintf(info->arch, sizeof(info->arch), "sm_%d%d", prop.major, prop.minor);
#else
    std::snprintf(info->arch, sizeof(info->arch), "%s", prop.gcnArchName);
    if (char* colon = std::strchr(info->arch, ':')) *colon = '\0';  // "gfx1100:sramecc-:xnack-"
#endif
    info->multiprocessors = prop.multiProcessorCount;
    size_t free_b = 0, total_b = 0;
    check(alap_gpu_mem_get_info(&free_b, &total_b), "memory info");
    info->free_bytes = free_b;
    info->total_bytes = total_b;
    int version = 0;
    check(ALAP_GPU_RT(cudaRuntimeGetVersion, hipRuntimeGetVersion)(&version), "runtime version");
    info->runtime_version = version;
  });
}

int gpu_mem_info(uint64_t* free_bytes, uint64_t* total_bytes) {
  return gpu_api_call("gpu_mem_info", [&] {
    size_t f = 0, t = 0;
    check(alap_gpu_mem_get_info(&f, &t), "memory info");
    if (free_bytes != nullptr) *free_bytes = f;
    if (total_bytes != nullptr) *total_bytes = t;
  });
}

int gpu_alloc(void** d_ptr, size_t bytes) {
  if (d_ptr != nullptr) *d_ptr = nullptr;
  return gpu_api_call("gpu_alloc", [&] {
    if (d_ptr == nullptr) throw std::invalid_argument("d_ptr is null");
    void* p = nullptr;
    const alap_gpu_error_t err = alap_gpu_malloc(&p, bytes == 0 ? 1 : bytes);
    if (err != alap_gpu_success) {
      (void)alap_gpu_get_last_error();
      size_t f = 0, t = 0;
      const bool have_info = alap_gpu_mem_get_info(&f, &t) == alap_gpu_success;
      (void)alap_gpu_get_last_error();
      throw std::runtime_error("cannot allocate " + mib(bytes) + " (" + std::to_string(bytes) + " bytes)" +
                               (have_info ? "; " + mib(f) + " of " + mib(t) + " free" : std::string()) + ": " +
                               alap_gpu_error_string(err));
    }
    *d_ptr = p;
  });
}

int gpu_release(void* d_ptr) {
  return gpu_api_call("gpu_release", [&] {
    if (d_ptr != nullptr) check(alap_gpu_free(d_ptr), "free");
  });
}

int gpu_host_alloc(void** h_ptr, size_t bytes) {
  if (h_ptr != nullptr) *h_ptr = nullptr;
  return gpu_api_call("gpu_host_alloc", [&] {
    if (h_ptr == nullptr) throw std::invalid_argument("h_ptr is null");
    void* p = nullptr;
    const alap_gpu_error_t err = alap_gpu_host_malloc(&p, bytes == 0 ? 1 : bytes);
    if (err != alap_gpu_success) {
      (void)alap_gpu_get_last_error();
      throw std::runtime_error("cannot lock " + std::to_string(bytes) + " bytes of host memory: " + alap_gpu_error_string(err));
    }
    *h_ptr = p;
  });
}

int gpu_host_release(void* h_ptr) {
  return gpu_api_call("gpu_host_release", [&] {
    if (h_ptr != nullptr) check(alap_gpu_host_free(h_ptr), "host free");
  });
}

int gpu_copy_to_device(void* d_dst, const void* h_src, size_t bytes, void* stream) {
  return gpu_api_call("gpu_copy_to_device", [&] {
    if (bytes == 0) return;
    if (d_dst == nullptr || h_src == nullptr) throw std::invalid_argument("null pointer");
    check(alap_gpu_memcpy_async(d_dst, h_src, bytes, alap_gpu_memcpy_h2d, static_cast<alap_gpu_stream_t>(stream)),
          "copy to device");
  });
}

int gpu_copy_to_host(void* h_dst, const void* d_src, size_t bytes, void* stream) {
  return gpu_api_call("gpu_copy_to_host", [&] {
    if (bytes == 0) return;
    if (h_dst == nullptr || d_src == nullptr) throw std::invalid_argument("null pointer");
    check(alap_gpu_memcpy_async(h_dst, d_src, bytes, alap_gpu_memcpy_d2h, static_cast<alap_gpu_stream_t>(stream)),
          "copy to host");
  });
}

int gpu_copy_on_device(void* d_dst, const void* d_src, size_t bytes, void* stream) {
  return gpu_api_call("gpu_copy_on_device", [&] {
    if (bytes == 0) return;
    if (d_dst == nullptr || d_src == nullptr) throw std::invalid_argument("null pointer");
    check(alap_gpu_memcpy_async(d_dst, d_src, bytes, alap_gpu_memcpy_d2d, static_cast<alap_gpu_stream_t>(stream)),
          "copy on device");
  });
}

int gpu_fill_zero(void* d_ptr, size_t bytes, void* stream) {
  return gpu_api_call("gpu_fill_zero", [&] {
    if (bytes == 0) return;
    if (d_ptr == nullptr) throw std::invalid_argument("d_ptr is null");
    check(alap_gpu_memset_async(d_ptr, 0, bytes, static_cast<alap_gpu_stream_t>(stream)), "fill");
  });
}

int gpu_stream_create(void** stream) {
  if (stream != nullptr) *stream = nullptr;
  return gpu_api_call("gpu_stream_create", [&] {
    if (stream == nullptr) throw std::invalid_argument("stream is null");
    alap_gpu_stream_t s = nullptr;
    check(alap_gpu_stream_create(&s), "stream create");
    *stream = s;
  });
}

int gpu_stream_destroy(void* stream) {
  return gpu_api_call("gpu_stream_destroy", [&] {
    if (stream != nullptr) check(alap_gpu_stream_destroy(static_cast<alap_gpu_stream_t>(stream)), "stream destroy");
  });
}

int gpu_stream_sync(void* stream) {
  return gpu_api_call("gpu_stream_sync", [&] {
    check(alap_gpu_stream_synchronize(static_cast<alap_gpu_stream_t>(stream)), "stream sync (a kernel on it failed)");
  });
}

int gpu_graph_capture_begin(void* stream) {
  return gpu_api_call("gpu_graph_capture_begin", [&] {
    if (stream == nullptr) throw std::invalid_argument("the default stream cannot be captured");
    check(alap_gpu_stream_begin_capture(static_cast<alap_gpu_stream_t>(stream)), "begin capture");
  });
}

int gpu_graph_capture_end(void* stream, void** graph_exec, int* updated) {
  if (updated != nullptr) *updated = 0;
  return gpu_api_call("gpu_graph_capture_end", [&] {
    if (stream == nullptr || graph_exec == nullptr) throw std::invalid_argument("stream or graph_exec is null");
    auto drop_exec = [&] {
      if (*graph_exec != nullptr) (void)alap_gpu_graph_exec_destroy(static_cast<alap_gpu_graph_exec_t>(*graph_exec));
      *graph_exec = nullptr;
    };
    alap_gpu_graph_t graph = nullptr;
    const alap_gpu_error_t err = alap_gpu_stream_end_capture(static_cast<alap_gpu_stream_t>(stream), &graph);
    struct GraphGuard {
      alap_gpu_graph_t g;
      ~GraphGuard() {
        if (g != nullptr) (void)alap_gpu_graph_destroy(g);
      }
    } guard{graph};
    if (err != alap_gpu_success || graph == nullptr) {
      (void)alap_gpu_get_last_error();
      drop_exec();
      throw std::runtime_error(std::string("end capture (a call during the capture failed or cannot be captured): ") +
                               alap_gpu_error_string(err));
    }
    if (*graph_exec != nullptr) {
      const auto exec = static_cast<alap_gpu_graph_exec_t>(*graph_exec);
#if defined(ALAP_GPU_BACKEND_CUDA)
      cudaGraphExecUpdateResultInfo info{};
      const alap_gpu_error_t u = cudaGraphExecUpdate(exec, graph, &info);
#else
      hipGraphNode_t error_node = nullptr;
      hipGraphExecUpdateResult result{};
      const alap_gpu_error_t u = hipGraphExecUpdate(exec, graph, &error_node, &result);
#endif
      if (u == alap_gpu_success) {
        if (updated != nullptr) *updated = 1;
        return;
      }
      (void)alap_gpu_get_last_error();  // another topology: instantiate anew
      drop_exec();
    }
    alap_gpu_graph_exec_t exec = nullptr;
    check(alap_gpu_graph_instantiate(&exec, graph), "instantiate graph");
    *graph_exec = exec;
  });
}

int gpu_graph_launch(void* graph_exec, void* stream) {
  return gpu_api_call("gpu_graph_launch", [&] {
    if (graph_exec == nullptr) throw std::invalid_argument("graph_exec is null");
    check(alap_gpu_graph_launch(static_cast<alap_gpu_graph_exec_t>(graph_exec), static_cast<alap_gpu_stream_t>(stream)),
          "graph launch");
  });
}

int gpu_graph_destroy(void* graph_exec) {
  return gpu_api_call("gpu_graph_destroy", [&] {
    if (graph_exec != nullptr) check(alap_gpu_graph_exec_destroy(static_cast<alap_gpu_graph_exec_t>(graph_exec)), "graph destroy");
  });
}

}  // extern "C"

}  // namespace alap::gpu
