// The project's own model (../shared/models/alap-eval-30m-f16.gguf, SentencePiece with Bengali):
// token counts of the held-out files must equal SentencePiece's (MODEL.md), decode must give the
// text back, the streaming detokenizer must only ever emit valid UTF-8, and it must be fast.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/gguf/gguf.h"
#include "core/text/detokenizer.h"
#include "core/text/tokenizer.h"
#include "core/text/utf8.h"
#include "tests/support/shared_fixtures.h"

namespace alap {
namespace {

std::string read_binary(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class EvalModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto p = test::shared_file("models/alap-eval-30m-f16.gguf");
    if (!p.empty()) tok_ = new Tokenizer(vocab_from_gguf(gguf::File::open(p)));
  }
  static void TearDownTestSuite() {
    delete tok_;
    tok_ = nullptr;
  }
  void SetUp() override {
    if (!tok_) GTEST_SKIP() << "../shared/models/alap-eval-30m-f16.gguf is absent; skipping";
  }
  static Tokenizer* tok_;
};
Tokenizer* EvalModel::tok_ = nullptr;

TEST_F(EvalModel, VocabularyMetadata) {
  const Vocab& v = tok_->vocab();
  EXPECT_EQ(v.type, VocabType::spm);
  EXPECT_EQ(v.n_tokens(), 8192);
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_EQ(v.unk, 0);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_eos);
  EXPECT_TRUE(v.add_space_prefix);
  EXPECT_EQ(v.eog, std::vector<int32_t>{2});
  EXPECT_EQ(tok_->encode("\n", false, false), (std::vector<int32_t>{v.find("\xE2\x96\x81"), v.find("<0x0A>")}));
}

// MODEL.md's greedy check: the prompt and the 48 generated tokens as PyTorch and llama.cpp gave them.
TEST_F(EvalModel, GreedyReferenceIds) {
  const std::vector<int32_t> greedy = {1,    358,  5626, 282,  263,  2257, 1786, 2325, 383,  263,  907,  282,
                                       263,  1056, 8054, 13,   6927, 263,  907,  282,  263,  1056, 1312, 834,
                                       551,  8056, 1896, 8056, 13,   8083, 269,  282,  560,  8056, 1824, 1075,
                                       8053, 1175, 263,  5482, 282,  7026, 316,  8056, 292,  1086, 834,  504,
                                       8056, 3105, 3155, 263,  1056, 8056, 3105, 3155};
  const std::string prompt = "The history of the city begins";
  const auto ids = tok_->encode(prompt, true, false);
  ASSERT_LE(ids.size(), greedy.size());
  EXPECT_EQ(ids, std::vector<int32_t>(greedy.begin(), greedy.begin() + static_cast<long>(ids.size())));
  EXPECT_EQ(tok_->decode(greedy, false),
            " " + prompt +
                " with the word of the LORD.\nAnd the word of the LORD came unto me, saying,\nSon of man, prophesy "
                "against the prophets of Baal, and say unto them, Thus saith the LORD, Thus saith");
}

TEST_F(EvalModel, EnglishHeldoutCountAndRoundTrip) {
  ALAP_SHARED_FILE_OR_SKIP(p, "models/heldout-en.txt");
  const std::string text = read_binary(p);
  const auto ids = tok_->encode(text, /*add_special=*/false, /*parse_special=*/false);
  // MODEL.md's 91,462 counts the stream with BOS (llama-perplexity's tokenization); both held-out
  // files are exactly one above the bare count.
  EXPECT_EQ(ids.size() + 1, 91462u);
  EXPECT_EQ(tok_->decode(ids, false), text);
  const auto with_bos = tok_->encode(text, true, false);
  ASSERT_EQ(with_bos.size(), ids.size() + 1);
  EXPECT_EQ(with_bos[0], 1);
}

TEST_F(EvalModel, BengaliHeldoutCountAndRoundTrip) {
  ALAP_SHARED_FILE_OR_SKIP(p, "models/heldout-bn.txt");
  const std::string text = read_binary(p);
  const auto ids = tok_->encode(text, false, false);
  EXPECT_EQ(ids.size() + 1, 50197u);
  EXPECT_EQ(tok_->encode(text, true, false).size(), 50197u);
  EXPECT_EQ(tok_->decode(ids, false), text);
}

TEST_F(EvalModel, StreamingBengaliIsValidUtf8AtEveryStep) {
  ALAP_SHARED_FILE_OR_SKIP(p, "models/heldout-bn.txt");
  const std::string text = read_binary(p);
  const auto ids = tok_->encode(text, false, false);
  StreamingDetokenizer detok(*tok_);
  std::string streamed;
  size_t held_back_steps = 0;
  for (int32_t id : ids) {
    const std::string part = detok.push(id);
    ASSERT_TRUE(utf8::is_valid(part)) << "invalid UTF-8 emitted after token " << id;
    held_back_steps += detok.pending_bytes() > 0;
    streamed += part;
  }
  streamed += detok.flush();
  // Streaming keeps the prefix space of the first piece (whole-sequence decode strips it).
  EXPECT_EQ(streamed, " " + text);
  EXPECT_GT(held_back_steps, 0u);  // the file does split characters across byte tokens
}

}  // namespace
}  // namespace alap
