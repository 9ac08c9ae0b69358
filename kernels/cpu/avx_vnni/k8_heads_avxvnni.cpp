// AVX-VNNI grouped-head packed-K scores (attn_heads.h avxvnni::k8_scores_heads8): 8 keys per ymm
// as k + 128, one VEX vpdpbusd per head and 4 dims (avx2/k8_heads_avx2.inc). Bit for bit
// scalar::k8_scores_heads. Built with -mavxvnni; runs only when cpuid says AVX-VNNI.
#define ALAP_K8H_NS avxvnni
#define ALAP_K8H_VNNI 1
#include "avx2/k8_heads_avx2.inc"
