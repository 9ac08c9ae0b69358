// Chat templates: builds the Jinja context HF transformers gives a chat template (messages,
// add_generation_prompt, bos/eos tokens, strftime_now) and renders it. Not the Jinja engine.
#include "core/text/chat_template.h"

namespace alap {

ChatTemplate ChatTemplate::parse(std::string source) {
  try {
    jinja::Template tpl = jinja::Template::parse(source);
    return ChatTemplate(std::move(source), std::move(tpl));
  } catch (const jinja::Error& e) {
    throw ChatTemplateError(std::string("chat template does not parse: ") + e.what());
  }
}

std::string ChatTemplate::render(const ChatTemplateInputs& inputs) const {
  jinja::Value messages = jinja::Value::make_list();
  for (const auto& m : inputs.messages) {
    jinja::Value msg = jinja::Value::make_dict();
    msg.set("role", m.role);
    msg.set("content", m.content);
    if (!m.reasoning_content.empty()) msg.set("reasoning_content", m.reasoning_content);
    messages.push_back(std::move(msg));
  }
  jinja::Value ctx = jinja::Value::make_dict();
  ctx.set("messages", messages);
  ctx.set("add_generation_prompt", inputs.add_generation_prompt);
  ctx.set("bos_token", inputs.bos_token);
  ctx.set("eos_token", inputs.eos_token);
  if (inputs.enable_thinking) ctx.set("enable_thinking", *inputs.enable_thinking);
  if (inputs.now) {
    std::time_t now = *inputs.now;
    ctx.set("strftime_now", jinja::Value::make_function([now](jinja::Interpreter&, jinja::CallArgs& args) {
              jinja::Value fmt = args.get(0, "format");
              if (!fmt.is_string()) throw jinja::Error("strftime_now() needs a format string", 0, 0);
              std::tm tm{};
              localtime_r(&now, &tm);
              char buf[256];
              size_t n = std::strftime(buf, sizeof buf, fmt.as_string().c_str(), &tm);
              return jinja::Value(std::string(buf, n));
            }));
  }
  for (const auto& kv : inputs.extra) ctx.set(kv.first, kv.second);
  try {
    return tpl_.render(ctx);
  } catch (const jinja::Error& e) {
    throw ChatTemplateError(std::string("chat template failed: ") + e.what());
  }
}

std::string builtin_chatml_template() {
  return "{%- for message in messages %}"
         "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
         "{%- endfor %}"
         "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}";
}

std::string detect_chat_template_family(std::string_view s) {
  auto has = [&](std::string_view needle) { return s.find(needle) != std::string_view::npos; };
  if (has("<|start_header_id|>")) return "llama3";
  if (has("<|im_start|>")) return "chatml";
  if (has("<start_of_turn>")) return "gemma";
  if (has("<\xEF\xBD\x9CUser\xEF\xBD\x9C>")) return "deepseek";  // <｜User｜> (fullwidth bars)
  if (has("<|START_OF_TURN_TOKEN|>")) return "command-r";
  if (has("<|user|>")) return has("<|end|>") ? "phi3" : "zephyr";
  if (has("[INST]")) return has("<<SYS>>") ? "llama2" : "mistral";
  return "unknown";
}

}  // namespace alap
