// A library that looks like libalap_gpu.so but exports only gpu_device_count: GpuBackend must
// refuse it with a reason naming the missing calls (tests/core/runtime/gpu_backend_test.cpp).
#include <cstdint>

extern "C" int gpu_device_count(int* count) {
  *count = 1;
  return 0;
}
