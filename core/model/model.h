// A loaded llama-family model: hyper-parameters plus every weight checked (presence, shape
// FORMATS.md §5, supported type) and mapped in place from the GGUF file. Not the forward pass
// (core/model/forward.h) and not the tokenizer (core/text reads model.file()'s metadata).
//
//   alap::Model model = alap::Model::load("model.gguf");      // throws alap::ModelError
//   const alap::ModelHParams& hp = model.hparams();
//   const alap::ModelWeights& w = model.weights();            // w.layers[i].wq is a WeightView
//   std::string arch = model.file().get_string("general.architecture");
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "alap/kernels/quant.h"
#include "core/gguf/gguf.h"
#include "core/model/hparams.h"

namespace alap {

// Weights of one block. Matrices point into the file mapping; vectors are f32 copies (F16/BF16
// norms and biases are converted at load). An empty vector means "absent".
struct LayerWeights {
  kernels::WeightView wq{};      // [H·Dk rows][E cols]
  kernels::WeightView wk{};      // [Hk·Dk][E]
  kernels::WeightView wv{};      // [Hk·Dv][E]
  kernels::WeightView wo{};      // [E][H·Dv]
  kernels::WeightView w_gate{};  // [F][E]
  kernels::WeightView w_up{};    // [F][E]
  kernels::WeightView w_down{};  // [E][F]
  std::vector<float> attn_norm;  // [E]
  std::vector<float> ffn_norm;   // [E]
  std::vector<float> bq, bk, bv; // [H·Dk], [Hk·Dk], [Hk·Dv]  (qwen2: present; llama: optional)
  std::vector<float> bo;         // [E] optional (llama)
  std::vector<float> q_norm;     // [Dk] qwen3
  std::vector<float> k_norm;     // [Dk] qwen3
};

struct ModelWeights {
  kernels::WeightView token_embd{};  // [V rows][E cols]
  kernels::WeightView output{};      // [V][E]; == token_embd when tied
  bool tied_output = false;          // output.weight absent
  std::vector<float> output_norm;    // [E]
  std::vector<float> output_bias;    // [V] optional
  std::vector<float> rope_freqs;     // [n_rot/2] optional divisors f_i (Llama 3)
  std::vector<LayerWeights> layers;  // [n_layer]
};

struct ModelOptions {
  // Touch every weight page at load (the first token is then not slowed by page faults).
  bool prefault = false;
  // Copy every matrix into the CPU kernels' packed layout at load (pack_for_cpu(0, true)). The
  // engine turns this off and packs only what the CPU runs once it knows how many layers the GPU
  // takes.
  bool pack_cpu = true;
};

class Model {
 public:
  // Opens, validates and maps `path`. Every tensor's presence, shape and type is checked before
  // any large allocation. Throws ModelError (or gguf::Error for a malformed file).
  static Model load(const std::filesystem::path& path, const ModelOptions& options = {});
  // Same from an already parsed file (tests build files in memory with gguf::Writer).
  static Model from_file(gguf::File file, const ModelOptions& options = {});

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const ModelHParams& hparams() const { return hp_; }
  const ModelWeights& weights() const { return w_; }
  const gguf::File& file() const { return *file_; }

  uint64_t weights_bytes() const { return weights_bytes_; }  // bytes of all tensors used
  uint64_t n_params() const { return n_params_; }            // elements of all tensors used

  // Copies the matrices the CPU runs (layers [first_layer, n_layer), and the output head when
  // `output`) into memory of the model's own that asks for huge pages, and releases the file pages
  // they came from: into the CPU kernels' packed layout where this CPU has one
  // (kernels::packed_bytes; the view's `packed` is set and `data` stays the file's, which the GPU
  // upload and the embedding lookup read), otherwise byte for byte (`data` then points at the
  // copy). Matrices already copied are skipped. Returns the bytes copied by this call (0, changing
  // nothing, when the memory cannot be had: the products then read the file's mapping).
  // ALAP_CPU_PACK=0 turns this off (to compare).
  uint64_t pack_for_cpu(size_t first_layer, bool output);
  uint64_t packed_bytes() const { return packed_bytes_; }  // bytes held in the CPU's own copies

 private:
  Model() = default;
  std::unique_ptr<gguf::File> file_;  // heap-held so views stay valid when Model moves
  ModelHParams hp_;
  ModelWeights w_;
  uint64_t weights_bytes_ = 0;
  uint64_t n_params_ = 0;
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::vector<std::unique_ptr<uint8_t, FreeDeleter>> packed_;  // heap-held: views stay valid on move
  std::vector<uint64_t> own_bytes_;                             // bytes used of each packed_ buffer
  uint64_t packed_bytes_ = 0;
};

}  // namespace alap
