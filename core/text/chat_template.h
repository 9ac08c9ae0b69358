// Chat templates (FORMATS.md §8.5): renders a conversation with the model's own Jinja template
// (tokenizer.chat_template) through core/text/jinja.h, as HF transformers does. Not tokenization:
// the caller tokenizes the rendered text (and skips its own BOS when the text starts with it).
//
// Usage:
//   auto tpl = alap::ChatTemplate::parse(template_text_from_gguf);   // throws ChatTemplateError
//   alap::ChatTemplateInputs in;
//   in.messages = {{"system", "Be brief."}, {"user", "Hi"}};
//   in.bos_token = "<|begin_of_text|>";
//   std::string prompt = tpl.render(in);                               // throws ChatTemplateError
#pragma once

#include <ctime>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/text/jinja.h"

namespace alap {

// A template that does not parse, or fails while rendering (including the template's own
// raise_exception(), e.g. "roles must alternate"). what() names the line and column.
class ChatTemplateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ChatMessage {
  std::string role;     // "system", "user", "assistant", "tool"
  std::string content;
  std::string reasoning_content;  // given to the template only when non-empty (else undefined)
};

struct ChatTemplateInputs {
  std::vector<ChatMessage> messages;
  bool add_generation_prompt = true;
  std::string bos_token, eos_token;
  // Qwen3-style thinking switch; unset leaves `enable_thinking` undefined (the template's default).
  std::optional<bool> enable_thinking;
  // The time strftime_now() reports (Llama 3.2 prints today's date); unset = the current time.
  std::optional<std::time_t> now;
  // Further template variables, e.g. {"tools", list of tool dicts}.
  std::vector<std::pair<std::string, jinja::Value>> extra;
};

class ChatTemplate {
 public:
  // Parses with HF's settings (trim_blocks and lstrip_blocks on) and the default safety limits.
  static ChatTemplate parse(std::string source);
  std::string render(const ChatTemplateInputs& inputs) const;
  const std::string& source() const { return source_; }

 private:
  ChatTemplate(std::string source, jinja::Template tpl) : source_(std::move(source)), tpl_(std::move(tpl)) {}
  std::string source_;
  jinja::Template tpl_;
};

// The ChatML template (<|im_start|>role\n...<|im_end|>\n), used as the fallback when a GGUF file
// has no tokenizer.chat_template.
std::string builtin_chatml_template();

// A family name for display, guessed from the template text: "chatml", "llama3", "llama2",
// "mistral", "gemma", "phi3", "zephyr", "deepseek", "command-r", or "unknown".
std::string detect_chat_template_family(std::string_view source);

}  // namespace alap
