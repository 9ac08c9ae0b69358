// packed_bench: row-interleaved (pack_weights) products against today's unpacked ones on one
// matrix shape at a time, same process, alternating: prefill GMAC/s of a token batch as % of the
// measured vpdpbusd peak (probe.h, the variant's width), and cold decode GB/s (copies of the
// matrix well over the L3, used in rotation) beside the read probe; the packer's speed. 1 and 2
// threads (rows split at a multiple of 16). Not a test (docs/bench/cpu.md, "Row-interleaved
// weights (session 4)").
//
//   packed_bench [--types q8_0,q4_k] [--shapes 2048x2048,8192x2048,2048x8192] [--tokens 64]
//                [--threads 1,2] [--reps 7] [--cold-mb 160] [--variant best|avx512vnni|avxvnni|avx2]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/huge_pages.h"
#include "alap/kernels/probe.h"
#include "alap/kernels/quant.h"
#include "bench_types.h"

using namespace alap::kernels;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    size_t e = s.find(sep, at);
    if (e == std::string::npos) e = s.size();
    if (e > at) out.push_back(s.substr(at, e - at));
    at = e + 1;
  }
  return out;
}

using alap::bench::type_by_name;

// Runs fn(0) here and fn(1) on a helper thread that spins between calls (no wake-up cost in the
// timed loops) and sleeps after 2 ms without work (so it does not compete with the probes).
class Pair {
 public:
  Pair() : helper_([this] { loop(); }) {}
  ~Pair() {
    stop_ = true;
    gen_.fetch_add(1);
    gen_.notify_one();
    helper_.join();
  }
  void run(size_t n, const std::function<void(size_t)>& fn) {
    if (n == 1) return fn(0);
    fn_ = &fn;
    done_.store(false);
    gen_.fetch_add(1);
    gen_.notify_one();
    fn(0);
    while (!done_.load()) {
    }
  }

 private:
  void loop() {
    uint64_t seen = 0;
    for (;;) {
      const auto idle_since = Clock::now();
      for (uint32_t spins = 0; gen_.load() == seen; ++spins) {
        if (spins % 4096 == 0 && Clock::now() - idle_since > std::chrono::milliseconds(2)) gen_.wait(seen);
      }
      seen = gen_.load();
      if (stop_) return;
      (*fn_)(1);
      done_.store(true);
    }
  }
  std::atomic<uint64_t> gen_{0};
  std::atomic<bool> done_{true};
  std::atomic<bool> stop_{false};
  const std::function<void(size_t)>* fn_ = nullptr;
  std::thread helper_;
};

// The activations as the forward pass hands them to a group's products: blocks of 32, and of 256
// where the columns allow (the AVX2 K-quant products read those), quantised before the timing.
struct Acts {
  std::vector<float> x, d, d256;
  std::vector<int8_t> q, q256;
  std::vector<int32_t> s, s4;
  QuantizedActs view(size_t n_tok, size_t n_cols) const {
    QuantizedActs a{x.data(), q.data(), d.data(), s.data(), s4.data(), n_tok, n_cols};
    if (!q256.empty()) a.q256 = q256.data(), a.d256 = d256.data();
    return a;
  }
};

Acts make_acts(size_t n_tok, size_t n_cols, std::mt19937& rng) {
  std::normal_distribution<float> nd(0.0f, 1.0f);
  Acts a;
  a.x.resize(n_tok * n_cols);
  for (auto& v : a.x) v = nd(rng);
  a.q.resize(n_tok * n_cols);
  a.d.resize(n_tok * n_cols / 32);
  a.s.resize(a.d.size());
  a.s4.resize(n_tok * n_cols / 4);
  quantize_activations(a.x.data(), n_tok, n_cols, a.q.data(), a.d.data(), a.s.data(), a.s4.data());
  if (n_cols % 256 == 0) {
    a.q256.resize(n_tok * n_cols);
    a.d256.resize(n_tok * n_cols / 256);
    quantize_activations_256(a.x.data(), n_tok, n_cols, a.q256.data(), a.d256.data());
  }
  return a;
}

// The best (shortest) time: other work on the machine only ever slows a run down.
double best(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

}  // namespace

int main(int argc, char** argv) {
  std::string types = "q8_0,q4_k", shapes = "2048x2048,8192x2048,2048x8192", threads = "1,2", variant = "best";
  size_t n_tok = 64, cold_mb = 160;
  int reps = 7;
  bool cold_prefill = false;  // prefill timed on the rotating copies too: weights from DRAM, as in a prompt
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "packed_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--types")
      types = next();
    else if (a == "--shapes")
      shapes = next();
    else if (a == "--tokens")
      n_tok = std::stoul(next());
    else if (a == "--threads")
      threads = next();
    else if (a == "--reps")
      reps = std::stoi(next());
    else if (a == "--cold-mb")
      cold_mb = std::stoul(next());
    else if (a == "--variant")
      variant = next();
    else if (a == "--cold-prefill")
      cold_prefill = true;
    else if (a == "--pairs")  // the AVX-512 prefill's tiles of two row groups (kernels::set_pair_tiles)
      set_pair_tiles(next() != "off");
    else {
      std::fprintf(stderr, "packed_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (!set_cpu_variant(variant.c_str())) {
    std::fprintf(stderr, "packed_bench: variant %s not available on this CPU\n", variant.c_str());
    return 2;
  }
  std::printf("variant %s, %zu prefill tokens, best of %d alternating runs\n", cpu_variant_name(), n_tok, reps);
  Pair pair;
  std::vector<size_t> nts;
  for (const auto& t : split(threads, ',')) {
    nts.push_back(std::stoul(t));
    if (nts.back() != 1 && nts.back() != 2) {  // the tool's pair of threads (Pair) and its tables
      std::fprintf(stderr, "packed_bench: --threads takes 1 and/or 2, not %s\n", t.c_str());
      return 2;
    }
  }
  // The machine's limits, measured before and after the table (best of the two: other work on
  // the machine only lowers them): the probe's int8 dot peak at the variant's width and its read
  // bandwidth, with the same thread count.
  std::vector<double> peak(3, 0.0), probe(3, 0.0);
  auto measure_limits = [&] {
    for (size_t nt : nts) {
      const size_t lanes = std::strcmp(cpu_variant_name(), "avx512vnni") == 0 ? 0 : 32;  // the variant's width
      peak[nt] = std::max(peak[nt], measure_int8_dot_peak(nt, lanes, 0.3).gmacs);
      probe[nt] = std::max(probe[nt], measure_read_bandwidth(nt, size_t{512} << 20, 3).gbps);
    }
  };
  measure_limits();
  struct Row {
    std::string type, shape;
    size_t nt;
    double gu, gp, bu, bp, maxdiff, maxmag;
  };
  std::vector<Row> table;
  std::vector<std::string> pack_rates;
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (const auto& tn : split(types, ',')) {
    DType t;
    if (!type_by_name(tn, t)) {
      std::fprintf(stderr, "packed_bench: unknown type %s\n", tn.c_str());
      return 2;
    }
    const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
    for (const auto& sh : split(shapes, ',')) {
      const auto rc = split(sh, 'x');
      const size_t rows = std::stoul(rc[0]), cols = std::stoul(rc[1]);
      const size_t rb = dtype_row_bytes(info, cols), bytes = rows * rb;
      const WeightView plain{t, nullptr, rows, cols};
      const size_t pb = packed_bytes(plain);
      if (pb == 0) {
        std::printf("%-5s %zux%zu: no packed form on this variant\n", info.name, rows, cols);
        continue;
      }
      // Copies for the cold decode rotation (and copy 0 for prefill); random rows repeated.
      const size_t n_copies = std::max<size_t>(2, (cold_mb << 20) / bytes + 1);
      std::vector<uint8_t> w(n_copies * bytes);
      // The packed copies in memory like the model's (Model::pack_for_cpu): huge pages where Linux
      // gives them (ALAP_HUGE_PAGES=0: ordinary pages), so that far read-ahead is not cut at 4 KiB.
      auto* pk = static_cast<uint8_t*>(alloc_streamed(n_copies * pb));
      if (pk == nullptr) throw std::bad_alloc();
      std::vector<float> src(cols);
      for (size_t r = 0; r < std::min<size_t>(rows, 256); ++r) {
        for (auto& v : src) v = 0.05f * nd(rng);
        quantize_row(t, src.data(), w.data() + r * rb, cols);
      }
      for (size_t r = 256; r < rows * n_copies; ++r) std::memcpy(w.data() + r * rb, w.data() + (r % 256) * rb, rb);
      std::vector<WeightView> wu(n_copies), wp(n_copies);
      double pack_s = 1e30;  // the load-time cost: one matrix, one thread, best of the copies
      for (size_t k = 0; k < n_copies; ++k) {
        wu[k] = WeightView{t, w.data() + k * bytes, rows, cols};
        const auto p0 = Clock::now();
        pack_weights(wu[k], pk + k * pb);
        pack_s = std::min(pack_s, std::chrono::duration<double>(Clock::now() - p0).count());
        wp[k] = wu[k];
        wp[k].packed = pk + k * pb;
      }
      pack_rates.push_back(info.name + std::string(" ") + sh + ": " +
                           std::to_string(static_cast<int>(double(bytes) / pack_s / 1e6)) + " MB/s");
      const Acts pre = make_acts(n_tok, cols, rng), one = make_acts(1, cols, rng);
      std::vector<float> y(n_tok * rows), y2(n_tok * rows);
      for (size_t nt : nts) {
        const size_t half = rows / 2 / 16 * 16;
        auto prod = [&](const WeightView& wv, const QuantizedActs& a, float* out) {
          pair.run(nt, [&](size_t i) {
            const size_t r0 = nt == 1 ? 0 : (i == 0 ? 0 : half), r1 = nt == 1 ? rows : (i == 0 ? half : rows);
            matmul(wv, a, out, rows, r0, r1);
          });
        };
        // Prefill: warm, alternating unpacked / packed.
        std::vector<double> tu, tp;
        const QuantizedActs pa = pre.view(n_tok, cols);
        prod(wu[0], pa, y.data());
        prod(wp[0], pa, y2.data());
        for (int k = 0; k < reps; ++k) {
          // Cold: copy k + 1 of the rotation, evicted from the L3 by packing the later copies.
          const size_t c = cold_prefill ? (static_cast<size_t>(k) + 1) % n_copies : 0;
          auto t0 = Clock::now();
          prod(wu[c], pa, y.data());
          auto t1 = Clock::now();
          prod(wp[c], pa, y2.data());
          auto t2 = Clock::now();
          tu.push_back(std::chrono::duration<double>(t1 - t0).count());
          tp.push_back(std::chrono::duration<double>(t2 - t1).count());
        }
        double maxdiff = 0, maxmag = 0;
        for (size_t i = 0; i < y.size(); ++i) {
          maxdiff = std::max(maxdiff, double(std::fabs(y[i] - y2[i])));
          maxmag = std::max(maxmag, double(std::fabs(y[i])));
        }
        const double macs = double(rows) * double(cols) * double(n_tok) / 1e9;
        const double gu = macs / best(tu), gp = macs / best(tp);
        // Cold decode: one token, each call on the next copy (the whole rotation is > L3).
        std::vector<double> du, dp;
        const QuantizedActs oa = one.view(1, cols);
        const int calls = static_cast<int>(std::max<size_t>(n_copies, 24));
        for (int k = 0; k < reps; ++k) {
          for (int pass = 0; pass < 2; ++pass) {
            auto t0 = Clock::now();
            for (int c = 0; c < calls; ++c) prod((pass ? wp : wu)[static_cast<size_t>(c) % n_copies], oa, y.data());
            const double s = std::chrono::duration<double>(Clock::now() - t0).count() / calls;
            (pass ? dp : du).push_back(s);
          }
        }
        const double bu = double(bytes) / best(du) / 1e9, bp = double(bytes) / best(dp) / 1e9;
        table.push_back(Row{info.name, sh, nt, gu, gp, bu, bp, maxdiff, maxmag});
        std::fprintf(stderr, "%s %s %zu threads: done\n", info.name, sh.c_str(), nt);
      }
      std::free(pk);
    }
  }
  measure_limits();
  for (size_t nt : nts) {
    std::printf("%zu thread(s): probe int8 dot peak %.1f GMAC/s (the variant's width), read probe %.1f GB/s\n", nt,
                peak[nt], probe[nt]);
  }
  std::printf("prefill GMAC/s (%% of the dot peak), cold decode GB/s (%% of the read probe), same thread count\n");
  std::printf("%-5s %-10s %3s | %-26s | %-26s | %s\n", "type", "rows x cols", "thr", "prefill unpacked / packed",
              "cold decode unpacked / packed", "packed / unpacked");
  for (const Row& r : table) {
    const size_t nt = r.nt;
    std::printf(
        "%-5s %-10s %3zu | %5.1f (%3.0f%%) / %5.1f (%3.0f%%) | %5.1f (%3.0f%%) / %5.1f (%3.0f%%) | "
        "prefill x%.2f, decode x%.2f (max|diff| %.1g of %.2g)\n",
        r.type.c_str(), r.shape.c_str(), nt, r.gu, 100 * r.gu / peak[nt], r.gp, 100 * r.gp / peak[nt], r.bu,
        100 * r.bu / probe[nt], r.bp, 100 * r.bp / probe[nt], r.gp / r.gu, r.bp / r.bu, r.maxdiff, r.maxmag);
  }
  std::printf("pack_weights, one thread:");
  for (const auto& p : pack_rates) std::printf(" %s;", p.c_str());
  std::printf("\n");
  return 0;
}
