// UTF-8 decoding and classification used by the tokenizers and the streaming detokenizer.
// Byte-exact rules from the Unicode standard, table 3-7 (well-formed byte sequences).
#include "core/text/utf8.h"

namespace alap::utf8 {

size_t lead_len(uint8_t lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  if (lead < 0xF8) return 4;
  return 1;
}

void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

int classify(std::string_view text) {
  if (text.empty()) return 0;
  const auto b0 = static_cast<uint8_t>(text[0]);
  if (b0 < 0x80) return 1;
  int n = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (int k = 1; k < n; ++k) {
    if (static_cast<size_t>(k) >= text.size()) return 0;
    const auto b = static_cast<uint8_t>(text[k]);
    const uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return -k;
  }
  return n;
}

std::vector<char32_t> decode_lossy(std::string_view text) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const int c = classify(text.substr(i));
    if (c > 0) {
      const auto* p = reinterpret_cast<const uint8_t*>(text.data() + i);
      char32_t cp = 0;
      switch (c) {
        case 1: cp = p[0]; break;
        case 2: cp = ((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu); break;
        case 3: cp = ((p[0] & 0x0Fu) << 12) | ((p[1] & 0x3Fu) << 6) | (p[2] & 0x3Fu); break;
        default: cp = ((p[0] & 0x07u) << 18) | ((p[1] & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu); break;
      }
      out.push_back(cp);
      i += static_cast<size_t>(c);
    } else {
      out.push_back(kReplacement);
      i += c == 0 ? text.size() - i : static_cast<size_t>(-c);  // truncated tail: one U+FFFD
    }
  }
  return out;
}

bool is_valid(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const int c = classify(text.substr(i));
    if (c <= 0) return false;
    i += static_cast<size_t>(c);
  }
  return true;
}

}  // namespace alap::utf8
