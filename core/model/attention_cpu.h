// Causal attention of one layer on the CPU over the KV cache: the head and key-block loops around
// the grouped-head kernels of alap/kernels/attn.h and kv_k8.h. Not the kernels themselves, and
// not the projections or RoPE around it (forward.cpp).
//
//   alap::CpuAttention attn;
//   attn.run(cache, pool, layer, q, n, pos0, n_head, scale, o);  // o [n][n_head][Dv]
//
// Keys are cut into blocks of kKeyBlock positions from 0; each (token, KV group, block) gives one
// online-softmax partial (max m, sum l, unnormalised o) for all query heads of the group, and the
// partials are combined in block order. The split depends only on the context length, so the
// result is bit for bit the same whatever the thread count, batch split or work split: decode
// spreads (group, block) items over the pool (every thread busy with 2 KV heads), prefill runs
// one (tile of tokens, group) item at a time per thread, the tile's tokens × heads sharing each
// K/V row load (a row's partials are those of its token alone: kernels work row by row).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "alap/kernels/quant.h"
#include "core/runtime/kv_cache.h"
#include "core/runtime/thread_pool.h"

namespace alap {

class CpuAttention {
 public:
  static constexpr size_t kKeyBlock = 256;  // keys per partial (scores of a group's heads stay in L1)
  // A decode token whose keys × query heads × (K + V head dims) is at most this (with two threads;
  // with p threads taking part, 2/p of it) runs attention on the calling thread (run()).
  static constexpr size_t kAloneWork = size_t{1} << 18;
  static constexpr size_t kTileRows = 32;   // prefill: query rows (whole tokens × a group's heads) per pass
  // The same where the AMX tiles take part (a call of kAmxMinTokens or more in which some token sees a
  // whole key block): they convert a block's K and V once for all the tile's rows.
  static constexpr size_t kTileRowsAmx = 128;
  // A call of this many tokens or more takes the AMX tiles where kernels::amx_prefill_active(), as
  // the quantised products do (a token's block sees them only where it sees all kKeyBlock keys):
  // within such calls a token's bits do not depend on its tile; a decode token or a shorter call
  // keeps the FMA and VNNI kernels' bits (kernels/attn.h "Prompt tiles").
  static constexpr size_t kAmxMinTokens = kernels::kAmxPrefillMinTokens;

  // For tokens t < n at positions pos0 + t: o[t][h] = Σ_j softmax_j(scale · q[t][h]·K[j]) V[j] over
  // positions j <= pos0 + t of `layer`, query head h reading KV head h / (n_head / n_head_kv).
  // q [n][n_head][Dk] (already rotated), o [n][n_head][Dv]. The cache must hold those positions.
  void run(const KvCache& cache, ThreadPool& pool, size_t layer, const float* q, size_t n, size_t pos0,
           size_t n_head, float scale, float* o);

  // Decode with the layer split by KV groups over the pool (forward.cpp): prepare_groups on the
  // calling thread sizes the scratch for one token at pos0 and n_threads threads and checks the
  // shapes as run() does; then, inside the parallel call, run_groups computes o for the query
  // heads of KV groups [g0, g1) on pool thread `thread` (its own scratch; callers give each group
  // to one thread). The same calls as run()'s, so the same bits as run() for those heads.
  void prepare_groups(const KvCache& cache, size_t layer, size_t pos0, size_t n_head, size_t n_threads);
  void run_groups(const KvCache& cache, size_t layer, const float* q, size_t pos0, size_t n_head, float scale,
                  size_t g0, size_t g1, size_t thread, float* o);

  // Decode: asks for the first rows of the layer's KV group `group` (K, its scales, V, its scales;
  // keys below n_keys, at most kernels::kAttnReadAheadRows: the kernels read on from there) ahead
  // of run(). The forward pass calls it once the token's q/k/v
  // products are done: those loads then overlap RoPE, the cache-row store and the query
  // packing instead of starting cold inside run (it has no block before it to read it ahead).
  // Prefetches only: no result changes.
  static void read_ahead_first_block(const KvCache& cache, size_t layer, size_t n_keys, size_t group = 0);

  size_t scratch_bytes() const;  // bytes held now (grown on first use, kept across calls)

 private:
  struct Thread {
    std::vector<float> scores;    // [rows][kKeyBlock]: a group's G heads, or a prefill tile's rows
    std::vector<float> partials;  // a prefill tile's [blocks][rows·(Dv + 2)]
    std::vector<float> qf;        // a prefill tile's queries [rows][Dk], gathered
    std::vector<int8_t> qq;       // packed, [rows][Dk]
    std::vector<uint16_t> qd;     // their scales [rows][Dk / block]
  };
  // Grows what every call uses: n_threads threads' scores for a group of G heads, and n_packed
  // packed query heads of Dk values and nbk scales (0 for an fp16 K).
  void grow_shared(size_t n_threads, size_t G, size_t n_packed, size_t Dk, size_t nbk);

  std::vector<Thread> threads_;
  std::vector<int8_t> qq_;        // packed queries [n][n_head][Dk]
  std::vector<uint16_t> qd_;      // their scales [n][n_head][Dk / block]
  std::vector<float> partials_;   // decode split: [n][Hk][blocks][G·(Dv + 2)]
  std::vector<uint8_t> combined_; // decode split: [n][Hk], 1 where a chunk combined the group itself
};

}  // namespace alap
