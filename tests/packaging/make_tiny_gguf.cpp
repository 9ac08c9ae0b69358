// make_tiny_gguf OUT.gguf: writes a tiny llama-shaped GGUF (metadata plus two small f32 tensors,
// 288 parameters) for the packaging test to run the installed alap-cli inspect on.
// Not a runnable model: it has no tokenizer and no layer weights.
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#include "core/gguf/gguf.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_tiny_gguf OUT.gguf\n");
    return 2;
  }
  try {
    namespace g = alap::gguf;
    g::Writer w;
    w.set("general.architecture", g::Value::string("llama"));
    w.set("general.name", g::Value::string("alap packaging test"));
    w.set("general.file_type", g::Value::u32(0));  // ALL_F32
    w.set("llama.context_length", g::Value::u32(128));
    w.set("llama.embedding_length", g::Value::u32(32));
    w.set("llama.block_count", g::Value::u32(2));
    w.set("llama.attention.head_count", g::Value::u32(4));
    w.set("llama.attention.head_count_kv", g::Value::u32(2));
    // token_embd [32 x 8] and output_norm [32]: 256 + 32 = 288 parameters.
    std::vector<float> embd(32 * 8), norm(32, 1.0f);
    for (size_t i = 0; i < embd.size(); ++i) embd[i] = static_cast<float>(i) / 256.0f;
    auto bytes = [](const std::vector<float>& v) {
      std::vector<uint8_t> out(v.size() * sizeof(float));
      std::memcpy(out.data(), v.data(), out.size());
      return out;
    };
    w.add_tensor("token_embd.weight", alap::kernels::DType::f32, {32, 8}, bytes(embd));
    w.add_tensor("output_norm.weight", alap::kernels::DType::f32, {32}, bytes(norm));
    w.write_file(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make_tiny_gguf: %s\n", e.what());
    return 1;
  }
  return 0;
}
