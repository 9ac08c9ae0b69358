// A tiny random llama chat model for end-to-end tests of `alap-cli serve`, written with
// gguf::Writer: SentencePiece vocab (control tokens, 256 byte tokens, ASCII pieces), a ChatML
// template, one layer of seeded f32 weights. It answers gibberish, deterministically; not a
// model for anything but plumbing.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/gguf/gguf.h"

namespace alap::e2e {

struct TinyChatModelOptions {
  float eog_bias = -100.0f;  // output bias of </s> and <|im_end|>: +100 ends every answer at once
  uint32_t seed = 7;
  uint32_t n_ctx_train = 256;
};

inline void tiny_add_f32(gguf::Writer& w, const std::string& name, std::vector<int64_t> ne, const std::vector<float>& v) {
  w.add_tensor(name, kernels::DType::f32, std::move(ne),
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)));
}

// Writes the model to `path` (general.name "tiny-chat").
inline void write_tiny_chat_model(const std::filesystem::path& path, const TinyChatModelOptions& o = {}) {
  constexpr int64_t kEmbd = 32, kHead = 2, kHeadKv = 1, kHeadDim = 16, kFf = 48, kLayers = 1;
  // Vocab: 0 <unk>, 1 <s>, 2 </s>, 3 <|im_start|>, 4 <|im_end|>, 5..260 bytes, then pieces.
  std::vector<std::string> tokens{"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"};
  std::vector<int32_t> types{2, 3, 3, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    tokens.push_back(buf);
    types.push_back(6);
  }
  const std::string sp = "\xE2\x96\x81";  // ▁, SentencePiece's space
  const std::vector<std::string> pieces{sp,        "a",       "e",      "i",      "o",      "l",       "n",
                                        "r",       "s",       "t",      "m",      "k",      sp + "la", sp + "na",
                                        sp + "ro", sp + "si", sp + "to", "ka",    "le",     "mo",      "ne",
                                        "ri",      "sa",      "ta",     "ok",     "in",     "er",      "an"};
  for (const auto& p : pieces) {
    tokens.push_back(p);
    types.push_back(1);
  }
  std::vector<float> scores(tokens.size(), 0.0f);
  for (size_t i = 261; i < tokens.size(); ++i) scores[i] = -static_cast<float>(i);
  const int64_t n_vocab = static_cast<int64_t>(tokens.size());

  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  w.set("general.name", gguf::Value::string("tiny-chat"));
  w.set("llama.context_length", gguf::Value::u32(o.n_ctx_train));
  w.set("llama.embedding_length", gguf::Value::u32(kEmbd));
  w.set("llama.block_count", gguf::Value::u32(kLayers));
  w.set("llama.feed_forward_length", gguf::Value::u32(kFf));
  w.set("llama.attention.head_count", gguf::Value::u32(kHead));
  w.set("llama.attention.head_count_kv", gguf::Value::u32(kHeadKv));
  w.set("llama.attention.key_length", gguf::Value::u32(kHeadDim));
  w.set("llama.attention.value_length", gguf::Value::u32(kHeadDim));
  w.set("llama.rope.dimension_count", gguf::Value::u32(kHeadDim));
  w.set("llama.attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-5f));
  w.set("llama.rope.freq_base", gguf::Value::f32(10000.0f));
  w.set("tokenizer.ggml.model", gguf::Value::string("llama"));
  w.set("tokenizer.ggml.tokens", gguf::Value::array_of_strings(tokens));
  w.set("tokenizer.ggml.scores", gguf::Value::array_of_f32(scores));
  w.set("tokenizer.ggml.token_type", gguf::Value::array_of_i32(types));
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(1));
  w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(2));
  w.set("tokenizer.ggml.unknown_token_id", gguf::Value::u32(0));
  w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(true));
  w.set("tokenizer.ggml.add_space_prefix", gguf::Value::boolean(true));
  w.set("tokenizer.chat_template",
        gguf::Value::string("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
                            "message['content'] + '<|im_end|>\\n' }}{% endfor %}"
                            "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"));

  std::mt19937 rng(o.seed);
  auto uniform = [&](int64_t n, float center, float spread) {
    std::uniform_real_distribution<float> u(center - spread, center + spread);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = u(rng);
    return v;
  };
  auto matrix = [&](const std::string& name, int64_t cols, int64_t rows) {
    tiny_add_f32(w, name, {cols, rows}, uniform(cols * rows, 0.0f, 2.5f / std::sqrt(static_cast<float>(cols))));
  };
  matrix("token_embd.weight", kEmbd, n_vocab);
  tiny_add_f32(w, "output_norm.weight", {kEmbd}, uniform(kEmbd, 1.0f, 0.2f));
  matrix("output.weight", kEmbd, n_vocab);
  // Only the pieces can be sampled (the text stays ASCII), and end-of-generation as asked.
  std::vector<float> bias(static_cast<size_t>(n_vocab), 0.0f);
  for (size_t i = 0; i < 261; ++i) bias[i] = -100.0f;
  bias[2] = o.eog_bias;
  bias[4] = o.eog_bias;
  tiny_add_f32(w, "output.bias", {n_vocab}, bias);
  for (int64_t l = 0; l < kLayers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    tiny_add_f32(w, b + "attn_norm.weight", {kEmbd}, uniform(kEmbd, 1.0f, 0.2f));
    matrix(b + "attn_q.weight", kEmbd, kHead * kHeadDim);
    matrix(b + "attn_k.weight", kEmbd, kHeadKv * kHeadDim);
    matrix(b + "attn_v.weight", kEmbd, kHeadKv * kHeadDim);
    matrix(b + "attn_output.weight", kHead * kHeadDim, kEmbd);
    tiny_add_f32(w, b + "ffn_norm.weight", {kEmbd}, uniform(kEmbd, 1.0f, 0.2f));
    matrix(b + "ffn_gate.weight", kEmbd, kFf);
    matrix(b + "ffn_up.weight", kEmbd, kFf);
    matrix(b + "ffn_down.weight", kFf, kEmbd);
  }
  w.write_file(path);
}

}  // namespace alap::e2e
