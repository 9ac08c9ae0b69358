// Fuzz harness for chat templates: input byte 0 holds flags, the rest is split at NUL bytes into
// the template source and up to 8 message contents; the template is parsed and rendered with the
// default safety limits. Not a check of what a template prints (tests/core/text does that).
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/chat_template.h"
#include "tests/fuzz/fuzz_targets.h"

namespace alap::fuzz {

int chat_template(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string_view> parts;
  for (size_t pos = rest.find('\0'); pos != std::string_view::npos && parts.size() < 8; pos = rest.find('\0')) {
    parts.push_back(rest.substr(0, pos));
    rest.remove_prefix(pos + 1);
  }
  parts.push_back(rest);
  const std::string source(parts[0]);

  volatile size_t sink = detect_chat_template_family(source).size();
  ChatTemplateInputs in;
  static constexpr const char* kRoles[] = {"system", "user", "assistant", "user", "assistant", "tool"};
  for (size_t i = 1; i < parts.size(); ++i) {
    ChatMessage m;
    m.role = kRoles[(i - 1 + ((flags >> 5) & 1)) % 6];
    m.content = std::string(parts[i]);
    if ((flags & 16) && m.role == "assistant") m.reasoning_content = "thinking " + std::to_string(i);
    in.messages.push_back(std::move(m));
  }
  in.add_generation_prompt = flags & 1;
  if (flags & 2) in.enable_thinking = (flags & 4) != 0;
  if (flags & 8) in.now = std::time_t{1'700'000'000};
  in.bos_token = "<s>";
  in.eos_token = "</s>";
  if (flags & 64) {
    jinja::Value tool = jinja::Value::make_dict();
    tool.set("name", "get_weather");
    tool.set("parameters", jinja::Value::make_dict());
    in.extra.emplace_back("tools", jinja::Value::make_list({tool}));
  }
  try {
    ChatTemplate tpl = ChatTemplate::parse(source);
    const std::string out = tpl.render(in);
    check(out.size() <= jinja::Limits{}.max_output_bytes, "render output over the limit");
    sink = sink + out.size();
  } catch (const ChatTemplateError& e) {
    check(e.what()[0] != '\0', "empty chat template error");
  }
  return 0;
}

}  // namespace alap::fuzz
