// The forward pass's RMSNorm on one row. The sum of squares runs in double, in 8 partial sums
// (element i goes to sum i mod 8) added in a fixed order at the end, so the vector variants (the
// 8 sums as lanes) give the scalar twin's bits exactly, whatever the threads or batch.
#pragma once

#include <cstddef>

namespace alap::kernels {

// out[i] = w[i] · (x[i] · inv) for i < n, inv = float(1 / sqrt(Σ x² / n + eps)) with Σ as above.
// out may be x.
void rmsnorm(const float* x, const float* w, size_t n, float eps, float* out);

}  // namespace alap::kernels
