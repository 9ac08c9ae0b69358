// Stop-string scanning shared by Engine and FakeEngine: where a stop string occurs in streamed
// text, and how much of the text's tail must be held back because it may still become one.
// Internal to core/engine (not part of the facade).
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace alap::stop_strings {

// Length of the longest suffix of `text` that is a proper prefix of one of `stops`.
inline size_t holdback(std::string_view text, const std::vector<std::string>& stops) {
  size_t hold = 0;
  for (const auto& s : stops) {
    const size_t max_len = std::min(text.size(), s.empty() ? 0 : s.size() - 1);
    for (size_t len = max_len; len > hold; --len) {
      if (text.substr(text.size() - len) == std::string_view(s).substr(0, len)) {
        hold = len;
        break;
      }
    }
  }
  return hold;
}

// Earliest occurrence of any (non-empty) stop string in text at or after `from`; npos when none.
inline size_t find(std::string_view text, const std::vector<std::string>& stops, size_t from) {
  size_t best = std::string_view::npos;
  for (const auto& s : stops) {
    if (s.empty()) continue;
    const size_t at = text.find(s, from);
    if (at < best) best = at;
  }
  return best;
}

}  // namespace alap::stop_strings
