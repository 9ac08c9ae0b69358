// The tests' one builder of tiny random llama GGUF models (gguf::Writer): a SentencePiece vocab
// (<unk> <s> </s> <|im_start|> <|im_end|>, 256 byte tokens, then the given pieces), seeded f32
// weights, an output bias that keeps generation on the pieces. For plumbing tests only: the
// models answer gibberish, deterministically. Not a reference model (seeded_weights.h is).
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

namespace alap::test {

// Defaults: the shape of tests/e2e's tiny chat model (1 layer, d_model 32, 2 query heads on 1 KV
// head of 16, feed-forward 48).
struct TinyLlamaOptions {
  std::string name = "tiny";            // general.name
  int64_t n_embd = 32;
  int64_t n_head = 2;
  int64_t n_head_kv = 1;
  int64_t head_dim = 16;
  int64_t n_ff = 48;
  int64_t n_layer = 1;
  uint32_t n_ctx_train = 256;
  std::vector<std::string> pieces;      // normal SPM pieces after the 261 special and byte tokens
  std::string chat_template;            // empty: no tokenizer.chat_template key
  float eos_bias = -100.0f;             // output bias of </s> (+100 makes it the only choice)
  float im_end_bias = -100.0f;          // output bias of <|im_end|>
  uint32_t seed = 7;
};

// Ids of the fixed tokens; the pieces start at kTinyFirstPiece.
constexpr int32_t kTinyUnk = 0, kTinyBos = 1, kTinyEos = 2, kTinyImStart = 3, kTinyImEnd = 4;
constexpr int32_t kTinyFirstPiece = 261;

inline void tiny_add_f32(gguf::Writer& w, const std::string& name, std::vector<int64_t> ne, const std::vector<float>& v) {
  w.add_tensor(name, kernels::DType::f32, std::move(ne),
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)));
}

inline void write_tiny_llama_model(const std::filesystem::path& path, const TinyLlamaOptions& o) {
  std::vector<std::string> tokens{"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"};
  std::vector<int32_t> types{2, 3, 3, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    tokens.push_back(buf);
    types.push_back(6);
  }
  for (const auto& p : o.pieces) {
    tokens.push_back(p);
    types.push_back(1);
  }
  std::vector<float> scores(tokens.size(), 0.0f);
  for (size_t i = kTinyFirstPiece; i < tokens.size(); ++i) scores[i] = -static_cast<float>(i);  // earlier merge first
  const int64_t n_vocab = static_cast<int64_t>(tokens.size());
  const auto u32 = [](int64_t v) { return gguf::Value::u32(static_cast<uint32_t>(v)); };

  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  w.set("general.name", gguf::Value::string(o.name));
  w.set("llama.context_length", gguf::Value::u32(o.n_ctx_train));
  w.set("llama.embedding_length", u32(o.n_embd));
  w.set("llama.block_count", u32(o.n_layer));
  w.set("llama.feed_forward_length", u32(o.n_ff));
  w.set("llama.attention.head_count", u32(o.n_head));
  w.set("llama.attention.head_count_kv", u32(o.n_head_kv));
  w.set("llama.attention.key_length", u32(o.head_dim));
  w.set("llama.attention.value_length", u32(o.head_dim));
  w.set("llama.rope.dimension_count", u32(o.head_dim));
  w.set("llama.attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-5f));
  w.set("llama.rope.freq_base", gguf::Value::f32(10000.0f));
  w.set("tokenizer.ggml.model", gguf::Value::string("llama"));
  w.set("tokenizer.ggml.tokens", gguf::Value::array_of_strings(tokens));
  w.set("tokenizer.ggml.scores", gguf::Value::array_of_f32(scores));
  w.set("tokenizer.ggml.token_type", gguf::Value::array_of_i32(types));
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(kTinyBos));
  w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(kTinyEos));
  w.set("tokenizer.ggml.unknown_token_id", gguf::Value::u32(kTinyUnk));
  w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(true));
  w.set("tokenizer.ggml.add_space_prefix", gguf::Value::boolean(true));
  if (!o.chat_template.empty()) w.set("tokenizer.chat_template", gguf::Value::string(o.chat_template));

  // Weights in a fixed order from one generator: a model is a function of its options.
  std::mt19937 rng(o.seed);
  auto uniform = [&](int64_t n, float center, float spread) {
    std::uniform_real_distribution<float> u(center - spread, center + spread);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = u(rng);
    return v;
  };
  auto matrix = [&](const std::string& name, int64_t cols, int64_t rows) {  // ne = {cols, rows}
    tiny_add_f32(w, name, {cols, rows}, uniform(cols * rows, 0.0f, 2.5f / std::sqrt(static_cast<float>(cols))));
  };
  const int64_t E = o.n_embd, Dq = o.n_head * o.head_dim, Dkv = o.n_head_kv * o.head_dim;
  matrix("token_embd.weight", E, n_vocab);
  tiny_add_f32(w, "output_norm.weight", {E}, uniform(E, 1.0f, 0.2f));
  matrix("output.weight", E, n_vocab);
  // Only the pieces can be sampled (the text stays ASCII and predictable), and </s> and
  // <|im_end|> as asked.
  std::vector<float> bias(static_cast<size_t>(n_vocab), 0.0f);
  for (size_t i = 0; i < kTinyFirstPiece; ++i) bias[i] = -100.0f;
  bias[kTinyEos] = o.eos_bias;
  bias[kTinyImEnd] = o.im_end_bias;
  tiny_add_f32(w, "output.bias", {n_vocab}, bias);
  for (int64_t l = 0; l < o.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    tiny_add_f32(w, b + "attn_norm.weight", {E}, uniform(E, 1.0f, 0.2f));
    matrix(b + "attn_q.weight", E, Dq);
    matrix(b + "attn_k.weight", E, Dkv);
    matrix(b + "attn_v.weight", E, Dkv);
    matrix(b + "attn_output.weight", Dq, E);
    tiny_add_f32(w, b + "ffn_norm.weight", {E}, uniform(E, 1.0f, 0.2f));
    matrix(b + "ffn_gate.weight", E, o.n_ff);
    matrix(b + "ffn_up.weight", E, o.n_ff);
    matrix(b + "ffn_down.weight", o.n_ff, E);
  }
  w.write_file(path);
}

}  // namespace alap::test
