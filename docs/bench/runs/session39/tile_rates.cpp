// tile_rates: the in-core rate of the AVX-512 packed prefill tiles (packed_vnni.cpp's run<8>) on
// one group of 16 rows and 16 blocks, its weights and activations in L1, repeated, beside the
// 12-chain vpdpbusd peak measured just before and after; and Q8_0x2, Q8_0's tile two blocks at a
// time (16 int32 chains in flight instead of 8, the same per-lane steps), which was not kept. A run
// record of docs/bench/cpu.md (session 39), not part of the build. From the repository root, with
// build/default built:
//
//   g++ -O3 -std=c++20 -ffp-contract=off -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512dq \
//     -mavx512vl -mavx512vnni -Ikernels/cpu -Ikernels/include -w docs/bench/runs/session39/tile_rates.cpp \
//     build/default/kernels/cpu/libalap_kernels.a -lpthread -o /tmp/tile_rates && /tmp/tile_rates
#include "../../../../kernels/cpu/avx512_vnni/packed_vnni.cpp"
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
using namespace alap::kernels;
using namespace alap::kernels::avx512vnni;
// Q8_0's tile two blocks at a time: 2T int32 chains in flight, the same per-lane steps in order.
struct Q8_0x2 {
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    for (size_t b = 0; b + 2 <= a.nb; b += 2) {
      const packed::BlockAt at0 = packed::block_at(b, a.nb, 0, 512), at1 = packed::block_at(b + 1, a.nb, 0, 512);
      __m512i p[T], q[T], p2[T], q2[T];
      start<T>(p, p2, a.ofs + b * T);
      start<T>(q, q2, a.ofs + (b + 1) * T);
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j) {
        dot_step<T>(p, p2, j & 1, load64(g + at0.quants + 64 * j), quad<T>(a, b, j));
        dot_step<T>(q, q2, j & 1, load64(g + at1.quants + 64 * j), quad<T>(a, b + 1, j));
      }
      scale_step<T>(acc, p, f16x16(g + at0.scales), a.dx + b * T);
      scale_step<T>(acc, q, f16x16(g + at1.scales), a.dx + (b + 1) * T);
    }
  }
};
template <class K, int T>
double bench(DType type, size_t nb, long reps) {
  std::mt19937 rng(1);
  const size_t gb = packed::group_bytes(type, nb * 32);
  std::vector<uint8_t> w(gb + 64);
  for (auto& b : w) b = rng() & 0x3B;  // keeps fp16 fields finite and small
  std::vector<int8_t> x(nb * 32 * T);
  for (auto& b : x) b = static_cast<int8_t>(rng());
  std::vector<float> dx(nb * T, 0.01f), xs(nb * T, 0.5f);
  std::vector<int32_t> ofs(2 * nb * T, -100);
  TileActs a{x.data(), dx.data(), ofs.data(), xs.data(), nb};
  __m512 acc[T];
  for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
  auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < reps; ++r) {
    K::template run<T>(w.data(), a, acc);
    __asm__ volatile("" ::: "memory");
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float sink = 0;
  for (int t = 0; t < T; ++t) sink += _mm512_reduce_add_ps(acc[t]);
  volatile float vs = sink; (void)vs;
  return reps * 16.0 * T * nb * 32 / s / 1e9;
}
// 12 independent vpdpbusd chains in registers: the dot peak of this core, in the same moment.
__attribute__((noinline)) double peak(long steps) {
  __m512i a[12];
  for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_epi32(i);
  const __m512i w0 = _mm512_set1_epi8(3), w1 = _mm512_set1_epi8(5);
  auto t0 = std::chrono::steady_clock::now();
  for (long s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = _mm512_dpbusd_epi32(a[i], w1, w0);
  }
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  __m512i t = a[0];
  for (int i = 1; i < 12; ++i) t = _mm512_add_epi32(t, a[i]);
  volatile int sink = _mm512_reduce_add_epi32(t); (void)sink;
  return steps * 12 * 64.0 / sec / 1e9;
}
int main() {
  for (int i = 0; i < 5; ++i) {
    const double p0 = peak(20000000);
    const double q8 = bench<Q8_0<>, 8>(DType::q8_0, 16, 400000), q4k = bench<Q45_K<false>, 8>(DType::q4_k, 16, 400000);
    const double q5 = bench<Q45_01<true, false>, 8>(DType::q5_0, 16, 400000);
    const double q8x2 = bench<Q8_0x2, 8>(DType::q8_0, 16, 400000);
    const double p1 = peak(20000000);
    std::printf("peak %.0f / %.0f GMAC/s; in L1, T=8, 16 blocks: Q8_0 %.0f (%.0f%%)  Q5_0 %.0f (%.0f%%)  "
                "Q4_K %.0f (%.0f%%) | Q8_0x2 %.0f\n",
                p0, p1, q8, 200 * q8 / (p0 + p1), q5, 200 * q5 / (p0 + p1), q4k, 200 * q4k / (p0 + p1), q8x2);
  }
}
