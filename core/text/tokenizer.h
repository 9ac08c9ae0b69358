// Text ↔ token ids for SentencePiece ("llama", FORMATS.md §8.3) and byte-level BPE ("gpt2",
// §8.4) vocabularies, with special-token splitting (§8.2) and llama.cpp's detokenize rules.
// Not WordPiece/Unigram (refused by vocab_from_gguf) and not chat templates.
//
//   alap::Tokenizer tok(alap::vocab_from_gguf(alap::gguf::File::open("model.gguf")));
//   std::vector<int32_t> ids = tok.encode("Hello world", /*add_special=*/true, /*parse_special=*/false);
//   std::string text = tok.decode(ids, /*render_special=*/false);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/vocab.h"

namespace alap {

class Tokenizer {
 public:
  explicit Tokenizer(Vocab vocab);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  const Vocab& vocab() const { return vocab_; }

  // add_special: BOS/EOS as the vocab's add_bos/add_eos say. parse_special: control and
  // unknown token texts in `text` become their ids (user-defined ones always do).
  // Empty text gives no tokens besides BOS/EOS. Thread-safe.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // One token's bytes (may be a partial UTF-8 sequence). Control/unknown tokens give their
  // text only when render_special; out-of-range ids throw TextError.
  std::string token_to_piece(int32_t id, bool render_special) const;

  // A whole sequence: pieces joined, one leading space removed from the first piece when the
  // vocab adds a space prefix, and for BPE vocabs with clean_spaces the spaces before
  // ? ! . , and in front of 's 'm 're 've removed (llama.cpp's rules).
  std::string decode(std::span<const int32_t> ids, bool render_special) const;

  bool is_eog(int32_t id) const { return vocab_.is_eog(id); }

 private:
  struct Impl;
  Vocab vocab_;
  std::unique_ptr<Impl> impl_;

  void encode_spm(std::string_view text, std::vector<int32_t>& out) const;
  void encode_bpe_word(std::string_view word, std::vector<int32_t>& out) const;
};

}  // namespace alap
