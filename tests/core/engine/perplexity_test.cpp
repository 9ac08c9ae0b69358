// Tests for core/engine/perplexity.{h,cpp}: the window/scoring convention on a tiny random model
// (checked against the reference forward pass), kv_compare's self-consistency, and the real
// evaluation model's perplexity on its held-out English text (skipped where ../shared is absent).
#include "core/engine/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "core/engine/engine_error.h"
#include "core/gguf/gguf.h"
#include "core/model/forward.h"
#include "core/runtime/kv_cache.h"
#include "tests/support/shared_fixtures.h"

namespace alap {
namespace {

// A tiny llama (E 64, 2 heads of 32, 1 KV head, V 48) with an SPM vocab: <unk> <s> </s> + pieces.
Model tiny_model() {
  const int64_t E = 64, H = 2, Hk = 1, D = 32, F = 64, V = 48, L = 2;
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  w.set("llama.context_length", gguf::Value::u32(64));
  w.set("llama.embedding_length", gguf::Value::u32(E));
  w.set("llama.block_count", gguf::Value::u32(L));
  w.set("llama.feed_forward_length", gguf::Value::u32(F));
  w.set("llama.attention.head_count", gguf::Value::u32(H));
  w.set("llama.attention.head_count_kv", gguf::Value::u32(Hk));
  w.set("llama.attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-5f));
  std::vector<std::string> toks{"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types{2, 3, 3};
  for (int64_t i = 3; i < V; ++i) {
    toks.push_back(std::string(1, static_cast<char>('A' + (i - 3) % 26)) + std::to_string(i));
    types.push_back(1);
  }
  w.set("tokenizer.ggml.model", gguf::Value::string("llama"));
  w.set("tokenizer.ggml.tokens", gguf::Value::array_of_strings(toks));
  w.set("tokenizer.ggml.token_type", gguf::Value::array_of_i32(types));
  std::mt19937 rng(3);
  auto add = [&](const std::string& name, std::vector<int64_t> ne, float center, float spread) {
    std::uniform_real_distribution<float> u(center - spread, center + spread);
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = u(rng);
    w.add_tensor(name, kernels::DType::f32, std::move(ne),
                 std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4));
  };
  add("token_embd.weight", {E, V}, 0.0f, 0.3f);
  add("output_norm.weight", {E}, 1.0f, 0.2f);
  add("output.weight", {E, V}, 0.0f, 0.3f);
  for (int64_t l = 0; l < L; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", {E}, 1.0f, 0.2f);
    add(b + "attn_q.weight", {E, H * D}, 0.0f, 0.3f);
    add(b + "attn_k.weight", {E, Hk * D}, 0.0f, 0.3f);
    add(b + "attn_v.weight", {E, Hk * D}, 0.0f, 0.3f);
    add(b + "attn_output.weight", {H * D, E}, 0.0f, 0.2f);
    add(b + "ffn_norm.weight", {E}, 1.0f, 0.2f);
    add(b + "ffn_gate.weight", {E, F}, 0.0f, 0.3f);
    add(b + "ffn_up.weight", {E, F}, 0.0f, 0.3f);
    add(b + "ffn_down.weight", {F, E}, 0.0f, 0.3f);
  }
  return Model::from_file(gguf::File::from_bytes(w.to_bytes(), "tiny.gguf"));
}

std::vector<int32_t> random_ids(size_t n, int32_t lo, int32_t hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(lo, hi);
  std::vector<int32_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(Perplexity, WindowCountsFollowTheConvention) {
  PerplexityParams p;
  p.n_ctx = 512;
  EXPECT_EQ(perplexity_n_chunks(91462, p), 178u);  // MODEL.md: English, 178 chunks
  EXPECT_EQ(perplexity_n_chunks(91462, p) * perplexity_scored_per_chunk(512), 45390u);  // 45,390 scored
  EXPECT_EQ(perplexity_n_chunks(50197, p) * perplexity_scored_per_chunk(512), 24990u);  // Bengali
  p.max_chunks = 4;
  EXPECT_EQ(perplexity_n_chunks(91462, p), 4u);
  EXPECT_EQ(perplexity_scored_per_chunk(16), 7u);  // positions 8 … 14
}

TEST(Perplexity, MatchesTheReferenceForwardWindowByWindow) {
  const Model model = tiny_model();
  Vocab vocab = vocab_from_gguf(model.file());
  ASSERT_TRUE(vocab.add_bos);
  ASSERT_EQ(vocab.bos, 1);
  const std::vector<int32_t> ids = random_ids(40, 3, 47, 9);  // 2 windows of 16, 8 tokens left over
  PerplexityParams p;
  p.n_ctx = 16;
  p.n_threads = 2;
  size_t progress_calls = 0;
  const PerplexityResult r = perplexity(model, vocab, ids, p, [&](size_t done, size_t total, double) {
    ++progress_calls;
    EXPECT_EQ(done, progress_calls);
    EXPECT_EQ(total, 2u);
  });
  EXPECT_EQ(r.n_chunks, 2u);
  EXPECT_EQ(r.n_scored, 14u);
  EXPECT_EQ(progress_calls, 2u);

  // The same by hand: window c = ids[16c, 16c+16) with BOS first, empty cache, rows 8..14.
  double nll = 0.0;
  for (size_t c = 0; c < 2; ++c) {
    std::vector<int32_t> w(ids.begin() + static_cast<std::ptrdiff_t>(16 * c), ids.begin() + static_cast<std::ptrdiff_t>(16 * c + 16));
    w[0] = 1;
    KvCache cache(kv_cache_config(model, CacheMode::f16, 16));
    const std::vector<float> logits = forward_reference(model, cache, w, 0, LogitsMode::all);
    for (size_t j = 8; j <= 14; ++j) {
      const float* row = &logits[j * 48];
      double z = 0.0;
      for (size_t i = 0; i < 48; ++i) z += std::exp(static_cast<double>(row[i]));
      nll += std::log(z) - row[w[j + 1]];
    }
  }
  EXPECT_NEAR(r.nll_mean, nll / 14.0, 1e-4);
  EXPECT_NEAR(r.ppl, std::exp(nll / 14.0), 1e-3);
}

TEST(Perplexity, KvCompareAgainstItselfIsExactAndPackedIsClose) {
  const Model model = tiny_model();
  const Vocab vocab = vocab_from_gguf(model.file());
  const std::vector<int32_t> ids = random_ids(64, 3, 47, 4);
  PerplexityParams p;
  p.n_ctx = 32;
  p.n_threads = 2;
  const PerplexityResult base = perplexity(model, vocab, ids, p);

  p.mode = CacheMode::f16;
  const KvCompareResult same = kv_compare(model, vocab, ids, p);
  EXPECT_EQ(same.kl_mean, 0.0);
  EXPECT_EQ(same.kl_max, 0.0);
  EXPECT_EQ(same.top1_agreement, 1.0);
  EXPECT_DOUBLE_EQ(same.ppl_f16, base.ppl);
  EXPECT_DOUBLE_EQ(same.ppl_mode, base.ppl);
  EXPECT_EQ(same.n_scored, 2u * 15u);

  p.mode = CacheMode::k8v8;
  const KvCompareResult packed = kv_compare(model, vocab, ids, p);
  EXPECT_DOUBLE_EQ(packed.ppl_f16, base.ppl);
  EXPECT_GT(packed.kl_mean, 0.0);  // int8 rounding changes something ...
  EXPECT_LT(packed.kl_mean, 1e-3);  // ... but little
  EXPECT_GE(packed.kl_max, packed.kl_mean);
  EXPECT_NEAR(packed.ppl_mode, base.ppl, 0.01 * base.ppl);
  p.mode = CacheMode::k8;
  const PerplexityResult k8 = perplexity(model, vocab, ids, p);
  EXPECT_NEAR(k8.ppl, base.ppl, 0.01 * base.ppl);
}

TEST(Perplexity, RefusesTooShortTextsAndHonoursCancel) {
  const Model model = tiny_model();
  const Vocab vocab = vocab_from_gguf(model.file());
  const std::vector<int32_t> ids = random_ids(20, 3, 47, 1);
  PerplexityParams p;
  p.n_ctx = 32;
  EXPECT_THROW(perplexity(model, vocab, ids, p), EngineError);
  p.n_ctx = 2;
  EXPECT_THROW(perplexity(model, vocab, ids, p), EngineError);
  std::atomic<bool> cancel{true};
  p.n_ctx = 8;
  p.cancel = &cancel;
  EXPECT_THROW(perplexity(model, vocab, ids, p), EngineError);
}

TEST(Perplexity, EvalModelFirstFourWindowsOfHeldOutEnglish) {
  ALAP_SHARED_FILE_OR_SKIP(model_path, "models/alap-eval-30m-f16.gguf");
  ALAP_SHARED_FILE_OR_SKIP(text_path, "models/heldout-en.txt");
  const Model model = Model::load(model_path);
  const Tokenizer tok(vocab_from_gguf(model.file()));
  std::ifstream in(text_path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::vector<int32_t> ids = perplexity_tokens(tok, ss.str());
  EXPECT_EQ(ids.size(), 91462u);  // MODEL.md
  EXPECT_EQ(ids[0], 1);
  PerplexityParams p;
  p.n_ctx = 512;
  p.max_chunks = 4;
  p.n_threads = 2;
  const PerplexityResult r = perplexity(model, tok.vocab(), ids, p);
  EXPECT_EQ(r.n_chunks, 4u);
  EXPECT_EQ(r.n_scored, 4u * 255u);
  ASSERT_TRUE(std::isfinite(r.ppl));
  EXPECT_GE(r.ppl, 10.0);
  EXPECT_LE(r.ppl, 40.0);
}

}  // namespace
}  // namespace alap
