// AVX-VNNI variant (VEX 256-bit vpdpbusd, for CPUs with AVX-VNNI but no AVX-512): the tiled int8
// matmuls and packed-K scores of vnni/vnni_kernels.inc with 16 vector registers (4 rows × 2 tokens),
// one token through the 256-bit decode paths of avx2/avx2_common.h with vpdpbusd (bit-identical to
// the tile). Plain weight types, k8_dot and the attention loops are the AVX2 ones; products on
// packed (row-interleaved) weights are in packed_avxvnni.cpp.
#define ALAP_VNNI_NS avxvnni
#define ALAP_DPBUSD _mm256_dpbusd_avx_epi32
#define ALAP_VNNI_RMAX 4
#define ALAP_VNNI_TMAX 2
#define ALAP_VNNI_512 0
#include "vnni/vnni_kernels.inc"

namespace alap::kernels::avxvnni {

const CpuVariant kVariant = {"avxvnni",         &matmul,           &avx2::quantize_acts, &avx2::k8_dot, &k8_scores,
                             &avx2::f16_scores, &avx2::f16_accum_v, &avx2::softmax, &avx2::k8_accum_v,
                             &matmul_packed,    &avx2::silu_mul,   nullptr,
                             nullptr,           &avx2::rmsnorm};

}  // namespace alap::kernels::avxvnni
