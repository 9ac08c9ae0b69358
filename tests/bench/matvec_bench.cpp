// matvec_bench: one decode product (one token) through one large weight matrix per type, one
// thread, cold in DRAM — every timed call follows a full pass of the 1-thread read-bandwidth probe
// (512 MiB), which evicts the caches — and its weight GB/s beside that probe. Not a test.
//
//   matvec_bench [--rows 32768] [--cols 4096] [--reps 5] [--variant best|scalar|avx2|avxvnni|avx512vnni]
//                [--types q8_0,q4_k,...] [--warm]
//
// Prints one line per type: best-of-reps ms per product, GB/s of weight bytes, the best probe
// reading of the same loop and the ratio (the "% of floor" of docs/bench/cpu.md). --warm skips the
// probe between calls (the matrix then partly sits in the last-level cache: compute cost only).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/probe.h"
#include "alap/kernels/quant.h"
#include "bench_types.h"

using namespace alap::kernels;
using Clock = std::chrono::steady_clock;

namespace {

using alap::bench::type_by_name;

}  // namespace

int main(int argc, char** argv) {
  size_t rows = 32768, cols = 4096;
  int reps = 5;
  bool warm = false;
  std::string variant = "best", types = "f16,q8_0,q4_0,q4_1,q5_0,q5_1,q2_k,q3_k,q4_k,q5_k,q6_k";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "matvec_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--rows") rows = std::stoul(next());
    else if (a == "--cols") cols = std::stoul(next());
    else if (a == "--reps") reps = std::stoi(next());
    else if (a == "--variant") variant = next();
    else if (a == "--types") types = next();
    else if (a == "--warm") warm = true;
    else {
      std::fprintf(stderr, "matvec_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (!set_cpu_variant(variant.c_str())) {
    std::fprintf(stderr, "matvec_bench: variant %s not available on this CPU\n", variant.c_str());
    return 2;
  }
  std::printf("variant %s, %zu x %zu, one thread, %s, best of %d\n", cpu_variant_name(), rows, cols,
              warm ? "warm" : "cold (probe pass before each call)", reps);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(cols);
  for (auto& v : x) v = nd(rng);
  std::vector<int8_t> q(cols);
  std::vector<float> d(cols / 32);
  std::vector<int32_t> s(cols / 32), s4(cols / 4);
  quantize_activations(x.data(), 1, cols, q.data(), d.data(), s.data(), s4.data());
  const QuantizedActs acts{x.data(), q.data(), d.data(), s.data(), s4.data(), 1, cols};
  std::vector<float> y(rows);

  size_t at = 0;
  while (at < types.size()) {
    size_t comma = types.find(',', at);
    if (comma == std::string::npos) comma = types.size();
    const std::string name = types.substr(at, comma - at);
    at = comma + 1;
    DType t;
    if (!type_by_name(name, t)) {
      std::fprintf(stderr, "matvec_bench: unknown weight type %s\n", name.c_str());
      return 2;
    }
    const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
    if (cols % info.block_elems != 0) continue;
    const size_t rb = dtype_row_bytes(info, cols);
    std::vector<uint8_t> w(rows * rb);
    // 64 distinct random rows, repeated: the values do not change the work, and quantising
    // 134M values with the reference quantisers would dominate the run.
    std::vector<float> src(cols);
    for (size_t r = 0; r < std::min<size_t>(rows, 64); ++r) {
      for (auto& v : src) v = 0.05f * nd(rng);
      quantize_row(t, src.data(), w.data() + r * rb, cols);
    }
    for (size_t r = 64; r < rows; ++r) std::memcpy(w.data() + r * rb, w.data() + (r % 64) * rb, rb);
    const WeightView wv{t, w.data(), rows, cols};
    double best_ms = 1e30, best_probe = 0;
    for (int k = 0; k < reps; ++k) {
      if (!warm) best_probe = std::max(best_probe, measure_read_bandwidth(1, size_t{512} << 20, 1).gbps);
      const auto t0 = Clock::now();
      matmul(wv, acts, y.data(), rows, 0, rows);
      best_ms = std::min(best_ms, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    const double gbps = static_cast<double>(w.size()) / (best_ms * 1e6);
    std::printf("%-5s %8.1f MB  %7.3f ms  %6.2f GB/s", info.name, static_cast<double>(w.size()) / 1e6, best_ms, gbps);
    if (!warm) std::printf("  probe %6.2f GB/s  %5.1f%% of floor", best_probe, 100.0 * gbps / best_probe);
    std::printf("  (y[1] %.5g)\n", static_cast<double>(y[1]));
    std::fflush(stdout);
  }
  return 0;
}
