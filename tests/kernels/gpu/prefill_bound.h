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

// Whether a k8v8 prefill rounds V to fp16 (q·d_v staged so): the matrix-unit kernel does.
inline bool prefill_v8_rounded_to_fp16(int head_dim) { return prefill_on_matrix_units(head_dim); }

// fp32 throughout (the scalar kernels): 1e-4 absolute, for scores |s| ≲ 10 rounded to ~1e-6 and
// weighted sums of |v| ≲ 4. P rounded to fp16 (the matrix-unit kernel) adds at most fp16's unit
// roundoff, 2^-11, of each weight: 2^-11 · Σ_j p_j·|v_j| / Σ_j p_j, the element's weighted_abs_v.
// V rounded to fp16 as well (fp16_v) adds the same again: |p̃ṽ − pv| ≤ (2·2^-11 + 2^-22)·p|v|.
inline double prefill_bound(bool fp16_p, double weighted_abs_v, bool fp16_v = false) {
  const double roundings = (fp16_p ? 1.0 : 0.0) + (fp16_v ? 1.0 + 0x1p-11 : 0.0);
  return 1e-4 + roundings * 0x1p-11 * weighted_abs_v;
}

}  // namespace alap::test
