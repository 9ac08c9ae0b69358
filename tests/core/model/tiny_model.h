// Tiny random llama-family GGUF files for tests, built in memory with gguf::Writer, plus an
// independent double-precision forward pass over their (dequantised) weights. Shares no code
// with core/model: it is the yardstick the engine is measured with.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/quant.h"
#include "core/gguf/gguf.h"

namespace alap::test {

struct TinySpec {
  std::string arch = "llama";
  int64_t E = 64, H = 4, Hk = 2, Dk = 16, Dv = 16, F = 96, V = 40, n_layer = 2;
  bool tied = false;
  bool rope_freqs = false;
  bool qkv_bias = false;   // attn_q/k/v.bias
  bool out_bias = false;   // attn_output.bias and output.bias
  bool qk_norm = false;    // attn_q_norm / attn_k_norm (qwen3)
  float freq_base = 10000.0f;
  float linear_factor = 0.0f;  // rope.scaling.factor (0 = none)
  float eps = 1e-5f;
  kernels::DType wtype = kernels::DType::f32;  // type of every 2-D weight
  uint32_t seed = 1;
};

struct TinyTensor {
  std::string name;
  kernels::DType type;
  std::vector<int64_t> ne;
  std::vector<uint8_t> bytes;
  std::vector<float> values;  // what the bytes decode to
};

struct TinyFile {
  TinySpec spec;
  std::vector<std::pair<std::string, gguf::Value>> kv;
  std::vector<TinyTensor> tensors;

  void set(const std::string& key, gguf::Value v) {
    for (auto& e : kv) {
      if (e.first == key) {
        e.second = std::move(v);
        return;
      }
    }
    kv.emplace_back(key, std::move(v));
  }
  TinyTensor* find(const std::string& name) {
    for (auto& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }
  const TinyTensor* find(const std::string& name) const {
    for (const auto& t : tensors)
      if (t.name == name) return &t;
    return nullptr;
  }
  const std::vector<float>& values(const std::string& name) const {
    static const std::vector<float> empty;
    const TinyTensor* t = find(name);
    return t ? t->values : empty;
  }
  void remove(const std::string& name) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].name == name) {
        tensors.erase(tensors.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    }
  }
  gguf::File to_file() const {
    gguf::Writer w;
    for (const auto& e : kv) w.set(e.first, e.second);
    for (const auto& t : tensors) w.add_tensor(t.name, t.type, t.ne, t.bytes);
    return gguf::File::from_bytes(w.to_bytes(), "tiny.gguf");
  }
};

// Adds a tensor of random values (uniform in [center - spread, center + spread]) stored as type.
inline void add_random(TinyFile& f, std::mt19937& rng, const std::string& name, std::vector<int64_t> ne,
                       kernels::DType type, float center, float spread) {
  std::uniform_real_distribution<float> u(center - spread, center + spread);
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  std::vector<float> src(static_cast<size_t>(n));
  for (auto& x : src) x = u(rng);
  const auto* info = kernels::dtype_info(static_cast<uint32_t>(type));
  const size_t cols = static_cast<size_t>(ne[0]), rows = static_cast<size_t>(n) / cols;
  const size_t row_bytes = kernels::dtype_row_bytes(*info, cols);
  TinyTensor t{name, type, ne, std::vector<uint8_t>(rows * row_bytes), std::vector<float>(src.size())};
  for (size_t r = 0; r < rows; ++r) {
    kernels::quantize_row(type, &src[r * cols], &t.bytes[r * row_bytes], cols);
    kernels::dequantize_row(type, &t.bytes[r * row_bytes], &t.values[r * cols], cols);
  }
  f.tensors.push_back(std::move(t));
}

// Whether this CPU's packed products of type t read activations in blocks of 256 (plain AVX2 on
// Q2_K-Q6_K and IQ4_XS, kernels::reads_acts_256). A device (or its emulation) quantises in blocks of 32,
// and on random-weight models the two quantisations differ by ~5% of the logits, so the checks of
// GPU against CPU load their model unpacked where this is true (ModelOptions::pack_cpu), and the
// CPU side then reads blocks of 32 too.
inline bool packed_reads_acts_256(kernels::DType t) {
  const uint8_t any = 0;  // reads_acts_256 asks only whether a packed form exists, not its bytes
  return kernels::reads_acts_256(kernels::WeightView{t, &any, 16, 256, &any});
}

inline TinyFile make_tiny(const TinySpec& s) {
  TinyFile f;
  f.spec = s;
  const std::string A = s.arch + ".";
  f.set("general.architecture", gguf::Value::string(s.arch));
  f.set(A + "context_length", gguf::Value::u32(256));
  f.set(A + "embedding_length", gguf::Value::u32(static_cast<uint32_t>(s.E)));
  f.set(A + "block_count", gguf::Value::u32(static_cast<uint32_t>(s.n_layer)));
  f.set(A + "feed_forward_length", gguf::Value::u32(static_cast<uint32_t>(s.F)));
  f.set(A + "attention.head_count", gguf::Value::u32(static_cast<uint32_t>(s.H)));
  f.set(A + "attention.head_count_kv", gguf::Value::u32(static_cast<uint32_t>(s.Hk)));
  f.set(A + "attention.key_length", gguf::Value::u32(static_cast<uint32_t>(s.Dk)));
  f.set(A + "attention.value_length", gguf::Value::u32(static_cast<uint32_t>(s.Dv)));
  f.set(A + "attention.layer_norm_rms_epsilon", gguf::Value::f32(s.eps));
  f.set(A + "rope.freq_base", gguf::Value::f32(s.freq_base));
  if (s.linear_factor > 0) {
    f.set(A + "rope.scaling.type", gguf::Value::string("linear"));
    f.set(A + "rope.scaling.factor", gguf::Value::f32(s.linear_factor));
  }
  std::vector<std::string> toks;
  for (int64_t i = 0; i < s.V; ++i) {
    std::string t("t");  // appended, not "t" + ...: GCC 12 -O3 warns falsely (-Wrestrict) on that
    t += std::to_string(i);
    toks.push_back(std::move(t));
  }
  f.set("tokenizer.ggml.tokens", gguf::Value::array_of_strings(toks));

  std::mt19937 rng(s.seed);
  const auto F32 = kernels::DType::f32;
  auto w = [&](const std::string& n, int64_t cols, int64_t rows) {
    add_random(f, rng, n, {cols, rows}, s.wtype, 0.0f, 1.7f / std::sqrt(static_cast<float>(cols)));
  };
  w("token_embd.weight", s.E, s.V);
  add_random(f, rng, "output_norm.weight", {s.E}, F32, 1.0f, 0.2f);
  if (!s.tied) w("output.weight", s.E, s.V);
  if (s.out_bias) add_random(f, rng, "output.bias", {s.V}, F32, 0.0f, 0.1f);
  if (s.rope_freqs) add_random(f, rng, "rope_freqs.weight", {s.Dk / 2}, F32, 3.0f, 2.0f);
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add_random(f, rng, b + "attn_norm.weight", {s.E}, F32, 1.0f, 0.2f);
    w(b + "attn_q.weight", s.E, s.H * s.Dk);
    w(b + "attn_k.weight", s.E, s.Hk * s.Dk);
    w(b + "attn_v.weight", s.E, s.Hk * s.Dv);
    if (s.qkv_bias) {
      add_random(f, rng, b + "attn_q.bias", {s.H * s.Dk}, F32, 0.0f, 0.3f);
      add_random(f, rng, b + "attn_k.bias", {s.Hk * s.Dk}, F32, 0.0f, 0.3f);
      add_random(f, rng, b + "attn_v.bias", {s.Hk * s.Dv}, F32, 0.0f, 0.3f);
    }
    if (s.qk_norm) {
      add_random(f, rng, b + "attn_q_norm.weight", {s.Dk}, F32, 1.0f, 0.3f);
      add_random(f, rng, b + "attn_k_norm.weight", {s.Dk}, F32, 1.0f, 0.3f);
    }
    w(b + "attn_output.weight", s.H * s.Dv, s.E);
    if (s.out_bias) add_random(f, rng, b + "attn_output.bias", {s.E}, F32, 0.0f, 0.1f);
    add_random(f, rng, b + "ffn_norm.weight", {s.E}, F32, 1.0f, 0.2f);
    w(b + "ffn_gate.weight", s.E, s.F);
    w(b + "ffn_up.weight", s.E, s.F);
    w(b + "ffn_down.weight", s.F, s.E);
  }
  return f;
}

// The naive forward pass in double over the file's decoded values: logits [n][V] for tokens at
// positions 0..n-1 of an empty cache. round_kv_f16 rounds cached K/V to fp16, as the f16 cache does.
inline std::vector<double> naive_forward(const TinyFile& f, const std::vector<int32_t>& tokens, bool round_kv_f16) {
  const TinySpec& s = f.spec;
  const size_t n = tokens.size(), E = s.E, H = s.H, Hk = s.Hk, Dk = s.Dk, Dv = s.Dv, F = s.F, V = s.V;
  const bool neox = s.arch != "llama";
  auto W = [&](const std::string& name) -> const std::vector<float>& { return f.values(name); };
  // y[r] = Σ_c M[r][c] x[c]
  auto mv = [](const std::vector<float>& M, const std::vector<double>& x, size_t rows) {
    const size_t cols = x.size();
    std::vector<double> y(rows, 0.0);
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = 0; c < cols; ++c) y[r] += static_cast<double>(M[r * cols + c]) * x[c];
    return y;
  };
  auto norm = [&](const double* x, size_t len, const std::vector<float>& g, double* out) {
    double ss = 0;
    for (size_t i = 0; i < len; ++i) ss += x[i] * x[i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(len) + s.eps);
    for (size_t i = 0; i < len; ++i) out[i] = x[i] * inv * g[i];
  };
  auto rope = [&](double* v, size_t p) {
    const std::vector<float>& rf = W("rope_freqs.weight");
    const double scale = s.linear_factor > 0 ? 1.0 / s.linear_factor : 1.0;
    for (size_t i = 0; i < Dk / 2; ++i) {
      const double div = rf.empty() ? 1.0 : rf[i];
      const double a = scale * static_cast<double>(p) * std::pow(static_cast<double>(s.freq_base), -2.0 * i / Dk) / div;
      const size_t i0 = neox ? i : 2 * i, i1 = neox ? i + Dk / 2 : 2 * i + 1;
      const double x0 = v[i0], x1 = v[i1];
      v[i0] = x0 * std::cos(a) - x1 * std::sin(a);
      v[i1] = x0 * std::sin(a) + x1 * std::cos(a);
    }
  };
  auto kv_round = [&](double x) {
    return round_kv_f16 ? static_cast<double>(kernels::fp16_to_f32(kernels::f32_to_fp16(static_cast<float>(x)))) : x;
  };
  auto add_bias = [&](std::vector<double>& y, const std::string& name) {
    const std::vector<float>& b = W(name);
    for (size_t i = 0; i < b.size(); ++i) y[i] += b[i];
  };

  std::vector<std::vector<double>> x(n, std::vector<double>(E));
  for (size_t t = 0; t < n; ++t)
    for (size_t i = 0; i < E; ++i) x[t][i] = W("token_embd.weight")[tokens[t] * E + i];
  for (int64_t l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    std::vector<std::vector<double>> K(n), Vc(n), Q(n);
    for (size_t t = 0; t < n; ++t) {
      std::vector<double> a(E);
      norm(x[t].data(), E, W(b + "attn_norm.weight"), a.data());
      Q[t] = mv(W(b + "attn_q.weight"), a, H * Dk);
      K[t] = mv(W(b + "attn_k.weight"), a, Hk * Dk);
      Vc[t] = mv(W(b + "attn_v.weight"), a, Hk * Dv);
      add_bias(Q[t], b + "attn_q.bias");
      add_bias(K[t], b + "attn_k.bias");
      add_bias(Vc[t], b + "attn_v.bias");
      for (size_t h = 0; h < H; ++h) {
        if (s.qk_norm) norm(&Q[t][h * Dk], Dk, W(b + "attn_q_norm.weight"), &Q[t][h * Dk]);
        rope(&Q[t][h * Dk], t);
      }
      for (size_t g = 0; g < Hk; ++g) {
        if (s.qk_norm) norm(&K[t][g * Dk], Dk, W(b + "attn_k_norm.weight"), &K[t][g * Dk]);
        rope(&K[t][g * Dk], t);
      }
      for (auto& e : K[t]) e = kv_round(e);
      for (auto& e : Vc[t]) e = kv_round(e);
    }
    for (size_t t = 0; t < n; ++t) {
      std::vector<double> o(H * Dv, 0.0);
      for (size_t h = 0; h < H; ++h) {
        const size_t g = h / (H / Hk);
        std::vector<double> sc(t + 1);
        double mx = -1e300;
        for (size_t j = 0; j <= t; ++j) {
          double d = 0;
          for (size_t i = 0; i < Dk; ++i) d += Q[t][h * Dk + i] * K[j][g * Dk + i];
          sc[j] = d / std::sqrt(static_cast<double>(Dk));
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (auto& e : sc) sum += (e = std::exp(e - mx));
        for (size_t j = 0; j <= t; ++j)
          for (size_t i = 0; i < Dv; ++i) o[h * Dv + i] += sc[j] / sum * Vc[j][g * Dv + i];
      }
      std::vector<double> proj = mv(W(b + "attn_output.weight"), o, E);
      add_bias(proj, b + "attn_output.bias");
      for (size_t i = 0; i < E; ++i) x[t][i] += proj[i];
      std::vector<double> a(E);
      norm(x[t].data(), E, W(b + "ffn_norm.weight"), a.data());
      std::vector<double> gt = mv(W(b + "ffn_gate.weight"), a, F), up = mv(W(b + "ffn_up.weight"), a, F);
      for (size_t i = 0; i < F; ++i) gt[i] = gt[i] / (1.0 + std::exp(-gt[i])) * up[i];
      std::vector<double> down = mv(W(b + "ffn_down.weight"), gt, E);
      for (size_t i = 0; i < E; ++i) x[t][i] += down[i];
    }
  }
  std::vector<double> logits;
  const std::string out = f.find("output.weight") ? "output.weight" : "token_embd.weight";
  for (size_t t = 0; t < n; ++t) {
    std::vector<double> z(E);
    norm(x[t].data(), E, W("output_norm.weight"), z.data());
    std::vector<double> lg = mv(W(out), z, V);
    add_bias(lg, "output.bias");
    logits.insert(logits.end(), lg.begin(), lg.end());
  }
  return logits;
}

}  // namespace alap::test
