// Statistics of whole logits rows in double: log Σ exp (the softmax's normaliser), the argmax, and
// KL(softmax(a) ‖ softmax(b)). Shared by perplexity and kv-compare (core/engine/perplexity.cpp)
// and the GPU-against-CPU perplexity of tests/core/model/forward_gpu_device.cpp. Not the sampler.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace alap {

struct RowStats {
  double log_z = 0.0;  // log Σ exp(row)
  size_t argmax = 0;   // the largest entry (lowest index on ties)
};

inline RowStats row_stats(const float* row, size_t n) {
  size_t best = 0;
  for (size_t i = 1; i < n; ++i) {
    if (row[i] > row[best]) best = i;
  }
  const double m = row[best];
  double sum = 0.0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(row[i]) - m);
  return RowStats{m + std::log(sum), best};
}

// KL(p ‖ q) with p = softmax(a), q = softmax(b), both rows [n] with their row_stats.
inline double kl_divergence(const float* a, const RowStats& sa, const float* b, const RowStats& sb, size_t n) {
  double kl = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const double lp = static_cast<double>(a[i]) - sa.log_z;
    const double lq = static_cast<double>(b[i]) - sb.log_z;
    kl += std::exp(lp) * (lp - lq);
  }
  return std::max(kl, 0.0);  // rounding can leave -1e-17 on identical rows
}

}  // namespace alap
