// The packed-row rule of DESIGN.md "KV cache formats (normative)" for one 32-value block held one
// value per lane of a 32-lane group: d = max|x| / 127 (stored fp16), q = round(x / d) clamped to
// [-127, 127], 0 when d is 0. Shared by the cache writers (kv_k8_store.hip, and the fused RoPE +
// store of ops_elementwise.hip) so that both write the same bytes. Device code only.
#pragma once

#include "kernels/gpu/gpu_port.h"

#if defined(__HIP__) || defined(__CUDACC__)

struct alap_k8_lane {
  int q;    // this lane's quantised value
  float d;  // the block's scale (the same in every lane)
};

// Every lane of the 32-lane group must call it (shuffles); a lane without a value passes 0.
__device__ __forceinline__ alap_k8_lane alap_k8_quantize_lane(float x) {
  float amax = fabsf(x);
  for (int off = 16; off > 0; off >>= 1) amax = fmaxf(amax, alap_shfl_xor(amax, off, 32));
  const float d = amax / 127.0f;
  const int q = d > 0.0f ? static_cast<int>(fminf(fmaxf(roundf(x / d), -127.0f), 127.0f)) : 0;
  return {q, d};
}

#endif
