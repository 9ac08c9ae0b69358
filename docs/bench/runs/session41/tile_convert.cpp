// Session 41: the in-loop rate of the 8 rows x 3 tokens tile (512-bit FMAs, 144 rows x 896 columns
// x 63 tokens, segments of 512 columns) with its rows loaded from an f32 panel, against the same
// rows read as f16 and converted (vcvtph2ps) in the loop. GMAC/s, best of 30, three rounds.
//   g++ -O2 -std=c++20 -march=native tile_convert.cpp -o tile_convert && ./tile_convert
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
using Clock = std::chrono::steady_clock;
template <int R, int T, bool H>
__attribute__((noinline)) void tiles(const void* wv_, const float* x, size_t rows, size_t nt, size_t n, size_t seg, __m512* acc, float* out) {
  for (size_t r = 0; r + R <= rows; r += R) {
    for (size_t c0 = 0; c0 < n; c0 += seg) {
      const size_t c1 = std::min(n, c0 + seg);
      for (size_t t = 0; t + T <= nt; t += T) {
        __m512* ac = acc + (t / T) * R * T;
        __m512 a[R][T];
        for (int i = 0; i < R; ++i) for (int k = 0; k < T; ++k) a[i][k] = c0 == 0 ? _mm512_setzero_ps() : ac[i * T + k];
        const float* xs[T];
        for (int k = 0; k < T; ++k) xs[k] = x + (t + k) * n;
        const float* pwf = static_cast<const float*>(wv_) + r * n + c0 * R;
        const uint16_t* pwh = static_cast<const uint16_t*>(wv_) + r * n + c0 * R;
        for (size_t c = c0; c < c1; c += 16, pwf += 16 * R, pwh += 16 * R) {
          __m512 xv[T];
#pragma GCC unroll 8
          for (int k = 0; k < T; ++k) xv[k] = _mm512_loadu_ps(xs[k] + c);
#pragma GCC unroll 8
          for (int i = 0; i < R; ++i) {
            __m512 wv;
            if (H) wv = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pwh + 16 * i)));
            else wv = _mm512_loadu_ps(pwf + 16 * i);
            __asm__("" : "+v"(wv));
#pragma GCC unroll 8
            for (int k = 0; k < T; ++k) a[i][k] = _mm512_fmadd_ps(wv, xv[k], a[i][k]);
          }
        }
        for (int i = 0; i < R; ++i) for (int k = 0; k < T; ++k) ac[i * T + k] = a[i][k];
      }
    }
    out[r] += acc[0][0];
  }
}
int main(int argc, char** argv) {
  const size_t n = 896, nt = 63, rows = 144, seg = 512;
  std::vector<float> wf(rows * n, 0.01f), x(nt * n, 0.02f), out(rows);
  std::vector<uint16_t> wh(rows * n, 0x2000);
  std::vector<__m512> acc(1024);
  for (int rep = 0; rep < 3; ++rep) {
    for (int h = 0; h < 2; ++h) {
      double best = 1e30;
      for (int k = 0; k < 30; ++k) {
        auto t0 = Clock::now();
        if (h) tiles<8, 3, true>(wh.data(), x.data(), rows, nt, n, seg, acc.data(), out.data());
        else tiles<8, 3, false>(wf.data(), x.data(), rows, nt, n, seg, acc.data(), out.data());
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
      }
      std::printf("%s: %.1f GMAC/s\n", h ? "f16 converted in the loop" : "f32 panel", double(rows) * nt * n / best / 1e9);
    }
  }
}
