// Streaming detokenizer: turns generated ids into text one token at a time without ever
// emitting a partial UTF-8 sequence (a Bengali grapheme or an emoji may span several byte
// tokens). Not the whole-sequence decode (Tokenizer::decode), and it strips no spaces.
//
//   alap::StreamingDetokenizer detok(tokenizer);
//   for (int32_t id : generated) std::cout << detok.push(id);
//   std::cout << detok.flush();
#pragma once

#include <cstdint>
#include <string>

#include "core/text/tokenizer.h"

namespace alap {

class StreamingDetokenizer {
 public:
  // The tokenizer must outlive this object.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, bool render_special = false);

  // Returns the text completed by this token: whole UTF-8 sequences only. Trailing bytes that
  // may still become a valid character are held back; bytes that cannot are U+FFFD at once.
  std::string push(int32_t id);

  // Returns what is held back, an incomplete tail becoming U+FFFD, and resets.
  std::string flush();

  // Bytes currently held back (0–3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tokenizer_;
  bool render_special_;
  std::string pending_;
};

// Moves the longest prefix of `bytes` that ends on a complete UTF-8 sequence into `out`
// (provably invalid bytes replaced by U+FFFD per maximal subpart); `bytes` keeps the rest.
void utf8_drain_complete(std::string& bytes, std::string& out);

}  // namespace alap
