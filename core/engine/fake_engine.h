// FakeEngine: a TEST DOUBLE of EngineInterface for the app's tests and UI work without a model.
// It loads nothing (no file is read), "generates" a canned reply split into fixed pieces, and
// fabricates stats and a memory report deterministically. Never used for real inference.
//
//   alap::FakeEngineScript script;
//   script.reply = "Hello there!";
//   script.piece_bytes = 3;
//   alap::FakeEngine fake(script);
//   fake.load("any.gguf", {});                       // throws when script.fail_load is set
//   auto r = fake.generate(req, on_text, cancel);    // on_text gets "Hel", "lo ", "the", "re!"
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/engine.h"

namespace alap {

struct FakeEngineScript {
  std::string reply = "Hello from the fake engine.";  // streamed for every request
  size_t piece_bytes = 4;          // bytes per fake token (never splits a UTF-8 sequence)
  std::chrono::milliseconds piece_delay{0};  // sleep before each piece (to test cancel and the UI)
  std::string fail_load;           // non-empty: load() throws EngineError with this message
  std::string fail_generate;       // non-empty: generate() throws EngineError with this message
  size_t n_ctx = 4096;
  CacheMode cache_mode = CacheMode::k8;
  uint64_t kv_bytes_per_token = 1000;  // in f16; packed modes report their share (k8: 0.765625)
};

class FakeEngine final : public EngineInterface {
 public:
  explicit FakeEngine(FakeEngineScript script = {});

  void load(const std::filesystem::path& path, const LoadParams& params, const LoadProgress& progress = {},
            const std::atomic<bool>* cancel = nullptr) override;
  void unload() override;
  bool is_loaded() const override { return loaded_; }
  ModelInfo model_info() const override;
  // Pieces of script.reply; each is one "token". Honours max_tokens, stop strings and cancel
  // (checked before every piece). Prompt tokens are counted as bytes of the prompt / 4 + 1;
  // reuse is the shared prefix (in those units) with the previous call's prompt + reply.
  GenerateResult generate(const GenerateRequest& request, const TokenCallback& on_text,
                          const std::atomic<bool>& cancel) override;
  void reset_context() override;
  MemoryReport memory_report() const override;
  void set_memory_callback(MemoryCallback callback) override { on_memory_ = std::move(callback); }

  FakeEngineScript& script() { return script_; }
  // The requests generate() received, in order (tests inspect them).
  const std::vector<GenerateRequest>& requests() const { return requests_; }
  size_t n_context_tokens() const { return n_cached_; }

 private:
  FakeEngineScript script_;
  bool loaded_ = false;
  ModelInfo info_;
  std::string cached_text_;  // prompt + reply of the previous call
  size_t n_cached_ = 0;      // fake tokens in the fake cache
  std::vector<GenerateRequest> requests_;
  MemoryCallback on_memory_;
};

}  // namespace alap
