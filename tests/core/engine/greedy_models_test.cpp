// Greedy generation from the real small models in ../shared (stories260K, alap-eval-30m in f16,
// Q8_0 and Q4_K_M): deterministic, identical whatever the thread count and the batch split of
// the prompt, and sensible text. (The exact 48-token reference of the f16 file is checked in
// tests/core/model/eval_model_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <string>

#include "core/engine/engine.h"
#include "core/text/tokenizer.h"
#include "tests/support/shared_fixtures.h"

namespace alap {
namespace {

GenerateResult greedy(const std::filesystem::path& model, const std::string& prompt, size_t threads, int n) {
  Engine e;
  LoadParams params;
  params.n_ctx = 256;
  params.cache_mode = CacheMode::f16;
  params.n_threads = threads;
  e.load(model, params);
  GenerateRequest req;
  req.prompt = prompt;
  req.sampling.temperature = 0.0f;
  req.max_tokens = n;
  std::atomic<bool> cancel{false};
  return e.generate(req, {}, cancel);
}

// Words of the text made of letters and spaces in the proportion of prose (not byte soup).
double letter_share(const std::string& text) {
  size_t letters = 0;
  for (unsigned char c : text) letters += (std::isalpha(c) || c == ' ') ? 1 : 0;
  return text.empty() ? 0.0 : static_cast<double>(letters) / static_cast<double>(text.size());
}

void check_model(const std::filesystem::path& path, const std::string& prompt, const std::string& expect_word) {
  const GenerateResult one = greedy(path, prompt, 1, 40);
  const GenerateResult two = greedy(path, prompt, 2, 40);
  EXPECT_EQ(one.tokens, two.tokens) << "thread count changed the greedy tokens";
  EXPECT_EQ(one.text, two.text);
  EXPECT_GE(one.tokens.size(), 20u);
  EXPECT_GT(letter_share(one.text), 0.8) << one.text;
  EXPECT_NE(one.text.find(expect_word), std::string::npos) << one.text;
  std::printf("[ report ] %s: \"%s\"\n", path.filename().c_str(), one.text.c_str());

  // The prompt fed token by token (decode steps) instead of one batch gives the same continuation.
  Engine e;
  LoadParams params;
  params.n_ctx = 256;
  params.n_threads = 2;
  e.load(path, params);
  GenerateRequest req;
  req.prompt = prompt;
  const std::vector<int32_t> ids = e.prompt_tokens(req);
  std::span<const float> logits;
  for (size_t i = 0; i < ids.size(); ++i) logits = e.evaluate(std::span<const int32_t>(&ids[i], 1), i);
  int32_t next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  EXPECT_EQ(next, one.tokens.at(0));
  for (size_t i = 1; i < 10; ++i) {
    logits = e.evaluate(std::span<const int32_t>(&next, 1), ids.size() + i - 1);
    next = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    EXPECT_EQ(next, one.tokens.at(i)) << "token " << i;
  }
}

TEST(GreedyModels, Stories260K) {
  ALAP_SHARED_FILE_OR_SKIP(p, "fixtures/stories260K.gguf");
  check_model(p, "Once upon a time", "girl");
}

TEST(GreedyModels, EvalF16) {
  ALAP_SHARED_FILE_OR_SKIP(p, "models/alap-eval-30m-f16.gguf");
  check_model(p, "The history of the city begins", "LORD");
}

TEST(GreedyModels, EvalQ8_0) {
  ALAP_SHARED_FILE_OR_SKIP(p, "models/alap-eval-30m-q8_0.gguf");
  check_model(p, "The history of the city begins", "the");
}

TEST(GreedyModels, EvalQ4_K_M) {
  ALAP_SHARED_FILE_OR_SKIP(p, "models/alap-eval-30m-q4_k_m.gguf");
  check_model(p, "The history of the city begins", "the");
}

}  // namespace
}  // namespace alap
