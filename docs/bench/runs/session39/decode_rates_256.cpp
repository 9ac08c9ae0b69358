// decode_rates_256: the in-core one-token rates of the AVX-VNNI packed products
// (avx2/packed256.inc through avx_vnni/packed_avxvnni.cpp), two groups of 16 rows × 28 blocks
// (Q4_K: 32) in L1, repeated; GB/s of weights ("quiet": the pass without the read-ahead, which AMD
// runs for Q8_0 and Q4_0). A run record of docs/bench/cpu.md (session 39), not part of the build:
//
//   g++ -O3 -std=c++20 -ffp-contract=off -mavx2 -mfma -mf16c -mavxvnni -Ikernels/cpu -Ikernels/include -w \
//     docs/bench/runs/session39/decode_rates_256.cpp build/default/kernels/cpu/libalap_kernels.a -lpthread \
//     -o /tmp/decode_rates_256 && /tmp/decode_rates_256
#include "../../../../kernels/cpu/avx_vnni/packed_avxvnni.cpp"
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
using namespace alap::kernels;
using namespace alap::kernels::avxvnni;
template <class K>
double bench(DType type, size_t nb, size_t groups, long reps) {
  std::mt19937 rng(1);
  const size_t gb = packed::group_bytes(type, nb * 32);
  std::vector<uint8_t> w(gb * groups + 32768 + 64);
  for (auto& b : w) b = rng() & 0x3B;
  std::vector<int8_t> x(nb * 32);
  for (auto& b : x) b = static_cast<int8_t>(rng() & 0x3F);
  std::vector<float> dx(nb, 0.01f), xs(nb, 0.5f);
  std::vector<int32_t> ofs(2 * nb, -100);
  TileActs a{x.data(), dx.data(), ofs.data(), xs.data(), nb};
  Acc<2, 1> acc;
  acc.f[0][0] = acc.f[1][0] = _mm256_setzero_ps();
  auto t0 = std::chrono::steady_clock::now();
  for (long r = 0; r < reps; ++r) {
    for (size_t g = 0; g < groups; ++g) K::template run<2, 1>(w.data() + g * gb, a, 0, acc);
    __asm__ volatile("" ::: "memory");
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  float o[8];
  _mm256_storeu_ps(o, _mm256_add_ps(acc.f[0][0], acc.f[1][0]));
  volatile float vs = o[0]; (void)vs;
  return reps * groups * gb / s / 1e9;
}
int main() {
  for (int i = 0; i < 3; ++i)
    std::printf("AVX-VNNI warm decode GB/s (896 cols, 32 rows, L1): Q8_0 %.0f quiet %.0f  Q5_0 %.0f  Q4_0 %.0f quiet %.0f  Q4_K(1024) %.0f\n",
                bench<Q8_0<>>(DType::q8_0, 28, 2, 40000), bench<Q8_0<false>>(DType::q8_0, 28, 2, 40000), bench<Q45_01<true, false>>(DType::q5_0, 28, 2, 40000),
                bench<Q45_01<false, false>>(DType::q4_0, 28, 2, 40000), bench<Q45_01<false, false, false>>(DType::q4_0, 28, 2, 40000), bench<Q45_K<false>>(DType::q4_k, 32, 2, 40000));
}
