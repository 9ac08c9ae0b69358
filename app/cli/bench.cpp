// alap-cli bench -m MODEL [-p N] [-n N] [--depth D] [--cache MODE] [--threads N] [--gpu-layers N]
// [--json]: fills the cache to depth D, then times prefill of N prompt tokens and decode of N
// tokens (random valid ids, seeded). A measurement tool, not a test: nothing is asserted.
#include <chrono>
#include <cstdio>
#include <exception>
#include <random>

#include "cli_common.h"
#include "core/model/model.h"
#include "core/runtime/thread_pool.h"
#include "core/sample/sampler.h"

namespace alap::cli {
namespace {

int run_bench(const std::vector<std::string>& argv) {
  Args args("bench", argv);
  std::string error;
  LoadOptions load = read_load_options(args, error);
  const long long n_prompt = args.integer("-p", "--n-prompt").value_or(512);
  const long long n_gen = args.integer("-n", "--n-gen").value_or(128);
  const long long depth = args.integer("--depth").value_or(0);
  const bool json = args.flag("--json");
  if (!args.finish()) return 1;
  if (!error.empty()) return args.fail(error);
  if (load.model.empty()) return args.fail("missing -m MODEL");
  if (n_prompt < 0 || n_gen < 0 || depth < 0) return args.fail("-p, -n and --depth must not be negative");
  if (n_prompt + n_gen == 0) return args.fail("nothing to measure: -p and -n are both 0");

  try {
    using Clock = std::chrono::steady_clock;
    const size_t total = static_cast<size_t>(depth + n_prompt + n_gen);
    if (load.params.n_ctx == 0) load.params.n_ctx = total;
    if (load.params.n_ctx < total) {
      return args.fail("--ctx " + std::to_string(load.params.n_ctx) + " is smaller than depth + p + n = " +
                       std::to_string(total));
    }
    apply_gpu_defaults(load);
    Engine engine;
    engine.load(load.model, load.params);
    const ModelInfo info = engine.model_info();
    for (const auto& w : info.warnings) {
      if (w.find("chat template") == std::string::npos) std::fprintf(stderr, "warning: %s\n", w.c_str());  // no chat here
    }
    print_backend_line(engine);
    const bool on_gpu = info.gpu_layers > 0;

    std::mt19937_64 rng(1234);
    std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(info.n_vocab - 1));
    auto random_tokens = [&](size_t n) {
      std::vector<int32_t> v(n);
      for (auto& t : v) t = pick(rng);
      return v;
    };

    if (depth > 0) {
      std::fprintf(stderr, "filling the cache to depth %lld\n", depth);
      const std::vector<int32_t> fill = random_tokens(static_cast<size_t>(depth));
      for (size_t pos = 0; pos < fill.size(); pos += 512) {
        const size_t n = std::min<size_t>(512, fill.size() - pos);
        engine.evaluate(std::span<const int32_t>(fill).subspan(pos, n), pos);
      }
    }
    size_t pos = static_cast<size_t>(depth);

    double prefill_s = 0.0;
    if (n_prompt > 0) {
      const std::vector<int32_t> prompt = random_tokens(static_cast<size_t>(n_prompt));
      const auto t0 = Clock::now();
      engine.evaluate(prompt, pos);
      prefill_s = std::chrono::duration<double>(Clock::now() - t0).count();
      pos += prompt.size();
    }

    double decode_s = 0.0;
    if (n_gen > 0) {
      int32_t next = pick(rng);
      const auto t0 = Clock::now();
      for (long long i = 0; i < n_gen; ++i) {
        const std::span<const float> logits = engine.evaluate(std::span<const int32_t>(&next, 1), pos++);
        next = sampler_argmax(logits);  // greedy, as a real decode loop would
      }
      decode_s = std::chrono::duration<double>(Clock::now() - t0).count();
    }

    const double prefill_tps = prefill_s > 0.0 ? static_cast<double>(n_prompt) / prefill_s : 0.0;
    const double decode_tps = decode_s > 0.0 ? static_cast<double>(n_gen) / decode_s : 0.0;
    const MemoryReport mem = engine.memory_report();
    // The decode floor, measured in this process now: the bytes one token reads (the weights, as
    // the file holds them — an untied embedding table counts in full — and the cached K/V) over
    // this machine's read bandwidth with all threads (kernels/cpu/probe.cpp).
    // (CPU only: on the GPU the device's bandwidth is not measured here.)
    const double bw_gbps = on_gpu ? 0.0 : measure_read_bandwidth_gbps(0);
    const double floor_ms = bw_gbps > 0 ? static_cast<double>(mem.weights_bytes + mem.kv_bytes) / (bw_gbps * 1e9) * 1e3 : 0.0;
    const double decode_ms = decode_tps > 0 ? 1000.0 / decode_tps : 0.0;
    if (json) {
      JsonObject o;
      o.add("model", info.name).add("n_prompt", static_cast<int64_t>(n_prompt)).add("n_gen", static_cast<int64_t>(n_gen));
      o.add("depth", static_cast<int64_t>(depth)).add("cache", cache_mode_name(info.cache_mode));
      o.add("threads", static_cast<uint64_t>(info.n_threads)).add("prefill_tps", prefill_tps).add("decode_tps", decode_tps);
      o.add("prefill_ms", prefill_s * 1000.0).add("decode_ms", decode_s * 1000.0);
      o.add("prefill_chunk", static_cast<uint64_t>(info.prefill_chunk)).add("prefill_blas", gpu_blas_use_name(info.gpu_blas));
      o.add("kv_bytes", mem.kv_bytes).add("kv_fp16_bytes", mem.kv_fp16_bytes).add("backend", on_gpu ? "gpu" : "cpu");
      o.add("device", on_gpu ? info.backend : std::string("CPU")).add("gpu_layers", static_cast<int64_t>(info.gpu_layers));
      o.add("n_layer", info.n_layer).add("weights_bytes", mem.weights_bytes).add("kv_capacity_bytes", mem.kv_capacity_bytes);
      o.add("scratch_bytes", mem.scratch_bytes).add("device_total_bytes", mem.device_total_bytes);
      o.add("device_free_bytes", mem.device_free_bytes);
      o.add("floor_ms_per_token", floor_ms).add("bandwidth_gbps", bw_gbps).add("decode_ms_per_token", decode_ms);
      std::printf("%s\n", o.str().c_str());
    } else {
      std::printf("%s | cache %s | %zu threads | depth %lld\n", info.name.c_str(), cache_mode_name(info.cache_mode),
                  info.n_threads, depth);
      std::printf("prefill %lld tokens: %.2f tok/s (%.1f ms; batches of up to %zu%s)\n", n_prompt, prefill_tps,
                  prefill_s * 1000.0, info.prefill_chunk, info.gpu_blas == GpuBlasUse::used ? "; vendor BLAS for large products" : "");
      std::printf("decode  %lld tokens: %.2f tok/s (%.1f ms)\n", n_gen, decode_tps, decode_s * 1000.0);
      if (on_gpu) {
        std::printf("device %s: %d of %lld layers; weights %.1f MiB, kv cache %.1f MiB allocated, scratch %.1f MiB; "
                    "%.2f of %.2f GiB free\n",
                    info.backend.c_str(), info.gpu_layers, static_cast<long long>(info.n_layer),
                    static_cast<double>(mem.weights_bytes) / (1 << 20), static_cast<double>(mem.kv_capacity_bytes) / (1 << 20),
                    static_cast<double>(mem.scratch_bytes) / (1 << 20), static_cast<double>(mem.device_free_bytes) / (1ull << 30),
                    static_cast<double>(mem.device_total_bytes) / (1ull << 30));
      } else {
        std::printf("decode floor %.3f ms/token (%.1f MB at %.2f GB/s read bandwidth) beside %.3f ms/token measured\n",
                    floor_ms, static_cast<double>(mem.weights_bytes + mem.kv_bytes) / 1e6, bw_gbps, decode_ms);
      }
      std::printf("kv cache now %llu bytes (%llu in f16)\n", static_cast<unsigned long long>(mem.kv_bytes),
                  static_cast<unsigned long long>(mem.kv_fp16_bytes));
    }
    return 0;
  } catch (const std::exception& e) {
    return args.fail(e.what());
  }
}

}  // namespace
}  // namespace alap::cli

ALAP_CLI_COMMAND("bench", "prefill and decode tokens/s at a context depth", alap::cli::run_bench);
