// Fuzz harness for loading and running a model file: byte 0 holds flags, the rest is a GGUF file
// that the engine loads (hyper-parameters, every tensor's shape and type, tokenizer, chat template,
// cache) and, when it loads, runs: a short reply of a few tokens, chat or raw. Everything the
// engine refuses must be an EngineError with a message; ASan/UBSan see the rest. Not a check of
// what the model says (tests/core does that).
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/engine/engine.h"
#include "tests/fuzz/fuzz_targets.h"

namespace alap::fuzz {

namespace {
// One scratch file per process, removed when the process exits normally (the fuzzers' -runs=N
// end and the corpus replays do; a crash leaves it for the report).
struct ScratchFile {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("alap_engine_fuzz_" + std::to_string(::getpid()) + ".gguf");
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
};
}  // namespace

int engine_load(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  // The engine loads from a path (it maps the file): one scratch file per process.
  static const ScratchFile scratch;
  const std::filesystem::path& path = scratch.path;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
    check(static_cast<bool>(out), "could not write the scratch file");
  }

  Engine engine;
  LoadParams lp;
  lp.n_ctx = 30 + (flags & 7u) * 2;  // small contexts: a chat prompt fits, a reply can fill one
  lp.n_threads = 1;
  lp.gpu_layers = 0;
  lp.cache_mode = (flags & 8u) ? CacheMode::k8 : (flags & 16u) ? CacheMode::k8v8 : CacheMode::f16;
  lp.memory_limit_bytes = uint64_t{256} << 20;  // no hostile file may make the harness allocate gigabytes
  try {
    engine.load(path, lp);
  } catch (const EngineError& e) {
    check(e.what()[0] != '\0', "empty engine error");
    return 0;
  }
  const ModelInfo info = engine.model_info();
  check(info.n_ctx == lp.n_ctx, "context not as asked");
  check(info.n_vocab > 0 && info.n_layer > 0, "a loaded model without vocabulary or layers");

  GenerateRequest req;
  if (flags & 32u) {
    req.messages.push_back(ChatMessage{"user", "ab", {}});
  } else {
    req.prompt = "ab";
  }
  req.max_tokens = 3;
  req.sampling.temperature = (flags & 64u) ? 0.0f : 0.8f;
  req.sampling.seed = flags;
  const std::atomic<bool> cancel{false};
  size_t streamed = 0;
  try {
    const GenerateResult r = engine.generate(req, [&](std::string_view t) { streamed += t.size(); }, cancel);
    check(r.text.size() == streamed, "result text differs from what was streamed");
    check(r.tokens.size() <= 3, "more tokens than asked");
    for (int32_t id : r.tokens) check(id >= 0 && id < info.n_vocab, "sampled id outside the vocabulary");
  } catch (const EngineError& e) {
    check(e.what()[0] != '\0', "empty engine error");
  }
  return 0;
}

}  // namespace alap::fuzz
