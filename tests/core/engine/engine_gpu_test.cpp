// The engine's GPU path without a GPU: gpu_layers = -1 with no library runs on the CPU with the
// probe's reason as a warning; with the host emulation of the GPU library (tests/support/
// host_gpu_ops.cpp) it runs all or some layers "on the GPU" and generates exactly the CPU's greedy
// tokens, reuses the cached prefix, reports the device's memory, and refuses a context that does
// not fit with the largest one that does.
#include <gtest/gtest.h>

#include "tests/support/scoped_env.h"
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "alap/kernels/quant.h"
#include "core/engine/engine.h"
#include "core/engine/engine_error.h"
#include "core/engine/perplexity.h"
#include "core/gguf/gguf.h"
#include "core/text/tokenizer.h"

namespace alap {
namespace {

namespace fs = std::filesystem;

using test::ScopedEnv;

// A 3-layer llama (head size 32, GQA 2) with a SentencePiece vocab: <unk> <s> </s>, 256 byte
// tokens, then letters and "▁" pieces. </s> is made unlikely so generation runs to max_tokens.
fs::path write_model(const fs::path& dir) {
  std::vector<std::string> toks{"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types{2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    toks.push_back(buf);
    types.push_back(6);
  }
  for (const char* p : {"\xE2\x96\x81", "a", "b", "c", "d", "e", "o", "s", "t", "\xE2\x96\x81" "a", "\xE2\x96\x81" "t"}) {
    toks.push_back(p);
    types.push_back(1);
  }
  std::vector<float> scores(toks.size(), 0.0f);
  for (size_t i = 259; i < toks.size(); ++i) scores[i] = -static_cast<float>(i);
  const int64_t V = static_cast<int64_t>(toks.size()), E = 64, H = 4, Hk = 2, D = 32, F = 96, L = 3;
  gguf::Writer w;
  w.set("general.architecture", gguf::Value::string("llama"));
  w.set("general.name", gguf::Value::string("tiny-gpu-engine-test"));
  w.set("llama.context_length", gguf::Value::u32(256));
  w.set("llama.embedding_length", gguf::Value::u32(E));
  w.set("llama.block_count", gguf::Value::u32(L));
  w.set("llama.feed_forward_length", gguf::Value::u32(F));
  w.set("llama.attention.head_count", gguf::Value::u32(H));
  w.set("llama.attention.head_count_kv", gguf::Value::u32(Hk));
  w.set("llama.attention.key_length", gguf::Value::u32(D));
  w.set("llama.attention.value_length", gguf::Value::u32(D));
  w.set("llama.attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-5f));
  w.set("llama.rope.freq_base", gguf::Value::f32(10000.0f));
  w.set("tokenizer.ggml.model", gguf::Value::string("llama"));
  w.set("tokenizer.ggml.tokens", gguf::Value::array_of_strings(toks));
  w.set("tokenizer.ggml.scores", gguf::Value::array_of_f32(scores));
  w.set("tokenizer.ggml.token_type", gguf::Value::array_of_i32(types));
  w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(1));
  w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(2));
  w.set("tokenizer.ggml.unknown_token_id", gguf::Value::u32(0));
  w.set("tokenizer.ggml.add_bos_token", gguf::Value::boolean(true));
  w.set("tokenizer.ggml.add_space_prefix", gguf::Value::boolean(true));
  std::mt19937 rng(11);
  auto add = [&](const std::string& name, std::vector<int64_t> ne, float center, float spread) {
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    std::uniform_real_distribution<float> u(center - spread, center + spread);
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = u(rng);
    w.add_tensor(name, kernels::DType::f32, std::move(ne),
                 std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)));
    return v;
  };
  auto mat = [&](const std::string& name, int64_t cols, int64_t rows) {
    add(name, {cols, rows}, 0.0f, 2.5f / std::sqrt(static_cast<float>(cols)));
  };
  mat("token_embd.weight", E, V);
  add("output_norm.weight", {E}, 1.0f, 0.2f);
  mat("output.weight", E, V);
  // Only byte-free pieces are likely (the text stays ASCII); </s> never wins.
  std::vector<float> bias(static_cast<size_t>(V), -30.0f);
  for (size_t i = 259; i < bias.size(); ++i) bias[i] = 0.0f;
  w.add_tensor("output.bias", kernels::DType::f32, {V},
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bias.data()), bias.size() * sizeof(float)));
  for (int64_t l = 0; l < L; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", {E}, 1.0f, 0.2f);
    mat(b + "attn_q.weight", E, H * D);
    mat(b + "attn_k.weight", E, Hk * D);
    mat(b + "attn_v.weight", E, Hk * D);
    mat(b + "attn_output.weight", H * D, E);
    add(b + "ffn_norm.weight", {E}, 1.0f, 0.2f);
    mat(b + "ffn_gate.weight", E, F);
    mat(b + "ffn_up.weight", E, F);
    mat(b + "ffn_down.weight", F, E);
  }
  const fs::path path = dir / "tiny-gpu.gguf";
  w.write_file(path);
  return path;
}

class EngineGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("alap_engine_gpu_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = write_model(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Greedy generation of n tokens from a raw prompt.
  static GenerateResult greedy(Engine& e, const std::string& prompt, int n) {
    GenerateRequest r;
    r.prompt = prompt;
    r.sampling.temperature = 0.0f;
    r.max_tokens = n;
    std::atomic<bool> cancel{false};
    return e.generate(r, {}, cancel);
  }

  fs::path dir_, model_;
};

LoadParams params(int32_t gpu_layers, CacheMode mode = CacheMode::k8) {
  LoadParams p;
  p.n_ctx = 128;
  p.n_threads = 2;
  p.cache_mode = mode;
  p.gpu_layers = gpu_layers;
  return p;
}

TEST_F(EngineGpu, AutoWithoutLibraryRunsOnCpuWithTheReason) {
  ScopedEnv env("ALAP_GPU_LIBRARY", (dir_ / "no-such-libalap_gpu.so").string());
  EXPECT_EQ(default_gpu_layers(), 0);
  Engine cpu, e;
  cpu.load(model_, params(0));
  e.load(model_, params(-1));
  const ModelInfo info = e.model_info();
  EXPECT_EQ(info.backend, "CPU");
  EXPECT_EQ(info.gpu_layers, 0);
  // Auto on a machine without a GPU is normal: the reason is kept, but it is not a warning.
  EXPECT_EQ(info.gpu_status, ModelInfo::GpuStatus::no_library);
  EXPECT_EQ(info.gpu_reason, "this build has no GPU library (libalap_gpu.so not found): running on the CPU");
  EXPECT_EQ(cpu.model_info().warnings, info.warnings);
  EXPECT_EQ(cpu.model_info().gpu_status, ModelInfo::GpuStatus::not_requested);
  EXPECT_EQ(info.cpu_kernels, cpu_kernels_label());
  EXPECT_FALSE(info.cpu_kernels.empty());
  EXPECT_EQ(backend_summary(info), "CPU, 2 threads, " + cpu_kernels_label() + " kernels");
  // Layers asked for by number that cannot be honoured are a warning.
  Engine asked;
  asked.load(model_, params(2));
  const ModelInfo ai = asked.model_info();
  EXPECT_EQ(ai.gpu_status, ModelInfo::GpuStatus::no_library);
  EXPECT_EQ(cpu.model_info().warnings.size() + 1, ai.warnings.size());
  EXPECT_NE(std::find(ai.warnings.begin(), ai.warnings.end(), ai.gpu_reason), ai.warnings.end());
  const GenerateResult a = greedy(cpu, "a b", 12), b = greedy(e, "a b", 12);
  EXPECT_EQ(a.tokens.size(), 12u);
  EXPECT_EQ(a.tokens, b.tokens);
}

// A library of another version of Alap (here: another interface version) is not used: the engine
// runs on the CPU and says why, in a status of its own (the app's note asks for a reinstall).
TEST_F(EngineGpu, LibraryOfAnotherVersionRunsOnCpuWithTheReason) {
  ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  ScopedEnv abi("ALAP_HOST_GPU_ABI", "1");
  EXPECT_EQ(default_gpu_layers(), 0);
  Engine e;
  e.load(model_, params(2));
  const ModelInfo info = e.model_info();
  EXPECT_EQ(info.backend, "CPU");
  EXPECT_EQ(info.gpu_layers, 0);
  EXPECT_EQ(info.gpu_status, ModelInfo::GpuStatus::other_version);
  EXPECT_NE(info.gpu_reason.find("has interface version 1"), std::string::npos) << info.gpu_reason;
  EXPECT_NE(std::find(info.warnings.begin(), info.warnings.end(), info.gpu_reason), info.warnings.end());
}

TEST_F(EngineGpu, AllLayersOnTheEmulatedGpuGenerateTheCpuTokens) {
  ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  EXPECT_EQ(default_gpu_layers(), -1);
  for (CacheMode mode : {CacheMode::f16, CacheMode::k8, CacheMode::k8v8}) {
    Engine cpu, gpu;
    cpu.load(model_, params(0, mode));
    gpu.load(model_, params(-1, mode));
    const ModelInfo info = gpu.model_info();
    EXPECT_EQ(info.backend, "Host emulation");
    EXPECT_EQ(info.gpu_layers, 3);
    EXPECT_EQ(info.gpu_status, ModelInfo::GpuStatus::used);
    EXPECT_TRUE(info.gpu_reason.empty());
    EXPECT_GT(info.gpu_weights_bytes, 0u);
    EXPECT_EQ(backend_summary(info).rfind("GPU Host emulation, 3 of 3 layers (", 0), 0u) << backend_summary(info);
    const GenerateResult a = greedy(cpu, "a b c", 16), b = greedy(gpu, "a b c", 16);
    EXPECT_EQ(a.tokens.size(), 16u);
    EXPECT_EQ(a.tokens, b.tokens) << cache_mode_name(mode);
    EXPECT_EQ(a.text, b.text);
    // The next turn reuses the cached prefix on the GPU path too.
    const GenerateResult a2 = greedy(cpu, "a b c" + a.text + " t", 8), b2 = greedy(gpu, "a b c" + b.text + " t", 8);
    EXPECT_GT(b2.stats.n_reused_tokens, 10u);
    EXPECT_EQ(a2.stats.n_reused_tokens, b2.stats.n_reused_tokens);
    EXPECT_EQ(a2.tokens, b2.tokens);
    const MemoryReport m = gpu.memory_report();
    EXPECT_EQ(m.device_total_bytes, 1ull << 30);
    EXPECT_EQ(m.weights_bytes, info.gpu_weights_bytes);
    EXPECT_LT(m.device_free_bytes, m.device_total_bytes);
    EXPECT_EQ(m.kv_fp16_bytes, cpu.memory_report().kv_fp16_bytes);
    EXPECT_EQ(m.kv_bytes, cpu.memory_report().kv_bytes);
    gpu.reset_context();
    EXPECT_EQ(gpu.memory_report().kv_bytes, 0u);
  }
}

// Sampled answers on the GPU draw from the device's best logits (the penalised ids among them):
// the same tokens, seed for seed, as drawing from whole rows (ALAP_GPU_TOP=0), with penalties
// and greedy alike; settings the best logits cannot decide (top-k off) fall back to whole rows.
TEST_F(EngineGpu, SampledAnswersFromTheBestLogitsMatchWholeRows) {
  ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  Engine top;
  top.load(model_, params(-1));
  Engine rows;
  {
    ScopedEnv off("ALAP_GPU_TOP", "0");
    rows.load(model_, params(-1));
  }
  for (int variant = 0; variant < 4; ++variant) {
    GenerateRequest r;
    r.prompt = "a b c";
    r.max_tokens = 24;
    r.sampling.seed = 7 + static_cast<uint64_t>(variant);
    r.sampling.temperature = variant == 3 ? 0.0f : 1.5f;
    if (variant >= 1) {
      r.sampling.repeat_penalty = 1.3f;
      r.sampling.presence_penalty = 0.4f;
      r.sampling.frequency_penalty = 0.2f;
      r.sampling.repeat_last_n = 8;
    }
    if (variant == 2) r.sampling.top_k = 0;
    std::atomic<bool> cancel{false};
    top.reset_context();
    rows.reset_context();
    const GenerateResult a = top.generate(r, {}, cancel), b = rows.generate(r, {}, cancel);
    EXPECT_EQ(a.tokens.size(), 24u) << "variant " << variant;
    EXPECT_EQ(a.tokens, b.tokens) << "variant " << variant;
    EXPECT_EQ(a.text, b.text);
  }
}

TEST_F(EngineGpu, DefaultCacheModeIsK8OnTheGpuAndOnTheCpu) {
  LoadParams p = params(-1, CacheMode::k8v8);
  p.cache_mode_default = true;  // the person chose no mode: cache_mode is ignored
  {
    ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
    Engine gpu;
    gpu.load(model_, p);
    EXPECT_EQ(gpu.model_info().gpu_layers, 3);
    EXPECT_EQ(gpu.model_info().cache_mode, CacheMode::k8);
  }
  ScopedEnv env("ALAP_GPU_LIBRARY", (dir_ / "no-such-libalap_gpu.so").string());
  Engine cpu;
  cpu.load(model_, p);
  EXPECT_EQ(cpu.model_info().gpu_layers, 0);
  EXPECT_EQ(cpu.model_info().cache_mode, CacheMode::k8);
  p.cache_mode_default = false;  // a chosen mode is kept wherever the model runs
  cpu.load(model_, p);
  EXPECT_EQ(cpu.model_info().cache_mode, CacheMode::k8v8);
}

TEST_F(EngineGpu, PartialOffloadMatchesTheCpu) {
  ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  Engine cpu, gpu;
  cpu.load(model_, params(0));
  gpu.load(model_, params(2));
  EXPECT_EQ(gpu.model_info().gpu_layers, 2);
  EXPECT_NE(backend_summary(gpu.model_info()).find("2 of 3 layers"), std::string::npos);
  const GenerateResult a = greedy(cpu, "t o", 16), b = greedy(gpu, "t o", 16);
  EXPECT_EQ(a.tokens, b.tokens);
  // More layers than the model has: all of them.
  Engine all;
  all.load(model_, params(99));
  EXPECT_EQ(all.model_info().gpu_layers, 3);
}

TEST_F(EngineGpu, PrefillChunkIsLargerWhereTheDeviceHoldsIt) {
  ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  LoadParams p = params(-1);
  p.n_ctx = 4096;
  Engine e;
  e.load(model_, p);
  ASSERT_EQ(e.model_info().gpu_layers, 3);
  EXPECT_EQ(e.model_info().prefill_chunk, 2048u);  // a tiny model's scratch: far under 256 MiB more
  p.n_ctx = 300;
  e.load(model_, p);
  EXPECT_EQ(e.model_info().prefill_chunk, 300u);
  p.gpu_layers = 2;  // layers left to the CPU: its batch
  p.n_ctx = 4096;
  e.load(model_, p);
  EXPECT_EQ(e.model_info().prefill_chunk, 128u);
  p.gpu_layers = 0;  // the CPU alone: 256 where the AMX tiles run with two threads or more (prefill_chunk.h)
  e.load(model_, p);
  const bool tiles = kernels::amx_prefill_active() && e.model_info().n_threads >= 2;
  EXPECT_EQ(e.model_info().prefill_chunk, tiles ? 256u : 128u);
  // A 2500-token prompt in chunks of 2048 and 452 gives the CPU's tokens.
  std::string prompt;
  for (int i = 0; i < 2500; ++i) prompt += static_cast<char>('a' + i % 7);
  const GenerateResult cpu = greedy(e, prompt, 3);
  p.gpu_layers = -1;
  e.load(model_, p);
  ASSERT_EQ(e.model_info().prefill_chunk, 2048u);
  const GenerateResult gpu = greedy(e, prompt, 3);
  EXPECT_GT(gpu.stats.n_prefill_tokens, 2048u);
  EXPECT_EQ(gpu.tokens, cpu.tokens);
}

TEST_F(EngineGpu, ContextThatDoesNotFitIsRefusedWithTheLargestThatDoes) {
  ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  ScopedEnv budget("ALAP_HOST_GPU_MEMORY", std::to_string(2u << 20));
  LoadParams p = params(3, CacheMode::f16);
  p.n_ctx = 200000;
  p.memory_limit_bytes = 64ull << 30;  // the host is not what limits here
  Engine e;
  try {
    e.load(model_, p);
    FAIL() << "a context beyond the device's memory was accepted";
  } catch (const EngineError& err) {
    const std::string w = err.what();
    EXPECT_NE(w.find(model_.string()), std::string::npos) << w;
    EXPECT_NE(w.find("3 layers with a context of 200000 tokens in f16 need"), std::string::npos) << w;
    EXPECT_NE(w.find("the largest context that fits is (tokens) f16 "), std::string::npos) << w;
    EXPECT_NE(w.find(", k8 "), std::string::npos) << w;
    EXPECT_NE(w.find(", k8v8 "), std::string::npos) << w;
  }
  EXPECT_FALSE(e.is_loaded());
  // Auto picks fewer layers instead (or the CPU), never an error.
  p.gpu_layers = -1;
  p.n_ctx = 4096;
  e.load(model_, p);
  EXPECT_LT(e.model_info().gpu_layers, 3);
  EXPECT_EQ(greedy(e, "a", 4).tokens.size(), 4u);
}

// ModelInfo says whether long prompts take the vendor BLAS, and why not: not when the library has
// none (not found here), yes when it has one (the host emulation's, ALAP_HOST_GPU_BLAS=1) and every
// layer fits with it; the CPU has none. backend_summary says it in words.
TEST_F(EngineGpu, ModelInfoSaysWhetherPrefillTakesTheBlas) {
  ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  Engine plain;
  plain.load(model_, params(-1));
  EXPECT_EQ(plain.model_info().gpu_layers, 3);
  EXPECT_EQ(plain.model_info().gpu_blas, GpuBlasUse::not_found);
  EXPECT_EQ(plain.model_info().gpu_blas_name, "hostBLAS");
  EXPECT_NE(backend_summary(plain.model_info()).find("; long prompts on Alap's kernels (hostBLAS not found)"),
            std::string::npos)
      << backend_summary(plain.model_info());
  Engine cpu;
  cpu.load(model_, params(0));
  EXPECT_EQ(cpu.model_info().gpu_blas, GpuBlasUse::none);
  EXPECT_EQ(backend_summary(cpu.model_info()).find("long prompts"), std::string::npos);
  ScopedEnv blas("ALAP_HOST_GPU_BLAS", "1");
  Engine e;
  e.load(model_, params(-1));
  EXPECT_EQ(e.model_info().gpu_layers, 3);
  EXPECT_EQ(e.model_info().gpu_blas, GpuBlasUse::used);
  EXPECT_NE(backend_summary(e.model_info()).find("; long prompts through hostBLAS"), std::string::npos)
      << backend_summary(e.model_info());
  const GenerateResult a = greedy(plain, "a b c d e", 8), b = greedy(e, "a b c d e", 8);
  EXPECT_EQ(a.tokens.size(), 8u);
  EXPECT_EQ(b.tokens.size(), 8u);
}

// Perplexity (alap-cli perplexity) on the GPU: the host emulation's figure is the CPU's to the
// GPU pass's rounding, all layers or two of three, and the result says where it ran. "As many as
// fit" runs on the CPU with the reason when no layer fits or there is no library; layers asked for
// by number that do not fit are an error.
TEST_F(EngineGpu, PerplexityRunsOnTheGpuWhenAskedAndSaysWhere) {
  ScopedEnv env("ALAP_GPU_LIBRARY", ALAP_GPU_HOST_LIBRARY);
  const Model m = Model::load(model_);
  const Vocab vocab = vocab_from_gguf(m.file());
  const int32_t V = static_cast<int32_t>(m.hparams().n_vocab);
  std::vector<int32_t> ids(3 * 32);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = 259 + static_cast<int32_t>((i * 7 + 3) % static_cast<size_t>(V - 259));
  PerplexityParams p;
  p.n_ctx = 32;
  p.n_threads = 2;
  p.mode = CacheMode::k8;
  const PerplexityResult cpu = perplexity(m, vocab, ids, p);
  const std::string on_cpu = "CPU, 2 threads, " + cpu_kernels_label() + " kernels";
  EXPECT_EQ(cpu.backend, on_cpu);
  ASSERT_EQ(cpu.n_chunks, 3u);
  for (int32_t layers : {-1, 2}) {
    p.gpu_layers = layers;
    const PerplexityResult gpu = perplexity(m, vocab, ids, p);
    const std::string want = layers < 0 ? "GPU Host emulation, 3 of 3 layers" : "GPU Host emulation, 2 of 3 layers";
    EXPECT_EQ(gpu.backend.rfind(want, 0), 0u) << gpu.backend;
    EXPECT_EQ(gpu.n_scored, cpu.n_scored);
    EXPECT_NEAR(gpu.nll_mean, cpu.nll_mean, 1e-3 * std::fabs(cpu.nll_mean)) << "layers " << layers;
  }
  {
    ScopedEnv memory("ALAP_HOST_GPU_MEMORY", "4096");
    p.gpu_layers = -1;
    const PerplexityResult none_fit = perplexity(m, vocab, ids, p);
    EXPECT_EQ(none_fit.backend.rfind(on_cpu + "; not on the GPU: ", 0), 0u) << none_fit.backend;
    EXPECT_EQ(none_fit.nll_mean, cpu.nll_mean);
    p.gpu_layers = 3;
    EXPECT_THROW(perplexity(m, vocab, ids, p), EngineError);
  }
  ScopedEnv missing("ALAP_GPU_LIBRARY", (dir_ / "no-such-libalap_gpu.so").string());
  p.gpu_layers = -1;
  const PerplexityResult no_library = perplexity(m, vocab, ids, p);
  EXPECT_EQ(no_library.backend.rfind(on_cpu + "; no GPU: ", 0), 0u) << no_library.backend;
  EXPECT_EQ(no_library.nll_mean, cpu.nll_mean);
}

}  // namespace
}  // namespace alap
