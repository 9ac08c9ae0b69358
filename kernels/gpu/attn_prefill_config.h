// Build switches of the matrix-unit prefill attention (attn_prefill_mma.h), in a header of their own
// so that the tests bound the kernels' errors with the values the kernels were built with
// (tests/kernels/gpu/prefill_bound.h). Plain preprocessor definitions: no device code.
#pragma once

// P enters the P·V mma rounded to fp16, as in the field's flash attention: an output element's error
// is then at most 2^-11 · Σ p_j·|v_j| / Σ p_j (fp16's unit roundoff of each weight), which the tests
// bound element by element. ALAP_PREFILL_P_LO=1 builds the variant that also multiplies P's fp16
// remainder (p = hi + lo to ~2^-22; errors ~4e-6 against a double reference): twice the P·V mma,
// prompts at 32k take 1.06–1.16× as long (docs/bench/gpu.md "Session 44"). For measurements only.
#ifndef ALAP_PREFILL_P_LO
#define ALAP_PREFILL_P_LO 0
#endif
// ALAP_PREFILL_K8_FMA=1: k8 scores as two FFMA an element, the accumulator's bias folded into the
// first (not the same bits; M·d_q is exact, so the first gives i·d_q rounded once), with each warp's
// K scales of a tile converted to fp32 once (4 a lane) into its own shared area, transposed, so a
// lane reads a pair of rows' scales with one 8-byte load, and the scale to log2 units folded into
// those (no multiply a score). Measured (H100): the kernel 1.015x at depth, 2-5% slower on small
// grids, prompts 1.00-1.01x; not taken (docs/bench/gpu.md "Session 46", where it is "=2").
#ifndef ALAP_PREFILL_K8_FMA
#define ALAP_PREFILL_K8_FMA 0
#endif
// ALAP_PREFILL_V8_SCALED=1 (the default since session 47): k8v8 stages its V tile as fp16(q·d_v), the
// block scale applied once a tile in the conversion pass (rounded to fp16 like P, d_v held to 511.75
// so that no value passes fp16's end), so its P·V is f16's: one A fragment a 16-row step instead of
// one per 32-dim block. Measured: the k8v8 kernel 1.03-1.10x (H100, session 46) and 1.07-1.10x for
// Llama-3-8B (H200, session 47), 32k prompts of Llama-3.2-1B 1.04-1.05x, the eval model's perplexity
// on the GPU 22.4728 against the CPU's 22.4761. =0 builds the old form (exact int8 codes, the scale
// on P, which P's headroom factor of 128 overflows to infinity in a V block whose scale passes 511.75).
#ifndef ALAP_PREFILL_V8_SCALED
#define ALAP_PREFILL_V8_SCALED 1
#endif
