// encode → decode round trip of Bengali and mixed Bengali–English text with every vocabulary in
// ../shared/fixtures that vocab_from_gguf supports (bert's WordPiece is refused, checked too).
// Also the streaming detokenizer fed the same ids one at a time. Skips when ../shared is absent.
//
// Decode rule (Tokenizer::decode, llama.cpp's): a vocab with add_space_prefix (SentencePiece:
// llama-spm, phi-3, baichuan) gets one space put in front of the text by encode, and decode
// removes exactly one leading space from the first piece, so decode(encode(x)) == x; the raw
// pieces joined are " " + x, which the test asserts as well. When the ids start with BOS, BOS is
// the first piece (empty text), so the space stays: decode(encode(x, add_special)) == " " + x, as
// llama.cpp's detokenize does (it turns remove_space off when it drops a leading BOS). BPE vocabs with clean_spaces drop a
// space written before ? ! . , and before 's 'm 're 've: the sentences here use standard
// orthography (no space before punctuation), so for them too the round trip must be exact.
// Nothing else may differ.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/gguf/gguf.h"
#include "core/text/detokenizer.h"
#include "core/text/tokenizer.h"
#include "tests/support/shared_fixtures.h"

namespace alap {
namespace {

const std::vector<std::string>& sentences() {
  static const std::vector<std::string> s = {
      "আমি বাংলায় গান গাই।",
      "আমার সোনার বাংলা, আমি তোমায় ভালোবাসি।",
      "ক্ষমা করবেন, আমি একটু দেরি করে ফেলেছি।",
      "জ্ঞানই শক্তি, আর বিজ্ঞান সেই শক্তির চাবিকাঠি।",
      "স্ত্রী ও পুরুষের সমান অধিকার রাষ্ট্রের দায়িত্ব।",
      "ব্যাকরণ বইটা কার্যালয়ে রেখে এসেছি।",          // ya-phala, reph
      "অর্থনীতির ছাত্রছাত্রীরা পরীক্ষার জন্য প্রস্তুত।",
      "সন্ধ্যায় উজ্জ্বল আলোয় পদ্মফুল ফুটেছে।",
      "বাক্‌স্বাধীনতা গণতন্ত্রের ভিত্তি।",              // explicit hasanta with ZWNJ
      "র‍্যাব সদর দপ্তরে সংবাদ সম্মেলন হয়েছে।",          // ra + ZWJ + ya-phala
      "দুঃখিত, আজ বৃষ্টির কারণে ক্লাস বন্ধ থাকবে।",
      "চাঁদের আলোয় ঊর্ধ্বমুখী ঋতুর গন্ধ।",
      "হঠাৎ করেই তিনি উৎসবের কথা মনে করলেন।",            // khanda ta
      "আজ ২১ ফেব্রুয়ারি ২০২৪, আন্তর্জাতিক মাতৃভাষা দিবস।",
      "বইটির দাম ৳৩৫০, ছাড়ে পাওয়া যাবে ৳২৯৯-তে।",
      "ফোন নম্বর: ০১৭১২-৩৪৫৬৭৮, সকাল ৯টা থেকে রাত ১০টা।",
      "তারিখ: ১৬/১২/১৯৭১ — বিজয় দিবস।",
      "০১২৩৪৫৬৭৮৯ হলো বাংলা অঙ্ক।",
      "I love বাংলা গান, especially রবীন্দ্রসংগীত.",
      "আমার laptop-এর battery শেষ, charger টা দাও তো!",
      "Meeting টা কাল সকাল 10:30-এ হবে, Zoom link পাঠিয়ে দিচ্ছি।",
      "Python-এ list comprehension খুব সহজ: [x * 2 for x in range(10)]",
      "ওর GPA 3.85, আর IELTS-এ 7.5 পেয়েছে।",
      "Download speed ৫০ Mbps, কিন্তু upload মাত্র 10 Mbps।",
      "কী খবর? সব ঠিকঠাক তো? 😊",
      "অভিনন্দন! 🎉🇧🇩 আমরা জিতেছি!!!",
      "ধন্যবাদ 🙏🏽 আবার দেখা হবে ❤️",
      "প্রথম লাইন\nদ্বিতীয় লাইন\n\nতৃতীয় অনুচ্ছেদ।",
      "\tইন্ডেন্ট করা লাইন\n    চার স্পেস দিয়ে শুরু",
      "\"উদ্ধৃতি\" আর 'একক উদ্ধৃতি' (বন্ধনী) [বর্গ] {কোঁকড়া}",
      "দাম: $১২.৫০ বা ৳১,২০০.০০; মোট = ৳১,৫০০/-",
      "Email: rahim.uddin@example.com, ওয়েবসাইট: https://example.com.bd/পাতা?id=৪২",
      "মা বলল, \"খেয়ে যা!\" — আমি বললাম, \"পরে খাব।\"",
      "শ্রী, ক্ত, ঙ্গ, ঞ্চ, ন্ত্র, ক্ষ্ম — যুক্তাক্ষরের উদাহরণ।",
      " শুরুতে একটি স্পেস, শেষেও একটি ",
      "It's a 100% বাংলা-English mix; don't worry, সব ঠিক আছে.",
  };
  return s;
}

const std::vector<std::string>& vocab_names() {
  static const std::vector<std::string> v = {"llama-spm", "phi-3",          "gemma3",       "gpt-2",  "mpt",
                                             "starcoder", "refact",         "falcon",       "deepseek-coder",
                                             "deepseek-llm", "llama3",      "qwen3",        "baichuan", "gpt-neox"};
  return v;
}

std::string pieces_joined(const Tokenizer& tok, const std::vector<int32_t>& ids) {
  std::string s;
  for (int32_t id : ids) s += tok.token_to_piece(id, false);
  return s;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, BengaliAndMixedSentencesDecodeToTheInput) {
  ALAP_SHARED_FILE_OR_SKIP(path, "fixtures/ggml-vocab-" + GetParam() + ".gguf");
  const Tokenizer tok(vocab_from_gguf(gguf::File::open(path)));
  ASSERT_GE(sentences().size(), 30u);
  std::string all;
  for (const std::string& text : sentences()) {
    all += text + "\n";
    const std::vector<int32_t> ids = tok.encode(text, /*add_special=*/false, /*parse_special=*/false);
    ASSERT_FALSE(ids.empty()) << text;
    EXPECT_EQ(tok.decode(ids, false), text) << GetParam() << ": '" << text << "'";
    const std::string raw = pieces_joined(tok, ids);
    EXPECT_EQ(raw, tok.vocab().add_space_prefix ? " " + text : text) << GetParam() << " raw pieces of '" << text << "'";

    StreamingDetokenizer detok(tok);
    std::string streamed;
    for (int32_t id : ids) streamed += detok.push(id);
    streamed += detok.flush();
    EXPECT_EQ(streamed, raw) << GetParam() << " streamed '" << text << "'";
  }
  // The whole set as one document, with BOS/EOS as the vocab adds them (dropped on decode).
  const std::vector<int32_t> ids = tok.encode(all, /*add_special=*/true, /*parse_special=*/false);
  const bool bos_first = !ids.empty() && ids.front() == tok.vocab().bos && tok.vocab().add_bos;
  EXPECT_EQ(tok.decode(ids, /*render_special=*/false), bos_first && tok.vocab().add_space_prefix ? " " + all : all)
      << GetParam();
  if (!bos_first) {
    EXPECT_FALSE(tok.vocab().add_bos) << GetParam();
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabs, RoundTrip, ::testing::ValuesIn(vocab_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

TEST(RoundTrip, WordPieceVocabIsRefused) {
  ALAP_SHARED_FILE_OR_SKIP(path, "fixtures/ggml-vocab-bert-bge.gguf");
  EXPECT_THROW(vocab_from_gguf(gguf::File::open(path)), TextError);
}

}  // namespace
}  // namespace alap
