// fuzz_seed_maker: writes the generated seed files of tests/fuzz/corpus (GGUF files from
// gguf::Writer plus hand-written JSON, text and templates), so the corpus can be rebuilt:
//   fuzz_seed_maker tests/fuzz/corpus
// Not a fuzzer; the corpus files are committed and small (a few KB per target).
#include <cstdint>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"
#include "core/gguf/gguf.h"

namespace {

namespace fs = std::filesystem;
using alap::gguf::Value;
using alap::gguf::ValueType;
using alap::gguf::Writer;
using alap::kernels::DType;

void put(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void put(const fs::path& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
  put(dir, name, std::string(bytes.begin(), bytes.end()));
}

std::vector<uint8_t> zeros(size_t n, uint8_t fill = 0) { return std::vector<uint8_t>(n, fill); }

void gguf_seeds(const fs::path& dir) {
  {
    Writer w;
    put(dir, "empty.gguf", w.to_bytes());
  }
  {
    Writer w;  // one of every scalar type, strings, arrays and a nested array
    w.set("general.architecture", Value::string("llama"));
    w.set("general.name", Value::string("tiny \xE0\xA6\xAC\xE0\xA6\xBE"));
    w.set("a.u8", Value::u8(7));
    w.set("a.i8", Value::i8(-7));
    w.set("a.u16", Value::u16(700));
    w.set("a.i16", Value::i16(-700));
    w.set("a.u32", Value::u32(70000));
    w.set("a.i32", Value::i32(-70000));
    w.set("a.u64", Value::u64(1ull << 40));
    w.set("a.i64", Value::i64(-(1ll << 40)));
    w.set("a.f32", Value::f32(0.5f));
    w.set("a.f64", Value::f64(-2.25));
    w.set("a.bool", Value::boolean(true));
    w.set("a.strs", Value::array_of_strings({"x", "yy", ""}));
    w.set("a.i32s", Value::array_of_i32({1, -2, 3}));
    w.set("a.f32s", Value::array_of_f32({1.0f, 2.5f}));
    w.set("a.nested", Value::array_of(ValueType::array, {Value::array_of_i32({1}), Value::array_of_strings({"z"})}));
    w.add_tensor("token_embd.weight", DType::f32, {4, 2}, zeros(32, 1));
    w.add_tensor("output_norm.weight", DType::f16, {4}, zeros(8, 0x3c));
    put(dir, "types.gguf", w.to_bytes());
  }
  {
    Writer w;  // quantized blocks and a non-default alignment
    w.set("general.architecture", Value::string("llama"));
    w.set("general.alignment", Value::u32(64));
    w.add_tensor("blk.0.attn_q.weight", DType::q8_0, {32, 2}, zeros(68, 2));
    w.add_tensor("blk.0.attn_k.weight", DType::q4_0, {32, 1}, zeros(18, 3));
    w.add_tensor("blk.0.ffn_down.weight", DType::q4_k, {256, 1}, zeros(144, 4));
    w.add_tensor("blk.0.ffn_up.weight", DType::q6_k, {256, 1}, zeros(210, 5));
    put(dir, "quant_aligned.gguf", w.to_bytes());
  }
  {
    Writer w;  // tokenizer metadata like a small model's
    w.set("general.architecture", Value::string("llama"));
    w.set("llama.context_length", Value::u32(128));
    w.set("llama.embedding_length", Value::u32(8));
    w.set("tokenizer.ggml.model", Value::string("gpt2"));
    w.set("tokenizer.ggml.pre", Value::string("llama-bpe"));
    w.set("tokenizer.ggml.tokens", Value::array_of_strings({"a", "b", "ab", "<|eot_id|>"}));
    w.set("tokenizer.ggml.token_type", Value::array_of_i32({1, 1, 1, 3}));
    w.set("tokenizer.ggml.merges", Value::array_of_strings({"a b"}));
    w.set("tokenizer.ggml.eos_token_id", Value::u32(3));
    w.set("tokenizer.chat_template", Value::string("{% for m in messages %}{{ m.content }}{% endfor %}"));
    w.add_tensor("token_embd.weight", DType::f32, {8, 4}, zeros(128));
    const std::vector<uint8_t> bytes = w.to_bytes();
    put(dir, "tokenizer.gguf", bytes);
    // Near-valid: truncated in the metadata and in the data section.
    put(dir, "truncated_meta.gguf", std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 3)));
    put(dir, "truncated_data.gguf", std::vector<uint8_t>(bytes.begin(), bytes.end() - 16));
  }
  {
    Writer w;  // a tensor whose offset field is patched to point past the end
    w.set("general.architecture", Value::string("llama"));
    w.add_tensor("t", DType::f32, {2}, zeros(8));
    std::vector<uint8_t> bytes = w.to_bytes();
    // Layout: name "t" (8+1), n_dims u32, ne u64, type u32, offset u64: find "t" then patch.
    const char* tail_key = "t";
    for (size_t i = 0; i + 9 < bytes.size(); ++i) {
      uint64_t len = 0;
      std::memcpy(&len, &bytes[i], 8);
      if (len == 1 && bytes[i + 8] == static_cast<uint8_t>(tail_key[0])) {
        const size_t off = i + 8 + 1 + 4 + 8 + 4;
        if (off + 8 <= bytes.size()) bytes[off + 7] = 0x40;
        break;
      }
    }
    put(dir, "bad_offset.gguf", bytes);
  }
}

void json_seeds(const fs::path& dir) {
  put(dir, "import_ok.json",
      R"({"format":"alap-conversation","version":1,"title":"Trip \u09ac","system_prompt":"Be brief.",)"
      R"("created_at":1700000000000,"messages":[{"role":"user","content":"Hi \ud83d\ude00","status":"complete",)"
      R"("created_at":1700000000001,"model":""},{"role":"assistant","content":"Hello","status":"streaming",)"
      R"("created_at":1700000000002,"model":"tiny.gguf"}]})");
  put(dir, "import_empty.json",
      R"({"format":"alap-conversation","version":1,"title":"","system_prompt":"","created_at":0,"messages":[]})");
  put(dir, "import_bad_role.json",
      R"({"format":"alap-conversation","version":1,"title":"t","system_prompt":"","created_at":1,)"
      R"("messages":[{"role":"wizard","content":"x","status":"complete","created_at":1,"model":""}]})");
  put(dir, "import_version2.json",
      R"({"format":"alap-conversation","version":2,"title":"t","system_prompt":"","created_at":1,"messages":[]})");
  put(dir, "values.json", R"([null,true,false,0,-0,1e3,-1.5E-7,9223372036854775807,-9223372036854775808,)"
                          R"(18446744073709551616,"\"\\\/\b\f\n\r\t\u0000\u00e9",{"a":{"b":[[]]}},{}])");
  put(dir, "dup_key.json", R"({"a":1,"a":2})");
  put(dir, "deep.json", std::string(70, '[') + std::string(70, ']'));
  put(dir, "trailing.json", "{\"a\":[1,2,]}");
}

void spm_seeds(const fs::path& dir) {
  // Byte 0: flags (1 add_special, 2 parse_special, 4 render_special); the rest is text.
  put(dir, "plain.txt", std::string("\x00", 1) + "the abc ab  c\n\tthe");
  put(dir, "specials.txt", std::string("\x07", 1) + "a<x>b</s><s> <|im_end|>c<unk>");
  put(dir, "bengali.txt", std::string("\x00", 1) + "\xE0\xA6\xAC\xE0\xA6\xBE\xE0\xA6\x82\xE0\xA6\xB2\xE0\xA6\xBE \xF0\x9F\x98\x80");
  put(dir, "invalid_utf8.txt", std::string("\x04\xC3\x28\xE0\xA6\xF0\x9F\x98\xFF\xFE", 10));
}

void bpe_seeds(const fs::path& dir) {
  // Byte 0: flags (bits 0-2 as for SPM; bits 3-5 pick the pre-tokenizer); the rest is text.
  put(dir, "gpt2.txt", std::string("\x00", 1) + "the abc's  ab, 123 4567!?\n\n x");
  put(dir, "llama3.txt", std::string("\x0A", 1) + "Hello<|end|> <tool>the   THE 12345 \xE0\xA6\xAC\xE0\xA6\xBE");
  put(dir, "qwen2.txt", std::string("\x11", 1) + "e\xCC\x81 caf\xC3\xA9 \xE4\xB8\xAD\xE6\x96\x87 \r\n");
  put(dir, "deepseek.txt", std::string("\x34", 1) + "x=1;\n  return y; // \xF0\x9F\x98\x80");
  put(dir, "invalid_utf8.txt", std::string("\x1C\xC3\x28\xE0\xA6\xF0\x9F\x98\xFF\xFE", 10));
}

void template_seeds(const fs::path& dir) {
  // Byte 0: flags; then the template, then message contents, separated by NUL bytes.
  auto seed = [](uint8_t flags, const std::string& tpl, std::vector<std::string> msgs) {
    std::string s(1, static_cast<char>(flags));
    s += tpl;
    for (const auto& m : msgs) s += std::string(1, '\0') + m;
    return s;
  };
  put(dir, "chatml.txt",
      seed(1,
           "{%- for message in messages %}{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
           "'<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
           {"Be brief.", "Hi", "Hello"}));
  put(dir, "llama3.txt",
      seed(9,
           "{{- bos_token }}{%- set date_string = strftime_now('%d %b %Y') %}{%- for message in messages %}"
           "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + "
           "'<|eot_id|>' }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}",
           {"sys", "q"}));
  put(dir, "alternate.txt",
      seed(0x21,
           "{% for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}"
           "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
           "{{ m.role|upper ~ ': ' ~ m.content }}{% endfor %}",
           {"a", "b", "c"}));
  put(dir, "features.txt",
      seed(0x56,
           "{% macro f(x, y=2) %}{{ x * y }}{% endmacro %}{% set ns = namespace(n=0) %}"
           "{% for i in range(5) if i is odd %}{% set ns.n = ns.n + i %}{{ f(i) }},{% endfor %}{{ ns.n }}"
           "{{ messages|length }}{{ tools|tojson }}{{ 'a,b'.split(',')|join('-') }}{{ [3,1,2]|sort|first }}"
           "{% if enable_thinking is defined and enable_thinking %}<think>{% endif %}"
           "{{ messages[-1].content[1:3] }}{{ {'k': 'v'}.items()|list }}{{ 'x' if none is none else 'y' }}",
           {"hello world", "reply"}));
  put(dir, "broken.txt", seed(0, "{% for m in messages %}{{ m.content", {"x"}));
}

void hf_seeds(const fs::path& dir) {
  // Answers of /api/models?search= and /api/models/{id}/tree/main, shaped like the Hub's.
  put(dir, "search.json",
      R"([{"_id":"1","id":"Qwen/Qwen2.5-0.5B-Instruct-GGUF","downloads":12345,"likes":67,"gated":false,)"
      R"("tags":["gguf","text-generation"]},{"id":"meta/x","downloads":"7","gated":"manual","tags":[1]}])");
  put(dir, "tree.json",
      R"([{"type":"file","oid":"a1","size":1519,"path":"README.md"},)"
      R"({"type":"directory","oid":"b2","size":0,"path":"sub"},)"
      R"({"type":"file","oid":"c3","size":134,"path":"qwen2.5-0.5b-instruct-q4_k_m.gguf",)"
      R"("lfs":{"oid":"4f4b7e5c0e6a4f2b0e6d5a1c9b8e7f6a5d4c3b2a1f0e9d8c7b6a5f4e3d2c1b0a","size":491400032,"pointerSize":134}},)"
      R"({"type":"file","size":10,"path":"sub/m-Q8_0-00001-of-00002.gguf"},{"type":"file","size":11,"path":"sub/m-Q8_0-00002-of-00002.gguf"}])");
  put(dir, "hostile_tree.json",
      R"([{"type":"file","size":-5,"path":"../../etc/passwd"},{"type":"file","path":"/abs.gguf"},)"
      R"({"type":"file","path":".hidden.gguf"},{"type":"file","path":"a\\b.gguf"},{"type":"file","path":"x.gguf"},)"
      R"({"type":"file","path":"ok-IQ4_XS.gguf","size":1e30,"lfs":{"oid":"sha256:ABC","size":"big"}},7,null])");
  put(dir, "not_array.json", R"({"error":"Repository not found"})");
}

// Tiny whole models for engine_load_fuzz (byte 0: the harness's flags, then the GGUF file). Weights
// are a fixed sine pattern, matrices in `dt`; an SPM vocabulary of a few pieces.
struct TinyShape {
  const char* arch;
  DType dt;
  int64_t E, H, Hk, D, F, L;
  bool biases, tied, with_template;
};

std::vector<uint8_t> tiny_model(const TinyShape& t) {
  Writer w;
  const std::string a = t.arch;
  const std::vector<std::string> tokens{"<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "\xE2\x96\x81" "a", "a", "b",
                                        "ab", "\xE2\x96\x81" "ab", "\n", "user"};
  std::vector<int32_t> types(tokens.size(), 1);
  types[0] = 2;
  for (int i = 1; i <= 4; ++i) types[static_cast<size_t>(i)] = 3;
  std::vector<float> scores(tokens.size());
  for (size_t i = 0; i < scores.size(); ++i) scores[i] = -static_cast<float>(i);
  const auto u32 = [](int64_t v) { return Value::u32(static_cast<uint32_t>(v)); };
  w.set("general.architecture", Value::string(a));
  w.set("general.name", Value::string("fuzz " + a));
  w.set(a + ".context_length", u32(64));
  w.set(a + ".embedding_length", u32(t.E));
  w.set(a + ".block_count", u32(t.L));
  w.set(a + ".feed_forward_length", u32(t.F));
  w.set(a + ".attention.head_count", u32(t.H));
  w.set(a + ".attention.head_count_kv", u32(t.Hk));
  w.set(a + ".attention.key_length", u32(t.D));
  w.set(a + ".attention.value_length", u32(t.D));
  w.set(a + ".rope.dimension_count", u32(t.D));
  w.set(a + ".attention.layer_norm_rms_epsilon", Value::f32(1e-6f));
  w.set(a + ".rope.freq_base", Value::f32(10000.0f));
  w.set("tokenizer.ggml.model", Value::string("llama"));
  w.set("tokenizer.ggml.tokens", Value::array_of_strings(tokens));
  w.set("tokenizer.ggml.scores", Value::array_of_f32(scores));
  w.set("tokenizer.ggml.token_type", Value::array_of_i32(types));
  w.set("tokenizer.ggml.bos_token_id", Value::u32(1));
  w.set("tokenizer.ggml.eos_token_id", Value::u32(2));
  w.set("tokenizer.ggml.unknown_token_id", Value::u32(0));
  if (t.with_template) {
    w.set("tokenizer.chat_template",
          Value::string("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"));
  }
  int salt = 0;
  const auto values = [&](int64_t n, float center, float spread) {
    std::vector<float> v(static_cast<size_t>(n));
    ++salt;
    for (size_t i = 0; i < v.size(); ++i) v[i] = center + spread * std::sin(0.7f * static_cast<float>(i) + static_cast<float>(salt));
    return v;
  };
  const auto f32 = [&](const std::string& name, std::vector<float> v) {
    const auto n = static_cast<int64_t>(v.size());
    w.add_tensor(name, DType::f32, {n},
                 std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)));
  };
  const auto matrix = [&](const std::string& name, int64_t cols, int64_t rows) {  // ne = {cols, rows}
    const std::vector<float> v = values(cols * rows, 0.0f, 1.0f / std::sqrt(static_cast<float>(cols)));
    const size_t row_bytes = alap::kernels::dtype_row_bytes(*alap::kernels::dtype_info(static_cast<uint32_t>(t.dt)),
                                                            static_cast<uint64_t>(cols));
    std::vector<uint8_t> bytes(row_bytes * static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      alap::kernels::quantize_row(t.dt, v.data() + r * cols, bytes.data() + static_cast<size_t>(r) * row_bytes,
                                  static_cast<size_t>(cols));
    }
    w.add_tensor(name, t.dt, {cols, rows}, bytes);
  };
  const int64_t V = static_cast<int64_t>(tokens.size());
  matrix("token_embd.weight", t.E, V);
  f32("output_norm.weight", values(t.E, 1.0f, 0.1f));
  if (!t.tied) matrix("output.weight", t.E, V);
  for (int64_t l = 0; l < t.L; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    f32(b + "attn_norm.weight", values(t.E, 1.0f, 0.1f));
    matrix(b + "attn_q.weight", t.E, t.H * t.D);
    matrix(b + "attn_k.weight", t.E, t.Hk * t.D);
    matrix(b + "attn_v.weight", t.E, t.Hk * t.D);
    if (t.biases) {
      f32(b + "attn_q.bias", values(t.H * t.D, 0.0f, 0.1f));
      f32(b + "attn_k.bias", values(t.Hk * t.D, 0.0f, 0.1f));
      f32(b + "attn_v.bias", values(t.Hk * t.D, 0.0f, 0.1f));
    }
    matrix(b + "attn_output.weight", t.H * t.D, t.E);
    f32(b + "ffn_norm.weight", values(t.E, 1.0f, 0.1f));
    matrix(b + "ffn_gate.weight", t.E, t.F);
    matrix(b + "ffn_up.weight", t.E, t.F);
    matrix(b + "ffn_down.weight", t.F, t.E);
  }
  return w.to_bytes();
}

void engine_seeds(const fs::path& dir) {
  const auto with_flags = [](uint8_t flags, std::vector<uint8_t> file) {
    file.insert(file.begin(), flags);
    return file;
  };
  // llama, f16 matrices, head_dim 8: the f16 cache, raw prompt, greedy.
  put(dir, "llama_f16.bin", with_flags(0x40, tiny_model({"llama", DType::f16, 16, 2, 1, 8, 16, 1, false, false, false})));
  // qwen2 with biases, Q8_0 matrices, tied output, head_dim 32: the k8 cache, chat through the template.
  put(dir, "qwen2_q8_0_k8.bin", with_flags(0x28, tiny_model({"qwen2", DType::q8_0, 32, 2, 1, 32, 32, 1, true, true, true})));
  // two layers, Q4_0, head_dim 32: k8v8, chat without a template (the ChatML fallback), sampled.
  put(dir, "llama_q4_0_k8v8.bin", with_flags(0x31, tiny_model({"llama", DType::q4_0, 32, 2, 1, 32, 32, 2, false, false, false})));
  // a file the engine refuses: the last tensor's data cut short.
  std::vector<uint8_t> cut = tiny_model({"llama", DType::f16, 16, 2, 1, 8, 16, 1, false, false, false});
  cut.resize(cut.size() - 40);
  put(dir, "truncated.bin", with_flags(0x00, std::move(cut)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fuzz_seed_maker <tests/fuzz/corpus>\n";
    return 2;
  }
  const fs::path root = argv[1];
  gguf_seeds(root / "gguf_reader_fuzz");
  json_seeds(root / "store_json_import_fuzz");
  spm_seeds(root / "spm_tokenizer_fuzz");
  bpe_seeds(root / "bpe_tokenizer_fuzz");
  template_seeds(root / "chat_template_fuzz");
  hf_seeds(root / "hf_api_fuzz");
  engine_seeds(root / "engine_load_fuzz");
  return 0;
}
