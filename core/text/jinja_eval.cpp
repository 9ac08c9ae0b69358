// Jinja evaluator: walks the syntax tree (jinja_ast.h) against a context, with Python-like
// operators, the filters/tests/methods chat templates use, and hard limits on work, depth and
// output. Not the parser (jinja_parse.cpp) nor value formatting (jinja_value.cpp).
#include <algorithm>
#include <cmath>
#include <ctime>
#include <unordered_set>
#include <vector>

#include "core/text/jinja_ast.h"

namespace alap::jinja {

namespace {

constexpr const char* kSpaces = " \t\n\r\f\v";

[[noreturn]] void fail(const std::string& msg) { throw Error(msg, 0, 0); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

const char* kind_name(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::undefined: return "undefined";
    case Value::Kind::none: return "none";
    case Value::Kind::boolean: return "boolean";
    case Value::Kind::integer: return "integer";
    case Value::Kind::number: return "float";
    case Value::Kind::string: return "string";
    case Value::Kind::list: return "list";
    case Value::Kind::dict: return "dict";
    case Value::Kind::callable: return "function";
  }
  return "?";
}

// Byte offsets of each UTF-8 code point of s, plus s.size() at the end.
std::vector<size_t> code_points(const std::string& s) {
  std::vector<size_t> offs;
  offs.reserve(s.size() + 1);
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) offs.push_back(i);
  }
  offs.push_back(s.size());
  return offs;
}

size_t string_length(const std::string& s) { return code_points(s).size() - 1; }

std::string strip_chars(const std::string& s, const Value& chars, bool left, bool right) {
  std::string set = chars.is_string() ? chars.as_string() : std::string(kSpaces);
  size_t b = 0, e = s.size();
  if (left) {
    while (b < e && set.find(s[b]) != std::string::npos) ++b;
  }
  if (right) {
    while (e > b && set.find(s[e - 1]) != std::string::npos) --e;
  }
  return s.substr(b, e - b);
}

std::string ascii_upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
  }
  return s;
}

std::string ascii_lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return s;
}

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (static_cast<unsigned char>(c) >= 0x80); }

std::string title_case(const std::string& s) {
  std::string out = s;
  bool prev_alpha = false;
  for (char& c : out) {
    if (is_alpha(c)) {
      c = prev_alpha ? ascii_lower(std::string(1, c))[0] : ascii_upper(std::string(1, c))[0];
      prev_alpha = true;
    } else {
      prev_alpha = false;
    }
  }
  return out;
}

// Integer arithmetic as Python's, but within int64: a result outside it is a template error, never
// undefined behaviour (Python would grow a big integer; no chat template needs one).
[[noreturn]] void overflow(std::string_view op) { fail("integer overflow in '" + std::string(op) + "'"); }
int64_t add_i(int64_t a, int64_t b, std::string_view op = "+") {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) overflow(op);
  return r;
}
int64_t sub_i(int64_t a, int64_t b, std::string_view op = "-") {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) overflow(op);
  return r;
}
int64_t mul_i(int64_t a, int64_t b, std::string_view op = "*") {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) overflow(op);
  return r;
}
// A run of decimal digits as an index; one too long for int64 is INT64_MAX (out of range for any
// sequence), never an exception from std::stoll.
int64_t digits_to_index(const std::string& digits) {
  int64_t v = 0;
  for (char c : digits) {
    if (v > (INT64_MAX - 9) / 10) return INT64_MAX;
    v = v * 10 + (c - '0');
  }
  return v;
}

// base ** e for e >= 0, by squaring.
int64_t pow_i(int64_t base, int64_t e) {
  if (base == 0) return e == 0 ? 1 : 0;
  if (base == 1) return 1;
  if (base == -1) return (e % 2 == 0) ? 1 : -1;
  int64_t r = 1;
  while (true) {
    if (e & 1) r = mul_i(r, base, "**");
    e >>= 1;
    if (e == 0) return r;
    base = mul_i(base, base, "**");
  }
}

// Python slice bounds for a sequence of length n.
std::vector<int64_t> slice_indices(int64_t n, const Value& start, const Value& stop, const Value& step_v) {
  int64_t step = step_v.is_undefined() || step_v.is_none() ? 1 : step_v.as_int();
  if (step == 0) fail("slice step cannot be zero");
  auto clamp = [&](const Value& v, int64_t def) -> int64_t {
    if (v.is_undefined() || v.is_none()) return def;
    int64_t i = v.as_int();
    if (i < 0) i += n;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  int64_t b = clamp(start, step > 0 ? 0 : n - 1);
  int64_t e = clamp(stop, step > 0 ? n : -1);
  std::vector<int64_t> idx;
  // b and e lie in [-1, n], so stepping past them can only overflow for steps near the int64 limits.
  if (step > 0) {
    for (int64_t i = b; i < e; i = (i > INT64_MAX - step) ? e : i + step) idx.push_back(i);
  } else {
    for (int64_t i = b; i > e; i = (i < INT64_MIN - step) ? e : i + step) idx.push_back(i);
  }
  return idx;
}

int compare_values(const Value& a, const Value& b, const char* op) {
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
    double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list()) {
    const auto &x = a.list(), &y = b.list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      int c = compare_values(x[i], y[i], op);
      if (c) return c;
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  fail(std::string("cannot compare ") + kind_name(a) + " " + op + " " + kind_name(b));
}

}  // namespace

class Interpreter {
 public:
  Interpreter(const Options& opt, const Value& context) : opt_(opt) {
    globals_ = Value::make_dict();
    install_globals();
    auto root = std::make_shared<ValueDict>();
    if (context.is_dict()) {
      for (const auto& kv : context.dict().items) root->set(kv.first, kv.second);
    }
    scopes_.push_back(std::move(root));
  }

  ~Interpreter() { break_cycles(); }

  std::string run(const Node& root) {
    exec_body(root.body);
    return std::move(out_);
  }

  // ---- limits ----
  void step() {
    if (++steps_ > opt_.limits.max_steps) {
      fail("template exceeded " + std::to_string(opt_.limits.max_steps) + " steps (loop iterations and calls)");
    }
  }
  Value make_string(std::string s) {
    if (s.size() > opt_.limits.max_string_bytes) {
      fail("string of " + std::to_string(s.size()) + " bytes exceeds the limit of " +
           std::to_string(opt_.limits.max_string_bytes));
    }
    alloc_ += s.size();
    if (alloc_ > opt_.limits.max_alloc_bytes) {
      fail("template built more than " + std::to_string(opt_.limits.max_alloc_bytes) + " bytes of strings");
    }
    return Value(std::move(s));
  }
  void check_size(uint64_t bytes) {
    if (bytes > opt_.limits.max_string_bytes) {
      fail("value of " + std::to_string(bytes) + " bytes exceeds the limit of " +
           std::to_string(opt_.limits.max_string_bytes));
    }
  }

 private:
  // Containers the template changed after creating them (list.append/extend, namespace
  // attributes). Only these can close a reference cycle ({% set _ = l.append(l) %}), which
  // shared ownership alone would never free; break_cycles() empties each one that reaches
  // itself when the render ends, successfully or not.
  std::vector<Value> mutated_;

  static const void* container_id(const Value& v) {
    if (v.is_list()) return &v.list();
    if (v.is_dict()) return &v.dict();
    return nullptr;
  }

  static void push_children(const Value& v, std::vector<Value>& stack) {
    if (v.is_list()) {
      for (const Value& x : v.list()) stack.push_back(x);
    } else if (v.is_dict()) {
      for (const auto& kv : v.dict().items) stack.push_back(kv.second);
    }
  }

  static bool reaches_itself(const Value& start) {
    const void* target = container_id(start);
    std::vector<Value> stack;
    std::unordered_set<const void*> seen;
    push_children(start, stack);
    while (!stack.empty()) {
      Value v = std::move(stack.back());
      stack.pop_back();
      const void* id = container_id(v);
      if (id == nullptr) continue;
      if (id == target) return true;
      if (seen.insert(id).second) push_children(v, stack);
    }
    return false;
  }

  void break_cycles() {
    for (const Value& c : mutated_) {
      if (!reaches_itself(c)) continue;
      if (c.is_list()) c.list().clear();
      if (c.is_dict()) c.dict().items.clear();
    }
    mutated_.clear();
  }

  enum class Flow { normal, break_, continue_ };
  using Scope = std::shared_ptr<ValueDict>;

  // ---- scopes ----
  Value lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (const Value* v = (*it)->find(name)) return *v;
    }
    return globals_.get(name);
  }
  Value* lookup_slot(const std::string& name) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (Value* v = (*it)->find(name)) return v;
    }
    return nullptr;
  }
  void assign(const std::string& name, Value v) { scopes_.back()->set(name, std::move(v)); }

  // ---- output ----
  void emit(const std::string& s) {
    if (out_.size() + s.size() > opt_.limits.max_output_bytes) {
      fail("rendered output exceeds the limit of " + std::to_string(opt_.limits.max_output_bytes) + " bytes");
    }
    out_ += s;
  }

  // ---- statements ----
  Flow exec_body(const Body& body) {
    for (const auto& n : body) {
      Flow f = exec(*n);
      if (f != Flow::normal) return f;
    }
    return Flow::normal;
  }

  Flow exec(const Node& n) {
    try {
      return exec_inner(n);
    } catch (const Error& e) {
      if (e.line() == 0) throw Error(e.message(), n.line, n.column);
      throw;
    }
  }

  Flow exec_inner(const Node& n) {
    step();
    switch (n.type) {
      case Node::Type::root: return exec_body(n.body);
      case Node::Type::text: emit(n.text); return Flow::normal;
      case Node::Type::output: emit(eval(*n.expr).to_str()); return Flow::normal;
      case Node::Type::if_:
        for (size_t i = 0; i < n.conds.size(); ++i) {
          if (eval(*n.conds[i]).truthy()) return exec_body(n.bodies[i]);
        }
        return exec_body(n.else_body);
      case Node::Type::for_: return exec_for(n);
      case Node::Type::set: {
        Value v = eval(*n.expr);
        if (n.attr_target) {
          Value ns = lookup(n.targets[0]);
          if (!ns.is_dict() || !ns.dict().is_namespace) {
            fail("cannot assign attribute '" + n.targets[1] + "' of '" + n.targets[0] + "': not a namespace()");
          }
          ns.dict().set(n.targets[1], std::move(v));
          mutated_.push_back(ns);
        } else if (n.targets.size() == 1) {
          assign(n.targets[0], std::move(v));
        } else {
          unpack(n.targets, v);
        }
        return Flow::normal;
      }
      case Node::Type::set_block: {
        std::string saved = std::move(out_);
        out_.clear();
        try {
          exec_body(n.body);
        } catch (...) {
          out_ = std::move(saved);
          throw;
        }
        std::string captured = std::move(out_);
        out_ = std::move(saved);
        assign(n.targets[0], make_string(std::move(captured)));
        return Flow::normal;
      }
      case Node::Type::macro: assign(n.name, make_macro(n)); return Flow::normal;
      case Node::Type::break_: return Flow::break_;
      case Node::Type::continue_: return Flow::continue_;
    }
    return Flow::normal;
  }

  void unpack(const std::vector<std::string>& targets, const Value& v) {
    if (!v.is_list() || v.list().size() != targets.size()) {
      fail("cannot unpack " + std::string(kind_name(v)) + " into " + std::to_string(targets.size()) + " names");
    }
    for (size_t i = 0; i < targets.size(); ++i) assign(targets[i], v.list()[i]);
  }

  ValueList iterate(const Value& v) {
    switch (v.kind()) {
      case Value::Kind::undefined:
      case Value::Kind::none: return {};
      case Value::Kind::list: return v.list();
      case Value::Kind::dict: {
        ValueList keys;
        for (const auto& kv : v.dict().items) keys.emplace_back(kv.first);
        return keys;
      }
      case Value::Kind::string: {
        const std::string& s = v.as_string();
        auto offs = code_points(s);
        ValueList chars;
        for (size_t i = 0; i + 1 < offs.size(); ++i) chars.emplace_back(s.substr(offs[i], offs[i + 1] - offs[i]));
        return chars;
      }
      default: fail(std::string("cannot iterate over ") + kind_name(v));
    }
  }

  Flow exec_for(const Node& n) {
    ValueList all = iterate(eval(*n.expr));
    scopes_.push_back(std::make_shared<ValueDict>());
    struct Pop {
      std::vector<Scope>& s;
      ~Pop() { s.pop_back(); }
    } pop{scopes_};
    ValueList items;
    if (n.cond) {
      for (auto& item : all) {
        step();
        bind_targets(n.targets, item);
        if (eval(*n.cond).truthy()) items.push_back(std::move(item));
      }
    } else {
      items = std::move(all);
    }
    if (items.empty()) return exec_body(n.else_body);
    const auto len = static_cast<int64_t>(items.size());
    Value loop = Value::make_dict();
    for (int64_t i = 0; i < len; ++i) {
      step();
      ValueDict& d = loop.dict();
      d.items.clear();
      d.set("index", Value(i + 1));
      d.set("index0", Value(i));
      d.set("revindex", Value(len - i));
      d.set("revindex0", Value(len - i - 1));
      d.set("first", Value(i == 0));
      d.set("last", Value(i == len - 1));
      d.set("length", Value(len));
      d.set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value());
      d.set("nextitem", i + 1 < len ? items[static_cast<size_t>(i + 1)] : Value());
      assign("loop", loop);
      bind_targets(n.targets, items[static_cast<size_t>(i)]);
      if (exec_body(n.body) == Flow::break_) break;
    }
    return Flow::normal;
  }

  void bind_targets(const std::vector<std::string>& targets, const Value& item) {
    if (targets.size() == 1) {
      assign(targets[0], item);
    } else {
      unpack(targets, item);
    }
  }

  Value make_macro(const Node& n) {
    const Node* node = &n;
    return Value::make_function([node](Interpreter& in, CallArgs& args) { return in.call_macro(*node, args); });
  }

 public:
  Value call_macro(const Node& n, CallArgs& args) {
    if (call_depth_ >= opt_.limits.max_call_depth) {
      fail("macro '" + n.name + "' nested deeper than " + std::to_string(opt_.limits.max_call_depth) + " calls");
    }
    if (args.positional.size() > n.params.size()) {
      fail("macro '" + n.name + "' takes " + std::to_string(n.params.size()) + " arguments, got " +
           std::to_string(args.positional.size()));
    }
    auto frame = std::make_shared<ValueDict>();
    std::vector<Scope> saved = {scopes_.front(), frame};
    std::swap(saved, scopes_);
    ++call_depth_;
    std::string saved_out = std::move(out_);
    out_.clear();
    struct Restore {
      Interpreter& in;
      std::vector<Scope>& saved;
      std::string& saved_out;
      ~Restore() {
        std::swap(saved, in.scopes_);
        --in.call_depth_;
        std::swap(in.out_, saved_out);
      }
    } restore{*this, saved, saved_out};
    for (size_t i = 0; i < n.params.size(); ++i) {
      Value v = args.get(i, n.params[i]);
      if (v.is_undefined() && n.defaults[i]) v = eval(*n.defaults[i]);
      frame->set(n.params[i], std::move(v));
    }
    exec_body(n.body);
    return make_string(std::string(out_));
  }

 private:
  // ---- expressions ----
  Value eval(const Expr& e) {
    try {
      return eval_inner(e);
    } catch (const Error& err) {
      if (err.line() == 0) throw Error(err.message(), e.line, e.column);
      throw;
    }
  }

  Value eval_inner(const Expr& e) {
    switch (e.type) {
      case Expr::Type::literal: return e.value;
      case Expr::Type::name: return lookup(e.name);
      case Expr::Type::getattr: return get_attr(eval(*e.a), e.name);
      case Expr::Type::getitem: return get_item(eval(*e.a), eval(*e.b));
      case Expr::Type::slice: {
        Value obj = eval(*e.a);
        Value b = e.b ? eval(*e.b) : Value(), c = e.c ? eval(*e.c) : Value(), d = e.d ? eval(*e.d) : Value();
        return slice(obj, b, c, d);
      }
      case Expr::Type::call: {
        Value callee = eval(*e.a);
        CallArgs args = eval_args(e);
        if (!callee.is_callable()) {
          std::string what = e.a->type == Expr::Type::name ? "'" + e.a->name + "'"
                             : e.a->type == Expr::Type::getattr ? "'" + e.a->name + "'"
                                                                : "value";
          fail(what + " is not callable (it is " + kind_name(callee) + ")");
        }
        step();
        return callee.function()(*this, args);
      }
      case Expr::Type::filter: {
        Value input = eval(*e.a);
        CallArgs args = eval_args(e);
        step();
        return apply_filter(e.name, input, args);
      }
      case Expr::Type::test: {
        Value input = eval(*e.a);
        CallArgs args = eval_args(e);
        bool r = apply_test(e.name, input, args);
        return Value(e.negated ? !r : r);
      }
      case Expr::Type::unary: {
        Value v = eval(*e.a);
        if (e.name == "not") return Value(!v.truthy());
        if (v.is_int() || v.is_bool()) return Value(e.name == "-" ? sub_i(0, v.as_int(), "-") : v.as_int());
        if (v.is_number()) return Value(e.name == "-" ? -v.as_double() : v.as_double());
        fail("bad operand for unary " + e.name + ": " + kind_name(v));
      }
      case Expr::Type::binary: return binary(e.name, eval(*e.a), eval(*e.b));
      case Expr::Type::logic_and: {
        Value a = eval(*e.a);
        return a.truthy() ? eval(*e.b) : a;
      }
      case Expr::Type::logic_or: {
        Value a = eval(*e.a);
        return a.truthy() ? a : eval(*e.b);
      }
      case Expr::Type::cond:
        if (eval(*e.b).truthy()) return eval(*e.a);
        return e.c ? eval(*e.c) : Value();
      case Expr::Type::list:
      case Expr::Type::tuple: {
        ValueList items;
        for (const auto& it : e.items) items.push_back(eval(*it));
        return Value::make_list(std::move(items));
      }
      case Expr::Type::dict: {
        Value d = Value::make_dict();
        for (size_t i = 0; i < e.keys.size(); ++i) {
          Value k = eval(*e.keys[i]);
          d.set(k.is_string() ? k.as_string() : k.to_str(), eval(*e.items[i]));
        }
        return d;
      }
    }
    return {};
  }

  CallArgs eval_args(const Expr& e) {
    CallArgs args;
    for (const auto& it : e.items) args.positional.push_back(eval(*it));
    for (const auto& kv : e.kwargs) args.keyword.emplace_back(kv.first, eval(*kv.second));
    return args;
  }

  Value get_attr(const Value& obj, const std::string& name) {
    if (obj.is_dict()) {
      if (!obj.dict().is_namespace && (name == "items" || name == "keys" || name == "values" || name == "get")) {
        return bound_method(obj, name);
      }
      return obj.get(name);
    }
    if (obj.is_string() || obj.is_list()) return bound_method(obj, name);
    return {};  // undefined (and attributes of undefined) are undefined
  }

  Value bound_method(const Value& obj, const std::string& name) {
    return Value::make_function(
        [obj, name](Interpreter& in, CallArgs& args) { return in.call_method(obj, name, args); });
  }

  Value get_item(const Value& obj, const Value& key) {
    if (obj.is_dict()) {
      if (key.is_string()) return obj.get(key.as_string());
      return obj.get(key.to_str());
    }
    if (obj.is_list() || obj.is_string()) {
      if (!key.is_int() && !key.is_bool()) {
        if (key.is_string() && obj.is_list()) return {};
        if (key.is_string()) return get_attr(obj, key.as_string());
        fail(std::string("cannot index ") + kind_name(obj) + " with " + kind_name(key));
      }
      int64_t i = key.as_int();
      if (obj.is_list()) {
        auto n = static_cast<int64_t>(obj.list().size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) return {};
        return obj.list()[static_cast<size_t>(i)];
      }
      const std::string& s = obj.as_string();
      auto offs = code_points(s);
      auto n = static_cast<int64_t>(offs.size()) - 1;
      if (i < 0) i += n;
      if (i < 0 || i >= n) return {};
      auto u = static_cast<size_t>(i);
      return Value(s.substr(offs[u], offs[u + 1] - offs[u]));
    }
    return {};
  }

  Value slice(const Value& obj, const Value& b, const Value& c, const Value& d) {
    if (obj.is_list()) {
      ValueList out;
      for (int64_t i : slice_indices(static_cast<int64_t>(obj.list().size()), b, c, d)) {
        out.push_back(obj.list()[static_cast<size_t>(i)]);
      }
      return Value::make_list(std::move(out));
    }
    if (obj.is_string()) {
      const std::string& s = obj.as_string();
      auto offs = code_points(s);
      std::string out;
      for (int64_t i : slice_indices(static_cast<int64_t>(offs.size()) - 1, b, c, d)) {
        auto u = static_cast<size_t>(i);
        out.append(s, offs[u], offs[u + 1] - offs[u]);
      }
      return Value(std::move(out));
    }
    if (obj.is_undefined()) return {};
    fail(std::string("cannot slice ") + kind_name(obj));
  }

  Value binary(const std::string& op, const Value& a, const Value& b) {
    if (op == "==") return Value(a == b);
    if (op == "!=") return Value(!(a == b));
    if (op == "<") return Value(compare_values(a, b, "<") < 0);
    if (op == ">") return Value(compare_values(a, b, ">") > 0);
    if (op == "<=") return Value(compare_values(a, b, "<=") <= 0);
    if (op == ">=") return Value(compare_values(a, b, ">=") >= 0);
    if (op == "in") return Value(contains(b, a));
    if (op == "not in") return Value(!contains(b, a));
    if (op == "~") {
      std::string s = a.to_str();
      std::string t = b.to_str();
      check_size(s.size() + t.size());
      return make_string(s + t);
    }
    if (a.is_undefined() || b.is_undefined()) fail("undefined value used with operator '" + op + "'");
    bool nums = (a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool());
    bool ints = nums && a.kind() != Value::Kind::number && b.kind() != Value::Kind::number;
    if (op == "+") {
      if (ints) return Value(add_i(a.as_int(), b.as_int()));
      if (nums) return Value(a.as_double() + b.as_double());
      if (a.is_string() && b.is_string()) {
        check_size(a.as_string().size() + b.as_string().size());
        return make_string(a.as_string() + b.as_string());
      }
      if (a.is_list() && b.is_list()) {
        ValueList out = a.list();
        out.insert(out.end(), b.list().begin(), b.list().end());
        return Value::make_list(std::move(out));
      }
    } else if (op == "-") {
      if (ints) return Value(sub_i(a.as_int(), b.as_int()));
      if (nums) return Value(a.as_double() - b.as_double());
    } else if (op == "*") {
      if (ints) return Value(mul_i(a.as_int(), b.as_int()));
      if (nums) return Value(a.as_double() * b.as_double());
      const Value& seq = (a.is_string() || a.is_list()) ? a : b;
      const Value& count = (a.is_string() || a.is_list()) ? b : a;
      if ((seq.is_string() || seq.is_list()) && (count.is_int() || count.is_bool())) {
        // Counts are capped before multiplying, so the size check cannot be fooled by a wrapped product.
        // An empty sequence repeated any number of times is empty: no loop over the count.
        int64_t k = std::clamp<int64_t>(count.as_int(), 0, int64_t{1} << 32);
        if (seq.is_string() ? seq.as_string().empty() : seq.list().empty()) k = 0;
        if (seq.is_string()) {
          check_size(static_cast<uint64_t>(k) * seq.as_string().size());
          std::string out;
          for (int64_t i = 0; i < k; ++i) out += seq.as_string();
          return make_string(std::move(out));
        }
        uint64_t total = static_cast<uint64_t>(k) * seq.list().size();
        if (total > opt_.limits.max_steps) fail("list repetition of " + std::to_string(total) + " items is too large");
        ValueList out;
        for (int64_t i = 0; i < k; ++i) out.insert(out.end(), seq.list().begin(), seq.list().end());
        return Value::make_list(std::move(out));
      }
    } else if (op == "/") {
      if (nums) {
        if (b.as_double() == 0) fail("division by zero");
        return Value(a.as_double() / b.as_double());
      }
    } else if (op == "//" || op == "%") {
      if (nums && b.as_double() == 0) fail(op == "%" ? "modulo by zero" : "division by zero");
      if (ints) {
        int64_t x = a.as_int(), y = b.as_int();
        if (y == -1) return Value(op == "//" ? sub_i(0, x, "//") : int64_t{0});  // INT64_MIN / -1 overflows
        int64_t q = x / y, r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) {
          --q;
          r += y;
        }
        return Value(op == "//" ? q : r);
      }
      if (nums) {
        double x = a.as_double(), y = b.as_double();
        double q = std::floor(x / y);
        return Value(op == "//" ? q : x - q * y);
      }
    } else if (op == "**") {
      if (ints && b.as_int() >= 0) {
        return Value(pow_i(a.as_int(), b.as_int()));
      }
      if (nums) return Value(std::pow(a.as_double(), b.as_double()));
    }
    fail("unsupported operand types for '" + op + "': " + kind_name(a) + " and " + kind_name(b));
  }

  bool contains(const Value& container, const Value& item) {
    if (container.is_string()) {
      if (!item.is_string()) fail(std::string("'in <string>' needs a string on the left, not ") + kind_name(item));
      return container.as_string().find(item.as_string()) != std::string::npos;
    }
    if (container.is_list()) {
      for (const auto& v : container.list()) {
        if (v == item) return true;
      }
      return false;
    }
    if (container.is_dict()) return item.is_string() && container.dict().find(item.as_string()) != nullptr;
    if (container.is_undefined() || container.is_none()) return false;
    fail(std::string("'in' needs a string, list or dict on the right, not ") + kind_name(container));
  }

 public:
  // ---- methods of strings, lists and dicts ----
  Value call_method(const Value& obj, const std::string& name, CallArgs& args) {
    if (obj.is_string()) {
      const std::string& s = obj.as_string();
      if (name == "strip") return Value(strip_chars(s, args.get(0, "chars"), true, true));
      if (name == "lstrip") return Value(strip_chars(s, args.get(0, "chars"), true, false));
      if (name == "rstrip") return Value(strip_chars(s, args.get(0, "chars"), false, true));
      if (name == "upper") return Value(ascii_upper(s));
      if (name == "lower") return Value(ascii_lower(s));
      if (name == "title") return Value(title_case(s));
      if (name == "capitalize") return Value(capitalize(s));
      if (name == "startswith" || name == "endswith") {
        Value p = args.get(0, "prefix");
        ValueList options = p.is_list() ? p.list() : ValueList{p};
        for (const auto& o : options) {
          if (!o.is_string()) fail(name + "() needs a string argument");
          const std::string& t = o.as_string();
          bool hit = name == "startswith" ? s.compare(0, t.size(), t) == 0
                                          : s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
          if (hit) return Value(true);
        }
        return Value(false);
      }
      if (name == "split") return split(s, args.get(0, "sep"), args.get(1, "maxsplit"));
      if (name == "splitlines") {
        ValueList out;
        size_t b = 0;
        while (b < s.size()) {
          size_t e = s.find('\n', b);
          if (e == std::string::npos) e = s.size();
          std::string line = s.substr(b, e - b);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          out.emplace_back(std::move(line));
          b = e + 1;
        }
        return Value::make_list(std::move(out));
      }
      if (name == "replace") return replace(s, args.get(0, "old"), args.get(1, "new"), args.get(2, "count"));
      if (name == "find") {
        Value t = args.get(0, "sub");
        if (!t.is_string()) fail("find() needs a string argument");
        size_t p = s.find(t.as_string());
        return Value(p == std::string::npos ? int64_t{-1} : static_cast<int64_t>(string_length(s.substr(0, p))));
      }
      if (name == "count") {
        Value t = args.get(0, "sub");
        if (!t.is_string() || t.as_string().empty()) fail("count() needs a non-empty string argument");
        int64_t c = 0;
        for (size_t p = s.find(t.as_string()); p != std::string::npos; p = s.find(t.as_string(), p + t.as_string().size())) ++c;
        return Value(c);
      }
      if (name == "join") return join(args.get(0, "iterable"), s, Value());
      if (name == "isdigit") {
        return Value(!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }));
      }
      if (name == "format") return format(s, args);
    } else if (obj.is_list()) {
      if (name == "append") {
        step();
        obj.list().push_back(args.get(0, "x"));
        mutated_.push_back(obj);
        return Value(nullptr);
      }
      if (name == "extend") {
        for (const auto& v : iterate(args.get(0, "iterable"))) {
          step();
          obj.list().push_back(v);
        }
        mutated_.push_back(obj);
        return Value(nullptr);
      }
      if (name == "pop") {
        auto& l = obj.list();
        if (l.empty()) fail("pop from empty list");
        Value idx = args.get(0, "index");
        int64_t i = idx.is_undefined() ? static_cast<int64_t>(l.size()) - 1 : idx.as_int();
        if (i < 0) i += static_cast<int64_t>(l.size());
        if (i < 0 || i >= static_cast<int64_t>(l.size())) fail("pop index out of range");
        Value v = l[static_cast<size_t>(i)];
        l.erase(l.begin() + i);
        return v;
      }
      if (name == "index") {
        Value x = args.get(0, "x");
        for (size_t i = 0; i < obj.list().size(); ++i) {
          if (obj.list()[i] == x) return Value(static_cast<int64_t>(i));
        }
        fail("value not in list");
      }
    } else if (obj.is_dict()) {
      if (name == "get") {
        Value key = args.get(0, "key");
        const Value* v = key.is_string() ? obj.dict().find(key.as_string()) : nullptr;
        if (v) return *v;
        Value def = args.get(1, "default");
        return def.is_undefined() ? Value(nullptr) : def;
      }
      if (name == "items") return items(obj);
      if (name == "keys" || name == "values") {
        ValueList out;
        for (const auto& kv : obj.dict().items) out.push_back(name == "keys" ? Value(kv.first) : kv.second);
        return Value::make_list(std::move(out));
      }
    }
    fail(std::string(kind_name(obj)) + " has no method '" + name + "'");
  }

 private:
  static std::string capitalize(const std::string& s) {
    if (s.empty()) return s;
    return ascii_upper(s.substr(0, 1)) + ascii_lower(s.substr(1));
  }

  Value items(const Value& d) {
    if (d.is_undefined() || d.is_none()) return Value::make_list();
    if (!d.is_dict()) fail(std::string("items() needs a dict, not ") + kind_name(d));
    ValueList out;
    for (const auto& kv : d.dict().items) out.push_back(Value::make_list({Value(kv.first), kv.second}));
    return Value::make_list(std::move(out));
  }

  Value split(const std::string& s, const Value& sep, const Value& maxsplit_v) {
    int64_t maxsplit = maxsplit_v.is_undefined() || maxsplit_v.is_none() ? -1 : maxsplit_v.as_int();
    ValueList out;
    if (sep.is_undefined() || sep.is_none()) {
      size_t i = 0;
      while (true) {
        while (i < s.size() && is_space(s[i])) ++i;
        if (i >= s.size()) break;
        if (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit) {
          out.emplace_back(strip_chars(s.substr(i), Value(), false, true));
          break;
        }
        size_t e = i;
        while (e < s.size() && !is_space(s[e])) ++e;
        out.emplace_back(s.substr(i, e - i));
        i = e;
      }
      return Value::make_list(std::move(out));
    }
    if (!sep.is_string() || sep.as_string().empty()) fail("split() separator must be a non-empty string");
    const std::string& t = sep.as_string();
    size_t b = 0;
    while (true) {
      size_t p = s.find(t, b);
      if (p == std::string::npos || (maxsplit >= 0 && static_cast<int64_t>(out.size()) == maxsplit)) {
        out.emplace_back(s.substr(b));
        break;
      }
      step();
      out.emplace_back(s.substr(b, p - b));
      b = p + t.size();
    }
    return Value::make_list(std::move(out));
  }

  Value replace(const std::string& s, const Value& from, const Value& to, const Value& count_v) {
    if (!from.is_string() || !to.is_string()) fail("replace() needs string arguments");
    int64_t count = count_v.is_undefined() || count_v.is_none() ? -1 : count_v.as_int();
    const std::string& f = from.as_string();
    const std::string& t = to.as_string();
    std::string out;
    if (f.empty()) {
      check_size(s.size() + (s.size() + 1) * t.size());
      auto offs = code_points(s);
      for (size_t i = 0; i + 1 < offs.size(); ++i) {
        if (count < 0 || static_cast<int64_t>(i) < count) out += t;
        out.append(s, offs[i], offs[i + 1] - offs[i]);
      }
      if (count < 0 || static_cast<int64_t>(offs.size()) - 1 < count) out += t;
      return make_string(std::move(out));
    }
    size_t b = 0;
    int64_t done = 0;
    while (true) {
      size_t p = s.find(f, b);
      if (p == std::string::npos || (count >= 0 && done >= count)) break;
      out.append(s, b, p - b);
      out += t;
      check_size(out.size());
      b = p + f.size();
      ++done;
    }
    out.append(s, b, std::string::npos);
    return make_string(std::move(out));
  }

  Value join(const Value& seq, const std::string& sep, const Value& attribute) {
    std::string out;
    bool first = true;
    for (const auto& v : iterate(seq)) {
      if (!first) out += sep;
      first = false;
      out += (attribute.is_undefined() ? v : get_attr_path(v, attribute)).to_str();
      check_size(out.size());
    }
    return make_string(std::move(out));
  }

  // str.format with {} / {0} / {name} fields (no format specs).
  Value format(const std::string& s, const CallArgs& args) {
    std::string out;
    size_t auto_idx = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      char ch = s[i];
      if (ch == '{' && i + 1 < s.size() && s[i + 1] == '{') {
        out += '{';
        ++i;
      } else if (ch == '}' && i + 1 < s.size() && s[i + 1] == '}') {
        out += '}';
        ++i;
      } else if (ch == '{') {
        size_t e = s.find('}', i);
        if (e == std::string::npos) fail("format(): unmatched '{'");
        std::string field = s.substr(i + 1, e - i - 1);
        Value v;
        if (field.empty()) {
          v = auto_idx < args.positional.size() ? args.positional[auto_idx] : Value();
          ++auto_idx;
        } else if (std::all_of(field.begin(), field.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          const int64_t k = digits_to_index(field);
          v = k < static_cast<int64_t>(args.positional.size()) ? args.positional[static_cast<size_t>(k)] : Value();
        } else {
          v = args.get(SIZE_MAX, field);
        }
        out += v.to_str();
        check_size(out.size());
        i = e;
      } else {
        out += ch;
      }
    }
    return make_string(std::move(out));
  }

  // attribute="a.b" or attribute=0 lookups used by map/selectattr/join/sort.
  Value get_attr_path(const Value& v, const Value& attribute) {
    if (attribute.is_int()) return get_item(v, attribute);
    Value cur = v;
    const std::string path = attribute.to_str();
    size_t b = 0;
    while (true) {
      size_t e = path.find('.', b);
      std::string part = path.substr(b, e == std::string::npos ? std::string::npos : e - b);
      bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
      cur = cur.is_dict() ? cur.get(part) : numeric ? get_item(cur, Value(digits_to_index(part))) : Value();
      if (e == std::string::npos) return cur;
      b = e + 1;
    }
  }

  // ---- filters ----
  Value apply_filter(const std::string& name, const Value& v, CallArgs& args) {
    if (name == "trim") return Value(strip_chars(v.to_str(), args.get(0, "chars"), true, true));
    if (name == "upper") return Value(ascii_upper(v.to_str()));
    if (name == "lower") return Value(ascii_lower(v.to_str()));
    if (name == "capitalize") return Value(capitalize(v.to_str()));
    if (name == "title") return Value(title_case(v.to_str()));
    if (name == "length" || name == "count") {
      if (v.is_string()) return Value(static_cast<int64_t>(string_length(v.as_string())));
      if (v.is_list()) return Value(static_cast<int64_t>(v.list().size()));
      if (v.is_dict()) return Value(static_cast<int64_t>(v.dict().items.size()));
      if (v.is_undefined()) return Value(int64_t{0});
      fail(std::string("object of type ") + kind_name(v) + " has no length");
    }
    if (name == "first" || name == "last") {
      ValueList l = iterate(v);
      if (l.empty()) return {};
      return name == "first" ? l.front() : l.back();
    }
    if (name == "join") {
      Value sep = args.get(0, "d");
      return join(v, sep.is_undefined() ? std::string() : sep.to_str(), args.get(1, "attribute"));
    }
    if (name == "default" || name == "d") {
      Value def = args.get(0, "default_value");
      bool boolean = args.get(1, "boolean").truthy();
      if (v.is_undefined() || (boolean && !v.truthy())) return def.is_undefined() ? Value(std::string()) : def;
      return v;
    }
    if (name == "tojson") {
      Value indent = args.get(0, "indent");
      std::string json = v.to_json(indent.is_int() ? static_cast<int>(std::clamp<int64_t>(indent.as_int(), 0, 64)) : -1);
      return make_string(std::move(json));
    }
    if (name == "string") return v.is_string() ? v : make_string(v.to_str());
    if (name == "safe" || name == "escape" || name == "e" || name == "forceescape") {
      if (name == "safe") return v;
      std::string out;
      for (char ch : v.to_str()) {
        switch (ch) {
          case '&': out += "&amp;"; break;
          case '<': out += "&lt;"; break;
          case '>': out += "&gt;"; break;
          case '"': out += "&#34;"; break;
          case '\'': out += "&#39;"; break;
          default: out += ch;
        }
      }
      return make_string(std::move(out));
    }
    if (name == "int") {
      Value def = args.get(0, "default");
      if (v.is_number() || v.is_bool()) return Value(v.as_int());
      if (v.is_string()) {
        try {
          size_t used = 0;
          std::string t = strip_chars(v.as_string(), Value(), true, true);
          long long i = std::stoll(t, &used);
          if (used == t.size()) return Value(static_cast<int64_t>(i));
          return Value(Value::double_to_int(std::stod(t)));
        } catch (const std::exception&) {
        }
      }
      return def.is_undefined() ? Value(int64_t{0}) : def;
    }
    if (name == "float") {
      if (v.is_number() || v.is_bool()) return Value(v.as_double());
      if (v.is_string()) {
        try {
          return Value(std::stod(v.as_string()));
        } catch (const std::exception&) {
        }
      }
      Value def = args.get(0, "default");
      return def.is_undefined() ? Value(0.0) : def;
    }
    if (name == "abs") {
      if (v.is_int()) return Value(v.as_int() < 0 ? sub_i(0, v.as_int(), "abs") : v.as_int());
      if (v.is_number()) return Value(std::fabs(v.as_double()));
      fail("abs needs a number");
    }
    if (name == "round") {
      Value prec = args.get(0, "precision");
      double scale = std::pow(10.0, prec.is_int() ? static_cast<double>(prec.as_int()) : 0.0);
      return Value(std::round(v.as_double() * scale) / scale);
    }
    if (name == "list") return Value::make_list(iterate(v));
    if (name == "items") return items(v);
    if (name == "reverse") {
      if (v.is_string()) return slice(v, Value(), Value(), Value(int64_t{-1}));
      ValueList l = iterate(v);
      std::reverse(l.begin(), l.end());
      return Value::make_list(std::move(l));
    }
    if (name == "unique") {
      ValueList out;
      for (const auto& x : iterate(v)) {
        step();
        if (std::none_of(out.begin(), out.end(), [&](const Value& y) { return y == x; })) out.push_back(x);
      }
      return Value::make_list(std::move(out));
    }
    if (name == "sort" || name == "dictsort") {
      ValueList l = name == "dictsort" ? items(v).list() : iterate(v);
      bool reverse = args.get(name == "sort" ? 0 : 2, "reverse").truthy();
      Value attribute = name == "sort" ? args.get(2, "attribute") : Value();
      bool by_value = name == "dictsort" && args.get(1, "by").is_string() && args.get(1, "by").as_string() == "value";
      if (l.size() > 10000) fail("sort of more than 10000 items");
      auto key = [&](const Value& x) {
        if (name == "dictsort") return x.list()[by_value ? 1 : 0];
        return attribute.is_undefined() ? x : get_attr_path(x, attribute);
      };
      std::stable_sort(l.begin(), l.end(), [&](const Value& a, const Value& b) {
        int c = compare_values(key(a), key(b), "<");
        return reverse ? c > 0 : c < 0;
      });
      return Value::make_list(std::move(l));
    }
    if (name == "min" || name == "max") {
      ValueList l = iterate(v);
      if (l.empty()) return {};
      Value best = l[0];
      for (const auto& x : l) {
        int c = compare_values(x, best, "<");
        if ((name == "min" && c < 0) || (name == "max" && c > 0)) best = x;
      }
      return best;
    }
    if (name == "sum") {
      Value total = args.get(1, "start");
      if (total.is_undefined()) total = Value(int64_t{0});
      Value attribute = args.get(0, "attribute");
      for (const auto& x : iterate(v)) total = binary("+", total, attribute.is_undefined() ? x : get_attr_path(x, attribute));
      return total;
    }
    if (name == "map") {
      ValueList out;
      Value attribute = args.get(SIZE_MAX, "attribute");
      for (const auto& x : iterate(v)) {
        step();
        if (!attribute.is_undefined()) {
          Value got = get_attr_path(x, attribute);
          if (got.is_undefined()) got = args.get(SIZE_MAX, "default");
          out.push_back(got);
        } else {
          if (args.positional.empty() || !args.positional[0].is_string()) fail("map() needs a filter name or attribute=");
          CallArgs rest;
          rest.positional.assign(args.positional.begin() + 1, args.positional.end());
          rest.keyword = args.keyword;
          out.push_back(apply_filter(args.positional[0].as_string(), x, rest));
        }
      }
      return Value::make_list(std::move(out));
    }
    if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject") {
      bool by_attr = name == "selectattr" || name == "rejectattr";
      bool want = name == "selectattr" || name == "select";
      size_t test_pos = by_attr ? 1 : 0;
      ValueList out;
      for (const auto& x : iterate(v)) {
        step();
        Value subject = by_attr ? get_attr_path(x, args.positional.empty() ? Value() : args.positional[0]) : x;
        bool r;
        if (args.positional.size() <= test_pos) {
          r = subject.truthy();
        } else {
          if (!args.positional[test_pos].is_string()) fail(name + "() test name must be a string");
          CallArgs rest;
          rest.positional.assign(args.positional.begin() + static_cast<long>(test_pos) + 1, args.positional.end());
          r = apply_test(args.positional[test_pos].as_string(), subject, rest);
        }
        if (r == want) out.push_back(x);
      }
      return Value::make_list(std::move(out));
    }
    if (name == "replace") return replace(v.to_str(), args.get(0, "old"), args.get(1, "new"), args.get(2, "count"));
    if (name == "indent") {
      Value width_v = args.get(0, "width");
      std::string pad = width_v.is_string() ? width_v.as_string()
                                            : std::string(static_cast<size_t>(width_v.is_undefined() ? 4 : std::clamp<int64_t>(width_v.as_int(), 0, 256)), ' ');
      bool first = args.get(1, "first").truthy();
      bool blank = args.get(2, "blank").truthy();
      std::string s = v.to_str(), out;
      size_t b = 0;
      bool is_first = true;
      while (b <= s.size()) {
        size_t e = s.find('\n', b);
        std::string line = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
        if ((is_first ? first : true) && (blank || !line.empty())) out += pad;
        out += line;
        check_size(out.size());
        if (e == std::string::npos) break;
        out += '\n';
        b = e + 1;
        is_first = false;
      }
      return make_string(std::move(out));
    }
    if (name == "wordcount") return Value(static_cast<int64_t>(split(v.to_str(), Value(), Value()).list().size()));
    fail("unknown filter '" + name + "'");
  }

  // ---- tests ----
  bool apply_test(const std::string& name, const Value& v, const CallArgs& args) {
    if (name == "defined") return !v.is_undefined();
    if (name == "undefined") return v.is_undefined();
    if (name == "none") return v.is_none();
    if (name == "string") return v.is_string();
    if (name == "number") return v.is_number();
    if (name == "integer") return v.is_int();
    if (name == "float") return v.kind() == Value::Kind::number;
    if (name == "boolean") return v.is_bool();
    if (name == "true") return v.is_bool() && v.as_bool();
    if (name == "false") return v.is_bool() && !v.as_bool();
    if (name == "mapping") return v.is_dict();
    if (name == "iterable") return v.is_list() || v.is_dict() || v.is_string();
    if (name == "sequence") return v.is_list() || v.is_dict() || v.is_string();
    if (name == "callable") return v.is_callable();
    if (name == "even" || name == "odd") {
      if (!v.is_int()) fail("'" + name + "' test needs an integer");
      return (v.as_int() % 2 == 0) == (name == "even");
    }
    if (name == "divisibleby") {
      Value n = args.get(0, "num");
      if (!v.is_int() || !n.is_int() || n.as_int() == 0) fail("'divisibleby' needs integers");
      return n.as_int() == -1 || v.as_int() % n.as_int() == 0;
    }
    if (name == "lower" || name == "upper") {
      if (!v.is_string()) return false;
      const std::string& s = v.as_string();
      return name == "lower" ? ascii_lower(s) == s : ascii_upper(s) == s;
    }
    Value other = args.get(0, "other");
    if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return v == other;
    if (name == "ne" || name == "!=") return !(v == other);
    if (name == "lt" || name == "lessthan" || name == "<") return compare_values(v, other, "<") < 0;
    if (name == "gt" || name == "greaterthan" || name == ">") return compare_values(v, other, ">") > 0;
    if (name == "le" || name == "<=") return compare_values(v, other, "<=") <= 0;
    if (name == "ge" || name == ">=") return compare_values(v, other, ">=") >= 0;
    if (name == "in") return contains(other, v);
    fail("unknown test '" + name + "'");
  }

  // ---- globals ----
  void install_globals() {
    globals_.set("range", Value::make_function([](Interpreter& in, CallArgs& args) {
      const auto& p = args.positional;
      if (p.empty() || p.size() > 3) fail("range() takes 1 to 3 arguments");
      for (const auto& x : p) {
        if (!x.is_int() && !x.is_bool()) fail("range() arguments must be integers");
      }
      int64_t start = p.size() >= 2 ? p[0].as_int() : 0;
      int64_t stop = p.size() >= 2 ? p[1].as_int() : p[0].as_int();
      int64_t step = p.size() == 3 ? p[2].as_int() : 1;
      if (step == 0) fail("range() step must not be zero");
      double n = std::ceil((static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step));
      if (n > static_cast<double>(in.opt_.limits.max_steps)) {
        fail("range() of " + std::to_string(static_cast<int64_t>(n)) + " items exceeds the limit of " +
             std::to_string(in.opt_.limits.max_steps));
      }
      ValueList out;
      for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
        out.emplace_back(i);
        if (step > 0 ? i > INT64_MAX - step : i < INT64_MIN - step) break;  // the next would pass stop anyway
        i += step;
      }
      return Value::make_list(std::move(out));
    }));
    globals_.set("namespace", Value::make_function([](Interpreter&, CallArgs& args) {
      Value ns = Value::make_dict();
      ns.dict().is_namespace = true;
      for (const auto& p : args.positional) {
        if (p.is_dict()) {
          for (const auto& kv : p.dict().items) ns.set(kv.first, kv.second);
        }
      }
      for (const auto& kv : args.keyword) ns.set(kv.first, kv.second);
      return ns;
    }));
    globals_.set("dict", Value::make_function([](Interpreter&, CallArgs& args) {
      Value d = Value::make_dict();
      for (const auto& kv : args.keyword) d.set(kv.first, kv.second);
      return d;
    }));
    globals_.set("raise_exception", Value::make_function([](Interpreter&, CallArgs& args) -> Value {
      fail("template raised an error: " + args.get(0, "message").to_str());
    }));
    globals_.set("strftime_now", Value::make_function([](Interpreter&, CallArgs& args) {
      Value fmt = args.get(0, "format");
      if (!fmt.is_string()) fail("strftime_now() needs a format string");
      std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[256];
      size_t n = std::strftime(buf, sizeof buf, fmt.as_string().c_str(), &tm);
      return Value(std::string(buf, n));
    }));
  }

  const Options& opt_;
  Value globals_;
  std::vector<Scope> scopes_;
  std::string out_;
  uint64_t steps_ = 0;
  uint64_t alloc_ = 0;
  int call_depth_ = 0;
};

Template::Template() = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::Template(const Template&) = default;
Template& Template::operator=(const Template&) = default;
Template::~Template() = default;

Template Template::parse(std::string_view source, const Options& options) {
  Template t;
  t.options_ = options;
  t.root_ = parse_template(source, options);
  return t;
}

std::string Template::render(const Value& context) const {
  if (!root_) throw Error("render() on an empty template", 0, 0);
  Interpreter in(options_, context);
  return in.run(*root_);
}

}  // namespace alap::jinja
