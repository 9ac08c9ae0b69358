// Hyper-parameters of a llama-family model read from GGUF metadata (FORMATS.md §4), and the
// refusals of what Alap does not run (MoE, yarn/longrope, per-layer arrays, unknown archs).
// Not the tensors: core/model/model.h checks and maps those.
//
//   auto file = alap::gguf::File::open("model.gguf");
//   alap::ModelHParams hp = alap::read_hparams(file);   // throws alap::ModelError
//   // hp.n_layer, hp.n_head, hp.n_head_kv, hp.head_dim_k, hp.rope_type, ...
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/gguf/gguf.h"

namespace alap {

// Any model the engine refuses or cannot load: the message names the file and the key or tensor.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Arch { llama, qwen2, qwen3 };
const char* arch_name(Arch a);  // "llama", "qwen2", "qwen3"

// normal: pairs (2i, 2i+1); neox: pairs (i, i + n_rot/2)  (FORMATS.md §6)
enum class RopeType { normal, neox };

struct ModelHParams {
  Arch arch = Arch::llama;
  int64_t n_vocab = 0;      // length of tokenizer.ggml.tokens (else A.vocab_size, else token_embd rows)
  int64_t n_ctx_train = 0;  // A.context_length
  int64_t n_embd = 0;       // E
  int64_t n_layer = 0;
  int64_t n_ff = 0;         // F
  int64_t n_head = 0;       // H
  int64_t n_head_kv = 0;    // Hk (H is a multiple of Hk)
  int64_t head_dim_k = 0;   // Dk (A.attention.key_length, default E/H)
  int64_t head_dim_v = 0;   // Dv (A.attention.value_length, default E/H)
  int64_t n_rot = 0;        // rotated dims per head (== Dk for llama)
  RopeType rope_type = RopeType::normal;
  float rope_freq_base = 10000.0f;  // θ
  float rope_freq_scale = 1.0f;     // 1/s for linear scaling, else 1
  float rms_eps = 1e-5f;
  bool has_rope_freqs = false;      // rope_freqs.weight present (Llama 3 per-pair divisors)

  int64_t n_gqa() const { return n_head / n_head_kv; }  // query heads per KV head
};

// Reads and validates the hyper-parameters of file `f`. Throws ModelError naming f.name() and
// the offending key: unknown arch (the message lists llama, qwen2, qwen3), MoE (expert keys or
// tensors, *moe archs), per-layer arrays, yarn/longrope scaling, n_rot != head_dim for llama,
// missing or invalid required keys.
ModelHParams read_hparams(const gguf::File& f);

}  // namespace alap
