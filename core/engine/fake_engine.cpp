// FakeEngine (fake_engine.h): a deterministic test double of EngineInterface. It reads no file
// and runs no model; every figure it reports is made up from the script and the request sizes.
#include "core/engine/fake_engine.h"

#include <algorithm>
#include <thread>

#include "core/engine/stop_strings.h"

namespace alap {

namespace {

// Bytes of the UTF-8 sequence starting with lead byte c (1 for continuation/invalid bytes).
size_t utf8_len(unsigned char c) {
  if (c >= 0xF0) return 4;
  if (c >= 0xE0) return 3;
  if (c >= 0xC0) return 2;
  return 1;
}

// reply cut into pieces of about piece_bytes, never inside a UTF-8 sequence.
std::vector<std::string> split_pieces(const std::string& reply, size_t piece_bytes) {
  std::vector<std::string> pieces;
  const size_t want = std::max<size_t>(piece_bytes, 1);
  size_t i = 0;
  while (i < reply.size()) {
    std::string piece;
    while (i < reply.size() && (piece.empty() || piece.size() < want)) {
      const size_t n = std::min(utf8_len(static_cast<unsigned char>(reply[i])), reply.size() - i);
      piece.append(reply, i, n);
      i += n;
    }
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

std::string fake_prompt_text(const GenerateRequest& r) {
  if (r.messages.empty()) return r.prompt;
  std::string t;
  if (!r.system_prompt.empty()) t += "system: " + r.system_prompt + "\n";
  for (const auto& m : r.messages) t += m.role + ": " + m.content + "\n";
  return t + "assistant: ";
}

size_t fake_tokens(size_t bytes) { return bytes / 4 + 1; }

// Share of the f16 size that a mode keeps (DESIGN.md: packed K is 0.53125 of f16).
double mode_factor_k(CacheMode m) { return m == CacheMode::f16 ? 1.0 : 0.53125; }
double mode_factor_v(CacheMode m) { return m == CacheMode::k8v8 ? 0.53125 : 1.0; }

}  // namespace

FakeEngine::FakeEngine(FakeEngineScript script) : script_(std::move(script)) {}

void FakeEngine::load(const std::filesystem::path& path, const LoadParams& params, const LoadProgress& progress,
                      const std::atomic<bool>* cancel) {
  unload();
  for (float f : {0.0f, 0.5f, 1.0f}) {
    if (cancel != nullptr && cancel->load()) throw EngineError(path.string() + ": loading cancelled");
    if (progress) progress(f, f < 1.0f ? "reading model" : "ready");
  }
  if (!script_.fail_load.empty()) throw EngineError(path.string() + ": " + script_.fail_load);
  info_ = ModelInfo{};
  info_.path = path;
  info_.name = "fake " + path.filename().string();
  info_.architecture = "llama";
  info_.n_params = 1000000;
  info_.weights_bytes = 2000000;
  info_.n_vocab = 256;
  info_.n_ctx_train = static_cast<int64_t>(script_.n_ctx);
  info_.n_ctx = params.n_ctx != 0 ? params.n_ctx : script_.n_ctx;
  info_.n_layer = 2;
  info_.n_embd = 64;
  info_.n_head = 4;
  info_.n_head_kv = 2;
  info_.head_dim = 16;
  info_.cache_mode = params.cache_mode;
  info_.n_threads = 1;
  loaded_ = true;
  if (on_memory_) on_memory_(memory_report());
}

void FakeEngine::unload() {
  loaded_ = false;
  cached_text_.clear();
  n_cached_ = 0;
}

ModelInfo FakeEngine::model_info() const {
  if (!loaded_) throw EngineError("engine: no model is loaded");
  return info_;
}

void FakeEngine::reset_context() {
  cached_text_.clear();
  n_cached_ = 0;
}

MemoryReport FakeEngine::memory_report() const {
  MemoryReport r;
  if (!loaded_) return r;
  const CacheMode m = info_.cache_mode;
  const double half = static_cast<double>(script_.kv_bytes_per_token) / 2.0;
  r.kv_fp16_bytes = n_cached_ * script_.kv_bytes_per_token;
  r.k_bytes = static_cast<uint64_t>(static_cast<double>(n_cached_) * half * mode_factor_k(m));
  r.v_bytes = static_cast<uint64_t>(static_cast<double>(n_cached_) * half * mode_factor_v(m));
  r.kv_bytes = r.k_bytes + r.v_bytes;
  r.kv_capacity_bytes =
      static_cast<uint64_t>(static_cast<double>(info_.n_ctx) * half * (mode_factor_k(m) + mode_factor_v(m)));
  r.weights_bytes = info_.weights_bytes;
  r.scratch_bytes = 100000;
  r.device_total_bytes = 16ull << 30;
  r.device_free_bytes = 8ull << 30;
  return r;
}

GenerateResult FakeEngine::generate(const GenerateRequest& request, const TokenCallback& on_text,
                                    const std::atomic<bool>& cancel) {
  if (!loaded_) throw EngineError("engine: no model is loaded");
  requests_.push_back(request);
  if (!script_.fail_generate.empty()) throw EngineError(script_.fail_generate);

  const std::string prompt = fake_prompt_text(request);
  GenerateResult result;
  GenerateStats& st = result.stats;
  st.n_prompt_tokens = fake_tokens(prompt.size());
  if (st.n_prompt_tokens >= info_.n_ctx) {
    throw EngineError("generate: the prompt is " + std::to_string(st.n_prompt_tokens) +
                      " tokens but the context holds " + std::to_string(info_.n_ctx));
  }
  size_t common = 0;
  while (common < prompt.size() && common < cached_text_.size() && prompt[common] == cached_text_[common]) ++common;
  st.n_reused_tokens = std::min(common / 4, st.n_prompt_tokens - 1);
  st.n_prefill_tokens = st.n_prompt_tokens - st.n_reused_tokens;
  st.prefill_ms = static_cast<double>(st.n_prefill_tokens);
  st.prefill_tps = 1000.0;
  n_cached_ = st.n_prompt_tokens;
  if (on_memory_) on_memory_(memory_report());

  std::string text;      // every piece so far (less a stop string)
  size_t emitted = 0;    // bytes of text given to on_text
  auto emit = [&](size_t end) {
    if (end > emitted && on_text) on_text(std::string_view(text).substr(emitted, end - emitted));
    emitted = std::max(emitted, end);
  };
  st.stop_reason = StopReason::eog;
  for (const std::string& piece : split_pieces(script_.reply, script_.piece_bytes)) {
    if (cancel.load()) {
      st.stop_reason = StopReason::cancelled;
      break;
    }
    if (request.max_tokens > 0 && result.tokens.size() >= static_cast<size_t>(request.max_tokens)) {
      st.stop_reason = StopReason::max_tokens;
      break;
    }
    if (n_cached_ + 1 > info_.n_ctx) {
      st.stop_reason = StopReason::context_full;
      st.message = "the context of " + std::to_string(info_.n_ctx) + " tokens is full";
      break;
    }
    if (script_.piece_delay.count() > 0) std::this_thread::sleep_for(script_.piece_delay);
    if (st.ttft_ms == 0.0) st.ttft_ms = st.prefill_ms + 1.0;
    result.tokens.push_back(static_cast<int32_t>(result.tokens.size() % 256));
    ++n_cached_;
    text += piece;
    // Stop strings as the real engine handles them: never stream any part of one.
    const size_t at = stop_strings::find(text, request.stop, emitted);
    if (at != std::string::npos) {
      text.resize(at);
      emit(at);
      st.stop_reason = StopReason::stop_string;
      break;
    }
    emit(text.size() - stop_strings::holdback(text, request.stop));
    if (on_memory_) on_memory_(memory_report());
  }
  if (st.stop_reason != StopReason::stop_string) emit(text.size());
  result.text = text;
  st.n_generated = result.tokens.size();
  st.decode_ms = static_cast<double>(st.n_generated) * 10.0;
  st.decode_tps = st.n_generated > 0 ? 100.0 : 0.0;
  st.n_context_tokens = n_cached_;
  cached_text_ = prompt + result.text;
  return result;
}

}  // namespace alap
