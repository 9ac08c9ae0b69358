// The JSON value, writer and strict parser declared in json.h. Not a streaming parser; the
// whole text is in memory and the recursion is bounded by ParseOptions::max_depth.
#include "core/store/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace alap::json {

const char* type_name(Type t) {
    switch (t) {
        case Type::null: return "null";
        case Type::boolean: return "boolean";
        case Type::integer: return "integer";
        case Type::number: return "number";
        case Type::string: return "string";
        case Type::array: return "array";
        case Type::object: return "object";
    }
    return "?";
}

namespace {

[[noreturn]] void type_mismatch(const char* expected, Type actual) {
    throw Error(std::string("JSON: expected ") + expected + ", got " + type_name(actual));
}

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 when malformed.
size_t utf8_sequence(std::string_view s, size_t i, uint32_t* cp_out) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    uint32_t cp;
    size_t len;
    if (c < 0x80) {
        *cp_out = c;
        return 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
        cp = c & 0x1F;
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        cp = c & 0x0F;
        len = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
        cp = c & 0x07;
        len = 4;
    } else {
        return 0;
    }
    if (i + len > s.size()) return 0;
    for (size_t k = 1; k < len; ++k) {
        if ((b(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    *cp_out = cp;
    return len;
}

void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace

bool Value::as_bool() const {
    if (!is_bool()) type_mismatch("boolean", type());
    return std::get<bool>(v_);
}
int64_t Value::as_int() const {
    if (!is_int()) type_mismatch("integer", type());
    return std::get<int64_t>(v_);
}
double Value::as_double() const {
    if (is_int()) return static_cast<double>(std::get<int64_t>(v_));
    if (type() != Type::number) type_mismatch("number", type());
    return std::get<double>(v_);
}
const std::string& Value::as_string() const {
    if (!is_string()) type_mismatch("string", type());
    return std::get<std::string>(v_);
}
const Array& Value::as_array() const {
    if (!is_array()) type_mismatch("array", type());
    return std::get<Array>(v_);
}
Array& Value::as_array() {
    if (!is_array()) type_mismatch("array", type());
    return std::get<Array>(v_);
}
const Object& Value::as_object() const {
    if (!is_object()) type_mismatch("object", type());
    return std::get<Object>(v_);
}
Object& Value::as_object() {
    if (!is_object()) type_mismatch("object", type());
    return std::get<Object>(v_);
}

const Value* Value::find(std::string_view key) const {
    if (!is_object()) return nullptr;
    for (const Member& m : std::get<Object>(v_)) {
        if (m.key == key) return &m.value;
    }
    return nullptr;
}

Value& Value::set(std::string key, Value value) {
    if (is_null()) v_ = Object{};
    Object& o = as_object();
    for (Member& m : o) {
        if (m.key == key) {
            m.value = std::move(value);
            return m.value;
        }
    }
    o.push_back(Member{std::move(key), std::move(value)});
    return o.back().value;
}

bool Value::operator==(const Value& other) const { return v_ == other.v_; }

bool is_valid_utf8(std::string_view s) {
    uint32_t cp;
    for (size_t i = 0; i < s.size();) {
        size_t n = utf8_sequence(s, i, &cp);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Writer

void append_quoted(std::string& out, std::string_view s) {
    if (!is_valid_utf8(s)) throw Error("JSON: cannot write a string that is not valid UTF-8");
    out += '"';
    for (char ch : s) {
        unsigned char c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20 || c == 0x7F) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += ch;
                }
        }
    }
    out += '"';
}

namespace {

void write_value(std::string& out, const Value& v, int indent, int level) {
    auto newline = [&](int lvl) {
        if (indent > 0) {
            out += '\n';
            out.append(static_cast<size_t>(indent) * static_cast<size_t>(lvl), ' ');
        }
    };
    switch (v.type()) {
        case Type::null: out += "null"; break;
        case Type::boolean: out += v.as_bool() ? "true" : "false"; break;
        case Type::integer: out += std::to_string(v.as_int()); break;
        case Type::number: {
            double d = v.as_double();
            if (!std::isfinite(d)) throw Error("JSON: cannot write a non-finite number");
            char buf[32];
            auto r = std::to_chars(buf, buf + sizeof buf, d);  // shortest round-trip form
            std::string_view text(buf, static_cast<size_t>(r.ptr - buf));
            out += text;
            // Keep it a number when read back, not an integer.
            if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
            break;
        }
        case Type::string: append_quoted(out, v.as_string()); break;
        case Type::array: {
            const Array& a = v.as_array();
            out += '[';
            for (size_t i = 0; i < a.size(); ++i) {
                if (i) out += ',';
                newline(level + 1);
                write_value(out, a[i], indent, level + 1);
            }
            if (!a.empty()) newline(level);
            out += ']';
            break;
        }
        case Type::object: {
            const Object& o = v.as_object();
            out += '{';
            for (size_t i = 0; i < o.size(); ++i) {
                if (i) out += ',';
                newline(level + 1);
                append_quoted(out, o[i].key);
                out += indent > 0 ? ": " : ":";
                write_value(out, o[i].value, indent, level + 1);
            }
            if (!o.empty()) newline(level);
            out += '}';
            break;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Parser

class Parser {
public:
    Parser(std::string_view text, const ParseOptions& options) : s_(text), opt_(options) {}

    Value parse_document() {
        skip_ws();
        Value v = parse_value(0);
        skip_ws();
        if (i_ != s_.size()) fail("unexpected trailing characters after the JSON value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const { fail_at(what, i_); }

    [[noreturn]] void fail_at(const std::string& what, size_t at) const {
        size_t line = 1, col = 1;
        for (size_t k = 0; k < at && k < s_.size(); ++k) {
            if (s_[k] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        throw ParseError("JSON: " + what + " at line " + std::to_string(line) + " column " +
                             std::to_string(col) + " (byte " + std::to_string(at) + ")",
                         at);
    }

    bool at_end() const { return i_ >= s_.size(); }
    char peek() const { return s_[i_]; }

    void skip_ws() {
        while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++i_;
    }

    void expect_literal(std::string_view lit) {
        if (s_.substr(i_, lit.size()) != lit) fail("invalid literal (expected '" + std::string(lit) + "')");
        i_ += lit.size();
    }

    Value parse_value(int depth) {
        if (at_end()) fail("unexpected end of input, expected a value");
        char c = peek();
        switch (c) {
            case '{': return parse_object(depth + 1);
            case '[': return parse_array(depth + 1);
            case '"': return Value(parse_string());
            case 't': expect_literal("true"); return Value(true);
            case 'f': expect_literal("false"); return Value(false);
            case 'n': expect_literal("null"); return Value(nullptr);
            default:
                if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
                fail(std::string("unexpected character '") + printable(c) + "', expected a value");
        }
    }

    static std::string printable(char c) {
        unsigned char u = static_cast<unsigned char>(c);
        if (u >= 0x20 && u < 0x7F) return std::string(1, c);
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", u);
        return buf;
    }

    void check_depth(int depth) {
        if (depth > opt_.max_depth) fail("nesting deeper than " + std::to_string(opt_.max_depth) + " levels");
    }

    Value parse_object(int depth) {
        check_depth(depth);
        ++i_;  // '{'
        Object o;
        skip_ws();
        if (!at_end() && peek() == '}') {
            ++i_;
            return Value(std::move(o));
        }
        for (;;) {
            skip_ws();
            if (at_end()) fail("unexpected end of input inside an object");
            if (peek() != '"') fail("expected a string key in an object");
            size_t key_at = i_;
            std::string key = parse_string();
            for (const Member& m : o) {
                if (m.key == key) fail_at("duplicate object key \"" + key + "\"", key_at);
            }
            skip_ws();
            if (at_end() || peek() != ':') fail("expected ':' after an object key");
            ++i_;
            skip_ws();
            Value v = parse_value(depth);
            o.push_back(Member{std::move(key), std::move(v)});
            skip_ws();
            if (at_end()) fail("unexpected end of input inside an object");
            if (peek() == ',') {
                ++i_;
                continue;
            }
            if (peek() == '}') {
                ++i_;
                return Value(std::move(o));
            }
            fail("expected ',' or '}' in an object");
        }
    }

    Value parse_array(int depth) {
        check_depth(depth);
        ++i_;  // '['
        Array a;
        skip_ws();
        if (!at_end() && peek() == ']') {
            ++i_;
            return Value(std::move(a));
        }
        for (;;) {
            skip_ws();
            a.push_back(parse_value(depth));
            skip_ws();
            if (at_end()) fail("unexpected end of input inside an array");
            if (peek() == ',') {
                ++i_;
                continue;
            }
            if (peek() == ']') {
                ++i_;
                return Value(std::move(a));
            }
            fail("expected ',' or ']' in an array");
        }
    }

    uint32_t parse_hex4() {
        if (i_ + 4 > s_.size()) fail("truncated \\u escape");
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            char c = s_[i_ + static_cast<size_t>(k)];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
            else fail("invalid hex digit in \\u escape");
        }
        i_ += 4;
        return v;
    }

    std::string parse_string() {
        ++i_;  // opening quote
        std::string out;
        for (;;) {
            if (at_end()) fail("unterminated string");
            unsigned char c = static_cast<unsigned char>(peek());
            if (c == '"') {
                ++i_;
                return out;
            }
            if (c < 0x20) fail("unescaped control character in a string");
            if (c == '\\') {
                size_t esc_at = i_;
                ++i_;
                if (at_end()) fail("unterminated escape in a string");
                char e = peek();
                ++i_;
                switch (e) {
                    case '"': out += '"'; break;
                    case '\\': out += '\\'; break;
                    case '/': out += '/'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'n': out += '\n'; break;
                    case 'r': out += '\r'; break;
                    case 't': out += '\t'; break;
                    case 'u': {
                        uint32_t cp = parse_hex4();
                        if (cp >= 0xDC00 && cp <= 0xDFFF) fail_at("lone low surrogate in \\u escape", esc_at);
                        if (cp >= 0xD800 && cp <= 0xDBFF) {
                            if (s_.substr(i_, 2) != "\\u") fail_at("high surrogate not followed by a low surrogate", esc_at);
                            i_ += 2;
                            uint32_t lo = parse_hex4();
                            if (lo < 0xDC00 || lo > 0xDFFF) fail_at("high surrogate not followed by a low surrogate", esc_at);
                            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                        }
                        append_utf8(out, cp);
                        break;
                    }
                    default: fail_at(std::string("invalid escape '\\") + printable(e) + "'", esc_at);
                }
                continue;
            }
            uint32_t cp;
            size_t n = utf8_sequence(s_, i_, &cp);
            if (n == 0) fail("invalid UTF-8 in a string");
            out.append(s_.substr(i_, n));
            i_ += n;
        }
    }

    Value parse_number() {
        size_t start = i_;
        bool integral = true;
        if (peek() == '-') ++i_;
        if (at_end()) fail("truncated number");
        if (peek() == '0') {
            ++i_;
            if (!at_end() && peek() >= '0' && peek() <= '9') fail("leading zero in a number");
        } else if (peek() >= '1' && peek() <= '9') {
            while (!at_end() && peek() >= '0' && peek() <= '9') ++i_;
        } else {
            fail("expected a digit in a number");
        }
        if (!at_end() && peek() == '.') {
            integral = false;
            ++i_;
            if (at_end() || peek() < '0' || peek() > '9') fail("expected a digit after '.' in a number");
            while (!at_end() && peek() >= '0' && peek() <= '9') ++i_;
        }
        if (!at_end() && (peek() == 'e' || peek() == 'E')) {
            integral = false;
            ++i_;
            if (!at_end() && (peek() == '+' || peek() == '-')) ++i_;
            if (at_end() || peek() < '0' || peek() > '9') fail("expected a digit in a number's exponent");
            while (!at_end() && peek() >= '0' && peek() <= '9') ++i_;
        }
        const char* first = s_.data() + start;
        const char* last = s_.data() + i_;
        if (integral) {
            int64_t iv = 0;
            auto r = std::from_chars(first, last, iv);
            if (r.ec == std::errc() && r.ptr == last) return Value(iv);
            // Out of int64 range: fall through to a double.
        }
        double d = 0;
        auto r = std::from_chars(first, last, d);
        if (r.ec != std::errc() || r.ptr != last || !std::isfinite(d)) fail_at("number out of range", start);
        return Value(d);
    }

    std::string_view s_;
    ParseOptions opt_;
    size_t i_ = 0;
};

}  // namespace

std::string write(const Value& value, const WriteOptions& options) {
    std::string out;
    write_value(out, value, options.indent, 0);
    return out;
}

Value parse(std::string_view text, const ParseOptions& options) {
    Parser p(text, options);
    return p.parse_document();
}

}  // namespace alap::json
