// Times the packed prefill product alone, AMX on/off alternating.
#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"
using namespace alap::kernels;
int main(int argc, char** argv) {
  const char* tname = argc > 1 ? argv[1] : "q8_0";
  size_t rows = argc > 2 ? atoi(argv[2]) : 2048, cols = argc > 3 ? atoi(argv[3]) : 2048, nt = argc > 4 ? atoi(argv[4]) : 128;
  int reps = argc > 5 ? atoi(argv[5]) : 20;
  const char* only = argc > 6 ? argv[6] : "both";
  DType t = DType::q8_0;
  for (uint32_t i = 0; i < 64; ++i) { auto* inf = dtype_info(i); if (inf && std::string(inf->name) == tname) t = static_cast<DType>(i); }
  const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
  size_t rb = dtype_row_bytes(info, cols);
  std::mt19937 rng(1);
  std::vector<uint8_t> w(rows * rb);
  for (auto& b : w) b = rng() & 255;
  for (size_t blk = 0; blk < w.size() / info.block_bytes; ++blk) { uint8_t* p = w.data() + blk * info.block_bytes; uint16_t h = 0x1400; 
    size_t off = (t == DType::q6_k) ? 208 : (t == DType::q3_k) ? 108 : (t == DType::q2_k) ? 80 : 0; memcpy(p + off, &h, 2); if (t==DType::q4_k||t==DType::q5_k||t==DType::q2_k) memcpy(p+off+2,&h,2);}
  WeightView pv{t, w.data(), rows, cols};
  std::vector<uint8_t> pk(packed_bytes(pv) + 64);
  pack_weights(pv, pk.data());
  WeightView wv{t, w.data(), rows, cols, pk.data()};
  std::vector<float> x(nt * cols); std::normal_distribution<float> nd; for (auto& v : x) v = nd(rng);
  std::vector<int8_t> q(nt * cols); std::vector<float> d(nt * cols / 32); std::vector<int32_t> s(nt * cols / 32), s4(nt * cols / 4);
  quantize_activations(x.data(), nt, cols, q.data(), d.data(), s.data(), s4.data());
  QuantizedActs a{x.data(), q.data(), d.data(), s.data(), s4.data(), nt, cols};
  std::vector<float> y(nt * rows), y2(nt * rows);
  double best[2] = {1e9, 1e9};
  const bool cold = getenv("COLD") != nullptr;
  std::vector<uint8_t> flush(cold ? (size_t{768} << 20) : 0, 1);
  volatile uint64_t sink = 0;
  for (int r = 0; r < reps; ++r) for (int side = 0; side < 2; ++side) {
    if ((std::string(only) == "on" && side == 1) || (std::string(only) == "off" && side == 0)) continue;
    set_amx_prefill(side == 0);
    if (cold) { uint64_t acc = 0; for (size_t i = 0; i < flush.size(); i += 64) acc += flush[i]; sink = sink + acc;
      if (getenv("WARMY")) { std::fill(y.begin(), y.end(), 0.0f); std::fill(y2.begin(), y2.end(), 0.0f); for (size_t i = 0; i < q.size(); i += 64) acc += q[i]; sink = sink + acc; } }
    auto t0 = std::chrono::steady_clock::now();
    matmul(wv, a, side ? y2.data() : y.data(), rows, 0, rows);
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best[side] = std::min(best[side], dt);
  }
  double mac = double(rows) * cols * nt;
  std::vector<double> ex(nt * rows); if (!getenv("NOORACLE")) { std::vector<float> wr(cols); for (size_t r = 0; r < rows; ++r) { dequantize_row(t, w.data() + r * rb, wr.data(), cols); for (size_t k = 0; k < nt; ++k) { double acc = 0; for (size_t c = 0; c < cols; ++c) acc += (double)wr[c] * x[k * cols + c]; ex[k * rows + r] = acc; } } }
  auto err = [&](std::vector<float>& v) { double m = 0, s2 = 0; for (size_t i = 0; i < v.size(); ++i) { m = std::max(m, std::fabs(v[i] - ex[i])); s2 += ex[i] * ex[i]; } return m / std::sqrt(s2 / v.size()); };
  printf("err amx %.2e vnni %.2e  ", err(y), err(y2));
  double md = 0, ss = 0; for (size_t i = 0; i < y.size(); ++i) { md = std::max(md, (double)std::fabs(y[i] - y2[i])); ss += (double)y2[i] * y2[i]; }
  printf("maxdiff/rms %.2e  ", md / std::sqrt(ss / y.size()));
  printf("%s %zux%zu %zu tok: amx %.1f GMAC/s, vnni %.1f GMAC/s, ratio %.2f, same bits %d\n", tname, rows, cols, nt,
         mac / best[0] / 1e9, mac / best[1] / 1e9, best[1] / best[0], std::string(only) == "both" ? int(y == y2) : -1);
}
