// The reference forward pass (FORMATS.md §6–§7), llama2.c style: one function, top to bottom,
// a comment per step and the shape of every buffer. Single-threaded, plain loops, weights
// dequantised row by row. It is the oracle the fast path (forward.cpp) is tested against — not
// the path used at run time.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "alap/kernels/kv_k8.h"
#include "alap/kernels/fp16.h"
#include "core/model/forward.h"

namespace alap {

namespace {

// y[t][r] = Σ_c W[r][c]·x[t][c];  W [rows][cols] (any supported type), x [n][cols], y [n][rows].
void ref_matmul(const kernels::WeightView& w, const std::vector<float>& x, size_t n, std::vector<float>& y) {
  const kernels::DTypeInfo* info = kernels::dtype_info(static_cast<uint32_t>(w.type));
  const size_t row_bytes = kernels::dtype_row_bytes(*info, w.n_cols);
  std::vector<float> row(w.n_cols);  // one dequantised weight row
  y.assign(n * w.n_rows, 0.0f);
  for (size_t r = 0; r < w.n_rows; ++r) {
    kernels::dequantize_row(w.type, static_cast<const uint8_t*>(w.data) + r * row_bytes, row.data(), w.n_cols);
    for (size_t t = 0; t < n; ++t) {
      double acc = 0.0;
      for (size_t c = 0; c < w.n_cols; ++c) acc += static_cast<double>(row[c]) * x[t * w.n_cols + c];
      y[t * w.n_rows + r] = static_cast<float>(acc);
    }
  }
}

// out = w ⊙ x / sqrt(mean(x²) + eps) over n values (sum of squares in double, as llama.cpp).
void ref_rmsnorm(const float* x, const std::vector<float>& w, size_t n, float eps, float* out) {
  double ss = 0.0;
  for (size_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float inv = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
  for (size_t i = 0; i < n; ++i) out[i] = w[i] * (x[i] * inv);
}

// Rotates one head vector v[head_dim] in place for position p (§6).
void ref_rope(float* v, const ModelHParams& hp, const std::vector<float>& rope_freqs, size_t p) {
  const size_t half = static_cast<size_t>(hp.n_rot / 2);
  for (size_t i = 0; i < half; ++i) {
    const double f = rope_freqs.empty() ? 1.0 : rope_freqs[i];
    const double a = hp.rope_freq_scale * static_cast<double>(p) *
                     std::pow(static_cast<double>(hp.rope_freq_base), -2.0 * static_cast<double>(i) / hp.n_rot) / f;
    const size_t i0 = hp.rope_type == RopeType::normal ? 2 * i : i;
    const size_t i1 = hp.rope_type == RopeType::normal ? 2 * i + 1 : i + half;
    const double x0 = v[i0], x1 = v[i1];
    v[i0] = static_cast<float>(x0 * std::cos(a) - x1 * std::sin(a));
    v[i1] = static_cast<float>(x0 * std::sin(a) + x1 * std::cos(a));
  }
}

}  // namespace

std::vector<float> forward_reference(const Model& model, KvCache& cache, std::span<const int32_t> tokens, size_t pos0,
                                     LogitsMode mode, bool exact_kv) {
  const ModelHParams& hp = model.hparams();
  const ModelWeights& w = model.weights();
  const size_t n = tokens.size();
  const size_t E = hp.n_embd, H = hp.n_head, Hk = hp.n_head_kv, Dk = hp.head_dim_k, Dv = hp.head_dim_v;
  const size_t F = hp.n_ff, V = hp.n_vocab, gqa = H / Hk;
  if (n == 0) throw ModelError("forward: empty batch");
  if (cache.n_layer() != static_cast<size_t>(hp.n_layer) || cache.n_head_kv() != Hk || cache.head_dim_k() != Dk ||
      cache.head_dim_v() != Dv) {
    throw ModelError("forward: the KV cache shape does not match the model");
  }
  if (pos0 > cache.n_tokens()) throw ModelError("forward: position " + std::to_string(pos0) + " leaves a gap in the cache");
  if (pos0 + n > cache.capacity()) throw ModelError("forward: the KV cache is full (" + std::to_string(cache.capacity()) + " tokens)");
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<size_t>(t) >= V) throw ModelError("forward: token id " + std::to_string(t) + " is outside the vocabulary");
  }
  cache.truncate(pos0);

  // 1. Embeddings: x [n][E] = token_embd rows.
  std::vector<float> x(n * E);
  const size_t embd_row_bytes =
      kernels::dtype_row_bytes(*kernels::dtype_info(static_cast<uint32_t>(w.token_embd.type)), E);
  for (size_t t = 0; t < n; ++t) {
    kernels::dequantize_row(w.token_embd.type, static_cast<const uint8_t*>(w.token_embd.data) + tokens[t] * embd_row_bytes,
                            &x[t * E], E);
  }

  std::vector<float> a(n * E);                      // normed activations [n][E]
  std::vector<float> q, k, v;                       // [n][H·Dk], [n][Hk·Dk], [n][Hk·Dv]
  std::vector<float> o(n * H * Dv);                 // attention output [n][H·Dv]
  std::vector<float> proj, gate, up, down;          // [n][E], [n][F], [n][F], [n][E]
  std::vector<float> krow(Dk), vrow(Dv);            // one cached K / V vector
  std::vector<int8_t> qq(Dk), kq(Dk);               // k8: quantised query / key
  std::vector<uint16_t> qd(Dk), kd(Dk);             // k8: their block scales
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dk));

  for (size_t l = 0; l < static_cast<size_t>(hp.n_layer); ++l) {
    const LayerWeights& L = w.layers[l];
    // 2. a = RMSNorm(x, attn_norm)                                  [n][E]
    for (size_t t = 0; t < n; ++t) ref_rmsnorm(&x[t * E], L.attn_norm, E, hp.rms_eps, &a[t * E]);
    // 3. q, k, v = Wq·a (+bq), Wk·a (+bk), Wv·a (+bv)
    ref_matmul(L.wq, a, n, q);
    ref_matmul(L.wk, a, n, k);
    ref_matmul(L.wv, a, n, v);
    for (size_t t = 0; t < n; ++t) {
      for (size_t i = 0; i < L.bq.size(); ++i) q[t * H * Dk + i] += L.bq[i];
      for (size_t i = 0; i < L.bk.size(); ++i) k[t * Hk * Dk + i] += L.bk[i];
      for (size_t i = 0; i < L.bv.size(); ++i) v[t * Hk * Dv + i] += L.bv[i];
    }
    // 4. qwen3: per-head RMSNorm of q and k, then RoPE of every q and k head at position pos0+t.
    for (size_t t = 0; t < n; ++t) {
      for (size_t h = 0; h < H; ++h) {
        float* qh = &q[(t * H + h) * Dk];
        if (!L.q_norm.empty()) ref_rmsnorm(qh, L.q_norm, Dk, hp.rms_eps, qh);
        ref_rope(qh, hp, w.rope_freqs, pos0 + t);
      }
      for (size_t g = 0; g < Hk; ++g) {
        float* kg = &k[(t * Hk + g) * Dk];
        if (!L.k_norm.empty()) ref_rmsnorm(kg, L.k_norm, Dk, hp.rms_eps, kg);
        ref_rope(kg, hp, w.rope_freqs, pos0 + t);
      }
    }
    // 5. Cache K[l][g][pos0+t] = k_g (after RoPE), V[l][g][pos0+t] = v_g.
    for (size_t t = 0; t < n; ++t) cache.store(l, pos0 + t, &k[t * Hk * Dk], &v[t * Hk * Dv]);
    // 6. Attention, for each token t and head h (kv head g = h / (H/Hk)), keys 0..p (causal).
    for (size_t t = 0; t < n; ++t) {
      const size_t p = pos0 + t;
      for (size_t h = 0; h < H; ++h) {
        const size_t g = h / gqa;
        const float* qh = &q[(t * H + h) * Dk];
        std::vector<float> s(p + 1);  // scores [p+1]
        if (exact_kv) {
          // full precision: this batch's f32 keys for positions >= pos0, the cache's before.
          for (size_t j = 0; j <= p; ++j) {
            const float* kj = krow.data();
            if (j >= pos0) {
              kj = &k[((j - pos0) * Hk + g) * Dk];
            } else {
              cache.read_k(l, g, j, krow.data());
            }
            double acc = 0.0;
            for (size_t i = 0; i < Dk; ++i) acc += static_cast<double>(qh[i]) * kj[i];
            s[j] = static_cast<float>(acc) * scale;
          }
        } else if (cache.k_packed()) {
          // k8: the query is quantised with the cache's rule; score = Σ_b d_q·d_k·Σ q_q·k_q.
          const size_t blk = cache.block_k();
          kernels::k8_quantize(qh, Dk, qq.data(), qd.data());
          for (size_t j = 0; j <= p; ++j) {
            const int8_t* kj = cache.k_q8(l, g) + j * Dk;
            const uint16_t* dj = cache.k_scales(l, g) + j * (Dk / blk);
            double acc = 0.0;
            for (size_t b = 0; b < Dk / blk; ++b) {
              int32_t dot = 0;
              for (size_t i = b * blk; i < (b + 1) * blk; ++i) dot += int32_t{qq[i]} * int32_t{kj[i]};
              acc += static_cast<double>(kernels::fp16_to_f32(qd[b])) * kernels::fp16_to_f32(dj[b]) * dot;
            }
            s[j] = static_cast<float>(acc) * scale;
          }
        } else {
          for (size_t j = 0; j <= p; ++j) {
            cache.read_k(l, g, j, krow.data());
            double acc = 0.0;
            for (size_t i = 0; i < Dk; ++i) acc += static_cast<double>(qh[i]) * krow[i];
            s[j] = static_cast<float>(acc) * scale;
          }
        }
        // softmax(s) in f32, max subtracted
        float mx = s[0];
        for (float sj : s) mx = std::max(mx, sj);
        float sum = 0.0f;
        for (float& sj : s) {
          sj = std::exp(sj - mx);
          sum += sj;
        }
        // o_h = Σ_j α_j · V[l][g][j]                                [Dv]
        float* oh = &o[(t * H + h) * Dv];
        for (size_t i = 0; i < Dv; ++i) oh[i] = 0.0f;
        for (size_t j = 0; j <= p; ++j) {
          const float* vj = vrow.data();
          if (exact_kv && j >= pos0) {
            vj = &v[((j - pos0) * Hk + g) * Dv];
          } else {
            cache.read_v(l, g, j, vrow.data());
          }
          const float alpha = s[j] / sum;
          for (size_t i = 0; i < Dv; ++i) oh[i] += alpha * vj[i];
        }
      }
    }
    // 7. x = x + Wo·o (+bo)                                         [n][E]
    ref_matmul(L.wo, o, n, proj);
    for (size_t t = 0; t < n; ++t) {
      for (size_t i = 0; i < E; ++i) x[t * E + i] += proj[t * E + i] + (L.bo.empty() ? 0.0f : L.bo[i]);
    }
    // 8. f = RMSNorm(x, ffn_norm);  x = x + Wdown·(silu(Wgate·f) ⊙ Wup·f)
    for (size_t t = 0; t < n; ++t) ref_rmsnorm(&x[t * E], L.ffn_norm, E, hp.rms_eps, &a[t * E]);
    ref_matmul(L.w_gate, a, n, gate);
    ref_matmul(L.w_up, a, n, up);
    for (size_t i = 0; i < n * F; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
    ref_matmul(L.w_down, gate, n, down);
    for (size_t i = 0; i < n * E; ++i) x[i] += down[i];
  }
  cache.set_n_tokens(pos0 + n);

  // 9. z = RMSNorm(x, output_norm); logits = Wout·z (+ output.bias) for the tokens asked for.
  const size_t first = mode == LogitsMode::all ? 0 : n - 1;
  const size_t n_out = n - first;
  std::vector<float> z(n_out * E);
  for (size_t t = 0; t < n_out; ++t) ref_rmsnorm(&x[(first + t) * E], w.output_norm, E, hp.rms_eps, &z[t * E]);
  std::vector<float> logits;  // [n_out][V]
  ref_matmul(w.output, z, n_out, logits);
  if (!w.output_bias.empty()) {
    for (size_t t = 0; t < n_out; ++t) {
      for (size_t i = 0; i < V; ++i) logits[t * V + i] += w.output_bias[i];
    }
  }
  return logits;
}

}  // namespace alap
