// Fuzz harnesses for the two tokenizers and the streaming detokenizer, over small vocabularies
// built here: input byte 0 holds flags, the rest is text to encode and, read as little-endian
// 16-bit values, token ids to detokenize. Not a check of real model vocabularies (tests do that).
#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/detokenizer.h"
#include "core/text/pretokenize.h"
#include "core/text/tokenizer.h"
#include "core/text/utf8.h"
#include "tests/fuzz/fuzz_targets.h"

namespace alap::fuzz {
namespace {

const std::string kSp = "\xE2\x96\x81";  // ▁

// <unk> <s> </s>, 256 byte tokens, pieces with scores, a user-defined "<x>" and a control "<|im_end|>".
Vocab make_spm_vocab() {
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
  const std::vector<std::pair<std::string, float>> pieces = {
      {kSp + "a", -1},   {"ab", -2},       {kSp + "ab", -3},  {"b", -10},         {"a", -10},
      {kSp, -10},        {"c", -10},       {"bc", -0.5f},     {"abc", -4},        {kSp + "the", -1.5f},
      {"th", -3},        {"he", -3},       {"e", -10},        {"t", -10},         {"h", -10},
      {"\xE0\xA6\xAC", -5} /* ব */,        {"\xE0\xA6\xBE", -5} /* া */,          {kSp + "\xE0\xA6\xAC", -4},
      {"<x>", 0},        {"<|im_end|>", 0}};
  for (const auto& [text, score] : pieces) {
    v.tokens.push_back(text);
    v.types.push_back(text == "<x>" ? TokenType::user_defined
                      : text == "<|im_end|>" ? TokenType::control
                                             : TokenType::normal);
  }
  v.bos = 1;
  v.eos = 2;
  v.unk = 0;
  v.add_bos = true;
  v.add_space_prefix = true;
  vocab_finalize(v, {});
  for (const auto& [text, score] : pieces) v.scores[static_cast<size_t>(v.find(text))] = score;
  return v;
}

// GPT-2 byte map tokens, a few merges, control "<|end|>" and user-defined "<tool>".
Vocab make_bpe_vocab(PreType pre) {
  Vocab v;
  v.type = VocabType::bpe;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(byte_to_unicode(static_cast<uint8_t>(b)));
  for (const char* t : {"ab", "abc", "\xC4\xA0" "a", "\xC4\xA0" "ab", "bc", "th", "\xC4\xA0" "th", "the", "<|end|>", "<tool>"}) {
    v.tokens.push_back(t);
  }
  v.types.assign(v.tokens.size(), TokenType::normal);
  v.types[static_cast<size_t>(v.n_tokens() - 2)] = TokenType::control;
  v.types[static_cast<size_t>(v.n_tokens() - 1)] = TokenType::user_defined;
  v.pre = pre;
  v.ignore_merges = pre == PreType::llama3;
  v.clean_spaces = false;
  v.nfc = false;
  v.eos = v.n_tokens() - 2;
  vocab_finalize(v, std::vector<std::string>{"b c", "a b", "\xC4\xA0 a", "\xC4\xA0" "a b", "t h", "\xC4\xA0 th", "th e"});
  return v;
}

bool contains_special_text(const Vocab& v, std::string_view text) {
  for (int32_t id : v.special_tokens) {
    if (text.find(v.tokens[static_cast<size_t>(id)]) != std::string_view::npos) return true;
  }
  return false;
}

// What a streaming detokenizer must produce for these bytes pushed in any split: complete
// sequences as they are, each maximal invalid subpart and an incomplete tail as one U+FFFD.
std::string sanitized(const std::string& bytes) {
  std::string out;
  for (char32_t cp : utf8::decode_lossy(bytes)) utf8::append(out, cp);
  return out;
}

void fuzz_detokenizer(const Tokenizer& tok, const uint8_t* data, size_t size, bool render_special) {
  const int32_t n = tok.vocab().n_tokens();
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 1 < size; i += 2) {
    const uint32_t raw = static_cast<uint32_t>(data[i]) | (static_cast<uint32_t>(data[i + 1]) << 8);
    ids.push_back(raw == 0xFFFF ? -1 : static_cast<int32_t>(raw % static_cast<uint32_t>(n + 2)));
  }
  StreamingDetokenizer detok(tok, render_special);
  std::string streamed, pieces;
  bool all_in_range = true;
  for (int32_t id : ids) {
    try {
      streamed += detok.push(id);
      pieces += tok.token_to_piece(id, render_special);
      check(detok.pending_bytes() <= 3, "detokenizer holds more than 3 bytes");
    } catch (const TextError&) {
      check(id < 0 || id >= n, "TextError for an id in range");
      all_in_range = false;
    }
  }
  streamed += detok.flush();
  check(detok.pending_bytes() == 0, "flush left bytes behind");
  check(utf8::is_valid(streamed), "streaming detokenizer emitted invalid UTF-8");
  if (all_in_range) {
    check(streamed == sanitized(pieces), "streamed text differs from the sanitized joined pieces");
    const std::string whole = tok.decode(ids, render_special);
    check(whole.size() <= pieces.size(), "decode longer than its pieces");
  }
}

void fuzz_encode(const Tokenizer& tok, std::string_view text, bool add_special, bool parse_special,
                 bool render_special) {
  const Vocab& v = tok.vocab();
  std::vector<int32_t> ids;
  try {
    ids = tok.encode(text, add_special, parse_special);
  } catch (const TextError&) {
    return;
  }
  for (int32_t id : ids) check(id >= 0 && id < v.n_tokens(), "encode gave an id out of range");
  check(!text.empty() || ids.size() <= 2, "empty text gave more than BOS/EOS");
  const std::string back = tok.decode(ids, render_special);
  // Lossless for valid UTF-8 when no special token text appears and no special token was added
  // (SPM: no literal ▁ either, which decodes to a space by design).
  if (!add_special && utf8::is_valid(text) && !contains_special_text(v, text) &&
      (v.type != VocabType::spm || text.find(kSp) == std::string_view::npos)) {
    check(back == text, "decode(encode(text)) != text");
  }
}

}  // namespace

int spm_tokenizer(const uint8_t* data, size_t size) {
  static const Tokenizer tok(make_spm_vocab());
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzz_encode(tok, text, flags & 1, flags & 2, flags & 4);
  fuzz_detokenizer(tok, data + 1, size - 1, flags & 4);
  return 0;
}

int bpe_tokenizer(const uint8_t* data, size_t size) {
  static constexpr std::array<PreType, 8> kPre = {PreType::gpt2,      PreType::llama3,  PreType::qwen2,
                                                  PreType::default_bpe, PreType::starcoder, PreType::falcon,
                                                  PreType::deepseek_coder, PreType::deepseek_llm};
  static std::array<std::unique_ptr<Tokenizer>, kPre.size()> toks;
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const size_t which = (flags >> 3) % kPre.size();
  if (!toks[which]) toks[which] = std::make_unique<Tokenizer>(make_bpe_vocab(kPre[which]));
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  fuzz_encode(*toks[which], text, flags & 1, flags & 2, flags & 4);
  fuzz_detokenizer(*toks[which], data + 1, size - 1, flags & 4);
  return 0;
}

}  // namespace alap::fuzz
