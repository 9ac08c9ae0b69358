// A from-scratch interpreter for the Jinja subset used by chat templates shipped in GGUF files
// (FORMATS.md §8.5): values, parse, render, with hard safety limits. Not a general Jinja: no
// autoescape, no template inheritance/include/import, no user-visible Python objects.
//
// Usage:
//   auto tpl = alap::jinja::Template::parse("{% for m in messages %}{{ m.role }}{% endfor %}");
//   alap::jinja::Value ctx = alap::jinja::Value::make_dict();
//   ctx.set("messages", alap::jinja::Value::make_list());
//   std::string out = tpl.render(ctx);  // throws alap::jinja::Error with "line:col" on failure
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace alap::jinja {

// Parse or render failure. what() reads "jinja: <line>:<column>: <message>" (1-based) when the
// position is known.
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, int line, int column);
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
  int line_ = 0;
  int column_ = 0;
};

class Value;
struct CallArgs;
class Interpreter;

using ValueList = std::vector<Value>;
// Insertion-ordered string-keyed map (templates' dicts are small; lookups are linear).
struct ValueDict {
  std::vector<std::pair<std::string, Value>> items;
  bool is_namespace = false;  // made by namespace(): attributes may be assigned with set
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  void set(std::string key, Value v);
};
using NativeFn = std::function<Value(Interpreter&, CallArgs&)>;

// A dynamically typed template value. Lists, dicts and callables are shared by reference (as in
// Python); everything else is copied.
class Value {
 public:
  enum class Kind { undefined, none, boolean, integer, number, string, list, dict, callable };

  Value() = default;  // undefined
  Value(std::nullptr_t) : kind_(Kind::none) {}
  Value(bool b) : kind_(Kind::boolean), i_(b ? 1 : 0) {}
  Value(int v) : kind_(Kind::integer), i_(v) {}
  Value(int64_t v) : kind_(Kind::integer), i_(v) {}
  Value(double v) : kind_(Kind::number), d_(v) {}
  Value(std::string s) : kind_(Kind::string), s_(std::make_shared<const std::string>(std::move(s))) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(std::string_view s) : Value(std::string(s)) {}

  static Value make_list(ValueList items = {});
  static Value make_dict();
  static Value make_function(NativeFn fn);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::undefined; }
  bool is_none() const { return kind_ == Kind::none; }
  bool is_bool() const { return kind_ == Kind::boolean; }
  bool is_int() const { return kind_ == Kind::integer; }
  bool is_number() const { return kind_ == Kind::integer || kind_ == Kind::number; }
  bool is_string() const { return kind_ == Kind::string; }
  bool is_list() const { return kind_ == Kind::list; }
  bool is_dict() const { return kind_ == Kind::dict; }
  bool is_callable() const { return kind_ == Kind::callable; }

  static int64_t double_to_int(double d) {
    if (!(d == d)) return 0;
    if (d >= 9223372036854775807.0) return INT64_MAX;
    if (d <= -9223372036854775808.0) return INT64_MIN;
    return static_cast<int64_t>(d);
  }
  bool as_bool() const { return i_ != 0; }
  // A float converts toward zero, saturating at the int64 range (NaN gives 0), so no input is undefined.
  int64_t as_int() const { return kind_ == Kind::number ? double_to_int(d_) : i_; }
  double as_double() const { return kind_ == Kind::number ? d_ : static_cast<double>(i_); }
  const std::string& as_string() const;  // only for strings
  ValueList& list() const { return *list_; }
  ValueDict& dict() const { return *dict_; }
  const NativeFn& function() const { return *fn_; }

  // Dict helpers (no-ops / undefined on non-dicts).
  void set(std::string key, Value v);
  Value get(std::string_view key) const;
  // List helper.
  void push_back(Value v);

  bool truthy() const;
  // Python's str(): what {{ }} prints (undefined → "", none → "None", True/False, 1.0, ['a']).
  std::string to_str() const;
  // Python's repr() for strings inside containers.
  std::string to_repr() const;
  // json.dumps(ensure_ascii=False, sort_keys=False); indent < 0 means none.
  std::string to_json(int indent = -1) const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  Kind kind_ = Kind::undefined;
  int64_t i_ = 0;
  double d_ = 0;
  std::shared_ptr<const std::string> s_;
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  std::shared_ptr<NativeFn> fn_;
};

// Positional and keyword arguments of a call.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  // The argument named `name` or at position `pos` (if given positionally), else undefined.
  Value get(size_t pos, std::string_view name) const;
};

// Hard limits: hostile templates come inside downloaded files.
struct Limits {
  size_t max_output_bytes = 16u << 20;      // rendered text
  size_t max_string_bytes = 16u << 20;      // any single string value
  uint64_t max_alloc_bytes = 512ull << 20;  // bytes of all strings built during one render
  uint64_t max_steps = 2'000'000;           // loop iterations + macro/filter calls + statements
  int max_call_depth = 64;                  // nested macro calls
  int max_nesting = 200;                    // parser nesting of blocks and expressions
  size_t max_source_bytes = 1u << 20;       // template text
};

struct Options {
  bool trim_blocks = true;    // HF transformers renders with trim_blocks=True
  bool lstrip_blocks = true;  // and lstrip_blocks=True
  Limits limits;
};

struct Node;  // AST, defined in jinja_ast.h

class Template {
 public:
  // Throws Error (with line/column) on syntax errors or when a limit is exceeded.
  static Template parse(std::string_view source, const Options& options = {});
  // `context` is a dict of global variables. Throws Error on runtime errors (including
  // raise_exception() from the template) and when a limit is exceeded.
  std::string render(const Value& context) const;

  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  Template(const Template&);
  Template& operator=(const Template&);
  ~Template();

 private:
  Template();
  std::shared_ptr<const Node> root_;
  Options options_;
};

}  // namespace alap::jinja
