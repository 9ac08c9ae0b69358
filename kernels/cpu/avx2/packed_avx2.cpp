// Plain AVX2 (no VNNI) products on row-interleaved weights, for laptops without vpdpbusd: the
// shared 256-bit kernels of avx2/packed256.inc with each dot step as vpmaddubsw + vpaddw.
#define ALAP_PACKED256_NS avx2
#define ALAP_PACKED256_VNNI 0
#include "avx2/packed256.inc"
