// read_hparams: the llama / qwen2 / qwen3 keys of FORMATS.md §4, with defaults and refusals.
#include "core/model/hparams.h"

#include <cmath>
#include <optional>
#include <string_view>

namespace alap {

namespace {

[[noreturn]] void fail(const gguf::File& f, const std::string& what) { throw ModelError(f.name() + ": " + what); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A count key: a scalar integer > 0 (or >= 0 when zero_ok). Per-layer arrays are refused.
std::optional<int64_t> opt_count(const gguf::File& f, const std::string& key, bool zero_ok = false) {
  const gguf::Value* v = f.find(key);
  if (!v) return std::nullopt;
  if (v->type() == gguf::ValueType::array) {
    fail(f, "key " + key + " is a per-layer array; Alap supports only one value for all layers");
  }
  auto i = v->to_int();
  if (!i) fail(f, "key " + key + " has type " + gguf::value_type_name(v->type()) + ", expected an integer");
  if (*i < 0 || (*i == 0 && !zero_ok) || *i > (int64_t{1} << 31)) {
    fail(f, "key " + key + " has the invalid value " + std::to_string(*i));
  }
  return *i;
}

int64_t req_count(const gguf::File& f, const std::string& key) {
  auto v = opt_count(f, key);
  if (!v) fail(f, "missing required key " + key);
  return *v;
}

std::optional<double> opt_real(const gguf::File& f, const std::string& key) {
  const gguf::Value* v = f.find(key);
  if (!v) return std::nullopt;
  auto d = v->to_float();
  if (!d || !std::isfinite(*d)) fail(f, "key " + key + " is not a finite number");
  return *d;
}

bool is_moe_tensor(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return false;
  return name.find(".ffn_gate_inp") != std::string_view::npos || name.find("_exps") != std::string_view::npos || name.find("_shexp") != std::string_view::npos;
}

}  // namespace

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::llama: return "llama";
    case Arch::qwen2: return "qwen2";
    case Arch::qwen3: return "qwen3";
  }
  return "?";
}

ModelHParams read_hparams(const gguf::File& f) {
  ModelHParams hp;
  const auto arch_opt = f.opt_string("general.architecture");
  if (!arch_opt) fail(f, "missing required key general.architecture");
  const std::string& arch = *arch_opt;

  // MoE first: a qwen2moe file should hear "MoE", not "unknown architecture".
  if (ends_with(arch, "moe") || arch == "llama4") {
    fail(f, "architecture " + arch + " is a mixture-of-experts (MoE) model, which Alap does not support");
  }
  if (arch == "llama") {
    hp.arch = Arch::llama;
  } else if (arch == "qwen2") {
    hp.arch = Arch::qwen2;
  } else if (arch == "qwen3") {
    hp.arch = Arch::qwen3;
  } else {
    fail(f, "unknown or unsupported architecture '" + arch + "' (supported: llama, qwen2, qwen3)");
  }
  const std::string A = arch + ".";

  for (const char* k : {"expert_count", "expert_used_count"}) {
    if (auto n = opt_count(f, A + k, /*zero_ok=*/true); n && *n > 0) {
      fail(f, "key " + A + k + " = " + std::to_string(*n) +
                  ": mixture-of-experts (MoE) models are not supported by Alap");
    }
  }
  for (const auto& t : f.tensors()) {
    if (is_moe_tensor(t.name)) {
      fail(f, "tensor " + t.name + " is a mixture-of-experts (MoE) tensor; MoE models are not supported by Alap");
    }
  }

  hp.n_ctx_train = req_count(f, A + "context_length");
  hp.n_embd = req_count(f, A + "embedding_length");
  hp.n_layer = req_count(f, A + "block_count");
  hp.n_ff = req_count(f, A + "feed_forward_length");
  hp.n_head = req_count(f, A + "attention.head_count");
  hp.n_head_kv = opt_count(f, A + "attention.head_count_kv").value_or(hp.n_head);
  if (hp.n_head % hp.n_head_kv != 0) {
    fail(f, "attention.head_count " + std::to_string(hp.n_head) + " is not a multiple of attention.head_count_kv " +
                std::to_string(hp.n_head_kv));
  }
  auto dk = opt_count(f, A + "attention.key_length");
  auto dv = opt_count(f, A + "attention.value_length");
  if ((!dk || !dv) && hp.n_embd % hp.n_head != 0) {
    fail(f, "embedding_length " + std::to_string(hp.n_embd) + " is not a multiple of attention.head_count " +
                std::to_string(hp.n_head) + " and " + A + "attention.key_length/value_length are absent");
  }
  hp.head_dim_k = dk.value_or(hp.n_embd / hp.n_head);
  hp.head_dim_v = dv.value_or(hp.n_embd / hp.n_head);
  hp.n_rot = opt_count(f, A + "rope.dimension_count").value_or(hp.head_dim_k);
  if (hp.n_rot % 2 != 0 || hp.n_rot > hp.head_dim_k) {
    fail(f, "key " + A + "rope.dimension_count = " + std::to_string(hp.n_rot) +
                " must be even and at most the head dim " + std::to_string(hp.head_dim_k));
  }
  if (hp.arch == Arch::llama && hp.n_rot != hp.head_dim_k) {
    fail(f, "key " + A + "rope.dimension_count = " + std::to_string(hp.n_rot) + " differs from the head dim " +
                std::to_string(hp.head_dim_k) + "; llama models must rotate the whole head");
  }
  hp.rope_type = hp.arch == Arch::llama ? RopeType::normal : RopeType::neox;

  auto eps = opt_real(f, A + "attention.layer_norm_rms_epsilon");
  if (!eps) fail(f, "missing required key " + A + "attention.layer_norm_rms_epsilon");
  if (*eps <= 0) fail(f, "key " + A + "attention.layer_norm_rms_epsilon must be > 0");
  hp.rms_eps = static_cast<float>(*eps);

  hp.rope_freq_base = static_cast<float>(opt_real(f, A + "rope.freq_base").value_or(10000.0));
  if (hp.rope_freq_base <= 0) fail(f, "key " + A + "rope.freq_base must be > 0");

  if (auto type = f.opt_string(A + "rope.scaling.type")) {
    if (*type == "yarn" || *type == "longrope") {
      fail(f, "key " + A + "rope.scaling.type = " + *type + ": " + *type + " RoPE scaling is not supported by Alap yet");
    }
    if (*type != "none" && *type != "linear") {
      fail(f, "key " + A + "rope.scaling.type has the unknown value '" + *type + "' (supported: none, linear)");
    }
  }
  auto factor = opt_real(f, A + "rope.scaling.factor");
  if (!factor) factor = opt_real(f, A + "rope.scale_linear");
  if (factor && *factor < 0) fail(f, "RoPE scaling factor must not be negative");
  hp.rope_freq_scale = (!factor || *factor == 0.0) ? 1.0f : static_cast<float>(1.0 / *factor);

  // n_vocab: the tokenizer's token list is authoritative.
  if (const gguf::Value* toks = f.find("tokenizer.ggml.tokens"); toks && toks->type() == gguf::ValueType::array) {
    hp.n_vocab = static_cast<int64_t>(toks->size());
  } else if (auto vs = opt_count(f, A + "vocab_size")) {
    hp.n_vocab = *vs;
  } else if (const auto* te = f.find_tensor("token_embd.weight")) {
    hp.n_vocab = te->ne[1];
  } else {
    fail(f, "cannot tell the vocabulary size: no tokenizer.ggml.tokens, " + A + "vocab_size or token_embd.weight");
  }
  if (hp.n_vocab <= 0) fail(f, "the vocabulary is empty");

  hp.has_rope_freqs = f.find_tensor("rope_freqs.weight") != nullptr;
  return hp;
}

}  // namespace alap
