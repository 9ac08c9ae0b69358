// Vocabulary loading from GGUF metadata (FORMATS.md §8.1) and the tables derived from it:
// token lookup, BPE merge ranks, the special-token list (§8.2) and the EOG set.
// Not the tokenizing itself (tokenizer.cpp) and not the pre-tokenizer regexes (pretokenize.cpp).
#include "core/text/vocab.h"

#include <algorithm>
#include <array>
#include <optional>

#include "core/gguf/gguf.h"

namespace alap {

namespace {

struct PreEntry {
  std::string_view name;
  PreType type;
};

// GGUF pre names → regex family. Flags per name are set in vocab_set_pre.
constexpr std::array kPreNames = {
    PreEntry{"default", PreType::default_bpe},
    PreEntry{"llama-bpe", PreType::llama3},      PreEntry{"llama3", PreType::llama3},
    PreEntry{"llama-v3", PreType::llama3},       PreEntry{"falcon3", PreType::llama3},
    PreEntry{"falcon-h1", PreType::llama3},      PreEntry{"pixtral", PreType::llama3},
    PreEntry{"midm-2.0", PreType::llama3},       PreEntry{"lfm2", PreType::llama3},
    PreEntry{"dbrx", PreType::llama3},           PreEntry{"smaug-bpe", PreType::llama3},
    PreEntry{"qwen2", PreType::qwen2},           PreEntry{"deepseek-r1-qwen", PreType::qwen2},
    PreEntry{"stablelm2", PreType::qwen2},       PreEntry{"hunyuan", PreType::qwen2},
    PreEntry{"gpt-2", PreType::gpt2},            PreEntry{"phi-2", PreType::gpt2},
    PreEntry{"jina-es", PreType::gpt2},          PreEntry{"jina-de", PreType::gpt2},
    PreEntry{"jina-v1-en", PreType::gpt2},       PreEntry{"jina-v2-es", PreType::gpt2},
    PreEntry{"jina-v2-de", PreType::gpt2},       PreEntry{"jina-v2-code", PreType::gpt2},
    PreEntry{"roberta-bpe", PreType::gpt2},      PreEntry{"mpt", PreType::gpt2},
    PreEntry{"olmo", PreType::gpt2},             PreEntry{"starcoder", PreType::starcoder},
    PreEntry{"refact", PreType::starcoder},      PreEntry{"command-r", PreType::starcoder},
    PreEntry{"smollm", PreType::starcoder},      PreEntry{"codeshell", PreType::starcoder},
    PreEntry{"exaone", PreType::starcoder},      PreEntry{"falcon", PreType::falcon},
    PreEntry{"deepseek-coder", PreType::deepseek_coder},
    PreEntry{"deepseek-llm", PreType::deepseek_llm},
};

const std::array<std::string_view, kPreNames.size()> kPreNameList = [] {
  std::array<std::string_view, kPreNames.size()> names{};
  for (size_t i = 0; i < kPreNames.size(); ++i) names[i] = kPreNames[i].name;
  return names;
}();

std::string joined_pre_names() {
  std::string s;
  for (auto n : kPreNameList) {
    if (!s.empty()) s += ", ";
    s += n;
  }
  return s;
}

// Texts llama.cpp treats as end of generation (and as EOT when eot_token_id is absent).
constexpr std::array<std::string_view, 10> kEotTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
    "<|end_of_text|>", "<EOT>", "_<EOT>", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "<end_of_utterance>"};
constexpr std::array<std::string_view, 14> kEogTexts = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<end_of_turn>",
    "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>", "<end_of_utterance>",
    "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>"};

}  // namespace

int32_t Vocab::find(std::string_view text) const {
  auto it = token_to_id.find(text);
  return it == token_to_id.end() ? kNoToken : it->second;
}

bool Vocab::is_eog(int32_t id) const { return std::binary_search(eog.begin(), eog.end(), id); }

std::span<const std::string_view> supported_pre_names() { return kPreNameList; }

void vocab_set_pre(Vocab& vocab, std::string_view pre_name) {
  vocab.pre_name = std::string(pre_name);
  const std::string_view name = pre_name.empty() ? std::string_view("default") : pre_name;
  auto it = std::find_if(kPreNames.begin(), kPreNames.end(), [&](const PreEntry& e) { return e.name == name; });
  if (it == kPreNames.end()) {
    throw TextError("tokenizer.ggml.pre '" + std::string(name) + "' is not supported (supported: " +
                    joined_pre_names() + ")");
  }
  vocab.pre = it->type;
  vocab.ignore_merges = false;
  vocab.clean_spaces = true;
  vocab.nfc = false;
  if (it->type == PreType::llama3 && name != "dbrx" && name != "smaug-bpe") {
    vocab.ignore_merges = true;
    vocab.add_bos = true;
  }
  if (name == "qwen2" || name == "deepseek-r1-qwen" || name == "deepseek-coder" || name == "deepseek-llm" ||
      name == "command-r") {
    vocab.clean_spaces = false;
  }
  // Qwen's tokenizer.json normalizes to NFC before splitting; the reference ids follow it.
  if (name == "qwen2") vocab.nfc = true;
}

void vocab_finalize(Vocab& vocab, std::span<const std::string> merges) {
  const size_t n = vocab.tokens.size();
  if (vocab.scores.empty()) vocab.scores.assign(n, 0.0f);
  if (vocab.types.empty()) vocab.types.assign(n, TokenType::normal);
  if (vocab.scores.size() != n || vocab.types.size() != n) {
    throw TextError("tokenizer vocabulary: " + std::to_string(n) + " tokens but " +
                    std::to_string(vocab.scores.size()) + " scores and " + std::to_string(vocab.types.size()) +
                    " token types");
  }
  vocab.token_to_id.clear();
  vocab.token_to_id.reserve(n);
  for (size_t i = 0; i < n; ++i) vocab.token_to_id.emplace(vocab.tokens[i], static_cast<int32_t>(i));

  vocab.merge_ranks.clear();
  vocab.merge_ranks.reserve(merges.size());
  for (size_t r = 0; r < merges.size(); ++r) {
    const std::string& m = merges[r];
    const size_t sp = m.size() > 1 ? m.find(' ', 1) : std::string::npos;
    if (sp == std::string::npos || sp + 1 >= m.size()) {
      throw TextError("tokenizer.ggml.merges[" + std::to_string(r) + "] '" + m + "' is not 'left right'");
    }
    vocab.merge_ranks.emplace(m, static_cast<int32_t>(r));  // first occurrence keeps its rank
  }

  auto check_id = [&](int32_t& id) {
    if (id < 0 || static_cast<size_t>(id) >= n) id = kNoToken;
  };
  for (int32_t* id : {&vocab.bos, &vocab.eos, &vocab.eot, &vocab.eom, &vocab.unk, &vocab.pad, &vocab.sep,
                      &vocab.cls, &vocab.mask, &vocab.fim_pre, &vocab.fim_suf, &vocab.fim_mid, &vocab.fim_pad,
                      &vocab.fim_rep, &vocab.fim_sep}) {
    check_id(*id);
  }

  vocab.special_tokens.clear();
  for (size_t i = 0; i < n; ++i) {
    const TokenType t = vocab.types[i];
    if ((t == TokenType::control || t == TokenType::user_defined || t == TokenType::unknown) &&
        !vocab.tokens[i].empty()) {
      vocab.special_tokens.push_back(static_cast<int32_t>(i));
    }
  }
  std::stable_sort(vocab.special_tokens.begin(), vocab.special_tokens.end(), [&](int32_t a, int32_t b) {
    return vocab.tokens[static_cast<size_t>(a)].size() > vocab.tokens[static_cast<size_t>(b)].size();
  });

  if (vocab.eot == kNoToken) {
    for (auto text : kEotTexts) {
      if (int32_t id = vocab.find(text); id != kNoToken) {
        vocab.eot = id;
        break;
      }
    }
  }
  if (vocab.eom == kNoToken) vocab.eom = vocab.find("<|eom_id|>");
  vocab.eog.clear();
  for (auto text : kEogTexts) {
    if (int32_t id = vocab.find(text); id != kNoToken) vocab.eog.push_back(id);
  }
  for (int32_t id : {vocab.eos, vocab.eot, vocab.eom, vocab.fim_pad, vocab.fim_rep, vocab.fim_sep}) {
    if (id != kNoToken) vocab.eog.push_back(id);
  }
  std::sort(vocab.eog.begin(), vocab.eog.end());
  vocab.eog.erase(std::unique(vocab.eog.begin(), vocab.eog.end()), vocab.eog.end());
}

Vocab vocab_from_gguf(const gguf::File& file) {
  const std::string where = file.name() + ": ";
  Vocab v;
  const auto model = file.opt_string("tokenizer.ggml.model");
  if (!model) throw TextError(where + "no tokenizer.ggml.model key (the file has no tokenizer)");
  v.model_name = *model;
  if (*model == "llama") {
    v.type = VocabType::spm;
  } else if (*model == "gpt2") {
    v.type = VocabType::bpe;
  } else {
    throw TextError(where + "tokenizer.ggml.model '" + *model +
                    "' is not supported (supported: llama = SentencePiece BPE, gpt2 = byte-level BPE)");
  }

  const gguf::Value* tokens = file.find("tokenizer.ggml.tokens");
  if (!tokens || !tokens->strings()) throw TextError(where + "tokenizer.ggml.tokens is missing or not an array of strings");
  v.tokens = *tokens->strings();
  const size_t n = v.tokens.size();
  if (n == 0) throw TextError(where + "tokenizer.ggml.tokens is empty");

  if (const gguf::Value* s = file.find("tokenizer.ggml.scores")) {
    auto f = s->floats();
    if (!f || f->size() != n) throw TextError(where + "tokenizer.ggml.scores must be " + std::to_string(n) + " numbers");
    v.scores = std::move(*f);
  }
  if (const gguf::Value* t = file.find("tokenizer.ggml.token_type")) {
    auto ints = t->ints();
    if (!ints || ints->size() != n) {
      throw TextError(where + "tokenizer.ggml.token_type must be " + std::to_string(n) + " integers");
    }
    v.types.reserve(n);
    for (int64_t x : *ints) {
      v.types.push_back(x >= 0 && x <= 6 ? static_cast<TokenType>(x) : TokenType::undefined);
    }
  }

  std::vector<std::string> merges;
  if (v.type == VocabType::spm) {
    v.bos = 1;
    v.eos = 2;
    v.unk = 0;
    v.add_bos = true;
    v.add_space_prefix = true;
    v.pre = PreType::none;
    v.pre_name = file.opt_string("tokenizer.ggml.pre").value_or("");
  } else {
    v.bos = 11;
    v.eos = 11;
    vocab_set_pre(v, file.opt_string("tokenizer.ggml.pre").value_or(""));
    const gguf::Value* m = file.find("tokenizer.ggml.merges");
    if (!m || !m->strings()) throw TextError(where + "tokenizer.ggml.merges is missing or not an array of strings");
    merges = *m->strings();
  }

  auto read_id = [&](std::string_view key, int32_t& id) {
    if (auto x = file.opt_int(key)) id = (*x >= 0 && *x < static_cast<int64_t>(n)) ? static_cast<int32_t>(*x) : kNoToken;
  };
  read_id("tokenizer.ggml.bos_token_id", v.bos);
  read_id("tokenizer.ggml.eos_token_id", v.eos);
  read_id("tokenizer.ggml.eot_token_id", v.eot);
  read_id("tokenizer.ggml.eom_token_id", v.eom);
  read_id("tokenizer.ggml.unknown_token_id", v.unk);
  read_id("tokenizer.ggml.padding_token_id", v.pad);
  read_id("tokenizer.ggml.seperator_token_id", v.sep);
  read_id("tokenizer.ggml.cls_token_id", v.cls);
  read_id("tokenizer.ggml.mask_token_id", v.mask);
  read_id("tokenizer.ggml.fim_pre_token_id", v.fim_pre);
  read_id("tokenizer.ggml.fim_suf_token_id", v.fim_suf);
  read_id("tokenizer.ggml.fim_mid_token_id", v.fim_mid);
  read_id("tokenizer.ggml.fim_pad_token_id", v.fim_pad);
  read_id("tokenizer.ggml.fim_rep_token_id", v.fim_rep);
  read_id("tokenizer.ggml.fim_sep_token_id", v.fim_sep);
  if (auto b = file.opt_bool("tokenizer.ggml.add_bos_token")) v.add_bos = *b;
  if (auto b = file.opt_bool("tokenizer.ggml.add_eos_token")) v.add_eos = *b;
  if (auto b = file.opt_bool("tokenizer.ggml.add_space_prefix")) v.add_space_prefix = *b;

  try {
    vocab_finalize(v, merges);
  } catch (const TextError& e) {
    throw TextError(where + e.what());
  }
  return v;
}

}  // namespace alap
