// The scalar matmul oracle: dequantise one weight row, then an f32 dot with each token; and the
// scalar rule for quantising activations to int8 blocks (which every variant reproduces byte for
// byte). Plain loops by design; the fast variants in avx2/ and *vnni/ are tested against it.
#include <cmath>
#include <cstdint>
#include <vector>

#include "cpu_variants.h"

namespace alap::kernels::scalar {

void matmul(const WeightView& w, const float* x, size_t n_tok, float* y, size_t ldy, size_t row_begin,
            size_t row_end) {
  const DTypeInfo& info = weight_dtype("matmul", w.type);
  const size_t row_bytes = dtype_row_bytes(info, w.n_cols);
  thread_local std::vector<float> row;  // W[r][0..n_cols) as f32
  row.resize(w.n_cols);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (size_t r = row_begin; r < row_end; ++r) {
    dequantize_row(w.type, base + r * row_bytes, row.data(), w.n_cols);
    for (size_t t = 0; t < n_tok; ++t) {  // the row is reused by every token of the batch
      const float* xt = x + t * w.n_cols;
      float acc = 0.0f;
      for (size_t c = 0; c < w.n_cols; ++c) acc += row[c] * xt[c];
      y[t * ldy + r] = acc;
    }
  }
}

// The oracle multiplies the f32 activations: it is the reference the int8 paths are held to.
void matmul_q(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end) {
  scalar::matmul(w, x.x, x.n_tok, y, ldy, row_begin, row_end);
}

namespace {
// One block of n values by the rule of quantize_activations: q written, d returned.
float quant_block(const float* src, size_t n, int8_t* q) {
  float amax = 0.0f;
  for (size_t l = 0; l < n; ++l) amax = std::max(amax, std::fabs(src[l]));
  const float db = amax / 127.0f;
  const float id = db != 0.0f ? 1.0f / db : 0.0f;
  for (size_t l = 0; l < n; ++l) {
    // The SIMD conversion's rule (cvtps2dq): NaN or a value outside int32 gives INT32_MIN, here
    // without an undefined float-to-int conversion; the clamp then makes it -127 in both.
    const float r = std::nearbyint(src[l] * id);
    const int v = (r >= -2147483648.0f && r < 2147483648.0f) ? static_cast<int>(r) : INT32_MIN;
    q[l] = static_cast<int8_t>(v > 127 ? 127 : (v < -127 ? -127 : v));
  }
  return db;
}
}  // namespace

void quantize_acts(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4) {
  for (size_t i = 0; i < n_tok * (n_cols / 32); ++i) {
    d[i] = quant_block(x + 32 * i, 32, q + 32 * i);
    int32_t sum = 0;
    for (int g = 0; g < 8; ++g) {
      const int8_t* qg = q + 32 * i + 4 * g;
      s4[8 * i + g] = int32_t{qg[0]} + qg[1] + qg[2] + qg[3];
      sum += s4[8 * i + g];
    }
    s[i] = sum;
  }
}

void quantize_acts_256(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d) {
  for (size_t i = 0; i < n_tok * (n_cols / 256); ++i) d[i] = quant_block(x + 256 * i, 256, q + 256 * i);
}

}  // namespace alap::kernels::scalar
