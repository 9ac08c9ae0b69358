// AVX-512 VNNI variant: the tiled int8 matmuls of vnni/vnni_kernels.inc with 512-bit vpdpbusd
// over pairs of blocks and 32 vector registers (4 rows × 4 tokens per tile), one-token decode
// paths bit-identical to the tile, and 512-bit products for Q4_1/Q5_1/Q2_K/Q3_K; packed-K scores
// with the EVEX 256-bit vpdpbusd (AVX512VL); 16-lane attention V sums.
// Plain weight types, k8_dot and the attention loops are the AVX2 ones; products on packed
// (row-interleaved) weights are in packed_vnni.cpp.
// GCC 12's avx512fintrin.h builds 512-bit inserts and shuffles from _mm512_undefined_*(), which
// -Wmaybe-uninitialized reports at -O3 once inlined: a false positive in the system header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#define ALAP_VNNI_NS avx512vnni
#define ALAP_DPBUSD _mm256_dpbusd_epi32
#define ALAP_VNNI_RMAX 4
#define ALAP_VNNI_TMAX 4
#define ALAP_VNNI_512 1
#include "vnni/vnni_kernels.inc"

namespace alap::kernels::avx512vnni {

const CpuVariant kVariant = {"avx512vnni",      &matmul,           &quantize_acts, &avx2::k8_dot, &k8_scores,
                             &avx2::f16_scores, &f16_accum_v, &avx2::softmax, &k8_accum_v, &matmul_packed,
                             &silu_mul,         nullptr,           nullptr,        &rmsnorm,
                             &packed_tiles_form, &make_acts_tiles, &matmul_swiglu_packed};

}  // namespace alap::kernels::avx512vnni
