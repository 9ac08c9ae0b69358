// decode_rates: the in-core one-token (decode) rates of the AVX-512 packed products
// (packed_vnni.cpp's run<1>), two groups of 16 rows × 28 blocks (Q4_K: 32), weights in L1,
// repeated; GB/s of weights. "ra": the pass with its software read-ahead, "quiet": without. Q45x4
// (four int32 chains a block) and Q45pair (a pair of blocks a step at constant offsets) are the two
// forms tried in session 39; the second is what packed_vnni.cpp runs since. Built against the
// packed_vnni.cpp of the checkout, so its "Q5_0 ra" / "Q4_0" columns show that file's pass. A run
// record of docs/bench/cpu.md (session 39), not part of the build. From the repository root:
//
//   g++ -O3 -std=c++20 -ffp-contract=off -mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512dq \
//     -mavx512vl -mavx512vnni -Ikernels/cpu -Ikernels/include -w docs/bench/runs/session39/decode_rates.cpp \
//     build/default/kernels/cpu/libalap_kernels.a -lpthread -o /tmp/decode_rates && /tmp/decode_rates
#include "../../../../kernels/cpu/avx512_vnni/packed_vnni.cpp"
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
using namespace alap::kernels;
using namespace alap::kernels::avx512vnni;
// Q4_0/Q5_0's one-token pass with 4 int32 chains a block (2 dots each) instead of 2 (4 each), the
// same sums (exact in any order) and f32 step.
template <bool kFive, bool kReadAhead>
struct Q45x4 {
  static constexpr size_t kExtra = packed::q45_extra(kFive, false);
  static constexpr int kPairLines = static_cast<int>(2 * (32 + kExtra + 256) / 64);
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
    for (size_t b = 0; b < a.nb; ++b) {
      const packed::BlockAt at = packed::block_at(b, a.nb, kExtra, 256);
      __m512i p[4] = {_mm512_set1_epi32(a.ofs[b]), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
      const uint8_t* wb = g + at.quants;
      const uint8_t* pair = g + at.scales - 32 * (b % 2);
      __m512i hb = _mm512_setzero_si512();
      if constexpr (kFive) hb = load64(g + at.extra);
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        if constexpr (kReadAhead) prefetch_part<1, kPairLines, 8>(pair, 4 * static_cast<int>(b % 2) + k);
        const __m512i raw = load64(wb + 64 * k);
        __m512i lo = _mm512_and_si512(raw, m4);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
        if constexpr (kFive) {
          lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(hb, _mm512_set1_epi8(static_cast<char>(1 << (2 * k)))), lo, b4);
          hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(hb, _mm512_set1_epi8(static_cast<char>(2 << (2 * k)))), hi, b4);
        }
        p[k & 1] = dpbusd_bcst(p[k & 1], lo, quad<1>(a, b, k));
        p[2 + (k & 1)] = dpbusd_bcst(p[2 + (k & 1)], hi, quad<1>(a, b, 4 + k));
      }
      const __m512i s = _mm512_add_epi32(_mm512_add_epi32(p[0], p[1]), _mm512_add_epi32(p[2], p[3]));
      acc[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(f16x16(g + at.scales), _mm512_set1_ps(a.dx[b])), acc[0]);
    }
  }
};
// One token, a pair of blocks a step with constant offsets in the pair's unit (packed_layout.h:
// scales 2x32, [fifth bits 2x64], nibbles 2x256), the same per-block sums and f32 steps in order.
template <bool kFive, bool kReadAhead>
struct Q45pair {
  static constexpr size_t kExtra = packed::q45_extra(kFive, false);
  static constexpr size_t kUnit = 2 * (32 + kExtra + 256);
  static constexpr int kPairLines = static_cast<int>(kUnit / 64);
  template <int T>
  static void run(const uint8_t* g, const TileActs& a, __m512 (&acc)[T]) {
    const __m512i m4 = _mm512_set1_epi8(0x0F), b4 = _mm512_set1_epi8(0x10);
    size_t b = 0;
    for (; b + 2 <= a.nb; b += 2) {
      const uint8_t* u = g + kUnit * (b / 2);
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        __m512i p = _mm512_set1_epi32(a.ofs[b + h]), p2 = _mm512_setzero_si512();
        const uint8_t* wb = u + 64 + 2 * kExtra + 256 * h;
        __m512i hb = _mm512_setzero_si512();
        if constexpr (kFive) hb = load64(u + 64 + kExtra * h);
#pragma GCC unroll 4
        for (int k = 0; k < 4; ++k) {
          if constexpr (kReadAhead) prefetch_part<1, kPairLines, 8>(u, 4 * h + k);
          const __m512i raw = load64(wb + 64 * k);
          __m512i lo = _mm512_and_si512(raw, m4);
          __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
          if constexpr (kFive) {
            lo = _mm512_mask_add_epi8(lo, _mm512_test_epi8_mask(hb, _mm512_set1_epi8(static_cast<char>(1 << (2 * k)))), lo, b4);
            hi = _mm512_mask_add_epi8(hi, _mm512_test_epi8_mask(hb, _mm512_set1_epi8(static_cast<char>(2 << (2 * k)))), hi, b4);
          }
          p = dpbusd_bcst(p, lo, a.x + 4 * (8 * (b + h) + k));
          p2 = dpbusd_bcst(p2, hi, a.x + 4 * (8 * (b + h) + 4 + k));
        }
        acc[0] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(p, p2)),
                                 _mm512_mul_ps(f16x16(u + 32 * h), _mm512_set1_ps(a.dx[b + h])), acc[0]);
      }
    }
  }
};
template <class K>
double bench(DType type, size_t nb, size_t groups, long reps) {
  std::mt19937 rng(1);
  const size_t gb = packed::group_bytes(type, nb * 32);
  std::vector<uint8_t> w(gb * groups + 16384 + 64);
  for (auto& b : w) b = rng() & 0x3B;
  std::vector<int8_t> x(nb * 32);
  for (auto& b : x) b = static_cast<int8_t>(rng());
  std::vector<float> dx(nb, 0.01f), xs(nb, 0.5f);
  std::vector<int32_t> ofs(2 * nb, -100);
  TileActs a{x.data(), dx.data(), ofs.data(), xs.data(), nb};
  __m512 acc[1] = {_mm512_setzero_ps()};
  auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < reps; ++r) {
    for (size_t g = 0; g < groups; ++g) K::template run<1>(w.data() + g * gb, a, acc);
    __asm__ volatile("" ::: "memory");
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  volatile float vs = _mm512_reduce_add_ps(acc[0]); (void)vs;
  return reps * groups * gb / s / 1e9;  // GB/s of weights
}
int main() {
  for (int i = 0; i < 3; ++i) {
    // 28 blocks (896 columns) x 8 groups (128 rows): ~77-120 KB, in L2
    std::printf("x4 chains: Q5_0 ra %.0f quiet %.0f Q4_0 ra %.0f\n", bench<Q45x4<true, true>>(DType::q5_0, 28, 2, 80000),
                bench<Q45x4<true, false>>(DType::q5_0, 28, 2, 80000), bench<Q45x4<false, true>>(DType::q4_0, 28, 2, 80000));
    std::printf("pairs: Q5_0 ra %.0f quiet %.0f Q4_0 ra %.0f\n", bench<Q45pair<true, true>>(DType::q5_0, 28, 2, 80000),
                bench<Q45pair<true, false>>(DType::q5_0, 28, 2, 80000), bench<Q45pair<false, true>>(DType::q4_0, 28, 2, 80000));
    std::printf("warm decode GB/s (896 cols, 32 rows, in L1): Q8_0 ra %.0f  Q8_0 quiet %.0f | Q5_0 ra %.0f  Q5_0 quiet %.0f | Q4_0 %.0f | Q4_K(1024 cols) %.0f\n",
                bench<Q8_0<>>(DType::q8_0, 28, 2, 80000), bench<Q8_0<false>>(DType::q8_0, 28, 2, 80000),
                bench<Q45_01<true, false>>(DType::q5_0, 28, 2, 80000), bench<Q45_01<true, false, false>>(DType::q5_0, 28, 2, 80000),
                bench<Q45_01<false, false>>(DType::q4_0, 28, 2, 80000), bench<Q45_K<false>>(DType::q4_k, 32, 2, 80000));
  }
}
