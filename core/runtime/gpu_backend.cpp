// GpuBackend: dlopen of libalap_gpu.so, symbol table, device probe (gpu_backend.h). The library is
// made RTLD_NODELETE before its first call: GPU runtimes register exit handlers and must never be
// unmapped under them. Not a device call of its own beyond probing and memory queries.
#include "core/runtime/gpu_backend.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace alap {

namespace {

constexpr const char* kSoname = "libalap_gpu.so";

std::string format_gib(uint64_t bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / static_cast<double>(1ull << 30));
  return buf;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string exe_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

const char* kRocmHint = " — on AMD RDNA3 install ROCm 6.x (Debian's HIP runtime does not know gfx11)";

}  // namespace

std::vector<std::string> GpuBackend::default_candidates() {
  if (const char* env = std::getenv("ALAP_GPU_LIBRARY"); env != nullptr && *env != '\0') return {env};
  std::vector<std::string> c;
  const std::string dir = exe_dir();
  if (!dir.empty()) {
    c.push_back(dir + "/" + kSoname);
    c.push_back(dir + "/../lib/alap/" + kSoname);
  }
#ifdef ALAP_GPU_BUILD_LIBRARY
  c.push_back(ALAP_GPU_BUILD_LIBRARY);  // this build tree's library (a developer's build)
#endif
  c.push_back(kSoname);
  return c;
}

GpuBackend::Probe GpuBackend::probe() { return probe_paths(default_candidates()); }

GpuBackend::Probe GpuBackend::probe_paths(const std::vector<std::string>& candidates) {
  Probe p;
  void* handle = nullptr;
  std::string path;
  for (const std::string& c : candidates) {
    const bool by_name = c.find('/') == std::string::npos;
    if (!by_name && !file_exists(c)) continue;
    dlerror();
    handle = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      path = c;
      break;
    }
    const char* err = dlerror();
    const std::string msg = err != nullptr ? err : "unknown dlopen error";
    // A bare soname the loader cannot find is "not present"; anything else (the file exists but is
    // no library, or a library it needs, such as the HIP runtime, is missing) is a load failure.
    if (by_name && msg.rfind(c + ":", 0) == 0 && msg.find("cannot open shared object file") != std::string::npos) {
      continue;
    }
    p.reason = "the GPU library failed to load: " + msg + kRocmHint + "; running on the CPU";
    p.failure = Failure::load_failed;
    return p;
  }
  if (handle == nullptr) {
    p.reason = "this build has no GPU library (libalap_gpu.so not found): running on the CPU";
    p.failure = Failure::no_library;
    return p;
  }

  std::shared_ptr<GpuBackend> b(new GpuBackend());
  b->path_ = path;
  std::string missing;
#define ALAP_GPU_RESOLVE(name)                                                                  \
  b->ops_.name = reinterpret_cast<decltype(b->ops_.name)>(dlsym(handle, #name));                \
  if (b->ops_.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
  ALAP_GPU_FUNCTIONS(ALAP_GPU_RESOLVE)
#undef ALAP_GPU_RESOLVE
  if (!missing.empty()) {
    dlclose(handle);
    p.reason = "the GPU library " + path + " is incomplete (missing " + missing +
               "); it does not match this version of Alap: running on the CPU";
    p.failure = Failure::incomplete_library;
    return p;
  }
  if (const int abi = b->ops_.gpu_abi_version(); abi != gpu::kGpuAbiVersion) {
    dlclose(handle);
    p.reason = "the GPU library " + path + " has interface version " + std::to_string(abi) +
               ", this version of Alap needs " + std::to_string(gpu::kGpuAbiVersion) + ": running on the CPU";
    p.failure = Failure::incomplete_library;
    return p;
  }
  b->handle_ = handle;
  // From the first call on, the runtime may hold state and exit handlers: keep the library mapped
  // for the life of the process (dlclose then only drops a reference).
  dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);

  int count = 0;
  const int rc = b->ops_.gpu_device_count(&count);
  if (rc != 0 || count <= 0) {
    const char* m = b->ops_.gpu_error_message();
    std::string why = m != nullptr && *m != '\0' ? m : (rc != 0 ? "the GPU runtime failed to start" : "no device");
    p.reason = "no GPU device found: " + why + "; running on the CPU";
    p.failure = Failure::no_device;
    return p;
  }
  gpu::gpu_device_info info{};
  if (b->ops_.gpu_device_open(0, &info) != 0) {
    p.reason = std::string("no GPU device found: device 0 does not open: ") + b->ops_.gpu_error_message() +
               "; running on the CPU";
    p.failure = Failure::no_device;
    return p;
  }
  info.name[sizeof info.name - 1] = '\0';
  info.arch[sizeof info.arch - 1] = '\0';
  b->name_ = info.name;
  b->arch_ = info.arch;
  b->multiprocessors_ = info.multiprocessors;
  b->runtime_version_ = info.runtime_version;
  b->total_bytes_ = info.total_bytes;
  p.backend = std::move(b);
  return p;
}

GpuBackend::~GpuBackend() {
  if (handle_ != nullptr) dlclose(handle_);
}

GpuMemInfo GpuBackend::mem() const {
  GpuMemInfo m;
  check(ops_.gpu_mem_info(&m.free_bytes, &m.total_bytes), "reading the device's free memory");
  return m;
}

std::string GpuBackend::describe() const {
  return name_ + " (" + arch_ + ", " + format_gib(total_bytes_) + ")";
}

void GpuBackend::check(int rc, const char* what) const {
  if (rc == 0) return;
  const char* m = ops_.gpu_error_message != nullptr ? ops_.gpu_error_message() : nullptr;
  throw GpuError(std::string("GPU: ") + what + ": " + (m != nullptr && *m != '\0' ? m : "failed"));
}

GpuBackend::BlasStatus GpuBackend::blas_status() const {
  char name[64] = {}, file[512] = {};
  BlasStatus st;
  st.state = ops_.gpu_blas_status(name, sizeof name, file, sizeof file);
  st.name = name;
  st.file = file;
  return st;
}

DeviceBuffer::DeviceBuffer(std::shared_ptr<GpuBackend> backend, size_t bytes, const char* what)
    : backend_(std::move(backend)), bytes_(bytes) {
  void* p = nullptr;
  if (backend_->ops().gpu_alloc(&p, bytes == 0 ? 1 : bytes) != 0 || p == nullptr) {
    const char* m = backend_->ops().gpu_error_message();
    throw GpuError("GPU: allocating " + std::to_string(bytes) + " bytes for the " + what + " failed: " +
                   (m != nullptr && *m != '\0' ? m : "out of device memory"));
  }
  ptr_ = p;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() noexcept {
  if (ptr_ != nullptr && backend_) backend_->ops().gpu_release(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : backend_(std::move(o.backend_)), ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    backend_ = std::move(o.backend_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

}  // namespace alap
