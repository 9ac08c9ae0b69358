// Device side of the weight products and the embedding lookup: per weight type, unpacking of one
// 32-element block of a GGUF row into 32 small integers w (int8 lanes of 8 words) with a scale a and
// an offset b per 16-element half, so that W[e] = a[e/16]·w[e] + b[e/16] (FORMATS.md §2; IQ4_NL and
// IQ4_XS through their code table, §2.9: w the table's int8 value, b = 0), the
// decode kernel's pieces (32 or 64 values of a row: load, then decode), and the layout of the
// quantised activations. Not the kernels (matmul.hip) and not the CPU twin
// (kernels/cpu/scalar/dequant_scalar.cpp, which this follows line by line).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/gpu/gpu_port.h"

namespace alap::gpu {

// ggml type ids (kernels/include/alap/kernels/dtype.h); kernels never include the CPU library.
enum : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kIQ4_NL = 20, kIQ4_XS = 23, kBF16 = 30,
};

// Geometry of a weight type: elements and bytes per block (0 for unsupported ids).
struct wtype_geom {
  int block_elems;
  int block_bytes;
};
__host__ __device__ constexpr wtype_geom wtype_geometry(uint32_t t) {
  switch (t) {
    case kF32: return {1, 4};
    case kF16: return {1, 2};
    case kBF16: return {1, 2};
    case kQ4_0: return {32, 18};
    case kQ4_1: return {32, 20};
    case kQ5_0: return {32, 22};
    case kQ5_1: return {32, 24};
    case kQ8_0: return {32, 34};
    case kQ2_K: return {256, 84};
    case kQ3_K: return {256, 110};
    case kQ4_K: return {256, 144};
    case kQ5_K: return {256, 176};
    case kQ6_K: return {256, 210};
    case kIQ4_NL: return {32, 18};
    case kIQ4_XS: return {256, 136};
    default: return {0, 0};
  }
}

// Calls f(std::integral_constant<uint32_t, T>{}) for the weight type id `dtype`, one of the 15
// of wtype_geometry, so that a launcher names its kernel template once; false for any other id.
template <class F>
bool with_wtype(uint32_t dtype, F&& f) {
  switch (dtype) {
    case kF32: f(std::integral_constant<uint32_t, kF32>{}); return true;
    case kF16: f(std::integral_constant<uint32_t, kF16>{}); return true;
    case kBF16: f(std::integral_constant<uint32_t, kBF16>{}); return true;
    case kQ4_0: f(std::integral_constant<uint32_t, kQ4_0>{}); return true;
    case kQ4_1: f(std::integral_constant<uint32_t, kQ4_1>{}); return true;
    case kQ5_0: f(std::integral_constant<uint32_t, kQ5_0>{}); return true;
    case kQ5_1: f(std::integral_constant<uint32_t, kQ5_1>{}); return true;
    case kQ8_0: f(std::integral_constant<uint32_t, kQ8_0>{}); return true;
    case kQ2_K: f(std::integral_constant<uint32_t, kQ2_K>{}); return true;
    case kQ3_K: f(std::integral_constant<uint32_t, kQ3_K>{}); return true;
    case kQ4_K: f(std::integral_constant<uint32_t, kQ4_K>{}); return true;
    case kQ5_K: f(std::integral_constant<uint32_t, kQ5_K>{}); return true;
    case kQ6_K: f(std::integral_constant<uint32_t, kQ6_K>{}); return true;
    case kIQ4_NL: f(std::integral_constant<uint32_t, kIQ4_NL>{}); return true;
    case kIQ4_XS: f(std::integral_constant<uint32_t, kIQ4_XS>{}); return true;
    default: return false;
  }
}

// Quantised activations (gpu_quantize_act_q8), for n_tokens rows of n_cols (a multiple of 32):
//   q   [n_tokens][n_cols] int8              x ≈ d·q, q = rint(x / d) clamped to ±127
//   d   [n_tokens][n_cols/32] fp32           max|x|/127 of each 32-block (the CPU's rule)
//   s16 [n_tokens][n_cols/16] int32          Σ q of each 16-block (the offset terms)
// q first (16-byte aligned), then d at a 16-byte boundary, then s16.
struct act_q8_view {
  const int8_t* q;
  const float* d;
  const int32_t* s16;
};
__host__ __device__ inline size_t act_q8_q_bytes(int n_tokens, int n_cols) {
  return (size_t(n_tokens) * n_cols + 15) / 16 * 16;
}
__host__ __device__ inline size_t act_q8_d_bytes(int n_tokens, int n_cols) {
  return (size_t(n_tokens) * (n_cols / 32) * 4 + 15) / 16 * 16;
}
__host__ __device__ inline act_q8_view act_q8_layout(const void* base, int n_tokens, int n_cols) {
  const auto* p = static_cast<const uint8_t*>(base);
  const size_t qb = act_q8_q_bytes(n_tokens, n_cols);
  return {reinterpret_cast<const int8_t*>(p), reinterpret_cast<const float*>(p + qb),
          reinterpret_cast<const int32_t*>(p + qb + act_q8_d_bytes(n_tokens, n_cols))};
}

#if defined(ALAP_GPU_DEVICE_COMPILE)

// The activation quantiser (gpu_quantize_act_q8; the CPU's quantize_activations byte for byte) for
// one 32-block held N values to a lane: the aligned group of 32/N lanes holds the block, lane j of
// the group its elements N·j .. N·j+N-1, and i (a multiple of N) is that first element's index in
// view's [n_tokens·n_cols] values. d = max|v|/127, q = rint(v·(1/d)) clamped to ±127, s16 = Σq of
// each 16-half. Every lane of the warp calls it (shuffles), valid or not; only valid lanes write.
template <int N>
__device__ __forceinline__ void quantize_act_block(const float (&v)[N], bool valid, const act_q8_view& view,
                                                   long long i) {
  static_assert(N == 1 || N == 2 || N == 4);
  constexpr int kLanes = 32 / N;  // lanes per 32-block
  float amax = 0.0f;
#pragma unroll
  for (int k = 0; k < N; ++k) amax = fmaxf(amax, fabsf(v[k]));
#pragma unroll
  for (int off = kLanes / 2; off > 0; off >>= 1) amax = fmaxf(amax, alap_shfl_xor(amax, off, 32));
  const float d = amax / 127.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int q[N], s = 0;
#pragma unroll
  for (int k = 0; k < N; ++k) {
    q[k] = max(-127, min(127, static_cast<int>(rintf(v[k] * id))));
    s += q[k];
  }
#pragma unroll
  for (int off = kLanes / 4; off > 0; off >>= 1) s += alap_shfl_xor(s, off, 32);  // lanes of a 16-block
  if (!valid) return;
  int8_t* dst = const_cast<int8_t*>(view.q) + i;
  if constexpr (N == 1) {
    *dst = static_cast<int8_t>(q[0]);
  } else if constexpr (N == 2) {
    *reinterpret_cast<uint16_t*>(dst) = static_cast<uint16_t>((q[0] & 0xff) | ((q[1] & 0xff) << 8));
  } else {
    *reinterpret_cast<uint32_t*>(dst) = static_cast<uint32_t>((q[0] & 0xff) | ((q[1] & 0xff) << 8) |
                                                              ((q[2] & 0xff) << 16) | ((q[3] & 0xff) << 24));
  }
  if (i % 32 == 0) const_cast<float*>(view.d)[i / 32] = d;
  if (i % 16 == 0) const_cast<int32_t*>(view.s16)[i / 16] = s;
}

// One 32-element block, unpacked: byte i of w[k] is element 4k + i (unsigned values 0..63, or
// int8 for Q8_0, IQ4_NL and IQ4_XS), W[e] = a[e/16]·w[e] + b[e/16].
struct wblock {
  int w[8];
  float a0, a1, b0, b1;
};

// Loads from a byte pointer with the alignment the block layout guarantees (2 or 4 bytes).
__device__ __forceinline__ uint32_t ld_u16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }
__device__ __forceinline__ uint32_t ld_u32_a2(const uint8_t* p) { return ld_u16(p) | (ld_u16(p + 2) << 16); }
__device__ __forceinline__ uint32_t ld_u32_a4(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
__device__ __forceinline__ float ld_half(const uint8_t* p) { return alap_half_to_float(static_cast<uint16_t>(ld_u16(p))); }

// The IQ4 code table (FORMATS.md §2.9) as int8 lanes: code e is byte e%4 of word e/4. As
// immediates the compiler keeps it in 4 registers for alap_lut16_nibbles / _bytes (gpu_port.h).
__device__ __forceinline__ void iq4_table(uint32_t (&t)[4]) {
  t[0] = 0xBFAD9881u;  // -127, -104, -83, -65
  t[1] = 0xF6EADDCFu;  // -49, -35, -22, -10
  t[2] = 0x26190D01u;  // 1, 13, 25, 38
  t[3] = 0x71594535u;  // 53, 69, 89, 113
}
// The values of the 8 codes of qs word v (bytes 4i..4i+3 of a 16-byte run: low nibbles elements
// 4i.., high nibbles 16 + 4i..) in byte order: lo = elements 4i..4i+3, hi = 16 + 4i..16 + 4i + 3.
// Byte-selector permutes (HIP) give that order directly; the nibble lookup gives nibble order (lo0,
// hi0, lo1, hi1 | lo2, hi2, lo3, hi3) and two permutes sort it.
__device__ __forceinline__ void iq4_unpack_word(uint32_t v, int& lo, int& hi) {
  uint32_t t[4], n0, n1;
  iq4_table(t);
#if defined(ALAP_GPU_BYTE_SEL_PERM)
  alap_lut16_bytes(v, t, n0, n1);
  lo = static_cast<int>(n0);
  hi = static_cast<int>(n1);
#else
  alap_lut16_nibbles(v, t, n0, n1);
  lo = static_cast<int>(alap_byte_perm(n0, n1, 0x6420u));
  hi = static_cast<int>(alap_byte_perm(n0, n1, 0x7531u));
#endif
}
// IQ4_XS: the scale of sub-block j, d·(ls − 32) (FORMATS.md §2.9); w0 = d | scales_h << 16, w1 =
// scales_l[0..3] (the super-block's first 8 bytes): ls's low 4 bits are nibble j of w1.
__device__ __forceinline__ float iq4xs_scale(uint32_t w0, uint32_t w1, int j) {
  const uint32_t ls = ((w1 >> (4 * j)) & 0xFu) | (((w0 >> (16 + 2 * j)) & 3u) << 4);
  return alap_half_to_float(static_cast<uint16_t>(w0 & 0xFFFFu)) * static_cast<float>(static_cast<int>(ls) - 32);
}

// Bits 4k..4k+3 of `bits` moved to bit `to` of the 4 bytes of a word.
__device__ __forceinline__ int spread4(uint32_t bits, int to) {
  return static_cast<int>((((bits & 0xFu) * 0x00204081u) & 0x01010101u) << to);  // bit i to bit 8i
}

// Unpacks 32-block `blk` (elements 32·blk ..) of the row starting at `row`: a row of a 16-byte
// aligned tensor, or a copy of whole blocks at a 16-byte aligned address. Q4_K/Q5_K load 16 bytes
// at a time (their blocks are multiples of 16 bytes), Q2_K/Q4_1/Q5_1/IQ4_XS 4 bytes, the others 2.
template <uint32_t T>
__device__ __forceinline__ void unpack_block(const uint8_t* row, int blk, wblock& o) {
  if constexpr (T == kQ4_0 || T == kQ4_1) {
    const uint8_t* p = row + size_t(blk) * (T == kQ4_0 ? 18 : 20);
    const float d = ld_half(p);
    const uint8_t* qs = p + (T == kQ4_0 ? 2 : 4);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t v = T == kQ4_0 ? ld_u32_a2(qs + 4 * k) : ld_u32_a4(qs + 4 * k);
      o.w[k] = static_cast<int>(v & 0x0F0F0F0Fu);
      o.w[k + 4] = static_cast<int>((v >> 4) & 0x0F0F0F0Fu);
    }
    o.a0 = o.a1 = d;
    o.b0 = o.b1 = T == kQ4_0 ? -8.0f * d : ld_half(p + 2);
  } else if constexpr (T == kQ5_0 || T == kQ5_1) {
    const uint8_t* p = row + size_t(blk) * (T == kQ5_0 ? 22 : 24);
    const float d = ld_half(p);
    const uint32_t qh = T == kQ5_0 ? ld_u32_a2(p + 2) : ld_u32_a4(p + 4);
    const uint8_t* qs = p + (T == kQ5_0 ? 6 : 8);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t v = T == kQ5_0 ? ld_u32_a2(qs + 4 * k) : ld_u32_a4(qs + 4 * k);
      o.w[k] = static_cast<int>(v & 0x0F0F0F0Fu) | spread4(qh >> (4 * k), 4);
      o.w[k + 4] = static_cast<int>((v >> 4) & 0x0F0F0F0Fu) | spread4(qh >> (16 + 4 * k), 4);
    }
    o.a0 = o.a1 = d;
    o.b0 = o.b1 = T == kQ5_0 ? -16.0f * d : ld_half(p + 2);
  } else if constexpr (T == kIQ4_NL || T == kIQ4_XS) {
    // IQ4_NL: Q4_0's bytes, scale d; IQ4_XS: 16 bytes of qs at 8 + 16j of a 136-byte (8-byte
    // aligned) super-block, scale d·(ls_j − 32). Codes to int8 values by the table, no offset.
    const uint8_t* p = T == kIQ4_NL ? row + size_t(blk) * 18 : row + size_t(blk / 8) * 136;
    const int j = blk % 8;
    const uint8_t* qs = T == kIQ4_NL ? p + 2 : p + 8 + 16 * j;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const uint32_t v = T == kIQ4_NL ? ld_u32_a2(qs + 4 * k) : ld_u32_a4(qs + 4 * k);
      iq4_unpack_word(v, o.w[k], o.w[k + 4]);
    }
    if constexpr (T == kIQ4_NL) {
      o.a0 = o.a1 = ld_half(p);
    } else {
      o.a0 = o.a1 = iq4xs_scale(ld_u32_a4(p), ld_u32_a4(p + 4), j);
    }
    o.b0 = o.b1 = 0.0f;
  } else if constexpr (T == kQ8_0) {
    const uint8_t* p = row + size_t(blk) * 34;
#pragma unroll
    for (int k = 0; k < 8; ++k) o.w[k] = static_cast<int>(ld_u32_a2(p + 2 + 4 * k));
    o.a0 = o.a1 = ld_half(p);
    o.b0 = o.b1 = 0.0f;
  } else if constexpr (T == kQ2_K) {
    const uint8_t* p = row + size_t(blk / 8) * 84;
    const int j = blk % 8, h = j / 4, g = j % 4;
    const uint8_t* qs = p + 16 + 32 * h;
#pragma unroll
    for (int k = 0; k < 8; ++k) o.w[k] = static_cast<int>((ld_u32_a4(qs + 4 * k) >> (2 * g)) & 0x03030303u);
    const float d = ld_half(p + 80), dmin = ld_half(p + 82);
    const uint32_t sc = ld_u16(p + 2 * j);  // scales of the two 16-halves
    o.a0 = d * static_cast<float>(sc & 0xF);
    o.b0 = -dmin * static_cast<float>((sc >> 4) & 0xF);
    o.a1 = d * static_cast<float>((sc >> 8) & 0xF);
    o.b1 = -dmin * static_cast<float>((sc >> 12) & 0xF);
  } else if constexpr (T == kQ3_K) {
    const uint8_t* p = row + size_t(blk / 8) * 110;
    const int j = blk % 8, h = j / 4, g = j % 4;
    const uint8_t* qs = p + 32 + 32 * h;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const uint32_t q2 = (ld_u32_a2(qs + 4 * k) >> (2 * g)) & 0x03030303u;
      const uint32_t hb = (ld_u32_a2(p + 4 * k) >> (4 * h + g)) & 0x01010101u;
      o.w[k] = static_cast<int>(q2 | (hb << 2));  // q + 4 in 0..7
    }
    const uint8_t* s = p + 96;
    const float d = ld_half(p + 108);
    float a[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int k = 2 * j + i;
      const int low4 = k < 8 ? (s[k] & 0xF) : (s[k - 8] >> 4);
      const int high2 = (s[8 + (k % 4)] >> (2 * (k / 4))) & 3;
      a[i] = d * static_cast<float>((low4 | (high2 << 4)) - 32);
    }
    o.a0 = a[0];
    o.a1 = a[1];
    o.b0 = -4.0f * a[0];
    o.b1 = -4.0f * a[1];
  } else if constexpr (T == kQ4_K || T == kQ5_K) {
    const uint8_t* p = row + size_t(blk / 8) * (T == kQ4_K ? 144 : 176);
    const int j = blk % 8;
    // 16-byte loads: blocks of 144/176 bytes keep the 16-byte alignment of the row.
    const int4* qs = reinterpret_cast<const int4*>(p + (T == kQ4_K ? 16 : 48) + 32 * (j / 2));
    const int shift = 4 * (j % 2);
    const int4 q0 = qs[0], q1 = qs[1];
    const uint32_t qw[8] = {uint32_t(q0.x), uint32_t(q0.y), uint32_t(q0.z), uint32_t(q0.w),
                            uint32_t(q1.x), uint32_t(q1.y), uint32_t(q1.z), uint32_t(q1.w)};
    uint32_t hw[8] = {};
    if constexpr (T == kQ5_K) {
      const int4 h0 = reinterpret_cast<const int4*>(p + 16)[0], h1 = reinterpret_cast<const int4*>(p + 16)[1];
      const uint32_t t[8] = {uint32_t(h0.x), uint32_t(h0.y), uint32_t(h0.z), uint32_t(h0.w),
                             uint32_t(h1.x), uint32_t(h1.y), uint32_t(h1.z), uint32_t(h1.w)};
#pragma unroll
      for (int k = 0; k < 8; ++k) hw[k] = ((t[k] >> j) & 0x01010101u) << 4;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k) o.w[k] = static_cast<int>(((qw[k] >> shift) & 0x0F0F0F0Fu) | hw[k]);
    // d, dmin and the 12 scale bytes are the block's first 16 bytes: one load; the FORMATS.md §2.7.1 rule on words.
    const int4 head = *reinterpret_cast<const int4*>(p);
    const int sh = 8 * (j % 4);
    const uint32_t s0 = uint32_t(head.y) >> sh, s4 = uint32_t(head.z) >> sh, s8 = uint32_t(head.w) >> sh;
    const uint32_t sc = j < 4 ? (s0 & 0x3F) : ((s8 & 0xF) | (((s0 >> 6) & 3) << 4));
    const uint32_t m = j < 4 ? (s4 & 0x3F) : (((s8 >> 4) & 0xF) | (((s4 >> 6) & 3) << 4));
    o.a0 = o.a1 = alap_half_to_float(static_cast<uint16_t>(uint32_t(head.x) & 0xFFFFu)) * static_cast<float>(sc);
    o.b0 = o.b1 = -alap_half_to_float(static_cast<uint16_t>(uint32_t(head.x) >> 16)) * static_cast<float>(m);
  } else if constexpr (T == kQ6_K) {
    const uint8_t* p = row + size_t(blk / 8) * 210;
    const int j = blk % 8, h = j / 4, g = j % 4;
    const uint8_t* ql = p + 64 * h + 32 * (g % 2);
    const uint8_t* qh = p + 128 + 32 * h;
    const int lo_shift = g < 2 ? 0 : 4;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      const uint32_t lo = (ld_u32_a2(ql + 4 * k) >> lo_shift) & 0x0F0F0F0Fu;
      const uint32_t hi = (ld_u32_a2(qh + 4 * k) >> (2 * g)) & 0x03030303u;
      o.w[k] = static_cast<int>(lo | (hi << 4));  // q + 32 in 0..63
    }
    const float d = ld_half(p + 208);
    const uint32_t sc = ld_u16(p + 192 + 2 * j);
    o.a0 = d * static_cast<float>(static_cast<int8_t>(sc & 0xFF));
    o.a1 = d * static_cast<float>(static_cast<int8_t>(sc >> 8));
    o.b0 = -32.0f * o.a0;
    o.b1 = -32.0f * o.a1;
  }
}

// ---- Prefill on the int8 matrix units (matmul.hip's matmul_q8_mma_kernel) ----------------------
// A 32-block as that kernel takes it, one fp32 step a block instead of one a 16-half:
//   - offset types (Q4_0 −8, Q5_0 −16, Q3_K −4, Q6_K −32, whose b is −offset·a): w − offset as
//     int8 (|w − o| ≤ 32), so the dot carries the offset and b drops out;
//   - a and b per 32-block (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, IQ4_NL, IQ4_XS): W = a·w + b,
//     a = `a`, b = `b0` (0 without a min); the kernel sums both halves in one m16n8k32 (IQ4: the
//     table's int8 values, |I| ≤ 32·127·127 < 2^22);
//   - Q6_K, Q3_K: int8 scales per 16-half (sc0, sc1) and the super-block's d in `a`: the kernel
//     weights the two halves' dots by sc in int32, then one conversion and d;
//   - Q2_K: w·sc per half (≤ 3·15 = 45: the word times sc, no carries), d in `a`, the mins per
//     half in b0, b1 (−dmin·m): one m16n8k32 for the scaled part, two fp32 terms for the mins.
template <uint32_t T>
__host__ __device__ constexpr int mma_offset_of() {
  return T == kQ4_0 ? 8 : T == kQ5_0 ? 16 : T == kQ3_K ? 4 : T == kQ6_K ? 32 : 0;
}
template <uint32_t T>
__host__ __device__ constexpr bool mma_has_min() {
  return T == kQ4_1 || T == kQ5_1 || T == kQ4_K || T == kQ5_K || T == kQ2_K;
}
template <uint32_t T>
__host__ __device__ constexpr bool mma_half_scales() {  // two m16n8k16 a 32-block, weighted by int8 scales
  return T == kQ6_K || T == kQ3_K;
}

struct mblock {
  int w[8];
  float a, b0, b1;
  int sc0, sc1;
};

template <uint32_t T>
__device__ __forceinline__ void unpack_block_mma(const uint8_t* row, int blk, mblock& o) {
  wblock u;
  unpack_block<T>(row, blk, u);
  constexpr uint32_t off = static_cast<uint32_t>(mma_offset_of<T>());
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    // Byte-wise w − off with no borrow between bytes: (128 + w − off) ^ 128 is w − off as int8.
    o.w[k] = off == 0 ? u.w[k] : static_cast<int>(((uint32_t(u.w[k]) | 0x80808080u) - off * 0x01010101u) ^ 0x80808080u);
  }
  o.a = u.a0;
  o.b0 = mma_has_min<T>() ? u.b0 : 0.0f;
  o.b1 = mma_has_min<T>() ? u.b1 : 0.0f;
  o.sc0 = o.sc1 = 0;
  if constexpr (T == kQ6_K) {
    const uint8_t* p = row + size_t(blk / 8) * 210;
    const uint32_t sc = ld_u16(p + 192 + 2 * (blk % 8));
    o.sc0 = static_cast<int8_t>(sc & 0xFF);
    o.sc1 = static_cast<int8_t>(sc >> 8);
    o.a = ld_half(p + 208);
  } else if constexpr (T == kQ3_K) {
    const uint8_t* p = row + size_t(blk / 8) * 110;
    const uint8_t* s = p + 96;
    const int j = blk % 8;
    int sc[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {  // FORMATS.md §2.7.5, as unpack_block
      const int k = 2 * j + i;
      const int low4 = k < 8 ? (s[k] & 0xF) : (s[k - 8] >> 4);
      const int high2 = (s[8 + (k % 4)] >> (2 * (k / 4))) & 3;
      sc[i] = (low4 | (high2 << 4)) - 32;
    }
    o.sc0 = sc[0];
    o.sc1 = sc[1];
    o.a = ld_half(p + 108);
  } else if constexpr (T == kQ2_K) {
    const uint8_t* p = row + size_t(blk / 8) * 84;
    const uint32_t sc = ld_u16(p + 2 * (blk % 8));
#pragma unroll
    for (int k = 0; k < 8; ++k) o.w[k] *= static_cast<int>(k < 4 ? sc & 0xF : (sc >> 8) & 0xF);
    o.a = ld_half(p + 80);
  }
}

// ---- Decode pieces (matvec_xr_kernel) ------------------------------------------------------------
// A piece is NR runs of 16 values of one row (run i at value index A[i], a multiple of 16),
// unpacked into small integers w with a scale a and an offset b per run: Σ over the piece =
// Σ_i xd_i·(a_i·Σ w·q + b_i·Σ q) with the run's activation block scale xd_i and Σq. Piece k of a row:
//   32-block types (NR = 2): the 32-block k; Q4_0/Q5_0/Q8_0/IQ4_NL read their 2-byte aligned blocks
//     as aligned words (window_a2), the others through unpack_block;
//   IQ4_XS (NR = 2): sub-block k%8 of super-block k/8 (values 32k..): its 16 bytes of qs at 8 +
//     16·(k%8) and the super-block's first 8 bytes (d, scales), as 8-byte loads (136-byte
//     super-blocks are 8-byte aligned); IQ4_NL and IQ4_XS are dotted by xr_dot_iq4;
//   Q4_K/Q5_K (NR = 4): sub-blocks 2·pp and 2·pp + 1 of super-block k/4 (pp = k%4): the 32 bytes of
//     qs at 32·pp (low nibbles: runs 0, 1; high nibbles: runs 2, 3), the 16-byte head (d, dmin,
//     scales), Q5_K also the 32 bytes of qh: 16-byte aligned loads;
//   kQ4_K32/kQ5_K32, Q4_K/Q5_K in pieces of 32 values (NR = 2; the decode kernel's choice for
//     long rows): 16 bytes of qs at 16q (q = k%8 of super-block k/8): low nibbles are values
//     16·(q%2).. of sub-block 2·(q/2), high nibbles the same of the next sub-block; Q5_K also the
//     16 bytes of qh at 16·(q%2);
//   Q6_K (NR = 4): half h = (k%4)/2, c = k%2 of super-block k/4: the 32 bytes of ql at 64h + 32c
//     (low nibbles: values 128h + 32c + 0..31, high nibbles the 32 values 64 further) with the 32
//     bytes of qh at 128 + 32h; 210-byte super-blocks are 2-byte aligned: 5 aligned 8-byte loads
//     a region, dotted by xr_dot_q6 (not xr_decode);
//   kQ6_K32, Q6_K in pieces of 32 values (NR = 2; long rows): the 16 bytes of ql at 64h + 32c +
//     16e (h, c, e = bits 2, 1, 0 of k%8; runs: values 128h + 32c + 16e.. and 64 further) with the
//     16 bytes of qh at 128 + 32h + 16e, 3 aligned 8-byte loads each, dotted by xr_dot_q6_32;
//   Q2_K/Q3_K (NR = 4): h = (k%4)/2, e = k%2 of super-block k/4: the 16 bytes of qs at 32h + 16e,
//     whose 2-bit fields g = 0..3 are the runs at values 128h + 32g + 16e; Q2_K (4-byte aligned
//     super-blocks of 84 bytes): 4 words of qs, the 2 words of scale bytes 8h.. and the d/dmin
//     word, dotted by xr_dot_q2; Q3_K (110 bytes, 2-byte aligned): the 16 bytes of hmask at 16e
//     and of qs as 3 aligned 8-byte loads each (as Q6_K), the 12 scale bytes and d as 4 words,
//     dotted by xr_dot_q3.
// Consecutive pieces of a row are consecutive bytes of its quants, so a warp reads whole lines.
constexpr uint32_t kQ4_K32 = 0x100u | kQ4_K;  // a piece kind, not a ggml type id
constexpr uint32_t kQ5_K32 = 0x100u | kQ5_K;  // likewise
constexpr uint32_t kQ6_K32 = 0x100u | kQ6_K;

template <uint32_t T>
__host__ __device__ constexpr int xr_runs_of() {
  return T == kQ4_K || T == kQ5_K || T == kQ6_K || T == kQ2_K || T == kQ3_K ? 4 : 2;
}
// The offset o of a type whose dot chains start at −o·Σq (weights w − o with unsigned w).
template <uint32_t T>
__host__ __device__ constexpr int xr_offset_of() {
  return T == kQ3_K ? 4 : 32;
}

template <int NR>
struct xr_piece {
  int w[4 * NR];
  float a[NR], b[NR];
};

template <uint32_t T>
__device__ __forceinline__ void xr_runs(int k, int (&A)[xr_runs_of<T>()]) {
  if constexpr (T == kQ4_K || T == kQ5_K) {
    const int a = 256 * (k >> 2) + 64 * (k & 3);
    A[0] = a, A[1] = a + 16, A[2] = a + 32, A[3] = a + 48;
  } else if constexpr (T == kQ4_K32 || T == kQ5_K32) {
    const int q = k & 7;
    A[0] = 256 * (k >> 3) + 64 * (q >> 1) + 16 * (q & 1);
    A[1] = A[0] + 32;
  } else if constexpr (T == kQ6_K) {
    const int a = 256 * (k >> 2) + 128 * ((k >> 1) & 1) + 32 * (k & 1);
    A[0] = a, A[1] = a + 16, A[2] = a + 64, A[3] = a + 80;
  } else if constexpr (T == kQ6_K32) {
    A[0] = 256 * (k >> 3) + 128 * ((k >> 2) & 1) + 32 * ((k >> 1) & 1) + 16 * (k & 1);
    A[1] = A[0] + 64;
  } else if constexpr (T == kQ2_K || T == kQ3_K) {
    const int a = 256 * (k >> 2) + 128 * ((k >> 1) & 1) + 16 * (k & 1);
    A[0] = a, A[1] = a + 32, A[2] = a + 64, A[3] = a + 96;
  } else {
    A[0] = 32 * k, A[1] = 32 * k + 16;
  }
}

// Word a (q = 0) or b (q = 1) of a window held in registers. On HIP as arithmetic on the two
// values: written as `q ? b : a` over neighbouring words of one array, AMD's compiler made it a
// load at a run-time index and kept the whole window in scratch memory (gfx1030 assembly: the
// Q3_K and Q6_K decode kernels used 160-416 bytes of scratch a thread).
__device__ __forceinline__ uint32_t pick_word(uint32_t a, uint32_t b, uint32_t q) {
#if defined(ALAP_GPU_BACKEND_HIP)
  return a ^ ((a ^ b) & (0u - q));
#else
  return q ? b : a;
#endif
}

// Bits sh..sh+31 of hi:lo (sh in 0..32).
__device__ __forceinline__ uint32_t funnel_r(uint32_t lo, uint32_t hi, uint32_t sh) {
#if defined(ALAP_GPU_BACKEND_CUDA)
  return __funnelshift_rc(lo, hi, sh);
#else
  return static_cast<uint32_t>(((static_cast<uint64_t>(hi) << 32) | lo) >> sh);
#endif
}

// The bytes from a 2-byte aligned p on, as NW aligned words from p rounded down to 4 (returns sh
// = 16 when that is 2 bytes before p, else 0); the last word is read as 2 bytes when p is 4-byte
// aligned (its other 2 bytes may lie past the tensor).
template <int NW>
__device__ __forceinline__ uint32_t window_a2(const uint8_t* p, uint32_t (&w)[NW]) {
  // The aligned base is built from p itself (not from the integer address), so that the compiler
  // keeps p's address space: global loads (LDG), not generic ones.
  const uint32_t lo2 = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p)) & 2u;
  const uint32_t* base = reinterpret_cast<const uint32_t*>(p - lo2);
  const uint32_t sh = lo2 * 8;
#pragma unroll
  for (int i = 0; i < NW - 1; ++i) w[i] = base[i];
  w[NW - 1] = sh != 0 ? base[NW - 1] : uint32_t(*reinterpret_cast<const uint16_t*>(base + NW - 1));
  return sh;
}
// The 4 bytes at byte OFF (even) from p, whose window is w.
template <int OFF, int NW>
__device__ __forceinline__ uint32_t window_word(const uint32_t (&w)[NW], uint32_t sh) {
  constexpr int i = OFF / 4, j = i + 1 < NW ? i + 1 : NW - 1;
  return OFF % 4 == 0 ? funnel_r(w[i], w[j], sh) : funnel_r(w[i], w[j], sh + 16);
}

// Q4_K/Q5_K scale (sc) and min (m) bytes of sub-blocks 2·pp and 2·pp + 1 (FORMATS.md §2.7.1), in the
// low two bytes of each result; head = the super-block's first 16 bytes.
__device__ __forceinline__ void k4_scale_pair(const int4& head, int pp, uint32_t& sc, uint32_t& m) {
  const uint32_t sh = 16 * (pp & 1);
  const uint32_t w0 = uint32_t(head.y) >> sh, w4 = uint32_t(head.z) >> sh, w8 = uint32_t(head.w) >> sh;
  if (pp < 2) {
    sc = w0 & 0x3F3Fu;
    m = w4 & 0x3F3Fu;
  } else {
    sc = (w8 & 0x0F0Fu) | ((w0 >> 2) & 0x3030u);
    m = ((w8 >> 4) & 0x0F0Fu) | ((w4 >> 2) & 0x3030u);
  }
}

// Piece k of a row in two steps: xr_load reads its bytes into registers (struct xr_raw; the
// decode kernel holds R rows of these in flight), xr_decode unpacks them into an xr_piece.
template <uint32_t T>
struct xr_raw {  // types read by unpack_block: the unpacked block
  wblock u;
};
template <>
struct xr_raw<kQ4_K> {
  int4 head, q0, q1;
};
template <>
struct xr_raw<kQ4_K32> {
  int4 head, qs;
};
template <>
struct xr_raw<kQ5_K32> {
  int4 head, qs, qh;
};
template <>
struct xr_raw<kQ5_K> {
  int4 head, q0, q1, h0, h1;
};
template <>
struct xr_raw<kQ6_K> {  // read by xr_dot_q6, not xr_decode
  uint32_t lw[10], hw[10], s01, s45, d, sh, q;
};
template <>
struct xr_raw<kQ6_K32> {  // likewise
  uint32_t lw[6], hw[6], sc0, sc1, d, sh, q;
};
template <>
struct xr_raw<kQ2_K> {  // read by xr_dot_q2
  uint32_t q[4], s0, s1, dm;
};
template <>
struct xr_raw<kQ3_K> {  // read by xr_dot_q3
  uint32_t hw[6], lw[6], s[4], sh, q;
};
template <>
struct xr_raw<kIQ4_XS> {  // read by xr_dot_iq4
  uint2 head, q0, q1;
};
template <uint32_t T>
struct xr_raw_words {
  static constexpr int bb = T == kQ4_0 || T == kIQ4_NL ? 18 : (T == kQ5_0 ? 22 : 34), nw = (bb + 5) / 4;
  uint32_t w[nw];
  uint32_t sh;
};
template <>
struct xr_raw<kQ4_0> : xr_raw_words<kQ4_0> {};
template <>
struct xr_raw<kQ5_0> : xr_raw_words<kQ5_0> {};
template <>
struct xr_raw<kQ8_0> : xr_raw_words<kQ8_0> {};
template <>
struct xr_raw<kIQ4_NL> : xr_raw_words<kIQ4_NL> {};  // read by xr_dot_iq4

// N aligned 8-byte words from each of two regions of a row with the same (even) alignment mod 8,
// from the 8-byte boundary at or below each: words of `lo` into o.lw, of `hi` into o.hw; o.sh and
// o.q say where lo's first byte sits in them (inside the super-block, whose start is 8-byte
// aligned at the tensor's start).
template <int N, class R>
__device__ __forceinline__ void ld_word_pairs(const uint8_t* lo, const uint8_t* hi, R& o) {
  const uint32_t a = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(lo)) & 6u;
  const uint2* bl = reinterpret_cast<const uint2*>(lo - a);
  const uint2* bh = reinterpret_cast<const uint2*>(hi - a);
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const uint2 x = bl[i], y = bh[i];
    o.lw[2 * i] = x.x, o.lw[2 * i + 1] = x.y, o.hw[2 * i] = y.x, o.hw[2 * i + 1] = y.y;
  }
  o.sh = (a & 2u) * 8;
  o.q = a >> 2;
}

// Reads piece k of the row starting at `row` (16-byte aligned for Q4_K/Q5_K).
template <uint32_t T>
__device__ __forceinline__ void xr_load(const uint8_t* row, int k, xr_raw<T>& o) {
  if constexpr (T == kQ4_K || T == kQ5_K) {
    const uint8_t* p = row + size_t(k >> 2) * (T == kQ4_K ? 144 : 176);
    o.head = *reinterpret_cast<const int4*>(p);
    const int4* qs = reinterpret_cast<const int4*>(p + (T == kQ4_K ? 16 : 48) + 32 * (k & 3));
    o.q0 = qs[0];
    o.q1 = qs[1];
    if constexpr (T == kQ5_K) {
      o.h0 = reinterpret_cast<const int4*>(p + 16)[0];
      o.h1 = reinterpret_cast<const int4*>(p + 16)[1];
    }
  } else if constexpr (T == kQ4_K32) {
    const uint8_t* p = row + size_t(k >> 3) * 144;
    o.head = *reinterpret_cast<const int4*>(p);
    o.qs = *reinterpret_cast<const int4*>(p + 16 + 16 * (k & 7));
  } else if constexpr (T == kQ5_K32) {
    const uint8_t* p = row + size_t(k >> 3) * 176;
    o.head = *reinterpret_cast<const int4*>(p);
    o.qs = *reinterpret_cast<const int4*>(p + 48 + 16 * (k & 7));
    o.qh = *reinterpret_cast<const int4*>(p + 16 + 16 * (k & 1));
  } else if constexpr (T == kQ6_K) {
    const uint8_t* p = row + size_t(k >> 2) * 210;
    const int h = (k >> 1) & 1, c = k & 1;
    // 5 words a region (32 bytes from any even offset): ql at 64h + 32c, qh at 128 + 32h
    ld_word_pairs<5>(p + 64 * h + 32 * c, p + 128 + 32 * h, o);
    o.s01 = ld_u16(p + 192 + 8 * h + 2 * c);
    o.s45 = ld_u16(p + 196 + 8 * h + 2 * c);
    o.d = ld_u16(p + 208);
  } else if constexpr (T == kQ6_K32) {
    const uint8_t* p = row + size_t(k >> 3) * 210;
    const int h = (k >> 2) & 1, c = (k >> 1) & 1, e = k & 1;
    // 16 bytes of ql at 64h + 32c + 16e; qh's at 128 + 32h + 16e, same alignment
    ld_word_pairs<3>(p + 64 * h + 32 * c + 16 * e, p + 128 + 32 * h + 16 * e, o);
    const int si = 8 * h + 2 * c + e;  // scale of values 16·si..
    o.sc0 = p[192 + si];
    o.sc1 = p[196 + si];
    o.d = ld_u16(p + 208);
  } else if constexpr (T == kQ2_K) {
    const uint8_t* p = row + size_t(k >> 2) * 84;  // 4-byte aligned
    const int h = (k >> 1) & 1, e = k & 1;
    const uint32_t* qs = reinterpret_cast<const uint32_t*>(p + 16 + 32 * h + 16 * e);
#pragma unroll
    for (int i = 0; i < 4; ++i) o.q[i] = qs[i];
    const uint32_t* sc = reinterpret_cast<const uint32_t*>(p + 8 * h);
    o.s0 = sc[0];
    o.s1 = sc[1];
    o.dm = *reinterpret_cast<const uint32_t*>(p + 80);
  } else if constexpr (T == kQ3_K) {
    const uint8_t* p = row + size_t(k >> 2) * 110;  // 2-byte aligned
    const int h = (k >> 1) & 1, e = k & 1;
    // hmask (16e), qs (32 + 32h + 16e) and the scales (96) lie at p's alignment mod 8: 3 words
    // of qs and of hmask.
    ld_word_pairs<3>(p + 32 + 32 * h + 16 * e, p + 16 * e, o);
    const uint32_t a = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p)) & 6u;
    // Scales and d (bytes 96..109) as 4 words from the 4-byte boundary at or below 96; when that
    // is 96 itself the last is d alone (2 bytes: the super-block ends at 110).
    const uint32_t* bs = reinterpret_cast<const uint32_t*>(p + 96 - (a & 2u));
    o.s[0] = bs[0], o.s[1] = bs[1], o.s[2] = bs[2];
    if (a & 2u) {
      o.s[3] = bs[3];
    } else {
      o.s[3] = ld_u16(p + 108);
    }
  } else if constexpr (T == kQ4_0 || T == kQ5_0 || T == kQ8_0 || T == kIQ4_NL) {
    o.sh = window_a2<xr_raw<T>::nw>(row + size_t(k) * xr_raw<T>::bb, o.w);
  } else if constexpr (T == kIQ4_XS) {
    const uint8_t* p = row + size_t(k >> 3) * 136;
    o.head = *reinterpret_cast<const uint2*>(p);
    const uint2* qs = reinterpret_cast<const uint2*>(p + 8 + 16 * (k & 7));
    o.q0 = qs[0];
    o.q1 = qs[1];
  } else {
    unpack_block<T>(row, k, o.u);
  }
}

template <uint32_t T>
__device__ __forceinline__ void xr_decode(const xr_raw<T>& r, int k, xr_piece<xr_runs_of<T>()>& o) {
  if constexpr (T == kQ4_K || T == kQ5_K) {
    const int pp = k & 3;
    const uint32_t qw[8] = {uint32_t(r.q0.x), uint32_t(r.q0.y), uint32_t(r.q0.z), uint32_t(r.q0.w),
                            uint32_t(r.q1.x), uint32_t(r.q1.y), uint32_t(r.q1.z), uint32_t(r.q1.w)};
    uint32_t hl[8] = {}, hh[8] = {};
    if constexpr (T == kQ5_K) {
      const uint32_t hw[8] = {uint32_t(r.h0.x), uint32_t(r.h0.y), uint32_t(r.h0.z), uint32_t(r.h0.w),
                              uint32_t(r.h1.x), uint32_t(r.h1.y), uint32_t(r.h1.z), uint32_t(r.h1.w)};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        hl[i] = ((hw[i] >> (2 * pp)) << 4) & 0x10101010u;
        hh[i] = ((hw[i] >> (2 * pp + 1)) << 4) & 0x10101010u;
      }
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      o.w[i] = static_cast<int>((qw[i] & 0x0F0F0F0Fu) | hl[i]);
      o.w[i + 8] = static_cast<int>(((qw[i] >> 4) & 0x0F0F0F0Fu) | hh[i]);
    }
    uint32_t sc, m;
    k4_scale_pair(r.head, pp, sc, m);
    const float d = alap_half_to_float(static_cast<uint16_t>(uint32_t(r.head.x) & 0xFFFFu));
    const float dmin = alap_half_to_float(static_cast<uint16_t>(uint32_t(r.head.x) >> 16));
    o.a[0] = o.a[1] = d * static_cast<float>(sc & 0xFFu);
    o.a[2] = o.a[3] = d * static_cast<float>(sc >> 8);
    o.b[0] = o.b[1] = -dmin * static_cast<float>(m & 0xFFu);
    o.b[2] = o.b[3] = -dmin * static_cast<float>(m >> 8);
  } else if constexpr (T == kQ4_K32 || T == kQ5_K32) {
    const int pp = (k & 7) >> 1;
    const uint32_t qw[4] = {uint32_t(r.qs.x), uint32_t(r.qs.y), uint32_t(r.qs.z), uint32_t(r.qs.w)};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      o.w[i] = static_cast<int>(qw[i] & 0x0F0F0F0Fu);
      o.w[i + 4] = static_cast<int>((qw[i] >> 4) & 0x0F0F0F0Fu);
    }
    if constexpr (T == kQ5_K32) {  // bit 2·pp of qh byte l: the low nibble's fifth bit, 2·pp + 1 the high's
      const uint32_t hw[4] = {uint32_t(r.qh.x), uint32_t(r.qh.y), uint32_t(r.qh.z), uint32_t(r.qh.w)};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const uint32_t hs = hw[i] >> (2 * pp);
        o.w[i] |= static_cast<int>((hs << 4) & 0x10101010u);
        o.w[i + 4] |= static_cast<int>((hs << 3) & 0x10101010u);
      }
    }
    uint32_t sc, m;
    k4_scale_pair(r.head, pp, sc, m);
    const float d = alap_half_to_float(static_cast<uint16_t>(uint32_t(r.head.x) & 0xFFFFu));
    const float dmin = alap_half_to_float(static_cast<uint16_t>(uint32_t(r.head.x) >> 16));
    o.a[0] = d * static_cast<float>(sc & 0xFFu);
    o.a[1] = d * static_cast<float>(sc >> 8);
    o.b[0] = -dmin * static_cast<float>(m & 0xFFu);
    o.b[1] = -dmin * static_cast<float>(m >> 8);
  } else {
    wblock u;
    if constexpr (T == kQ4_0 || T == kQ5_0 || T == kQ8_0) {
      const uint32_t sh = r.sh;
      const float d = alap_half_to_float(static_cast<uint16_t>(window_word<0>(r.w, sh) & 0xFFFFu));
      if constexpr (T == kQ8_0) {
        u.w[0] = static_cast<int>(window_word<2>(r.w, sh));
        u.w[1] = static_cast<int>(window_word<6>(r.w, sh));
        u.w[2] = static_cast<int>(window_word<10>(r.w, sh));
        u.w[3] = static_cast<int>(window_word<14>(r.w, sh));
        u.w[4] = static_cast<int>(window_word<18>(r.w, sh));
        u.w[5] = static_cast<int>(window_word<22>(r.w, sh));
        u.w[6] = static_cast<int>(window_word<26>(r.w, sh));
        u.w[7] = static_cast<int>(window_word<30>(r.w, sh));
        u.a0 = u.a1 = d;
        u.b0 = u.b1 = 0.0f;
      } else {
        constexpr int kQs = T == kQ4_0 ? 2 : 6;
        const uint32_t v[4] = {window_word<kQs>(r.w, sh), window_word<kQs + 4>(r.w, sh),
                               window_word<kQs + 8>(r.w, sh), window_word<kQs + 12>(r.w, sh)};
        const uint32_t qh = T == kQ5_0 ? window_word<2>(r.w, sh) : 0u;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          u.w[i] = static_cast<int>(v[i] & 0x0F0F0F0Fu);
          u.w[i + 4] = static_cast<int>((v[i] >> 4) & 0x0F0F0F0Fu);
          if constexpr (T == kQ5_0) {
            u.w[i] |= spread4(qh >> (4 * i), 4);
            u.w[i + 4] |= spread4(qh >> (16 + 4 * i), 4);
          }
        }
        u.a0 = u.a1 = d;
        u.b0 = u.b1 = (T == kQ4_0 ? -8.0f : -16.0f) * d;
      }
    } else {
      u = r.u;
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) o.w[i] = u.w[i];
    o.a[0] = u.a0, o.a[1] = u.a1, o.b[0] = u.b0, o.b[1] = u.b1;
  }
}

// Σ over one piece: xw the activation words of its runs, xd their blocks' scales, xs = xd·Σq.
template <int NR>
__device__ __forceinline__ float xr_dot(const xr_piece<NR>& u, const int* xw, const float* xd, const float* xs) {
  float acc = 0.0f;
#pragma unroll
  for (int i = 0; i < NR; ++i) {
    int s = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) s = alap_dot4(u.w[4 * i + j], xw[4 * i + j], s);
    acc += u.a[i] * (xd[i] * static_cast<float>(s)) + u.b[i] * xs[i];
  }
  return acc;
}

// Σ over one Q6_K piece without xr_decode, integer until the end: per run of 16 values Σ (w − 32)·q
// (the dot4 chain starts at nq = −32·Σq), the two runs of one activation block weighted by their
// int8 scales in int32 (|Σ| ≤ 2·128·16·32·127 < 2^24, exact in fp32), then d·xd per block: 2
// int-to-float conversions a piece instead of 8. qh's 2·c shift rides on its funnel.
__device__ __forceinline__ float xr_dot_q6(const xr_raw<kQ6_K>& r, int k, const int* xw, const float* xd,
                                          const int* nq) {
  const uint32_t shh = r.sh + 2u * static_cast<uint32_t>(k & 1);
  int s[4] = {nq[0], nq[1], nq[2], nq[3]};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint32_t ql =
        funnel_r(pick_word(r.lw[i], r.lw[i + 1], r.q), pick_word(r.lw[i + 1], r.lw[i + 2], r.q), r.sh);
    const uint32_t qh =
        funnel_r(pick_word(r.hw[i], r.hw[i + 1], r.q), pick_word(r.hw[i + 1], r.hw[i + 2], r.q), shh);
    const int lo = static_cast<int>((ql & 0x0F0F0F0Fu) | ((qh << 4) & 0x30303030u));
    const int hi = static_cast<int>(((ql >> 4) & 0x0F0F0F0Fu) | (qh & 0x30303030u));
    s[i / 4] = alap_dot4(lo, xw[i], s[i / 4]);
    s[2 + i / 4] = alap_dot4(hi, xw[8 + i], s[2 + i / 4]);
  }
  const int t01 = static_cast<int>(static_cast<int8_t>(r.s01 & 0xFFu)) * s[0] +
                  static_cast<int>(static_cast<int8_t>(r.s01 >> 8)) * s[1];
  const int t45 = static_cast<int>(static_cast<int8_t>(r.s45 & 0xFFu)) * s[2] +
                  static_cast<int>(static_cast<int8_t>(r.s45 >> 8)) * s[3];
  const float d = alap_half_to_float(static_cast<uint16_t>(r.d));
  return d * (xd[0] * static_cast<float>(t01) + xd[2] * static_cast<float>(t45));
}

// The same for a 32-value Q6_K piece: runs of 16 values 64 apart, in different activation blocks.
__device__ __forceinline__ float xr_dot_q6_32(const xr_raw<kQ6_K32>& r, int k, const int* xw, const float* xd,
                                             const int* nq) {
  const uint32_t shh = r.sh + 2u * static_cast<uint32_t>((k >> 1) & 1);
  int s0 = nq[0], s1 = nq[1];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t ql =
        funnel_r(pick_word(r.lw[i], r.lw[i + 1], r.q), pick_word(r.lw[i + 1], r.lw[i + 2], r.q), r.sh);
    const uint32_t qh =
        funnel_r(pick_word(r.hw[i], r.hw[i + 1], r.q), pick_word(r.hw[i + 1], r.hw[i + 2], r.q), shh);
    s0 = alap_dot4(static_cast<int>((ql & 0x0F0F0F0Fu) | ((qh << 4) & 0x30303030u)), xw[i], s0);
    s1 = alap_dot4(static_cast<int>(((ql >> 4) & 0x0F0F0F0Fu) | (qh & 0x30303030u)), xw[4 + i], s1);
  }
  const int t0 = static_cast<int>(static_cast<int8_t>(r.sc0)) * s0;
  const int t1 = static_cast<int>(static_cast<int8_t>(r.sc1)) * s1;
  const float d = alap_half_to_float(static_cast<uint16_t>(r.d));
  return d * (xd[0] * static_cast<float>(t0) + xd[1] * static_cast<float>(t1));
}

// The decode dot of an IQ4 piece (xr_dot_iq4), chosen at compile time (docs/kernels/gpu.md):
//   ALAP_IQ4_DOT=0: the table lookup of alap_lut16_nibbles (6 PRMT a qs word) and 2 dot4;
//   ALAP_IQ4_DOT=1 (CUDA's default): sign-split lookup, 4 PRMT and 4 dot4 a word (iq4_dot_split);
//   (A form 2, the shifts as mul.hi by 2^16, measured 65–68% of copy against form 1's 67–71: removed.)
// Byte-selector builds (HIP, or CUDA with ALAP_GPU_BYTE_SEL_PERM) always take alap_lut16_bytes and
// the activations in their own order; the plain fallback always form 0.
#if defined(ALAP_GPU_BYTE_SEL_PERM)
#define ALAP_IQ4_BYTE_ORDER 1
#undef ALAP_IQ4_DOT
#define ALAP_IQ4_DOT 0
#elif !defined(ALAP_GPU_HW_PERM)
#undef ALAP_IQ4_DOT
#define ALAP_IQ4_DOT 0
#elif !defined(ALAP_IQ4_DOT)
#define ALAP_IQ4_DOT 1
#endif

// The activation words of a 32-value IQ4 piece (xw: 4 words of values 0..15, then 4 of 16..31) in
// the order the piece's table lookups give the weights, so that those need no sorting: nibble
// order (alap_lut16_nibbles, alap_prmt_sign on the raw word), word 2i = values 4i, 16 + 4i, 4i + 1,
// 16 + 4i + 1, word 2i + 1 the next two pairs; byte order (alap_lut16_bytes) is xw's own. Once a
// piece, for all its rows.
__device__ __forceinline__ void iq4_act_words(const int* xw, int (&xn)[8]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
#if defined(ALAP_IQ4_BYTE_ORDER)
    xn[i] = xw[i];
    xn[4 + i] = xw[4 + i];
#else
    xn[2 * i] = static_cast<int>(alap_byte_perm(uint32_t(xw[i]), uint32_t(xw[4 + i]), 0x5140u));
    xn[2 * i + 1] = static_cast<int>(alap_byte_perm(uint32_t(xw[i]), uint32_t(xw[4 + i]), 0x7362u));
#endif
  }
}

#if defined(ALAP_GPU_HW_PERM)
// Σ over 8 codes (qs word v) · activations in nibble order (x0: nibbles 0-3, x1: 4-7), by PRMT's sign
// mode: with the raw nibble c as selector, a table of the NEGATED values of codes 0..7 (−K[c] =
// 127..10, all below 0x80) gives −K[c] for c < 8 and 0x00 for c ≥ 8 (the sign of a positive byte);
// with c ^ 8, a table of codes 8..15 (1..113) gives K[c] for c ≥ 8 and 0x00 for c < 8. So
// Σ K·x = Σ hi·x − Σ lo·x, kept in two int32 sums (pos, neg) subtracted once a piece: no merging
// PRMT, no negated activations. PRMT reads the low 16 bits of a selector: a word's upper codes need
// v >> 16 and f >> 16 (f = v with bit 3 of every nibble flipped): 1 xor + 2 shifts + 4 PRMT + 4
// dot4 a word, against 5 logic ops + 6 PRMT + 2 dot4 for form 0.
__device__ __forceinline__ void iq4_dot_split(uint32_t v, int x0, int x1, int& pos, int& neg) {
  constexpr uint32_t kN0 = 0x4153687Fu;  // 127, 104, 83, 65 (−K of codes 0..3)
  constexpr uint32_t kN1 = 0x0A162331u;  // 49, 35, 22, 10 (codes 4..7)
  uint32_t t[4];
  iq4_table(t);  // t[2], t[3]: K of codes 8..15
  const uint32_t f = v ^ 0x88888888u;
  const uint32_t vh = v >> 16, fh = f >> 16;
  pos = alap_dot4(static_cast<int>(alap_prmt_sign(t[2], t[3], f)), x0, pos);
  neg = alap_dot4(static_cast<int>(alap_prmt_sign(kN0, kN1, v)), x0, neg);
  pos = alap_dot4(static_cast<int>(alap_prmt_sign(t[2], t[3], fh)), x1, pos);
  neg = alap_dot4(static_cast<int>(alap_prmt_sign(kN0, kN1, vh)), x1, neg);
}
#endif

// Σ over one IQ4_NL/IQ4_XS piece (32 values, one activation block, one scale): the 4 qs words'
// codes through the table, dotted with iq4_act_words' xn in int32 (|Σ| ≤ 32·127·127), then
// a·(xd·Σ) with a = d (IQ4_NL) or d·(ls − 32) (IQ4_XS). No offset, no Σq term.
template <uint32_t T>
__device__ __forceinline__ float xr_dot_iq4(const xr_raw<T>& r, int k, const int* xn, float xd) {
  uint32_t v[4];
  float a;
  if constexpr (T == kIQ4_NL) {
    v[0] = window_word<2>(r.w, r.sh), v[1] = window_word<6>(r.w, r.sh);
    v[2] = window_word<10>(r.w, r.sh), v[3] = window_word<14>(r.w, r.sh);
    a = alap_half_to_float(static_cast<uint16_t>(window_word<0>(r.w, r.sh) & 0xFFFFu));
  } else {
    v[0] = r.q0.x, v[1] = r.q0.y, v[2] = r.q1.x, v[3] = r.q1.y;
    a = iq4xs_scale(r.head.x, r.head.y, k & 7);
  }
  int s = 0;
#if ALAP_IQ4_DOT != 0
  int neg = 0;
#pragma unroll
  for (int i = 0; i < 4; ++i) iq4_dot_split(v[i], xn[2 * i], xn[2 * i + 1], s, neg);
  s -= neg;
#else
  uint32_t t[4];
  iq4_table(t);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    uint32_t n0, n1;
#if defined(ALAP_IQ4_BYTE_ORDER)
    alap_lut16_bytes(v[i], t, n0, n1);
    s = alap_dot4(static_cast<int>(n0), xn[i], s);
    s = alap_dot4(static_cast<int>(n1), xn[4 + i], s);
#else
    alap_lut16_nibbles(v[i], t, n0, n1);
    s = alap_dot4(static_cast<int>(n0), xn[2 * i], s);
    s = alap_dot4(static_cast<int>(n1), xn[2 * i + 1], s);
#endif
  }
#endif
  return a * (xd * static_cast<float>(s));
}

// v as float, exactly for |v| < 2^22, without a conversion instruction: v added to the mantissa
// of 1.5·2^23, then 1.5·2^23 subtracted (Q2_K/Q3_K on the H200: the same speed as I2F, session 5).
__device__ __forceinline__ float exact_i2f(int v) { return __int_as_float(0x4B400000 + v) - 12582912.0f; }

// Σ over one Q2_K piece: per run g (2-bit field g of the 4 qs words) s_g = Σ w·q, then
// d·Σ_g xd_g·(sc_g·s_g) − dmin·Σ_g m_g·xs_g (xs = xd·Σq; sc_g·s_g ≤ 15·3·127·16, exact in fp32).
__device__ __forceinline__ float xr_dot_q2(const xr_raw<kQ2_K>& r, int k, const int* xw, const float* xd,
                                          const float* xs) {
  int s[4] = {0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t q = r.q[i];
    s[0] = alap_dot4(static_cast<int>(q & 0x03030303u), xw[i], s[0]);
    s[1] = alap_dot4(static_cast<int>((q >> 2) & 0x03030303u), xw[4 + i], s[1]);
    s[2] = alap_dot4(static_cast<int>((q >> 4) & 0x03030303u), xw[8 + i], s[2]);
    s[3] = alap_dot4(static_cast<int>((q >> 6) & 0x03030303u), xw[12 + i], s[3]);
  }
  // Scale bytes 8h + 2g + e: bytes e and 2 + e of the two words (runs 0, 1 and 2, 3); low nibble
  // the scale, high nibble the min.
  const uint32_t sh = 8u * static_cast<uint32_t>(k & 1);
  const uint32_t c01 = r.s0 >> sh, c23 = r.s1 >> sh;
  const uint32_t c[4] = {c01, c01 >> 16, c23, c23 >> 16};
  float a = 0.0f, b = 0.0f;
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    a += xd[g] * exact_i2f(static_cast<int>(c[g] & 0xFu) * s[g]);
    b += exact_i2f(static_cast<int>((c[g] >> 4) & 0xFu)) * xs[g];
  }
  const float d = alap_half_to_float(static_cast<uint16_t>(r.dm & 0xFFFFu));
  const float dmin = alap_half_to_float(static_cast<uint16_t>(r.dm >> 16));
  return d * a - dmin * b;
}

// Σ over one Q3_K piece: per run g, w = the 2-bit field g of qs | hmask bit 4h + g at bit 2 (q + 4,
// 0..7); the chain starts at nq = −4·Σq, so s_g = Σ q_w·q; then d·Σ_g xd_g·(scale_g·s_g), scale_g
// the 6-bit scale − 32 (|scale_g·s_g| ≤ 32·4·127·16 < 2^22: exact in fp32).
__device__ __forceinline__ float xr_dot_q3(const xr_raw<kQ3_K>& r, int k, const int* xw, const float* xd,
                                          const int* nq) {
  const uint32_t h4 = 4u * static_cast<uint32_t>((k >> 1) & 1);
  const uint32_t shh = r.sh + h4;  // hmask's 4h shift rides on its funnel
  int s[4] = {nq[0], nq[1], nq[2], nq[3]};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const uint32_t ql =
        funnel_r(pick_word(r.lw[i], r.lw[i + 1], r.q), pick_word(r.lw[i + 1], r.lw[i + 2], r.q), r.sh);
    const uint32_t hm =
        funnel_r(pick_word(r.hw[i], r.hw[i + 1], r.q), pick_word(r.hw[i + 1], r.hw[i + 2], r.q), shh);
    s[0] = alap_dot4(static_cast<int>((ql & 0x03030303u) | ((hm << 2) & 0x04040404u)), xw[i], s[0]);
    s[1] = alap_dot4(static_cast<int>(((ql >> 2) & 0x03030303u) | ((hm << 1) & 0x04040404u)), xw[4 + i], s[1]);
    s[2] = alap_dot4(static_cast<int>(((ql >> 4) & 0x03030303u) | (hm & 0x04040404u)), xw[8 + i], s[2]);
    s[3] = alap_dot4(static_cast<int>(((ql >> 6) & 0x03030303u) | ((hm >> 1) & 0x04040404u)), xw[12 + i], s[3]);
  }
  // Scale k = 8h + 2g + e (FORMATS.md §2.7.5): low 4 bits from nibble h of byte 2g + e, high 2 bits
  // at 4h (g = 0, 1) or 4h + 2 (g = 2, 3) of byte 8 + (2g + e)%4; two scales a word (16-bit lanes).
  const uint32_t S0 = funnel_r(r.s[0], r.s[1], r.sh), S1 = funnel_r(r.s[1], r.s[2], r.sh);
  const uint32_t S2 = funnel_r(r.s[2], r.s[3], r.sh);
  const uint32_t t = 8u * static_cast<uint32_t>(k & 1) + h4;
  const uint32_t c01 = ((S0 >> t) & 0x000F000Fu) | (((S2 >> t) << 4) & 0x00300030u);
  const uint32_t c23 = ((S1 >> t) & 0x000F000Fu) | (((S2 >> (t + 2)) << 4) & 0x00300030u);
  const int sc[4] = {static_cast<int>(c01 & 0xFFFFu) - 32, static_cast<int>(c01 >> 16) - 32,
                     static_cast<int>(c23 & 0xFFFFu) - 32, static_cast<int>(c23 >> 16) - 32};
  float acc = 0.0f;
#pragma unroll
  for (int g = 0; g < 4; ++g) acc += xd[g] * exact_i2f(sc[g] * s[g]);
  return alap_half_to_float(static_cast<uint16_t>((r.s[3] >> r.sh) & 0xFFFFu)) * acc;
}

// Element e (0..31) of an unpacked block as float (the embedding lookup).
__device__ __forceinline__ float wblock_value(const wblock& u, int e, bool signed_bytes) {
  const uint32_t byte = (static_cast<uint32_t>(u.w[e / 4]) >> (8 * (e % 4))) & 0xFFu;
  const float w = signed_bytes ? static_cast<float>(static_cast<int8_t>(byte)) : static_cast<float>(byte);
  return e < 16 ? u.a0 * w + u.b0 : u.a1 * w + u.b1;
}

// Plain types: element c of a row as float.
__device__ __forceinline__ float bf16_to_float(uint16_t bits) {
  return __uint_as_float(static_cast<uint32_t>(bits) << 16);
}

#endif  // ALAP_GPU_DEVICE_COMPILE

}  // namespace alap::gpu
