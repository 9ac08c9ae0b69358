// Scalar twin of the elementwise activations (activation.h): the oracle the SIMD variants are
// tested against, and the path of CPUs without AVX2.
#include <cmath>

#include "cpu_variants.h"

namespace alap::kernels::scalar {

void silu_mul(float* gate, const float* up, size_t n) {
  for (size_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace alap::kernels::scalar
