// A run record of docs/bench/cpu.md (session 56), not part of the build:
//   g++ -O2 -mavx512f -mavx512bw -mavx512vnni -o bcast docs/bench/runs/session56/bcast.cpp && ./bcast
// Which form of a broadcast activation feeds vpdpbusd fastest on this core: 12 chains a step.
#include <immintrin.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
alignas(64) int32_t acts[64];
alignas(64) uint8_t weights[64 * 16];
enum Form { kReg, kEmbedded, kSeparate, kSeparateShared2 };
template <Form F>
__attribute__((noinline)) double rate(long steps) {
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, a8 = a0,
          a9 = a0, a10 = a0, a11 = a0;
  const __m512i w0 = _mm512_load_si512(weights), w1 = _mm512_load_si512(weights + 64);
  const int32_t* x = acts;
  __asm__ volatile("" : "+r"(x));
#define R(a) __asm__("vpdpbusd %1, %2, %0" : "+v"(a) : "v"(w1), "v"(w0));
#define E(a, off) __asm__("vpdpbusd " #off "(%1)%{1to16%}, %2, %0" : "+v"(a) : "r"(x), "v"(w0));
#define S(a, off) { __m512i b; __asm__("vpbroadcastd " #off "(%1), %0" : "=v"(b) : "r"(x)); \
                    __asm__("vpdpbusd %1, %2, %0" : "+v"(a) : "v"(b), "v"(w0)); }
#define S2(a, c, off) { __m512i b; __asm__("vpbroadcastd " #off "(%1), %0" : "=v"(b) : "r"(x)); \
                    __asm__("vpdpbusd %1, %2, %0" : "+v"(a) : "v"(b), "v"(w0)); \
                    __asm__("vpdpbusd %1, %2, %0" : "+v"(c) : "v"(b), "v"(w1)); }
  const auto t0 = std::chrono::steady_clock::now();
  for (long s = 0; s < steps; ++s) {
    if constexpr (F == kReg) { R(a0) R(a1) R(a2) R(a3) R(a4) R(a5) R(a6) R(a7) R(a8) R(a9) R(a10) R(a11) }
    if constexpr (F == kEmbedded) { E(a0,0) E(a1,4) E(a2,8) E(a3,12) E(a4,16) E(a5,20) E(a6,24) E(a7,28) E(a8,32) E(a9,36) E(a10,40) E(a11,44) }
    if constexpr (F == kSeparate) { S(a0,0) S(a1,4) S(a2,8) S(a3,12) S(a4,16) S(a5,20) S(a6,24) S(a7,28) S(a8,32) S(a9,36) S(a10,40) S(a11,44) }
    if constexpr (F == kSeparateShared2) { S2(a0,a1,0) S2(a2,a3,4) S2(a4,a5,8) S2(a6,a7,12) S2(a8,a9,16) S2(a10,a11,20) }
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  __m512i t = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                               _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
  t = _mm512_add_epi32(t, _mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11)));
  volatile int sink = _mm512_reduce_add_epi32(t); (void)sink;
  return static_cast<double>(steps) * 12 * 64 / sec / 1e9;
}
int main() {
  const long n = 30000000;
  for (int r = 0; r < 3; ++r)
    std::printf("GMAC/s, 12 vpdpbusd a step: registers %.0f | embedded {1to16} from memory %.0f | vpbroadcastd + register %.0f | one vpbroadcastd for two dots %.0f\n",
                rate<kReg>(n), rate<kEmbedded>(n), rate<kSeparate>(n), rate<kSeparateShared2>(n));
}
