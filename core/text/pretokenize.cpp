// Pre-tokenizer regex lists per family (FORMATS.md §8.4), run with ICU's regex engine.
// Each piece is matched on its own (opaque region bounds), as llama.cpp matches sub-strings.
// \s is spelled \p{White_Space} because ICU's \s lacks U+000B and U+0085.
#include "core/text/pretokenize.h"

#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <array>

#include "core/text/utf8.h"

namespace alap {

namespace {

#define WS "\\p{White_Space}"
#define NWS "\\P{White_Space}"

const char* const kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" WS "\\p{L}\\p{N}]+|[" WS "]+(?!" NWS ")";

const char* const kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n]*|[" WS "]*[\\r\\n]+|[" WS "]+(?!" NWS ")|[" WS "]+";

const char* const kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n]*|[" WS "]*[\\r\\n]+|[" WS "]+(?!" NWS ")|[" WS "]+";

const char* const kCjk = "[\\x{4E00}-\\x{9FA5}\\x{800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";

// deepseek-llm's letter class, code point ranges as in FORMATS.md §8.4.
const char* const kDeepseekLetters =
    "[" WS "]?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}"
    "\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}\\x{388}-\\x{38A}"
    "\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}"
    "\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}"
    "\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}"
    "\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}"
    "\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}"
    "\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"
    "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"
    "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}"
    "\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}"
    "\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}"
    "\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}"
    "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}"
    "\\x{1E900}-\\x{1E943}]+";

std::vector<std::string> regexes_for(PreType type) {
  switch (type) {
    case PreType::llama3: return {kLlama3};
    case PreType::qwen2: return {kQwen2};
    case PreType::gpt2: return {kGpt2};
    case PreType::starcoder: return {"\\p{N}", kGpt2};
    case PreType::falcon: return {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"};
    case PreType::deepseek_coder:
      return {"[\\r\\n]", "[" WS "]?\\p{L}+", "[" WS "]?\\p{P}+", kCjk, "\\p{N}"};
    case PreType::deepseek_llm:
      return {"[\\r\\n]",
              kDeepseekLetters,
              "[" WS "]?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+",
              "[" WS "]+\\z",
              kCjk,
              "\\p{N}+"};
    case PreType::default_bpe: return {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"};
    case PreType::none: return {};
  }
  return {};
}

#undef WS
#undef NWS

}  // namespace

struct PreTokenizer::Impl {
  std::vector<std::string> sources;
  std::vector<std::unique_ptr<icu::RegexPattern>> patterns;
};

PreTokenizer::PreTokenizer(PreType type) : impl_(std::make_unique<Impl>()) {
  impl_->sources = regexes_for(type);
  for (const auto& src : impl_->sources) {
    UErrorCode status = U_ZERO_ERROR;
    UParseError perr{};
    std::unique_ptr<icu::RegexPattern> p(
        icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(src), 0, perr, status));
    if (U_FAILURE(status) || !p) {
      throw TextError("pre-tokenizer regex does not compile (" + std::string(u_errorName(status)) + " at offset " +
                      std::to_string(perr.offset) + "): " + src);
    }
    impl_->patterns.push_back(std::move(p));
  }
}

PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

const std::vector<std::string>& PreTokenizer::regexes() const { return impl_->sources; }

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
  std::vector<std::string> out;
  if (text.empty()) return out;
  icu::UnicodeString u;
  for (char32_t cp : utf8::decode_lossy(text)) u.append(static_cast<UChar32>(cp));

  // Pieces as UTF-16 [start, end) ranges of u.
  std::vector<std::pair<int32_t, int32_t>> pieces{{0, u.length()}}, next;
  for (const auto& pattern : impl_->patterns) {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> m(pattern->matcher(u, status));
    if (U_FAILURE(status)) throw TextError(std::string("pre-tokenizer: ICU matcher failed: ") + u_errorName(status));
    next.clear();
    for (auto [start, end] : pieces) {
      m->region(start, end, status);
      int32_t pos = start;
      while (m->find(status) && U_SUCCESS(status)) {
        const int32_t ms = m->start(status), me = m->end(status);
        if (me <= ms) continue;  // no pattern here matches empty; guard anyway
        if (ms > pos) next.emplace_back(pos, ms);
        next.emplace_back(ms, me);
        pos = me;
      }
      if (U_FAILURE(status)) throw TextError(std::string("pre-tokenizer: ICU regex failed: ") + u_errorName(status));
      if (pos < end) next.emplace_back(pos, end);
    }
    pieces.swap(next);
  }
  out.reserve(pieces.size());
  for (auto [start, end] : pieces) {
    std::string s;
    u.tempSubStringBetween(start, end).toUTF8String(s);
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

struct ByteMap {
  std::array<std::string, 256> to_text;
  std::array<int16_t, 0x144> from_cp{};
  ByteMap() {
    from_cp.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool same = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = same ? static_cast<char32_t>(b) : next++;
      utf8::append(to_text[static_cast<size_t>(b)], cp);
      from_cp[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap map;
  return map;
}

}  // namespace

const std::string& byte_to_unicode(uint8_t b) { return byte_map().to_text[b]; }

int unicode_to_byte(char32_t cp) { return cp < 0x144 ? byte_map().from_cp[cp] : -1; }

}  // namespace alap
