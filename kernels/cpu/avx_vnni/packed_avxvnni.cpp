// AVX-VNNI (VEX 256-bit vpdpbusd, 16 vector registers) products on row-interleaved weights: the
// shared 256-bit kernels of avx2/packed256.inc with one vpdpbusd a dot step.
#define ALAP_PACKED256_NS avxvnni
#define ALAP_PACKED256_VNNI 1
#include "avx2/packed256.inc"
