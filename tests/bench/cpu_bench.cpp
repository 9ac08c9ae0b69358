// cpu_bench: decode and prefill tokens/s of the CPU forward pass at a context depth, beside the
// physical limits measured in the same process (memory read bandwidth → the decode floor; VNNI
// int8 dot peak → the prefill ceiling), and attention alone. A measurement tool, not a test.
//
//   cpu_bench -m MODEL [--cache f16|k8|k8v8] [--threads N] [--depth D] [-p N] [-n N]
//             [--fill random|model] [--attn-only] [--read-ahead-ab] [--json]
//
// --fill random (default) writes random K/V for positions [0, D) straight into the cache (decode
// cost depends on the depth, not on what the cache holds); --fill model runs the model over D
// random tokens. --attn-only times attention alone: one decode token at depth D (beside the
// per-head loop it replaced; D >= 1) and a prefill of -p tokens at depth D (-p 0: none). Otherwise
// prefill is timed at depth D, then the cache is cut back to D and decode is timed there, so
// both are "at depth D". Decode floor = bytes read per token (every matrix the token
// multiplies, the whole output matrix, K and V of every layer up to the depth) ÷ bandwidth.
// "paired": -n more tokens, each between two one-pass read probes, each against its own floor;
// tokens the OS preempted are left out (ALAP_BENCH_TRACE=1 prints every token and its probes).
// --read-ahead-ab: the timed decode tokens alternate between the light packed types' software
// read-ahead on and off (quant.h set_light_read_ahead), on off off on ..., and the medians of each
// and of the off/on ratio of neighbouring pairs are printed: the same model, process and minute for
// both, as a CPU's choice (docs/bench/cpu.md, "Decode read-ahead by vendor") wants. The decode
// line then mixes the two.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "alap/kernels/attn.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/probe.h"
#include "alap/kernels/quant.h"
#include "core/model/attention_cpu.h"
#include "core/model/forward.h"
#include "core/model/model.h"

using namespace alap;
using Clock = std::chrono::steady_clock;

namespace {

// Involuntary context switches of this process so far (every thread): the OS took a CPU away.
long involuntary_switches() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_nivcsw;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Bytes of weights one decode token reads (the layers' matrices and the output matrix), and the
// multiply-accumulates of the products: layer_macs for each token of a batch, output_macs once a
// batch (a prompt asks for its last token's logits only: Forward::run, LogitsMode::last). Before
// session 38 the prefill rate counted the output matrix for every prompt token, which overstated
// it by 18% (the 30M eval model, 64 tokens) to 37% (Qwen2.5-0.5B): docs/bench/cpu.md.
// plain_macs: the part of layer_macs in plain weights (f32, f16, bf16), which run on the FMA units:
// for such files the FMA peak, not the int8 dot's, is the prefill ceiling.
void weight_traffic(const Model& m, double& bytes, double& layer_macs, double& output_macs, double& plain_macs) {
  bytes = 0;
  layer_macs = 0;
  plain_macs = 0;
  auto macs = [](const kernels::WeightView& w) { return static_cast<double>(w.n_rows) * static_cast<double>(w.n_cols); };
  for (const LayerWeights& L : m.weights().layers) {
    for (const auto* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
      bytes += static_cast<double>(kernels::matrix_bytes(*w));
      layer_macs += macs(*w);
      if (w->type == kernels::DType::f32 || w->type == kernels::DType::f16 || w->type == kernels::DType::bf16) {
        plain_macs += macs(*w);
      }
    }
  }
  bytes += static_cast<double>(kernels::matrix_bytes(m.weights().output));
  output_macs = macs(m.weights().output);
}

// K and V bytes one decode token reads at context length ctx.
double kv_traffic(const KvCache& c, size_t ctx) {
  const double dk = static_cast<double>(c.head_dim_k()), dv = static_cast<double>(c.head_dim_v());
  const double k_row = c.k_packed() ? dk + dk / 32 * 2 : 2 * dk;
  const double v_row = c.v_packed() ? dv + dv / 32 * 2 : 2 * dv;
  return static_cast<double>(c.n_layer() * c.n_head_kv() * ctx) * (k_row + v_row);
}

void fill_random(KvCache& cache, size_t depth) {
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> k(cache.n_head_kv() * cache.head_dim_k()), v(cache.n_head_kv() * cache.head_dim_v());
  for (size_t pos = 0; pos < depth; ++pos) {
    for (size_t l = 0; l < cache.n_layer(); ++l) {
      for (auto& x : k) x = nd(rng);
      for (auto& x : v) x = nd(rng);
      cache.store(l, pos, k.data(), v.data());
    }
  }
  cache.set_n_tokens(depth);
}

double cpu_seconds() {  // CPU time of the whole process (all threads): descheduled time is not in it
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Times {
  double wall = 1e30, cpu = 1e30;  // best of the passes
};

// Attention alone for one decode token at the cache's depth, every layer. `grouped`: through
// CpuAttention (all query heads of a KV group per pass, key blocks of 256 spread over the pool:
// the forward pass's path); otherwise the loop the forward pass ran before issue 5's attention
// work (one item per query head: its own scores, softmax and V sum over all keys), kept here as
// the in-process baseline.
void attention_once(const KvCache& cache, ThreadPool& pool, size_t n_head, bool grouped, CpuAttention& attn,
                    std::vector<std::vector<float>>& scr, Times& best) {
  const size_t Hk = cache.n_head_kv(), Dk = cache.head_dim_k(), Dv = cache.head_dim_v(), n = cache.n_tokens();
  const size_t gqa = n_head / Hk;
  std::vector<float> q(n_head * Dk, 0.1f), o(n_head * Dv);
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dk));
  const auto t0 = Clock::now();
  const double c0 = cpu_seconds();
  for (size_t l = 0; l < cache.n_layer(); ++l) {
    if (grouped) {
      attn.run(cache, pool, l, q.data(), 1, n - 1, n_head, scale, o.data());
      continue;
    }
    auto body = [&](size_t begin, size_t end, size_t thread) {
      std::vector<float>& s = scr[thread];
      std::vector<int8_t> qq(Dk);
      std::vector<uint16_t> qd(Dk);
      for (size_t h = begin; h < end; ++h) {
        const size_t g = h / gqa;
        if (cache.k_packed()) {
          kernels::k8_quantize(&q[h * Dk], Dk, qq.data(), qd.data());
          kernels::k8_scores(qq.data(), qd.data(), cache.k_q8(l, g), cache.k_scales(l, g), Dk, n, scale, s.data());
        } else {
          kernels::f16_scores(&q[h * Dk], cache.k_f16(l, g), Dk, n, scale, s.data());
        }
        kernels::softmax(s.data(), n);
        float* oh = &o[h * Dv];
        std::fill(oh, oh + Dv, 0.0f);
        if (cache.v_packed()) {
          kernels::k8_accum_v(s.data(), cache.v_q8(l, g), cache.v_scales(l, g), Dv, cache.block_v(), n, oh);
        } else {
          kernels::f16_accum_v(s.data(), cache.v_f16(l, g), Dv, n, oh);
        }
      }
    };
    pool.parallel_for_chunked(n_head, 1, std::ref(body));
  }
  best.cpu = std::min(best.cpu, cpu_seconds() - c0);
  best.wall = std::min(best.wall, seconds_since(t0));
}

// Attention alone for a prefill of n tokens at the cache's depth (positions depth..depth+n−1,
// whose K/V the cache already holds), every layer, through CpuAttention.
void prefill_attention_once(const KvCache& cache, ThreadPool& pool, size_t n_head, size_t n, CpuAttention& attn,
                            Times& best) {
  const size_t Dk = cache.head_dim_k(), Dv = cache.head_dim_v(), depth = cache.n_tokens();
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> q(n * n_head * Dk), o(n * n_head * Dv);
  for (auto& x : q) x = nd(rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dk));
  const auto t0 = Clock::now();
  const double c0 = cpu_seconds();
  for (size_t l = 0; l < cache.n_layer(); ++l) attn.run(cache, pool, l, q.data(), n, depth, n_head, scale, o.data());
  best.cpu = std::min(best.cpu, cpu_seconds() - c0);
  best.wall = std::min(best.wall, seconds_since(t0));
}

int usage() {
  std::fprintf(stderr,
               "usage: cpu_bench -m MODEL [--cache f16|k8|k8v8] [--threads N] [--depth D] [-p N] [-n N]\n"
               "                 [--fill random|model] [--attn-only] [--read-ahead-ab] [--json]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path, cache_name = "k8", fill = "random";
  size_t threads = 1, depth = 0, n_prompt = 128, n_gen = 32;
  bool json = false, attn_only = false, read_ahead_ab = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "-m" && (v = next())) path = v;
    else if (a == "--cache" && (v = next())) cache_name = v;
    else if (a == "--threads" && (v = next())) threads = std::strtoul(v, nullptr, 10);
    else if (a == "--depth" && (v = next())) depth = std::strtoul(v, nullptr, 10);
    else if (a == "-p" && (v = next())) n_prompt = std::strtoul(v, nullptr, 10);
    else if (a == "-n" && (v = next())) n_gen = std::strtoul(v, nullptr, 10);
    else if (a == "--fill" && (v = next())) fill = v;
    else if (a == "--attn-only") attn_only = true;
    else if (a == "--read-ahead-ab") read_ahead_ab = true;
    else if (a == "--json") json = true;
    else return usage();
  }
  const auto mode = parse_cache_mode(cache_name);
  if (path.empty() || !mode || (fill != "random" && fill != "model") || threads == 0) return usage();
  try {
    ModelOptions opt;
    opt.prefault = true;
    const Model model = Model::load(path, opt);
    const ModelHParams& hp = model.hparams();
    ThreadPool pool(threads);
    KvCache cache(kv_cache_config(model, *mode, depth + n_prompt + 2 * n_gen + 1));
    Forward fwd(model, 512);
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(hp.n_vocab - 1));
    auto tokens = [&](size_t n) {
      std::vector<int32_t> t(n);
      for (auto& x : t) x = pick(rng);
      return t;
    };
    if (fill == "random") {
      // --attn-only also times a prefill's attention: the prompt's K/V are written too, then cut off.
      fill_random(cache, depth + (attn_only ? n_prompt : 0));
      cache.truncate(depth);
    } else {
      const std::vector<int32_t> t = tokens(depth);
      for (size_t pos = 0; pos < depth; pos += 512) {
        fwd.run(cache, pool, std::span<const int32_t>(t).subspan(pos, std::min<size_t>(512, depth - pos)), pos);
      }
    }
    // Physical limits, measured now (same process, same moment of the shared machine's load).
    const kernels::BandwidthProbe bw_all = kernels::measure_read_bandwidth(0);
    const kernels::BandwidthProbe bw_n = kernels::measure_read_bandwidth(threads);
    const kernels::DotPeakProbe peak = kernels::measure_int8_dot_peak(threads, 32);
    const kernels::DotPeakProbe peak512 = kernels::measure_int8_dot_peak(threads, 0);
    const kernels::DotPeakProbe fma = kernels::measure_f32_fma_peak(threads);
    // Where the prefill products run on AMX tiles (quant.h amx_prefill_active()), the tile unit's peak too.
    const kernels::DotPeakProbe amx =
        kernels::amx_prefill_active() ? kernels::measure_amx_peak(threads) : kernels::DotPeakProbe{};
    double w_bytes = 0, layer_macs = 0, output_macs = 0, plain_macs = 0;
    weight_traffic(model, w_bytes, layer_macs, output_macs, plain_macs);
    const double plain = layer_macs > 0 ? plain_macs / layer_macs : 0;  // the plain share

    if (attn_only) {
      // The two paths alternate pass by pass (A B A B …, 15 each after a warm-up of each), so both
      // see the same moments of the shared machine; best wall and best CPU time of each.
      CpuAttention attn;
      std::vector<std::vector<float>> scr(threads, std::vector<float>(depth + 1));
      Times grouped, per_head, warm;
      // The decode token reads the cache's last position as its own: none at depth 0.
      for (int r = 0; depth > 0 && r < 16; ++r) {
        attention_once(cache, pool, hp.n_head, false, attn, scr, r == 0 ? warm : per_head);
        attention_once(cache, pool, hp.n_head, true, attn, scr, r == 0 ? warm : grouped);
      }
      Times prefill;
      if (n_prompt > 0) {
        prefill_attention_once(cache, pool, hp.n_head, n_prompt, attn, warm);
        for (int r = 0; r < 5; ++r) prefill_attention_once(cache, pool, hp.n_head, n_prompt, attn, prefill);
      }
      const double bytes = kv_traffic(cache, depth);
      if (depth > 0) {
        std::printf(json ? "{\"attn_only\":true,\"cache\":\"%s\",\"depth\":%zu,\"threads\":%zu,\"attn_ms\":%.3f,"
                           "\"attn_cpu_ms\":%.3f,\"per_head_ms\":%.3f,\"per_head_cpu_ms\":%.3f,"
                           "\"kv_bytes\":%.0f,\"gbps\":%.2f,\"bandwidth_gbps\":%.2f}\n"
                         : "attention cache %s depth %zu threads %zu: %.3f ms/token (CPU %.3f ms), per-head loop "
                           "%.3f ms (CPU %.3f ms), %.0f bytes, %.2f GB/s (probe %.2f GB/s)\n",
                    cache_name.c_str(), depth, threads, grouped.wall * 1e3, grouped.cpu * 1e3, per_head.wall * 1e3,
                    per_head.cpu * 1e3, bytes, bytes / grouped.wall / 1e9, bw_n.gbps);
      }
      if (n_prompt > 0) {
        std::printf(json ? "{\"attn_only\":true,\"cache\":\"%s\",\"depth\":%zu,\"threads\":%zu,\"prefill_tokens\":%zu,"
                           "\"prefill_attn_ms\":%.3f,\"prefill_attn_cpu_ms\":%.3f}\n"
                         : "prefill attention cache %s depth %zu threads %zu: %zu tokens %.3f ms (CPU %.3f ms), "
                           "best of 5\n",
                    cache_name.c_str(), depth, threads, n_prompt, prefill.wall * 1e3, prefill.cpu * 1e3);
      }
      return 0;
    }

    // Prefill: best of up to five runs at depth D (the machine is shared: the best run had the
    // fewest interruptions), at least two, and no more once two seconds are spent (a 64-token
    // prompt on the 30M eval model takes ~4 ms, and two runs of it read 39-52% of the peak in
    // one session: docs/bench/cpu.md, session 28). Decode: per-token times; the median is
    // reported (and the best).
    double prefill_s = 0, prefill_cpu_s = 0;  // best wall time, and best CPU time (all threads) of the runs
    if (n_prompt > 0) {
      const std::vector<int32_t> p = tokens(n_prompt);
      double spent = 0;
      for (int rep = 0; rep < 5 && (rep < 2 || spent < 2.0); ++rep) {
        const auto t0 = Clock::now();
        const double c0 = cpu_seconds();
        fwd.run(cache, pool, p, depth);
        const double s = seconds_since(t0), c = cpu_seconds() - c0;
        spent += s;
        prefill_s = rep == 0 ? s : std::min(prefill_s, s);
        prefill_cpu_s = rep == 0 ? c : std::min(prefill_cpu_s, c);
        cache.truncate(depth);
      }
    }
    double decode_s = 0, decode_best_s = 0;
    int32_t next = pick(rng);
    if (n_gen > 0) {
      fwd.run(cache, pool, std::span<const int32_t>(&next, 1), depth);  // warm-up token, not timed
      std::vector<double> per(n_gen), side_s[2];  // side 0: read-ahead on, 1: off
      for (size_t i = 0; i < n_gen; ++i) {
        const size_t side = (i % 4 == 1 || i % 4 == 2) ? 1 : 0;  // on off off on ...
        if (read_ahead_ab) kernels::set_light_read_ahead(side == 0 ? kernels::ReadAhead::on : kernels::ReadAhead::off);
        const auto t0 = Clock::now();
        const std::span<const float> logits = fwd.run(cache, pool, std::span<const int32_t>(&next, 1), depth + 1 + i);
        next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
        per[i] = seconds_since(t0);
        side_s[side].push_back(per[i]);
      }
      if (read_ahead_ab) {
        kernels::set_light_read_ahead(kernels::ReadAhead::automatic);
        std::vector<double> ratio;
        for (size_t k = 0; k < std::min(side_s[0].size(), side_s[1].size()); ++k) {
          ratio.push_back(side_s[1][k] / side_s[0][k]);
        }
        auto median = [](std::vector<double> v) {
          std::sort(v.begin(), v.end());
          return v.empty() ? 0.0 : v[v.size() / 2];
        };
        std::printf("read-ahead ab: on %.3f ms, off %.3f ms a token (medians); off/on pairs median %.3f (n %zu); "
                    "automatic here: %s\n",
                    median(side_s[0]) * 1e3, median(side_s[1]) * 1e3, median(ratio), ratio.size(),
                    kernels::light_read_ahead() ? "on" : "off");
      }
      std::sort(per.begin(), per.end());
      decode_s = per[n_gen / 2] * static_cast<double>(n_gen);
      decode_best_s = per[0];
    }
    // Paired floor. The shared machine's read bandwidth moves between states (33-45 and 57-86
    // GB/s with both threads here) on a scale of seconds, so a probe taken once can belong to
    // another state than the tokens it bounds. Here n_gen more tokens run one by one with a read
    // probe (256 MiB, the decode's thread count) before and after each: a token's floor is its bytes
    // at the better of its two probes, and the median of floor/time over the tokens is reported.
    // The probes also leave the caches cold, so small models cannot read their weights from L3.
    // A token during which the OS preempted one of the decode's threads (getrusage's involuntary
    // context switches, all threads) measured the machine's other load, not the decode: such tokens
    // are left out of the medians when at least half the tokens ran undisturbed.
    // The probes run on the decode's own pool (a slice a thread), not on threads of their own: a
    // fresh set of threads between tokens left the pool's worker asleep and often on the caller's
    // CPU when the token began, so on the 2-vCPU machine whole tokens ran on one thread (session 9,
    // "Two threads on the eval model"), which steady decoding, token after token, does not do.
    // ALAP_BENCH_FRESH_PROBE=1 gives the old probe threads, for comparison.
    double paired_pct = 0, paired_gbps = 0;
    size_t paired_preempted = 0;
    if (n_gen > 0) {
      kernels::ReadProbe probe(threads, size_t{256} << 20);
      const bool fresh_probe = std::getenv("ALAP_BENCH_FRESH_PROBE") != nullptr;
      volatile unsigned long long probe_sink = 0;  // keeps the probe's reads
      auto probe_pass = [&]() -> double {
        if (fresh_probe) return probe.pass();
        std::vector<unsigned long long> sums(probe.n_threads());
        const auto p0 = Clock::now();
        pool.parallel_for_indexed(probe.n_threads(), [&](size_t b, size_t e, size_t) {
          for (size_t t = b; t < e; ++t) sums[t] = probe.read_slice(t);
        });
        const double ps = seconds_since(p0);
        for (unsigned long long v : sums) probe_sink = probe_sink + v;
        return static_cast<double>(probe.bytes()) / ps / 1e9;
      };
      std::vector<double> pct, gbps, pct_all, gbps_all;
      double before = probe_pass();
      const size_t pos0 = depth + 1 + n_gen;
      for (size_t i = 0; i < n_gen; ++i) {
        const long switches0 = involuntary_switches();
        const auto t0 = Clock::now();
        const std::span<const float> logits = fwd.run(cache, pool, std::span<const int32_t>(&next, 1), pos0 + i);
        const double s = seconds_since(t0);
        const long preempted = involuntary_switches() - switches0;
        next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
        const double after = probe_pass();
        const double g = std::max(before, after);
        const double p = 100.0 * (w_bytes + kv_traffic(cache, pos0 + i + 1)) / (g * 1e9) / s;
        pct_all.push_back(p);
        gbps_all.push_back(g);
        if (preempted == 0) {
          pct.push_back(p);
          gbps.push_back(g);
        }
        if (std::getenv("ALAP_BENCH_TRACE")) {
          std::fprintf(stderr, "token %zu: %.3f ms, probes %.1f / %.1f GB/s, preempted %ld\n", i, s * 1e3, before, after,
                       preempted);
        }
        before = after;
      }
      paired_preempted = n_gen - pct.size();
      if (2 * pct.size() < n_gen) {
        pct.swap(pct_all);
        gbps.swap(gbps_all);
      }
      std::sort(pct.begin(), pct.end());
      std::sort(gbps.begin(), gbps.end());
      paired_pct = pct[pct.size() / 2];
      paired_gbps = gbps[gbps.size() / 2];
    }
    const double prefill_tps = prefill_s > 0 ? static_cast<double>(n_prompt) / prefill_s : 0;
    const double decode_tps = decode_s > 0 ? static_cast<double>(n_gen) / decode_s : 0;
    const double tok_bytes = w_bytes + kv_traffic(cache, depth + 1 + n_gen / 2);
    const double floor_ms = tok_bytes / (bw_all.gbps * 1e9) * 1e3;
    const double decode_ms = decode_tps > 0 ? 1e3 / decode_tps : 0;
    const double prefill_gmacs =
        prefill_s > 0 ? (static_cast<double>(n_prompt) * layer_macs + output_macs) / prefill_s / 1e9 : 0;
    if (json) {
      std::printf("{\"model\":\"%s\",\"cache\":\"%s\",\"depth\":%zu,\"threads\":%zu,\"prefill_tps\":%.2f,"
                  "\"decode_tps\":%.2f,\"decode_ms_per_token\":%.3f,\"floor_ms_per_token\":%.3f,"
                  "\"bandwidth_gbps\":%.2f,\"bandwidth_gbps_threads\":%.2f,\"bytes_per_token\":%.0f,"
                  "\"prefill_gmacs\":%.2f,\"dot_peak_gmacs\":%.2f,\"dot_peak_isa\":\"%s\",\"kernels\":\"%s\","
                  "\"decode_best_ms\":%.3f,\"dot_peak512_gmacs\":%.2f,\"prefill_cpu_ms\":%.3f,"
                  "\"paired_floor_pct\":%.1f,\"paired_gbps\":%.2f,\"paired_preempted\":%zu,"
                  "\"fma_peak_gmacs\":%.2f,\"plain_share\":%.3f,\"amx_peak_gmacs\":%.2f}\n",
                  path.c_str(), cache_name.c_str(), depth, threads, prefill_tps, decode_tps, decode_ms, floor_ms,
                  bw_all.gbps, bw_n.gbps, tok_bytes, prefill_gmacs, peak.gmacs, peak.isa, kernels::cpu_variant_name(),
                  decode_best_s * 1e3, peak512.gmacs, prefill_cpu_s * 1e3, paired_pct, paired_gbps, paired_preempted,
                  fma.gmacs, plain, amx.gmacs);
    } else {
      std::printf("%s | cache %s | %zu threads | depth %zu | kernels %s\n", path.c_str(), cache_name.c_str(), threads,
                  depth, kernels::cpu_variant_name());
      std::printf("prefill %zu tokens: %.2f tok/s (CPU %.1f ms) = %.1f GMAC/s; int8 dot peak (%zu threads) %s %.1f GMAC/s: %.0f%%, "
                  "%s %.1f GMAC/s: %.0f%%\n",
                  n_prompt, prefill_tps, prefill_cpu_s * 1e3, prefill_gmacs, threads, peak.isa, peak.gmacs,
                  100.0 * prefill_gmacs / std::max(peak.gmacs, 1e-9), peak512.isa, peak512.gmacs,
                  100.0 * prefill_gmacs / std::max(peak512.gmacs, 1e-9));
      if (amx.gmacs > 0) {
        std::printf("        products on AMX tiles: %s peak %.1f GMAC/s (no operand loads; with them ~0.55): %.0f%%\n",
                    amx.isa, amx.gmacs, 100.0 * prefill_gmacs / std::max(amx.gmacs, 1e-9));
      }
      if (plain > 0) {
        std::printf("        %.0f%% of the layers' multiply-adds in f32/f16/bf16 weights; f32 FMA peak %s %.1f GMAC/s: %.0f%%\n",
                    100.0 * plain, fma.isa, fma.gmacs, 100.0 * prefill_gmacs / std::max(fma.gmacs, 1e-9));
      }
      std::printf("decode  %zu tokens: %.2f tok/s = %.3f ms/token median (best %.3f); floor %.3f ms/token (%.1f MB/token at %.2f GB/s, "
                  "all threads; %.2f GB/s with %zu): %.0f%% of the floor\n",
                  n_gen, decode_tps, decode_ms, decode_best_s * 1e3, floor_ms, tok_bytes / 1e6, bw_all.gbps, bw_n.gbps, threads,
                  100.0 * floor_ms / std::max(decode_ms, 1e-9));
      std::printf("paired  %zu tokens, each between two read probes (%zu threads): median %.0f%% of its floor, "
                  "median probe %.2f GB/s (%zu preempted: %s)\n",
                  n_gen, threads, paired_pct, paired_gbps, paired_preempted,
                  2 * paired_preempted <= n_gen ? "left out" : "kept, too many to leave out");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpu_bench: %s\n", e.what());
    return 1;
  }
}
