// What this x86 CPU (and the OS, for the wider register state) can run, read once with cpuid
// and xgetbv. The one place kernels ask; GCC and clang spell __builtin_cpu_supports differently
// (clang 14 has no "f16c" or "avxvnni"), so the bits are read directly.
#pragma once

namespace alap::kernels {

struct CpuFeatures {
  bool ssse3 = false, sse41 = false;
  bool avx = false, fma = false, f16c = false, avx2 = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false;
  bool avxvnni = false;
  // AMX-TILE and AMX-BF16 (TDPBF16PS; Xeon since Sapphire Rapids) with AVX512-BF16 (VCVTNE2PS2BF16),
  // the OS saving the tile state (XCR0 bits 17-18), and on Linux this process's permission to use
  // it (arch_prctl ARCH_REQ_XCOMP_PERM, asked once here): what the AMX prefill needs.
  bool amx_bf16 = false;
  bool amx_int8 = false;  // and AMX-INT8 (TDPBSSD): the prompt tiles' packed-K scores
  bool amd = false;  // vendor "AuthenticAMD" (or "HygonGenuine", Zen-derived)
  unsigned family = 0;  // display family: base, plus extended when base is 0xF (Zen 5: 0x1A)

  bool amd_zen() const { return amd && family >= 0x17; }

  bool sse4_set() const { return ssse3 && sse41; }  // what the sse4 variant needs
  bool avx2_set() const { return avx2 && fma && f16c; }  // what the avx2 variant needs
  bool avx512vnni_set() const { return avx2_set() && avx512f && avx512bw && avx512vl && avx512vnni; }
  bool avxvnni_set() const { return avx2_set() && avxvnni; }
};

const CpuFeatures& cpu_features();

}  // namespace alap::kernels
