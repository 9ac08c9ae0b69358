// StreamingDetokenizer: never emits a partial UTF-8 sequence, holds back incomplete tails,
// replaces provably invalid bytes at once and an unfinished tail only at flush.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/text/detokenizer.h"
#include "core/text/utf8.h"

namespace alap {
namespace {

// SPM vocab with all byte tokens (id = byte + 3) and a few pieces.
Tokenizer byte_tokenizer() {
  Vocab v;
  v.type = VocabType::spm;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::unknown, TokenType::control, TokenType::control};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    v.tokens.push_back(hex);
    v.types.push_back(TokenType::byte);
  }
  v.tokens.push_back("\xE2\x96\x81hi");  // 259: "▁hi"
  v.types.push_back(TokenType::normal);
  v.tokens.push_back("\xE2\x96\x81");  // 260: "▁"
  v.types.push_back(TokenType::normal);
  v.bos = 1;
  v.eos = 2;
  v.add_space_prefix = true;
  vocab_finalize(v, {});
  return Tokenizer(std::move(v));
}

int32_t byte_id(uint8_t b) { return 3 + b; }

TEST(StreamingDetokenizer, HoldsBackPartialSequences) {
  const Tokenizer tok = byte_tokenizer();
  StreamingDetokenizer d(tok);
  EXPECT_EQ(d.push(259), " hi");  // streamed pieces keep their space
  // ক = E0 A6 95 arrives one byte per token.
  EXPECT_EQ(d.push(byte_id(0xE0)), "");
  EXPECT_EQ(d.pending_bytes(), 1u);
  EXPECT_EQ(d.push(byte_id(0xA6)), "");
  EXPECT_EQ(d.push(byte_id(0x95)), "\xE0\xA6\x95");
  EXPECT_EQ(d.pending_bytes(), 0u);
  EXPECT_EQ(d.push(2), "");  // control token not rendered
  EXPECT_EQ(d.flush(), "");
}

TEST(StreamingDetokenizer, InvalidBytesBecomeReplacementCharacters) {
  const Tokenizer tok = byte_tokenizer();
  StreamingDetokenizer d(tok);
  EXPECT_EQ(d.push(byte_id(0xFF)), "\xEF\xBF\xBD");  // can never start a sequence
  EXPECT_EQ(d.push(byte_id(0xE0)), "");
  EXPECT_EQ(d.push(byte_id('a')), "\xEF\xBF\xBD" "a");  // provably broken by 'a'
  EXPECT_EQ(d.push(byte_id(0xF0)), "");
  EXPECT_EQ(d.push(byte_id(0x9F)), "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");  // unfinished tail at the end
  EXPECT_EQ(d.pending_bytes(), 0u);
  EXPECT_EQ(d.push(259), " hi");
}

TEST(StreamingDetokenizer, EveryStepIsValidAndTheSumIsTheText) {
  const Tokenizer tok = byte_tokenizer();
  const std::string text = " hi \xE0\xA6\x95\xE0\xA7\x8D\xE0\xA6\xB7 \xF0\x9F\xA6\x99!";  // ক্ষ 🦙
  const auto ids = tok.encode(text.substr(1), false, false);
  StreamingDetokenizer d(tok);
  std::string all;
  for (int32_t id : ids) {
    const std::string part = d.push(id);
    EXPECT_TRUE(utf8::is_valid(part));
    all += part;
  }
  all += d.flush();
  EXPECT_EQ(all, text);
  EXPECT_EQ(tok.decode(ids, false), text.substr(1));
}

}  // namespace
}  // namespace alap
