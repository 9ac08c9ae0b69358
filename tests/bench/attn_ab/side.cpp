// One side of attn_ab (see attn_ab.sh): compiled twice, with -Dalap=alap_old -DAB_SIDE=old and with
// -Dalap=alap_new -DAB_SIDE=new, each against its own tree's kernels library renamed the same way,
// so one process holds both versions of the attention kernels and can alternate them.
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "alap/kernels/attn.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"
#include "side.h"

#define AB_CAT2(a, b) a##b
#define AB_CAT(a, b) AB_CAT2(a, b)

extern "C" bool AB_CAT(ab_variant_, AB_SIDE)(const char* name) { return alap::kernels::set_cpu_variant(name); }

extern "C" void AB_CAT(ab_quantize_, AB_SIDE)(const float* x, size_t head_dim, int8_t* q, uint16_t* d) {
  alap::kernels::k8_quantize(x, head_dim, q, d);
}

extern "C" double AB_CAT(ab_run_, AB_SIDE)(const AbCache& c, const AbQuery& q, AbMode mode, size_t b0, size_t nb,
                                           bool warm, AbOut& o) {
  using namespace alap::kernels;
  const size_t D = c.head_dim, nbk = D / 32, G = q.n_heads;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < nb; ++i) {
    const size_t k0 = (warm ? b0 : b0 + i) * kAbBlock;
    switch (mode) {
      case AbMode::f16:
      case AbMode::k8:
      case AbMode::k8v8: {
        AttnBlock ab;
        ab.head_dim_k = ab.head_dim_v = D, ab.block_v = 32;
        if (mode == AbMode::f16) {
          ab.q = q.f, ab.k = c.kf + k0 * D;
        } else {
          ab.qq = q.q, ab.qd = q.d, ab.kq = c.kq + k0 * D, ab.kd = c.kd + k0 * nbk;
        }
        if (mode == AbMode::k8v8) {
          ab.vq = c.vq + k0 * D, ab.vd = c.vd + k0 * nbk;
        } else {
          ab.v = c.vf + k0 * D;
        }
        attn_block_heads(ab, G, kAbBlock, 0.125f, o.scores, kAbBlock, o.m, o.l, o.out);
        break;
      }
      case AbMode::f16_scores: f16_scores_heads(q.f, G, c.kf + k0 * D, D, kAbBlock, 0.125f, o.scores, kAbBlock); break;
      case AbMode::f16_v: f16_accum_v_heads(o.p, kAbBlock, G, c.vf + k0 * D, D, kAbBlock, o.out); break;
      case AbMode::softmax:
        for (size_t h = 0; h < G; ++h) softmax_partial(o.scores + h * kAbBlock, kAbBlock, o.m + h, o.l + h);
        break;
      case AbMode::k8_scores:
        k8_scores_heads(q.q, q.d, G, c.kq + k0 * D, c.kd + k0 * nbk, D, kAbBlock, 0.125f, o.scores, kAbBlock);
        break;
      case AbMode::k8_v:
        k8_accum_v_heads(o.p, kAbBlock, G, c.vq + k0 * D, c.vd + k0 * nbk, D, 32, kAbBlock, o.out);
        break;
    }
    asm volatile("" ::"r"(o.out), "r"(o.scores) : "memory");
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}
