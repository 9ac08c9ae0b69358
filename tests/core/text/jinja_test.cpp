// Unit tests of the Jinja subset interpreter (core/text/jinja.h): each language feature, filters,
// tests, methods, whitespace control, error positions and the safety limits.
#include "core/text/jinja.h"

#include <gtest/gtest.h>


namespace alap::jinja {
namespace {

Value ctx_with_messages() {
  Value ctx = Value::make_dict();
  Value msgs = Value::make_list();
  for (auto [role, content] : {std::pair{"system", "S"}, {"user", "U1"}, {"assistant", "A1"}, {"user", "U2"}}) {
    Value m = Value::make_dict();
    m.set("role", role);
    m.set("content", content);
    msgs.push_back(m);
  }
  ctx.set("messages", msgs);
  ctx.set("name", "World");
  ctx.set("n", 7);
  return ctx;
}

std::string render(std::string_view src, const Value& ctx = ctx_with_messages(), const Options& opt = {}) {
  return Template::parse(src, opt).render(ctx);
}

// The error a template gives (parse or render), or "" if none.
std::string error_of(std::string_view src, const Options& opt = {}) {
  try {
    render(src, ctx_with_messages(), opt);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Jinja, TextExpressionsAndComments) {
  EXPECT_EQ(render("Hello {{ name }}!{# gone #}"), "Hello World!");
  EXPECT_EQ(render("{{ 'a' ~ 1 ~ none ~ true }}"), "a1NoneTrue");
  EXPECT_EQ(render("{{ \"q\\\"\\n\\t\\u00e9\" }}"), "q\"\n\t\xC3\xA9");
  EXPECT_EQ(render("{{ 'ab' 'cd' }}"), "abcd");
  EXPECT_EQ(render("{{ missing }}|{{ missing.attr.deeper }}|{{ missing['x'] }}"), "||");
  EXPECT_EQ(render("{{ [1, 'a', [none]] }} {{ {'k': 1.5} }}"), "[1, 'a', [None]] {'k': 1.5}");
}

TEST(Jinja, Arithmetic) {
  EXPECT_EQ(render("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 / 2 }}"),
            "7 9 3 -4 2 3.5");
  EXPECT_EQ(render("{{ 2 ** 10 }} {{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e20 }} {{ 10 / 5 }} {{ -n }}"),
            "1024 1.0 0.30000000000000004 1e+20 2.0 -7");
  EXPECT_EQ(render("{{ 'ab' * 3 }} {{ [1] + [2] }} {{ 'a' + 'b' }}"), "ababab [1, 2] ab");
}

// Integers are int64: a result outside that range is a clear template error (Python would grow a big
// integer), never undefined behaviour. The first case is the fuzzer's find: 9555 ** 615.
TEST(Jinja, IntegerOverflowIsAnError) {
  EXPECT_EQ(error_of("{{ 9555 ** 615 }}"), "jinja: 1:9: integer overflow in '**'");
  EXPECT_NE(error_of("{{ 9223372036854775807 + 1 }}").find("integer overflow in '+'"), std::string::npos);
  EXPECT_NE(error_of("{{ -9223372036854775807 - 2 }}").find("integer overflow in '-'"), std::string::npos);
  EXPECT_NE(error_of("{{ 4294967296 * 4294967296 }}").find("integer overflow in '*'"), std::string::npos);
  EXPECT_NE(error_of("{{ (-9223372036854775807 - 1) // -1 }}").find("integer overflow in '//'"), std::string::npos);
  EXPECT_NE(error_of("{{ -(-9223372036854775807 - 1) }}").find("integer overflow in '-'"), std::string::npos);
  EXPECT_NE(error_of("{{ (-9223372036854775807 - 1) | abs }}").find("integer overflow in 'abs'"), std::string::npos);
  // The edges themselves, and the cases that do not overflow, keep Python's answers.
  EXPECT_EQ(render("{{ 2 ** 62 }} {{ (-2) ** 63 }} {{ (-1) ** 65 }} {{ 1 ** 1000000 }} {{ 0 ** 0 }} {{ 3 ** 0 }}"),
            "4611686018427387904 -9223372036854775808 -1 1 1 1");
  EXPECT_EQ(render("{{ 9223372036854775806 + 1 }} {{ (-9223372036854775807 - 1) % -1 }} {{ 7 // -1 }}"),
            "9223372036854775807 0 -7");
  EXPECT_EQ(render("{{ (-9223372036854775807 - 1) is divisibleby(-1) }} {{ 7 is divisibleby(-1) }}"), "True True");
  // Floats out of int64's range saturate; NaN converts to 0.
  EXPECT_EQ(render("{{ 1e300 | int }} {{ -1e300 | int }} {{ '1e300' | int }} {{ 2.9 | int }}"),
            "9223372036854775807 -9223372036854775808 9223372036854775807 2");
  // Ranges and slices that end near the int64 limits stop, they do not wrap.
  EXPECT_EQ(render("{{ range(9223372036854775805, 9223372036854775807, 1) | list }}"),
            "[9223372036854775805, 9223372036854775806]");
  EXPECT_EQ(render("{{ range(9223372036854775806, 9223372036854775807, 9223372036854775807) | list }}"),
            "[9223372036854775806]");
  EXPECT_EQ(render("{{ [1, 2, 3][::9223372036854775807] }} {{ [1, 2, 3][::-9223372036854775807] }}"), "[1] [3]");
  EXPECT_EQ(render("{{ 'ab' * 0 }}|{{ 'ab' * -3 }}|"), "||");
  EXPECT_NE(error_of("{{ 'ab' * 9223372036854775807 }}").find("exceeds the limit"), std::string::npos);
  // An empty sequence times a huge count is empty at once (the fuzzer's timeout: 477781 * 478771 * []).
  EXPECT_EQ(render("{{ 477781 * 478771 * [] }}|{{ '' * 4294967296 }}|{{ [] * 9223372036854775807 }}"), "[]||[]");
  // Indices written as digits inside strings, too long for int64, are out of range, not exceptions.
  EXPECT_EQ(render("{{ '<{99999999999999999999999}>{0}'.format('a') }}"), "<>a");
  EXPECT_EQ(error_of("{{ [[5]] | map(attribute='99999999999999999999') | list }}"), "");
  EXPECT_EQ(render("{{ [[5]] | map(attribute='0') | list }}"), "[5]");
}

TEST(Jinja, ComparisonsAndLogic) {
  EXPECT_EQ(render("{{ 1 < 2 }} {{ 'a' == 'a' }} {{ 1 == 1.0 }} {{ 2 >= 3 }} {{ 'b' != 'c' }}"),
            "True True True False True");
  EXPECT_EQ(render("{{ 'x' in 'xyz' }} {{ 3 in [1, 2] }} {{ 'role' in messages[0] }} {{ 'q' not in 'abc' }}"),
            "True False True True");
  EXPECT_EQ(render("{{ 0 or 'b' }} {{ 1 and 'c' }} {{ not 0 }} {{ not (1 and 0) }}"), "b c True True");
  EXPECT_EQ(render("{{ 'y' if n > 5 else 'n' }}{{ 'z' if false }}"), "y");
}

TEST(Jinja, AttributesSubscriptsAndSlices) {
  EXPECT_EQ(render("{{ messages[0].role }} {{ messages[-1]['content'] }} {{ messages|length }}"), "system U2 4");
  EXPECT_EQ(render("{% for m in messages[1:] %}{{ m.content }}{% endfor %}"), "U1A1U2");
  EXPECT_EQ(render("{% for m in messages[::-1] %}{{ m.content }}{% endfor %}"), "U2A1U1S");
  EXPECT_EQ(render("{{ 'hello'[1:3] }} {{ 'hello'[-3:] }} {{ 'hello'[::2] }} {{ [1,2,3,4][1:-1] }} {{ 'héllo'[1] }}"),
            "el llo hlo [2, 3] \xC3\xA9");
  EXPECT_EQ(render("{{ [1, 2][5] }}|{{ messages[0].nope }}|{{ {'a': {'b': 3}}.a.b }}"), "||3");
}

TEST(Jinja, IfElifElse) {
  const char* t = "{% if n < 5 %}small{% elif n < 10 %}medium{% else %}large{% endif %}";
  EXPECT_EQ(render(t), "medium");
  Value c = Value::make_dict();
  c.set("n", 50);
  EXPECT_EQ(render(t, c), "large");
}

TEST(Jinja, ForLoopVariables) {
  EXPECT_EQ(render("{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}"
                   "{{ 'F' if loop.first }}{{ 'L' if loop.last }}{{ loop.length }};{% endfor %}"),
            "104F4;2134;3224;431L4;");
  EXPECT_EQ(render("{% for x in [] %}a{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for m in messages if m.role == 'user' %}{{ loop.index }}{{ m.content }}{% endfor %}"),
            "1U12U2");
  EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }},{% endfor %}"), "a=1,b=2,");
  EXPECT_EQ(render("{% for k, v in {'a': 1}|items %}{{ k }}{{ v }}{% endfor %}"), "a1");
  EXPECT_EQ(render("{% for i in range(5) %}{% if i == 3 %}{% break %}{% endif %}{% if i == 1 %}{% continue %}"
                   "{% endif %}{{ i }}{% endfor %}"),
            "02");
  EXPECT_EQ(render("{% for i in range(1, 10, 3) %}{{ i }}{% endfor %}{% for c in 'ab' %}{{ c }}.{% endfor %}"),
            "147a.b.");
}

TEST(Jinja, SetScopingAndNamespace) {
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(render("{% set ns = namespace(x=1) %}{% for i in [1, 2] %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}"),
            "4");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(render("{% set block %}[{{ name }}]{% endset %}{{ block | upper }}"), "[WORLD]");
  EXPECT_EQ(render("{% set l = [] %}{% for i in range(3) %}{% set _ = l.append(i) %}{% endfor %}{{ l }}"),
            "[0, 1, 2]");
}

TEST(Jinja, Macros) {
  EXPECT_EQ(render("{% macro greet(who, punct='!') %}Hi {{ who }}{{ punct }}{% endmacro %}"
                   "{{ greet('A') }} {{ greet('B', '?') }} {{ greet(punct='.', who='C') }}"),
            "Hi A! Hi B? Hi C.");
  EXPECT_EQ(render("{% macro f(k) %}{% if k > 0 %}{{ k }}{{ f(k - 1) }}{% endif %}{% endmacro %}{{ f(3) }}"), "321");
  EXPECT_EQ(render("{% macro g() %}{{ name }}{% endmacro %}{% for name in ['x'] %}{{ g() }}{% endfor %}"), "World");
}

TEST(Jinja, Tests) {
  EXPECT_EQ(render("{{ name is defined }}{{ nope is defined }}{{ nope is undefined }}{{ none is none }}"
                   "{{ name is not none }}"),
            "TrueFalseTrueTrueTrue");
  EXPECT_EQ(render("{{ 'a' is string }}{{ 1 is number }}{{ 1.5 is number }}{{ {} is mapping }}{{ [] is iterable }}"
                   "{{ 'x' is iterable }}{{ [] is sequence }}{{ 1 is mapping }}"),
            "TrueTrueTrueTrueTrueTrueTrueFalse");
  EXPECT_EQ(render("{{ true is boolean }}{{ 1 is boolean }}{{ true is true }}{{ false is false }}{{ 0 is false }}"
                   "{{ 4 is even }}{{ 3 is odd }}{{ 9 is divisibleby(3) }}{{ 3 is equalto 3 }}"),
            "TrueFalseTrueTrueFalseTrueTrueTrueTrue");
}

TEST(Jinja, Filters) {
  EXPECT_EQ(render("{{ '  x y \n'|trim }}|{{ 'ab'|upper }}|{{ 'AB'|lower }}|{{ 'hello world'|title }}|"
                   "{{ 'hELLO'|capitalize }}"),
            "x y|AB|ab|Hello World|Hello");
  EXPECT_EQ(render("{{ [1,2,3]|first }}{{ [1,2,3]|last }}{{ [1,2,3]|join('-') }}{{ 'héllo'|length }}"
                   "{{ {'a':1}|count }}"),
            "131-2-351");
  EXPECT_EQ(render("{{ nope|default('d') }}{{ ''|default('e', true) }}{{ ''|d('f') }}{{ name|d('g') }}"), "de" "World");
  EXPECT_EQ(render("{{ 3|string ~ 4 }}{{ '12'|int + 1 }}{{ '1.5'|float }}{{ 'x'|int }}{{ 2.7|int }}"), "34131.502");
  EXPECT_EQ(render("{{ 'aXbX'|replace('X', '-') }}{{ 'abc'|list }}{{ [3,1,2]|sort }}{{ [1,1,2]|unique|list }}"),
            "a-b-['a', 'b', 'c'][1, 2, 3][1, 2]");
  EXPECT_EQ(render("{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|join(',') }}"),
            "U1,U2");
  EXPECT_EQ(render("{{ messages|rejectattr('role', 'equalto', 'user')|map(attribute='content')|list }}"),
            "['S', 'A1']");
  EXPECT_EQ(render("{{ ['a','B']|map('upper')|join }}{{ [1,0,2]|select|list }}{{ [1,2,3,4]|reject('odd')|list }}"),
            "AB[1, 2][2, 4]");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2}|dictsort }}{{ 'a<b'|escape }}{{ 'a<b'|safe }}{{ 'x\ny'|indent(2) }}"),
            "[['a', 2], ['b', 1]]a&lt;ba<bx\n  y");
}

TEST(Jinja, ToJson) {
  EXPECT_EQ(render("{{ {'name': 'f', 'n': [1, 2.5, true, none], 'é': \"q\\\"\\n\"}|tojson }}"),
            "{\"name\": \"f\", \"n\": [1, 2.5, true, null], \"\xC3\xA9\": \"q\\\"\\n\"}");
  EXPECT_EQ(render("{{ {'a': [1, {'b': {}}], 'c': []}|tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": {}\n    }\n  ],\n  \"c\": []\n}");
  EXPECT_EQ(render("{{ 'x'|tojson }}{{ messages[0]|tojson(4) == messages[0]|tojson(indent=4) }}"), "\"x\"True");
}

TEST(Jinja, StringMethods) {
  EXPECT_EQ(render("{{ '  a  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ '\\n\\na'.lstrip('\\n') }}|{{ 'a  '.rstrip() }}|"),
            "a|a|a|a|");
  EXPECT_EQ(render("{{ 'a<t>b<t>c'.split('<t>') }}{{ ' a  b '.split() }}{{ 'a,b,c'.split(',', 1) }}"),
            "['a', 'b', 'c']['a', 'b']['a', 'b,c']");
  EXPECT_EQ(render("{{ 'abc'.startswith('ab') }}{{ 'abc'.endswith('bc') }}{{ 'abc'.startswith(('x', 'a')) }}"
                   "{{ 'abc'.endswith('x') }}"),
            "TrueTrueTrueFalse");
  EXPECT_EQ(render("{{ 'ab'.upper() }}{{ 'AB'.lower() }}{{ 'aa'.replace('a', 'b', 1) }}{{ 'a b'.title() }}"
                   "{{ '{} and {}'.format(1, 'x') }}{{ ', '.join(['p', 'q']) }}"),
            "ABabbaA B1 and xp, q");
  EXPECT_EQ(render("{% set c = 'x</think>\\n\\nanswer' %}{{ c.split('</think>')[-1].lstrip('\\n') }}"), "answer");
}

TEST(Jinja, DictMethodsAndGlobals) {
  EXPECT_EQ(render("{% set d = {'a': 1, 'b': 2} %}{{ d.get('a') }}{{ d.get('z') }}{{ d.get('z', 9) }}{{ d.keys() }}"
                   "{{ d.values() }}{{ d['b'] }}"),
            "1None9['a', 'b'][1, 2]2");
  EXPECT_EQ(render("{{ range(3) }}{{ strftime_now is defined }}{{ strftime_now('%Y')|length }}"), "[0, 1, 2]True4");
  EXPECT_EQ(render("{{ dict(a=1) }}"), "{'a': 1}");
}

TEST(Jinja, RawBlock) {
  EXPECT_EQ(render("{% raw %}{{ not evaluated }}{% endraw %}"), "{{ not evaluated }}");
}

TEST(Jinja, WhitespaceControl) {
  EXPECT_EQ(render("a  {{- name -}}  b"), "aWorldb");
  EXPECT_EQ(render("a \n {%- if true -%} \n b {%- endif %}"), "ab");
  EXPECT_EQ(render("a {#- c -#} b"), "ab");
  // trim_blocks: the newline right after a block tag goes; lstrip_blocks: indentation before it goes.
  EXPECT_EQ(render("{% if true %}\n    x\n    {% endif %}\ny"), "    x\ny");
  EXPECT_EQ(render("{{ 1 }}\n{{ 2 }}"), "1\n2");  // not after expressions
  Options plain;
  plain.trim_blocks = false;
  plain.lstrip_blocks = false;
  EXPECT_EQ(render("{% if true %}\n    x\n    {% endif %}\ny", ctx_with_messages(), plain), "\n    x\n    \ny");
  EXPECT_EQ(render("  {%+ if true %}x{% endif +%}\n", ctx_with_messages()), "  x\n");
}

TEST(Jinja, RaiseException) {
  std::string err = error_of("line one\n{{ raise_exception('Roles must alternate') }}");
  EXPECT_EQ(err, "jinja: 2:4: template raised an error: Roles must alternate");
}

TEST(Jinja, ErrorsNameLineAndColumn) {
  EXPECT_EQ(error_of("ab\n  {% if x %}never closed"), "jinja: 2:6: '{% if %}' is never closed (missing '{% endif %}')");
  EXPECT_EQ(error_of("{{ 1 + }}"), "jinja: 1:8: expected an expression, found end of expression");
  EXPECT_EQ(error_of("x\n{% endfor %}"), "jinja: 2:4: unexpected '{% endfor %}'");
  EXPECT_EQ(error_of("{{ 'abc }}"), "jinja: 1:4: unterminated string literal");
  EXPECT_EQ(error_of("{{ x"), "jinja: 1:1: unclosed expression '{{'");
  EXPECT_EQ(error_of("{% frobnicate %}"), "jinja: 1:4: unknown or unsupported tag 'frobnicate'");
  EXPECT_EQ(error_of("{{ x | nosuchfilter }}"), "jinja: 1:6: unknown filter 'nosuchfilter'");
  EXPECT_EQ(error_of("\n\n   {{ undefined_thing + 1 }}"), "jinja: 3:23: undefined value used with operator '+'");
  EXPECT_EQ(error_of("{{ 1 / 0 }}"), "jinja: 1:6: division by zero");
  EXPECT_EQ(error_of("{% if 1 %}{% break %}{% endif %}"), "jinja: 1:14: '{% break %}' outside a for loop");
  EXPECT_EQ(error_of("{{ name() }}"), "jinja: 1:4: 'name' is not callable (it is string)");
  EXPECT_EQ(error_of("{% set x.y = 1 %}"), "jinja: 1:4: cannot assign attribute 'y' of 'x': not a namespace()");
}

TEST(Jinja, MalformedTemplatesNeverCrash) {
  const char* bad[] = {"{{", "{%", "{#", "{{ }}", "{% %}", "{% if %}", "{% for %}", "{% for x in %}", "{{ ( }}",
                       "{{ [1, }}", "{{ {'a' 1} }}", "{{ a[::: ] }}", "{% set %}", "{% macro %}", "{{ a.. }}",
                       "{{ 1 is }}", "{{ ) }}", "{% endif %}", "{% else %}", "{% raw %}", "{{ 'a' ~ }}",
                       "{{ x|join( }}", "{% for a, in b %}{% endfor %}", "{{ @ }}", "{{ 99999999999999999999 }}"};
  for (const char* src : bad) {
    std::string err;
    try {
      render(src);
    } catch (const Error& e) {
      err = e.what();
    }
    EXPECT_FALSE(err.empty()) << src;
  }
}

TEST(Jinja, LimitNestedLoopsStopsQuickly) {
  std::string err = error_of("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}");
  EXPECT_NE(err.find("exceeded 2000000 steps"), std::string::npos) << err;
  EXPECT_NE(error_of("{% for i in range(10000000000) %}{% endfor %}").find("range() of 10000000000 items exceeds"),
            std::string::npos);
}

TEST(Jinja, LimitRecursiveMacro) {
  std::string err = error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}");
  EXPECT_NE(err.find("macro 'f' nested deeper than 64 calls"), std::string::npos) << err;
  // Exponential fan-out within the depth limit is stopped by the step budget.
  err = error_of("{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}");
  EXPECT_NE(err.find("steps"), std::string::npos) << err;
}

TEST(Jinja, LimitHugeOutputAndStrings) {
  Options small;
  small.limits.max_output_bytes = 1000;
  std::string err = error_of("{% for i in range(1000) %}0123456789{% endfor %}", small);
  EXPECT_NE(err.find("rendered output exceeds the limit of 1000 bytes"), std::string::npos) << err;
  err = error_of("{{ 'x' * 100000000000 }}");
  EXPECT_NE(err.find("exceeds the limit"), std::string::npos) << err;
  err = error_of("{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}");
  EXPECT_NE(err.find("exceeds the limit"), std::string::npos) << err;
}

TEST(Jinja, LimitDeepNestingAndCycles) {
  std::string deep = std::string(5000, '(') + "1" + std::string(5000, ')');
  EXPECT_NE(error_of("{{ " + deep + " }}").find("nesting deeper than 200"), std::string::npos);
  std::string ifs;
  for (int i = 0; i < 300; ++i) ifs += "{% if true %}";
  EXPECT_NE(error_of(ifs).find("nesting deeper than 200"), std::string::npos);
  std::string err = error_of("{% set l = [] %}{% set _ = l.append(l) %}{{ l }}");
  EXPECT_NE(err.find("nested too deeply"), std::string::npos) << err;
}

}  // namespace
}  // namespace alap::jinja
