// Model::load / read_hparams: what a tiny file maps to, and every refusal with its message.
#include <gtest/gtest.h>

#include <cstring>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "core/model/forward.h"
#include "core/model/model.h"
#include "core/runtime/kv_cache.h"
#include "core/runtime/thread_pool.h"
#include "tests/core/model/tiny_model.h"
#include "tests/support/scoped_env.h"

namespace alap {
namespace {

using test::TinyFile;
using test::TinySpec;

// Loads tf and returns the ModelError message ("" when it loads).
std::string load_error(const TinyFile& tf) {
  try {
    Model::from_file(tf.to_file());
  } catch (const ModelError& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_REFUSED(tf, needle)                                  \
  do {                                                              \
    const std::string msg = load_error(tf);                         \
    EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg; \
    EXPECT_NE(msg.find("tiny.gguf"), std::string::npos) << msg;     \
  } while (0)

TEST(Model, LoadsLlamaHParamsAndWeights) {
  TinySpec s;
  s.rope_freqs = true;
  s.linear_factor = 4.0f;
  TinyFile tf = test::make_tiny(s);
  const Model m = Model::from_file(tf.to_file());
  const ModelHParams& hp = m.hparams();
  EXPECT_EQ(hp.arch, Arch::llama);
  EXPECT_EQ(hp.n_vocab, 40);
  EXPECT_EQ(hp.n_ctx_train, 256);
  EXPECT_EQ(hp.n_embd, 64);
  EXPECT_EQ(hp.n_layer, 2);
  EXPECT_EQ(hp.n_ff, 96);
  EXPECT_EQ(hp.n_head, 4);
  EXPECT_EQ(hp.n_head_kv, 2);
  EXPECT_EQ(hp.head_dim_k, 16);
  EXPECT_EQ(hp.n_rot, 16);
  EXPECT_EQ(hp.rope_type, RopeType::normal);
  EXPECT_FLOAT_EQ(hp.rope_freq_scale, 0.25f);
  EXPECT_FLOAT_EQ(hp.rms_eps, 1e-5f);
  EXPECT_TRUE(hp.has_rope_freqs);
  EXPECT_FALSE(m.weights().tied_output);
  EXPECT_EQ(m.weights().rope_freqs.size(), 8u);
  EXPECT_EQ(m.weights().layers.size(), 2u);
  EXPECT_EQ(m.weights().layers[1].wq.n_rows, 64u);
  EXPECT_EQ(m.weights().layers[1].wq.n_cols, 64u);
  EXPECT_EQ(m.weights().layers[1].w_down.n_cols, 96u);
  EXPECT_TRUE(m.weights().layers[0].bq.empty());
  // n_params: embd + out (40·64 each) + norms + rope_freqs + 2 layers
  const uint64_t per_layer = 64 + 64 * 64 + 32 * 64 * 2 + 64 * 64 + 64 + 96 * 64 * 3;
  EXPECT_EQ(m.n_params(), 2u * 40 * 64 + 64 + 8 + 2 * per_layer);
  EXPECT_EQ(m.weights_bytes(), m.n_params() * 4);
}

TEST(Model, TiedOutputUsesTokenEmbedding) {
  TinySpec s;
  s.tied = true;
  ModelOptions off;
  off.pack_cpu = false;
  const Model plain = Model::from_file(test::make_tiny(s).to_file(), off);
  EXPECT_TRUE(plain.weights().tied_output);
  EXPECT_EQ(plain.weights().output.data, plain.weights().token_embd.data);  // one tensor serves both
  // Loaded for the CPU, the head gets the CPU's own copy (packed, or the same bytes on huge pages).
  const Model m = Model::from_file(test::make_tiny(s).to_file());
  EXPECT_TRUE(m.weights().tied_output);
  const kernels::WeightView& o = m.weights().output;
  if (o.packed == nullptr) {
    EXPECT_NE(o.data, m.weights().token_embd.data);
    EXPECT_EQ(std::memcmp(o.data, m.weights().token_embd.data, kernels::matrix_bytes(o)), 0);
  }
}

TEST(Model, Qwen2AndQwen3) {
  TinySpec s2;
  s2.arch = "qwen2";
  s2.qkv_bias = true;
  const Model m2 = Model::from_file(test::make_tiny(s2).to_file());
  EXPECT_EQ(m2.hparams().rope_type, RopeType::neox);
  EXPECT_EQ(m2.weights().layers[0].bk.size(), 32u);
  TinySpec s3;
  s3.arch = "qwen3";
  s3.qk_norm = true;
  s3.Dk = s3.Dv = 32;
  const Model m3 = Model::from_file(test::make_tiny(s3).to_file());
  EXPECT_EQ(m3.hparams().head_dim_k, 32);
  EXPECT_EQ(m3.weights().layers[0].q_norm.size(), 32u);
  EXPECT_EQ(m3.weights().layers[0].wq.n_rows, 128u);
}

TEST(Model, F16NormsAreConvertedToF32) {
  TinyFile tf = test::make_tiny(TinySpec{});
  test::TinyTensor* t = tf.find("blk.0.ffn_norm.weight");
  std::vector<uint8_t> half(t->values.size() * 2);
  kernels::quantize_row(kernels::DType::f16, t->values.data(), half.data(), t->values.size());
  t->type = kernels::DType::f16;
  t->bytes = half;
  const Model m = Model::from_file(tf.to_file());
  EXPECT_NEAR(m.weights().layers[0].ffn_norm[5], t->values[5], 1e-3);
}

TEST(ModelRefuses, UnknownArch) {
  TinySpec s;
  s.arch = "gpt2";
  EXPECT_REFUSED(test::make_tiny(s), "unknown or unsupported architecture 'gpt2' (supported: llama, qwen2, qwen3)");
}

TEST(ModelRefuses, MoeArchKeyAndTensor) {
  TinySpec s;
  s.arch = "qwen2moe";
  EXPECT_REFUSED(test::make_tiny(s), "qwen2moe is a mixture-of-experts (MoE) model");

  TinyFile a = test::make_tiny(TinySpec{});
  a.set("llama.expert_count", gguf::Value::u32(8));
  EXPECT_REFUSED(a, "key llama.expert_count = 8: mixture-of-experts (MoE)");

  TinyFile b = test::make_tiny(TinySpec{});
  b.set("llama.expert_used_count", gguf::Value::u32(2));
  EXPECT_REFUSED(b, "llama.expert_used_count = 2");

  TinyFile c = test::make_tiny(TinySpec{});
  std::mt19937 rng(1);
  test::add_random(c, rng, "blk.0.ffn_gate_inp.weight", {64, 8}, kernels::DType::f32, 0, 1);
  EXPECT_REFUSED(c, "tensor blk.0.ffn_gate_inp.weight is a mixture-of-experts (MoE) tensor");

  TinyFile d = test::make_tiny(TinySpec{});
  test::add_random(d, rng, "blk.1.ffn_up_exps.weight", {64, 96, 2}, kernels::DType::f32, 0, 1);
  EXPECT_REFUSED(d, "blk.1.ffn_up_exps.weight is a mixture-of-experts");
}

TEST(ModelRefuses, MissingTensorAndKey) {
  TinyFile a = test::make_tiny(TinySpec{});
  a.remove("blk.1.ffn_gate.weight");
  EXPECT_REFUSED(a, "missing tensor blk.1.ffn_gate.weight");

  TinySpec s2;
  s2.arch = "qwen2";  // qwen2 needs Q/K/V biases
  EXPECT_REFUSED(test::make_tiny(s2), "missing tensor blk.0.attn_q.bias");

  TinySpec s3;
  s3.arch = "qwen3";  // qwen3 needs q/k norms
  EXPECT_REFUSED(test::make_tiny(s3), "missing tensor blk.0.attn_q_norm.weight");

  TinyFile b = test::make_tiny(TinySpec{});
  for (size_t i = 0; i < b.kv.size(); ++i)
    if (b.kv[i].first == "llama.attention.layer_norm_rms_epsilon") b.kv.erase(b.kv.begin() + static_cast<long>(i));
  EXPECT_REFUSED(b, "missing required key llama.attention.layer_norm_rms_epsilon");
}

// A block count far beyond the tensors present is refused at once (a fuzzed file asked for a million
// blocks and the checks listed 16 million tensor specs).
TEST(ModelRefuses, BlockCountTheFileCannotHold) {
  TinyFile tf = test::make_tiny(TinySpec{});
  for (auto& kv : tf.kv)
    if (kv.first == "llama.block_count") kv.second = gguf::Value::u32(1000000);
  EXPECT_REFUSED(tf, "block_count is 1000000 but the file holds only");
  TinyFile one_more = test::make_tiny(TinySpec{});
  for (auto& kv : one_more.kv)
    if (kv.first == "llama.block_count") kv.second = gguf::Value::u32(3);  // the file has 2 blocks, 21 tensors
  EXPECT_REFUSED(one_more, "block_count is 3 but the file holds only 21 tensors");
}

TEST(ModelRefuses, WrongShape) {
  TinyFile tf = test::make_tiny(TinySpec{});
  test::TinyTensor* t = tf.find("blk.0.attn_k.weight");
  t->ne = {32, 64};  // transposed: expected [64, 32]
  EXPECT_REFUSED(tf, "tensor blk.0.attn_k.weight has shape [32, 64], expected [64, 32]");
}

TEST(ModelRefuses, UnsupportedTensorType) {
  TinySpec s;
  s.F = 256;
  TinyFile tf = test::make_tiny(s);
  test::TinyTensor* t = tf.find("blk.1.ffn_down.weight");  // [256, 64]
  t->type = kernels::DType::iq2_xxs;
  t->bytes.assign(64 * 66, 0);
  EXPECT_REFUSED(tf, "blk.1.ffn_down.weight has type IQ2_XXS, which Alap does not support");
}

TEST(ModelRefuses, PerLayerArraysScalingAndRot) {
  TinyFile a = test::make_tiny(TinySpec{});
  a.set("llama.feed_forward_length", gguf::Value::array_of_i32({96, 96}));
  EXPECT_REFUSED(a, "key llama.feed_forward_length is a per-layer array");

  TinyFile b = test::make_tiny(TinySpec{});
  b.set("llama.rope.scaling.type", gguf::Value::string("yarn"));
  EXPECT_REFUSED(b, "yarn RoPE scaling is not supported");

  TinyFile c = test::make_tiny(TinySpec{});
  c.set("llama.rope.dimension_count", gguf::Value::u32(8));
  EXPECT_REFUSED(c, "rope.dimension_count = 8 differs from the head dim 16");
}

TEST(ModelRefuses, PackedCacheWithHeadDim48) {
  TinySpec s;
  s.Dk = s.Dv = 48;
  const Model m = Model::from_file(test::make_tiny(s).to_file());
  EXPECT_NO_THROW(KvCache(kv_cache_config(m, CacheMode::f16, 8)));
  for (CacheMode mode : {CacheMode::k8, CacheMode::k8v8}) {
    try {
      KvCache c(kv_cache_config(m, mode, 8));
      ADD_FAILURE() << "packed cache accepted head_dim 48";
    } catch (const KvCacheError& e) {
      EXPECT_NE(std::string(e.what()).find("head_dim 48"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(cache_mode_name(mode)), std::string::npos) << e.what();
    }
  }
}

TEST(Model, LoadsRealFileFromDisk) {
  const auto path = std::filesystem::temp_directory_path() / "alap_model_test_tiny.gguf";
  gguf::Writer w;
  const TinyFile tf = test::make_tiny(TinySpec{});
  for (const auto& e : tf.kv) w.set(e.first, e.second);
  for (const auto& t : tf.tensors) w.add_tensor(t.name, t.type, t.ne, t.bytes);
  w.write_file(path);
  ModelOptions o;
  o.prefault = true;
  const Model m = Model::load(path, o);
  EXPECT_EQ(m.hparams().n_layer, 2);
  EXPECT_EQ(m.file().get_string("general.architecture"), "llama");
  std::filesystem::remove(path);
}

// Packing for the CPU (Model::pack_for_cpu): which matrices get a packed copy, and that the
// logits stay those of the file's own layout.
std::vector<float> batch_logits(const Model& m, const std::vector<int32_t>& ids, size_t threads) {
  KvCache cache(kv_cache_config(m, CacheMode::f16, 16));
  ThreadPool pool(threads);
  Forward fwd(m, 8);
  auto out = fwd.run(cache, pool, ids, 0, LogitsMode::all);
  return {out.begin(), out.end()};
}

// The logits of every step of ids fed one token at a time (decode steps).
std::vector<float> decode_logits(const Model& m, const std::vector<int32_t>& ids, size_t threads) {
  KvCache cache(kv_cache_config(m, CacheMode::f16, 16));
  ThreadPool pool(threads);
  Forward fwd(m, 8);
  std::vector<float> all;
  for (size_t i = 0; i < ids.size(); ++i) {
    auto out = fwd.run(cache, pool, std::span<const int32_t>(&ids[i], 1), i, LogitsMode::all);
    all.insert(all.end(), out.begin(), out.end());
  }
  return all;
}

TinySpec packable_spec() {
  TinySpec s;
  s.wtype = kernels::DType::q8_0;
  s.V = 48;  // a multiple of 16: the output head packs too
  return s;
}

TEST(ModelPack, PacksEveryCpuMatrixAndKeepsTheLogits) {
  const TinyFile tf = test::make_tiny(packable_spec());
  ModelOptions off;
  off.pack_cpu = false;
  const Model plain = Model::from_file(tf.to_file(), off);
  if (kernels::packed_bytes(plain.weights().layers[0].wq) == 0) GTEST_SKIP() << "no packed layout on this CPU";
  Model packed = Model::from_file(tf.to_file());
  EXPECT_EQ(plain.packed_bytes(), 0u);
  EXPECT_GT(packed.packed_bytes(), 0u);
  for (const LayerWeights& L : packed.weights().layers) {
    for (const kernels::WeightView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
      EXPECT_NE(v->packed, nullptr);
      EXPECT_NE(v->data, nullptr);
    }
  }
  EXPECT_NE(packed.weights().output.packed, nullptr);
  EXPECT_EQ(packed.weights().token_embd.packed, nullptr);  // lookups read the file's rows
  EXPECT_EQ(packed.pack_for_cpu(0, true), 0u);              // nothing left to pack

  const std::vector<int32_t> ids = {3, 17, 0, 42, 9, 33};
  const std::vector<float> a = batch_logits(plain, ids, 1), b = batch_logits(packed, ids, 2);
  ASSERT_EQ(a.size(), b.size());
  float scale = 0.0f, diff = 0.0f;
  for (size_t i = 0; i < a.size(); ++i) {
    scale = std::max(scale, std::fabs(a[i]));
    diff = std::max(diff, std::fabs(a[i] - b[i]));
  }
  EXPECT_GT(scale, 0.1f);
  EXPECT_LE(diff, 1e-3f * scale) << "packed products drift from the file's layout";
  // The packed path gives the same bits whatever the thread count.
  EXPECT_EQ(batch_logits(packed, ids, 1), b);
}

// Matrices with no packed layout (here f32) are copied as they are into the model's own memory
// (which asks for huge pages): the same bytes, so the same logits bit for bit, and a second call
// finds nothing left to copy.
TEST(ModelPack, CopiesUnpackableMatricesAsTheyAre) {
  TinySpec s;
  s.wtype = kernels::DType::f32;
  s.V = 48;
  const TinyFile tf = test::make_tiny(s);
  ModelOptions off;
  off.pack_cpu = false;
  const Model plain = Model::from_file(tf.to_file(), off);
  Model copied = Model::from_file(tf.to_file());
  EXPECT_EQ(plain.packed_bytes(), 0u);
  EXPECT_GT(copied.packed_bytes(), 0u);
  for (size_t l = 0; l < copied.weights().layers.size(); ++l) {
    const kernels::WeightView& a = plain.weights().layers[l].w_up;
    const kernels::WeightView& b = copied.weights().layers[l].w_up;
    EXPECT_EQ(b.packed, nullptr);
    EXPECT_NE(a.data, b.data);
    EXPECT_EQ(std::memcmp(a.data, b.data, kernels::matrix_bytes(a)), 0);
  }
  EXPECT_EQ(copied.pack_for_cpu(0, true), 0u);  // nothing left to copy
  const std::vector<int32_t> ids = {3, 17, 0, 42, 9, 33};
  EXPECT_EQ(batch_logits(plain, ids, 2), batch_logits(copied, ids, 2));
}

// F16 and BF16 matrices are packed in runs of four rows (one stream for the one-token product);
// every row keeps the file layout's arithmetic, so the logits are those of the unpacked model bit
// for bit, with one thread and two, in a batch and token by token.
TEST(ModelPack, HalfMatricesPackWithTheFileLayoutsBits) {
  for (kernels::DType t : {kernels::DType::f16, kernels::DType::bf16}) {
    const char* name = kernels::dtype_info(static_cast<uint32_t>(t))->name;
    TinySpec s;
    s.wtype = t;
    s.V = 48;
    const TinyFile tf = test::make_tiny(s);
    ModelOptions off;
    off.pack_cpu = false;
    const Model plain = Model::from_file(tf.to_file(), off);
    if (kernels::packed_bytes(plain.weights().layers[0].wq) == 0) GTEST_SKIP() << "no packed layout on this CPU";
    const Model packed = Model::from_file(tf.to_file());
    for (const LayerWeights& L : packed.weights().layers) {
      for (const kernels::WeightView* v : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
        EXPECT_NE(v->packed, nullptr) << name;
      }
    }
    const std::vector<int32_t> ids = {3, 17, 0, 42, 9, 33};
    const std::vector<float> want = batch_logits(plain, ids, 1);
    EXPECT_EQ(batch_logits(packed, ids, 1), want) << name;
    EXPECT_EQ(batch_logits(packed, ids, 2), want) << name;
    // Token by token (the one-token products, which read the runs of four).
    EXPECT_EQ(decode_logits(packed, ids, 2), decode_logits(plain, ids, 2)) << name;
  }
}

TEST(ModelPack, PacksOnlyTheLayersAskedForAndCanBeTurnedOff) {
  const TinyFile tf = test::make_tiny(packable_spec());
  ModelOptions off;
  off.pack_cpu = false;
  Model m = Model::from_file(tf.to_file(), off);
  if (kernels::packed_bytes(m.weights().layers[0].wq) == 0) GTEST_SKIP() << "no packed layout on this CPU";
  EXPECT_GT(m.pack_for_cpu(1, false), 0u);  // layer 1 on the CPU, layer 0 and the head on a GPU
  EXPECT_EQ(m.weights().layers[0].wq.packed, nullptr);
  EXPECT_NE(m.weights().layers[1].wq.packed, nullptr);
  EXPECT_EQ(m.weights().output.packed, nullptr);

  TinySpec tied = packable_spec();
  tied.tied = true;
  const Model t = Model::from_file(test::make_tiny(tied).to_file());
  EXPECT_NE(t.weights().output.packed, nullptr);
  EXPECT_EQ(t.weights().token_embd.packed, nullptr);
  EXPECT_EQ(t.weights().output.data, t.weights().token_embd.data);

  test::ScopedEnv env("ALAP_CPU_PACK", "0");
  const Model none = Model::from_file(tf.to_file());
  EXPECT_EQ(none.packed_bytes(), 0u);
  EXPECT_EQ(none.weights().layers[0].wq.packed, nullptr);
}

}  // namespace
}  // namespace alap
