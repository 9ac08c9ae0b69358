// Internal to the Jinja interpreter: the syntax tree that jinja_parse.cpp builds and
// jinja_eval.cpp walks. Not a public header; only core/text/jinja_*.cpp include it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/text/jinja.h"

namespace alap::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Type {
    literal,    // value
    name,       // name
    getattr,    // a.name
    getitem,    // a[b]
    slice,      // a[b:c:d]  (b, c, d may be null)
    call,       // a(args)
    filter,     // a | name(args)
    test,       // a is [not] name(args)
    unary,      // op a     (op: "-", "+", "not")
    binary,     // a op b
    logic_and,  // a and b
    logic_or,   // a or b
    cond,       // a if b else c (c may be null)
    list,       // [items]
    tuple,      // (items)
    dict,       // {keys: items}
  };
  Type type;
  int line = 0, column = 0;
  Value value;           // literal
  std::string name;      // name / attribute / filter / test / operator
  bool negated = false;  // test
  ExprPtr a, b, c, d;
  std::vector<ExprPtr> items;  // list/tuple items, dict values, call positional args
  std::vector<ExprPtr> keys;   // dict keys
  std::vector<std::pair<std::string, ExprPtr>> kwargs;  // call/filter/test keyword args
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Type {
    root,       // body
    text,       // text
    output,     // {{ expr }}
    if_,        // branches (conds[i] -> bodies[i]), else_body
    for_,       // targets in expr [if cond]: body, else_body
    set,        // targets (name or ns.attr) = expr
    set_block,  // {% set name %} body {% endset %}
    macro,      // name(params = defaults) body
    break_,
    continue_,
  };
  Type type;
  int line = 0, column = 0;
  std::string text;                  // text node
  ExprPtr expr;                      // output / for iterable / set value
  ExprPtr cond;                      // for filter
  std::vector<ExprPtr> conds;        // if branches
  std::vector<Body> bodies;          // if branches
  Body body, else_body;
  std::vector<std::string> targets;  // for/set names; set on namespace: {"ns", "attr"} with attr_target
  bool attr_target = false;
  std::string name;                  // macro name
  std::vector<std::string> params;   // macro params
  std::vector<ExprPtr> defaults;     // macro param defaults (null when none), same length as params
};

std::unique_ptr<Node> parse_template(std::string_view source, const Options& options);

}  // namespace alap::jinja
