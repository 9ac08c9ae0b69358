// A tiny random llama chat model for end-to-end tests of `alap-cli serve` and the app: the
// shared builder (tests/support/tiny_llama_model.h) with ASCII pieces, a ChatML template and one
// layer. It answers gibberish, deterministically; not a model for anything but plumbing.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "tests/support/tiny_llama_model.h"

namespace alap::e2e {

struct TinyChatModelOptions {
  float eog_bias = -100.0f;  // output bias of </s> and <|im_end|>: +100 ends every answer at once
  uint32_t seed = 7;
  uint32_t n_ctx_train = 256;
};

// Writes the model to `path` (general.name "tiny-chat").
inline void write_tiny_chat_model(const std::filesystem::path& path, const TinyChatModelOptions& o = {}) {
  const std::string sp = "\xE2\x96\x81";  // ▁, SentencePiece's space
  const test::TinyLlamaOptions t{
      .name = "tiny-chat",  // the builder's default shape: 1 layer, d_model 32, 2 heads on 1 KV head
      .n_ctx_train = o.n_ctx_train,
      .pieces = {sp, "a", "e", "i", "o", "l", "n", "r", "s", "t", "m", "k", sp + "la", sp + "na", sp + "ro",
                 sp + "si", sp + "to", "ka", "le", "mo", "ne", "ri", "sa", "ta", "ok", "in", "er", "an"},
      .chat_template = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
                       "message['content'] + '<|im_end|>\\n' }}{% endfor %}"
                       "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
      .eos_bias = o.eog_bias,
      .im_end_bias = o.eog_bias,
      .seed = o.seed,
  };
  test::write_tiny_llama_model(path, t);
}

}  // namespace alap::e2e
