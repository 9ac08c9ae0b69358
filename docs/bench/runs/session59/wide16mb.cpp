// A run record of docs/bench/cpu.md (session 59), not part of the build (a form not kept): the plain
// AVX2 Q8_0 tile's inner loop with the sign trick (old) and in s16 vpmaddwd (wide), data in L1.
//   g++ -O2 -o wide16mb wide16mb.cpp && ./wide16mb
// microbenchmark: AVX2 Q8_0 tile inner loop, old (sign trick) vs wide (s16 madd), data in L1
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
constexpr int T = 4, NB = 8;
alignas(64) uint8_t W[NB * 8 * 64];
alignas(64) int32_t X[NB * 8 * T], X16[NB * 8 * T * 2];
__attribute__((target("avx2"), noinline)) void old_loop(long n, __m256i* out) {
  __m256i p[T] = {};
  for (long i = 0; i < n; ++i)
    for (int b = 0; b < NB; ++b) {
      __m256i q[T];
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m256i wq = _mm256_xor_si256(_mm256_load_si256((const __m256i*)(W + 64 * (8 * b + j))), _mm256_set1_epi8(-128));
        const __m256i aw = _mm256_abs_epi8(wq);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t) {
          q[t] = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(_mm256_set1_epi32(X[(8 * b + j) * T + t]), wq));
          p[t] = _mm256_add_epi32(p[t], _mm256_madd_epi16(q[t], _mm256_set1_epi16(1)));
          asm volatile("" : "+x"(p[t]));
        }
      }
    }
  for (int t = 0; t < T; ++t) out[t] = p[t];
}
__attribute__((target("avx2"), noinline)) void wide_loop(long n, __m256i* out) {
  __m256i p[T] = {};
  for (long i = 0; i < n; ++i)
    for (int b = 0; b < NB; ++b) {
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        const __m256i c = _mm256_load_si256((const __m256i*)(W + 64 * (8 * b + j)));
        const __m256i e = _mm256_and_si256(c, _mm256_set1_epi16(0xFF)), o = _mm256_srli_epi16(c, 8);
        const int32_t* x = X16 + 2 * ((8 * b + j) * T);
#pragma GCC unroll 4
        for (int t = 0; t < T; ++t)
        { p[t] = _mm256_add_epi32(p[t], _mm256_add_epi32(_mm256_madd_epi16(e, _mm256_set1_epi32(x[2 * t])),
                                                         _mm256_madd_epi16(o, _mm256_set1_epi32(x[2 * t + 1]))));
          asm volatile("" : "+x"(p[t])); }
      }
    }
  for (int t = 0; t < T; ++t) out[t] = p[t];
}
int main() {
  for (auto& w : W) w = 77;
  for (auto& x : X) x = 0x01020304;
  for (auto& x : X16) x = 0x00030001;
  __m256i o[T];
  long n = 100000;
  for (int r = 0; r < 30; ++r) {
    double tm[2];
    for (int m = 0; m < 2; ++m) {
      auto t0 = std::chrono::steady_clock::now();
      m ? wide_loop(n, o) : old_loop(n, o);
      tm[m] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    double macs = double(n) * NB * 8 * T * 32;
    printf("old %.1f GMAC/s  wide %.1f GMAC/s\n", macs / tm[0] / 1e9, macs / tm[1] / 1e9);
  }
}
