// Shared pieces of the engine-driven alap-cli subcommands (generate, chat, perplexity,
// kv-compare, bench): option reading into engine settings, a tiny JSON object writer, file
// reading and Ctrl-C → cancel flag. Not a subcommand itself (registers nothing).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "command.h"
#include "core/engine/engine.h"
#include "core/engine/perplexity.h"

namespace alap::cli {

// -m/--model (required), --cache, --ctx, --threads (>= 1; without it, one per physical core:
// LoadParams::n_threads = 0), --gpu-layers N|-1|auto. Problems are collected in `error` (first one
// wins); the rest of the options stay for the caller to read.
struct LoadOptions {
  std::string model;
  LoadParams params;
  bool cache_given = false;       // --cache was on the command line
  bool gpu_layers_given = false;  // --gpu-layers was on the command line
};
LoadOptions read_load_options(Args& args, std::string& error, CacheMode default_mode = CacheMode::f16);

// perplexity and kv-compare: windows of --ctx tokens (512 when not given), the option's threads,
// at most `chunks` windows (all when empty), cache `mode`.
PerplexityParams perplexity_params(const LoadOptions& load, std::optional<long long> chunks, CacheMode mode);
// Their progress line on stderr ("\r[done/total] ppl X"); `shown` becomes true at the first call so
// an error can start on a fresh line.
PerplexityProgress perplexity_progress(bool& shown);

// The GPU defaults of the commands that run a model (generate, chat, bench, serve): without
// --gpu-layers, -1 (auto) when a GPU backend is usable, else 0; without --cache, the engine's
// default mode (LoadParams::cache_mode_default: k8, or f16 where the model's shape cannot be packed).
// A --cache given on the command line is never changed.
void apply_gpu_defaults(LoadOptions& options);

// "backend: GPU NVIDIA H200, 24 of 24 layers (...)" or "backend: CPU, 8 threads" on stderr, with
// the device's memory when on the GPU.
void print_backend_line(const Engine& engine);

// The sampling and request options of generate and chat: --temp --top-k --top-p --min-p
// --repeat-penalty --repeat-last-n --seed -n --system --stop (one stop string).
// Defaults: temp 0.8, top-k 40, top-p 0.95, min-p 0.05, repeat-penalty 1.0, n 256, random seed.
GenerateRequest read_generate_options(Args& args, std::string& error);

// Whole file as bytes; throws EngineError naming the file when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

// While alive, SIGINT sets `flag` instead of killing the process (a second Ctrl-C kills).
class InterruptGuard {
 public:
  explicit InterruptGuard(std::atomic<bool>& flag);
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// {"key":value,...} built in order.
class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, uint64_t value);
  JsonObject& add(const std::string& key, int64_t value);
  JsonObject& add(const std::string& key, int value) { return add(key, static_cast<int64_t>(value)); }
  JsonObject& add(const std::string& key, bool value);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(const std::string& k);
  std::string body_;
};
std::string json_escape(const std::string& s);

// One-line human summaries for stderr.
std::string format_stats(const GenerateStats& stats);

}  // namespace alap::cli
