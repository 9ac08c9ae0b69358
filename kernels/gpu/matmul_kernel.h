// Device side of the weight products and the embedding lookup: per weight type, unpacking of one
// 32-element block of a GGUF row into 32 small integers w (int8 lanes of 8 words) with a scale a and
// an offset b per 16-element half, so that W[e] = a[e/16]·w[e] + b[e/16] (FORMATS.md §2), plus the
// layout of the quantised activations. Not the kernels (matmul.hip) and not the CPU twin
// (kernels/cpu/scalar/dequant_scalar.cpp, which this follows line by line).
#pragma once

#include <cstdint>

#include "kernels/gpu/gpu_port.h"

namespace alap::gpu {

// ggml type ids (kernels/include/alap/kernels/dtype.h); kernels never include the CPU library.
enum : uint32_t {
  kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8,
  kQ2_K = 10, kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kBF16 = 30,
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
    default: return {0, 0};
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

// One 32-element block, unpacked: byte i of w[k] is element 4k + i (unsigned values 0..63, or
// int8 for Q8_0), W[e] = a[e/16]·w[e] + b[e/16].
struct wblock {
  int w[8];
  float a0, a1, b0, b1;
};

// Loads from a byte pointer with the alignment the block layout guarantees (2 or 4 bytes).
__device__ __forceinline__ uint32_t ld_u16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }
__device__ __forceinline__ uint32_t ld_u32_a2(const uint8_t* p) { return ld_u16(p) | (ld_u16(p + 2) << 16); }
__device__ __forceinline__ uint32_t ld_u32_a4(const uint8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }
__device__ __forceinline__ float ld_half(const uint8_t* p) { return alap_half_to_float(static_cast<uint16_t>(ld_u16(p))); }

// Bits 4k..4k+3 of `bits` moved to bit `to` of the 4 bytes of a word.
__device__ __forceinline__ int spread4(uint32_t bits, int to) {
  return static_cast<int>(((bits & 1u) | ((bits & 2u) << 7) | ((bits & 4u) << 14) | ((bits & 8u) << 21)) << to);
}

// Unpacks 32-block `blk` (elements 32·blk ..) of the row starting at `row`: a row of a 16-byte
// aligned tensor, or a copy of whole blocks at a 16-byte aligned address. Q4_K/Q5_K load 16 bytes
// at a time (their blocks are multiples of 16 bytes), Q2_K/Q4_1/Q5_1 4 bytes, the others 2.
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

// Σ_e W[e]·x[e] over one 32-block against its quantised activations: xw the 8 words of q, xd the
// block's d, s0/s1 the Σq of its halves.
__device__ __forceinline__ float wblock_dot(const wblock& u, const int* xw, float xd, int s0, int s1) {
  int i0 = 0, i1 = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    i0 = alap_dot4(u.w[k], xw[k], i0);
    i1 = alap_dot4(u.w[k + 4], xw[k + 4], i1);
  }
  return xd * (u.a0 * static_cast<float>(i0) + u.a1 * static_cast<float>(i1) + u.b0 * static_cast<float>(s0) +
               u.b1 * static_cast<float>(s1));
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
