// Tokenizer algorithms on small hand-built vocabularies: SPM merge order and byte fallback,
// BPE merge ranks and ignore_merges, pre-tokenizer splits, special-token splitting, the
// §8.1 defaults and refusals of vocab_from_gguf (files built with gguf::Writer).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "core/gguf/gguf.h"
#include "core/text/pretokenize.h"
#include "core/text/tokenizer.h"
#include "core/text/utf8.h"

namespace alap {
namespace {

using V = std::vector<int32_t>;
const std::string kSp = "\xE2\x96\x81";  // ▁

// SPM vocab: <unk> <s> </s>, bytes, then pieces with descending scores.
Vocab spm_vocab() {
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
  // id 259.. : pieces
  for (const std::string& p : std::vector<std::string>{kSp + "a", "ab", kSp + "ab", "b", "a", kSp, "c", "bc", "abc", "<x>"}) {
    v.tokens.push_back(p);
    v.types.push_back(p == "<x>" ? TokenType::user_defined : TokenType::normal);
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  const std::vector<std::pair<std::string, float>> sc = {{kSp + "a", -1}, {"ab", -2}, {kSp + "ab", -3}, {"b", -10},
                                                         {"a", -10},      {kSp, -10}, {"c", -10},       {"bc", -0.5f},
                                                         {"abc", -4}};
  v.bos = 1;
  v.eos = 2;
  v.unk = 0;
  v.add_bos = true;
  v.add_space_prefix = true;
  vocab_finalize(v, {});
  for (auto& [t, s] : sc) v.scores[static_cast<size_t>(v.find(t))] = s;
  return v;
}

TEST(SpmTokenizer, MergesByHighestScoreThenLeftmost) {
  const Tokenizer tok(spm_vocab());
  const Vocab& v = tok.vocab();
  // "▁abc": pairs ▁a(-1) ab(-2) bc(-0.5): bc first, then ▁a; "▁abc" is not a token.
  EXPECT_EQ(tok.encode("abc", false, false), (V{v.find(kSp + "a"), v.find("bc")}));
  // "▁ab": ▁a(-1) beats ab(-2); then ▁a+b = ▁ab.
  EXPECT_EQ(tok.encode("ab", false, false), (V{v.find(kSp + "ab")}));
  // Ties go left: "cc" has no pair token; single chars.
  EXPECT_EQ(tok.encode("cc", false, false), (V{v.find(kSp), v.find("c"), v.find("c")}));
}

TEST(SpmTokenizer, ByteFallbackSpacePrefixAndSpecials) {
  const Tokenizer tok(spm_vocab());
  const Vocab& v = tok.vocab();
  // "é" is not a piece: bytes C3 A9 → ids 3 + byte.
  EXPECT_EQ(tok.encode("\xC3\xA9", false, false), (V{v.find(kSp), 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(tok.encode("", true, false), (V{1}));
  EXPECT_EQ(tok.encode("", false, true), V{});
  EXPECT_EQ(tok.encode("a", true, false), (V{1, v.find(kSp + "a")}));
  // A special token is followed by a fresh space prefix; user-defined tokens need no parse_special.
  EXPECT_EQ(tok.encode("a</s>a", false, true), (V{v.find(kSp + "a"), 2, v.find(kSp + "a")}));
  EXPECT_EQ(tok.encode("<x>", false, false), (V{v.find("<x>")}));
  const V plain = tok.encode("</s>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
  // Decode: the first piece loses its space; bytes rejoin; control tokens only on request.
  EXPECT_EQ(tok.decode(tok.encode("ab \xC3\xA9", false, false), false), "ab \xC3\xA9");
  EXPECT_EQ(tok.token_to_piece(2, false), "");
  EXPECT_EQ(tok.token_to_piece(2, true), "</s>");
  EXPECT_EQ(tok.token_to_piece(3 + 0x0A, false), "\n");
  EXPECT_THROW(tok.token_to_piece(100000, false), TextError);
  EXPECT_TRUE(tok.is_eog(2));
}

// A byte token must be spelled <0xAB> (either case); a malformed one from a broken vocabulary prints as
// its own text instead of throwing in the middle of a reply.
TEST(SpmTokenizer, MalformedByteTokenDecodesAsText) {
  Vocab v = spm_vocab();
  v.tokens[3 + 0x41] = "<0xZZ>";
  v.tokens[3 + 0x42] = "<0x4a>";
  const Tokenizer tok(std::move(v));
  EXPECT_EQ(tok.token_to_piece(3 + 0x41, false), "<0xZZ>");
  EXPECT_EQ(tok.token_to_piece(3 + 0x42, false), "J");
  EXPECT_EQ(tok.token_to_piece(3 + 0x43, false), "C");
}

// BPE vocab over the GPT-2 byte map: "Ġ" is space.
Vocab bpe_vocab(PreType pre, bool ignore_merges) {
  Vocab v;
  v.type = VocabType::bpe;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(byte_to_unicode(static_cast<uint8_t>(b)));
  for (const char* t : {"ab", "abc", "Ġa", "Ġab", "bc", "<|end|>"}) v.tokens.push_back(t);
  v.types.assign(v.tokens.size(), TokenType::normal);
  v.types.back() = TokenType::control;
  v.pre = pre;
  v.ignore_merges = ignore_merges;
  v.clean_spaces = true;
  vocab_finalize(v, std::vector<std::string>{"b c", "a b", "Ġ a", "Ġa b"});
  return v;
}

TEST(BpeTokenizer, MergesByLowestRank) {
  const Tokenizer tok(bpe_vocab(PreType::gpt2, false));
  const Vocab& v = tok.vocab();
  // "abc": "b c" (rank 0) before "a b" (rank 1), and there is no "a bc" merge.
  EXPECT_EQ(tok.encode("abc", false, false), (V{'a', v.find("bc")}));
  // " ab" = Ġ a b: "a b" (rank 1) beats "Ġ a" (rank 2), and there is no "Ġ ab" merge.
  EXPECT_EQ(tok.encode(" ab", false, false), (V{' ', v.find("ab")}));
  EXPECT_EQ(tok.encode(" a", false, false), (V{v.find("Ġa")}));
  EXPECT_EQ(tok.encode("ab ab", false, false), (V{v.find("ab"), ' ', v.find("ab")}));
  EXPECT_EQ(tok.encode("a<|end|>", false, true), (V{'a', v.find("<|end|>")}));
  EXPECT_TRUE(tok.is_eog(v.find("<|end|>")));
  EXPECT_EQ(tok.decode(tok.encode(" ab\n", false, false), false), " ab\n");
  EXPECT_EQ(tok.decode(tok.encode("ab . ab 's", false, false), false), "ab. ab's");
}

TEST(BpeTokenizer, IgnoreMergesTakesWholeWordTokens) {
  const Tokenizer merged(bpe_vocab(PreType::llama3, false));
  const Tokenizer whole(bpe_vocab(PreType::llama3, true));
  EXPECT_EQ(merged.encode("abc", false, false), (V{'a', merged.vocab().find("bc")}));
  EXPECT_EQ(whole.encode("abc", false, false), (V{whole.vocab().find("abc")}));
}

std::vector<std::string> split(PreType t, std::string_view s) { return PreTokenizer(t).split(s); }
using S = std::vector<std::string>;

TEST(PreTokenizer, RegexFamilies) {
  EXPECT_EQ(split(PreType::gpt2, "Hello world's  123!!\n"), (S{"Hello", " world", "'s", " ", " 123", "!!", "\n"}));
  EXPECT_EQ(split(PreType::llama3, "I'LL 12345 ab\r\n\n  x"), (S{"I", "'LL", " ", "123", "45", " ab", "\r\n\n", " ", " x"}));
  EXPECT_EQ(split(PreType::qwen2, "x 123"), (S{"x", " ", "1", "2", "3"}));
  EXPECT_EQ(split(PreType::starcoder, "a12 b"), (S{"a", "1", "2", " b"}));
  EXPECT_EQ(split(PreType::falcon, "1234 a.b"), (S{"123", "4", " a", ".", "b"}));
  EXPECT_EQ(split(PreType::deepseek_coder, "ab\n12"), (S{"ab", "\n", "1", "2"}));
  EXPECT_EQ(split(PreType::deepseek_llm, "ab  "), (S{"ab", "  "}));
  // Invalid UTF-8 becomes U+FFFD before splitting; nothing is dropped.
  EXPECT_EQ(split(PreType::gpt2, "a\xFF"), (S{"a", "\xEF\xBF\xBD"}));
  EXPECT_TRUE(split(PreType::gpt2, "").empty());
}

TEST(ByteMap, Gpt2ByteToUnicode) {
  EXPECT_EQ(byte_to_unicode(' '), "\xC4\xA0");     // U+0120 Ġ
  EXPECT_EQ(byte_to_unicode('\n'), "\xC4\x8A");    // U+010A Ċ
  EXPECT_EQ(byte_to_unicode(0x7F), "\xC4\xA1");    // U+0121
  EXPECT_EQ(byte_to_unicode(0xAD), "\xC5\x83");    // U+0143
  EXPECT_EQ(byte_to_unicode('A'), "A");
  for (int b = 0; b < 256; ++b) {
    const auto cps = utf8::decode_lossy(byte_to_unicode(static_cast<uint8_t>(b)));
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_EQ(unicode_to_byte(cps[0]), b);
  }
  EXPECT_EQ(unicode_to_byte(0x143), 0xAD);
  EXPECT_EQ(unicode_to_byte(0x144), -1);
}

gguf::File vocab_file(const std::string& model, const std::string& pre, bool with_merges = true) {
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  w.set("tokenizer.ggml.model", gguf::Value::string(model));
  if (!pre.empty()) w.set("tokenizer.ggml.pre", gguf::Value::string(pre));
  std::vector<std::string> toks;
  for (int b = 0; b < 256; ++b) toks.push_back(byte_to_unicode(static_cast<uint8_t>(b)));
  toks.push_back("<|eot_id|>");
  w.set("tokenizer.ggml.tokens", gguf::Value::array_of_strings(toks));
  std::vector<int32_t> types(toks.size(), 1);
  types.back() = 3;
  w.set("tokenizer.ggml.token_type", gguf::Value::array_of_i32(types));
  if (with_merges) w.set("tokenizer.ggml.merges", gguf::Value::array_of_strings({"a b"}));
  return gguf::File::from_bytes(w.to_bytes(), model + "/" + pre);
}

TEST(VocabFromGguf, DefaultsPerModelAndPre) {
  const Vocab spm = vocab_from_gguf(vocab_file("llama", ""));
  EXPECT_EQ(spm.type, VocabType::spm);
  EXPECT_EQ(spm.bos, 1);
  EXPECT_EQ(spm.eos, 2);
  EXPECT_EQ(spm.unk, 0);
  EXPECT_TRUE(spm.add_bos);
  EXPECT_TRUE(spm.add_space_prefix);
  EXPECT_FALSE(spm.add_eos);

  const Vocab gpt2 = vocab_from_gguf(vocab_file("gpt2", "gpt-2"));
  EXPECT_EQ(gpt2.bos, 11);
  EXPECT_EQ(gpt2.eos, 11);
  EXPECT_FALSE(gpt2.add_bos);
  EXPECT_FALSE(gpt2.add_space_prefix);
  EXPECT_FALSE(gpt2.ignore_merges);
  EXPECT_EQ(gpt2.eot, 256);  // inferred from the text <|eot_id|>
  EXPECT_TRUE(gpt2.is_eog(256));
  EXPECT_TRUE(gpt2.is_eog(11));

  const Vocab l3 = vocab_from_gguf(vocab_file("gpt2", "llama3"));
  EXPECT_EQ(l3.pre, PreType::llama3);
  EXPECT_TRUE(l3.add_bos);
  EXPECT_TRUE(l3.ignore_merges);
  const Vocab dbrx = vocab_from_gguf(vocab_file("gpt2", "dbrx"));
  EXPECT_EQ(dbrx.pre, PreType::llama3);
  EXPECT_FALSE(dbrx.ignore_merges);
  EXPECT_EQ(vocab_from_gguf(vocab_file("gpt2", "")).pre, PreType::default_bpe);
  EXPECT_EQ(vocab_from_gguf(vocab_file("gpt2", "command-r")).pre, PreType::starcoder);
  EXPECT_FALSE(vocab_from_gguf(vocab_file("gpt2", "qwen2")).clean_spaces);
}

TEST(VocabFromGguf, RefusesUnknownModelAndPre) {
  auto message = [](const gguf::File& f) {
    try {
      (void)vocab_from_gguf(f);
    } catch (const TextError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const std::string m = message(vocab_file("t5", ""));
  EXPECT_NE(m.find("'t5'"), std::string::npos) << m;
  const std::string p = message(vocab_file("gpt2", "tekken"));
  EXPECT_NE(p.find("'tekken'"), std::string::npos) << p;
  EXPECT_NE(p.find("llama-bpe"), std::string::npos) << p;  // lists what is supported
  EXPECT_NE(p.find("deepseek-llm"), std::string::npos) << p;
  const std::string nm = message(vocab_file("gpt2", "gpt-2", false));
  EXPECT_NE(nm.find("merges"), std::string::npos) << nm;
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  EXPECT_THROW(vocab_from_gguf(gguf::File::from_bytes(w.to_bytes())), TextError);
}

}  // namespace
}  // namespace alap
