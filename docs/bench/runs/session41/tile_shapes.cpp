// Session 41: the in-loop rate of R rows x T tokens f32 FMA tiles (512-bit), the rows of a group
// interleaved by 16 columns (one pointer), the tokens read from their own rows, segments of S
// columns, the chains kept between segments. Only the loop: no conversion, no endings. GMAC/s,
// best of 30 passes over ROWS rows x N columns x NT tokens.
//   g++ -O2 -std=c++20 -march=native tile_shapes.cpp -o tile_shapes
//   ./tile_shapes N NT ROWS SEG
// Every row and token vector is loaded into a register (an empty asm on each). With -DFOLD the
// compiler may instead make a load the memory operand of each FMA that reads it.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
using Clock = std::chrono::steady_clock;
template <int R, int T>
__attribute__((noinline)) void tiles(const float* w, const float* x, size_t rows, size_t nt, size_t n, size_t seg, __m512* acc, float* out) {
  const size_t nch = n / 16;
  for (size_t r = 0; r + R <= rows; r += R) {
    const float* wg = w + r * n;  // group r/R: nch chunks of R x 16
    for (size_t c0 = 0; c0 < nch; c0 += seg / 16) {
      const size_t c1 = std::min(nch, c0 + seg / 16);
      for (size_t t = 0; t + T <= nt; t += T) {
        __m512* ac = acc + (t / T) * R * T;
        __m512 a[R][T];
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
          for (int k = 0; k < T; ++k) a[i][k] = c0 == 0 ? _mm512_setzero_ps() : ac[i * T + k];
        const float* pw = wg + c0 * R * 16;
        const float* xs[T];
        for (int k = 0; k < T; ++k) xs[k] = x + (t + k) * n;
        for (size_t c = c0; c < c1; ++c, pw += R * 16) {
          __m512 xv[T];
#pragma GCC unroll 8
          for (int k = 0; k < T; ++k) {
            xv[k] = _mm512_loadu_ps(xs[k] + 16 * c);
#ifndef FOLD
            __asm__("" : "+v"(xv[k]));
#endif
          }
#pragma GCC unroll 8
          for (int i = 0; i < R; ++i) {
            __m512 wv = _mm512_loadu_ps(pw + 16 * i);
#ifndef FOLD
            __asm__("" : "+v"(wv));
#endif
#pragma GCC unroll 8
            for (int k = 0; k < T; ++k) a[i][k] = _mm512_fmadd_ps(wv, xv[k], a[i][k]);
          }
        }
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i)
#pragma GCC unroll 8
          for (int k = 0; k < T; ++k) ac[i * T + k] = a[i][k];
      }
    }
    out[r] += _mm512_reduce_add_ps(acc[0]);
  }
}
template <int R, int T>
void run(const char* name, size_t rows, size_t nt, size_t n, size_t seg) {
  std::vector<float> w(rows * n, 0.01f), x(nt * n, 0.02f), out(rows);
  std::vector<__m512> acc(1024);  // the tiles' chains between segments
  double best = 1e30;
  const size_t rr = rows / R * R, tt = nt / T * T;
  for (int k = 0; k < 30; ++k) {
    auto t0 = Clock::now();
    tiles<R, T>(w.data(), x.data(), rows, nt, n, seg, acc.data(), out.data());
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf("%s %zux%zu x%zu seg %zu: %.1f GMAC/s\n", name, rows, n, nt, seg, double(rr) * tt * n / best / 1e9);
}
int main(int argc, char** argv) {
  const size_t n = std::atoi(argv[1]), nt = std::atoi(argv[2]), rows = std::atoi(argv[3]), seg = std::atoi(argv[4]);
  for (int rep = 0; rep < 2; ++rep) {
    run<4, 4>("4x4", rows, nt, n, seg);
    run<6, 4>("6x4", rows, nt, n, seg);
    run<8, 3>("8x3", rows, nt, n, seg);
    run<5, 5>("5x5", rows, nt, n, seg);
    run<4, 6>("4x6", rows, nt, n, seg);
  }
}
