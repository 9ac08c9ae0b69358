// cpuid leaf 0 (vendor), leaf 1 (family; SSSE3, SSE4.1, AVX, FMA, F16C, OSXSAVE), leaf 7.0 (AVX2,
// AVX-512 F/BW/VL/VNNI, AMX-TILE/BF16), leaf 7.1 (AVX-VNNI, AVX512-BF16), and xgetbv(0) for the
// YMM (bits 1-2), ZMM/opmask (bits 5-7) and tile (bits 17-18) state the OS saves. Also the choice of
// light_read_ahead() (quant.h), made from the vendor, and whether prefill uses AMX (amx_prefill()).
#include "cpu_features.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "alap/kernels/quant.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace alap::kernels {

namespace {

// Linux hands out the 8 KB tile state only to a process that asks (since 5.16); without the
// permission the first tile instruction faults. Elsewhere no AMX is used.
bool amx_permitted() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  f.amd = std::strcmp(vendor, "AuthenticAMD") == 0 || std::strcmp(vendor, "HygonGenuine") == 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  f.family = (a >> 8) & 0xFu;
  if (f.family == 0xFu) f.family += (a >> 20) & 0xFFu;
  f.ssse3 = (c >> 9) & 1u;
  f.sse41 = (c >> 19) & 1u;
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
    const bool tile_state = (xcr0 & 0x60000u) == 0x60000u;
    const bool amx_bf16 = tile_state && ((d >> 24) & 1u) && ((d >> 22) & 1u);
    const bool amx_int8 = (d >> 25) & 1u;
    __cpuid_count(7, 1, a, b, c, d);
    f.avxvnni = f.avx2 && ((a >> 4) & 1u);
    f.amx_bf16 = amx_bf16 && f.avx512f && ((a >> 5) & 1u) && amx_permitted();
    f.amx_int8 = f.amx_bf16 && amx_int8;
  }
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

namespace {

// quant.h's ReadAhead as a number (automatic 0, on 1, off 2); atomic because a benchmark may
// switch it between tokens while the pool's threads wait.
std::atomic<int> g_read_ahead{0};

bool automatic_read_ahead() {
  static const bool on = [] {
    if (const char* env = std::getenv("ALAP_CPU_READ_AHEAD"); env != nullptr) {
      if (std::strcmp(env, "on") == 0) return true;
      if (std::strcmp(env, "off") == 0) return false;
    }
    return !cpu_features().amd_zen();
  }();
  return on;
}

}  // namespace

void set_light_read_ahead(ReadAhead mode) { g_read_ahead.store(static_cast<int>(mode), std::memory_order_relaxed); }

namespace {

std::atomic<bool> g_amx_allowed{true};
std::atomic<bool> g_pair_tiles{true};

bool amx_not_refused() {
  static const bool ok = [] {
    const char* env = std::getenv("ALAP_CPU_AMX");
    return env == nullptr || std::strcmp(env, "off") != 0;
  }();
  return ok;
}

}  // namespace

void set_amx_prefill(bool allowed) { g_amx_allowed.store(allowed, std::memory_order_relaxed); }

void set_pair_tiles(bool allowed) { g_pair_tiles.store(allowed, std::memory_order_relaxed); }
bool pair_tiles_allowed() { return g_pair_tiles.load(std::memory_order_relaxed); }

bool amx_prefill() {
  return cpu_features().amx_bf16 && amx_not_refused() && g_amx_allowed.load(std::memory_order_relaxed);
}

bool light_read_ahead() {
  switch (static_cast<ReadAhead>(g_read_ahead.load(std::memory_order_relaxed))) {
    case ReadAhead::on:
      return true;
    case ReadAhead::off:
      return false;
    default:
      return automatic_read_ahead();
  }
}

}  // namespace alap::kernels
