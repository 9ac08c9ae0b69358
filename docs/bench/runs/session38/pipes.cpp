// pipes: what a vpdpbusd shares with the other instructions of a packed prefill tile on this core.
// Twelve independent 512-bit vpdpbusd chains a step (the dot-peak probe's shape), then the same
// step with each extra kind of instruction the tiles also issue: f32 FMAs (the scale steps),
// f32 adds (the 1.5·2^23 conversion), integer ANDs (nibble unpacking), 64-byte loads (weight
// vectors) and 4-byte broadcasts (dx, xs). The dot rate falls by the extra instructions' share
// of whatever unit they share with the dots. A run record of docs/bench/cpu.md (session 38), not
// part of the build:
//
//   g++ -O2 -mavx512f -mavx512bw -mavx512vnni -o pipes docs/bench/runs/session38/pipes.cpp && ./pipes
#include <immintrin.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

namespace {

alignas(64) int32_t acts[64];
alignas(64) uint8_t weights[64 * 16];

enum Extra { kNone, kFma, kAdd, kAnd, kLoad, kBroadcast };

// One dot step with its broadcast operand in a register or in memory (as the tiles issue it).
#define DOT_REG(a) __asm__("vpdpbusd %1, %2, %0" : "+v"(a) : "v"(w1), "v"(w0))
#define DOT_MEM(a, off) __asm__("vpdpbusd " #off "(%1)%{1to16%}, %2, %0" : "+v"(a) : "r"(x), "v"(w0))

template <bool kMemDot, Extra kExtra, int kN>
__attribute__((noinline)) double dots_per_second(long steps) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0,
          a9 = a0, a10 = a0, a11 = a0;
  // Separate variables, not arrays: GCC kept arrays in memory across the asm statements, which
  // timed store-to-load forwarding instead of the units.
  __m512 f0 = _mm512_setzero_ps(), f1 = f0, f2 = f0, f3 = f0, f4 = f0, f5 = f0;
  __m512i v0 = a0, v1 = a0, v2 = a0, v3 = a0, v4 = a0, v5 = a0;
  const __m512i w0 = _mm512_load_si512(weights), w1 = _mm512_load_si512(weights + 64);
  const __m512 g0 = _mm512_set1_ps(1.0f), g1 = _mm512_setzero_ps();
  const int32_t* x = acts;
  const uint8_t* wp = weights;
#define EXTRA(i, fv, vv)                                                                                          \
  if constexpr (kN > i) {                                                                                         \
    if constexpr (kExtra == kFma) __asm__("vfmadd231ps %1, %2, %0" : "+v"(fv) : "v"(g1), "v"(g0));               \
    if constexpr (kExtra == kAdd) __asm__("vaddps %1, %0, %0" : "+v"(fv) : "v"(g1));                              \
    if constexpr (kExtra == kAnd) __asm__("vpandd %1, %0, %0" : "+v"(vv) : "v"(w1));                              \
    if constexpr (kExtra == kLoad) __asm__ volatile("vmovdqu64 %c2(%1), %0" : "=v"(vv) : "r"(wp), "i"(64 * i));   \
    if constexpr (kExtra == kBroadcast) __asm__ volatile("vbroadcastss %c2(%1), %0" : "=v"(fv) : "r"(x), "i"(4 * i)); \
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (long s = 0; s < steps; ++s) {
    if constexpr (kMemDot) {
      DOT_MEM(a0, 0); DOT_MEM(a1, 4); DOT_MEM(a2, 8); DOT_MEM(a3, 12); DOT_MEM(a4, 16); DOT_MEM(a5, 20);
      DOT_MEM(a6, 24); DOT_MEM(a7, 28); DOT_MEM(a8, 32); DOT_MEM(a9, 36); DOT_MEM(a10, 40); DOT_MEM(a11, 44);
    } else {
      DOT_REG(a0); DOT_REG(a1); DOT_REG(a2); DOT_REG(a3); DOT_REG(a4); DOT_REG(a5);
      DOT_REG(a6); DOT_REG(a7); DOT_REG(a8); DOT_REG(a9); DOT_REG(a10); DOT_REG(a11);
    }
    EXTRA(0, f0, v0) EXTRA(1, f1, v1) EXTRA(2, f2, v2) EXTRA(3, f3, v3) EXTRA(4, f4, v4) EXTRA(5, f5, v5)
  }
#undef EXTRA
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  __m512i t = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                               _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
  t = _mm512_add_epi32(t, _mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11)));
  t = _mm512_add_epi32(t, _mm512_add_epi32(_mm512_add_epi32(v0, v1), _mm512_add_epi32(_mm512_add_epi32(v2, v3),
                                                                                       _mm512_add_epi32(v4, v5))));
  const __m512 ft = _mm512_add_ps(_mm512_add_ps(f0, f1), _mm512_add_ps(_mm512_add_ps(f2, f3), _mm512_add_ps(f4, f5)));
  volatile int sink_i = _mm512_reduce_add_epi32(t);
  volatile float sink_f = _mm512_reduce_add_ps(ft);
  (void)sink_i;
  (void)sink_f;
  return static_cast<double>(steps) * 12 * 64 / sec / 1e9;  // GMAC/s (64 multiply-adds a vpdpbusd)
}

}  // namespace

int main() {
  const long n = 30000000;
  for (int round = 0; round < 3; ++round) {
    std::printf("GMAC/s of 12 vpdpbusd a step, broadcast operand in a register: alone %.0f | +3 FMA %.0f, +6 FMA %.0f | "
                "+4 f32 add %.0f | +4 int and %.0f\n",
                dots_per_second<false, kNone, 0>(n), dots_per_second<false, kFma, 3>(n),
                dots_per_second<false, kFma, 6>(n), dots_per_second<false, kAdd, 4>(n),
                dots_per_second<false, kAnd, 4>(n));
    std::printf("  broadcast operand in memory: alone %.0f | +3 zmm loads %.0f, +6 %.0f | +3 broadcasts %.0f, +6 %.0f\n",
                dots_per_second<true, kNone, 0>(n), dots_per_second<true, kLoad, 3>(n),
                dots_per_second<true, kLoad, 6>(n), dots_per_second<true, kBroadcast, 3>(n),
                dots_per_second<true, kBroadcast, 6>(n));
  }
  return 0;
}
