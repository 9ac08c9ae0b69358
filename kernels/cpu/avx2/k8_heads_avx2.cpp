// AVX2 grouped-head packed-K scores (attn_heads.h avx2::k8_scores_heads8): 8 keys per ymm,
// transposed once per block, every head's int16 query words through vpmaddwd (k8_heads_avx2.inc).
// Bit for bit scalar::k8_scores_heads; the one-head loops stay in attn_avx2.cpp / k8_avx2.cpp.
#define ALAP_K8H_NS avx2
#define ALAP_K8H_VNNI 0
#include "avx2/k8_heads_avx2.inc"
