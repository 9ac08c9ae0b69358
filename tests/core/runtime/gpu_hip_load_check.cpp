// Opens the HIP build of the GPU library (linked for gfx1030 by tests/kernels/gpu's
// gpu_hip_gfx1030_link) with the app's own loader: every function the backend needs must resolve,
// so the only acceptable outcomes are a ready device or "no GPU device found" (CI has no GPU).
// A missing or incomplete library, or one the loader cannot open, fails. Exit 77 = not built.
#include <cstdio>
#include <filesystem>

#include "core/runtime/gpu_backend.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gpu_hip_load_check LIBRARY\n");
    return 2;
  }
  if (!std::filesystem::exists(argv[1])) {
    std::printf("SKIP: %s was not built (hipcc missing)\n", argv[1]);
    return 77;
  }
  const alap::GpuBackend::Probe p = alap::GpuBackend::probe_paths({argv[1]});
  using F = alap::GpuBackend::Failure;
  if (p.backend) {
    std::printf("ok: the HIP library loaded and opened a device\n");
    return 0;
  }
  std::printf("probe: %s\n", p.reason.c_str());
  if (p.failure == F::no_device) {
    std::printf("ok: the HIP library loaded and resolved every function; no device here\n");
    return 0;
  }
  std::printf("FAIL: the HIP library did not load completely\n");
  return 1;
}
