// Tests of the grouped-head attention kernels (attn.h / kv_k8.h "_heads"): every variant against
// the scalar twin (packed-K scores and both V sums bit for bit, the sse4 variant's fp16 V sum and
// fp16 scores within rounding),
// the scalar twins against plain per-head math, odd key counts and strides, each head and key
// independent of the others in a call (prefill tiles), and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "alap/kernels/attn.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"

using namespace alap::kernels;

namespace {

const char* const kVariants[] = {"scalar", "sse4", "avx2", "avxvnni", "avx512vnni"};

// The sse4 variant has no FMA hardware: its fp16 V sum multiplies then adds (attn.h,
// f16_accum_v_heads), each key's step within one f32 rounding of the product of std::fma's. A
// lane's bound: three half-ulps (the product, and the add in both sums) of its largest magnitude per
// key, out's start plus Σ |p·v| over the keys.
bool no_fma(const char* v) { return std::string(v) == "sse4"; }

struct Group {
  size_t head_dim, n_heads, n, ld, block, nb;
  std::vector<float> q;                // [n_heads][head_dim]
  std::vector<int8_t> qq;              // packed queries
  std::vector<uint16_t> qd;            // [n_heads][nb]
  std::vector<uint16_t> kf;            // fp16 keys [n][head_dim]
  std::vector<int8_t> kq;              // packed keys
  std::vector<uint16_t> kd;            // [n][nb]
  std::vector<float> p;                // [n_heads][ld]
};

Group make_group(size_t head_dim, size_t n_heads, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  Group g{head_dim, n_heads, n, n + 3, k8_block_size(head_dim), 0, {}, {}, {}, {}, {}, {}, {}};
  g.nb = head_dim / g.block;
  g.q.resize(n_heads * head_dim);
  for (auto& e : g.q) e = nd(rng);
  g.qq.resize(n_heads * head_dim);
  g.qd.resize(n_heads * g.nb);
  for (size_t h = 0; h < n_heads; ++h) k8_quantize(&g.q[h * head_dim], head_dim, &g.qq[h * head_dim], &g.qd[h * g.nb]);
  g.kf.resize(n * head_dim);
  g.kq.resize(n * head_dim);
  g.kd.resize(n * g.nb);
  std::vector<float> row(head_dim);
  for (size_t j = 0; j < n; ++j) {
    for (auto& e : row) e = nd(rng) * (j % 5 == 0 ? 8.0f : 1.0f);
    if (j == 3) std::fill(row.begin(), row.end(), 0.0f);  // an all-zero key (d = 0)
    if (j == 4) std::fill(row.begin(), row.end(), -3.0f);  // every value at −127
    for (size_t i = 0; i < head_dim; ++i) g.kf[j * head_dim + i] = f32_to_fp16(row[i]);
    k8_quantize(row.data(), head_dim, &g.kq[j * head_dim], &g.kd[j * g.nb]);
  }
  g.p.assign(n_heads * g.ld, 7.0f);  // the stride's gap must not be read
  for (size_t h = 0; h < n_heads; ++h) {
    for (size_t j = 0; j < n; ++j) g.p[h * g.ld + j] = std::fabs(nd(rng));
  }
  return g;
}

struct Outputs {
  std::vector<float> s8, s16, o16, o8;
};

Outputs run_all(const Group& g) {
  Outputs r;
  r.s8.assign(g.n_heads * g.ld, 5.0f);
  r.s16.assign(g.n_heads * g.ld, 5.0f);
  r.o16.assign(g.n_heads * g.head_dim, 0.5f);
  r.o8.assign(g.n_heads * g.head_dim, -0.25f);
  k8_scores_heads(g.qq.data(), g.qd.data(), g.n_heads, g.kq.data(), g.kd.data(), g.head_dim, g.n, 0.125f, r.s8.data(),
                  g.ld);
  f16_scores_heads(g.q.data(), g.n_heads, g.kf.data(), g.head_dim, g.n, 0.125f, r.s16.data(), g.ld);
  f16_accum_v_heads(g.p.data(), g.ld, g.n_heads, g.kf.data(), g.head_dim, g.n, r.o16.data());
  k8_accum_v_heads(g.p.data(), g.ld, g.n_heads, g.kq.data(), g.kd.data(), g.head_dim, g.block, g.n, r.o8.data());
  return r;
}

struct Shape {
  size_t head_dim, n_heads, n;
};
// head_dim 64 and 128 with 1..8 heads take the AVX-512 packed-K path with both fixed at compile
// time (every head count appears at 64 or 128, with and without a key tail; one head its own
// per-key loop); the rest the general one. One head of 128 or more: AVX-512 V sums of 128 lanes.
const Shape kShapes[] = {{64, 7, 300}, {64, 4, 16},  {64, 1, 5},   {128, 8, 45}, {128, 3, 33}, {32, 5, 17},
                         {96, 2, 40},  {256, 9, 19}, {16, 4, 21},  {64, 12, 64}, {128, 40, 20}, {64, 2, 37},
                         {64, 5, 50},  {64, 6, 18},  {128, 2, 29}, {128, 4, 64}, {64, 8, 256},
                         // one to three heads over wide passes (the 256-bit variants: 12- and 6-key
                         // score steps, V sums of 64 / 32 / 24 lanes, packed V over two blocks):
                         // key counts past a step, an odd block count (96), runs of 256 keys (300)
                         {64, 1, 40},  {96, 1, 27},  {128, 1, 300}, {256, 1, 13}, {64, 3, 20}, {96, 2, 300},
                         // AVX-512 fp16 scores of 5-8 heads in two register passes (3+2, 4+3 heads)
                         {128, 5, 24}, {128, 7, 50},
                         // AVX-512 packed-K scores of 9-32 rows (a prompt tile): 32 keys a step, rows 4
                         // at a time and 1-3 left over, the step's second 16 keys partial or empty
                         {64, 32, 100}, {128, 30, 50}, {64, 13, 17}};


// An AttnBlock over gk's queries and keys and gv's keys as the V rows, in cache form `form`: 0 fp16
// K and V, 1 packed K, 2 packed K and V.
AttnBlock block_of(const Group& gk, const Group& gv, int form) {
  AttnBlock b;
  b.head_dim_k = gk.head_dim, b.head_dim_v = gv.head_dim, b.block_v = gv.block;
  if (form == 0) {
    b.q = gk.q.data(), b.k = gk.kf.data();
  } else {
    b.qq = gk.qq.data(), b.qd = gk.qd.data(), b.kq = gk.kq.data(), b.kd = gk.kd.data();
  }
  if (form == 2) {
    b.vq = gv.kq.data(), b.vd = gv.kd.data();
  } else {
    b.v = gv.kf.data();
  }
  return b;
}

// The block's calls in order for `rows` rows (scores, softmax_partial of each, the V sum from 0);
// fp16 K and V through the prompt tiles' calls (tiles) or the _heads ones.
void block_in_order(const AttnBlock& b, size_t rows, size_t n, size_t ld, bool tiles, std::vector<float>& s,
                    std::vector<float>& m, std::vector<float>& l, std::vector<float>& o) {
  if (b.kq != nullptr) {
    k8_scores_heads(b.qq, b.qd, rows, b.kq, b.kd, b.head_dim_k, n, 0.125f, s.data(), ld);
  } else if (tiles) {
    f16_scores_tiles(b.q, rows, b.k, b.head_dim_k, n, 0.125f, s.data(), ld);
  } else {
    f16_scores_heads(b.q, rows, b.k, b.head_dim_k, n, 0.125f, s.data(), ld);
  }
  for (size_t r = 0; r < rows; ++r) softmax_partial(&s[r * ld], n, &m[r], &l[r]);
  std::fill(o.begin(), o.end(), 0.0f);
  if (b.vq != nullptr) {
    k8_accum_v_heads(s.data(), ld, rows, b.vq, b.vd, b.head_dim_v, b.block_v, n, o.data());
  } else if (tiles) {
    f16_accum_v_tiles(s.data(), ld, rows, b.v, b.head_dim_v, n, o.data());
  } else {
    f16_accum_v_heads(s.data(), ld, rows, b.v, b.head_dim_v, n, o.data());
  }
}
}  // namespace

TEST(AttnHeads, ScalarTwinsAreThePerHeadMath) {
  force_scalar_kernels(true);
  for (const Shape& sh : kShapes) {
    const Group g = make_group(sh.head_dim, sh.n_heads, sh.n, 3);
    const Outputs r = run_all(g);
    for (size_t h = 0; h < g.n_heads; ++h) {
      std::vector<float> s8(g.n), s16(g.n);
      k8_scores(&g.qq[h * g.head_dim], &g.qd[h * g.nb], g.kq.data(), g.kd.data(), g.head_dim, g.n, 0.125f, s8.data());
      f16_scores(&g.q[h * g.head_dim], g.kf.data(), g.head_dim, g.n, 0.125f, s16.data());
      for (size_t j = 0; j < g.n; ++j) {
        ASSERT_EQ(r.s8[h * g.ld + j], s8[j]) << "h " << h << " j " << j;
        ASSERT_EQ(r.s16[h * g.ld + j], s16[j]);
      }
      for (size_t j = g.n; j < g.ld; ++j) ASSERT_EQ(r.s8[h * g.ld + j], 5.0f);  // nothing past n written
      // The packed V sum's codes (the v16 rule, attn.h) are within half a step of 32767·w/M, M the
      // largest |w| of the head's block in a run: a lane may be off by Σ_j 0.5·(M/32767)·|q[j][i]|
      // beside the float roundings (8-bit codes would be off ~258 times that).
      std::vector<float> deq(g.head_dim);
      for (size_t i = 0; i < g.head_dim; ++i) {
        const size_t b = i / g.block;
        double want16 = 0.5, want8 = -0.25, bound = 0.0;
        for (size_t j0 = 0; j0 < g.n; j0 += kV16Run) {
          const size_t j1 = std::min(g.n, j0 + kV16Run);
          double mx = 0.0;
          for (size_t j = j0; j < j1; ++j) {
            mx = std::max(mx, std::fabs(double(g.p[h * g.ld + j]) * fp16_to_f32(g.kd[j * g.nb + b])));
          }
          for (size_t j = j0; j < j1; ++j) {
            k8_dequantize(&g.kq[j * g.head_dim], &g.kd[j * g.nb], g.head_dim, deq.data());
            want16 += double(g.p[h * g.ld + j]) * fp16_to_f32(g.kf[j * g.head_dim + i]);
            want8 += double(g.p[h * g.ld + j]) * deq[i];
            bound += 0.5 * mx / 32767.0 * std::abs(int{g.kq[j * g.head_dim + i]});
          }
        }
        ASSERT_NEAR(r.o16[h * g.head_dim + i], want16, 1e-4 * (1 + std::fabs(want16)));
        ASSERT_NEAR(r.o8[h * g.head_dim + i], want8, 1.001 * bound + 1e-5 * (1 + std::fabs(want8)))
            << "h " << h << " i " << i << " n " << g.n;
      }
    }
  }
  set_cpu_variant("best");
}

TEST(AttnHeads, EveryVariantMatchesTheScalarTwin) {
  int checked = 0;
  for (const Shape& sh : kShapes) {
    const Group g = make_group(sh.head_dim, sh.n_heads, sh.n, 11);
    force_scalar_kernels(true);
    const Outputs want = run_all(g);
    for (const char* v : kVariants) {
      if (!set_cpu_variant(v)) continue;
      const Outputs got = run_all(g);
      EXPECT_EQ(got.s8, want.s8) << v << " head_dim " << sh.head_dim << " heads " << sh.n_heads;  // bit for bit
      if (no_fma(v)) {
        for (size_t h = 0; h < g.n_heads; ++h) {
          for (size_t i = 0; i < g.head_dim; ++i) {
            double mag = 0.5;  // run_all's start
            for (size_t j = 0; j < g.n; ++j) mag += std::fabs(double(g.p[h * g.ld + j]) * fp16_to_f32(g.kf[j * g.head_dim + i]));
            const size_t at = h * g.head_dim + i;
            ASSERT_NEAR(got.o16[at], want.o16[at], 3 * 0x1p-24 * double(g.n) * mag) << v << " h " << h << " i " << i;
          }
        }
      } else {
        EXPECT_EQ(got.o16, want.o16) << v << " head_dim " << sh.head_dim;
      }
      EXPECT_EQ(got.o8, want.o8) << v << " head_dim " << sh.head_dim;
      for (size_t i = 0; i < got.s16.size(); ++i) {
        ASSERT_NEAR(got.s16[i], want.s16[i], 2e-5f * (1.0f + std::fabs(want.s16[i]))) << v << " at " << i;
      }
      ++checked;
    }
  }
  set_cpu_variant("best");
  EXPECT_GE(checked, 10);
}

// What CPU prefill tiles rely on (core/model/attention_cpu.cpp): in every variant a head's
// scores and V sums are bit for bit the same whatever heads run beside it (one call per head, or
// all in one call, 4 to 70 rows: AVX-512's paths for few heads and for many) and whatever key count
// the call has (a prefix of the keys gives a prefix of the scores); an fp16 V sum split into runs
// of keys anywhere equals one call over all of them, a packed one (the v16 rule) split at kV16Run.
TEST(AttnHeads, EachHeadAndKeyStandsAlone) {
  int checked = 0;
  for (const Shape& sh : {Shape{64, 70, 300}, Shape{64, 28, 45}, Shape{128, 32, 37}, Shape{32, 9, 20},
                          Shape{64, 4, 45}, Shape{64, 5, 29}, Shape{128, 6, 33}, Shape{96, 4, 40}}) {
    const Group g = make_group(sh.head_dim, sh.n_heads, sh.n, 21);
    for (const char* v : kVariants) {
      if (!set_cpu_variant(v)) continue;
      const Outputs all = run_all(g);
      const size_t cut = g.n - 13;  // a prefix of the keys, and the split point of the V sums
      for (size_t h = 0; h < g.n_heads; ++h) {
        std::vector<float> s8(g.n), s16(g.n), s8p(cut), s16p(cut);
        k8_scores_heads(&g.qq[h * g.head_dim], &g.qd[h * g.nb], 1, g.kq.data(), g.kd.data(), g.head_dim, g.n, 0.125f,
                        s8.data(), g.n);
        f16_scores_heads(&g.q[h * g.head_dim], 1, g.kf.data(), g.head_dim, g.n, 0.125f, s16.data(), g.n);
        k8_scores_heads(&g.qq[h * g.head_dim], &g.qd[h * g.nb], 1, g.kq.data(), g.kd.data(), g.head_dim, cut, 0.125f,
                        s8p.data(), cut);
        f16_scores_heads(&g.q[h * g.head_dim], 1, g.kf.data(), g.head_dim, cut, 0.125f, s16p.data(), cut);
        for (size_t j = 0; j < g.n; ++j) {
          ASSERT_EQ(all.s8[h * g.ld + j], s8[j]) << v << " h " << h << " j " << j;
          ASSERT_EQ(all.s16[h * g.ld + j], s16[j]) << v << " h " << h << " j " << j;
          if (j < cut) {
            ASSERT_EQ(s8p[j], s8[j]) << v << " h " << h << " j " << j;
            ASSERT_EQ(s16p[j], s16[j]) << v << " h " << h << " j " << j;
          }
        }
      }
      // V sums: heads [3, n_heads) alone, in two runs of keys [0, cut) and [cut, n) (packed: at
      // kV16Run, or one call when the keys are fewer).
      const size_t h0 = 3, nh = g.n_heads - h0, cut8 = std::min(g.n, kV16Run);
      std::vector<float> o16(nh * g.head_dim, 0.5f), o8(nh * g.head_dim, -0.25f);
      for (const auto& [j0, j1] : {std::pair<size_t, size_t>{0, cut}, std::pair<size_t, size_t>{cut, g.n}}) {
        f16_accum_v_heads(&g.p[h0 * g.ld + j0], g.ld, nh, &g.kf[j0 * g.head_dim], g.head_dim, j1 - j0, o16.data());
      }
      for (const auto& [j0, j1] : {std::pair<size_t, size_t>{0, cut8}, std::pair<size_t, size_t>{cut8, g.n}}) {
        if (j1 == j0) continue;
        k8_accum_v_heads(&g.p[h0 * g.ld + j0], g.ld, nh, &g.kq[j0 * g.head_dim], &g.kd[j0 * g.nb], g.head_dim, g.block,
                         j1 - j0, o8.data());
      }
      EXPECT_EQ(o16, std::vector<float>(all.o16.begin() + h0 * g.head_dim, all.o16.end())) << v;
      EXPECT_EQ(o8, std::vector<float>(all.o8.begin() + h0 * g.head_dim, all.o8.end())) << v;
      ++checked;
    }
  }
  set_cpu_variant("best");
  EXPECT_GE(checked, 4);
}

// The integer sums at their limits: key codes −128 and 127 (−128 is outside k8_quantize's range
// but a valid int8 code: the 256-bit kernels must not lose its sign), queries ±127, against both
// signs of each other in every lane position, any head count and key tail; every variant gives
// the scalar rule bit for bit, and the scalar rule its exact integer sums.
TEST(AttnHeads, ExtremeCodesMatchTheScalarRule) {
  int checked = 0;
  for (const Shape& sh :
       {Shape{64, 7, 29}, Shape{128, 5, 16}, Shape{256, 2, 11}, Shape{32, 33, 9}, Shape{320, 3, 10},
        // many rows: the AMX tiles where the CPU has them (k8_scores_heads' bits)
        Shape{64, 20, 29}, Shape{128, 17, 16}, Shape{256, 33, 5}}) {
    const size_t hd = sh.head_dim, nb = hd / 32, ld = sh.n + 2;
    std::mt19937 rng(static_cast<uint32_t>(hd + sh.n_heads));
    std::vector<int8_t> qq(sh.n_heads * hd), kq(sh.n * hd);
    for (size_t i = 0; i < qq.size(); ++i) qq[i] = (rng() >> 7) & 1 ? int8_t{127} : int8_t{-127};
    for (size_t i = 0; i < kq.size(); ++i) kq[i] = (rng() >> 7) & 1 ? int8_t{127} : int8_t{-128};
    for (size_t i = 0; i < hd; ++i) kq[i] = -128;      // key 0: every code −128
    for (size_t i = 0; i < hd; ++i) kq[hd + i] = 127;  // key 1: every code 127
    std::vector<uint16_t> qd(sh.n_heads * nb), kd(sh.n * nb);
    for (auto& d : qd) d = f32_to_fp16(std::ldexp(1.0f + float(rng() % 1000) / 1000.0f, int(rng() % 9) - 12));
    for (auto& d : kd) d = f32_to_fp16(std::ldexp(1.0f + float(rng() % 1000) / 1000.0f, int(rng() % 9) - 12));
    std::vector<float> want(sh.n_heads * ld, 5.0f);
    force_scalar_kernels(true);
    k8_scores_heads(qq.data(), qd.data(), sh.n_heads, kq.data(), kd.data(), hd, sh.n, 0.125f, want.data(), ld);
    // Key 0 against an all-(−127) query head would be 32·127·128 per block; check the scalar rule
    // itself on head 0, key 0 from the integers.
    float acc = 0.0f;
    for (size_t b = 0; b < nb; ++b) {
      int32_t isum = 0;
      for (size_t i = 0; i < 32; ++i) isum += int32_t{qq[32 * b + i]} * -128;
      acc += float(isum) * (fp16_to_f32(qd[b]) * fp16_to_f32(kd[b]));
    }
    ASSERT_EQ(want[0], 0.125f * acc);
    for (const char* v : kVariants) {
      if (!set_cpu_variant(v)) continue;
      std::vector<float> got(sh.n_heads * ld, 5.0f);
      k8_scores_heads(qq.data(), qd.data(), sh.n_heads, kq.data(), kd.data(), hd, sh.n, 0.125f, got.data(), ld);
      EXPECT_EQ(got, want) << v << " head_dim " << hd << " heads " << sh.n_heads;  // bit for bit, gaps untouched
      ++checked;
    }
  }
  set_cpu_variant("best");
  EXPECT_GE(checked, 4);
}

// The packed-K scores of many rows (prompt tiles) on the AMX tiles are k8_scores_heads' bits
// without them: the same int32 block sums and float steps (attn_amx.cpp). Row counts around the
// tiles' 16 and 32, key counts around 16, every head_dim the tiles take, one they do not (96).
TEST(AttnHeads, PackedScoresOnTheTilesKeepTheirBits) {
  if (!set_cpu_variant("avx512vnni") || !amx_prefill_active()) {
    set_cpu_variant("best");
    GTEST_SKIP() << "no AMX tiles on this CPU";
  }
  for (const Shape& sh : {Shape{64, 9, 300}, Shape{64, 16, 16}, Shape{64, 31, 17}, Shape{64, 32, 256},
                          Shape{64, 45, 1}, Shape{128, 28, 45}, Shape{128, 64, 33}, Shape{256, 17, 40},
                          Shape{96, 20, 19}}) {
    const Group g = make_group(sh.head_dim, sh.n_heads, sh.n, 31);
    std::vector<float> tiles(g.n_heads * g.ld, 5.0f), plain(g.n_heads * g.ld, 5.0f);
    k8_scores_heads(g.qq.data(), g.qd.data(), g.n_heads, g.kq.data(), g.kd.data(), g.head_dim, g.n, 0.125f,
                    tiles.data(), g.ld);
    set_amx_prefill(false);
    k8_scores_heads(g.qq.data(), g.qd.data(), g.n_heads, g.kq.data(), g.kd.data(), g.head_dim, g.n, 0.125f,
                    plain.data(), g.ld);
    set_amx_prefill(true);
    EXPECT_EQ(tiles, plain) << "head_dim " << sh.head_dim << " rows " << sh.n_heads << " keys " << sh.n;
  }
  set_cpu_variant("best");
}

// f16_scores_tiles and f16_accum_v_tiles (attn.h): on the AMX tiles each term's bf16 parts leave it
// within ~2^-17 of q·k (p·v), and the f32 sums add one rounding a step, so a result is within
// (2^-16 + 3·terms·2^-24)·Σ|terms| of the exact sum; a V sum adds to out. Each row stands alone:
// rows [5, n_rows) in a call of their own give the same bits. Without the tiles both are the
// _heads calls' bits. Dropping a lo part moves results ~2^-9 of a term, far outside the bound.
TEST(AttnHeads, TilesSumBf16PartsWithinTheirBound) {
  const bool tiles = set_cpu_variant("avx512vnni") && amx_prefill_active();
  set_cpu_variant("best");
  int checked = 0;
  for (const Shape& sh : {Shape{64, 32, 256}, Shape{64, 28, 300}, Shape{128, 16, 37}, Shape{64, 9, 1},
                          Shape{64, 70, 33}, Shape{32, 17, 64}, Shape{128, 33, 256}, Shape{96, 20, 31}}) {
    const Group g = make_group(sh.head_dim, sh.n_heads, sh.n, 41);
    const size_t hd = g.head_dim;
    std::vector<float> s(g.n_heads * g.ld, 5.0f), o(g.n_heads * hd);
    for (size_t i = 0; i < o.size(); ++i) o[i] = 0.25f * float(i % 7) - 0.5f;
    const std::vector<float> o0 = o;
    f16_scores_tiles(g.q.data(), g.n_heads, g.kf.data(), hd, g.n, 0.125f, s.data(), g.ld);
    f16_accum_v_tiles(g.p.data(), g.ld, g.n_heads, g.kf.data(), hd, g.n, o.data());
    for (size_t h = 0; h < g.n_heads; ++h) {
      for (size_t j = 0; j < g.n; ++j) {
        double want = 0.0, mag = 0.0;
        for (size_t i = 0; i < hd; ++i) {
          const double t = double(g.q[h * hd + i]) * fp16_to_f32(g.kf[j * hd + i]);
          want += t, mag += std::fabs(t);
        }
        ASSERT_NEAR(s[h * g.ld + j], 0.125 * want, 0.125 * (0x1p-16 + 3.0 * double(hd) * 0x1p-24) * mag + 1e-30)
            << "h " << h << " j " << j << " head_dim " << hd;
      }
      for (size_t j = g.n; j < g.ld; ++j) ASSERT_EQ(s[h * g.ld + j], 5.0f);  // nothing past n written
      for (size_t i = 0; i < hd; ++i) {
        double want = o0[h * hd + i], mag = std::fabs(want);
        for (size_t j = 0; j < g.n; ++j) {
          const double t = double(g.p[h * g.ld + j]) * fp16_to_f32(g.kf[j * hd + i]);
          want += t, mag += std::fabs(t);
        }
        ASSERT_NEAR(o[h * hd + i], want, (0x1p-16 + 3.0 * double(g.n + 1) * 0x1p-24) * mag)
            << "h " << h << " i " << i << " head_dim " << hd << " keys " << g.n;
      }
    }
    // Rows [5, n_rows) alone: the same bits.
    const size_t h0 = 5, nh = g.n_heads - h0;
    std::vector<float> s2(nh * g.ld, 5.0f), o2(o0.begin() + h0 * hd, o0.end());
    f16_scores_tiles(&g.q[h0 * hd], nh, g.kf.data(), hd, g.n, 0.125f, s2.data(), g.ld);
    f16_accum_v_tiles(&g.p[h0 * g.ld], g.ld, nh, g.kf.data(), hd, g.n, o2.data());
    EXPECT_EQ(s2, std::vector<float>(s.begin() + h0 * g.ld, s.end())) << "head_dim " << hd;
    EXPECT_EQ(o2, std::vector<float>(o.begin() + h0 * hd, o.end())) << "head_dim " << hd;
    // Without the tiles: the _heads calls.
    set_amx_prefill(false);
    std::vector<float> s3(g.n_heads * g.ld, 5.0f), s4 = s3, o3 = o0, o4 = o0;
    f16_scores_tiles(g.q.data(), g.n_heads, g.kf.data(), hd, g.n, 0.125f, s3.data(), g.ld);
    f16_scores_heads(g.q.data(), g.n_heads, g.kf.data(), hd, g.n, 0.125f, s4.data(), g.ld);
    f16_accum_v_tiles(g.p.data(), g.ld, g.n_heads, g.kf.data(), hd, g.n, o3.data());
    f16_accum_v_heads(g.p.data(), g.ld, g.n_heads, g.kf.data(), hd, g.n, o4.data());
    set_amx_prefill(true);
    EXPECT_EQ(s3, s4);
    EXPECT_EQ(o3, o4);
    if (tiles) {
      EXPECT_NE(o, o4) << "head_dim " << hd << ": the tiles gave the FMA chain's bits";
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8);
  if (!tiles) GTEST_SKIP() << "no AMX tiles on this CPU: checked the _heads calls only";
}

TEST(AttnHeads, SoftmaxPartialIsTheUnnormalisedSoftmax) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 6.0f);
  for (size_t n : {size_t{1}, size_t{9}, size_t{256}}) {
    std::vector<float> x(n);
    for (auto& e : x) e = nd(rng);
    for (const char* v : kVariants) {
      if (!set_cpu_variant(v)) continue;
      std::vector<float> part = x, full = x;
      float m = 0, l = 0;
      softmax_partial(part.data(), n, &m, &l);
      softmax(full.data(), n);
      EXPECT_EQ(m, *std::max_element(x.begin(), x.end())) << v;
      for (size_t j = 0; j < n; ++j) {
        ASSERT_NEAR(part[j], std::exp(double(x[j]) - m), 4e-7 * (1 + part[j])) << v;
        ASSERT_NEAR(part[j] / l, full[j], 1e-6 * (1 + full[j])) << v;
      }
    }
  }
  set_cpu_variant("best");
}

// The max wherever it sits (each of the 4 max chains of the AVX-512 and AVX2 loops, the steps
// after them and the tails), exponents down to the underflow edge, and the same exp values in
// every vector variant with FMA (AVX-512's 2^k by vscalefps against AVX2's exponent bits: one exact
// product each).
TEST(AttnHeads, SoftmaxPartialFindsTheMaxAndKeepsTheExpBits) {
  for (size_t n : {size_t{100}, size_t{256}}) {
    for (size_t at : {size_t{0}, size_t{12}, size_t{17}, size_t{33}, size_t{42}, size_t{50}, size_t{63}, size_t{70},
                      size_t{90}, n - 1}) {
      std::vector<float> x(n);
      for (size_t j = 0; j < n; ++j) x[j] = -float(j % 23) * 3.9f;  // x − m from −40 down to −125.8
      x[at] = 40.0f;
      x[(at + 5) % n] = 40.0f - 86.5f;  // 2^k with k = −125: a normal scale
      x[(at + 9) % n] = 40.0f - 87.5f;  // below the exp's cut: 0 in the vector variants
      std::vector<float> first;
      for (const char* v : kVariants) {
        if (!set_cpu_variant(v)) continue;
        std::vector<float> part = x;
        float m = 0, l = 0;
        softmax_partial(part.data(), n, &m, &l);
        ASSERT_EQ(m, 40.0f) << v << " n " << n << " max at " << at;
        for (size_t j = 0; j < n; ++j) {
          const double want = std::exp(double(x[j]) - 40.0);
          if (x[j] - 40.0f < -87.0f) {
            ASSERT_LE(part[j], 1.2e-38f) << v << " j " << j;
          } else {
            ASSERT_NEAR(part[j], want, 8e-6 * want) << v << " j " << j;  // x − m rounded to float
          }
        }
        // std::exp in the scalar twin; sse4's exp has no FMA (its own bits, checked above)
        if (std::string(v) == "scalar" || no_fma(v)) continue;
        if (first.empty()) {
          first = part;
        } else {
          ASSERT_EQ(part, first) << v << " n " << n << " max at " << at;
        }
      }
    }
  }
  set_cpu_variant("best");
}

// softmax_partial_rows is softmax_partial a row, bit for bit in every variant: 1-9 rows (the AVX-512
// variant's four at a time and the rows left over), a stride past n whose gap it leaves alone.
TEST(AttnHeads, SoftmaxRowsAreOneCallARow) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.0f, 4.0f);
  for (size_t n : {size_t{5}, size_t{100}, size_t{256}}) {
    for (size_t rows = 1; rows <= 9; ++rows) {
      const size_t ld = n + 7;
      std::vector<float> x(rows * ld);
      for (auto& e : x) e = nd(rng);
      for (const char* v : kVariants) {
        if (!set_cpu_variant(v)) continue;
        std::vector<float> one = x, all = x, m1(rows), l1(rows), m(rows), l(rows);
        for (size_t r = 0; r < rows; ++r) softmax_partial(&one[r * ld], n, &m1[r], &l1[r]);
        softmax_partial_rows(all.data(), ld, rows, n, m.data(), l.data());
        ASSERT_EQ(all, one) << v << " n " << n << " rows " << rows;  // the gap past n too: untouched
        ASSERT_EQ(m, m1) << v << " n " << n << " rows " << rows;
        ASSERT_EQ(l, l1) << v << " n " << n << " rows " << rows;
      }
    }
  }
  set_cpu_variant("best");
}

// attn_block_heads is the decode step's calls in order (scores, softmax_partial per head, the V sum
// from 0), bit for bit in every variant, for each cache form (fp16 K and V, packed K, packed K and
// V) and with V rows of another width than K's; the AVX2 variants only read V at another time.
TEST(AttnHeads, BlockIsTheCallsInOrder) {
  struct BlockShape {
    size_t head_dim_k, head_dim_v, n_heads, n;
  };
  const BlockShape shapes[] = {{64, 64, 4, 256}, {64, 64, 7, 255}, {64, 64, 1, 1},   {128, 128, 8, 100},
                               {64, 128, 4, 33}, {128, 64, 2, 64}, {32, 32, 5, 17},  {64, 64, 40, 9},
                               {16, 16, 3, 21},  {96, 96, 2, 40}};
  int checked = 0;
  for (const BlockShape& sh : shapes) {
    const Group gk = make_group(sh.head_dim_k, sh.n_heads, sh.n, 21);
    const Group gv = make_group(sh.head_dim_v, sh.n_heads, sh.n, 22);  // its keys serve as the V rows
    for (int form = 0; form < 3; ++form) {  // 0: fp16 K and V, 1: packed K, 2: packed K and V
      const AttnBlock b = block_of(gk, gv, form);
      for (const char* v : kVariants) {
        if (!set_cpu_variant(v)) continue;
        const size_t ld = sh.n + 5;
        std::vector<float> s1(sh.n_heads * ld, 3.0f), s2 = s1, m1(sh.n_heads), l1(sh.n_heads), m2(sh.n_heads),
            l2(sh.n_heads), o1(sh.n_heads * sh.head_dim_v, 9.0f), o2(sh.n_heads * sh.head_dim_v, -9.0f);
        attn_block_heads(b, sh.n_heads, sh.n, 0.125f, s1.data(), ld, m1.data(), l1.data(), o1.data());
        block_in_order(b, sh.n_heads, sh.n, ld, false, s2, m2, l2, o2);
        const std::string at = std::string(v) + " form " + std::to_string(form) + " dims " +
                               std::to_string(sh.head_dim_k) + "/" + std::to_string(sh.head_dim_v) + " heads " +
                               std::to_string(sh.n_heads) + " keys " + std::to_string(sh.n);
        EXPECT_EQ(s1, s2) << at;  // the probabilities, and nothing past n in a row written
        EXPECT_EQ(m1, m2) << at;
        EXPECT_EQ(l1, l2) << at;
        EXPECT_EQ(o1, o2) << at;
        ++checked;
      }
    }
  }
  set_cpu_variant("best");
  if (std::strcmp(cpu_variant_name(), "scalar") == 0) GTEST_SKIP() << "this CPU runs only the scalar variant";
  EXPECT_GE(checked, 2 * 10 * 3);  // the scalar twin and at least one vector variant
}

// attn_block_tiles is the prompt tile's calls in order (scores, softmax_partial per row, the V sum
// from 0: f16_scores_tiles and f16_accum_v_tiles for fp16 K and V), bit for bit, with the AMX
// tiles and without, for each cache form, row counts around the tiles' slabs of 32, and shapes the
// tiles do not take (head_dim 96, packed K of 32).
TEST(AttnHeads, BlockTilesIsTheCallsInOrder) {
  struct BlockShape {
    size_t head_dim_k, head_dim_v, n_rows, n;
  };
  const BlockShape shapes[] = {{64, 64, 128, 256}, {64, 64, 33, 255}, {64, 64, 1, 1},   {128, 128, 70, 100},
                               {64, 128, 32, 33},  {128, 64, 9, 64},  {96, 96, 40, 40}, {32, 32, 20, 17}};
  const bool tiles = set_cpu_variant("avx512vnni") && amx_prefill_active();
  set_cpu_variant("best");
  int checked = 0;
  for (bool amx : {true, false}) {
    set_amx_prefill(amx);
    for (const BlockShape& sh : shapes) {
      const Group gk = make_group(sh.head_dim_k, sh.n_rows, sh.n, 51);
      const Group gv = make_group(sh.head_dim_v, sh.n_rows, sh.n, 52);  // its keys serve as the V rows
      for (int form = 0; form < 3; ++form) {  // 0: fp16 K and V, 1: packed K, 2: packed K and V
        const AttnBlock b = block_of(gk, gv, form);
        const size_t R = sh.n_rows, ld = sh.n + 5;
        std::vector<float> s1(R * ld, 3.0f), s2 = s1, m1(R), l1(R), m2(R), l2(R), o1(R * sh.head_dim_v, 9.0f),
            o2(R * sh.head_dim_v, -9.0f);
        attn_block_tiles(b, R, sh.n, 0.125f, s1.data(), ld, m1.data(), l1.data(), o1.data());
        block_in_order(b, R, sh.n, ld, true, s2, m2, l2, o2);
        const std::string at = std::string(amx ? "tiles" : "no tiles") + " form " + std::to_string(form) + " dims " +
                               std::to_string(sh.head_dim_k) + "/" + std::to_string(sh.head_dim_v) + " rows " +
                               std::to_string(R) + " keys " + std::to_string(sh.n);
        EXPECT_EQ(s1, s2) << at;  // the probabilities, and nothing past n in a row written
        EXPECT_EQ(m1, m2) << at;
        EXPECT_EQ(l1, l2) << at;
        EXPECT_EQ(o1, o2) << at;
        ++checked;
      }
    }
  }
  set_amx_prefill(true);
  EXPECT_EQ(checked, 2 * 8 * 3);
  if (!tiles) GTEST_SKIP() << "no AMX tiles on this CPU: the calls without them only";
}

TEST(AttnHeads, BadArgumentsAreRefused) {
  std::vector<float> s(8), q(64 * 2), p(8);
  std::vector<int8_t> kq(64 * 8);
  std::vector<uint16_t> kd(16), kf(64 * 8);
  EXPECT_THROW(k8_scores_heads(kq.data(), kd.data(), 1, kq.data(), kd.data(), 40, 4, 1.0f, s.data(), 4),
               std::invalid_argument);  // 40 is not a multiple of 32
  EXPECT_THROW(k8_scores_heads(kq.data(), kd.data(), 1, kq.data(), kd.data(), 64, 8, 1.0f, s.data(), 4),
               std::invalid_argument);  // stride below n
  EXPECT_THROW(f16_accum_v_heads(p.data(), 2, 1, kf.data(), 64, 4, q.data()), std::invalid_argument);
  EXPECT_THROW(k8_accum_v_heads(p.data(), 8, 1, kq.data(), kd.data(), 64, 0, 4, q.data()), std::invalid_argument);
  float m = 0, l = 0;
  EXPECT_THROW(softmax_partial(p.data(), 0, &m, &l), std::invalid_argument);
  EXPECT_THROW(softmax_partial_rows(p.data(), 4, 1, 0, &m, &l), std::invalid_argument);  // no keys
  EXPECT_THROW(softmax_partial_rows(p.data(), 2, 2, 4, &m, &l), std::invalid_argument);  // stride below n
  AttnBlock b;
  b.head_dim_k = b.head_dim_v = 64;
  b.q = q.data(), b.k = kf.data(), b.v = kf.data();
  std::vector<float> o(64);
  EXPECT_NO_THROW(attn_block_heads(b, 1, 4, 1.0f, s.data(), 8, &m, &l, o.data()));
  EXPECT_THROW(attn_block_heads(b, 1, 0, 1.0f, s.data(), 8, &m, &l, o.data()), std::invalid_argument);  // no keys
  EXPECT_THROW(attn_block_tiles(b, 1, 0, 1.0f, s.data(), 8, &m, &l, o.data()), std::invalid_argument);
  EXPECT_THROW(attn_block_tiles(b, 1, 9, 1.0f, s.data(), 8, &m, &l, o.data()), std::invalid_argument);  // ld < n
  EXPECT_THROW(attn_block_heads(b, 1, 8, 1.0f, s.data(), 4, &m, &l, o.data()), std::invalid_argument);  // stride
  AttnBlock no_v = b;
  no_v.v = nullptr;
  EXPECT_THROW(attn_block_heads(no_v, 1, 4, 1.0f, s.data(), 8, &m, &l, o.data()), std::invalid_argument);
  AttnBlock packed_v = b;
  packed_v.vq = kq.data(), packed_v.vd = kd.data(), packed_v.block_v = 48;  // 48 does not divide 64
  EXPECT_THROW(attn_block_heads(packed_v, 1, 4, 1.0f, s.data(), 8, &m, &l, o.data()), std::invalid_argument);
  AttnBlock packed_k = b;
  packed_k.kq = kq.data(), packed_k.kd = kd.data(), packed_k.head_dim_k = 40;  // no packed queries, 40 not 32·k
  EXPECT_THROW(attn_block_heads(packed_k, 1, 4, 1.0f, s.data(), 8, &m, &l, o.data()), std::invalid_argument);
}
