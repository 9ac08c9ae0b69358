// make_random_model: writes a random-weight llama-family GGUF of a real model's shape, for CPU
// benchmarks (docs/bench/cpu.md). Not a test and not a usable model: the weights are noise.
//
//   make_random_model qwen2.5-0.5b q8_0 /tmp/qwen05-q8_0.gguf
//   make_random_model llama3.2-1b q4_k /tmp/llama1b-q4_k.gguf
//   make_random_model llama3.2-1b q2_k /tmp/llama1b-q2_k.gguf
//
// Shapes: qwen2.5-0.5b (E 896, 24 layers, H 14, Hk 2, head_dim 64, F 4864, V 151936, tied, qkv
// bias), llama3.2-1b (E 2048, 16 layers, H 32, Hk 8, head_dim 64, F 8192, V 128256, tied) and
// llama3-8b (E 4096, 32 layers, H 32, Hk 8, head_dim 128, F 14336, V 128256, output.weight of its own);
// for attention's group sizes also smollm2-1.7b (E 2048, 24 layers, H 32, Hk 32: one query head a KV
// head, head_dim 64, F 8192, V 49152, tied), qwen2.5-1.5b (E 1536, 28 layers, H 12, Hk 2, head_dim
// 128, F 8960, V 151936, tied, qkv bias) and llama3.2-3b (E 3072, 28 layers, H 24, Hk 8, head_dim
// 128, F 8192, V 128256, tied).
// Types: q8_0 (every matrix) or q4_k (Q4_K where the row length is a multiple of 256, else Q5_0,
// the fallback llama.cpp uses; token_embd Q6_K or Q8_0); likewise q2_k, q3_k, q5_k, q6_k (Q5_0
// fallback, token_embd Q6_K), iq4_xs (IQ4_NL fallback, as llama-quantize's IQ4_XS mix; token_embd Q6_K or
// Q8_0) and the blocks of 32 q4_0, q4_1, q5_0, q5_1, iq4_nl (every matrix; token_embd Q8_0);
// f16 and bf16 (every matrix and token_embd, as a converter's unquantised file). To keep making a 1B model fast, each
// matrix's rows are drawn from a pool of 97 distinct random quantised rows (the bytes a forward
// pass reads are as many as in a real model; only their variety is smaller).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"
#include "core/gguf/gguf.h"

using namespace alap;
using kernels::DType;

namespace {

struct Shape {
  std::string arch;
  int64_t E, n_layer, H, Hk, D, F, V;
  bool qkv_bias;
  float rope_base;
  bool tied = true;
};

std::vector<uint8_t> random_matrix(DType t, int64_t cols, int64_t rows, float sd, std::mt19937& rng) {
  const auto& info = *kernels::dtype_info(static_cast<uint32_t>(t));
  const size_t rb = kernels::dtype_row_bytes(info, static_cast<uint64_t>(cols));
  constexpr size_t kPool = 97;
  std::normal_distribution<float> nd(0.0f, sd);
  std::vector<float> src(static_cast<size_t>(cols));
  std::vector<uint8_t> pool(kPool * rb);
  for (size_t p = 0; p < kPool; ++p) {
    for (auto& v : src) v = nd(rng);
    kernels::quantize_row(t, src.data(), pool.data() + p * rb, src.size());
  }
  std::vector<uint8_t> out(static_cast<size_t>(rows) * rb);
  for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
    std::copy_n(pool.data() + (r * 31 % kPool) * rb, rb, out.data() + r * rb);
  }
  return out;
}

std::vector<uint8_t> random_f32(int64_t n, float center, float spread, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(center - spread, center + spread);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr,
                 "usage: make_random_model qwen2.5-0.5b|llama3.2-1b|llama3-8b|smollm2-1.7b|qwen2.5-1.5b|llama3.2-3b|"
                 "qwen3-0.6b|qwen3-1.7b TYPE OUT.gguf\n"
                         "  TYPE: q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k f16 bf16 iq4_nl iq4_xs\n");
    return 2;
  }
  const std::string which = argv[1], type = argv[2];
  Shape s;
  if (which == "qwen2.5-0.5b") {
    s = {"qwen2", 896, 24, 14, 2, 64, 4864, 151936, true, 1000000.0f};
  } else if (which == "llama3.2-1b") {
    s = {"llama", 2048, 16, 32, 8, 64, 8192, 128256, false, 500000.0f};
  } else if (which == "llama3-8b") {
    s = {"llama", 4096, 32, 32, 8, 128, 14336, 128256, false, 500000.0f, false};
  } else if (which == "smollm2-1.7b") {
    s = {"llama", 2048, 24, 32, 32, 64, 8192, 49152, false, 130000.0f};
  } else if (which == "qwen2.5-1.5b") {
    s = {"qwen2", 1536, 28, 12, 2, 128, 8960, 151936, true, 1000000.0f};
  } else if (which == "llama3.2-3b") {
    s = {"llama", 3072, 28, 24, 8, 128, 8192, 128256, false, 500000.0f};
  } else if (which == "qwen3-0.6b") {  // q/k norms (per-head RMSNorm before RoPE), no biases
    s = {"qwen3", 1024, 28, 16, 8, 128, 3072, 151936, false, 1000000.0f};
  } else if (which == "qwen3-1.7b") {
    s = {"qwen3", 2048, 28, 16, 8, 128, 6144, 151936, false, 1000000.0f};
  } else {
    std::fprintf(stderr, "make_random_model: unknown shape %s\n", which.c_str());
    return 2;
  }
  const struct {
    const char* name;
    DType t;
  } kTypes[] = {{"q8_0", DType::q8_0}, {"q4_0", DType::q4_0}, {"q4_1", DType::q4_1}, {"q5_0", DType::q5_0},
                {"q5_1", DType::q5_1}, {"q2_k", DType::q2_k}, {"q3_k", DType::q3_k}, {"q4_k", DType::q4_k},
                {"q5_k", DType::q5_k}, {"q6_k", DType::q6_k}, {"f16", DType::f16},  {"bf16", DType::bf16},
                {"iq4_nl", DType::iq4_nl}, {"iq4_xs", DType::iq4_xs}};
  DType main_type = DType::f32;
  for (const auto& e : kTypes) {
    if (type == e.name) main_type = e.t;
  }
  if (main_type == DType::f32) {
    std::fprintf(stderr, "make_random_model: unknown type %s (q8_0 q4_0 q4_1 q5_0 q5_1 q2_k q3_k q4_k q5_k q6_k f16 bf16 "
                 "iq4_nl iq4_xs)\n",
                 type.c_str());
    return 2;
  }
  const bool k_quant = kernels::dtype_info(static_cast<uint32_t>(main_type))->block_elems == 256;
  const DType fallback = main_type == DType::iq4_xs ? DType::iq4_nl : DType::q5_0;
  auto mat_type = [&](int64_t cols) { return !k_quant || cols % 256 == 0 ? main_type : fallback; };
  std::mt19937 rng(42);
  gguf::Writer w;
  const std::string A = s.arch + ".";
  w.set("general.architecture", gguf::Value::string(s.arch));
  w.set("general.name", gguf::Value::string("random " + which + " " + type));
  w.set(A + "context_length", gguf::Value::u32(32768));
  w.set(A + "embedding_length", gguf::Value::u32(static_cast<uint32_t>(s.E)));
  w.set(A + "block_count", gguf::Value::u32(static_cast<uint32_t>(s.n_layer)));
  w.set(A + "feed_forward_length", gguf::Value::u32(static_cast<uint32_t>(s.F)));
  w.set(A + "attention.head_count", gguf::Value::u32(static_cast<uint32_t>(s.H)));
  w.set(A + "attention.head_count_kv", gguf::Value::u32(static_cast<uint32_t>(s.Hk)));
  w.set(A + "attention.key_length", gguf::Value::u32(static_cast<uint32_t>(s.D)));
  w.set(A + "attention.value_length", gguf::Value::u32(static_cast<uint32_t>(s.D)));
  w.set(A + "attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-6f));
  w.set(A + "rope.freq_base", gguf::Value::f32(s.rope_base));
  std::vector<std::string> toks(static_cast<size_t>(s.V));
  for (size_t i = 0; i < toks.size(); ++i) {
    char name[32];  // snprintf, not "t" + to_string(i): GCC 12 -O3 warns falsely (-Wrestrict) there
    std::snprintf(name, sizeof name, "t%zu", i);
    toks[i] = name;
  }
  w.set("tokenizer.ggml.model", gguf::Value::string("llama"));  // so alap-cli bench can load the file
  w.set("tokenizer.ggml.tokens", gguf::Value::array_of_strings(toks));

  const float sd = 1.0f / std::sqrt(static_cast<float>(s.E));
  const bool plain = main_type == DType::f16 || main_type == DType::bf16;
  const DType embd_type = plain ? main_type : k_quant && s.E % 256 == 0 ? DType::q6_k : DType::q8_0;
  auto add = [&](const std::string& name, DType t, int64_t cols, int64_t rows, float sdev) {
    w.add_tensor(name, t, {cols, rows}, random_matrix(t, cols, rows, sdev, rng));
  };
  add("token_embd.weight", embd_type, s.E, s.V, 1.0f);
  w.add_tensor("output_norm.weight", DType::f32, {s.E}, random_f32(s.E, 1.0f, 0.1f, rng));
  if (!s.tied) add("output.weight", embd_type, s.E, s.V, sd);
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    w.add_tensor(b + "attn_norm.weight", DType::f32, {s.E}, random_f32(s.E, 1.0f, 0.1f, rng));
    w.add_tensor(b + "ffn_norm.weight", DType::f32, {s.E}, random_f32(s.E, 1.0f, 0.1f, rng));
    add(b + "attn_q.weight", mat_type(s.E), s.E, s.H * s.D, sd);
    add(b + "attn_k.weight", mat_type(s.E), s.E, s.Hk * s.D, sd);
    add(b + "attn_v.weight", mat_type(s.E), s.E, s.Hk * s.D, sd);
    if (s.qkv_bias) {
      w.add_tensor(b + "attn_q.bias", DType::f32, {s.H * s.D}, random_f32(s.H * s.D, 0.0f, 0.1f, rng));
      w.add_tensor(b + "attn_k.bias", DType::f32, {s.Hk * s.D}, random_f32(s.Hk * s.D, 0.0f, 0.1f, rng));
      w.add_tensor(b + "attn_v.bias", DType::f32, {s.Hk * s.D}, random_f32(s.Hk * s.D, 0.0f, 0.1f, rng));
    }
    if (s.arch == "qwen3") {
      w.add_tensor(b + "attn_q_norm.weight", DType::f32, {s.D}, random_f32(s.D, 1.0f, 0.1f, rng));
      w.add_tensor(b + "attn_k_norm.weight", DType::f32, {s.D}, random_f32(s.D, 1.0f, 0.1f, rng));
    }
    add(b + "attn_output.weight", mat_type(s.H * s.D), s.H * s.D, s.E, sd);
    add(b + "ffn_gate.weight", mat_type(s.E), s.E, s.F, sd);
    add(b + "ffn_up.weight", mat_type(s.E), s.E, s.F, sd);
    add(b + "ffn_down.weight", mat_type(s.F), s.F, s.E, 1.0f / std::sqrt(static_cast<float>(s.F)));
  }
  w.write_file(argv[3]);
  std::printf("wrote %s\n", argv[3]);
  return 0;
}
