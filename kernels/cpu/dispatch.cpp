// Run-time selection of the CPU kernel variant (cpuid, once) and the public entry points that
// forward to it. Not the kernels themselves: those live in scalar/, avx2/ and avx512_vnni/.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "alap/kernels/activation.h"
#include "alap/kernels/attn.h"
#include "alap/kernels/kv_k8.h"
#include "alap/kernels/norm.h"
#include "alap/kernels/quant.h"
#include "attn_heads.h"
#include "cpu_features.h"
#include "cpu_variants.h"
#include "packed_layout.h"

namespace alap::kernels {

namespace {

bool cpu_has_sse4() { return cpu_features().sse4_set(); }
bool cpu_has_avx2() { return cpu_features().avx2_set(); }
bool cpu_has_avx512vnni() { return cpu_features().avx512vnni_set(); }
bool cpu_has_avxvnni() { return cpu_features().avxvnni_set(); }

// The variant called `name` when this CPU can run it, else null.
const CpuVariant* runnable_variant(const char* name) {
  const struct {
    const CpuVariant* v;
    bool ok;
  } all[] = {{&scalar::kVariant, true}, {&sse4::kVariant, cpu_has_sse4()}, {&avx2::kVariant, cpu_has_avx2()},
             {&avxvnni::kVariant, cpu_has_avxvnni()}, {&avx512vnni::kVariant, cpu_has_avx512vnni()}};
  for (const auto& e : all) {
    if (std::strcmp(e.v->name, name) == 0) return e.ok ? e.v : nullptr;
  }
  return nullptr;
}

// The variant this CPU runs, decided once: the widest cpuid allows, or ALAP_CPU_VARIANT (scalar,
// sse4, avx2, avxvnni, avx512vnni) when it names one this CPU has — to compare paths on one machine, or
// to rule out a fast path when an answer looks wrong. Any other value is ignored.
const CpuVariant& best_variant() {
  static const CpuVariant& best = []() -> const CpuVariant& {
    if (const char* env = std::getenv("ALAP_CPU_VARIANT"); env != nullptr) {
      if (const CpuVariant* v = runnable_variant(env); v != nullptr) return *v;
    }
    return cpu_has_avx512vnni() ? avx512vnni::kVariant
           : cpu_has_avxvnni()  ? avxvnni::kVariant
           : cpu_has_avx2()     ? avx2::kVariant
           : cpu_has_sse4()     ? sse4::kVariant
                                : scalar::kVariant;
  }();
  return best;
}

const CpuVariant* g_override = nullptr;  // set by force_scalar_kernels / set_cpu_variant (tests)

const CpuVariant& active() { return g_override ? *g_override : best_variant(); }

void check_matmul(const WeightView& w, size_t row_begin, size_t row_end) {
  if (row_begin > row_end || row_end > w.n_rows) {
    throw std::invalid_argument("matmul: rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) +
                                ") outside a matrix of " + std::to_string(w.n_rows) + " rows");
  }
  const DTypeInfo& info = weight_dtype("matmul", w.type);
  if (w.n_cols % info.block_elems != 0) {
    throw std::invalid_argument("matmul: " + std::to_string(w.n_cols) + " columns is not a multiple of the " +
                                dtype_label(w.type) + " block");
  }
}

}  // namespace

void quantize_activations(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4) {
  if (n_cols % 32 != 0) {
    throw std::invalid_argument("quantize_activations: " + std::to_string(n_cols) + " columns is not a multiple of 32");
  }
  active().quantize_acts(x, n_tok, n_cols, q, d, s, s4);
}

void quantize_activations_256(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d) {
  if (n_cols % 256 != 0) {
    throw std::invalid_argument("quantize_activations_256: " + std::to_string(n_cols) +
                                " columns is not a multiple of 256");
  }
  const CpuVariant& v = active();
  (v.quantize_acts_256 ? v.quantize_acts_256 : scalar::quantize_acts_256)(x, n_tok, n_cols, q, d);
}

namespace {
// ALAP_CPU_PACK_SKIP: types (GGUF names, comma-separated, e.g. "q6_k,q8_0") left in the file's
// layout by pack_weights' callers (packed_bytes 0), to measure a type's packed path against the
// unpacked one in a whole model. Read once.
bool pack_skipped(DType t) {
  static const char* const skip = std::getenv("ALAP_CPU_PACK_SKIP");
  const DTypeInfo* info = dtype_info(static_cast<uint32_t>(t));
  if (skip == nullptr || info == nullptr) return false;
  const size_t n = std::strlen(info->name);
  for (const char* p = skip; *p != '\0';) {  // each comma-separated item against the name
    const char* e = std::strchr(p, ',');
    const size_t len = e ? static_cast<size_t>(e - p) : std::strlen(p);
    bool same = len == n;
    for (size_t i = 0; same && i < n; ++i) {
      same = std::tolower(static_cast<unsigned char>(p[i])) == std::tolower(static_cast<unsigned char>(info->name[i]));
    }
    if (same) return true;
    p += len + (e ? 1 : 0);
  }
  return false;
}

// Whether variant v multiplies type t's packed layout: every variant with a packed form (AVX2,
// AVX-VNNI, AVX-512 VNNI; not scalar) has every type of packed_layout.h, Q3_K included since
// session 6 (a type a variant could not read would be a copy gone unread).
bool variant_packs(const CpuVariant& v, DType t) { return v.matmul_packed != nullptr && packed::layout_has(t); }
}  // namespace

size_t packed_bytes(const WeightView& w) {
  if (!variant_packs(active(), w.type) || w.n_rows % packed::kRows != 0 || pack_skipped(w.type)) return 0;
  return w.n_rows / packed::kRows * packed::group_bytes(w.type, w.n_cols);
}

void pack_weights(const WeightView& w, void* dst) {
  if (packed_bytes(w) == 0) {
    throw std::invalid_argument("pack_weights: variant " + std::string(active().name) + " has no packed form for " +
                                dtype_label(w.type) + " " + std::to_string(w.n_rows) + "x" + std::to_string(w.n_cols));
  }
  packed::pack(w.type, w.data, w.n_rows, w.n_cols, dst);
}

bool reads_acts_256(const WeightView& w) {
  const CpuVariant& v = active();
  return w.packed != nullptr && v.packed_reads_256 != nullptr && v.packed_reads_256(w.type) &&
         w.n_rows % packed::kRows == 0 && packed::group_bytes(w.type, w.n_cols) != 0;
}

bool reads_int8_acts(const WeightView& w, size_t n_tok) {
  if (dtype_info(static_cast<uint32_t>(w.type))->block_elems == 1) return false;
  const CpuVariant& v = active();
  return w.packed == nullptr || v.packed_tiles_form == nullptr || v.packed_tiles_form(w, n_tok) == ActsTiles::none;
}

ActsTiles acts_tiles_form(const WeightView& w, size_t n_tok) {
  const CpuVariant& v = active();
  if (w.packed == nullptr || v.packed_tiles_form == nullptr || v.make_acts_tiles == nullptr) return ActsTiles::none;
  return v.packed_tiles_form(w, n_tok);  // a taken packed layout: n_cols a multiple of 32
}

size_t acts_tiles_words(ActsTiles f, size_t n_tok, size_t n_cols) {
  const size_t one = 16 * ((n_tok + 15) / 16) * n_cols;
  return f == ActsTiles::none ? 0 : f == ActsTiles::pairs ? 2 * one : one;
}

void make_acts_tiles(ActsTiles f, const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1, uint16_t* out) {
  if (f == ActsTiles::none || t0 >= t1) return;
  const CpuVariant& v = active();
  if (v.make_acts_tiles == nullptr || n_cols % 32 != 0 || t0 % 16 != 0) {
    throw std::invalid_argument("make_acts_tiles: no tiles on this variant, or a shape they do not take");
  }
  v.make_acts_tiles(f, x, n_tok, n_cols, t0, t1, out);
}

namespace {
// x [n_tok][n_cols] with its int8 blocks, quantised here into this thread's buffers (valid until
// the thread's next call).
QuantizedActs quantised_here(const float* x, size_t n_tok, size_t n_cols) {
  thread_local std::vector<int8_t> q;
  thread_local std::vector<float> d;
  thread_local std::vector<int32_t> s, s4;
  q.resize(n_tok * n_cols);
  d.resize(n_tok * n_cols / 32);
  s.resize(d.size());
  s4.resize(n_tok * n_cols / 4);
  active().quantize_acts(x, n_tok, n_cols, q.data(), d.data(), s.data(), s4.data());
  return QuantizedActs{x, q.data(), d.data(), s.data(), s4.data(), n_tok, n_cols};
}

// The variant's product: on w.packed where it has a packed path for w, else on w.data. Int8 blocks
// and blocks of 256 the product reads and the caller did not give are quantised here, for this call.
void run_matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end) {
  const CpuVariant& v = active();
  if (x.q == nullptr && w.n_cols % 32 == 0 && reads_int8_acts(w, x.n_tok)) {
    return run_matmul(w, quantised_here(x.x, x.n_tok, x.n_cols), y, ldy, row_begin, row_end);
  }
  if (x.q != nullptr && x.q256 == nullptr && reads_acts_256(w)) {
    thread_local std::vector<int8_t> q;
    thread_local std::vector<float> d;
    q.resize(x.n_tok * x.n_cols);
    d.resize(x.n_tok * x.n_cols / 256);
    quantize_activations_256(x.x, x.n_tok, x.n_cols, q.data(), d.data());
    QuantizedActs a = x;
    a.q256 = q.data();
    a.d256 = d.data();
    return run_matmul(w, a, y, ldy, row_begin, row_end);
  }
  if (w.packed != nullptr && v.matmul_packed != nullptr && v.matmul_packed(w, x, y, ldy, row_begin, row_end)) return;
  v.matmul(w, x, y, ldy, row_begin, row_end);
}
}  // namespace

void matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end) {
  check_matmul(w, row_begin, row_end);
  if (x.n_cols != w.n_cols) {
    throw std::invalid_argument("matmul: activations of " + std::to_string(x.n_cols) + " columns for a matrix of " +
                                std::to_string(w.n_cols));
  }
  if (x.n_tok == 0 || row_begin == row_end) return;
  run_matmul(w, x, y, ldy, row_begin, row_end);
}

void matmul(const WeightView& w, const float* x, size_t n_tok, float* y, size_t ldy, size_t row_begin,
            size_t row_end) {
  check_matmul(w, row_begin, row_end);
  if (n_tok == 0 || row_begin == row_end) return;
  QuantizedActs a{x, nullptr, nullptr, nullptr, nullptr, n_tok, w.n_cols};
  run_matmul(w, a, y, ldy, row_begin, row_end);  // int8 blocks, where the product reads them, quantised there
}

float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim) {
  return active().k8_dot(a, da, b, db, head_dim);
}

void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores) {
  active().k8_scores(q, dq, k, dk, head_dim, n, scale, scores);
}

void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores) {
  active().f16_scores(q, k, head_dim, n, scale, scores);
}

void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out) {
  active().f16_accum_v(p, v, head_dim, n, out);
}

void softmax(float* x, size_t n) { active().softmax(x, n); }

void silu_mul(float* gate, const float* up, size_t n) {
  auto* f = active().silu_mul;
  (f != nullptr ? f : scalar::silu_mul)(gate, up, n);
}

void matmul_swiglu(const WeightView& gate, const WeightView& up, const QuantizedActs& x, float* h, float* up_out,
                   size_t ldh, size_t row_begin, size_t row_end) {
  check_matmul(gate, row_begin, row_end);
  check_matmul(up, row_begin, row_end);
  if (up.n_rows != gate.n_rows || up.n_cols != gate.n_cols || x.n_cols != gate.n_cols) {
    throw std::invalid_argument("matmul_swiglu: gate " + std::to_string(gate.n_rows) + " x " +
                                std::to_string(gate.n_cols) + " and up " + std::to_string(up.n_rows) + " x " +
                                std::to_string(up.n_cols) + " for activations of " + std::to_string(x.n_cols) +
                                " columns");
  }
  if (x.n_tok == 0 || row_begin == row_end) return;
  const CpuVariant& v = active();
  // The fused tiles read the int8 blocks the caller quantised (a prompt's, never one token's).
  if (gate.packed != nullptr && up.packed != nullptr && gate.type == up.type && x.q != nullptr &&
      v.matmul_swiglu_packed != nullptr && v.matmul_swiglu_packed(gate, up, x, h, up_out, ldh, row_begin, row_end)) {
    return;
  }
  run_matmul(gate, x, h, ldh, row_begin, row_end);
  run_matmul(up, x, up_out, ldh, row_begin, row_end);
  for (size_t t = 0; t < x.n_tok; ++t) {
    silu_mul(h + t * ldh + row_begin, up_out + t * ldh + row_begin, row_end - row_begin);
  }
}

void rmsnorm(const float* x, const float* w, size_t n, float eps, float* out) {
  auto* f = active().rmsnorm;
  (f != nullptr ? f : scalar::rmsnorm)(x, w, n, eps, out);
}

void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out) {
  active().k8_accum_v(p, q, d, head_dim, block, n, out);
}

// Grouped-head attention: the table that goes with the active variant (the avxvnni variant uses
// the AVX2 one; k8_scores_heads below routes both 256-bit variants to their k8_scores_heads8).
namespace {
const AttnHeadsVariant& active_heads() {
  const CpuVariant* v = &active();
  if (v == &avx512vnni::kVariant) return avx512vnni::kAttnHeads;
  if (v == &scalar::kVariant) return scalar::kAttnHeads;
  if (v == &sse4::kVariant) return sse4::kAttnHeads;
  return avx2::kAttnHeads;
}

size_t checked_k8_block(const char* where, size_t head_dim) {
  const size_t block = k8_block_size(head_dim);
  if (block == 0) {
    throw std::invalid_argument(std::string(where) + ": head_dim " + std::to_string(head_dim) +
                                " is not a multiple of the 32-value k8 block");
  }
  return block;
}

void check_ld(const char* where, size_t n, size_t ld) {
  if (ld < n) {
    throw std::invalid_argument(std::string(where) + ": row stride " + std::to_string(ld) + " is below " +
                                std::to_string(n) + " keys");
  }
}
}  // namespace

// k8_scores_heads takes the AMX tiles above this many rows (query heads): a prompt tile's rows. Up to
// 8 heads, a decode token's KV group, the AVX-512 path keeps every head's sums in registers.
constexpr size_t kAmxScoreRows = 8;

void k8_scores_heads(const int8_t* q, const uint16_t* dq, size_t n_heads, const int8_t* k, const uint16_t* dk,
                     size_t head_dim, size_t n, float scale, float* scores, size_t ld) {
  const size_t block = checked_k8_block("k8_scores_heads", head_dim);
  check_ld("k8_scores_heads", n, ld);
  if (n == 0 || n_heads == 0) return;
  const CpuVariant& v = active();
  // Many rows (prompt tiles) on the AMX tiles where they are allowed: the same bits (attn_amx.cpp).
  if (n_heads > kAmxScoreRows && amx_prefill_active() &&
      avx512vnni::k8_scores_amx(q, dq, n_heads, k, dk, head_dim, n, scale, scores, ld)) {
    return;
  }
  if (&v == &avx512vnni::kVariant || &v == &scalar::kVariant || &v == &sse4::kVariant) {
    return active_heads().k8_scores_heads(q, dq, n_heads, k, dk, head_dim, n, scale, scores, ld);
  }
  // The 256-bit variants: 8 keys per ymm, transposed once for all the heads (k8_heads_avx2.inc).
  if (&v == &avxvnni::kVariant) return avxvnni::k8_scores_heads8(q, dq, n_heads, k, dk, head_dim, n, scale, scores, ld);
  if (&v == &avx2::kVariant) return avx2::k8_scores_heads8(q, dq, n_heads, k, dk, head_dim, n, scale, scores, ld);
  for (size_t h = 0; h < n_heads; ++h) {
    v.k8_scores(q + h * head_dim, dq + h * (head_dim / block), k, dk, head_dim, n, scale, scores + h * ld);
  }
}

void f16_scores_heads(const float* q, size_t n_heads, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld) {
  check_ld("f16_scores_heads", n, ld);
  if (n == 0 || n_heads == 0) return;
  active_heads().f16_scores_heads(q, n_heads, k, head_dim, n, scale, scores, ld);
}

void softmax_partial(float* x, size_t n, float* m, float* l) {
  if (n == 0) throw std::invalid_argument("softmax_partial: no keys");
  active_heads().softmax_partial(x, n, m, l);
}

void softmax_partial_rows(float* x, size_t ld, size_t rows, size_t n, float* m, float* l) {
  if (n == 0) throw std::invalid_argument("softmax_partial_rows: no keys");
  check_ld("softmax_partial_rows", n, ld);
  if (&active() == &avx512vnni::kVariant) return avx512vnni::softmax_partial_rows(x, ld, rows, n, m, l);
  for (size_t r = 0; r < rows; ++r) active_heads().softmax_partial(x + r * ld, n, &m[r], &l[r]);
}

void f16_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const uint16_t* v, size_t head_dim, size_t n,
                       float* out) {
  check_ld("f16_accum_v_heads", n, ldp);
  if (n == 0 || n_heads == 0) return;
  active_heads().f16_accum_v_heads(p, ldp, n_heads, v, head_dim, n, out);
}

void f16_scores_tiles(const float* q, size_t n_rows, const uint16_t* k, size_t head_dim, size_t n, float scale,
                      float* scores, size_t ld) {
  check_ld("f16_scores_tiles", n, ld);
  if (n == 0 || n_rows == 0) return;
  if (amx_prefill_active() && head_dim % 32 == 0) {
    return avx512vnni::f16_scores_amx(q, n_rows, k, head_dim, n, scale, scores, ld);
  }
  active_heads().f16_scores_heads(q, n_rows, k, head_dim, n, scale, scores, ld);
}

void f16_accum_v_tiles(const float* p, size_t ldp, size_t n_rows, const uint16_t* v, size_t head_dim, size_t n,
                       float* out) {
  check_ld("f16_accum_v_tiles", n, ldp);
  if (n == 0 || n_rows == 0) return;
  if (amx_prefill_active() && head_dim % 16 == 0) {
    return avx512vnni::f16_accum_v_amx(p, ldp, n_rows, v, head_dim, n, out);
  }
  active_heads().f16_accum_v_heads(p, ldp, n_rows, v, head_dim, n, out);
}

void k8_accum_v_heads(const float* p, size_t ldp, size_t n_heads, const int8_t* q, const uint16_t* d,
                      size_t head_dim, size_t block, size_t n, float* out) {
  check_ld("k8_accum_v_heads", n, ldp);
  if (block == 0 || head_dim % block != 0) {
    throw std::invalid_argument("k8_accum_v_heads: block " + std::to_string(block) + " does not divide head_dim " +
                                std::to_string(head_dim));
  }
  if (n == 0 || n_heads == 0) return;
  if (&active() == &avxvnni::kVariant) {  // the avx2 table's loop with VEX vpdpwssd
    return avxvnni::k8_accum_v_heads16(p, ldp, n_heads, q, d, head_dim, block, n, out, true);
  }
  active_heads().k8_accum_v_heads(p, ldp, n_heads, q, d, head_dim, block, n, out);
}

namespace {
// attn_block_heads' and attn_block_tiles' arguments.
void check_block(const char* where, const AttnBlock& b, size_t n, size_t ld) {
  check_ld(where, n, ld);
  if (n == 0) throw std::invalid_argument(std::string(where) + ": no keys");
  if ((b.kq != nullptr ? b.qq == nullptr || b.qd == nullptr || b.kd == nullptr : b.q == nullptr || b.k == nullptr) ||
      (b.vq != nullptr ? b.vd == nullptr : b.v == nullptr)) {
    throw std::invalid_argument(std::string(where) + ": a query, K or V pointer is missing");
  }
  if (b.kq != nullptr) checked_k8_block(where, b.head_dim_k);
  if (b.vq != nullptr && (b.block_v == 0 || b.head_dim_v % b.block_v != 0)) {
    throw std::invalid_argument(std::string(where) + ": V block " + std::to_string(b.block_v) +
                                " does not divide head_dim_v " + std::to_string(b.head_dim_v));
  }
}

// A block as its calls in order: scores, softmax_partial of each row, the V sum from 0; fp16 K and V
// through the prompt tiles' calls (tiles) or the _heads ones.
void block_calls(const AttnBlock& b, size_t rows, size_t n, float scale, float* scores, size_t ld, float* m, float* l,
                 float* out, bool tiles) {
  if (b.kq != nullptr) {
    k8_scores_heads(b.qq, b.qd, rows, b.kq, b.kd, b.head_dim_k, n, scale, scores, ld);
  } else if (tiles) {
    f16_scores_tiles(b.q, rows, b.k, b.head_dim_k, n, scale, scores, ld);
  } else {
    f16_scores_heads(b.q, rows, b.k, b.head_dim_k, n, scale, scores, ld);
  }
  softmax_partial_rows(scores, ld, rows, n, m, l);
  std::fill(out, out + rows * b.head_dim_v, 0.0f);
  if (b.vq != nullptr) {
    k8_accum_v_heads(scores, ld, rows, b.vq, b.vd, b.head_dim_v, b.block_v, n, out);
  } else if (tiles) {
    f16_accum_v_tiles(scores, ld, rows, b.v, b.head_dim_v, n, out);
  } else {
    f16_accum_v_heads(scores, ld, rows, b.v, b.head_dim_v, n, out);
  }
}
}  // namespace

void attn_block_tiles(const AttnBlock& b, size_t n_rows, size_t n, float scale, float* scores, size_t ld, float* m,
                      float* l, float* out) {
  check_block("attn_block_tiles", b, n, ld);
  if (n_rows == 0) return;
  if (amx_prefill_active() && avx512vnni::attn_block_amx(b, n_rows, n, scale, scores, ld, m, l, out)) return;
  block_calls(b, n_rows, n, scale, scores, ld, m, l, out, true);
}

void attn_block_heads(const AttnBlock& b, size_t n_heads, size_t n, float scale, float* scores, size_t ld, float* m,
                      float* l, float* out) {
  check_block("attn_block_heads", b, n, ld);
  if (n_heads == 0) return;
  const CpuVariant& v = active();
  if (&v == &avx2::kVariant) {
    return avx2::attn_block_heads(b, n_heads, n, scale, scores, ld, m, l, out, &avx2::k8_scores_heads8,
                                  &avx2::k8_accum_v_heads16);
  }
  if (&v == &avxvnni::kVariant) {
    return avx2::attn_block_heads(b, n_heads, n, scale, scores, ld, m, l, out, &avxvnni::k8_scores_heads8,
                                  &avxvnni::k8_accum_v_heads16);
  }
  // The others: the calls in order, each pass reading its own rows ahead. On AVX-512 (an Intel Xeon,
  // docs/bench/cpu.md "Decode attention: V read with the scores (session 14)") reading V with the
  // scores was 5-22% slower: its V sum takes 64 lanes a pass and keeps up with its own reads.
  block_calls(b, n_heads, n, scale, scores, ld, m, l, out, false);
}

void k8_quantize(const float* x, size_t head_dim, int8_t* q, uint16_t* d) {
  checked_k8_block("k8_quantize", head_dim);
  active_heads().k8_quantize(x, head_dim, q, d);
}

void kv_row_to_fp16(const float* x, size_t n, uint16_t* out) { active_heads().kv_row_to_fp16(x, n, out); }

const char* cpu_variant_name() { return active().name; }

bool amx_prefill_active() { return &active() == &avx512vnni::kVariant && amx_prefill(); }

void force_scalar_kernels(bool on) { g_override = on ? &scalar::kVariant : nullptr; }

bool set_cpu_variant(const char* name) {
  if (name == nullptr || std::strcmp(name, "best") == 0) {
    g_override = nullptr;
    return true;
  }
  const CpuVariant* v = runnable_variant(name);
  if (v == nullptr) return false;
  g_override = v;
  return true;
}

}  // namespace alap::kernels
