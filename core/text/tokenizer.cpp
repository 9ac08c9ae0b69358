// SentencePiece and byte-level BPE encoding, special-token splitting and detokenizing, with
// the behaviour of llama.cpp (FORMATS.md §8.2–8.4). Merging uses a priority queue over a
// linked list of symbols: O(n log n) per fragment, never a rescan of all pairs.
#include "core/text/tokenizer.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <queue>
#include <unordered_map>

#include "core/text/pretokenize.h"
#include "core/text/utf8.h"

namespace alap {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581 "▁"

struct Fragment {
  int32_t id;  // kNoToken: raw text
  size_t off, len;
};

// One symbol of a word being merged: a byte range of the word, linked to its neighbours.
struct Symbol {
  int32_t prev, next;
  uint32_t off, len;
};

// Splits `word` into one symbol per UTF-8 character (lengths from the lead byte, clamped).
std::vector<Symbol> make_symbols(std::string_view word) {
  std::vector<Symbol> syms;
  syms.reserve(word.size());
  size_t off = 0;
  while (off < word.size()) {
    const size_t len = std::min(utf8::lead_len(static_cast<uint8_t>(word[off])), word.size() - off);
    const auto i = static_cast<int32_t>(syms.size());
    syms.push_back({i - 1, static_cast<int32_t>(off + len < word.size() ? i + 1 : -1), static_cast<uint32_t>(off),
                    static_cast<uint32_t>(len)});
    off += len;
  }
  return syms;
}

struct SpmBigram {
  int32_t left, right;
  float score;
  uint32_t size;
};
struct SpmOrder {  // highest score first, then leftmost
  bool operator()(const SpmBigram& a, const SpmBigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

struct BpeBigram {
  int32_t left, right;
  int32_t rank;
  uint32_t size;
};
struct BpeOrder {  // lowest rank first, then leftmost
  bool operator()(const BpeBigram& a, const BpeBigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

// The merge loop both algorithms share: queue every adjacent pair try_add accepts, then apply the
// best queued merge (the queue's order decides: score or rank, then leftmost) until none is left,
// skipping entries made stale by an earlier merge. try_add(l, r) queues (l, r) when mergeable.
template <typename Queue, typename TryAdd>
void merge_symbols(std::vector<Symbol>& syms, Queue& queue, const TryAdd& try_add) {
  for (size_t i = 1; i < syms.size(); ++i) try_add(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
  while (!queue.empty()) {
    const auto bg = queue.top();
    queue.pop();
    Symbol& left = syms[static_cast<size_t>(bg.left)];
    Symbol& right = syms[static_cast<size_t>(bg.right)];
    if (left.len == 0 || right.len == 0 || left.len + right.len != bg.size) continue;  // stale
    left.len += right.len;
    right.len = 0;
    left.next = right.next;
    if (right.next >= 0) syms[static_cast<size_t>(right.next)].prev = bg.left;
    try_add(left.prev, bg.left);
    try_add(bg.left, left.next);
  }
}

}  // namespace

struct Tokenizer::Impl {
  std::unique_ptr<PreTokenizer> pre;
  std::array<int32_t, 256> byte_tokens{};  // SPM "<0xXX>" ids (or the one-char token, or unk)
};

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)), impl_(std::make_unique<Impl>()) {
  if (vocab_.token_to_id.size() == 0 && !vocab_.tokens.empty()) vocab_finalize(vocab_, {});
  if (vocab_.type == VocabType::bpe) {
    impl_->pre = std::make_unique<PreTokenizer>(vocab_.pre);
  } else {
    for (int b = 0; b < 256; ++b) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", b);
      int32_t id = vocab_.find(hex);
      if (id == kNoToken) id = vocab_.find(std::string(1, static_cast<char>(b)));
      if (id == kNoToken) id = vocab_.unk;
      impl_->byte_tokens[static_cast<size_t>(b)] = id;
    }
  }
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocab_.add_bos && vocab_.bos != kNoToken) out.push_back(vocab_.bos);

  // §8.2: split at special-token texts, longest token first.
  std::vector<Fragment> frags, next;
  if (!text.empty()) frags.push_back({kNoToken, 0, text.size()});
  for (int32_t id : vocab_.special_tokens) {
    const TokenType t = vocab_.type_of(id);
    if (!parse_special && (t == TokenType::control || t == TokenType::unknown)) continue;
    const std::string& st = vocab_.tokens[static_cast<size_t>(id)];
    if (text.find(st) == std::string_view::npos) continue;
    next.clear();
    for (const Fragment& f : frags) {
      if (f.id != kNoToken) {
        next.push_back(f);
        continue;
      }
      const std::string_view sub = text.substr(f.off, f.len);
      size_t pos = 0;
      for (size_t p = sub.find(st); p != std::string_view::npos; p = sub.find(st, pos)) {
        if (p > pos) next.push_back({kNoToken, f.off + pos, p - pos});
        next.push_back({id, f.off + p, st.size()});
        pos = p + st.size();
      }
      if (pos < sub.size()) next.push_back({kNoToken, f.off + pos, sub.size() - pos});
    }
    frags.swap(next);
  }

  if (vocab_.type == VocabType::spm) {
    bool prev_special = true;  // the space prefix goes at the start and after special tokens
    std::string s;
    for (const Fragment& f : frags) {
      if (f.id != kNoToken) {
        out.push_back(f.id);
        prev_special = true;
        continue;
      }
      s.clear();
      if (vocab_.add_space_prefix && prev_special) s += kSpmSpace;
      for (char c : text.substr(f.off, f.len)) {
        if (c == ' ') {
          s += kSpmSpace;
        } else {
          s += c;
        }
      }
      encode_spm(s, out);
      prev_special = false;
    }
  } else {
    std::unordered_map<std::string, std::vector<int32_t>> cache;  // word → ids, within this call
    std::string mapped;
    for (const Fragment& f : frags) {
      if (f.id != kNoToken) {
        out.push_back(f.id);
        continue;
      }
      std::string raw(text.substr(f.off, f.len));
      if (vocab_.nfc) {
        UErrorCode status = U_ZERO_ERROR;
        const icu::Normalizer2* nfc = icu::Normalizer2::getNFCInstance(status);
        if (U_SUCCESS(status)) {
          icu::UnicodeString u = icu::UnicodeString::fromUTF8(raw);
          if (!nfc->isNormalized(u, status) && U_SUCCESS(status)) {
            icu::UnicodeString n = nfc->normalize(u, status);
            if (U_SUCCESS(status)) {
              raw.clear();
              n.toUTF8String(raw);
            }
          }
        }
      }
      for (const std::string& piece : impl_->pre->split(raw)) {
        mapped.clear();
        for (char c : piece) mapped += byte_to_unicode(static_cast<uint8_t>(c));
        if (mapped.size() <= 64) {
          auto it = cache.find(mapped);
          if (it == cache.end()) {
            std::vector<int32_t> ids;
            encode_bpe_word(mapped, ids);
            it = cache.emplace(mapped, std::move(ids)).first;
          }
          out.insert(out.end(), it->second.begin(), it->second.end());
        } else {
          encode_bpe_word(mapped, out);
        }
      }
    }
  }

  if (add_special && vocab_.add_eos && vocab_.eos != kNoToken) out.push_back(vocab_.eos);
  return out;
}

void Tokenizer::encode_spm(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  std::vector<Symbol> syms = make_symbols(text);
  std::priority_queue<SpmBigram, std::vector<SpmBigram>, SpmOrder> queue;
  std::string buf;
  auto try_add = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const Symbol& a = syms[static_cast<size_t>(l)];
    const Symbol& b = syms[static_cast<size_t>(r)];
    const std::string_view joined = text.substr(a.off, a.len + b.len);
    const int32_t id = vocab_.find(joined);
    if (id == kNoToken) return;
    queue.push({l, r, vocab_.scores[static_cast<size_t>(id)], a.len + b.len});
  };
  merge_symbols(syms, queue, try_add);
  for (int32_t i = 0; i != -1; i = syms[static_cast<size_t>(i)].next) {
    const Symbol& s = syms[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(s.off, s.len);
    const int32_t id = vocab_.find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      continue;
    }
    // Byte fallback (a merged symbol is always a token, so this is one character).
    for (char c : piece) {
      const int32_t b = impl_->byte_tokens[static_cast<uint8_t>(c)];
      if (b != kNoToken) out.push_back(b);
    }
  }
}

void Tokenizer::encode_bpe_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (vocab_.ignore_merges) {
    if (int32_t id = vocab_.find(word); id != kNoToken) {
      out.push_back(id);
      return;
    }
  }
  std::vector<Symbol> syms = make_symbols(word);
  std::priority_queue<BpeBigram, std::vector<BpeBigram>, BpeOrder> queue;
  std::string key;
  auto try_add = [&](int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const Symbol& a = syms[static_cast<size_t>(l)];
    const Symbol& b = syms[static_cast<size_t>(r)];
    key.assign(word.substr(a.off, a.len));
    key += ' ';
    key += word.substr(b.off, b.len);
    auto it = vocab_.merge_ranks.find(key);
    if (it == vocab_.merge_ranks.end()) return;
    queue.push({l, r, it->second, a.len + b.len});
  };
  merge_symbols(syms, queue, try_add);
  for (int32_t i = 0; i != -1; i = syms[static_cast<size_t>(i)].next) {
    const Symbol& s = syms[static_cast<size_t>(i)];
    const std::string_view piece = word.substr(s.off, s.len);
    const int32_t id = vocab_.find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      continue;
    }
    for (char c : piece) {  // llama.cpp's fallback: single-byte tokens where they exist
      if (int32_t b = vocab_.find(std::string_view(&c, 1)); b != kNoToken) out.push_back(b);
    }
  }
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (id < 0 || id >= vocab_.n_tokens()) {
    throw TextError("token id " + std::to_string(id) + " is out of range (vocabulary has " +
                    std::to_string(vocab_.n_tokens()) + " tokens)");
  }
  const TokenType t = vocab_.type_of(id);
  const std::string& text = vocab_.tokens[static_cast<size_t>(id)];
  if (t == TokenType::control || t == TokenType::unknown) return render_special ? text : std::string();
  if (t == TokenType::user_defined) return text;
  if (t == TokenType::unused) return {};
  if (vocab_.type == VocabType::spm) {
    if (t == TokenType::byte) {
      // "<0xAB>" is the byte 0xAB; a byte token spelled any other way (a malformed vocabulary) prints as
      // its text rather than throwing from the middle of a reply.
      auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
      };
      if (text.size() == 6 && text.starts_with("<0x") && text.back() == '>' && hex(text[3]) >= 0 && hex(text[4]) >= 0) {
        return std::string(1, static_cast<char>(hex(text[3]) * 16 + hex(text[4])));
      }
      return text;
    }
    std::string s;
    s.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
      if (text.compare(i, kSpmSpace.size(), kSpmSpace) == 0) {
        s += ' ';
        i += kSpmSpace.size();
      } else {
        s += text[i++];
      }
    }
    return s;
  }
  // Byte-level BPE: every code point stands for one byte.
  std::string s;
  for (char32_t cp : utf8::decode_lossy(text)) {
    const int b = unicode_to_byte(cp);
    if (b >= 0) {
      s += static_cast<char>(b);
    } else {
      utf8::append(s, cp);
    }
  }
  return s;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  std::string text;
  bool remove_space = vocab_.add_space_prefix;  // only the first token's piece may lose it
  for (int32_t id : ids) {
    std::string piece = token_to_piece(id, render_special);
    if (remove_space && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    remove_space = false;
    text += piece;
  }
  if (!vocab_.clean_spaces || text.empty()) return text;

  // llama.cpp's clean-up, three passes over the bytes.
  auto pass = [](std::string& s, auto&& step) {
    std::string o;
    o.reserve(s.size());
    o += s[0];
    for (size_t i = 1; i < s.size(); ++i) step(s, i, o);
    s = std::move(o);
  };
  // " ?", " !", " .", " ,": drop the space.
  pass(text, [](std::string& s, size_t& i, std::string& o) {
    const char x = s[i];
    if (s[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) o.pop_back();
    o += x;
  });
  if (text.empty()) return text;
  // " ' ": drop both spaces around a lone apostrophe.
  pass(text, [](std::string& s, size_t& i, std::string& o) {
    const char x = s[i];
    if (x == '\'' && i + 1 < s.size() && s[i - 1] == ' ' && s[i + 1] == ' ') {
      o.pop_back();
      s[++i] = '\0';
    }
    o += x;
  });
  if (text.empty()) return text;
  // " 's", " 'm", " 're", " 've": drop the space.
  pass(text, [](std::string& s, size_t& i, std::string& o) {
    const char x = s[i];
    if (s[i - 1] == ' ' && x == '\'' && i + 1 < s.size()) {
      const char x1 = s[i + 1];
      if (x1 == 's' || x1 == 'm') {
        o.pop_back();
      } else if (x1 != 't' && x1 != 'd' && i + 2 < s.size()) {
        const char x2 = s[i + 2];
        if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) o.pop_back();
      }
    }
    o += x;
  });
  return text;
}

}  // namespace alap
