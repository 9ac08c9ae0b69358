// LogitsTop: the best entries of one logits row, the form in which a device that holds the row
// hands it to the sampler (core/model GpuForward::logits_top fills it, core/sample
// sampler_candidates_top reads it). A plain view, apart from sampler.h so that the forward pass
// names it without the sampler.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace alap {

// The best entries of one logits row, as a device that holds the row finds them (GPU decode:
// kernels/gpu/ops.h gpu_logits_top), so that only these cross the bus instead of the row.
// ids/logits: the m best of the row (m = min(sampler_top_wanted, n_vocab) or more) in the sampler's full
// order (logit descending, then lower id), the logits as in the row (a -0.0 may read +0.0).
// first_nan: the lowest index of a NaN in the row, or -1.
struct LogitsTop {
  std::span<const int32_t> ids;
  std::span<const float> logits;
  size_t n_vocab = 0;
  int64_t first_nan = -1;
};

}  // namespace alap
