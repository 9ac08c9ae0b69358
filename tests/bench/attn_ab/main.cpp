// attn_ab: the decode attention kernels of two source trees in one process, alternated every 64
// key blocks, so that this project's noisy shared machines (a VM whose speed moves by up to 1.6x
// from second to second) affect both alike. Built and run by attn_ab.sh; docs/bench/cpu.md "fp16
// scores three keys at a time (session 15)" has the method's figures.
//
//   attn_ab VARIANT ROUNDS [GROUP_HEADS HEAD_DIM MODES]
//
// For each mode (f16, k8, k8v8 = attn_block_heads with that cache form; f16_scores, f16_v,
// softmax, k8_scores, k8_v = one kernel alone) and warm (one block again and again) then cold (a
// 256 MiB cache in huge pages walked in order): ns a key of the old and the new side (medians of
// ROUNDS pairs, the order swapped every round), the median of the pairs' new/old, and whether the
// two sides' outputs on one block are the same bits.
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "side.h"

namespace {

template <class T>
T* huge(size_t n) {
  const size_t align = size_t{2} << 20, bytes = (n * sizeof(T) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, bytes);
  if (p == nullptr) {
    std::fprintf(stderr, "attn_ab: out of memory\n");
    std::exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);
  return static_cast<T*>(p);
}

uint16_t to_fp16(float x) { return _cvtss_sh(x, 0); }  // round to nearest even, as kv_row_to_fp16

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Side {
  std::vector<float> scores, p, m, l, out;
  AbOut view() { return {scores.data(), p.data(), m.data(), l.data(), out.data()}; }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: attn_ab VARIANT ROUNDS [GROUP_HEADS HEAD_DIM MODES]\n");
    return 2;
  }
  const char* variant = argv[1];
  const int rounds = std::max(1, std::atoi(argv[2]));
  const size_t G = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 4;
  const size_t D = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 64;
  const int n_modes = argc > 5 ? std::clamp(std::atoi(argv[5]), 1, kAbModes) : kAbModes;
  if (D % 32 != 0 || G == 0 || G > 32) {
    std::fprintf(stderr, "attn_ab: HEAD_DIM must be a multiple of 32 and GROUP_HEADS 1..32\n");
    return 2;
  }
  if (!ab_variant_old(variant) || !ab_variant_new(variant)) {
    std::fprintf(stderr, "attn_ab: variant %s is not available on this CPU\n", variant);
    return 2;
  }
  AbCache c{};
  c.head_dim = D;
  c.n_keys = (size_t{256} << 20) / (4 * D) / kAbBlock * kAbBlock;  // fp16 K + V: 4·D bytes a key
  const size_t nbk = D / 32;
  c.kf = huge<uint16_t>(c.n_keys * D), c.vf = huge<uint16_t>(c.n_keys * D);
  c.kq = huge<int8_t>(c.n_keys * D), c.vq = huge<int8_t>(c.n_keys * D);
  c.kd = huge<uint16_t>(c.n_keys * nbk), c.vd = huge<uint16_t>(c.n_keys * nbk);
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> row(D);
  for (size_t j = 0; j < c.n_keys; ++j) {
    for (auto& e : row) e = nd(rng);
    for (size_t i = 0; i < D; ++i) c.kf[j * D + i] = to_fp16(row[i]);
    ab_quantize_old(row.data(), D, c.kq + j * D, c.kd + j * nbk);
    for (auto& e : row) e = nd(rng);
    for (size_t i = 0; i < D; ++i) c.vf[j * D + i] = to_fp16(row[i]);
    ab_quantize_old(row.data(), D, c.vq + j * D, c.vd + j * nbk);
  }
  std::vector<float> qf(G * D);
  for (auto& e : qf) e = nd(rng) * 0.3f;
  std::vector<int8_t> qq(G * D);
  std::vector<uint16_t> qd(G * nbk);
  for (size_t h = 0; h < G; ++h) ab_quantize_old(&qf[h * D], D, &qq[h * D], &qd[h * nbk]);
  const AbQuery q{G, qf.data(), qq.data(), qd.data()};
  std::vector<float> p(G * kAbBlock);
  for (auto& e : p) e = std::fabs(nd(rng)) / kAbBlock;
  Side so, sn;  // filled before each mode
  const size_t n_blocks = c.n_keys / kAbBlock, chunk = 64;
  std::printf("attn_ab: variant %s, %zu heads of %zu, %zu keys cold (%zu MiB of fp16 K+V), %d rounds\n", variant, G, D,
              c.n_keys, (4 * D * c.n_keys) >> 20, rounds);
  for (int warm = 1; warm >= 0; --warm) {
    for (int mi = 0; mi < n_modes; ++mi) {
      const auto mode = static_cast<AbMode>(mi);
      // The same bits: both sides on block 3 from the same state.
      for (Side* s : {&so, &sn}) {
        s->scores.assign(G * kAbBlock, 0.5f), s->out.assign(G * D, 0.25f), s->p = p;
        s->m.assign(G, 0.0f), s->l.assign(G, 0.0f);
      }
      AbOut oo = so.view(), on = sn.view();
      ab_run_old(c, q, mode, 3, 1, true, oo);
      ab_run_new(c, q, mode, 3, 1, true, on);
      const bool same = so.scores == sn.scores && so.out == sn.out && so.m == sn.m && so.l == sn.l;
      std::vector<double> to, tn, ratio;
      size_t b = 0;
      for (int r = 0; r < rounds; ++r) {
        if (b + 2 * chunk > n_blocks) b = 0;
        double t_old, t_new;
        if (r % 2 == 0) {
          t_old = ab_run_old(c, q, mode, b, chunk, warm, oo);
          t_new = ab_run_new(c, q, mode, b + chunk, chunk, warm, on);
        } else {
          t_new = ab_run_new(c, q, mode, b, chunk, warm, on);
          t_old = ab_run_old(c, q, mode, b + chunk, chunk, warm, oo);
        }
        b += 2 * chunk;
        to.push_back(t_old / (chunk * kAbBlock));
        tn.push_back(t_new / (chunk * kAbBlock));
        ratio.push_back(t_new / t_old);
      }
      std::printf("%-4s %-10s old %6.2f  new %6.2f ns a key  new/old %.3f  bits %s\n", warm ? "warm" : "cold",
                  kAbModeNames[mi], median(to), median(tn), median(ratio), same ? "same" : "DIFFER");
    }
  }
  return 0;
}
