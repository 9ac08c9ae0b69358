// Scalar twins of the elementwise activations (activation.h) and of RMSNorm (norm.h): the oracles
// the SIMD variants are tested against, and the path of CPUs without AVX2.
#include <cmath>

#include "cpu_variants.h"

namespace alap::kernels::scalar {

void silu_mul(float* gate, const float* up, size_t n) {
  for (size_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// The rule of norm.h: 8 partial sums of squares in double, element i in sum i mod 8, added as
// ((0 + 1) + (2 + 3)) + ((4 + 5) + (6 + 7)); each square and sum rounded on its own (this file is
// built with -ffp-contract=off, as the vector variants, whose lanes are the 8 sums).
float rms_inverse(double (&part)[8], const float* x, size_t i, size_t n, float eps) {
  for (; i < n; ++i) part[i % 8] += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  const double ss = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  return static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(n) + eps));
}

void rmsnorm(const float* x, const float* w, size_t n, float eps, float* out) {
  double part[8] = {};
  const float inv = rms_inverse(part, x, 0, n, eps);
  for (size_t i = 0; i < n; ++i) out[i] = w[i] * (x[i] * inv);
}

}  // namespace alap::kernels::scalar
