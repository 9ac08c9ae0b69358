// Attention inner loops on the CPU (scores against an fp16 K cache, softmax, and the probability-
// weighted sums of fp16 or packed int8 V rows), dispatched like matmul; packed-K scores are
// k8_scores in kv_k8.h. Not the head/position loops: those are the forward pass's (core/model).
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::kernels {

// scores[j] = scale · Σ_i q[i]·fp16(k[j][i]) for n keys laid out [n][head_dim] (fp16 bits).
void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores);

// In place: x[j] = exp(x[j] − max x) / Σ exp(x − max x) for j in [0, n), n >= 1. The fast
// variants use a vector exp (within 2 ulp of std::exp) and sum 8 lanes at a time (results within
// a few ulp of the scalar twin, which uses std::exp and sums in order).
void softmax(float* x, size_t n);

// out[i] += Σ_j p[j]·fp16(v[j][i]) for n value rows [n][head_dim]; j in order.
void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out);

// Packed V (the k8 rule, blocks of `block` values): out[i] += Σ_j p[j]·fp16(d[j][i/block])·q[j][i]
// in f32. One head, probabilities in f32: the per-head reference loop (benchmarks, the GPU tests'
// host reference); the forward pass runs k8_accum_v_heads below.
void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out);

// --- All query heads of one KV group at once (GQA): each K/V row is loaded and converted once and
// used by the group's n_heads query heads. The forward pass runs these over blocks of keys with an
// online softmax (core/model/attention_cpu.h).

// How far ahead the grouped kernels of the SIMD variants ask for K and V rows as they go: with
// row j, row j + kAttnReadAheadRows (kernels/cpu/attn_heads.h has the measurements). So a caller
// that reads a stream's first rows ahead itself needs only this many.
inline constexpr size_t kAttnReadAheadRows = 64;

// scores[h·ld + j] = scale · Σ_i q[h·head_dim + i]·fp16(k[j][i]) for h < n_heads, j < n (ld >= n).
// The fast variants sum lanes in a tree (within rounding of the scalar twin, which sums in order).
void f16_scores_heads(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld);

// One block's unnormalised softmax, in place: *m = max x, x[j] = exp(x[j] − *m), *l = Σ x[j]
// (n >= 1). Same exp and summation as softmax (within a few ulp of the scalar twin).
void softmax_partial(float* x, size_t n, float* m, float* l);

// softmax_partial of rows [0, rows) of x (row stride ld >= n), each over the same n keys: row r's
// m[r], l[r]. The same bits as one call a row; the AVX-512 variant runs four rows side by side.
void softmax_partial_rows(float* x, size_t ld, size_t rows, size_t n, float* m, float* l);

// out[h·head_dim + i] = fma(p[h·ldp + j], fp16(v[j][i]), out[h·head_dim + i]) for j = 0..n−1 in
// order (one fused multiply-add per key and head). The variants with FMA hardware are bit for bit
// the scalar twin (std::fma); the sse4 variant (no FMA) multiplies then adds, within one f32
// rounding per key of it. In every variant a head's lanes depend only on its own p row and the
// keys in order, not on the heads beside it or the thread that runs them.
void f16_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                       float* out);

// Packed V, the probabilities in 16-bit integers (the "v16" rule; every variant gives the scalar
// twin's bits). Keys in runs of kV16Run from the call's first; per run, head h and scale block b:
//   w[j] = p[h·ldp + j]·fp16(d[j][b])                  (f32; the block scale rides on p)
//   M = max_j |w[j]|; nothing is added when M < kV16MinWeight (2^-64: 32767 / M stays finite)
//   c[j] = nearbyint(w[j]·(32767 / M))                 (int16, |c| <= 32767)
//   out[h·head_dim + i] += float(Σ_j c[j]·q[j][i]) · (M / 32767)   for i in block b
// The sum Σ c·q is exact in int32 (a run of 256 keys reaches at most 256·32767·128 < 2^31), so
// its order is free: pairs of keys go through one 16-bit dot instruction (vpdpwssd, vpmaddwd) at
// twice the multiply-adds of an f32 FMA. Each c[j] is within 0.5 of 32767·w[j]/M, so a lane's
// error is at most Σ_j 0.5·(M / 32767)·|q[j][i]| beside the f32 roundings: ~1.5e-5 of the run's
// largest weight per key, far under the codes' own 1/254. p must be finite. A head's result
// depends only on its own p row, and the keys of a call only through their runs, so callers that
// need a token's bits not to depend on its batch (CPU prefill tiles) give each head all its keys
// of a block in one call.
// (Plain constexpr: internal linkage, so the ISA files' objects hold no weak copy of them; the
// kernels_isa_weak_symbols check.)
constexpr size_t kV16Run = 256;
constexpr float kV16MinWeight = 0x1p-64f;
void k8_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                      size_t head_dim, size_t block, size_t n, float* out);

// --- Prompt tiles: many rows of query heads (a prefill tile's tokens × a KV group's heads) against
// one block of the group's keys. Where amx_prefill_active() (quant.h) they run on the AMX tile unit
// in bf16 parts; elsewhere they are f16_scores_heads and f16_accum_v_heads (those bits). (The packed-K
// scores need no second call: k8_scores_heads itself takes the tiles for many rows, with its own
// bits, on CPUs with AMX-INT8.)
// On the tiles an fp16 K or V value is hi + lo in bf16 exactly and an f32 query or probability x is
// xh + xl (xh = bf16(x), xl = bf16(x − xh)); the products xh·vh + xh·vl + xl·vh of each term are summed
// in f32, so a result is within ~2^-16 of Σ|x·v| of the exact sum (beside the f32 sums' rounding),
// not the FMA chain's bits. A row's result depends only on its own queries or probabilities and the
// keys, not on the rows beside it, their count or the thread; the forward pass takes the tiles for a
// token's key block only where the token sees the whole block, so a token's bits do not depend on
// the prefill tile it falls in (docs/bench/cpu.md, "Prompt attention on the AMX tiles (session 53)").
// scores[r·ld + j] = scale · Σ_i q[r·head_dim + i]·fp16(k[j][i]) for r < n_rows, j < n (ld >= n).
void f16_scores_tiles(const float* q, size_t n_rows, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld);
// out[r·head_dim + i] += Σ_j p[r·ldp + j]·fp16(v[j][i]) for r < n_rows (ldp >= n).
void f16_accum_v_tiles(const float* p, size_t ldp, size_t n_rows, const uint16_t* v, size_t head_dim, size_t n,
                       float* out);

// One block of n keys of one KV group, as the forward pass's decode runs it: K as fp16 rows (k)
// or packed (kq, kd: kv_k8.h, with the packed queries qq, qd), V as fp16 rows (v) or packed (vq,
// vd, blocks of block_v). K rows [n][head_dim_k], V rows [n][head_dim_v], scales [n][dim / block].
struct AttnBlock {
  const float* q = nullptr;  // the queries [n_heads][head_dim_k] (fp16 K)
  const int8_t* qq = nullptr;  // the packed queries and their scales (packed K)
  const uint16_t* qd = nullptr;
  const uint16_t* k = nullptr;
  const int8_t* kq = nullptr;
  const uint16_t* kd = nullptr;
  const uint16_t* v = nullptr;
  const int8_t* vq = nullptr;
  const uint16_t* vd = nullptr;
  size_t head_dim_k = 0, head_dim_v = 0, block_v = 0;
};

// The block's partial for its n_heads query heads: scores (f16_scores_heads, or k8_scores_heads
// when b.kq is set) into scores[h·ld + j], softmax_partial of each head's row (m[h], l[h]), and
// out[h·head_dim_v + i] = the V sum from 0 (f16_accum_v_heads, or k8_accum_v_heads when b.vq is set).
// Bit for bit those calls in that order; what may differ is when rows are read: the 256-bit
// variants ask for the block's V rows while its scores run, so that the V sum, which on one core
// is mostly arithmetic, reads them from cache (docs/bench/cpu.md, "Decode attention: V read with
// the scores (session 14)").
void attn_block_heads(const AttnBlock& b, size_t n_heads, size_t n, float scale, float* scores, size_t ld, float* m,
                      float* l, float* out);

// attn_block_heads for a prompt tile's rows (n_rows of them): bit for bit the scores (k8_scores_heads,
// or f16_scores_tiles for fp16 K), softmax_partial of each row, and out = the V sum from 0
// (f16_accum_v_tiles, or k8_accum_v_heads for packed V), in that order. On the AMX tiles the keys and
// values are converted to tiles once and the rows go 32 at a time through all three steps, so a
// slab's scores and probabilities stay in the core's L1 between them.
void attn_block_tiles(const AttnBlock& b, size_t n_rows, size_t n, float scale, float* scores, size_t ld, float* m,
                      float* l, float* out);

}  // namespace alap::kernels
