// Test helper for tests/kernels/cpu: activations quantised once with kernels::quantize_activations
// and kept in vectors, viewed as a QuantizedActs for the products. Not a kernel.
#pragma once

#include <cstdint>
#include <vector>

#include "alap/kernels/quant.h"

namespace alap::kernels::test {

struct Acts {
  std::vector<int8_t> q;
  std::vector<float> d;
  std::vector<int32_t> s, s4;
  QuantizedActs view(const float* x, size_t n_tok, size_t n_cols) const {
    return QuantizedActs{x, q.data(), d.data(), s.data(), s4.data(), n_tok, n_cols};
  }
};

// x [n_tok][n_cols] (n_cols a multiple of 32) quantised by the active variant.
inline Acts quantise(const std::vector<float>& x, size_t n_tok, size_t n_cols) {
  Acts a;
  a.q.resize(n_tok * n_cols);
  a.d.resize(n_tok * n_cols / 32);
  a.s.resize(a.d.size());
  a.s4.resize(n_tok * n_cols / 4);
  quantize_activations(x.data(), n_tok, n_cols, a.q.data(), a.d.data(), a.s.data(), a.s4.data());
  return a;
}

}  // namespace alap::kernels::test
