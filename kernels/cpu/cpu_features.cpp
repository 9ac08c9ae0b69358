// cpuid leaf 1 (AVX, FMA, F16C, OSXSAVE), leaf 7.0 (AVX2, AVX-512 F/BW/VL/VNNI), leaf 7.1
// (AVX-VNNI), and xgetbv(0) for the YMM (bits 1-2) and ZMM/opmask (bits 5-7) state the OS saves.
#include "cpu_features.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace alap::kernels {

namespace {

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1u;
  uint64_t xcr0 = 0;
  if (osxsave) {
    uint32_t lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<uint64_t>(hi) << 32) | lo;
  }
  const bool ymm_state = (xcr0 & 0x6u) == 0x6u;
  const bool zmm_state = (xcr0 & 0xE6u) == 0xE6u;
  f.avx = ymm_state && ((c >> 28) & 1u);
  f.fma = f.avx && ((c >> 12) & 1u);
  f.f16c = f.avx && ((c >> 29) & 1u);
  if (__get_cpuid_max(0, nullptr) >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.avx2 = f.avx && ((b >> 5) & 1u);
    f.avx512f = zmm_state && ((b >> 16) & 1u);
    f.avx512bw = f.avx512f && ((b >> 30) & 1u);
    f.avx512vl = f.avx512f && ((b >> 31) & 1u);
    f.avx512vnni = f.avx512f && ((c >> 11) & 1u);
    __cpuid_count(7, 1, a, b, c, d);
    f.avxvnni = f.avx2 && ((a >> 4) & 1u);
  }
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

}  // namespace alap::kernels
