// How far a prefill attention output element may be from a double-precision reference of the same
// quantised arithmetic (attn_gpu_test, ops_gpu_test).
#pragma once

#include <cstdlib>
#include <cstring>

#include "kernels/gpu/gpu_port.h"

namespace alap::test {

// Whether a prefill of this head_dim runs on attn_prefill_mma.h's matrix-unit kernel (CUDA, head_dim
// 64 and 128, unless ALAP_GPU_PREFILL_MMA=0 asks for the scalar one): its P·V takes P in fp16.
inline bool prefill_on_matrix_units(int head_dim) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  const char* e = std::getenv("ALAP_GPU_PREFILL_MMA");
  return (head_dim == 64 || head_dim == 128) && !(e != nullptr && std::strcmp(e, "0") == 0);
#else
  (void)head_dim;
  return false;
#endif
}

// fp32 throughout (the scalar kernels): 1e-4 absolute, for scores |s| ≲ 10 rounded to ~1e-6 and
// weighted sums of |v| ≲ 4. P rounded to fp16 (the matrix-unit kernel) adds at most fp16's unit
// roundoff, 2^-11, of each weight: 2^-11 · Σ_j p_j·|v_j| / Σ_j p_j, the element's weighted_abs_v.
inline double prefill_bound(bool fp16_p, double weighted_abs_v) {
  return 1e-4 + (fp16_p ? 0x1p-11 * weighted_abs_v : 0.0);
}

}  // namespace alap::test
