// GpuBackend's probe without a GPU: no library, a file that is no library, a library lacking
// symbols, a library reporting no device, and the host emulation (tests/support/host_gpu_ops.cpp)
// as a ready backend with device memory accounting.
#include "core/runtime/gpu_backend.h"

#include <gtest/gtest.h>

#include "tests/support/scoped_env.h"
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace alap {
namespace {

using test::ScopedEnv;

TEST(GpuBackend, NoLibraryMeansCpuWithPlainReason) {
  const GpuBackend::Probe p =
      GpuBackend::probe_paths({"/nonexistent/dir/libalap_gpu.so", "libalap_gpu_not_installed_anywhere.so"});
  EXPECT_EQ(p.backend, nullptr);
  EXPECT_EQ(p.reason, "this build has no GPU library (libalap_gpu.so not found): running on the CPU");
}

TEST(GpuBackend, EnvironmentPathIsTheOnlyCandidate) {
  {
    ScopedEnv env("ALAP_GPU_LIBRARY", "/nonexistent/libalap_gpu.so");
    EXPECT_EQ(GpuBackend::default_candidates(), std::vector<std::string>{"/nonexistent/libalap_gpu.so"});
    const GpuBackend::Probe p = GpuBackend::probe();
    EXPECT_EQ(p.backend, nullptr);
    EXPECT_NE(p.reason.find("libalap_gpu.so not found"), std::string::npos) << p.reason;
  }
  ::unsetenv("ALAP_GPU_LIBRARY");
  const std::vector<std::string> c = GpuBackend::default_candidates();
  ASSERT_GE(c.size(), 3u);
  const std::string exe_dir = std::filesystem::read_symlink("/proc/self/exe").parent_path().string();
  EXPECT_EQ(c[0], exe_dir + "/libalap_gpu.so");
  EXPECT_EQ(c[1], exe_dir + "/../lib/alap/libalap_gpu.so");
  EXPECT_EQ(c.back(), "libalap_gpu.so");
}

TEST(GpuBackend, FileThatIsNoLibraryGivesLoadFailure) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("alap_not_a_library_" + std::to_string(::getpid()) + ".so")).string();
  {
    std::ofstream f(path);
    f << "this is not an ELF file\n";
  }
  ScopedEnv env("ALAP_GPU_LIBRARY", path);
  const GpuBackend::Probe p = GpuBackend::probe();
  std::filesystem::remove(path);
  EXPECT_EQ(p.backend, nullptr);
  EXPECT_EQ(p.reason.rfind("the GPU library failed to load: ", 0), 0u) << p.reason;
  EXPECT_NE(p.reason.find(path), std::string::npos) << p.reason;  // dlerror names the file
  EXPECT_NE(p.reason.find("install ROCm 6.x"), std::string::npos) << p.reason;
  EXPECT_NE(p.reason.find("running on the CPU"), std::string::npos) << p.reason;
}

TEST(GpuBackend, LibraryMissingSymbolsIsRefused) {
  const GpuBackend::Probe p = GpuBackend::probe_paths({ALAP_GPU_INCOMPLETE_LIBRARY});
  EXPECT_EQ(p.backend, nullptr);
  EXPECT_NE(p.reason.find("is incomplete (missing gpu_abi_version, gpu_device_open, gpu_mem_info"), std::string::npos)
      << p.reason;
  EXPECT_NE(p.reason.find("attn_k8_prefill_run"), std::string::npos) << p.reason;
  EXPECT_EQ(p.reason.find("gpu_device_count"), std::string::npos) << p.reason;  // that one is there
}

TEST(GpuBackend, LibraryOfAnotherInterfaceVersionIsRefused) {
  // Every symbol is there, but the structs may be laid out differently: reading them would go wrong
  // without any error, so the app refuses the library.
  ScopedEnv abi("ALAP_HOST_GPU_ABI", std::to_string(gpu::kGpuAbiVersion - 1));
  const GpuBackend::Probe p = GpuBackend::probe_paths({ALAP_GPU_HOST_LIBRARY});
  EXPECT_EQ(p.backend, nullptr);
  EXPECT_EQ(p.failure, GpuBackend::Failure::incomplete_library);
  EXPECT_EQ(p.reason, std::string("the GPU library ") + ALAP_GPU_HOST_LIBRARY + " has interface version " +
                          std::to_string(gpu::kGpuAbiVersion - 1) + ", this version of Alap needs " +
                          std::to_string(gpu::kGpuAbiVersion) + ": running on the CPU");
}

TEST(GpuBackend, NoDeviceGivesTheRuntimeMessage) {
  ScopedEnv devices("ALAP_HOST_GPU_DEVICES", "0");
  const GpuBackend::Probe p = GpuBackend::probe_paths({ALAP_GPU_HOST_LIBRARY});
  EXPECT_EQ(p.backend, nullptr);
  EXPECT_EQ(p.reason, "no GPU device found: no device (host emulation with ALAP_HOST_GPU_DEVICES=0); running on the CPU");
}

TEST(GpuBackend, HostEmulationIsReadyAndCountsMemory) {
  ScopedEnv budget("ALAP_HOST_GPU_MEMORY", std::to_string(64u << 20));
  ScopedEnv lib("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  const GpuBackend::Probe p = GpuBackend::probe();
  ASSERT_NE(p.backend, nullptr) << p.reason;
  EXPECT_TRUE(p.reason.empty());
  const GpuBackend& gpu = *p.backend;
  EXPECT_EQ(gpu.device_name(), "Host emulation");
  EXPECT_EQ(gpu.arch(), "host");
  EXPECT_EQ(gpu.total_bytes(), 64u << 20);
  EXPECT_EQ(gpu.library_path(), ALAP_GPU_HOST_LIBRARY);
  EXPECT_EQ(gpu.describe(), "Host emulation (host, 0.1 GiB)");
  const uint64_t free0 = gpu.mem().free_bytes;
  EXPECT_EQ(free0, 64u << 20);
  {
    DeviceBuffer b(p.backend, 1u << 20, "test buffer");
    EXPECT_NE(b.get(), nullptr);
    EXPECT_EQ(gpu.mem().free_bytes, free0 - (1u << 20));
    DeviceBuffer moved = std::move(b);
    EXPECT_EQ(b.get(), nullptr);
    EXPECT_EQ(gpu.mem().free_bytes, free0 - (1u << 20));
  }
  EXPECT_EQ(gpu.mem().free_bytes, free0);
  // More than the device has: a GpuError naming the size and what it was for.
  try {
    DeviceBuffer too_big(p.backend, 65u << 20, "KV cache");
    FAIL() << "allocation beyond the budget succeeded";
  } catch (const GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("allocating 68157440 bytes for the KV cache failed"), std::string::npos)
        << e.what();
  }
  // check(): the library's own message comes through.
  const GpuOps& ops = gpu.ops();
  uint8_t xq[64];
  float x[16] = {};
  EXPECT_THROW(gpu.check(ops.gpu_quantize_act_q8(x, xq, 1, 16, nullptr), "quantising"), GpuError);
  try {
    gpu.check(ops.gpu_quantize_act_q8(x, xq, 1, 16, nullptr), "quantising");
  } catch (const GpuError& e) {
    EXPECT_EQ(std::string(e.what()), "GPU: quantising: gpu_quantize_act_q8: n_cols not a multiple of 32");
  }
  EXPECT_NO_THROW(gpu.check(0, "nothing"));
}

}  // namespace
}  // namespace alap
