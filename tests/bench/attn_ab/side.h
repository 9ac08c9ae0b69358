// attn_ab's shared types: plain structs, the same for both sides (no alap type crosses).
#pragma once
#include <cstddef>
#include <cstdint>

inline constexpr size_t kAbBlock = 256;  // keys per block, as core/model/attention_cpu.h kKeyBlock

enum class AbMode : int { f16, k8, k8v8, f16_scores, f16_v, softmax, k8_scores, k8_v };
inline constexpr int kAbModes = 8;
inline constexpr const char* kAbModeNames[kAbModes] = {"f16", "k8", "k8v8", "f16_scores", "f16_v", "softmax",
                                                       "k8_scores", "k8_v"};

struct AbCache {  // every key of the cold walk: fp16 and packed K and V rows, the packed rows' scales
  size_t n_keys, head_dim;
  uint16_t *kf, *vf;
  int8_t *kq, *vq;
  uint16_t *kd, *vd;
};
struct AbQuery {  // the group's queries: fp32, and packed (codes, fp16 scales)
  size_t n_heads;
  const float* f;
  const int8_t* q;
  const uint16_t* d;
};
struct AbOut {  // per side: scores [heads][block], p (a fixed softmax for the V-only modes), m, l, out
  float *scores, *p, *m, *l, *out;
};

#define AB_DECLARE(S)                                                                           \
  extern "C" bool ab_variant_##S(const char* name);                                             \
  extern "C" void ab_quantize_##S(const float* x, size_t head_dim, int8_t* q, uint16_t* d);   \
  extern "C" double ab_run_##S(const AbCache& c, const AbQuery& q, AbMode mode, size_t b0, size_t nb, bool warm, \
                               AbOut& o);
AB_DECLARE(old)
AB_DECLARE(new)
