// The scalar matmul oracle: dequantise one weight row, then an f32 dot with each token.
// Plain loops by design; the fast variants in avx2/ and avx512_vnni/ are tested against it.
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

}  // namespace alap::kernels::scalar
