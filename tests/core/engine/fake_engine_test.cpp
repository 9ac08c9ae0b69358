// Tests for core/engine/fake_engine.{h,cpp}, the test double the app's tests run on: the canned
// pieces, max_tokens, stop strings, cancel, prefix reuse counts, failures and the memory report.
#include "core/engine/fake_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

namespace alap {
namespace {

FakeEngineScript script(std::string reply, size_t piece_bytes, CacheMode mode = CacheMode::k8) {
  FakeEngineScript s;
  s.reply = std::move(reply);
  s.piece_bytes = piece_bytes;
  s.cache_mode = mode;
  return s;
}

GenerateRequest ask(const std::string& text, int32_t max_tokens = 100) {
  GenerateRequest r;
  r.messages.push_back(ChatMessage{"user", text, {}});
  r.max_tokens = max_tokens;
  return r;
}

TEST(FakeEngine, StreamsTheReplyInPiecesWithoutSplittingUtf8) {
  FakeEngineScript sc;
  sc.reply = "Hi \xE0\xA6\x86\xE0\xA6\xB2\xE0\xA6\xBE\xE0\xA6\xAA!";  // "Hi আলাপ!"
  sc.piece_bytes = 2;
  FakeEngine fake(sc);
  std::atomic<bool> cancel{false};
  EXPECT_THROW(fake.generate(ask("x"), {}, cancel), EngineError);
  fake.load("model.gguf", {});
  std::vector<std::string> pieces;
  const GenerateResult r = fake.generate(ask("x"), [&](std::string_view t) { pieces.emplace_back(t); }, cancel);
  EXPECT_EQ(pieces, (std::vector<std::string>{"Hi", " \xE0\xA6\x86", "\xE0\xA6\xB2", "\xE0\xA6\xBE", "\xE0\xA6\xAA", "!"}));
  EXPECT_EQ(r.text, sc.reply);
  EXPECT_EQ(r.stats.stop_reason, StopReason::eog);
  EXPECT_EQ(r.stats.n_generated, 6u);
  ASSERT_EQ(fake.requests().size(), 1u);  // the call before load() is not recorded
  EXPECT_EQ(fake.requests()[0].messages[0].content, "x");
}

TEST(FakeEngine, MaxTokensStopStringsAndCancel) {
  FakeEngine fake(script("one two three four", 4));
  fake.load("m.gguf", {});
  std::atomic<bool> cancel{false};
  const GenerateResult a = fake.generate(ask("q", 2), {}, cancel);
  EXPECT_EQ(a.text, "one two ");
  EXPECT_EQ(a.stats.stop_reason, StopReason::max_tokens);

  GenerateRequest req = ask("q");
  req.stop = {"three"};
  std::string streamed;
  const GenerateResult b = fake.generate(req, [&](std::string_view t) { streamed += t; }, cancel);
  EXPECT_EQ(b.text, "one two ");
  EXPECT_EQ(streamed, "one two ");
  EXPECT_EQ(b.stats.stop_reason, StopReason::stop_string);

  const GenerateResult c = fake.generate(ask("q"), [&](std::string_view) { cancel = true; }, cancel);
  EXPECT_EQ(c.text, "one ");
  EXPECT_EQ(c.stats.stop_reason, StopReason::cancelled);
}

TEST(FakeEngine, ReuseCountsAndMemoryGrowWithTheConversation) {
  FakeEngine fake(script("abcdefgh", 4, CacheMode::k8));
  LoadParams lp;
  lp.cache_mode = CacheMode::k8;
  int reports = 0;
  fake.set_memory_callback([&](const MemoryReport&) { ++reports; });
  fake.load("m.gguf", lp);
  std::atomic<bool> cancel{false};
  GenerateRequest req = ask("hello there");
  const GenerateResult r1 = fake.generate(req, {}, cancel);
  EXPECT_EQ(r1.stats.n_reused_tokens, 0u);
  req.messages.push_back(ChatMessage{"assistant", r1.text, {}});
  req.messages.push_back(ChatMessage{"user", "more", {}});
  const GenerateResult r2 = fake.generate(req, {}, cancel);
  EXPECT_GT(r2.stats.n_reused_tokens, 0u);
  EXPECT_EQ(r2.stats.n_prefill_tokens, r2.stats.n_prompt_tokens - r2.stats.n_reused_tokens);
  const MemoryReport m = fake.memory_report();
  EXPECT_EQ(m.kv_fp16_bytes, fake.n_context_tokens() * 1000);
  EXPECT_LT(m.kv_bytes, m.kv_fp16_bytes);  // k8 saves
  EXPECT_EQ(m.kv_bytes, m.k_bytes + m.v_bytes);
  EXPECT_EQ(reports, 1 + 2 * (1 + 2));  // load, then prefill + 2 pieces per call
}

TEST(FakeEngine, ScriptedFailures) {
  FakeEngineScript failing;
  failing.fail_load = "not a GGUF file";
  FakeEngine fake(failing);
  try {
    fake.load("x.gguf", {});
    FAIL();
  } catch (const EngineError& e) {
    EXPECT_EQ(std::string(e.what()), "x.gguf: not a GGUF file");
  }
  EXPECT_FALSE(fake.is_loaded());
  fake.script().fail_load.clear();
  fake.script().fail_generate = "boom";
  fake.load("x.gguf", {});
  std::atomic<bool> cancel{false};
  EXPECT_THROW(fake.generate(ask("q"), {}, cancel), EngineError);
}

}  // namespace
}  // namespace alap
