// A tokenizer vocabulary as GGUF stores it (FORMATS.md §8.1): tokens, scores, types, merge
// ranks, special ids, add_* flags, the pre-tokenizer and the end-of-generation set.
// Not the algorithms: those are in tokenizer.h. vocab_from_gguf reads only metadata.
//
//   auto file = alap::gguf::File::open("model.gguf");
//   alap::Vocab vocab = alap::vocab_from_gguf(file);
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace alap {

namespace gguf {
class File;
}

// Any refusal or bad input in core/text (unknown tokenizer model, unknown pre-tokenizer, ...).
class TextError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class VocabType { spm, bpe };

// Pre-tokenizer regex families (FORMATS.md §8.4); several GGUF names map to each.
enum class PreType { none, default_bpe, llama3, qwen2, gpt2, starcoder, falcon, deepseek_coder, deepseek_llm };

enum class TokenType : int32_t {
  undefined = 0,
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6,
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

inline constexpr int32_t kNoToken = -1;

struct Vocab {
  VocabType type = VocabType::spm;
  std::string model_name;  // tokenizer.ggml.model
  std::string pre_name;    // tokenizer.ggml.pre as stored ("" when absent)
  PreType pre = PreType::none;

  std::vector<std::string> tokens;  // [n_vocab] token text
  std::vector<float> scores;        // [n_vocab] SPM priority (0 when absent)
  std::vector<TokenType> types;     // [n_vocab]

  // Special ids; kNoToken when unset.
  int32_t bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken, unk = kNoToken;
  int32_t pad = kNoToken, sep = kNoToken, cls = kNoToken, mask = kNoToken;
  int32_t fim_pre = kNoToken, fim_suf = kNoToken, fim_mid = kNoToken;
  int32_t fim_pad = kNoToken, fim_rep = kNoToken, fim_sep = kNoToken;

  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;
  bool ignore_merges = false;  // llama3 family: a whole pre-split word that is a token wins
  bool clean_spaces = false;   // whole-sequence decode removes " ?", " !", " .", " ," ...
  bool nfc = false;            // qwen2 family: NFC-normalize input (HF tokenizer.json does)

  // Derived by vocab_finalize().
  TokenMap token_to_id;
  TokenMap merge_ranks;                 // "left right" → rank (BPE)
  std::vector<int32_t> special_tokens;  // control/user-defined/unknown ids, longest text first
  std::vector<int32_t> eog;             // sorted end-of-generation ids

  int32_t n_tokens() const { return static_cast<int32_t>(tokens.size()); }
  int32_t find(std::string_view text) const;  // kNoToken when absent
  TokenType type_of(int32_t id) const { return types[static_cast<size_t>(id)]; }
  bool is_eog(int32_t id) const;
};

// Names of the supported tokenizer.ggml.pre values, for messages and tests.
std::span<const std::string_view> supported_pre_names();

// Maps a tokenizer.ggml.pre name to its family and sets its flags (add_bos default,
// ignore_merges, clean_spaces). Throws TextError listing the supported names.
void vocab_set_pre(Vocab& vocab, std::string_view pre_name);

// Builds the derived tables of a vocab whose type, tokens, scores, types, ids and flags are
// set: token_to_id, merge ranks (merges as stored: "left right"), special list, EOG set.
// Throws TextError on a malformed merge or an out-of-range special id.
void vocab_finalize(Vocab& vocab, std::span<const std::string> merges);

// Reads tokenizer.* keys (only metadata; tensors are not touched). Throws TextError for an
// unknown tokenizer.ggml.model / tokenizer.ggml.pre or inconsistent arrays.
Vocab vocab_from_gguf(const gguf::File& file);

}  // namespace alap
