// Tests of core/store/json: exact parse results, exact writer output and every rejection rule.
#include "core/store/json.h"

#include <gtest/gtest.h>

#include <string>

namespace json = alap::json;

namespace {

std::string parse_error(std::string_view text) {
    try {
        json::parse(text);
    } catch (const json::ParseError& e) {
        return e.what();
    }
    return "";
}

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

}  // namespace

TEST(Json, ParsesEveryKindOfValue) {
    json::Value v = json::parse(" {\"a\": [1, -2.5, 1e3, true, false, null], \"b\": \"x\", \"c\": {}, \"d\": []} ");
    ASSERT_TRUE(v.is_object());
    const json::Array& a = v.find("a")->as_array();
    ASSERT_EQ(a.size(), 6u);
    EXPECT_EQ(a[0].as_int(), 1);
    EXPECT_EQ(a[1].as_double(), -2.5);
    EXPECT_EQ(a[2].type(), json::Type::number);
    EXPECT_EQ(a[2].as_double(), 1000.0);
    EXPECT_TRUE(a[3].as_bool());
    EXPECT_FALSE(a[4].as_bool());
    EXPECT_TRUE(a[5].is_null());
    EXPECT_EQ(v.find("b")->as_string(), "x");
    EXPECT_TRUE(v.find("c")->as_object().empty());
    EXPECT_EQ(v.find("zz"), nullptr);
    EXPECT_EQ(json::parse("9223372036854775807").as_int(), INT64_MAX);
    EXPECT_EQ(json::parse("-9223372036854775808").as_int(), INT64_MIN);
    EXPECT_EQ(json::parse("9223372036854775808").type(), json::Type::number);  // beyond int64
    EXPECT_THROW(json::parse("\"s\"").as_int(), json::Error);
}

TEST(Json, DecodesEscapesIncludingSurrogatePairs) {
    EXPECT_EQ(json::parse(R"("\"\\\/\b\f\n\r\t")").as_string(), "\"\\/\b\f\n\r\t");
    EXPECT_EQ(json::parse(R"("\u0041\u00e9\u09AC")").as_string(), "A\xC3\xA9\xE0\xA6\xAC");  // A é ব
    EXPECT_EQ(json::parse(R"("\ud83d\ude00")").as_string(), "\xF0\x9F\x98\x80");             // U+1F600
    EXPECT_EQ(json::parse(R"("\u0000")").as_string(), std::string(1, '\0'));
    EXPECT_EQ(json::parse("\"বাংলা\"").as_string(), "বাংলা");
}

TEST(Json, RejectsMalformedText) {
    const char* bad[] = {
        "",           "   ",         "{",          "[1,2",        "{\"a\":1,}",   "[1,]",        "01",
        "1.",         "-",           "1e",         ".5",          "+1",           "tru",         "nul",
        "'a'",        "\"abc",       "{\"a\" 1}",  "{1:2}",       "[1 2]",        "1 2",         "{} x",
        "\"\\x\"",    "\"\\u12\"",   "\"\\u12G4\"", "\"\\ud800\"", "\"\\udc00\"",  "\"\\ud800\\u0041\"",
        "\"\\ud800x\"", "\"a\nb\"",  "NaN",        "1e999",       "{\"a\":1,\"a\":2}",
    };
    for (const char* text : bad) {
        EXPECT_THROW(json::parse(text), json::ParseError) << "accepted: " << text;
    }
    // Raw bytes that are not UTF-8: a lone continuation byte, an overlong '/', a UTF-16 surrogate.
    EXPECT_THROW(json::parse("\"\x80\""), json::ParseError);
    EXPECT_THROW(json::parse("\"\xC0\xAF\""), json::ParseError);
    EXPECT_THROW(json::parse("\"\xED\xA0\x80\""), json::ParseError);
    EXPECT_THROW(json::parse("\"\xE0\xA6\""), json::ParseError);  // truncated ব
}

TEST(Json, ErrorsNameThePlace) {
    EXPECT_EQ(parse_error("{\n  \"a\": tru\n}"), "JSON: invalid literal (expected 'true') at line 2 column 8 (byte 9)");
    EXPECT_EQ(parse_error("[1] x"), "JSON: unexpected trailing characters after the JSON value at line 1 column 5 (byte 4)");
    EXPECT_EQ(parse_error(R"("\ud800")"), "JSON: high surrogate not followed by a low surrogate at line 1 column 2 (byte 1)");
}

TEST(Json, LimitsNestingDepth) {
    EXPECT_NO_THROW(json::parse(nested_arrays(64)));
    EXPECT_THROW(json::parse(nested_arrays(65)), json::ParseError);
    EXPECT_THROW(json::parse(nested_arrays(100000)), json::ParseError);  // no stack overflow
    EXPECT_NO_THROW(json::parse(nested_arrays(3), {.max_depth = 3}));
    EXPECT_THROW(json::parse("{\"a\":{\"b\":[1]}}", {.max_depth = 2}), json::ParseError);
}

TEST(Json, WritesExactText) {
    json::Value v = json::Object{{"s", "a\"b\\c\n\x01é"}, {"i", -7}, {"d", 2.5}, {"w", 1.0},
                                 {"t", true}, {"n", nullptr}, {"a", json::Array{1, "x"}}, {"e", json::Array{}}};
    EXPECT_EQ(json::write(v),
              "{\"s\":\"a\\\"b\\\\c\\n\\u0001é\",\"i\":-7,\"d\":2.5,\"w\":1.0,\"t\":true,\"n\":null,"
              "\"a\":[1,\"x\"],\"e\":[]}");
    EXPECT_EQ(json::write(json::Object{{"a", json::Array{1, 2}}, {"b", json::Object{}}}, {.indent = 2}),
              "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}");
    EXPECT_THROW(json::write(json::Value(std::string("\xFF"))), json::Error);
    EXPECT_THROW(json::write(json::Value(1.0 / 0.0)), json::Error);
}

TEST(Json, WriteThenParseIsIdentity) {
    json::Value v = json::Object{{"emoji", "\xF0\x9F\x98\x80"}, {"bn", "কম্পিউটার"}, {"ctl", std::string("\0\x1f\x7f", 3)},
                                 {"big", INT64_MIN}, {"third", 1.0 / 3.0}, {"nest", json::Array{json::Object{{"k", json::Array{}}}}}};
    EXPECT_EQ(json::parse(json::write(v)), v);
    EXPECT_EQ(json::parse(json::write(v, {.indent = 4})), v);
}

TEST(Json, SetReplacesOrAppends) {
    json::Value v;
    v.set("a", 1);
    v.set("b", 2);
    v.set("a", "x");
    EXPECT_EQ(json::write(v), "{\"a\":\"x\",\"b\":2}");
}

TEST(Json, Utf8Validation) {
    EXPECT_TRUE(json::is_valid_utf8("আলাপ hello \xF4\x8F\xBF\xBF"));
    EXPECT_FALSE(json::is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
    EXPECT_FALSE(json::is_valid_utf8("\xE0\x80\x80"));      // overlong
    EXPECT_FALSE(json::is_valid_utf8("ab\xC3"));            // truncated
}
