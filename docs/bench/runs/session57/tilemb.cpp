// A run record of docs/bench/cpu.md (session 57), not part of the build: the Q8_0 pair tile's block
// outside the kernel: 12 int32 chains (2 groups x 6 tokens); per quad 2 weight loads, 6 broadcast
// loads and 12 vpdpbusd; per block of 8 quads the starts (broadcast loads) and either one int add a
// chain or the kernel's f32 steps (bits - kMagic, dw * dx, FMA). GMAC/s over 64 blocks (the weights
// 64 KB, from L2) and 16 (L1).
//   g++ -O3 -march=icelake-server -o tilemb docs/bench/runs/session57/tilemb.cpp && ./tilemb
#include <immintrin.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
alignas(64) uint8_t W[2][64 * 8 * 64];   // 2 groups x 64 blocks x 8 quads x 64 B (64 KB... L2)
alignas(64) int32_t X[64 * 8 * 6 + 64];    // activations: block, quad, token
alignas(64) int32_t OFS[64 * 6 + 16];
alignas(64) float DX[64 * 6 + 16];
alignas(64) float DW[2][64 * 16];
constexpr int T = 6;
template <int MODE, int NB>
__attribute__((noinline)) double run(long reps) {
  __m512 acc[2][T];
  for (auto& r : acc) for (auto& v : r) v = _mm512_setzero_ps();
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
        const __m512i a0 = _mm512_load_si512(w0 + 64 * j), a1 = _mm512_load_si512(w1 + 64 * j);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          __m512i xb;
          if constexpr (MODE == 3) xb = _mm512_set1_epi32(x[j * T + t]);
          else __asm__("vpbroadcastd %1, %0" : "=v"(xb) : "m"(x[j * T + t]));
          __asm__("vpdpbusd %1, %2, %0" : "+v"(p[0][t]) : "v"(xb), "v"(a0));
          __asm__("vpdpbusd %1, %2, %0" : "+v"(p[1][t]) : "v"(xb), "v"(a1));
        }
      }
      if constexpr (MODE == 0) {
#pragma GCC unroll 2
        for (int r = 0; r < 2; ++r)
#pragma GCC unroll 8
 for (int t = 0; t < T; ++t)
          acc[r][t] = _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(acc[r][t]), p[r][t]));
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
  return double(reps) * NB * 8 * 12 * 64 / sec / 1e9;
}
int main() {
  memset(W, 1, sizeof W); memset(X, 1, sizeof X); memset(OFS, 0, sizeof OFS);
  for (auto& v : DX) v = 1.0f; for (auto& r : DW) for (auto& v : r) v = 1.0f;
  for (int round = 0; round < 3; ++round) {
    std::printf("NB=64 (weights 64 KB): int-add end %.0f | f32 steps %.0f || NB=16 (16 KB): int-add %.0f | f32 %.0f | GCC broadcasts f32 %.0f\n",
      run<0, 64>(200000), run<1, 64>(200000), run<0, 16>(800000), run<1, 16>(800000), run<3, 16>(800000));
  }
}
