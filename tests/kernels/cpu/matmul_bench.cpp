// Google Benchmark of alap::kernels::matmul on a 4096x4096 weight matrix, one thread, per type and
// CPU variant; bytes/s counts weight bytes. Not a test: built as kernels_cpu_bench, not run by ctest.
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"

using namespace alap::kernels;

namespace {

constexpr size_t kN = 4096;

struct Matrix {
  std::vector<uint8_t> w;
  std::vector<float> x;
};

const Matrix& matrix(DType t, size_t n_tok) {
  static std::vector<std::pair<std::pair<uint32_t, size_t>, Matrix>> cache;
  const auto key = std::make_pair(static_cast<uint32_t>(t), n_tok);
  for (auto& e : cache) {
    if (e.first == key) return e.second;
  }
  Matrix m;
  const size_t row_bytes = dtype_row_bytes(*dtype_info(key.first), kN);
  m.w.resize(kN * row_bytes);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 0.05f);
  std::vector<float> src(kN);
  for (size_t r = 0; r < kN; ++r) {
    for (auto& v : src) v = nd(rng);
    quantize_row(t, src.data(), m.w.data() + r * row_bytes, kN);
  }
  m.x.resize(n_tok * kN);
  for (auto& v : m.x) v = nd(rng);
  cache.emplace_back(key, std::move(m));
  return cache.back().second;
}

void bm_matmul(benchmark::State& state, DType t, const char* variant, size_t n_tok) {
  if (!set_cpu_variant(variant)) {
    state.SkipWithError("variant not available on this CPU");
    return;
  }
  const Matrix& m = matrix(t, n_tok);
  std::vector<float> y(n_tok * kN);
  for (auto _ : state) {
    matmul(WeightView{t, m.w.data(), kN, kN}, m.x.data(), n_tok, y.data(), kN, 0, kN);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(m.w.size()));
  set_cpu_variant("best");
}

const int kRegistered = [] {
  const DType types[] = {DType::f32,  DType::f16,  DType::bf16, DType::q8_0, DType::q4_0, DType::q4_1, DType::q5_0,
                         DType::q5_1, DType::q2_k, DType::q3_k, DType::q4_k, DType::q5_k, DType::q6_k};
  for (const char* v : {"scalar", "avx2", "avxvnni", "avx512vnni"}) {
    for (DType t : types) {
      for (size_t n_tok : {size_t{1}, size_t{8}}) {
        const std::string name = std::string("matmul_4096/") + dtype_info(static_cast<uint32_t>(t))->name + "/" +
                                 v + "/n_tok:" + std::to_string(n_tok);
        benchmark::RegisterBenchmark(name.c_str(), bm_matmul, t, v, n_tok)->Unit(benchmark::kMillisecond);
      }
    }
  }
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
