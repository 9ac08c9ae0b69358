// session 60: FNV hash of the packed products' outputs over types, shapes and token counts (1-40)
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"
#include "tests/bench/bench_types.h"
int alap_exp_v = 0;
using namespace alap::kernels;
int main() {
  const char* types[] = {"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k", "q3_k", "q2_k", "iq4_nl", "iq4_xs"};
  std::mt19937 rng(5); std::normal_distribution<float> nd(0, 1);
  for (const char* tn : types) {
    DType t; alap::bench::type_by_name(tn, t);
    const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
    for (size_t cols : {512, 1024, 2048}) for (size_t rows : {48, 256}) {
      const size_t rb = dtype_row_bytes(info, cols);
      std::vector<uint8_t> raw(rb * rows); std::vector<float> src(cols);
      for (size_t r = 0; r < rows; ++r) { for (auto& v : src) v = 0.05f * nd(rng); quantize_row(t, src.data(), raw.data() + r * rb, cols); }
      WeightView w{t, raw.data(), rows, cols};
      std::vector<uint8_t> pk(packed_bytes(w) + 64); w.packed = pk.data(); pack_weights(WeightView{t, raw.data(), rows, cols}, pk.data());
      uint64_t h = 1469598103934665603ull;
      for (size_t n : {1, 2, 3, 5, 6, 7, 8, 9, 13, 17, 40}) {
        std::vector<float> x(n * cols); for (auto& v : x) v = nd(rng);
        std::vector<float> y(n * rows);
        matmul(w, x.data(), n, y.data(), rows, 0, rows);
        for (float f : y) { uint32_t b; std::memcpy(&b, &f, 4); h = (h ^ b) * 1099511628211ull; }
      }
      std::printf("%s %zux%zu %016llx\n", tn, rows, cols, (unsigned long long)h);
    }
  }
}
