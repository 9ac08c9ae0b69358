// UTF-8 helpers for the tokenizers: code point decoding (lossy, U+FFFD for bad bytes), encoding,
// and the byte-level rules the streaming detokenizer needs. Not a Unicode database (ICU is that).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace alap::utf8 {

inline constexpr char32_t kReplacement = 0xFFFD;

// Length a sequence claims from its lead byte (1 for ASCII, continuation and invalid bytes),
// the way llama.cpp's SentencePiece path splits text into characters.
size_t lead_len(uint8_t lead);

// Appends the UTF-8 encoding of cp (cp must be <= 0x10FFFF).
void append(std::string& out, char32_t cp);

// Decodes text into code points; each invalid or truncated sequence becomes one U+FFFD per
// maximal subpart (the Unicode "best practice"), so the result is always valid.
std::vector<char32_t> decode_lossy(std::string_view text);

// True when text is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool is_valid(std::string_view text);

// Classifies the sequence starting at text[0]:
//   > 0: a complete valid sequence of that many bytes;
//   0:   a valid but incomplete prefix (more bytes may complete it);
//   < 0: invalid; -n means the first n bytes form a maximal invalid subpart to replace by U+FFFD.
int classify(std::string_view text);

}  // namespace alap::utf8
