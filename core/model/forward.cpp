// The run-time forward pass: the math of forward_ref.cpp, with matmuls through kernels::matmul
// split over the thread pool (activations quantised once per matmul group), attention through
// CpuAttention (grouped heads, key blocks with an online softmax: attention_cpu.h), a
// RoPE table per batch, and scratch held across calls so decode allocates nothing.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "alap/kernels/activation.h"
#include "alap/kernels/attn.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/norm.h"
#include "alap/kernels/quant.h"
#include "core/model/attention_cpu.h"
#include "core/model/forward.h"
#include "core/runtime/aligned_vector.h"

namespace alap {

KvCacheConfig kv_cache_config(const Model& model, CacheMode mode, size_t capacity) {
  const ModelHParams& hp = model.hparams();
  KvCacheConfig c;
  c.mode = mode;
  c.n_layer = static_cast<size_t>(hp.n_layer);
  c.n_head_kv = static_cast<size_t>(hp.n_head_kv);
  c.head_dim_k = static_cast<size_t>(hp.head_dim_k);
  c.head_dim_v = static_cast<size_t>(hp.head_dim_v);
  c.capacity = capacity;
  return c;
}

namespace {

// One matrix product of a fused group: y [n][ldy] = W·x for W's rows.
struct MatJob {
  const kernels::WeightView& w;
  float* y;
  size_t ldy;
};

// The int8 blocks of one activation matrix, quantised once per matmul group and shared by every
// thread and every matrix of the group (kernels::quantize_activations). The blocks of 256 are made
// only where a product reads them (kernels::reads_acts_256: plain AVX2 K-quants), so their buffers
// grow on first use and stay empty on other machines.
struct ActScratch {
  AlignedVector<int8_t> q, q256;
  AlignedVector<float> d, d256;
  AlignedVector<int32_t> s, s4;
  size_t cols = 0;  // the widest rows reserved
  void reserve(size_t n_tok, size_t n_cols) {
    cols = std::max(cols, n_cols);
    q.resize(std::max(q.size(), n_tok * n_cols));
    d.resize(std::max(d.size(), n_tok * n_cols / 32));
    s.resize(std::max(s.size(), n_tok * n_cols / 32));
    s4.resize(std::max(s4.size(), n_tok * n_cols / 4));
  }
  void reserve_256(size_t n_tok, size_t n_cols) {
    q256.resize(std::max(q256.size(), n_tok * n_cols));
    d256.resize(std::max(d256.size(), n_tok * n_cols / 256));
  }
  std::vector<uint16_t> tiles;  // a group's bf16 activation tiles (kernels::make_acts_tiles)
};

// `words` uint16 from a 64-byte boundary in v (the AMX tiles' loads want it), v grown to hold them.
uint16_t* aligned_words(std::vector<uint16_t>& v, size_t words) {
  if (v.size() < words + 32) v.resize(words + 32);
  const auto p = reinterpret_cast<std::uintptr_t>(v.data());
  return v.data() + (64 - p % 64) % 64 / sizeof(uint16_t);
}

// A positive count from the environment (for measuring), else `fallback`; read once per name by
// the callers' statics.
size_t env_count(const char* name, size_t fallback) {
  const char* e = std::getenv(name);
  return e ? static_cast<size_t>(std::max(1L, std::strtol(e, nullptr, 10))) : fallback;
}

// How a fused group's products are cut: n_rows row chunks x n_groups token groups, one chunk of
// the pool's work each. Chunks, not one range a thread: on a busy machine a worker the OS has not
// scheduled yet leaves its chunks to the threads that run.
// - Decode: each chunk is a stream started from cold memory, so a chunk is at least kChunkBytes of
//   weights (a 30M model's two-thread token: ~15% faster than with 8 chunks a thread), and at most
//   8 a thread for large products. A product smaller than a kChunkBytes chunk a thread is cut into
//   pieces of at least 32 KB (ALAP_MIN_CHUNK_KB), so it wakes only the threads whose share is worth
//   a call's synchronisation (session 10, a 16-core machine: every thread joining every call of a
//   30M model's token made 16 threads slower than 8).
// - Prefill: each call of a packed product re-lays its tokens' activations out (O(tokens x
//   columns), a few ops a value), so a chunk of few rows spends more on that than on its products
//   (a 30M model's q/k/v in 2 chunks a thread on 16 threads: ~24 rows each). Chunks keep at least
//   256 rows (ALAP_PREFILL_ROWS), one thread takes a product whole, and the tokens are cut into
//   groups of >= 16 instead, so that a small product still gives every thread work.
constexpr uint64_t kChunkBytes = uint64_t{256} << 10;
// A prefill batch is split by tokens instead (eval_chunk) once every thread gets at least
// kPrefillSliceTokens of them (ALAP_PREFILL_SLICE_TOKENS), a layer's weights are at most
// kPrefillSliceBytes per token of a thread (ALAP_PREFILL_SLICE_KB) and all of them are quantised
// types: each thread then reads (and unpacks) every weight row, so a layer's rows must be few
// enough for its tokens' arithmetic to hide that, and f16/bf16 rows, converted to f32 once a call
// and multiplied at the FMA rate, do not gain (docs/bench/cpu.md "Prefill split by tokens
// (session 30)"). Where the products run on the AMX tiles (every thread's tokens at least
// kernels::kAmxPrefillMinTokens), an eighth of that, kPrefillSliceBytesAmx: the tiles multiply
// several times faster than the VNNI tiles, so the same weights are hidden by fewer tokens, while
// each thread still streams the whole layer and converts it to bf16. Two threads, 128 tokens, rows
// split against tokens split: random Llama-3.2-1B Q4_K (layers of 34 MB) 0.88-0.90x the time,
// Qwen2.5-0.5B Q8_0 (16 MB) 0.97x, its Q4_K (8.4 MB) 0.93-1.0x (median 0.96 of 8 pairs); the eval
// model (3 MB), which stays split by tokens, 0.84-0.93x the time of rows split (docs/bench/cpu.md,
// "f16 read-ahead into L2; the AMX prefill's token split (session 54)").
constexpr size_t kPrefillSliceTokens = 8;
constexpr uint64_t kPrefillSliceBytes = uint64_t{768} << 10;
constexpr uint64_t kPrefillSliceBytesAmx = kPrefillSliceBytes / 8;
struct Split {
  size_t n_rows = 1, n_groups = 1;
};
Split split_products(uint64_t total_bytes, size_t total_rows, size_t n_tok, size_t n_threads) {
  if (n_tok <= 1) {
    static const uint64_t min_chunk = static_cast<uint64_t>(env_count("ALAP_MIN_CHUNK_KB", 32)) << 10;
    if (total_bytes < kChunkBytes * n_threads) return {std::clamp<uint64_t>(total_bytes / min_chunk, 1, n_threads), 1};
    return {n_threads * std::clamp<uint64_t>(total_bytes / (kChunkBytes * n_threads), 1, 8), 1};
  }
  if (n_threads == 1) return {};
  static const size_t min_rows = env_count("ALAP_PREFILL_ROWS", 256);
  const size_t target = 2 * n_threads;
  Split sp;
  sp.n_rows = std::clamp<size_t>(total_rows / min_rows, 1, target);
  if (sp.n_rows < target) sp.n_groups = std::min((target + sp.n_rows - 1) / sp.n_rows, std::max<size_t>(1, n_tok / 16));
  return sp;
}

// x's rows [t0, t1) (of n_cols values) into act's blocks, packed from value e of act on: the view
// of those rows as a product reads them. The blocks of 256 too when b256.
kernels::QuantizedActs quantise_rows(ActScratch& act, const float* x, bool b256, size_t t0, size_t t1, size_t n_cols,
                                     size_t e) {
  const float* xs = x + t0 * n_cols;
  int8_t* q = act.q.data() + e;
  float* d = act.d.data() + e / 32;
  int32_t* s = act.s.data() + e / 32;
  int32_t* s4 = act.s4.data() + e / 4;
  kernels::quantize_activations(xs, t1 - t0, n_cols, q, d, s, s4);
  kernels::QuantizedActs a{xs, q, d, s, s4, t1 - t0, n_cols};
  if (b256) {
    int8_t* q256 = act.q256.data() + e;
    float* d256 = act.d256.data() + e / 256;
    kernels::quantize_activations_256(xs, t1 - t0, n_cols, q256, d256);
    a.q256 = q256, a.d256 = d256;
  }
  return a;
}

bool needs_int8_acts(const kernels::WeightView& w) {
  return kernels::dtype_info(static_cast<uint32_t>(w.type))->block_elems != 1;
}

// What a group of products reads of its activations, where each product call gets at least
// call_tokens tokens: int8 blocks (a weight type that multiplies int8 activations, unless the AMX
// tiles take every such call: kernels::reads_int8_acts) and blocks of 256 too
// (kernels::reads_acts_256). A prompt whose products all run on the tiles skips the quantising:
// the eval files' 128-token prompts 0.94-0.98x the time, medians of 8 alternating pairs
// (docs/bench/cpu.md, "f16 read-ahead into L2; the AMX prefill's token split (session 54)").
// tiles: the AMX tiles' form of the activations that the group's products on the tiles read
// (kernels::acts_tiles_form), none where they read none or two forms.
struct ActsKind {
  bool int8 = false, b256 = false;
  kernels::ActsTiles tiles = kernels::ActsTiles::none;
};
ActsKind acts_kind(std::span<const MatJob> jobs, size_t call_tokens) {
  ActsKind k;
  const size_t n_cols = jobs.front().w.n_cols;
  bool mixed = false;
  for (const MatJob& j : jobs) {
    k.int8 = k.int8 || kernels::reads_int8_acts(j.w, call_tokens);
    k.b256 = k.b256 || kernels::reads_acts_256(j.w);
    const kernels::ActsTiles f = kernels::acts_tiles_form(j.w, call_tokens);
    mixed = mixed || (f != kernels::ActsTiles::none && k.tiles != kernels::ActsTiles::none && f != k.tiles);
    if (f != kernels::ActsTiles::none) k.tiles = f;
  }
  k.int8 = k.int8 && n_cols % 32 == 0;
  k.b256 = k.int8 && k.b256 && n_cols % 256 == 0;
  if (mixed) k.tiles = kernels::ActsTiles::none;
  return k;
}

ActsKind acts_kind(std::initializer_list<MatJob> jobs, size_t call_tokens) {
  return acts_kind(std::span(jobs.begin(), jobs.size()), call_tokens);
}

// x [n_tok][n_cols] as the products of a group of kind k see it, once its rows are quantised.
kernels::QuantizedActs acts_view(const ActScratch& act, const float* x, ActsKind k, size_t n_tok, size_t n_cols) {
  if (!k.int8) return kernels::QuantizedActs{x, nullptr, nullptr, nullptr, nullptr, n_tok, n_cols};
  kernels::QuantizedActs a{x, act.q.data(), act.d.data(), act.s.data(), act.s4.data(), n_tok, n_cols};
  if (k.b256) a.q256 = act.q256.data(), a.d256 = act.d256.data();
  return a;
}

// a with the tiles of form f at t (kernels::make_acts_tiles, laid out for a.n_tok tokens).
kernels::QuantizedActs with_tiles(kernels::QuantizedActs a, kernels::ActsTiles f, const uint16_t* t) {
  a.tiles = t;
  a.tiles_lo = f == kernels::ActsTiles::pairs ? kernels::acts_tiles_words(f, a.n_tok, a.n_cols) / 2 : 0;
  a.tiles_form = f;
  return a;
}

// x [n_tok][n_cols] as the products of a group see it: quantised first, and the AMX tiles' form made
// where k names one (tokens split over the pool either way).
kernels::QuantizedActs quantise_group(ThreadPool& pool, ActScratch& act, const float* x, ActsKind k, size_t n_tok,
                                      size_t n_cols) {
  if (k.int8) {
    if (k.b256) act.reserve_256(n_tok, n_cols);
    auto quantise = [&](size_t begin, size_t end, size_t) { quantise_rows(act, x, k.b256, begin, end, n_cols, begin * n_cols); };
    if (n_tok > 1) {
      pool.parallel_for_chunked(n_tok, std::max<size_t>(1, n_tok / (4 * pool.n_threads())), std::ref(quantise));
    } else {
      quantise(0, 1, 0);
    }
  }
  kernels::QuantizedActs a = acts_view(act, x, k, n_tok, n_cols);
  if (k.tiles != kernels::ActsTiles::none) {
    uint16_t* t = aligned_words(act.tiles, kernels::acts_tiles_words(k.tiles, n_tok, n_cols));
    auto make = [&](size_t i0, size_t i1, size_t) {
      kernels::make_acts_tiles(k.tiles, x, n_tok, n_cols, 16 * i0, std::min(n_tok, 16 * i1), t);
    };
    const size_t n_tiles = (n_tok + 15) / 16;
    pool.parallel_for_chunked(n_tiles, std::max<size_t>(1, n_tiles / (2 * pool.n_threads())), std::ref(make));
    a = with_tiles(a, k.tiles, t);
  }
  return a;
}

// Tokens [t0, t1) of a (its tiles where t0 starts one).
kernels::QuantizedActs token_range(const kernels::QuantizedActs& a, size_t t0, size_t t1) {
  const size_t n_cols = a.n_cols, nb = n_cols / 32;
  kernels::QuantizedActs sub = a;  // a token's result does not depend on its batch
  sub.x = a.x + t0 * n_cols;
  if (a.q != nullptr) sub.q = a.q + t0 * n_cols, sub.d = a.d + t0 * nb, sub.s = a.s + t0 * nb, sub.s4 = a.s4 + t0 * n_cols / 4;
  if (a.q256 != nullptr) sub.q256 = a.q256 + t0 * n_cols, sub.d256 = a.d256 + t0 * n_cols / 256;
  if (a.tiles != nullptr) {
    sub.tiles = t0 % 16 == 0 ? a.tiles + t0 * n_cols : nullptr;
    if (sub.tiles == nullptr) sub.tiles_form = kernels::ActsTiles::none;
  }
  sub.n_tok = t1 - t0;
  return sub;
}

// Runs fn(r, t0, t1) for every chunk of the split over the pool: row chunk r (< sp.n_rows) x
// tokens [t0, t1) of token group c / sp.n_rows. Each row's result is the same whoever computes it.
template <class Fn>
void for_product_chunks(ThreadPool& pool, const Split& sp, size_t n_tok, Fn&& fn) {
  auto body = [&](size_t c0, size_t c1, size_t) {
    for (size_t c = c0; c < c1; ++c) {
      const size_t g = c / sp.n_rows;
      fn(c % sp.n_rows, n_tok * g / sp.n_groups, n_tok * (g + 1) / sp.n_groups);
    }
  };
  pool.parallel_for_chunked(sp.n_rows * sp.n_groups, 1, std::ref(body));  // std::ref: no heap copy of the closure
}

// Runs several matmuls over the same activations x [n_tok][n_cols] as one parallel_for over their
// concatenated rows (x quantised once for the group).
void matmuls(ThreadPool& pool, ActScratch& act, const float* x, std::span<const MatJob> jobs, size_t n_tok) {
  size_t total = 0;
  uint64_t total_bytes = 0;
  for (const MatJob& j : jobs) {
    total += j.w.n_rows;
    total_bytes += kernels::matrix_bytes(j.w);
  }
  // Row chunk r holds rows [first_row(r), first_row(r + 1)) of the concatenated matrices, cut at
  // about r / n_r of the group's bytes (a group mixes types: Q4_K_M files hold Q4_K beside Q6_K
  // rows), at multiples of 16 rows of their matrix (the packed layouts interleave 16 rows).
  const Split sp = split_products(total_bytes, total, n_tok, pool.n_threads());
  ActsKind k = acts_kind(jobs, n_tok / sp.n_groups);
  if (sp.n_rows == 1 && jobs.size() == 1) k.tiles = kernels::ActsTiles::none;  // one call a token group: its own
  const kernels::QuantizedActs a = quantise_group(pool, act, x, k, n_tok, jobs.front().w.n_cols);
  const size_t n_r = sp.n_rows;
  auto first_row = [&](size_t c) -> size_t {
    const uint64_t target = total_bytes * c / n_r;
    uint64_t before = 0;
    size_t off = 0;
    for (const MatJob& j : jobs) {
      const uint64_t mb = kernels::matrix_bytes(j.w);
      if (target < before + mb) {
        const size_t r = static_cast<size_t>((target - before) / (mb / j.w.n_rows) + 8) / 16 * 16;
        return off + std::min(r, j.w.n_rows);
      }
      before += mb;
      off += j.w.n_rows;
    }
    return total;
  };
  for_product_chunks(pool, sp, n_tok, [&](size_t r, size_t t0, size_t t1) {
    const size_t begin = first_row(r), end = first_row(r + 1);
    const kernels::QuantizedActs sub = token_range(a, t0, t1);
    size_t off = 0;
    for (const MatJob& j : jobs) {
      const size_t lo = std::max(begin, off), hi = std::min(end, off + j.w.n_rows);
      if (lo < hi) kernels::matmul(j.w, sub, j.y + t0 * j.ldy, j.ldy, lo - off, hi - off);
      off += j.w.n_rows;
    }
  });
}

void matmuls(ThreadPool& pool, ActScratch& act, const float* x, std::initializer_list<MatJob> jobs, size_t n_tok) {
  matmuls(pool, act, x, std::span(jobs.begin(), jobs.size()), n_tok);
}

// The FFN's gate and up products and SwiGLU in one parallel call: gate [n_tok][F] =
// silu(w_gate·x)·(w_up·x), up [n_tok][F] as scratch. A chunk holds the same rows of both matrices
// and applies SwiGLU to them at once (kernels::matmul_swiglu: in the products' tiles where the
// variant fuses them), so no step runs alone on the calling thread between the products and the
// down product (decode, two threads: ~1.5 us a layer of SwiGLU on one thread while the other
// waited). Rows are cut at multiples of 16, so each chunk's SwiGLU runs the same vector lanes and
// the one tail a whole row would: the same bits whatever the split. Both matrices are [E][F]
// (Model::load checks every tensor's exact shape).
void gate_up_swiglu(ThreadPool& pool, ActScratch& act, const float* x, const kernels::WeightView& wg,
                    const kernels::WeightView& wu, float* gate, float* up, size_t n_tok) {
  const size_t F = wg.n_rows;
  const Split sp = split_products(kernels::matrix_bytes(wg) + kernels::matrix_bytes(wu), 2 * F, n_tok, pool.n_threads());
  const kernels::QuantizedActs a =
      quantise_group(pool, act, x, acts_kind({{wg, gate, F}, {wu, up, F}}, n_tok / sp.n_groups), n_tok, wg.n_cols);
  auto first_row = [&](size_t r) { return r == sp.n_rows ? F : std::min(F, (F * r / sp.n_rows + 8) / 16 * 16); };
  for_product_chunks(pool, sp, n_tok, [&](size_t r, size_t t0, size_t t1) {
    const size_t lo = first_row(r), hi = first_row(r + 1);
    if (lo >= hi) return;
    kernels::matmul_swiglu(wg, wu, token_range(a, t0, t1), gate + t0 * F, up + t0 * F, F, lo, hi);
  });
}

// One thread's share of a prefill split by tokens (Forward::Impl::eval_chunk): the activations of
// the group's products for tokens [t0, t1), those rows of x quantised here into act from value
// t0 · act.cols on. That part of act is the thread's whatever the width of the rows (E, F or H·Dv),
// so a thread quantising its next group never writes where another still reads. The caller has
// grown act's blocks of 256 for the batch where a product reads them. Several products on the AMX
// tiles share their activations' tiles, made here in this thread's buffer.
kernels::QuantizedActs slice_acts(ActScratch& act, const float* x, std::span<const MatJob> jobs, size_t t0, size_t t1) {
  const size_t n_cols = jobs.front().w.n_cols, n = t1 - t0;
  const ActsKind k = acts_kind(jobs, n);
  kernels::QuantizedActs a =
      k.int8 ? quantise_rows(act, x, k.b256, t0, t1, n_cols, t0 * act.cols) : acts_view(act, x + t0 * n_cols, k, n, n_cols);
  if (k.tiles != kernels::ActsTiles::none && jobs.size() > 1) {
    thread_local std::vector<uint16_t> tiles;
    uint16_t* t = aligned_words(tiles, kernels::acts_tiles_words(k.tiles, n, n_cols));
    kernels::make_acts_tiles(k.tiles, x + t0 * n_cols, n, n_cols, 0, n, t);
    a = with_tiles(a, k.tiles, t);
  }
  return a;
}

// The group's products for that share: every row of every matrix, tokens [t0, t1).
void matmuls_slice(ActScratch& act, const float* x, std::span<const MatJob> jobs, size_t t0, size_t t1) {
  const kernels::QuantizedActs a = slice_acts(act, x, jobs, t0, t1);
  for (const MatJob& j : jobs) kernels::matmul(j.w, a, j.y + t0 * j.ldy, j.ldy, 0, j.w.n_rows);
}

void matmuls_slice(ActScratch& act, const float* x, std::initializer_list<MatJob> jobs, size_t t0, size_t t1) {
  matmuls_slice(act, x, std::span(jobs.begin(), jobs.size()), t0, t1);
}

// Runs fn(t) for every token t of a batch of n: over the pool when there are several (prefill),
// inline for one (decode, where a hand-off costs more than the work). Each token's arithmetic is
// the same whoever runs it.
template <class Fn>
void for_tokens(ThreadPool& pool, size_t n, Fn&& fn) {
  if (n < 2 || pool.n_threads() < 2) {
    for (size_t t = 0; t < n; ++t) fn(t);
    return;
  }
  auto body = [&fn](size_t begin, size_t end, size_t) {
    for (size_t t = begin; t < end; ++t) fn(t);
  };
  pool.parallel_for_chunked(n, std::max<size_t>(1, n / (4 * pool.n_threads())), std::ref(body));
}

// RMSNorm of one row: kernels::rmsnorm (norm.h), the sum of squares in double in 8 partial sums in
// a fixed order, the same bits in every variant, thread count and batch. It was this file's loop
// on the baseline ISA (two doubles an instruction); the dispatched vector forms take it 8 lanes
// at a time (docs/bench/cpu.md, "Norms and the k8 quantiser on the vector units (session 39)").
using kernels::rmsnorm;

// Rotates one head vector with the precomputed cos/sin of its position [n_rot/2].
void rope_apply(float* v, const float* cs, const float* sn, size_t half, RopeType type) {
  for (size_t i = 0; i < half; ++i) {
    const size_t i0 = type == RopeType::normal ? 2 * i : i;
    const size_t i1 = type == RopeType::normal ? 2 * i + 1 : i + half;
    const float x0 = v[i0], x1 = v[i1];
    v[i0] = x0 * cs[i] - x1 * sn[i];
    v[i1] = x0 * sn[i] + x1 * cs[i];
  }
}

}  // namespace

struct Forward::Impl {
  const Model* model = nullptr;
  size_t max_batch = 0;
  // Scratch, sized for max_batch tokens.
  AlignedVector<float> x;        // residual stream [B][E]
  AlignedVector<float> a;        // normed [B][E]
  AlignedVector<float> q;        // [B][H·Dk]
  AlignedVector<float> k;        // [B][Hk·Dk]
  AlignedVector<float> v;        // [B][Hk·Dv]
  AlignedVector<float> o;        // attention output [B][H·Dv]
  AlignedVector<float> gate;     // [B][F]
  AlignedVector<float> up;       // [B][F]
  AlignedVector<float> proj;     // [B][E]
  std::vector<double> inv_freq; // RoPE angle per unit position, pair i [n_rot/2]
  AlignedVector<float> rope_cos; // [B][n_rot/2]
  AlignedVector<float> rope_sin; // [B][n_rot/2]
  AlignedVector<float> logits;   // [n_out][V]
  ActScratch act;              // int8 blocks of the activations of one matmul group [B][max(E, F, H·Dv)]
  CpuAttention attn;           // attention's head/key-block loops and their scratch (attention_cpu.h)

  // Checks the batch and the cache, then evaluates it in chunks of max_batch (run and run_from_hidden).
  std::span<const float> run_chunks(KvCache& cache, ThreadPool& pool, const int32_t* tokens, const float* x, size_t n,
                                    size_t pos0, size_t first_layer, LogitsMode mode, bool logits);

  // Layers [first_layer, first_layer + cache.n_layer()) on tokens' embeddings (x_in null) or on
  // hidden states x_in [n][E] handed over by another backend (partial GPU offload).
  void eval_chunk(KvCache& cache, ThreadPool& pool, const int32_t* tokens, size_t n, size_t pos0, float* logits_out,
                  bool all_logits, const float* x_in = nullptr, size_t first_layer = 0);
};

Forward::Forward(const Model& model, size_t max_batch) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  const ModelHParams& hp = model.hparams();
  s.model = &model;
  s.max_batch = std::max<size_t>(1, max_batch);
  const size_t B = s.max_batch, E = hp.n_embd, H = hp.n_head, Hk = hp.n_head_kv;
  const size_t Dk = hp.head_dim_k, Dv = hp.head_dim_v, F = hp.n_ff, half = hp.n_rot / 2;
  s.x.resize(B * E);
  s.a.resize(B * E);
  s.q.resize(B * H * Dk);
  s.k.resize(B * Hk * Dk);
  s.v.resize(B * Hk * Dv);
  s.o.resize(B * H * Dv);
  s.gate.resize(B * F);
  s.up.resize(B * F);
  s.proj.resize(B * E);
  s.rope_cos.resize(B * half);
  s.rope_sin.resize(B * half);
  s.inv_freq.resize(half);
  const std::vector<float>& rf = model.weights().rope_freqs;
  for (size_t i = 0; i < half; ++i) {
    const double f = rf.empty() ? 1.0 : rf[i];
    s.inv_freq[i] = hp.rope_freq_scale * std::pow(static_cast<double>(hp.rope_freq_base), -2.0 * double(i) / hp.n_rot) / f;
  }
  s.logits.resize(static_cast<size_t>(hp.n_vocab));
  s.act.reserve(B, std::max({E, F, H * Dv}));
}

Forward::~Forward() = default;
Forward::Forward(Forward&&) noexcept = default;
Forward& Forward::operator=(Forward&&) noexcept = default;

size_t Forward::max_batch() const { return impl_->max_batch; }

size_t Forward::scratch_bytes() const {
  const Impl& s = *impl_;
  size_t b = s.inv_freq.capacity() * sizeof(double);
  for (const auto* vec : {&s.x, &s.a, &s.q, &s.k, &s.v, &s.o, &s.gate, &s.up, &s.proj, &s.rope_cos,
                          &s.rope_sin, &s.logits}) {
    b += vec->capacity() * sizeof(float);
  }
  b += s.act.q.capacity() + s.act.q256.capacity() +
       (s.act.d.capacity() + s.act.d256.capacity() + s.act.s.capacity() + s.act.s4.capacity()) * 4 +
       s.act.tiles.capacity() * sizeof(uint16_t);
  b += s.attn.scratch_bytes();
  return b;
}

std::span<const float> Forward::run(KvCache& cache, ThreadPool& pool, std::span<const int32_t> tokens, size_t pos0,
                                    LogitsMode mode) {
  const size_t V = impl_->model->hparams().n_vocab;
  for (int32_t t : tokens) {
    if (t < 0 || static_cast<size_t>(t) >= V) throw ModelError("forward: token id " + std::to_string(t) + " is outside the vocabulary");
  }
  return impl_->run_chunks(cache, pool, tokens.data(), nullptr, tokens.size(), pos0, 0, mode, true);
}

std::span<const float> Forward::run_from_hidden(KvCache& cache, ThreadPool& pool, const float* x, size_t n,
                                                size_t pos0, size_t first_layer, LogitsMode mode, bool logits) {
  return impl_->run_chunks(cache, pool, nullptr, x, n, pos0, first_layer, mode, logits);
}

std::span<const float> Forward::Impl::run_chunks(KvCache& cache, ThreadPool& pool, const int32_t* tokens, const float* x,
                                                 size_t n, size_t pos0, size_t first_layer, LogitsMode mode, bool logits) {
  const ModelHParams& hp = model->hparams();
  const size_t V = hp.n_vocab, E = hp.n_embd;
  if (n == 0) throw ModelError("forward: empty batch");
  if (first_layer >= static_cast<size_t>(hp.n_layer) || cache.n_layer() != static_cast<size_t>(hp.n_layer) - first_layer ||
      cache.n_head_kv() != static_cast<size_t>(hp.n_head_kv) || cache.head_dim_k() != static_cast<size_t>(hp.head_dim_k) ||
      cache.head_dim_v() != static_cast<size_t>(hp.head_dim_v)) {
    throw ModelError(first_layer == 0 ? std::string("forward: the KV cache shape does not match the model")
                                      : "forward: the KV cache shape does not match layers " + std::to_string(first_layer) +
                                            ".. of the model");
  }
  if (pos0 > cache.n_tokens()) throw ModelError("forward: position " + std::to_string(pos0) + " leaves a gap in the cache");
  if (pos0 + n > cache.capacity()) throw ModelError("forward: the KV cache is full (" + std::to_string(cache.capacity()) + " tokens)");
  cache.truncate(pos0);
  const bool all = mode == LogitsMode::all;
  if (all && this->logits.size() < n * V) this->logits.resize(n * V);
  for (size_t c = 0; c < n; c += max_batch) {
    const size_t m = std::min(max_batch, n - c);
    const bool last_chunk = c + m == n;
    float* out = !logits ? nullptr : all ? this->logits.data() + c * V : (last_chunk ? this->logits.data() : nullptr);
    eval_chunk(cache, pool, tokens ? tokens + c : nullptr, m, pos0 + c, out, all, x ? x + c * E : nullptr, first_layer);
  }
  if (!logits) return {};
  return std::span<const float>(this->logits.data(), all ? n * V : V);
}

void Forward::Impl::eval_chunk(KvCache& cache, ThreadPool& pool, const int32_t* tokens, size_t n, size_t pos0,
                               float* logits_out, bool all_logits, const float* x_in, size_t first_layer) {
  const ModelHParams& hp = model->hparams();
  const ModelWeights& w = model->weights();
  const size_t E = hp.n_embd, H = hp.n_head, Hk = hp.n_head_kv, Dk = hp.head_dim_k, Dv = hp.head_dim_v;
  const size_t V = hp.n_vocab, half = hp.n_rot / 2, F = hp.n_ff;
  const float eps = hp.rms_eps;
  const float scale = 1.0f / std::sqrt(static_cast<float>(Dk));

  // Per-token steps, the same arithmetic in both splits below.
  const size_t embd_row_bytes = kernels::dtype_row_bytes(*kernels::dtype_info(static_cast<uint32_t>(w.token_embd.type)), E);
  auto embed = [&](size_t t) {  // x [t] = the token's embedding (or the hidden state given)
    if (x_in != nullptr) {
      std::copy(x_in + t * E, x_in + (t + 1) * E, &x[t * E]);
    } else {
      kernels::dequantize_row(w.token_embd.type, static_cast<const uint8_t*>(w.token_embd.data) + tokens[t] * embd_row_bytes,
                              &x[t * E], E);
    }
  };
  auto attn_norm = [&](const LayerWeights& L, size_t t) { rmsnorm(&x[t * E], L.attn_norm.data(), E, eps, &a[t * E]); };
  // Biases, q/k norms, RoPE and the cache store of token t's KV groups [g0, g1) and their query
  // heads (every element's arithmetic is its own, so any cut into groups gives the same bits).
  const size_t G = H / Hk;
  auto qkv_finish_groups = [&](const LayerWeights& L, size_t l, size_t t, size_t g0, size_t g1) {
    float* qt = &q[t * H * Dk];
    float* kt = &k[t * Hk * Dk];
    float* vt = &v[t * Hk * Dv];
    if (!L.bq.empty()) for (size_t i = g0 * G * Dk; i < g1 * G * Dk; ++i) qt[i] += L.bq[i];
    if (!L.bk.empty()) for (size_t i = g0 * Dk; i < g1 * Dk; ++i) kt[i] += L.bk[i];
    if (!L.bv.empty()) for (size_t i = g0 * Dv; i < g1 * Dv; ++i) vt[i] += L.bv[i];
    const float* cs = &rope_cos[t * half];
    const float* sn = &rope_sin[t * half];
    for (size_t h = g0 * G; h < g1 * G; ++h) {
      if (!L.q_norm.empty()) rmsnorm(qt + h * Dk, L.q_norm.data(), Dk, eps, qt + h * Dk);
      rope_apply(qt + h * Dk, cs, sn, half, hp.rope_type);
    }
    for (size_t g = g0; g < g1; ++g) {
      if (!L.k_norm.empty()) rmsnorm(kt + g * Dk, L.k_norm.data(), Dk, eps, kt + g * Dk);
      rope_apply(kt + g * Dk, cs, sn, half, hp.rope_type);
    }
    cache.store_heads(l, pos0 + t, g0, g1, kt, vt);
  };
  auto qkv_finish = [&](const LayerWeights& L, size_t l, size_t t) { qkv_finish_groups(L, l, t, 0, Hk); };
  // The q, k and v products of a layer: one group, they read the same activations. Each writes
  // rows of its width (ldy = its rows), so KV group g owns rows [g, g + 1)·rows/Hk of each.
  auto qkv_jobs = [&](const LayerWeights& L) {
    return std::array<MatJob, 3>{{{L.wq, q.data(), H * Dk}, {L.wk, k.data(), Hk * Dk}, {L.wv, v.data(), Hk * Dv}}};
  };
  auto attn_residual = [&](const LayerWeights& L, size_t t) {  // residual, then the FFN's norm
    for (size_t i = 0; i < E; ++i) x[t * E + i] += proj[t * E + i] + (L.bo.empty() ? 0.0f : L.bo[i]);
    rmsnorm(&x[t * E], L.ffn_norm.data(), E, eps, &a[t * E]);
  };
  auto ffn_residual = [&](size_t t) {
    for (size_t i = t * E; i < (t + 1) * E; ++i) x[i] += proj[i];
  };

  // RoPE table for the batch's positions [n][n_rot/2].
  for (size_t t = 0; t < n; ++t) {
    const double p = static_cast<double>(pos0 + t);
    for (size_t i = 0; i < half; ++i) {
      const double ang = p * inv_freq[i];
      rope_cos[t * half + i] = static_cast<float>(std::cos(ang));
      rope_sin[t * half + i] = static_cast<float>(std::sin(ang));
    }
  }

  const size_t T = pool.n_threads();
  static const size_t slice_tokens = env_count("ALAP_PREFILL_SLICE_TOKENS", kPrefillSliceTokens);
  static const uint64_t slice_env = static_cast<uint64_t>(env_count("ALAP_PREFILL_SLICE_KB", 0)) << 10;  // 0: unset
  const bool tiles = kernels::amx_prefill_active() && n >= kernels::kAmxPrefillMinTokens * T;
  const uint64_t slice_bytes = slice_env != 0 ? slice_env : tiles ? kPrefillSliceBytesAmx : kPrefillSliceBytes;
  // A long batch, split by tokens where the rule at kPrefillSliceTokens allows it: thread i owns
  // tokens [n·i/T, n·(i+1)/T) through a layer's products, norms, RoPE and residuals, so only
  // attention reads rows another thread wrote (split by weight rows, every step read the whole
  // batch's rows, written by the other threads: docs/bench/cpu.md "Two threads on this VM: what one
  // hand-off costs (session 29)"). One parallel call covers a layer's steps after attention and the
  // next layer's before it. The rule reads the heaviest layer's weight bytes, whether every product
  // multiplies int8 activations, and whether one reads them in blocks of 256 (a file may give
  // layers different types: Q4_K_M's Q6_K rows).
  bool by_tokens = T > 1 && n >= slice_tokens * T, acts_256 = false;
  if (by_tokens) {
    uint64_t layer_bytes = 0;
    for (size_t l = 0; l < cache.n_layer(); ++l) {
      const LayerWeights& L = w.layers[first_layer + l];
      uint64_t bytes = 0;
      for (const kernels::WeightView* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
        bytes += kernels::matrix_bytes(*m);
        by_tokens = by_tokens && needs_int8_acts(*m);
        acts_256 = acts_256 || kernels::reads_acts_256(*m);
      }
      layer_bytes = std::max(layer_bytes, bytes);
    }
    by_tokens = by_tokens && layer_bytes * T <= slice_bytes * n;
  }
  // A decode token is split by KV groups through q/k/v, RoPE, the cache store and attention where
  // the groups share out evenly and cut the products at multiples of 16 rows (the packed layouts'
  // interleave); that saves the attention's own parallel call (or its run on the calling thread
  // alone at short contexts) and runs RoPE and the store on every thread.
  const bool by_groups = n == 1 && T > 1 && Hk % T == 0 && (G * Dk) % 16 == 0 && Dk % 16 == 0 && Dv % 16 == 0;
  if (by_tokens) {
    if (acts_256) act.reserve_256(n, act.cols);
    auto slices = [&](auto&& fn) {  // fn(t0, t1) on thread i for its tokens; range i is always thread i's
      auto body = [&](size_t i0, size_t i1, size_t) {
        for (size_t i = i0; i < i1; ++i) fn(n * i / T, n * (i + 1) / T);
      };
      pool.parallel_for_indexed(T, std::ref(body));  // std::ref: no heap copy of the closure
    };
    auto before_attention = [&](size_t l, size_t t0, size_t t1) {
      const LayerWeights& L = w.layers[first_layer + l];
      for (size_t t = t0; t < t1; ++t) attn_norm(L, t);
      matmuls_slice(act, a.data(), qkv_jobs(L), t0, t1);
      for (size_t t = t0; t < t1; ++t) qkv_finish(L, l, t);
    };
    slices([&](size_t t0, size_t t1) {
      for (size_t t = t0; t < t1; ++t) embed(t);
      before_attention(0, t0, t1);
    });
    for (size_t l = 0; l < cache.n_layer(); ++l) {
      const LayerWeights& L = w.layers[first_layer + l];
      attn.run(cache, pool, l, q.data(), n, pos0, H, scale, o.data());
      slices([&](size_t t0, size_t t1) {
        matmuls_slice(act, o.data(), {{L.wo, proj.data(), E}}, t0, t1);
        for (size_t t = t0; t < t1; ++t) attn_residual(L, t);
        const MatJob ffn[2] = {{L.w_gate, gate.data(), F}, {L.w_up, up.data(), F}};
        kernels::matmul_swiglu(L.w_gate, L.w_up, slice_acts(act, a.data(), ffn, t0, t1), &gate[t0 * F], &up[t0 * F],
                               F, 0, F);
        matmuls_slice(act, gate.data(), {{L.w_down, proj.data(), E}}, t0, t1);
        for (size_t t = t0; t < t1; ++t) ffn_residual(t);
        if (l + 1 < cache.n_layer()) before_attention(l + 1, t0, t1);
      });
    }
  } else {
    for_tokens(pool, n, embed);
    // l is the cache's layer; the model's is first_layer + l.
    for (size_t l = 0; l < cache.n_layer(); ++l) {
      const LayerWeights& L = w.layers[first_layer + l];
      for_tokens(pool, n, [&](size_t t) { attn_norm(L, t); });
      const std::array<MatJob, 3> qkv = qkv_jobs(L);
      if (by_groups) {
        // A decode token split by KV groups: thread i computes the q/k/v rows of groups [Hk·i/T,
        // Hk·(i+1)/T), finishes them (RoPE, cache store) and runs their attention, all in one
        // parallel call; the products cut at whole groups (multiples of 16 rows) give each row
        // the bits any split gives, and the attention makes run()'s calls for those groups.
        const kernels::QuantizedActs qkv_acts = quantise_group(pool, act, a.data(), acts_kind(qkv, 1), 1, E);
        attn.prepare_groups(cache, l, pos0, H, T);
        auto body = [&](size_t i0, size_t i1, size_t thread) {
          for (size_t i = i0; i < i1; ++i) {
            const size_t g0 = Hk * i / T, g1 = Hk * (i + 1) / T;
            for (const MatJob& j : qkv) kernels::matmul(j.w, qkv_acts, j.y, j.ldy, g0 * j.ldy / Hk, g1 * j.ldy / Hk);
            CpuAttention::read_ahead_first_block(cache, l, pos0 + 1, g0);
            qkv_finish_groups(L, l, 0, g0, g1);
            attn.run_groups(cache, l, q.data(), pos0, H, scale, g0, g1, thread, o.data());
          }
        };
        pool.parallel_for_chunked(T, 1, std::ref(body));  // std::ref: no heap copy of the closure
      } else {
        matmuls(pool, act, a.data(), qkv, n);
        // Decode: the first rows of the layer's first KV group on their way while RoPE and the cache
        // store run (the kernels read on from there). Nothing reads them ahead otherwise (eval model,
        // one thread: ~5 us against ~1.6 us for the blocks after it; this takes ~1.6 us of that a
        // layer, docs/bench/cpu.md "The eval model's token, part 3").
        if (n == 1) CpuAttention::read_ahead_first_block(cache, l, pos0 + 1);
        for_tokens(pool, n, [&](size_t t) { qkv_finish(L, l, t); });

        // Attention over keys 0..pos0+t of each token: grouped heads, key blocks (attention_cpu.h).
        attn.run(cache, pool, l, q.data(), n, pos0, H, scale, o.data());
      }

      matmuls(pool, act, o.data(), {{L.wo, proj.data(), E}}, n);
      for_tokens(pool, n, [&](size_t t) { attn_residual(L, t); });
      gate_up_swiglu(pool, act, a.data(), L.w_gate, L.w_up, gate.data(), up.data(), n);
      matmuls(pool, act, gate.data(), {{L.w_down, proj.data(), E}}, n);
      for_tokens(pool, n, ffn_residual);
    }
  }
  cache.set_n_tokens(pos0 + n);

  if (!logits_out) return;
  // Output head for the asked-for tokens: z [n_out][E] (in a), logits [n_out][V].
  const size_t first = all_logits ? 0 : n - 1, n_out = n - first;
  for_tokens(pool, n_out, [&](size_t t) { rmsnorm(&x[(first + t) * E], w.output_norm.data(), E, eps, &a[t * E]); });
  matmuls(pool, act, a.data(), {{w.output, logits_out, V}}, n_out);
  if (!w.output_bias.empty()) {
    for (size_t t = 0; t < n_out; ++t) {
      for (size_t i = 0; i < V; ++i) logits_out[t * V + i] += w.output_bias[i];
    }
  }
}

}  // namespace alap
