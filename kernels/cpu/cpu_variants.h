// Private to kernels/cpu: the table of entry points each ISA variant provides and the small
// helpers the variant files share. Not a public header; core never sees it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "alap/kernels/attn.h"
#include "alap/kernels/dtype.h"
#include "alap/kernels/fp16.h"
#include "alap/kernels/quant.h"

namespace alap::kernels {

// One ISA variant. A variant that does not accelerate a type forwards to the scalar twin.
struct CpuVariant {
  const char* name;
  void (*matmul)(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                 size_t row_end);
  void (*quantize_acts)(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4);
  float (*k8_dot)(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim);
  void (*k8_scores)(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
                    size_t n, float scale, float* scores);
  void (*f16_scores)(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores);
  void (*f16_accum_v)(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out);
  void (*softmax)(float* x, size_t n);
  void (*k8_accum_v)(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                     float* out);
  // Products on row-interleaved weights (w.packed, packed_layout.h); false when this variant has
  // none for w (the caller then runs matmul on w.data). Null: no packed form at all.
  bool (*matmul_packed)(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                        size_t row_end) = nullptr;
  // activation.h; null: the scalar twin.
  void (*silu_mul)(float* gate, const float* up, size_t n) = nullptr;
  // Types whose packed products read QuantizedActs::q256/d256 (quant.h reads_acts_256); null: none.
  bool (*packed_reads_256)(DType t) = nullptr;
  // quantize_activations_256; null: the scalar twin.
  void (*quantize_acts_256)(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d) = nullptr;
  // norm.h; null: the scalar twin.
  void (*rmsnorm)(const float* x, const float* w, size_t n, float eps, float* out) = nullptr;
  // The activations' form in which matmul_packed multiplies w for n_tok tokens on the AMX tiles,
  // from QuantizedActs::x alone, or ActsTiles::none where it does not take the tiles (quant.h
  // reads_int8_acts, acts_tiles_form); null: never.
  ActsTiles (*packed_tiles_form)(const WeightView& w, size_t n_tok) = nullptr;
  // quant.h make_acts_tiles for a form packed_tiles_form names; null: no tiles.
  void (*make_acts_tiles)(ActsTiles f, const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1,
                          uint16_t* out) = nullptr;
  // quant.h matmul_swiglu on gate.packed and up.packed in one pass; false where this variant has no
  // fused form for them (the caller then runs the two products and silu_mul). Null: never.
  bool (*matmul_swiglu_packed)(const WeightView& gate, const WeightView& up, const QuantizedActs& x, float* h,
                               float* up_out, size_t ldh, size_t row_begin, size_t row_end) = nullptr;
};

namespace scalar {
extern const CpuVariant kVariant;
void matmul(const WeightView& w, const float* x, size_t n_tok, float* y, size_t ldy, size_t row_begin,
            size_t row_end);
void matmul_q(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end);
void quantize_acts(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4);
void quantize_acts_256(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d);
void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores);
void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out);
void softmax(float* x, size_t n);
void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out);
float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim);
void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores);
void silu_mul(float* gate, const float* up, size_t n);
void rmsnorm(const float* x, const float* w, size_t n, float eps, float* out);
// norm.h's rule from element i on (the vector forms have summed [0, i), i a multiple of 8, into
// part's 8 sums): the rest into sum i mod 8, the 8 sums in their fixed order, the inverse RMS.
// Compiled once, in the scalar file (not inline: an ISA file's copy could be the one kept).
float rms_inverse(double (&part)[8], const float* x, size_t i, size_t n, float eps);
}  // namespace scalar

namespace sse4 {
extern const CpuVariant kVariant;  // needs SSSE3 + SSE4.1 (no FMA, no F16C: CPUs without AVX2)
// sse4/matmul_sse4.cpp
void matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end);
// sse4/attn_sse4.cpp
float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim);
void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores);
void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores);
void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out);
void softmax(float* x, size_t n);
void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out);
}  // namespace sse4

namespace avx2 {
extern const CpuVariant kVariant;  // needs AVX2 + FMA + F16C
void matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end);
bool matmul_packed(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                   size_t row_end);  // avx2/packed_avx2.cpp
bool packed_reads_256(DType t);   // avx2/packed_avx2.cpp
void quantize_acts(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4);
void quantize_acts_256(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d);
void f16_scores(const float* q, const uint16_t* k, size_t head_dim, size_t n, float scale, float* scores);
void f16_accum_v(const float* p, const uint16_t* v, size_t head_dim, size_t n, float* out);
void softmax(float* x, size_t n);
void k8_accum_v(const float* p, const int8_t* q, const uint16_t* d, size_t head_dim, size_t block, size_t n,
                float* out);
float k8_dot(const int8_t* a, const uint16_t* da, const int8_t* b, const uint16_t* db, size_t head_dim);
void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores);
void silu_mul(float* gate, const float* up, size_t n);  // avx2/activation_avx2.cpp
void rmsnorm(const float* x, const float* w, size_t n, float eps, float* out);  // avx2/activation_avx2.cpp
}  // namespace avx2

namespace avxvnni {
extern const CpuVariant kVariant;  // needs AVX2 + FMA + F16C + AVX-VNNI (256-bit vpdpbusd, VEX)
void matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end);
bool matmul_packed(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                   size_t row_end);  // avx_vnni/packed_avxvnni.cpp
void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores);
}

namespace avx512vnni {
extern const CpuVariant kVariant;  // needs AVX2 + FMA + F16C + AVX-512 F/BW/VL/VNNI
void matmul(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin, size_t row_end);
bool matmul_packed(const WeightView& w, const QuantizedActs& x, float* y, size_t ldy, size_t row_begin,
                   size_t row_end);                             // avx512_vnni/packed_vnni.cpp
bool matmul_swiglu_packed(const WeightView& gate, const WeightView& up, const QuantizedActs& x, float* h, float* up_out,
                          size_t ldh, size_t row_begin, size_t row_end);  // avx512_vnni/packed_vnni.cpp
ActsTiles packed_tiles_form(const WeightView& w, size_t n_tok);  // avx512_vnni/packed_vnni.cpp
void make_acts_tiles(ActsTiles f, const float* x, size_t n_tok, size_t n_cols, size_t t0, size_t t1,
                     uint16_t* out);  // avx512_vnni/packed_vnni.cpp
void k8_scores(const int8_t* q, const uint16_t* dq, const int8_t* k, const uint16_t* dk, size_t head_dim,
               size_t n, float scale, float* scores);
// avx512_vnni/attn_amx.cpp: prompt attention on the AMX tiles (attn.h "_tiles"); run only where
// amx_prefill() holds. k8_scores_amx gives k8_scores_heads' bits and returns false where it does not
// run (no AMX-INT8; head_dim not a multiple of 64, or above 256).
bool k8_scores_amx(const int8_t* q, const uint16_t* dq, size_t n_rows, const int8_t* k, const uint16_t* dk,
                   size_t head_dim, size_t n, float scale, float* scores, size_t ld);
void f16_scores_amx(const float* q, size_t n_rows, const uint16_t* k, size_t head_dim, size_t n, float scale,
                    float* scores, size_t ld);  // head_dim a multiple of 32
void f16_accum_v_amx(const float* p, size_t ldp, size_t n_rows, const uint16_t* v, size_t head_dim, size_t n,
                     float* out);  // head_dim a multiple of 16
// avx512_vnni/attn_vnni.cpp: softmax_partial of rows [0, rows) of x, ld apart, four side by side
// (the same bits).
void softmax_partial_rows(float* x, size_t ld, size_t rows, size_t n, float* m, float* l);
// attn_block_tiles' fp16-V blocks (false: a shape it does not take, packed V included).
bool attn_block_amx(const AttnBlock& b, size_t n_rows, size_t n, float scale, float* scores, size_t ld, float* m,
                    float* l, float* out);
// avx512_vnni/activation_vnni.cpp
void quantize_acts(const float* x, size_t n_tok, size_t n_cols, int8_t* q, float* d, int32_t* s, int32_t* s4);
void silu_mul(float* gate, const float* up, size_t n);
void rmsnorm(const float* x, const float* w, size_t n, float eps, float* out);
}

// "Q4_K (id 12)" for messages; ids unknown to the table are spelled by number.
inline std::string dtype_label(DType t) {
  const uint32_t id = static_cast<uint32_t>(t);
  const DTypeInfo* info = dtype_info(id);
  return std::string(info ? info->name : "unknown type") + " (id " + std::to_string(id) + ")";
}

[[noreturn]] inline void throw_unsupported(const char* where, DType t) {
  throw std::invalid_argument(std::string(where) + ": unsupported type " + dtype_label(t));
}

// Geometry of a type that weights may use; throws for any other id.
inline const DTypeInfo& weight_dtype(const char* where, DType t) {
  const DTypeInfo* info = dtype_info(static_cast<uint32_t>(t));
  if (info == nullptr || !info->weights_supported) throw_unsupported(where, t);
  return *info;
}

// The 16 values an IQ4_NL / IQ4_XS code stands for (FORMATS.md §2.9), before the block's scale.
// Not `inline`: a const namespace-scope array has internal linkage, so an ISA file never shares
// (and never provides) one program-wide copy (isa_weak_symbols_check.sh).
constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

// IQ4_XS sub-block b's scale (0..7) in units of d: the 6-bit ls minus 32, in [-32, 31].
inline int iq4_xs_scale(const uint8_t* block, int b) {
  const int lo = (block[4 + b / 2] >> (4 * (b % 2))) & 0xF;
  const int hi = (block[2 + b / 4] >> (2 * (b % 4))) & 3;  // scales_h (u16, little-endian): bits 2b, 2b+1
  return (lo | (hi << 4)) - 32;
}

inline uint16_t load_u16(const uint8_t* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline float load_f16(const uint8_t* p) { return fp16_to_f32(load_u16(p)); }
inline void store_u16(uint8_t* p, uint16_t v) { std::memcpy(p, &v, 2); }
inline void store_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Scale k (0..15) of a Q3_K super-block from its 12 scale bytes s: 4 low bits (s[k] or s[k − 8] >> 4)
// and 2 high bits from s[8 + k % 4], minus 32 (FORMATS.md §2).
inline int q3_k_scale(const uint8_t* s, int k) {
  const int low4 = k < 8 ? (s[k] & 0xF) : (s[k - 8] >> 4);
  const int high2 = (s[8 + (k % 4)] >> (2 * (k / 4))) & 3;
  return (low4 | (high2 << 4)) - 32;
}

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block, FORMATS.md §2.7.1.
inline void k4_scale_min(const uint8_t* s, int j, int& sc, int& m) {
  if (j < 4) {
    sc = s[j] & 0x3F;
    m = s[j + 4] & 0x3F;
  } else {
    sc = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
    m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

}  // namespace alap::kernels
