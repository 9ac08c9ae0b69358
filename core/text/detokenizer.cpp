// Streaming UTF-8-safe detokenizer (see detokenizer.h). The byte rules are utf8::classify.
#include "core/text/detokenizer.h"

#include "core/text/utf8.h"

namespace alap {

void utf8_drain_complete(std::string& bytes, std::string& out) {
  size_t i = 0;
  while (i < bytes.size()) {
    const int c = utf8::classify(std::string_view(bytes).substr(i));
    if (c == 0) break;  // incomplete: wait for more bytes
    if (c > 0) {
      out.append(bytes, i, static_cast<size_t>(c));
      i += static_cast<size_t>(c);
    } else {
      utf8::append(out, utf8::kReplacement);
      i += static_cast<size_t>(-c);
    }
  }
  bytes.erase(0, i);
}

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer, bool render_special)
    : tokenizer_(&tokenizer), render_special_(render_special) {}

std::string StreamingDetokenizer::push(int32_t id) {
  pending_ += tokenizer_->token_to_piece(id, render_special_);
  std::string out;
  utf8_drain_complete(pending_, out);
  return out;
}

std::string StreamingDetokenizer::flush() {
  std::string out;
  utf8_drain_complete(pending_, out);
  if (!pending_.empty()) utf8::append(out, utf8::kReplacement);
  pending_.clear();
  return out;
}

}  // namespace alap
