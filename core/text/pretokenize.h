// Byte-level BPE pre-tokenizers (FORMATS.md §8.4): each family is an ordered list of regexes;
// every match and every gap between matches becomes a piece. Not the BPE merging itself.
//
//   PreTokenizer pre(PreType::gpt2);
//   auto pieces = pre.split("Hello world");  // {"Hello", " world"}
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/vocab.h"

namespace alap {

class PreTokenizer {
 public:
  explicit PreTokenizer(PreType type);
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  // Splits UTF-8 text into pieces whose concatenation is the text (invalid UTF-8 bytes are
  // first replaced by U+FFFD, as llama.cpp does). Thread-safe.
  std::vector<std::string> split(std::string_view text) const;

  // The regexes (ICU syntax) applied in order.
  const std::vector<std::string>& regexes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// GPT-2 byte-to-unicode map (§8.4 step 2): the UTF-8 text of the code point byte b maps to.
const std::string& byte_to_unicode(uint8_t b);
// The inverse: the byte a code point stands for, or -1 when cp is not in the map.
int unicode_to_byte(char32_t cp);

}  // namespace alap
