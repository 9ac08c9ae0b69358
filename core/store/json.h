// A small JSON value, a compact/indented writer and a strict RFC 8259 parser (UTF-8 only).
// Strict means: no comments, no trailing commas, no trailing garbage, no duplicate keys, no lone
// surrogates, no invalid UTF-8, nesting depth limited. It is not a streaming or SAX parser.
//
//   alap::json::Value v = alap::json::parse(R"({"a":[1,2.5,"x\u00e9"]})");
//   const alap::json::Value* a = v.find("a");          // nullptr when absent
//   int64_t one = a->as_array()[0].as_int();            // throws json::Error on a type mismatch
//   std::string text = alap::json::write(v, {.indent = 2});
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace alap::json {

// Any misuse or malformed input: a type mismatch, an unwritable value, a parse failure.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A parse failure; offset is the byte offset in the input where it was detected.
class ParseError : public Error {
public:
    ParseError(const std::string& message, size_t offset) : Error(message), offset_(offset) {}
    size_t offset() const { return offset_; }

private:
    size_t offset_;
};

enum class Type { null, boolean, integer, number, string, array, object };
const char* type_name(Type t);

struct Member;
class Value;
using Array = std::vector<Value>;
using Object = std::vector<Member>;  // insertion order kept; keys unique when parsed

class Value {
public:
    Value();
    Value(std::nullptr_t);
    Value(bool b);
    Value(int i);
    Value(long i);
    Value(long long i);
    Value(double d);
    Value(std::string s);
    Value(std::string_view s);
    Value(const char* s);
    Value(Array a);
    Value(Object o);

    Type type() const { return static_cast<Type>(v_.index()); }
    bool is_null() const { return type() == Type::null; }
    bool is_bool() const { return type() == Type::boolean; }
    bool is_int() const { return type() == Type::integer; }
    bool is_number() const { return type() == Type::integer || type() == Type::number; }
    bool is_string() const { return type() == Type::string; }
    bool is_array() const { return type() == Type::array; }
    bool is_object() const { return type() == Type::object; }

    // Typed access; a mismatch throws Error naming the expected and the actual type.
    bool as_bool() const;
    int64_t as_int() const;    // integers only (a literal without fraction/exponent that fits int64)
    double as_double() const;  // integers or numbers
    const std::string& as_string() const;
    const Array& as_array() const;
    Array& as_array();
    const Object& as_object() const;
    Object& as_object();

    // Object lookup (nullptr when absent or when this is not an object).
    const Value* find(std::string_view key) const;
    // Object append-or-replace; turns a null into an empty object first.
    Value& set(std::string key, Value value);

    bool operator==(const Value& other) const;

private:
    std::variant<std::nullptr_t, bool, int64_t, double, std::string, Array, Object> v_;
};

struct Member {
    std::string key;
    Value value;
    bool operator==(const Member& other) const = default;
};

// Defined here, where Member is complete (clang needs every variant alternative complete).
inline Value::Value() : v_(nullptr) {}
inline Value::Value(std::nullptr_t) : v_(nullptr) {}
inline Value::Value(bool b) : v_(b) {}
inline Value::Value(int i) : v_(int64_t{i}) {}
inline Value::Value(long i) : v_(int64_t{i}) {}
inline Value::Value(long long i) : v_(int64_t{i}) {}
inline Value::Value(double d) : v_(d) {}
inline Value::Value(std::string s) : v_(std::move(s)) {}
inline Value::Value(std::string_view s) : v_(std::string(s)) {}
inline Value::Value(const char* s) : v_(std::string(s)) {}
inline Value::Value(Array a) : v_(std::move(a)) {}
inline Value::Value(Object o) : v_(std::move(o)) {}

struct ParseOptions {
    int max_depth = 64;  // arrays + objects open at once
};

// Parses exactly one JSON text (surrounding whitespace allowed). Throws ParseError with the
// line, column and byte offset of the problem.
Value parse(std::string_view text, const ParseOptions& options = {});

struct WriteOptions {
    int indent = 0;  // 0: compact, one line; n > 0: n spaces per level, members on their own lines
};

// Writes JSON text. Non-ASCII characters are written as raw UTF-8; control characters, '"' and
// '\' are escaped. Throws Error on a non-finite number or a string that is not valid UTF-8.
std::string write(const Value& value, const WriteOptions& options = {});

// Appends s as a quoted, escaped JSON string (throws Error when s is not valid UTF-8).
void append_quoted(std::string& out, std::string_view s);

// True when s is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

}  // namespace alap::json
