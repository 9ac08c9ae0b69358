// Jinja template values: construction, truthiness, Python-style str()/repr(), JSON and
// equality. Not the operators or filters (jinja_eval.cpp).
#include <charconv>
#include <cmath>
#include <cstdio>

#include "core/text/jinja.h"

namespace alap::jinja {

namespace {

// Python's repr(float): shortest round-trip digits, fixed for 1e-4 <= |x| < 1e16, else exponent.
std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = false;
  if (!sci.empty() && sci[0] == '-') {
    neg = true;
    sci.erase(0, 1);
  }
  size_t epos = sci.find('e');
  std::string mant = sci.substr(0, epos);
  int exp = std::stoi(sci.substr(epos + 1));
  std::string digits;
  for (char ch : mant) {
    if (ch != '.') digits += ch;
  }
  std::string out = neg ? "-" : "";
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out.append("0.");
      out.append(static_cast<size_t>(-exp - 1), '0');
      out.append(digits);
    } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
      out.append(digits);
      out.append(static_cast<size_t>(exp) + 1 - digits.size(), '0');
      out.append(".0");
    } else {
      out.append(digits, 0, static_cast<size_t>(exp) + 1);
      out.push_back('.');
      out.append(digits, static_cast<size_t>(exp) + 1, std::string::npos);
    }
    return out;
  }
  out.append(digits, 0, 1);
  if (digits.size() > 1) {
    out.push_back('.');
    out.append(digits, 1, std::string::npos);
  }
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return out + ebuf;
}

// Cyclic values (a list appended to itself) must fail, not recurse forever.
constexpr int kMaxValueDepth = 256;
thread_local int value_depth = 0;
struct DepthGuard {
  DepthGuard() {
    if (++value_depth > kMaxValueDepth) {
      --value_depth;
      throw Error("value nested too deeply (more than " + std::to_string(kMaxValueDepth) + " levels, or cyclic)", 0, 0);
    }
  }
  ~DepthGuard() { --value_depth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
};

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

void json_into(const Value& v, int indent, int level, std::string& out) {
  DepthGuard guard;
  auto newline = [&](int lvl) {
    out += '\n';
    out.append(static_cast<size_t>(indent) * static_cast<size_t>(lvl), ' ');
  };
  switch (v.kind()) {
    case Value::Kind::undefined:
    case Value::Kind::none: out += "null"; return;
    case Value::Kind::boolean: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::integer: out += std::to_string(v.as_int()); return;
    case Value::Kind::number: {
      double d = v.as_double();
      out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity") : python_float(d);
      return;
    }
    case Value::Kind::string: out += json_string(v.as_string()); return;
    case Value::Kind::callable: out += "null"; return;
    case Value::Kind::list: {
      const auto& l = v.list();
      if (l.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t i = 0; i < l.size(); ++i) {
        if (i) out += indent >= 0 ? "," : ", ";
        if (indent >= 0) newline(level + 1);
        json_into(l[i], indent, level + 1, out);
      }
      if (indent >= 0) newline(level);
      out += ']';
      return;
    }
    case Value::Kind::dict: {
      const auto& d = v.dict().items;
      if (d.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      for (size_t i = 0; i < d.size(); ++i) {
        if (i) out += indent >= 0 ? "," : ", ";
        if (indent >= 0) newline(level + 1);
        out += json_string(d[i].first);
        out += ": ";
        json_into(d[i].second, indent, level + 1, out);
      }
      if (indent >= 0) newline(level);
      out += '}';
      return;
    }
  }
}

}  // namespace

Error::Error(const std::string& message, int line, int column)
    : std::runtime_error(line > 0 ? "jinja: " + std::to_string(line) + ":" + std::to_string(column) + ": " + message
                                  : "jinja: " + message),
      message_(message),
      line_(line),
      column_(column) {}

const Value* ValueDict::find(std::string_view key) const {
  for (const auto& kv : items) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

Value* ValueDict::find(std::string_view key) {
  for (auto& kv : items) {
    if (kv.first == key) return &kv.second;
  }
  return nullptr;
}

void ValueDict::set(std::string key, Value v) {
  if (Value* slot = find(key)) {
    *slot = std::move(v);
  } else {
    items.emplace_back(std::move(key), std::move(v));
  }
}

Value Value::make_list(ValueList items) {
  Value v;
  v.kind_ = Kind::list;
  v.list_ = std::make_shared<ValueList>(std::move(items));
  return v;
}

Value Value::make_dict() {
  Value v;
  v.kind_ = Kind::dict;
  v.dict_ = std::make_shared<ValueDict>();
  return v;
}

Value Value::make_function(NativeFn fn) {
  Value v;
  v.kind_ = Kind::callable;
  v.fn_ = std::make_shared<NativeFn>(std::move(fn));
  return v;
}

const std::string& Value::as_string() const {
  static const std::string empty;
  return s_ ? *s_ : empty;
}

void Value::set(std::string key, Value v) {
  if (is_dict()) dict_->set(std::move(key), std::move(v));
}

Value Value::get(std::string_view key) const {
  if (!is_dict()) return {};
  const Value* v = dict_->find(key);
  return v ? *v : Value{};
}

void Value::push_back(Value v) {
  if (is_list()) list_->push_back(std::move(v));
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::undefined:
    case Kind::none: return false;
    case Kind::boolean:
    case Kind::integer: return i_ != 0;
    case Kind::number: return d_ != 0;
    case Kind::string: return !as_string().empty();
    case Kind::list: return !list_->empty();
    case Kind::dict: return !dict_->items.empty();
    case Kind::callable: return true;
  }
  return false;
}

std::string Value::to_repr() const {
  if (kind_ != Kind::string) return to_str();
  const std::string& s = as_string();
  char q = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, q);
  for (char ch : s) {
    if (ch == q || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (ch == '\r') {
      out += "\\r";
    } else {
      out += ch;
    }
  }
  return out + q;
}

std::string Value::to_str() const {
  switch (kind_) {
    case Kind::undefined: return "";
    case Kind::none: return "None";
    case Kind::boolean: return i_ ? "True" : "False";
    case Kind::integer: return std::to_string(i_);
    case Kind::number: return python_float(d_);
    case Kind::string: return as_string();
    case Kind::callable: return "<function>";
    case Kind::list: {
      DepthGuard guard;
      std::string out = "[";
      for (size_t i = 0; i < list_->size(); ++i) {
        if (i) out += ", ";
        out += (*list_)[i].to_repr();
      }
      return out + "]";
    }
    case Kind::dict: {
      DepthGuard guard;
      std::string out = "{";
      for (size_t i = 0; i < dict_->items.size(); ++i) {
        if (i) out += ", ";
        out += Value(dict_->items[i].first).to_repr() + ": " + dict_->items[i].second.to_repr();
      }
      return out + "}";
    }
  }
  return "";
}

std::string Value::to_json(int indent) const {
  std::string out;
  json_into(*this, indent, 0, out);
  return out;
}

bool operator==(const Value& a, const Value& b) {
  using K = Value::Kind;
  bool a_num = a.is_number() || a.is_bool();
  bool b_num = b.is_number() || b.is_bool();
  if (a_num && b_num) {
    if (a.kind_ == K::number || b.kind_ == K::number) return a.as_double() == b.as_double();
    return a.i_ == b.i_;
  }
  if (a.kind_ != b.kind_) return false;
  DepthGuard guard;
  switch (a.kind_) {
    case K::undefined:
    case K::none: return true;
    case K::string: return a.as_string() == b.as_string();
    case K::list: {
      if (a.list_ == b.list_) return true;
      if (a.list_->size() != b.list_->size()) return false;
      for (size_t i = 0; i < a.list_->size(); ++i) {
        if (!((*a.list_)[i] == (*b.list_)[i])) return false;
      }
      return true;
    }
    case K::dict: {
      if (a.dict_ == b.dict_) return true;
      if (a.dict_->items.size() != b.dict_->items.size()) return false;
      for (const auto& kv : a.dict_->items) {
        const Value* other = b.dict_->find(kv.first);
        if (!other || !(kv.second == *other)) return false;
      }
      return true;
    }
    case K::callable: return a.fn_ == b.fn_;
    default: return false;
  }
}

Value CallArgs::get(size_t pos, std::string_view name) const {
  for (const auto& kv : keyword) {
    if (kv.first == name) return kv.second;
  }
  return pos < positional.size() ? positional[pos] : Value{};
}

}  // namespace alap::jinja
