// Forward (run-time path) and forward_reference against an independent double-precision forward
// over tiny random llama / qwen2 / qwen3 models, in every cache mode and every weight type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/model/forward.h"
#include "tests/core/model/tiny_model.h"
#include "tests/support/scoped_amx.h"

namespace alap {
namespace {

using test::TinySpec;
const std::vector<int32_t> kPrompt = {3, 17, 5, 29, 0, 11, 38};  // 7 tokens, ids < 40

double max_abs_diff(std::span<const float> a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}
double max_abs_diff(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(double(a[i]) - b[i]));
  return m;
}
double max_abs(const std::vector<double>& a) {
  double m = 0;
  for (double x : a) m = std::max(m, std::fabs(x));
  return m;
}

// Logits [n][V] of the whole prompt as one batch through Forward.
std::vector<float> run_batch(const Model& m, CacheMode mode, const std::vector<int32_t>& ids, size_t threads,
                             size_t max_batch = 64) {
  KvCache cache(kv_cache_config(m, mode, std::max<size_t>(32, ids.size())));
  ThreadPool pool(threads);
  Forward fwd(m, max_batch);
  auto out = fwd.run(cache, pool, ids, 0, LogitsMode::all);
  EXPECT_EQ(cache.n_tokens(), ids.size());
  return {out.begin(), out.end()};
}

// Logits [n][V] of the prompt fed one token at a time (LogitsMode::last each step).
std::vector<float> run_stepwise(const Model& m, CacheMode mode, const std::vector<int32_t>& ids, size_t threads) {
  KvCache cache(kv_cache_config(m, mode, std::max<size_t>(32, ids.size())));
  ThreadPool pool(threads);
  Forward fwd(m, 4);
  std::vector<float> all;
  for (size_t t = 0; t < ids.size(); ++t) {
    auto out = fwd.run(cache, pool, std::span<const int32_t>(&ids[t], 1), t);
    all.insert(all.end(), out.begin(), out.end());
  }
  return all;
}

std::vector<float> run_reference(const Model& m, CacheMode mode, const std::vector<int32_t>& ids) {
  KvCache cache(kv_cache_config(m, mode, 32));
  return forward_reference(m, cache, ids, 0, LogitsMode::all);
}

// A prompt of n ids < 40 (every tiny model's vocabulary holds 40).
std::vector<int32_t> long_prompt(size_t n) {
  std::vector<int32_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 7 + i / 5) % 40);
  return ids;
}

// How many values of two logit arrays differ in their bits.
size_t count_different(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  size_t n = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
  return n;
}

struct ArchCase {
  const char* name;
  TinySpec spec;
};

TinySpec spec_of(const char* arch, auto&& tweak) {
  TinySpec s;
  s.arch = arch;
  tweak(s);
  return s;
}

const ArchCase kArchCases[] = {
    {"llama_untied_rope_freqs_linear", spec_of("llama", [](TinySpec& s) {
       s.rope_freqs = true;
       s.linear_factor = 2.0f;
       s.freq_base = 500.0f;
     })},
    {"llama_tied_biases", spec_of("llama", [](TinySpec& s) {
       s.tied = true;
       s.qkv_bias = true;
       s.out_bias = true;
       s.seed = 2;
     })},
    {"qwen2_biases_neox", spec_of("qwen2", [](TinySpec& s) {
       s.qkv_bias = true;
       s.tied = true;
       s.seed = 3;
     })},
    {"qwen3_qk_norm_wide_heads", spec_of("qwen3", [](TinySpec& s) {
       s.qk_norm = true;
       s.Dk = s.Dv = 32;  // H·Dk = 128 != E = 64
       s.seed = 4;
     })},
    {"llama_gqa_4_to_1", spec_of("llama", [](TinySpec& s) {
       s.H = 8;
       s.Hk = 2;
       s.Dk = s.Dv = 8;
       s.seed = 5;
     })},
};

class ForwardArch : public ::testing::TestWithParam<ArchCase> {};

TEST_P(ForwardArch, MatchesNaiveDoubleForward) {
  const test::TinyFile tf = test::make_tiny(GetParam().spec);
  const Model m = Model::from_file(tf.to_file());
  const std::vector<double> naive = test::naive_forward(tf, kPrompt, /*round_kv_f16=*/true);
  ASSERT_GT(max_abs(naive), 0.3);  // logits are not degenerate

  const std::vector<float> batch = run_batch(m, CacheMode::f16, kPrompt, 2);
  const std::vector<float> step = run_stepwise(m, CacheMode::f16, kPrompt, 2);
  const std::vector<float> ref = run_reference(m, CacheMode::f16, kPrompt);
  const std::vector<float> batch1 = run_batch(m, CacheMode::f16, kPrompt, 1, /*max_batch=*/3);  // chunked
  EXPECT_LT(max_abs_diff(batch, naive), 1e-3);
  EXPECT_LT(max_abs_diff(ref, naive), 1e-3);
  EXPECT_LT(max_abs_diff(step, batch), 1e-5);
  EXPECT_LT(max_abs_diff(batch1, batch), 1e-5);
  EXPECT_LT(max_abs_diff(ref, batch), 1e-3);  // both within 1e-3 of naive (fp16 K/V rounding may flip)
}

// k8 / k8v8: the fast path (int8 query × int8 keys) equals the reference's arithmetic; both stay
// near the unquantised result. "Equals" within 5e-4: the two paths' float values differ in the
// last bits (summation orders: ~1e-6 in every variant here), and the K/V codes and the query's
// int8 codes are rounded from them, so a value on a rounding boundary can take its neighbouring
// code in one path; one such flip moves a logit by ~1e-4 at these tiny dims (the scalar variant
// meets one in llama_gqa_4_to_1's k8v8: 2.5e-4, every other case ≤ 1.6e-5). k8v8 within 4e-3:
// the engine's packed V sum rounds each probability·scale to 16 bits (the v16 rule of
// kernels/attn.h, ~1.5e-5 of a key block's largest weight per key), which the reference's f32 sum
// does not; measured 2.7e-4 to 2.0e-3 here, a tenth of what int8 V itself moves these logits
// (0.019–0.032 against the naive forward). A wrong kernel is off by far more (and the naive bound
// below still holds).
TEST_P(ForwardArch, PackedCachesMatchReference) {
  const test::TinyFile tf = test::make_tiny(GetParam().spec);
  const Model m = Model::from_file(tf.to_file());
  const std::vector<double> naive = test::naive_forward(tf, kPrompt, /*round_kv_f16=*/false);
  for (CacheMode mode : {CacheMode::k8, CacheMode::k8v8}) {
    SCOPED_TRACE(cache_mode_name(mode));
    const std::vector<float> batch = run_batch(m, mode, kPrompt, 2);
    const std::vector<float> step = run_stepwise(m, mode, kPrompt, 1);
    const std::vector<float> ref = run_reference(m, mode, kPrompt);
    EXPECT_LT(max_abs_diff(batch, ref), mode == CacheMode::k8v8 ? 4e-3 : 5e-4);
    EXPECT_LT(max_abs_diff(step, batch), 1e-5);
    EXPECT_LT(max_abs_diff(batch, naive), 0.05);
  }
}

// A prefill batch of quantised weights and enough tokens a thread is split by tokens (each thread
// owns its tokens through a layer's products, norms and RoPE; Forward::Impl::eval_chunk), others
// by weight rows (f32 here). A token's arithmetic is the same either way and on any thread, so the
// logits are the same bits as one thread's, for 2 threads (35 + 35 tokens) and 3 (33 + 33 + 34 of
// 100), also when a prompt's first chunk is split by tokens and its last by rows (max_batch 64:
// 32 + 32, then 6 at position 64), and stepwise decode agrees. Each case runs 4 times: a thread
// that wrote where another reads shows as a difference only now and then.
// On a CPU with AMX a product call of 32 tokens or more sums bf16 products on the tiles (quant.h
// amx_prefill()), a shorter one int8 blocks: a token's bits then depend on whether its call had 32
// tokens. The cases run with the tiles refused, and again with them where every call keeps 32
// tokens or more (the same bits). The 64 + 6 split and stepwise decode then mix the two sums: on
// these random weights int8 blocks move logits up to ~3% of the largest (0.06-0.10 from the naive
// forward, the bf16 sums 0.03-0.05), so they agree within 5% of it (a wrong tile is off by far more).
// Calls fn(model, mode) for the case's model with Q8_0 and with f32 weights, in every cache mode.
template <class Fn>
void each_weight_type_and_mode(TinySpec spec, Fn&& fn) {
  for (kernels::DType wtype : {kernels::DType::q8_0, kernels::DType::f32}) {
    spec.wtype = wtype;
    const test::TinyFile tf = test::make_tiny(spec);
    const Model m = Model::from_file(tf.to_file());
    for (CacheMode mode : {CacheMode::f16, CacheMode::k8, CacheMode::k8v8}) {
      SCOPED_TRACE(std::string(kernels::dtype_info(static_cast<uint32_t>(wtype))->name) + " " + cache_mode_name(mode));
      fn(m, mode);
    }
  }
}

TEST_P(ForwardArch, LongBatchSplitByTokensSameBits) {
  const std::vector<int32_t> ids = long_prompt(100);
  const std::vector<int32_t> ids70(ids.begin(), ids.begin() + 70);
  const test::ScopedAmxPrefill guard(false);
  for (bool amx : {false, true}) {
    kernels::set_amx_prefill(amx);
    if (amx && !kernels::amx_prefill_active()) break;
    SCOPED_TRACE(amx ? "AMX tiles" : "no AMX tiles");
    each_weight_type_and_mode(GetParam().spec, [&](const Model& m, CacheMode mode) {
      const std::vector<float> one = run_batch(m, mode, ids, 1, 128);
      const std::vector<float> one70 = run_batch(m, mode, ids70, 1, 128);
      double largest = 0;
      for (float v : one70) largest = std::max(largest, double(std::fabs(v)));
      for (int rep = 0; rep < 4; ++rep) {
        EXPECT_EQ(count_different(run_batch(m, mode, ids, 3, 128), one), 0u);
        EXPECT_EQ(count_different(run_batch(m, mode, ids70, 2, 128), one70), 0u);
        const std::vector<float> split64 = run_batch(m, mode, ids70, 2, 64);
        if (amx) {
          EXPECT_LT(max_abs_diff(split64, one70), 0.05 * largest);
        } else {
          EXPECT_EQ(count_different(split64, one70), 0u);
        }
      }
      EXPECT_LT(max_abs_diff(run_stepwise(m, mode, ids70, 2), one70), amx ? 0.05 * largest : 1e-5);
    });
  }
}

// A decode token is split by KV groups where the groups share out evenly over the threads (each
// thread: its groups' q/k/v rows, RoPE, cache store and attention; Forward::Impl::eval_chunk): the
// logits of every step are the same bits as one thread's, for contexts of one and of two key blocks
// (260 steps), with 2 threads (a group each here) and 4 (more threads than groups: the other split).
TEST_P(ForwardArch, DecodeSplitByKvGroupsSameBits) {
  const std::vector<int32_t> ids = long_prompt(260);
  each_weight_type_and_mode(GetParam().spec, [&](const Model& m, CacheMode mode) {
    const std::vector<float> one = run_stepwise(m, mode, ids, 1);
    EXPECT_EQ(count_different(run_stepwise(m, mode, ids, 2), one), 0u);
    EXPECT_EQ(count_different(run_stepwise(m, mode, ids, 4), one), 0u);
  });
}

// Partial offload's entry (hidden states in, the later layers on the CPU) takes the same split:
// from layer 0 on the token embeddings it gives run()'s bits, and from layer 1 two threads give
// one thread's bits, with the layers counted from first_layer.
TEST_P(ForwardArch, RunFromHiddenSplitByTokensSameBits) {
  TinySpec spec = GetParam().spec;
  spec.wtype = kernels::DType::q8_0;
  const test::TinyFile tf = test::make_tiny(spec);
  const Model m = Model::from_file(tf.to_file());
  const std::vector<int32_t> ids = long_prompt(70);
  const size_t E = static_cast<size_t>(spec.E);
  const kernels::WeightView& emb = m.weights().token_embd;
  const size_t row_bytes = kernels::dtype_row_bytes(*kernels::dtype_info(static_cast<uint32_t>(emb.type)), E);
  std::vector<float> x(ids.size() * E);
  for (size_t t = 0; t < ids.size(); ++t) {
    kernels::dequantize_row(emb.type, static_cast<const uint8_t*>(emb.data) + ids[t] * row_bytes, &x[t * E], E);
  }
  auto from_hidden = [&](size_t first_layer, size_t threads) {
    KvCacheConfig c = kv_cache_config(m, CacheMode::k8, ids.size());
    c.n_layer -= first_layer;
    KvCache cache(c);
    ThreadPool pool(threads);
    Forward fwd(m, 128);
    auto out = fwd.run_from_hidden(cache, pool, x.data(), ids.size(), 0, first_layer, LogitsMode::all);
    return std::vector<float>(out.begin(), out.end());
  };
  EXPECT_EQ(count_different(from_hidden(0, 2), run_batch(m, CacheMode::k8, ids, 1, 128)), 0u);
  const std::vector<float> one = from_hidden(1, 1);
  for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(count_different(from_hidden(1, 2), one), 0u);
}

INSTANTIATE_TEST_SUITE_P(Archs, ForwardArch, ::testing::ValuesIn(kArchCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Every supported weight type: the model loads, and its logits match the naive forward computed
// on the dequantised weights — exactly (1e-3) for the reference and for the scalar kernels, within
// the activation-quantisation error for the SIMD kernels.
class ForwardDType : public ::testing::TestWithParam<kernels::DType> {};

// A tiny model whose every 2-D weight is of type t, wide enough for every type's blocks of 256.
TinySpec dtype_spec(kernels::DType t, int64_t F, int64_t n_layer) {
  TinySpec s;
  s.E = 256;
  s.H = 4;
  s.Hk = 2;
  s.Dk = s.Dv = 64;
  s.F = F;
  s.V = 40;
  s.n_layer = n_layer;
  s.wtype = t;
  return s;
}

TEST_P(ForwardDType, MatchesNaiveOnDequantisedWeights) {
  const test::TinyFile tf = test::make_tiny(dtype_spec(GetParam(), 256, 1));
  const Model m = Model::from_file(tf.to_file());
  EXPECT_EQ(m.weights().layers[0].w_down.type, GetParam());
  const std::vector<double> naive = test::naive_forward(tf, kPrompt, true);
  ASSERT_GT(max_abs(naive), 0.3);

  const std::vector<float> ref = run_reference(m, CacheMode::f16, kPrompt);
  EXPECT_LT(max_abs_diff(ref, naive), 1e-3);
  kernels::force_scalar_kernels(true);
  const std::vector<float> scalar = run_batch(m, CacheMode::f16, kPrompt, 2);
  kernels::force_scalar_kernels(false);
  EXPECT_LT(max_abs_diff(scalar, naive), 1e-3);
  const std::vector<float> fast = run_batch(m, CacheMode::f16, kPrompt, 2);
  const double d = max_abs_diff(fast, naive);
  std::printf("[ report ] %s: max|logit diff| %s kernels %.2e (max|logit| %.2f)\n",
              kernels::dtype_info(static_cast<uint32_t>(GetParam()))->name, kernels::cpu_variant_name(), d,
              max_abs(naive));
  EXPECT_LT(d, 0.03 * max_abs(naive));
}

// Every weight type's products give a token the same bits in a two-thread batch of 70 tokens as one
// thread's: the quantised types' split by tokens (each thread multiplies all rows by its 35 tokens),
// the plain types' by rows.
TEST_P(ForwardDType, LongBatchSplitByTokensSameBits) {
  const test::TinyFile tf = test::make_tiny(dtype_spec(GetParam(), 512, 2));  // F != E: rows of two widths
  const Model m = Model::from_file(tf.to_file());
  const std::vector<int32_t> ids = long_prompt(70);
  const std::vector<float> one = run_batch(m, CacheMode::k8, ids, 1, 128);
  for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(count_different(run_batch(m, CacheMode::k8, ids, 2, 128), one), 0u);
}

// Every weight type's products cut at whole KV groups (64 and 128 rows here) give a decode token
// one thread's bits with two threads (the decode split by KV groups).
TEST_P(ForwardDType, DecodeSplitByKvGroupsSameBits) {
  const test::TinyFile tf = test::make_tiny(dtype_spec(GetParam(), 512, 2));
  const Model m = Model::from_file(tf.to_file());
  const std::vector<int32_t> ids = long_prompt(24);
  const std::vector<float> one = run_stepwise(m, CacheMode::k8, ids, 1);
  EXPECT_EQ(count_different(run_stepwise(m, CacheMode::k8, ids, 2), one), 0u);
}

INSTANTIATE_TEST_SUITE_P(Types, ForwardDType,
                         ::testing::Values(kernels::DType::f32, kernels::DType::f16, kernels::DType::bf16,
                                           kernels::DType::q8_0, kernels::DType::q4_0, kernels::DType::q4_1,
                                           kernels::DType::q5_0, kernels::DType::q5_1, kernels::DType::q4_k,
                                           kernels::DType::q5_k, kernels::DType::q6_k, kernels::DType::q2_k,
                                           kernels::DType::q3_k, kernels::DType::iq4_nl, kernels::DType::iq4_xs),
                         [](const auto& info) {
                           return std::string(kernels::dtype_info(static_cast<uint32_t>(info.param))->name);
                         });

TEST(Forward, RejectsBadInput) {
  const test::TinyFile tf = test::make_tiny(TinySpec{});
  const Model m = Model::from_file(tf.to_file());
  KvCache cache(kv_cache_config(m, CacheMode::f16, 8));
  ThreadPool pool(1);
  Forward fwd(m, 4);
  const std::vector<int32_t> bad = {1, 40};
  EXPECT_THROW(fwd.run(cache, pool, bad, 0), ModelError);
  const std::vector<int32_t> nine(9, 1);
  EXPECT_THROW(fwd.run(cache, pool, nine, 0), ModelError);  // capacity 8
  const std::vector<int32_t> one = {1};
  EXPECT_THROW(fwd.run(cache, pool, one, 3), ModelError);  // gap: cache holds 0 tokens
  KvCacheConfig other = kv_cache_config(m, CacheMode::f16, 8);
  other.n_layer = 3;
  KvCache wrong(other);
  EXPECT_THROW(fwd.run(wrong, pool, one, 0), ModelError);
}

// Re-running from an earlier position (prefix reuse) gives the same logits as a fresh run.
TEST(Forward, PrefixReuseAfterTruncate) {
  const test::TinyFile tf = test::make_tiny(TinySpec{});
  const Model m = Model::from_file(tf.to_file());
  KvCache cache(kv_cache_config(m, CacheMode::k8, 16));
  ThreadPool pool(2);
  Forward fwd(m, 8);
  const std::vector<int32_t> a = {1, 2, 3, 4, 5}, b = {1, 2, 3, 9, 7};
  fwd.run(cache, pool, a, 0);
  auto got = fwd.run(cache, pool, std::span<const int32_t>(b).subspan(3), 3);
  const std::vector<float> reused(got.begin(), got.end());
  KvCache fresh(kv_cache_config(m, CacheMode::k8, 16));
  auto want = fwd.run(fresh, pool, b, 0);
  EXPECT_LT(max_abs_diff(reused, want), 1e-5);
  EXPECT_EQ(cache.n_tokens(), 5u);
}

}  // namespace
}  // namespace alap
