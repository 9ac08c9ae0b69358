// A run record of docs/bench/cpu.md (session 58), not part of the build: the Q8_0 pair tile's block
// (session 57's tilemb.cpp, two groups x T tokens of vpdpbusd chains started at kMagic) with its
// f32 steps as the kernel had them (MODE 7: bits - kMagic, dw * dx, FMA: three ops a token) and as
// scale_step has them now (MODE 15: fmsub(bits, dw, kMagic * dw), then an FMA with dx: two ops, and
// kMagic * dw once for the tokens). Prints the median over 41 alternating pairs of runs of the new
// rate over the old, for T = 6 (the pair tiles' tokens), 8 and 4. MODE bits: 1 weights loaded (else
// registers), 2 activations broadcast from memory (else a register), 4 the f32 steps (else int adds),
// 8 the fused form.
//   g++ -O3 -march=icelake-server -o fmsmb docs/bench/runs/session58/fmsmb.cpp && ./fmsmb
#include <immintrin.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
alignas(64) uint8_t W[2][64 * 8 * 64];
alignas(64) int32_t X[64 * 8 * 8 + 64];
alignas(64) int32_t OFS[64 * 8 + 16];
alignas(64) float DX[64 * 8 + 16];
alignas(64) float DW[2][64 * 16];
// MODE bits: 1 = weights loaded (else registers), 2 = broadcasts loaded (else fixed regs), 4 = f32 steps (else int add)
template <int MODE, int T, int NB>
__attribute__((noinline)) double run(long reps) {
  __m512 acc[2][T];
  for (auto& r : acc) for (auto& v : r) v = _mm512_setzero_ps();
  __m512i wr0 = _mm512_set1_epi8(1), wr1 = _mm512_set1_epi8(2), xr = _mm512_set1_epi8(1);
  __asm__ volatile("" : "+v"(wr0), "+v"(wr1), "+v"(xr));
  const auto t0 = std::chrono::steady_clock::now();
  for (long rep = 0; rep < reps; ++rep) {
#pragma GCC unroll 1
    for (int b = 0; b < NB; ++b) {
      __m512i p[2][T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) { p[0][t] = _mm512_set1_epi32(OFS[b * T + t]); p[1][t] = p[0][t]; }
      const uint8_t* w0 = W[0] + 512 * b; const uint8_t* w1 = W[1] + 512 * b;
      const int32_t* x = X + 8 * T * b;
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        __m512i a0 = wr0, a1 = wr1;
        if constexpr (MODE & 1) { a0 = _mm512_load_si512(w0 + 64 * j); a1 = _mm512_load_si512(w1 + 64 * j); }
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          __m512i xb = xr;
          if constexpr (MODE & 2) __asm__("vpbroadcastd %1, %0" : "=v"(xb) : "m"(x[j * T + t]));
          __asm__("vpdpbusd %1, %2, %0" : "+v"(p[0][t]) : "v"(xb), "v"(a0));
          __asm__("vpdpbusd %1, %2, %0" : "+v"(p[1][t]) : "v"(xb), "v"(a1));
        }
      }
      if constexpr (!(MODE & 4)) {
#pragma GCC unroll 2
        for (int r = 0; r < 2; ++r)
#pragma GCC unroll 8
          for (int t = 0; t < T; ++t)
            acc[r][t] = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(acc[r][t]), p[r][t]));
      } else if constexpr (MODE & 8) {
#pragma GCC unroll 2
        for (int r = 0; r < 2; ++r) {
          const __m512 dw = _mm512_load_ps(DW[r] + 16 * b);
          const __m512 mdw = _mm512_mul_ps(dw, _mm512_set1_ps(12582912.0f));
#pragma GCC unroll 8
          for (int t = 0; t < T; ++t) {
            const __m512 g = _mm512_fmsub_ps(_mm512_castsi512_ps(p[r][t]), dw, mdw);
            acc[r][t] = _mm512_fmadd_ps(g, _mm512_set1_ps(DX[b * T + t]), acc[r][t]);
          }
        }
      } else {
#pragma GCC unroll 2
        for (int r = 0; r < 2; ++r) {
          const __m512 dw = _mm512_load_ps(DW[r] + 16 * b);
#pragma GCC unroll 8
          for (int t = 0; t < T; ++t) {
            const __m512 f = _mm512_sub_ps(_mm512_castsi512_ps(p[r][t]), _mm512_castsi512_ps(_mm512_set1_epi32(0x4B400000)));
            acc[r][t] = _mm512_fmadd_ps(f, _mm512_mul_ps(dw, _mm512_set1_ps(DX[b * T + t])), acc[r][t]);
          }
        }
      }
    }
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float sink = 0; for (auto& r : acc) for (auto& v : r) sink += _mm512_reduce_add_ps(v);
  volatile float vs = sink; (void)vs;
  return double(reps) * NB * 8 * 2 * T * 64 / sec / 1e9;
}
#include <algorithm>
#include <vector>
int main() {
  memset(W, 1, sizeof W); memset(X, 1, sizeof X);
  for (auto& v : OFS) v = 0x4B400000;
  for (auto& v : DX) v = 1.0f; for (auto& r : DW) for (auto& v : r) v = 1.0f;
  std::vector<double> r6, r8, r4, a, b;
  for (int k = 0; k < 41; ++k) {
    double x = run<7,6,16>(50000), y = run<15,6,16>(50000); r6.push_back(y / x); a.push_back(x); b.push_back(y);
    x = run<7,8,16>(40000), y = run<15,8,16>(40000); r8.push_back(y / x);
    x = run<7,4,16>(75000), y = run<15,4,16>(75000); r4.push_back(y / x);
  }
  for (auto* v : {&r6, &r8, &r4, &a, &b}) std::sort(v->begin(), v->end());
  std::printf("new/old rate medians: T6 %.3f T8 %.3f T4 %.3f; T6 old max %.0f new max %.0f\n", r6[20], r8[20], r4[20], a.back(), b.back());
}
