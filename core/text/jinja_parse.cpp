// Jinja lexer and recursive-descent parser: template text → syntax tree (jinja_ast.h), with
// whitespace control ({%- -%}, trim_blocks, lstrip_blocks). Not the evaluator.
#include <algorithm>
#include <cstring>

#include "core/text/jinja_ast.h"
#include "core/text/utf8.h"

namespace alap::jinja {

namespace {

struct Token {
  enum class Type { text, var_begin, var_end, block_begin, block_end, name, string, integer, number, op, eof };
  Type type;
  std::string value;  // text, name, string contents, operator spelling
  int64_t i = 0;
  double d = 0;
  size_t offset = 0;
};

bool is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v'; }
bool is_name_start(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; }
bool is_digit(char ch) { return ch >= '0' && ch <= '9'; }

class Lexer {
 public:
  Lexer(std::string_view src, const Options& opt) : src_(src), opt_(opt) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src.size(); ++i) {
      if (src[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  void position(size_t offset, int& line, int& column) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    size_t idx = static_cast<size_t>(it - line_starts_.begin()) - 1;
    line = static_cast<int>(idx + 1);
    column = static_cast<int>(offset - line_starts_[idx] + 1);
  }

  [[noreturn]] void fail(const std::string& msg, size_t offset) const {
    int line, col;
    position(offset, line, col);
    throw Error(msg, line, col);
  }

  std::vector<Token> run() {
    size_t pos = 0;
    bool strip_next = false, trim_next = false;
    while (pos <= src_.size()) {
      if (strip_next) {
        while (pos < src_.size() && is_space(src_[pos])) ++pos;
      } else if (trim_next) {
        if (pos < src_.size() && src_[pos] == '\n') {
          ++pos;
        } else if (pos + 1 < src_.size() && src_[pos] == '\r' && src_[pos + 1] == '\n') {
          pos += 2;
        }
      }
      strip_next = trim_next = false;
      bool line_starting = pos == 0 || src_[pos - 1] == '\n';
      size_t start = find_tag(pos);
      std::string text(src_.substr(pos, start - pos));
      if (start == src_.size()) {
        emit_text(std::move(text), pos);
        break;
      }
      char kind = src_[start + 1];
      char marker = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (marker == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      } else if (kind != '{' && opt_.lstrip_blocks && marker != '+') {
        size_t l = text.rfind('\n');
        l = l == std::string::npos ? 0 : l + 1;
        if ((l > 0 || line_starting) &&
            std::all_of(text.begin() + static_cast<long>(l), text.end(), [](char ch) { return ch == ' ' || ch == '\t'; })) {
          text.resize(l);
        }
      }
      emit_text(std::move(text), pos);
      size_t body = start + 2 + ((marker == '-' || marker == '+') ? 1 : 0);
      if (kind == '#') {
        size_t end = src_.find("#}", body);
        if (end == std::string_view::npos) fail("unclosed comment", start);
        if (end > body && src_[end - 1] == '-') {
          strip_next = true;
        } else {
          trim_next = opt_.trim_blocks;
        }
        pos = end + 2;
        continue;
      }
      bool block = kind == '%';
      tokens_.push_back({block ? Token::Type::block_begin : Token::Type::var_begin, "", 0, 0, start});
      size_t first_token = tokens_.size();
      char end_marker = '\0';
      pos = lex_tag(body, block, start, end_marker);
      tokens_.push_back({block ? Token::Type::block_end : Token::Type::var_end, "", 0, 0, pos});
      pos += (end_marker ? 1 : 0) + 2;
      if (end_marker == '-') {
        strip_next = true;
      } else if (block && end_marker != '+') {
        trim_next = opt_.trim_blocks;
      }
      if (block && tokens_.size() == first_token + 2 && tokens_[first_token].type == Token::Type::name &&
          tokens_[first_token].value == "raw") {
        // {% raw %}...{% endraw %}: everything up to endraw is text.
        tokens_.resize(first_token - 1);
        pos = lex_raw(pos, start, strip_next, trim_next);
      }
    }
    tokens_.push_back({Token::Type::eof, "", 0, 0, src_.size()});
    return std::move(tokens_);
  }

 private:
  size_t find_tag(size_t pos) const {
    while (true) {
      size_t p = src_.find('{', pos);
      if (p == std::string_view::npos || p + 1 >= src_.size()) return src_.size();
      char n = src_[p + 1];
      if (n == '{' || n == '%' || n == '#') return p;
      pos = p + 1;
    }
  }

  void emit_text(std::string text, size_t offset) {
    if (!text.empty()) tokens_.push_back({Token::Type::text, std::move(text), 0, 0, offset});
  }

  size_t lex_raw(size_t pos, size_t raw_start, bool& strip_next, bool& trim_next) {
    if (strip_next) {
      while (pos < src_.size() && is_space(src_[pos])) ++pos;
    } else if (trim_next && pos < src_.size() && src_[pos] == '\n') {
      ++pos;
    }
    strip_next = trim_next = false;
    size_t search = pos;
    while (true) {
      size_t p = src_.find("{%", search);
      if (p == std::string_view::npos) fail("unclosed {% raw %} block", raw_start);
      size_t q = p + 2;
      char marker = q < src_.size() ? src_[q] : '\0';
      if (marker == '-' || marker == '+') ++q;
      while (q < src_.size() && is_space(src_[q])) ++q;
      if (src_.substr(q, 6) != "endraw") {
        search = p + 2;
        continue;
      }
      q += 6;
      while (q < src_.size() && is_space(src_[q])) ++q;
      char end_marker = '\0';
      if (q < src_.size() && (src_[q] == '-' || src_[q] == '+')) end_marker = src_[q++];
      if (src_.substr(q, 2) != "%}") fail("malformed {% endraw %}", p);
      std::string text(src_.substr(pos, p - pos));
      if (marker == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      }
      emit_text(std::move(text), pos);
      if (end_marker == '-') {
        strip_next = true;
      } else if (end_marker != '+') {
        trim_next = opt_.trim_blocks;
      }
      return q + 2;
    }
  }

  // Lexes expression tokens from `pos` up to the tag's end; returns the offset of the end
  // ("}}" / "%}", or the '-'/'+' before it, reported in end_marker).
  size_t lex_tag(size_t pos, bool block, size_t tag_start, char& end_marker) {
    int depth = 0;
    const char close = block ? '%' : '}';
    while (true) {
      while (pos < src_.size() && is_space(src_[pos])) ++pos;
      if (pos >= src_.size()) fail(block ? "unclosed block tag '{%'" : "unclosed expression '{{'", tag_start);
      char ch = src_[pos];
      if (depth == 0) {
        if (ch == close && pos + 1 < src_.size() && src_[pos + 1] == '}') {
          end_marker = '\0';
          return pos;
        }
        if ((ch == '-' || (block && ch == '+')) && pos + 2 < src_.size() && src_[pos + 1] == close &&
            src_[pos + 2] == '}') {
          end_marker = ch;
          return pos;
        }
      }
      if (is_name_start(ch)) {
        size_t e = pos;
        while (e < src_.size() && (is_name_start(src_[e]) || is_digit(src_[e]))) ++e;
        tokens_.push_back({Token::Type::name, std::string(src_.substr(pos, e - pos)), 0, 0, pos});
        pos = e;
      } else if (is_digit(ch)) {
        pos = lex_number(pos);
      } else if (ch == '\'' || ch == '"') {
        pos = lex_string(pos);
      } else {
        static const char* const two[] = {"//", "**", "==", "!=", "<=", ">="};
        std::string op;
        for (const char* t : two) {
          if (src_.compare(pos, 2, t) == 0) op = t;
        }
        if (op.empty()) {
          if (!std::strchr("+-*/%~<>=()[]{},.:|", ch)) fail(std::string("unexpected character '") + ch + "'", pos);
          op = std::string(1, ch);
          if (ch == '(' || ch == '[' || ch == '{') ++depth;
          if (ch == ')' || ch == ']' || ch == '}') {
            if (depth == 0) fail(std::string("unmatched '") + ch + "'", pos);
            --depth;
          }
        }
        tokens_.push_back({Token::Type::op, op, 0, 0, pos});
        pos += op.size();
      }
    }
  }

  size_t lex_number(size_t pos) {
    size_t e = pos;
    while (e < src_.size() && (is_digit(src_[e]) || src_[e] == '_')) ++e;
    bool is_float = false;
    if (e + 1 < src_.size() && src_[e] == '.' && is_digit(src_[e + 1])) {
      is_float = true;
      ++e;
      while (e < src_.size() && is_digit(src_[e])) ++e;
    }
    if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
      size_t f = e + 1;
      if (f < src_.size() && (src_[f] == '+' || src_[f] == '-')) ++f;
      if (f < src_.size() && is_digit(src_[f])) {
        is_float = true;
        e = f;
        while (e < src_.size() && is_digit(src_[e])) ++e;
      }
    }
    std::string text;
    for (size_t i = pos; i < e; ++i) {
      if (src_[i] != '_') text += src_[i];
    }
    Token t{is_float ? Token::Type::number : Token::Type::integer, text, 0, 0, pos};
    try {
      if (is_float) {
        t.d = std::stod(text);
      } else {
        t.i = std::stoll(text);
      }
    } catch (const std::exception&) {
      fail("number literal out of range: " + text, pos);
    }
    tokens_.push_back(std::move(t));
    return e;
  }

  size_t lex_string(size_t pos) {
    char q = src_[pos];
    std::string out;
    size_t i = pos + 1;
    auto hex = [&](size_t at, int n) -> uint32_t {
      uint32_t v = 0;
      for (int k = 0; k < n; ++k) {
        char c = at + static_cast<size_t>(k) < src_.size() ? src_[at + static_cast<size_t>(k)] : '\0';
        int d = is_digit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (d < 0) fail("bad escape in string literal", at);
        v = v * 16 + static_cast<uint32_t>(d);
      }
      return v;
    };
    while (true) {
      if (i >= src_.size()) fail("unterminated string literal", pos);
      char ch = src_[i];
      if (ch == q) break;
      if (ch == '\\' && i + 1 < src_.size()) {
        char e = src_[i + 1];
        i += 2;
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'v': out += '\v'; break;
          case '0': out += '\0'; break;
          case '\\': out += '\\'; break;
          case '\'': out += '\''; break;
          case '"': out += '"'; break;
          case '\n': break;
          case 'x': utf8::append(out, hex(i, 2)); i += 2; break;
          case 'u': utf8::append(out, hex(i, 4)); i += 4; break;
          case 'U': {
            uint32_t cp = hex(i, 8);
            if (cp > 0x10FFFF) fail("bad \\U escape", i);
            utf8::append(out, cp);
            i += 8;
            break;
          }
          default: out += '\\'; out += e;
        }
        continue;
      }
      out += ch;
      ++i;
    }
    tokens_.push_back({Token::Type::string, std::move(out), 0, 0, pos});
    return i + 1;
  }

  std::string_view src_;
  const Options& opt_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

class Parser {
 public:
  Parser(const Lexer& lexer, std::vector<Token> tokens, const Options& opt)
      : lexer_(lexer), toks_(std::move(tokens)), opt_(opt) {}

  std::unique_ptr<Node> parse_root() {
    auto root = std::make_unique<Node>();
    root->type = Node::Type::root;
    root->body = parse_body({});
    if (peek().type != Token::Type::eof) {
      fail("unexpected '{% " + toks_[pos_ + 1].value + " %}'", toks_[pos_ + 1]);
    }
    return root;
  }

 private:
  struct Depth {
    Parser& p;
    explicit Depth(Parser& parser, const Token& at) : p(parser) {
      if (++p.depth_ > p.opt_.limits.max_nesting) {
        p.fail("template nesting deeper than " + std::to_string(p.opt_.limits.max_nesting), at);
      }
    }
    ~Depth() { --p.depth_; }
  };

  [[noreturn]] void fail(const std::string& msg, const Token& at) const { lexer_.fail(msg, at.offset); }

  const Token& peek(size_t ahead = 0) const { return toks_[std::min(pos_ + ahead, toks_.size() - 1)]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool is_op(const char* op, size_t ahead = 0) const {
    return peek(ahead).type == Token::Type::op && peek(ahead).value == op;
  }
  bool is_name(const char* n, size_t ahead = 0) const {
    return peek(ahead).type == Token::Type::name && peek(ahead).value == n;
  }
  std::string describe(const Token& t) const {
    switch (t.type) {
      case Token::Type::eof: return "end of template";
      case Token::Type::block_end: return "end of block tag";
      case Token::Type::var_end: return "end of expression";
      case Token::Type::text: return "text";
      case Token::Type::string: return "string literal";
      case Token::Type::integer:
      case Token::Type::number: return "number '" + t.value + "'";
      default: return "'" + t.value + "'";
    }
  }
  void expect_op(const char* op) {
    if (!is_op(op)) fail(std::string("expected '") + op + "', found " + describe(peek()), peek());
    next();
  }
  std::string expect_name() {
    if (peek().type != Token::Type::name) fail("expected a name, found " + describe(peek()), peek());
    return next().value;
  }
  void expect_block_end() {
    if (peek().type != Token::Type::block_end) fail("expected end of block tag '%}', found " + describe(peek()), peek());
    next();
  }

  template <class T>
  std::unique_ptr<T> make(typename T::Type type, const Token& at) {
    auto n = std::make_unique<T>();
    n->type = type;
    lexer_.position(at.offset, n->line, n->column);
    return n;
  }

  // Parses nodes until eof or a block tag whose name is in `ends` (left unconsumed, with the
  // parser positioned at its block_begin).
  Body parse_body(std::initializer_list<const char*> ends, const Token* opener = nullptr) {
    Body body;
    while (true) {
      const Token& t = peek();
      if (t.type == Token::Type::eof) {
        if (ends.size() > 0) {
          fail("'{% " + (opener ? opener->value : std::string("block")) + " %}' is never closed (missing '{% " +
                   *(ends.end() - 1) + " %}')",
               opener ? *opener : t);
        }
        return body;
      }
      if (t.type == Token::Type::text) {
        auto n = make<Node>(Node::Type::text, t);
        n->text = next().value;
        body.push_back(std::move(n));
      } else if (t.type == Token::Type::var_begin) {
        auto n = make<Node>(Node::Type::output, next());
        n->expr = parse_expr();
        if (peek().type != Token::Type::var_end) fail("expected end of expression '}}', found " + describe(peek()), peek());
        next();
        body.push_back(std::move(n));
      } else if (t.type == Token::Type::block_begin) {
        const Token& name = peek(1);
        if (name.type != Token::Type::name) fail("expected a tag name after '{%'", name);
        for (const char* e : ends) {
          if (name.value == e) return body;
        }
        if (NodePtr n = parse_statement()) body.push_back(std::move(n));
      } else {
        fail("unexpected " + describe(t), t);
      }
    }
  }

  // At a block_begin of a closing tag (one of the names the body stopped at): consume it.
  std::string take_tag_name() {
    next();  // block_begin
    return next().value;
  }

  NodePtr parse_statement() {
    const Token& begin = next();
    Depth guard(*this, begin);
    const Token& name_tok = next();
    const std::string& tag = name_tok.value;
    if (tag == "if") {
      auto n = make<Node>(Node::Type::if_, name_tok);
      n->conds.push_back(parse_expr());
      expect_block_end();
      while (true) {
        n->bodies.push_back(parse_body({"elif", "else", "endif"}, &name_tok));
        std::string end = take_tag_name();
        if (end == "elif") {
          n->conds.push_back(parse_expr());
          expect_block_end();
        } else if (end == "else") {
          expect_block_end();
          n->else_body = parse_body({"endif"}, &name_tok);
          take_tag_name();
          expect_block_end();
          break;
        } else {
          expect_block_end();
          break;
        }
      }
      return n;
    }
    if (tag == "for") {
      auto n = make<Node>(Node::Type::for_, name_tok);
      n->targets.push_back(expect_name());
      while (is_op(",")) {
        next();
        n->targets.push_back(expect_name());
      }
      if (!is_name("in")) fail("expected 'in' in for loop, found " + describe(peek()), peek());
      next();
      n->expr = parse_or();
      if (is_name("if")) {
        next();
        n->cond = parse_expr();
      }
      if (is_name("recursive")) fail("recursive for loops are not supported", peek());
      expect_block_end();
      ++loop_depth_;
      n->body = parse_body({"else", "endfor"}, &name_tok);
      --loop_depth_;
      if (take_tag_name() == "else") {
        expect_block_end();
        n->else_body = parse_body({"endfor"}, &name_tok);
        take_tag_name();
      }
      expect_block_end();
      return n;
    }
    if (tag == "set") {
      auto n = make<Node>(Node::Type::set, name_tok);
      n->targets.push_back(expect_name());
      if (is_op(".")) {
        next();
        n->attr_target = true;
        n->targets.push_back(expect_name());
      } else {
        while (is_op(",")) {
          next();
          n->targets.push_back(expect_name());
        }
      }
      if (peek().type == Token::Type::block_end) {
        if (n->attr_target || n->targets.size() != 1) fail("block set takes a single name", name_tok);
        next();
        n->type = Node::Type::set_block;
        n->body = parse_body({"endset"}, &name_tok);
        take_tag_name();
        expect_block_end();
        return n;
      }
      expect_op("=");
      n->expr = parse_tuple_or_expr();
      expect_block_end();
      return n;
    }
    if (tag == "macro") {
      auto n = make<Node>(Node::Type::macro, name_tok);
      n->name = expect_name();
      expect_op("(");
      while (!is_op(")")) {
        n->params.push_back(expect_name());
        if (is_op("=")) {
          next();
          n->defaults.push_back(parse_expr());
        } else {
          n->defaults.push_back(nullptr);
        }
        if (!is_op(")")) expect_op(",");
      }
      next();
      expect_block_end();
      n->body = parse_body({"endmacro"}, &name_tok);
      take_tag_name();
      if (peek().type == Token::Type::name) next();  // {% endmacro name %}
      expect_block_end();
      return n;
    }
    if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail("'{% " + tag + " %}' outside a for loop", name_tok);
      auto n = make<Node>(tag == "break" ? Node::Type::break_ : Node::Type::continue_, name_tok);
      expect_block_end();
      return n;
    }
    if (tag == "generation") {  // HF's AssistantTracker marker: renders its body unchanged
      expect_block_end();
      auto n = make<Node>(Node::Type::if_, name_tok);
      auto yes = make<Expr>(Expr::Type::literal, name_tok);
      yes->value = Value(true);
      n->conds.push_back(std::move(yes));
      n->bodies.push_back(parse_body({"endgeneration"}, &name_tok));
      take_tag_name();
      expect_block_end();
      return n;
    }
    static const char* const stray[] = {"endif", "endfor", "endset", "endmacro", "elif", "else", "endgeneration", "endraw"};
    for (const char* s : stray) {
      if (tag == s) fail("unexpected '{% " + tag + " %}'", name_tok);
    }
    fail("unknown or unsupported tag '" + tag + "'", name_tok);
  }

  // ---- expressions ----

  ExprPtr parse_tuple_or_expr() {
    const Token& at = peek();
    ExprPtr first = parse_expr();
    if (!is_op(",")) return first;
    auto t = make<Expr>(Expr::Type::tuple, at);
    t->items.push_back(std::move(first));
    while (is_op(",")) {
      next();
      t->items.push_back(parse_expr());
    }
    return t;
  }

  ExprPtr parse_expr() {
    const Token& at = peek();
    Depth guard(*this, at);
    ExprPtr e = parse_or();
    while (is_name("if")) {
      const Token& if_tok = next();
      auto c = make<Expr>(Expr::Type::cond, if_tok);
      c->a = std::move(e);
      c->b = parse_or();
      if (is_name("else")) {
        next();
        c->c = parse_expr();
      }
      e = std::move(c);
    }
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (is_name("or")) {
      auto n = make<Expr>(Expr::Type::logic_or, next());
      n->a = std::move(e);
      n->b = parse_and();
      e = std::move(n);
    }
    return e;
  }

  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (is_name("and")) {
      auto n = make<Expr>(Expr::Type::logic_and, next());
      n->a = std::move(e);
      n->b = parse_not();
      e = std::move(n);
    }
    return e;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      const Token& at = next();
      Depth guard(*this, at);
      auto n = make<Expr>(Expr::Type::unary, at);
      n->name = "not";
      n->a = parse_not();
      return n;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    ExprPtr e = parse_concat();
    while (true) {
      const Token& t = peek();
      std::string op;
      if (t.type == Token::Type::op &&
          (t.value == "==" || t.value == "!=" || t.value == "<" || t.value == ">" || t.value == "<=" || t.value == ">=")) {
        op = t.value;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && is_name("in", 1)) {
        op = "not in";
        next();
        next();
      } else {
        return e;
      }
      auto n = make<Expr>(Expr::Type::binary, t);
      n->name = op;
      n->a = std::move(e);
      n->b = parse_concat();
      e = std::move(n);
    }
  }

  ExprPtr binary(ExprPtr lhs, const Token& at, std::string op, ExprPtr rhs) {
    auto n = make<Expr>(Expr::Type::binary, at);
    n->name = std::move(op);
    n->a = std::move(lhs);
    n->b = std::move(rhs);
    return n;
  }

  ExprPtr parse_concat() {
    ExprPtr e = parse_sum();
    while (is_op("~")) {
      const Token& at = next();
      e = binary(std::move(e), at, "~", parse_sum());
    }
    return e;
  }

  ExprPtr parse_sum() {
    ExprPtr e = parse_product();
    while (is_op("+") || is_op("-")) {
      const Token& at = next();
      e = binary(std::move(e), at, at.value, parse_product());
    }
    return e;
  }

  ExprPtr parse_product() {
    ExprPtr e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& at = next();
      e = binary(std::move(e), at, at.value, parse_pow());
    }
    return e;
  }

  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (is_op("**")) {
      const Token& at = next();
      e = binary(std::move(e), at, "**", parse_unary(true));
    }
    return e;
  }

  ExprPtr parse_unary(bool with_filter) {
    const Token& at = peek();
    Depth guard(*this, at);
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      next();
      e = make<Expr>(Expr::Type::unary, at);
      e->name = at.value;
      e->a = parse_unary(false);
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filters(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = peek();
    switch (t.type) {
      case Token::Type::name: {
        next();
        auto e = make<Expr>(Expr::Type::literal, t);
        if (t.value == "true" || t.value == "True") {
          e->value = Value(true);
        } else if (t.value == "false" || t.value == "False") {
          e->value = Value(false);
        } else if (t.value == "none" || t.value == "None") {
          e->value = Value(nullptr);
        } else {
          e->type = Expr::Type::name;
          e->name = t.value;
        }
        return e;
      }
      case Token::Type::string: {
        std::string s = next().value;
        while (peek().type == Token::Type::string) s += next().value;  // adjacent literals join
        auto e = make<Expr>(Expr::Type::literal, t);
        e->value = Value(std::move(s));
        return e;
      }
      case Token::Type::integer:
      case Token::Type::number: {
        next();
        auto e = make<Expr>(Expr::Type::literal, t);
        e->value = t.type == Token::Type::integer ? Value(t.i) : Value(t.d);
        return e;
      }
      case Token::Type::op:
        if (t.value == "(") {
          next();
          if (is_op(")")) {
            next();
            return make<Expr>(Expr::Type::tuple, t);
          }
          ExprPtr e = parse_expr();
          if (is_op(",")) {
            auto tup = make<Expr>(Expr::Type::tuple, t);
            tup->items.push_back(std::move(e));
            while (is_op(",")) {
              next();
              if (is_op(")")) break;
              tup->items.push_back(parse_expr());
            }
            e = std::move(tup);
          }
          expect_op(")");
          return e;
        }
        if (t.value == "[") {
          next();
          auto e = make<Expr>(Expr::Type::list, t);
          while (!is_op("]")) {
            e->items.push_back(parse_expr());
            if (!is_op("]")) expect_op(",");
          }
          next();
          return e;
        }
        if (t.value == "{") {
          next();
          auto e = make<Expr>(Expr::Type::dict, t);
          while (!is_op("}")) {
            e->keys.push_back(parse_expr());
            expect_op(":");
            e->items.push_back(parse_expr());
            if (!is_op("}")) expect_op(",");
          }
          next();
          return e;
        }
        break;
      default: break;
    }
    fail("expected an expression, found " + describe(t), t);
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      const Token& t = peek();
      if (is_op(".")) {
        next();
        const Token& n = peek();
        if (n.type == Token::Type::integer) {
          next();
          auto g = make<Expr>(Expr::Type::getitem, t);
          g->a = std::move(e);
          g->b = make<Expr>(Expr::Type::literal, n);
          g->b->value = Value(n.i);
          e = std::move(g);
        } else {
          auto g = make<Expr>(Expr::Type::getattr, t);
          g->a = std::move(e);
          g->name = expect_name();
          e = std::move(g);
        }
      } else if (is_op("[")) {
        next();
        e = parse_subscript(std::move(e), t);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, const Token& at) {
    ExprPtr parts[3];
    int n_parts = 1;
    bool is_slice = false;
    while (true) {
      if (is_op("]")) break;
      if (is_op(":")) {
        next();
        is_slice = true;
        if (++n_parts > 3) fail("too many ':' in slice", at);
        continue;
      }
      if (parts[n_parts - 1]) fail("expected ']' or ':' in subscript, found " + describe(peek()), peek());
      parts[n_parts - 1] = parse_expr();
    }
    next();
    if (!is_slice) {
      if (!parts[0]) fail("empty subscript", at);
      auto g = make<Expr>(Expr::Type::getitem, at);
      g->a = std::move(obj);
      g->b = std::move(parts[0]);
      return g;
    }
    auto s = make<Expr>(Expr::Type::slice, at);
    s->a = std::move(obj);
    s->b = std::move(parts[0]);
    s->c = std::move(parts[1]);
    s->d = std::move(parts[2]);
    return s;
  }

  void parse_args(Expr& e) {
    expect_op("(");
    while (!is_op(")")) {
      if (peek().type == Token::Type::name && is_op("=", 1)) {
        std::string key = next().value;
        next();
        e.kwargs.emplace_back(std::move(key), parse_expr());
      } else {
        if (!e.kwargs.empty()) fail("positional argument after keyword argument", peek());
        e.items.push_back(parse_expr());
      }
      if (!is_op(")")) expect_op(",");
    }
    next();
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto c = make<Expr>(Expr::Type::call, peek());
    c->line = callee->line;  // errors of a call point at what is called
    c->column = callee->column;
    c->a = std::move(callee);
    parse_args(*c);
    return c;
  }

  ExprPtr parse_filters(ExprPtr e) {
    while (true) {
      if (is_op("|")) {
        const Token& at = next();
        auto f = make<Expr>(Expr::Type::filter, at);
        f->name = expect_name();
        while (is_op(".")) {  // dotted filter names are not used by chat templates, but parse them
          next();
          f->name += "." + expect_name();
        }
        f->a = std::move(e);
        if (is_op("(")) parse_args(*f);
        e = std::move(f);
      } else if (is_name("is")) {
        const Token& at = next();
        auto t = make<Expr>(Expr::Type::test, at);
        if (is_name("not")) {
          next();
          t->negated = true;
        }
        t->name = expect_name();
        t->a = std::move(e);
        if (is_op("(")) {
          parse_args(*t);
        } else {
          const Token& p = peek();
          bool arg_follows = p.type == Token::Type::string || p.type == Token::Type::integer ||
                             p.type == Token::Type::number ||
                             (p.type == Token::Type::name && p.value != "else" && p.value != "or" &&
                              p.value != "and" && p.value != "if" && p.value != "is" && p.value != "in" &&
                              p.value != "not");
          if (arg_follows) t->items.push_back(parse_postfix(parse_primary()));
        }
        e = std::move(t);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  const Lexer& lexer_;
  std::vector<Token> toks_;
  const Options& opt_;
  size_t pos_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

std::unique_ptr<Node> parse_template(std::string_view source, const Options& options) {
  if (source.size() > options.limits.max_source_bytes) {
    throw Error("template is " + std::to_string(source.size()) + " bytes, over the limit of " +
                    std::to_string(options.limits.max_source_bytes),
                0, 0);
  }
  Lexer lexer(source, options);
  std::vector<Token> tokens = lexer.run();
  Parser parser(lexer, std::move(tokens), options);
  return parser.parse_root();
}

}  // namespace alap::jinja
