// Tests for core/engine/engine.{h,cpp} on a tiny random llama model with a tiny SentencePiece
// vocab (tests/support/tiny_llama_model.h, written per test): seeded determinism, every stop
// reason, cancel, KV prefix reuse, the context limit, the memory report and the chat-template
// fallback.
#include "core/engine/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "core/gguf/gguf.h"
#include "core/text/tokenizer.h"
#include "tests/support/tiny_llama_model.h"

namespace alap {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kLayers = 2, kHeadKv = 1;

struct TinyOptions {
  int64_t head_dim = 32;
  std::string chat_template;   // empty: no tokenizer.chat_template key
  float eos_bias = -100.0f;    // output bias of </s> (+100 makes it the only choice)
  uint32_t seed = 5;
};

TinyOptions with_head_dim(int64_t d) {
  TinyOptions o;
  o.head_dim = d;
  return o;
}
TinyOptions with_template(std::string t) {
  TinyOptions o;
  o.chat_template = std::move(t);
  return o;
}
TinyOptions with_eos_bias(float b) {
  TinyOptions o;
  o.eos_bias = b;
  return o;
}

// The shared tiny llama (tests/support/tiny_llama_model.h): 2 layers, d_model 64, 2 query heads
// sharing 1 KV head, context 128; generation stays on the pieces, </s> as asked.
fs::path write_tiny_model(const fs::path& dir, const std::string& file, const TinyOptions& o) {
  const std::string sp = "\xE2\x96\x81";  // ▁
  const test::TinyLlamaOptions t{
      .name = "tiny-engine-test",
      .n_embd = 64,
      .n_head_kv = kHeadKv,
      .head_dim = o.head_dim,
      .n_ff = 64,
      .n_layer = kLayers,
      .n_ctx_train = 128,
      .pieces = {sp, "a", "b", "c", "d", "e", "s", "t", "u", "r", "n", "i", "o", "m", "y", sp + "a", sp + "b",
                 "ab", "ba", "st", "ar", "ss", "is", "te", "us", "er", "as", "ys", "em"},
      .chat_template = o.chat_template,
      .eos_bias = o.eos_bias,
      .seed = o.seed,
  };
  const fs::path path = dir / file;
  test::write_tiny_llama_model(path, t);
  return path;
}

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("alap_engine_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = write_tiny_model(dir_, "tiny.gguf", TinyOptions{});
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static LoadParams params(CacheMode mode = CacheMode::f16, size_t n_ctx = 128) {
    LoadParams p;
    p.n_ctx = n_ctx;
    p.cache_mode = mode;
    p.n_threads = 2;
    return p;
  }
  static GenerateRequest chat(const std::string& user, int32_t max_tokens, uint64_t seed = 11) {
    GenerateRequest r;
    r.messages.push_back(ChatMessage{"user", user, {}});
    r.max_tokens = max_tokens;
    r.sampling.seed = seed;
    return r;
  }

  static inline fs::path dir_;
  static inline fs::path model_;
  std::atomic<bool> no_cancel_{false};
};

TEST_F(EngineTest, LoadReportsModelInfoAndChatMlFallback) {
  Engine e;
  EXPECT_FALSE(e.is_loaded());
  EXPECT_THROW(e.model_info(), EngineError);
  std::vector<float> fractions;
  e.load(model_, params(), [&](float f, std::string_view) { fractions.push_back(f); });
  ASSERT_TRUE(e.is_loaded());
  const ModelInfo info = e.model_info();
  EXPECT_EQ(info.name, "tiny-engine-test");
  EXPECT_EQ(info.architecture, "llama");
  EXPECT_EQ(info.n_ctx, 128u);
  EXPECT_EQ(info.n_layer, kLayers);
  EXPECT_EQ(info.n_vocab, 5 + 256 + 29);
  EXPECT_TRUE(info.chat_template_builtin);
  ASSERT_EQ(info.warnings.size(), 1u);
  EXPECT_NE(info.warnings[0].find("ChatML"), std::string::npos);
  ASSERT_FALSE(fractions.empty());
  EXPECT_EQ(fractions.front(), 0.0f);
  EXPECT_EQ(fractions.back(), 1.0f);
  EXPECT_EQ(e.render_chat({{"user", "ab", {}}}, "sys"),
            "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nab<|im_end|>\n<|im_start|>assistant\n");
  // The rendered control tokens become their ids; BOS first.
  const std::vector<int32_t> ids = e.prompt_tokens(chat("ab", 1));
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 3);
}

TEST_F(EngineTest, ModelTemplateIsUsedAndABrokenOneFallsBack) {
  const fs::path good = write_tiny_model(
      dir_, "tpl.gguf",
      with_template("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
                    "{% if add_generation_prompt %}[assistant]{% endif %}"));
  Engine e;
  e.load(good, params());
  EXPECT_FALSE(e.model_info().chat_template_builtin);
  EXPECT_TRUE(e.model_info().warnings.empty());
  EXPECT_EQ(e.render_chat({{"user", "hi", {}}}, "be"), "[system]be[user]hi[assistant]");

  const fs::path bad = write_tiny_model(dir_, "badtpl.gguf", with_template("{% for m in %}"));
  e.load(bad, params());
  EXPECT_TRUE(e.model_info().chat_template_builtin);
  ASSERT_EQ(e.model_info().warnings.size(), 1u);
  EXPECT_NE(e.model_info().warnings[0].find("cannot be used"), std::string::npos);

  // A template that parses but fails while rendering (here: the step budget) falls back to ChatML
  // and says so; the template's own raise_exception() still reaches the caller as an error.
  const fs::path looping = write_tiny_model(
      dir_, "looptpl.gguf",
      with_template("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"));
  e.load(looping, params());
  EXPECT_FALSE(e.model_info().chat_template_builtin);
  const std::string chatml = e.render_chat({{"user", "hi", {}}}, "");
  EXPECT_NE(chatml.find("<|im_start|>user\nhi<|im_end|>"), std::string::npos) << chatml;
  EXPECT_TRUE(e.model_info().chat_template_builtin);
  ASSERT_EQ(e.model_info().warnings.size(), 1u);
  EXPECT_NE(e.model_info().warnings[0].find("failed while rendering"), std::string::npos);

  const fs::path raising = write_tiny_model(
      dir_, "raisetpl.gguf", with_template("{{ raise_exception('Conversation roles must alternate') }}"));
  e.load(raising, params());
  try {
    (void)e.render_chat({{"user", "hi", {}}}, "");
    FAIL() << "no exception";
  } catch (const EngineError& err) {
    EXPECT_NE(std::string(err.what()).find("roles must alternate"), std::string::npos) << err.what();
  }
  EXPECT_FALSE(e.model_info().chat_template_builtin);
}

TEST_F(EngineTest, LoadErrorsAreClear) {
  Engine e;
  try {
    e.load(dir_ / "absent.gguf", params());
    FAIL() << "no exception";
  } catch (const EngineError& err) {
    EXPECT_NE(std::string(err.what()).find("absent.gguf"), std::string::npos);
  }
  EXPECT_FALSE(e.is_loaded());
  const fs::path odd = write_tiny_model(dir_, "hd48.gguf", with_head_dim(48));
  try {
    e.load(odd, params(CacheMode::k8));
    FAIL() << "no exception";
  } catch (const EngineError& err) {
    EXPECT_NE(std::string(err.what()).find("k8"), std::string::npos) << err.what();
  }
  e.load(odd, params(CacheMode::f16));  // f16 takes any head_dim
  EXPECT_TRUE(e.is_loaded());
  LoadParams automatic = params(CacheMode::k8v8);
  automatic.cache_mode_default = true;  // no mode chosen: k8 where the shape packs, else f16
  e.load(odd, automatic);
  EXPECT_EQ(e.model_info().cache_mode, CacheMode::f16);
  e.load(model_, automatic);
  EXPECT_EQ(e.model_info().cache_mode, CacheMode::k8);
  std::atomic<bool> cancel{true};
  EXPECT_THROW(e.load(model_, params(), {}, &cancel), EngineError);
  EXPECT_FALSE(e.is_loaded());
}

TEST_F(EngineTest, ModelOrContextLargerThanMemoryIsRefusedWithTheLargestThatFits) {
  Engine e;
  // Smaller than the file itself: the model is refused before it is mapped.
  LoadParams tiny = params(CacheMode::f16, 64);
  tiny.memory_limit_bytes = 1024;
  try {
    e.load(model_, tiny);
    FAIL() << "no exception";
  } catch (const EngineError& err) {
    EXPECT_NE(std::string(err.what()).find("of memory; choose a smaller model"), std::string::npos) << err.what();
  }
  EXPECT_FALSE(e.is_loaded());

  // Room for the weights and 600 tokens of f16 cache: a context of 4096 is refused and the message
  // names the largest context for each mode (multiples of 256, larger for the packed modes).
  e.load(model_, params(CacheMode::f16, 64));
  const ModelInfo info = e.model_info();
  const KvShape shape{info.n_layer, info.n_head_kv, info.head_dim, info.head_dim};
  const uint64_t per_token_f16 = kv_cache_bytes(shape, CacheMode::f16, 1).total;
  LoadParams big = params(CacheMode::f16, 4096);
  big.memory_limit_bytes = info.weights_bytes + 600 * per_token_f16;
  try {
    e.load(model_, big);
    FAIL() << "no exception";
  } catch (const EngineError& err) {
    const std::string what = err.what();
    EXPECT_NE(what.find("a context of 4096 tokens in f16"), std::string::npos) << what;
    EXPECT_NE(what.find("f16 512"), std::string::npos) << what;
    const uint64_t k8_tokens = (600 * per_token_f16 / kv_cache_bytes(shape, CacheMode::k8, 1).total) / 256 * 256;
    EXPECT_NE(what.find("k8 " + std::to_string(k8_tokens)), std::string::npos) << what;
  }
  // The same budget holds a context of 512 tokens.
  big.n_ctx = 512;
  e.load(model_, big);
  EXPECT_TRUE(e.is_loaded());
}

TEST_F(EngineTest, SameSeedSameTextOtherSeedDiffers) {
  Engine a, b;
  a.load(model_, params());
  b.load(model_, params());
  const GenerateResult ra = a.generate(chat("abc", 24, 7), {}, no_cancel_);
  const GenerateResult rb = b.generate(chat("abc", 24, 7), {}, no_cancel_);
  EXPECT_EQ(ra.tokens, rb.tokens);
  EXPECT_EQ(ra.text, rb.text);
  EXPECT_EQ(ra.tokens.size(), 24u);
  b.reset_context();
  const GenerateResult rc = b.generate(chat("abc", 24, 8), {}, no_cancel_);
  EXPECT_NE(ra.tokens, rc.tokens);
  // The result text is the whole-sequence detokenization of the tokens (no leading-space strip).
  std::string pieces;
  for (int32_t id : ra.tokens) pieces += a.tokenizer().token_to_piece(id, false);
  EXPECT_EQ(ra.text, pieces);
}

TEST_F(EngineTest, StopsAtMaxTokensAndStreamsEverything) {
  Engine e;
  e.load(model_, params());
  std::string streamed;
  int calls = 0;
  std::vector<MemoryReport> reports;
  e.set_memory_callback([&](const MemoryReport& r) { reports.push_back(r); });
  const GenerateResult r = e.generate(chat("ab", 9), [&](std::string_view t) {
        streamed += t;
        ++calls;
      }, no_cancel_);
  EXPECT_EQ(r.stats.stop_reason, StopReason::max_tokens);
  EXPECT_EQ(r.tokens.size(), 9u);
  EXPECT_EQ(r.stats.n_generated, 9u);
  EXPECT_EQ(streamed, r.text);
  EXPECT_EQ(calls, 9);  // ASCII pieces: one chunk per token
  EXPECT_EQ(r.stats.n_prefill_tokens, r.stats.n_prompt_tokens);
  EXPECT_EQ(r.stats.n_reused_tokens, 0u);
  // The last sampled token is not evaluated: the cache holds prompt + 8.
  EXPECT_EQ(r.stats.n_context_tokens, r.stats.n_prompt_tokens + 8);
  EXPECT_EQ(e.cached_tokens().size(), r.stats.n_context_tokens);
  EXPECT_GT(r.stats.prefill_tps, 0.0);
  EXPECT_GT(r.stats.decode_tps, 0.0);
  EXPECT_GT(r.stats.ttft_ms, 0.0);
  // One report after prefill and one after each of the 8 decode steps.
  ASSERT_EQ(reports.size(), 9u);
  EXPECT_EQ(reports.back().kv_bytes, e.memory_report().kv_bytes);
}

TEST_F(EngineTest, StopsOnEndOfGeneration) {
  const fs::path eos = write_tiny_model(dir_, "eos.gguf", with_eos_bias(100.0f));
  Engine e;
  e.load(eos, params());
  std::string streamed;
  const GenerateResult r = e.generate(chat("ab", 50), [&](std::string_view t) { streamed += t; }, no_cancel_);
  EXPECT_EQ(r.stats.stop_reason, StopReason::eog);
  EXPECT_TRUE(r.tokens.empty());
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(streamed, "");
}

TEST_F(EngineTest, StopStringEndsTheReplyBeforeIt) {
  Engine e;
  e.load(model_, params());
  GenerateRequest req = chat("abc", 30, 3);
  req.sampling.temperature = 0.0f;
  const GenerateResult full = e.generate(req, {}, no_cancel_);
  ASSERT_GE(full.text.size(), 12u);
  // A stop string from the middle of the reply, spanning tokens.
  const std::string stop = full.text.substr(6, 4);
  const size_t at = full.text.find(stop);
  req.stop = {"not-in-the-text", stop};
  std::string streamed;
  const GenerateResult r = e.generate(req, [&](std::string_view t) { streamed += t; }, no_cancel_);
  EXPECT_EQ(r.stats.stop_reason, StopReason::stop_string);
  EXPECT_EQ(r.text, full.text.substr(0, at));
  EXPECT_EQ(streamed, r.text);  // nothing of the stop string was streamed
  EXPECT_LT(r.tokens.size(), full.tokens.size());

  // A stop string whose head occurs but which never completes: held back, then all streamed.
  req.stop = {stop + "\x01"};
  streamed.clear();
  const GenerateResult r2 = e.generate(req, [&](std::string_view t) { streamed += t; }, no_cancel_);
  EXPECT_EQ(r2.stats.stop_reason, StopReason::max_tokens);
  EXPECT_EQ(r2.text, full.text);
  EXPECT_EQ(streamed, full.text);
}

TEST_F(EngineTest, CancelIsHonouredWithinOneToken) {
  Engine e;
  e.load(model_, params());
  std::atomic<bool> cancel{false};
  int calls = 0;
  const GenerateResult r = e.generate(
      chat("abc", 50),
      [&](std::string_view) {
        ++calls;
        cancel.store(true);
      },
      cancel);
  EXPECT_EQ(r.stats.stop_reason, StopReason::cancelled);
  EXPECT_EQ(r.tokens.size(), 1u);
  EXPECT_EQ(calls, 1);

  // Cancelled before the call: nothing is prefilled or generated.
  e.reset_context();
  const GenerateResult r2 = e.generate(chat("abc", 50), {}, cancel);
  EXPECT_EQ(r2.stats.stop_reason, StopReason::cancelled);
  EXPECT_TRUE(r2.tokens.empty());
  EXPECT_EQ(r2.stats.n_prefill_tokens, 0u);
}

TEST_F(EngineTest, SecondTurnPrefillsOnlyTheNewTokens) {
  Engine e;
  e.load(model_, params());
  GenerateRequest req = chat("abc", 6);
  req.sampling.temperature = 0.0f;
  const std::vector<int32_t> prompt1 = e.prompt_tokens(req);
  const GenerateResult r1 = e.generate(req, {}, no_cancel_);
  ASSERT_EQ(r1.tokens.size(), 6u);
  const std::vector<int32_t> cached = e.cached_tokens();
  ASSERT_EQ(cached.size(), prompt1.size() + 5);

  req.messages.push_back(ChatMessage{"assistant", r1.text, {}});
  req.messages.push_back(ChatMessage{"user", "bad", {}});
  const std::vector<int32_t> prompt2 = e.prompt_tokens(req);
  size_t common = 0;
  while (common < cached.size() && common < prompt2.size() && cached[common] == prompt2[common]) ++common;
  ASSERT_GE(common, prompt1.size());

  const GenerateResult r2 = e.generate(req, {}, no_cancel_);
  EXPECT_EQ(r2.stats.n_prompt_tokens, prompt2.size());
  EXPECT_EQ(r2.stats.n_reused_tokens, common);
  EXPECT_EQ(r2.stats.n_prefill_tokens, prompt2.size() - common);

  // Reuse changes nothing in the result: a fresh engine gives the same greedy reply.
  Engine fresh;
  fresh.load(model_, params());
  const GenerateResult r3 = fresh.generate(req, {}, no_cancel_);
  EXPECT_EQ(r3.stats.n_reused_tokens, 0u);
  EXPECT_EQ(r3.tokens, r2.tokens);

  // A different conversation keeps only the shared head (BOS, <|im_start|>, "user" ...).
  const GenerateResult r4 = e.generate(chat("dim", 2), {}, no_cancel_);
  EXPECT_LT(r4.stats.n_reused_tokens, prompt1.size());
  EXPECT_EQ(r4.stats.n_prefill_tokens, r4.stats.n_prompt_tokens - r4.stats.n_reused_tokens);
}

TEST_F(EngineTest, ContextLimit) {
  Engine e;
  e.load(model_, params(CacheMode::f16, 16));
  GenerateRequest long_prompt;
  long_prompt.prompt = std::string(40, 'm');
  long_prompt.max_tokens = 4;
  try {
    e.generate(long_prompt, {}, no_cancel_);
    FAIL() << "no exception";
  } catch (const EngineError& err) {
    EXPECT_NE(std::string(err.what()).find("context holds 16"), std::string::npos) << err.what();
  }
  GenerateRequest req;
  req.prompt = "ab ab";
  req.max_tokens = 100;
  const size_t n_prompt = e.prompt_tokens(req).size();
  ASSERT_LT(n_prompt, 12u);
  const GenerateResult r = e.generate(req, {}, no_cancel_);
  EXPECT_EQ(r.stats.stop_reason, StopReason::context_full);
  EXPECT_EQ(r.stats.n_context_tokens, 16u);
  EXPECT_EQ(r.tokens.size(), 16 - n_prompt + 1);
  EXPECT_NE(r.stats.message.find("full"), std::string::npos);
}

TEST_F(EngineTest, ContextPolicyDropsOldestTurnsAndSaysSo) {
  // A long chat in a 64-token context: the oldest turns go, the system prompt and the newest
  // user message stay, and the reply equals one generated from the trimmed conversation.
  GenerateRequest req;
  req.system_prompt = "sys";
  for (int i = 0; i < 8; ++i) {
    req.messages.push_back(ChatMessage{"user", "ab ab " + std::to_string(i), {}});
    req.messages.push_back(ChatMessage{"assistant", "dim dim", {}});
  }
  req.messages.push_back(ChatMessage{"user", "last ab", {}});
  req.max_tokens = 4;
  req.sampling.seed = 5;

  Engine e;
  e.load(model_, params(CacheMode::f16, 64));
  ASSERT_GT(e.prompt_tokens(req).size() + 4, 64u) << "the test conversation must overflow the context";
  const GenerateResult r = e.generate(req, {}, no_cancel_);
  ASSERT_GT(r.stats.n_dropped_messages, 0u);
  EXPECT_EQ(r.stats.n_dropped_messages % 2, 0u) << "whole turns (user + reply) are dropped";
  EXPECT_LE(r.stats.n_prompt_tokens + 4, 64u);
  EXPECT_NE(r.stats.message.find("left out the " + std::to_string(r.stats.n_dropped_messages) + " oldest messages"),
            std::string::npos)
      << r.stats.message;

  GenerateRequest trimmed = req;
  trimmed.messages.erase(trimmed.messages.begin(),
                         trimmed.messages.begin() + static_cast<std::ptrdiff_t>(r.stats.n_dropped_messages));
  Engine fresh;
  fresh.load(model_, params(CacheMode::f16, 64));
  EXPECT_EQ(fresh.prompt_tokens(trimmed).size(), r.stats.n_prompt_tokens);
  const GenerateResult expected = fresh.generate(trimmed, {}, no_cancel_);
  EXPECT_EQ(expected.stats.n_dropped_messages, 0u);
  EXPECT_EQ(r.tokens, expected.tokens);
}

TEST_F(EngineTest, MemoryReportShowsThePackedSaving) {
  MemoryReport rep[3];
  const CacheMode modes[3] = {CacheMode::f16, CacheMode::k8, CacheMode::k8v8};
  size_t n_tokens = 0;
  for (int i = 0; i < 3; ++i) {
    Engine e;
    e.load(model_, params(modes[i]));
    const GenerateResult r = e.generate(chat("abc", 5), {}, no_cancel_);
    n_tokens = r.stats.n_context_tokens;
    rep[i] = e.memory_report();
    EXPECT_EQ(rep[i].kv_bytes, rep[i].k_bytes + rep[i].v_bytes);
    EXPECT_GT(rep[i].kv_capacity_bytes, rep[i].kv_bytes);
    EXPECT_EQ(rep[i].weights_bytes, e.model_info().weights_bytes);
  }
  // f16: 2 bytes a value, K and V, every layer and KV head.
  const uint64_t f16 = n_tokens * kLayers * kHeadKv * (32 + 32) * 2;
  EXPECT_EQ(rep[0].kv_bytes, f16);
  for (const auto& r : rep) EXPECT_EQ(r.kv_fp16_bytes, f16);
  // Packed: 32 int8 + one fp16 scale per head vector of 32.
  EXPECT_EQ(rep[1].k_bytes, n_tokens * kLayers * kHeadKv * 34);
  EXPECT_EQ(rep[1].v_bytes, rep[0].v_bytes);
  EXPECT_LT(rep[1].kv_bytes, rep[0].kv_bytes);
  EXPECT_LT(rep[2].kv_bytes, rep[1].kv_bytes);
  EXPECT_EQ(rep[2].v_bytes, rep[1].k_bytes);
}

TEST_F(EngineTest, BadRequestsAreRefused) {
  Engine e;
  GenerateRequest req = chat("a", 2);
  EXPECT_THROW(e.generate(req, {}, no_cancel_), EngineError);  // nothing loaded
  e.load(model_, params());
  req.stop = {""};
  EXPECT_THROW(e.generate(req, {}, no_cancel_), EngineError);
  req.stop.clear();
  req.sampling.repeat_penalty = -1.0f;
  EXPECT_THROW(e.generate(req, {}, no_cancel_), EngineError);
  GenerateRequest empty;
  empty.parse_special = false;
  // An empty raw prompt is still BOS (the vocab adds it), so it generates.
  empty.max_tokens = 1;
  EXPECT_EQ(e.generate(empty, {}, no_cancel_).tokens.size(), 1u);
}

}  // namespace
}  // namespace alap
