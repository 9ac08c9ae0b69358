// Run-time selection of the CPU kernel variant (cpuid, once) and the public entry points that
// forward to it. Not the kernels themselves: those live in scalar/, avx2/ and avx512_vnni/.
#include <cstring>

#include "alap/kernels/kv_k8.h"
#include "alap/kernels/quant.h"
#include "cpu_variants.h"

namespace alap::kernels {

namespace {

bool cpu_has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}

bool cpu_has_avx512vnni() {
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}

// The best variant this CPU runs, decided once.
const CpuVariant& best_variant() {
  static const CpuVariant& best = cpu_has_avx512vnni() ? avx512vnni::kVariant
                                  : cpu_has_avx2()     ? avx2::kVariant
                                                       : scalar::kVariant;
  return best;
}

const CpuVariant* g_override = nullptr;  // set by force_scalar_kernels / set_cpu_variant (tests)

const CpuVariant& active() { return g_override ? *g_override : best_variant(); }

}  // namespace

void matmul(const WeightView& w, const float* x, size_t n_tok, float* y, size_t ldy, size_t row_begin,
            size_t row_end) {
  if (row_begin > row_end || row_end > w.n_rows) {
    throw std::invalid_argument("matmul: rows [" + std::to_string(row_begin) + ", " + std::to_string(row_end) +
                                ") outside a matrix of " + std::to_string(w.n_rows) + " rows");
  }
  const DTypeInfo& info = weight_dtype("matmul", w.type);
  if (w.n_cols % info.block_elems != 0) {
    throw std::invalid_argument("matmul: " + std::to_string(w.n_cols) + " columns is not a multiple of the " +
                                dtype_label(w.type) + " block");
  }
  if (n_tok == 0 || row_begin == row_end) return;
  active().matmul(w, x, n_tok, y, ldy, row_begin, row_end);
}

float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim) {
  return active().k8_dot(a, da, b, db, head_dim);
}

void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores) {
  active().k8_scores(q, dq, k, dk, head_dim, n, scale, scores);
}

const char* cpu_variant_name() { return active().name; }

void force_scalar_kernels(bool on) { g_override = on ? &scalar::kVariant : nullptr; }

bool set_cpu_variant(const char* name) {
  if (name == nullptr || std::strcmp(name, "best") == 0) {
    g_override = nullptr;
    return true;
  }
  const struct {
    const CpuVariant* v;
    bool ok;
  } all[] = {{&scalar::kVariant, true}, {&avx2::kVariant, cpu_has_avx2()}, {&avx512vnni::kVariant, cpu_has_avx512vnni()}};
  for (const auto& e : all) {
    if (std::strcmp(e.v->name, name) == 0) {
      if (!e.ok) return false;
      g_override = e.v;
      return true;
    }
  }
  return false;
}

}  // namespace alap::kernels
