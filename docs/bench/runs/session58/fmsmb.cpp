// A run record of docs/bench/cpu.md (session 58), not part of the build: the Q8_0 pair tile's block
// (two groups x T tokens of vpdpbusd chains started at kMagic, weights loaded, each token's quad
// broadcast once for both groups) with its f32 steps as the kernel had them (Old: bits - kMagic,
// dw * dx, FMA: three ops a token) and as scale_step has them now (Fused: fmsub(bits, dw, kMagic*dw),
// then an FMA with dx: two ops, kMagic * dw once for the tokens). Prints, over 41 alternating pairs of
// runs, the median of Fused's rate over Old's for T = 6 (the pair tiles' tokens), 8 and 4.
//   g++ -O3 -march=icelake-server -o fmsmb docs/bench/runs/session58/fmsmb.cpp && ./fmsmb
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {
constexpr int kBlocks = 16;  // 16 KB of weights a group: L1
alignas(64) uint8_t g_w[2][kBlocks * 512];
alignas(64) int32_t g_x[kBlocks * 8 * 8];
alignas(64) int32_t g_start[kBlocks * 8];
alignas(64) float g_dx[kBlocks * 8];
alignas(64) float g_dw[2][kBlocks * 16];

struct Old {
  template <int T>
  static void step(__m512 (&acc)[T], const __m512i (&p)[T], __m512 dw, const float* dx) {
    const __m512 magic = _mm512_castsi512_ps(_mm512_set1_epi32(0x4B400000));
    for (int t = 0; t < T; ++t) {
      acc[t] = _mm512_fmadd_ps(_mm512_sub_ps(_mm512_castsi512_ps(p[t]), magic), _mm512_mul_ps(dw, _mm512_set1_ps(dx[t])),
                               acc[t]);
    }
  }
};
struct Fused {
  template <int T>
  static void step(__m512 (&acc)[T], const __m512i (&p)[T], __m512 dw, const float* dx) {
    const __m512 mdw = _mm512_mul_ps(dw, _mm512_set1_ps(12582912.0f));
    for (int t = 0; t < T; ++t) {
      acc[t] = _mm512_fmadd_ps(_mm512_fmsub_ps(_mm512_castsi512_ps(p[t]), dw, mdw), _mm512_set1_ps(dx[t]), acc[t]);
    }
  }
};

// GMAC/s of `reps` passes over the kBlocks blocks, T tokens, the f32 step of Step.
template <class Step, int T>
__attribute__((noinline)) double rate(long reps) {
  __m512 acc[2][T];
  for (auto& row : acc) std::fill(std::begin(row), std::end(row), _mm512_setzero_ps());
  const auto t0 = std::chrono::steady_clock::now();
#pragma GCC unroll 1
  for (long i = 0; i < reps * kBlocks; ++i) {
    const int b = static_cast<int>(i % kBlocks);
    {
      __m512i p[2][T];
#pragma GCC unroll 8
      for (int t = 0; t < T; ++t) p[1][t] = p[0][t] = _mm512_set1_epi32(g_start[b * T + t]);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m512i w0 = _mm512_load_si512(g_w[0] + 512 * b + 64 * j);
        const __m512i w1 = _mm512_load_si512(g_w[1] + 512 * b + 64 * j);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) {
          __m512i xb;
          __asm__("vpbroadcastd %1, %0" : "=v"(xb) : "m"(g_x[(8 * b + j) * T + t]));
          __asm__("vpdpbusd %1, %2, %0" : "+v"(p[0][t]) : "v"(xb), "v"(w0));
          __asm__("vpdpbusd %1, %2, %0" : "+v"(p[1][t]) : "v"(xb), "v"(w1));
        }
      }
      for (int r = 0; r < 2; ++r) {
        Step::template step<T>(acc[r], p[r], _mm512_load_ps(g_dw[r] + 16 * b), g_dx + b * T);
      }
    }
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float sink = 0;
  for (auto& row : acc) {
    for (auto& v : row) sink += _mm512_reduce_add_ps(v);
  }
  volatile float keep = sink;
  (void)keep;
  return double(reps) * kBlocks * 8 * 2 * T * 64 / sec / 1e9;
}

template <int T>
double median_ratio(long reps) {
  std::vector<double> r;
  for (int k = 0; k < 41; ++k) {
    const double old_rate = rate<Old, T>(reps);
    r.push_back(rate<Fused, T>(reps) / old_rate);
  }
  std::sort(r.begin(), r.end());
  return r[20];
}
}  // namespace

int main() {
  std::memset(g_w, 1, sizeof g_w);
  std::memset(g_x, 1, sizeof g_x);
  std::fill(std::begin(g_start), std::end(g_start), 0x4B400000);  // the sums' bits are floats, never denormal
  std::fill(std::begin(g_dx), std::end(g_dx), 1.0f);
  for (auto& row : g_dw) std::fill(std::begin(row), std::end(row), 1.0f);
  const double t6 = median_ratio<6>(50000), t8 = median_ratio<8>(40000), t4 = median_ratio<4>(75000);
  std::printf("Fused / Old rate, medians of 41: T6 %.3f  T8 %.3f  T4 %.3f\n", t6, t8, t4);
}
