// UTF-8 helpers: classification of complete / incomplete / invalid sequences, lossy decoding.
#include <gtest/gtest.h>

#include "core/text/utf8.h"

namespace alap {
namespace {

TEST(Utf8, ClassifyCompleteIncompleteInvalid) {
  EXPECT_EQ(utf8::classify("a"), 1);
  EXPECT_EQ(utf8::classify("\xC3\xA9"), 2);
  EXPECT_EQ(utf8::classify("\xE0\xA6\x95"), 3);      // ক
  EXPECT_EQ(utf8::classify("\xF0\x9F\xA6\x99"), 4);  // 🦙
  EXPECT_EQ(utf8::classify("\xE0\xA6"), 0);          // may still complete
  EXPECT_EQ(utf8::classify("\xF0"), 0);
  EXPECT_EQ(utf8::classify("\x80"), -1);              // lone continuation
  EXPECT_EQ(utf8::classify("\xC0\x80"), -1);          // overlong lead
  EXPECT_EQ(utf8::classify("\xE0\x80"), -1);          // overlong second byte
  EXPECT_EQ(utf8::classify("\xED\xA0\x80"), -1);      // surrogate
  EXPECT_EQ(utf8::classify("\xF4\x90\x80\x80"), -1);  // past U+10FFFF
  EXPECT_EQ(utf8::classify("\xE0\xA6" "a"), -2);      // truncated by ASCII
}

TEST(Utf8, DecodeLossyAndValidity) {
  EXPECT_EQ(utf8::decode_lossy("a\xC3\xA9"), (std::vector<char32_t>{'a', 0xE9}));
  EXPECT_EQ(utf8::decode_lossy("\xFF" "b"), (std::vector<char32_t>{0xFFFD, 'b'}));
  EXPECT_EQ(utf8::decode_lossy("\xE0\xA6"), (std::vector<char32_t>{0xFFFD}));
  EXPECT_TRUE(utf8::is_valid("\xE0\xA6\x95\xF0\x9F\xA6\x99"));
  EXPECT_FALSE(utf8::is_valid("\xE0\xA6"));
  std::string s;
  for (char32_t cp : {char32_t{0x41}, char32_t{0x2581}, char32_t{0x1F999}, char32_t{0x7FF}}) utf8::append(s, cp);
  EXPECT_EQ(s, "A\xE2\x96\x81\xF0\x9F\xA6\x99\xDF\xBF");
  EXPECT_EQ(utf8::lead_len(0xE0), 3u);
  EXPECT_EQ(utf8::lead_len(0x80), 1u);
}

}  // namespace
}  // namespace alap
