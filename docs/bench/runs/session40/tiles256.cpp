// tiles256: the in-core rate of the 256-bit packed prefill tiles (packed256.inc run<1,4>: 8 rows ×
// 4 tokens, 64 blocks of 32 columns; weights and activations in L1, repeated) beside the peak of the
// variant's own int8 dot measured just before and after (8 chains: maddubs + madd + add for plain
// AVX2, VEX vpdpbusd for AVX-VNNI), alternating. Plain AVX2 runs Q4_K and Q6_K on the activations'
// blocks of 256 (Q45_K256, Q6_K256), AVX-VNNI on blocks of 32 (Q45_K, Q6_K), as the engine does.
// A run record of docs/bench/cpu.md (session 40), not part of the build. From the repository root,
// with build/default built:
//
//   g++ -O3 -std=c++20 -ffp-contract=off -mavx2 -mfma -mf16c -Ikernels/cpu -Ikernels/include -w \
//     docs/bench/runs/session40/tiles256.cpp build/default/kernels/cpu/libalap_kernels.a -lpthread \
//     -o /tmp/tiles_avx2 && /tmp/tiles_avx2
//   g++ (the same) -mavxvnni -DTILES_VNNI=1 ... -o /tmp/tiles_vnni && /tmp/tiles_vnni
#ifndef TILES_VNNI
#define TILES_VNNI 0
#endif
#if TILES_VNNI
#include "../../../../kernels/cpu/avx_vnni/packed_avxvnni.cpp"
using namespace alap::kernels::avxvnni;
using Q4K = Q45_K<false>;
using Q6K = Q6_K;
#else
#include "../../../../kernels/cpu/avx2/packed_avx2.cpp"
using namespace alap::kernels::avx2;
using Q4K = Q45_K256<false>;
using Q6K = Q6_K256;
#endif
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
using namespace alap::kernels;

template <class K, int T>
double bench(DType type, size_t nb, long reps) {
  std::mt19937 rng(1);
  const size_t gb = packed::group_bytes(type, nb * 32);
  std::vector<uint8_t> w(gb + 64);
  for (auto& b : w) b = rng() & 0x3B;  // keeps fp16 fields finite and small
  std::vector<int8_t> x(nb * 32 * T);
  for (auto& b : x) b = static_cast<int8_t>(rng() % 255 - 127);
  std::vector<float> dx(nb * T, 0.01f), xs(nb * T, 0.5f);
  std::vector<int32_t> ofs(2 * nb * T, 100);
  TileActs a{x.data(), dx.data(), ofs.data(), xs.data(), nb};
  Acc<1, T> acc;
  for (int t = 0; t < T; ++t) acc.f[0][t] = _mm256_setzero_ps();
  const auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < reps; ++r) {
    K::template run<1, T>(w.data(), a, static_cast<int>(r & 1), acc);
    __asm__ volatile("" ::: "memory");
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  alignas(32) float f[8];
  float sink = 0;
  for (int t = 0; t < T; ++t) {
    _mm256_store_ps(f, acc.f[0][t]);
    sink += f[0];
  }
  volatile float vs = sink;
  (void)vs;
  return reps * 8.0 * T * nb * 32 / s / 1e9;
}

__attribute__((noinline)) double peak(long steps) {
  __m256i c[8];
  for (int i = 0; i < 8; ++i) c[i] = _mm256_set1_epi32(i);
  __m256i a = _mm256_set1_epi8(3);
  const __m256i b = _mm256_set1_epi8(-2);
  [[maybe_unused]] const __m256i one = _mm256_set1_epi16(1);
  const auto t0 = std::chrono::steady_clock::now();
  for (long s = 0; s < steps; ++s) {
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      __asm__ volatile("" : "+x"(a));
#if TILES_VNNI
      c[i] = _mm256_dpbusd_avx_epi32(c[i], a, b);
#else
      c[i] = _mm256_add_epi32(c[i], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), one));
#endif
    }
  }
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  __m256i t = c[0];
  for (int i = 1; i < 8; ++i) t = _mm256_add_epi32(t, c[i]);
  volatile int sink = _mm256_extract_epi32(t, 0);
  (void)sink;
  return steps * 8 * 32.0 / sec / 1e9;
}

int main() {
  std::printf("%s tiles, 8 rows x 4 tokens x 2048 columns in L1; GMAC/s (%% of the peak around them)\n",
              TILES_VNNI ? "AVX-VNNI" : "plain AVX2");
  for (int i = 0; i < 4; ++i) {
    const double p0 = peak(20000000);
    const double q4k = bench<Q4K, 4>(DType::q4_k, 64, 40000), q8 = bench<Q8_0<>, 4>(DType::q8_0, 64, 40000);
    const double q5 = bench<Q45_01<true, false>, 4>(DType::q5_0, 64, 40000), q6k = bench<Q6K, 4>(DType::q6_k, 64, 40000);
    const double p1 = peak(20000000), pk = (p0 + p1) / 2;
    std::printf("peak %.1f / %.1f | Q4_K %.1f (%.0f%%)  Q8_0 %.1f (%.0f%%)  Q5_0 %.1f (%.0f%%)  Q6_K %.1f (%.0f%%)\n", p0,
                p1, q4k, 100 * q4k / pk, q8, 100 * q8 / pk, q5, 100 * q5 / pk, q6k, 100 * q6k / pk);
  }
}
