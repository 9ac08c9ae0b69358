// Elementwise activations of the forward pass: the FFN's SwiGLU gate. Not the products, norms or
// attention (quant.h, attn.h). The scalar twin is std::exp's arithmetic; the SIMD variants use a
// vector exp within 2 ulp of it, so results agree to a few ulp (fast_paths_test checks the bound).
#pragma once

#include <cstddef>

namespace alap::kernels {

// gate[i] = SiLU(gate[i]) · up[i] = gate[i] / (1 + exp(−gate[i])) · up[i] for i in [0, n), in place.
void silu_mul(float* gate, const float* up, size_t n);

}  // namespace alap::kernels
