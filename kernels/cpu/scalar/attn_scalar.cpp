// Scalar twins of the attention inner loops of alap/kernels/attn.h: plain loops over keys and
// lanes with the scalar fp16 conversion. The oracle the AVX2 versions are tested against.
#include <algorithm>
#include <cmath>

#include "attn_heads.h"
#include "cpu_variants.h"

namespace alap::kernels::scalar {

namespace {
float group_sum(const float* t, size_t g) {
  if (g == 4) return (t[0] + t[1]) + (t[2] + t[3]);
  if (g == 3) return (t[0] + t[1]) + t[2];
  if (g == 2) return t[0] + t[1];
  return t[0];
}
}  // namespace

void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores) {
  for (size_t j = 0; j < n; ++j) {
    float acc = 0.0f;
    for (size_t i = 0; i < head_dim; ++i) acc += q[i] * fp16_to_f32(k[j * head_dim + i]);
    scores[j] = acc * scale;
  }
}

// Keys in groups of 4: out[i] += ((t0 + t1) + (t2 + t3)) with t = p[j]·v[j][i]; a last group of
// 1-3 keys adds its terms the same way ((t0 + t1) + t2, t0 + t1, t0). The fast variants keep this
// order, so they agree bit for bit (grouping shortens the add chain the SIMD loop waits on).
void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out) {
  for (size_t j = 0; j < n; j += 4) {
    const size_t g = std::min<size_t>(4, n - j);
    for (size_t i = 0; i < head_dim; ++i) {
      float t[4] = {0, 0, 0, 0};
      for (size_t u = 0; u < g; ++u) t[u] = p[j + u] * fp16_to_f32(v[(j + u) * head_dim + i]);
      out[i] += group_sum(t, g);
    }
  }
}

void softmax(float* x, size_t n) {
  float mx = x[0];
  for (size_t j = 1; j < n; ++j) mx = std::max(mx, x[j]);
  float sum = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - mx);
    sum += x[j];
  }
  const float inv = 1.0f / sum;
  for (size_t j = 0; j < n; ++j) x[j] *= inv;
}

void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out) {
  const size_t nb = head_dim / block;
  for (size_t j = 0; j < n; j += 4) {
    const size_t g = std::min<size_t>(4, n - j);
    for (size_t i = 0; i < head_dim; ++i) {
      float t[4] = {0, 0, 0, 0};
      for (size_t u = 0; u < g; ++u) {
        const float coef = p[j + u] * fp16_to_f32(d[(j + u) * nb + i / block]);
        t[u] = coef * static_cast<float>(q[(j + u) * head_dim + i]);
      }
      out[i] += group_sum(t, g);
    }
  }
}

// Grouped heads: each head's scores in order, as f16_scores (the fast variants sum in a tree).
void f16_scores_heads(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld) {
  for (size_t h = 0; h < n_heads; ++h) f16_scores(q + h * head_dim, k, head_dim, n, scale, scores + h * ld);
}

void softmax_partial(float* x, size_t n, float* m, float* l) {
  float mx = x[0];
  for (size_t j = 1; j < n; ++j) mx = std::max(mx, x[j]);
  float sum = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - mx);
    sum += x[j];
  }
  *m = mx;
  *l = sum;
}

// One fused multiply-add per (key, head, lane), keys in order: the vector variants do the same
// per lane, so they agree bit for bit.
void f16_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                       float* out) {
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < head_dim; ++i) {
      const float x = fp16_to_f32(v[j * head_dim + i]);
      for (size_t h = 0; h < n_heads; ++h) out[h * head_dim + i] = std::fma(p[h * ldp + j], x, out[h * head_dim + i]);
    }
  }
}

// Packed V, the v16 rule of attn.h: per run of kV16Run keys, head and block the weights p·d, their
// largest magnitude M, the int16 codes c = nearbyint(w·32767/M), the exact int32 sums Σ c·q, then
// out += float(sum)·(M/32767). The vector variants form the same codes and the same sums (in any
// order: integers), so they agree bit for bit.
void k8_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                      size_t head_dim, size_t block, size_t n, float* out) {
  const size_t nb = head_dim / block;
  for (size_t j0 = 0; j0 < n; j0 += kV16Run) {
    const size_t r = std::min(kV16Run, n - j0);
    for (size_t h = 0; h < n_heads; ++h) {
      for (size_t b = 0; b < nb; ++b) {
        float w[kV16Run];
        float mx = 0.0f;
        for (size_t j = 0; j < r; ++j) {
          w[j] = p[h * ldp + j0 + j] * fp16_to_f32(d[(j0 + j) * nb + b]);
          mx = std::max(mx, std::fabs(w[j]));
        }
        if (!(mx >= kV16MinWeight)) continue;
        const float inv = 32767.0f / mx, s = mx / 32767.0f;
        int32_t c[kV16Run];
        for (size_t j = 0; j < r; ++j) c[j] = static_cast<int32_t>(std::nearbyint(w[j] * inv));
        for (size_t i = b * block; i < (b + 1) * block; ++i) {
          int32_t acc = 0;
          for (size_t j = 0; j < r; ++j) acc += c[j] * int32_t{q[(j0 + j) * head_dim + i]};
          out[h * head_dim + i] += static_cast<float>(acc) * s;
        }
      }
    }
  }
}

const AttnHeadsVariant kAttnHeads = {&k8_scores_heads, &f16_scores_heads, &softmax_partial, &f16_accum_v_heads,
                                     &k8_accum_v_heads, &k8_quantize, &kv_row_to_fp16};

}  // namespace alap::kernels::scalar
