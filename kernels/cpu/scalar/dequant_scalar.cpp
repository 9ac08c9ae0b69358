// Scalar dequantisation of every weight block type, written to follow FORMATS.md §2 line by line.
// This is the oracle: fast matmul variants are tested against matmul built on these loops.
#include <algorithm>

#include "cpu_variants.h"

namespace alap::kernels {

namespace {

constexpr size_t kQK = 256;  // elements per K-quant super-block

void deq_q4_0(const uint8_t* b, float* y) {  // 18 bytes: d, qs[16]
  const float d = load_f16(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>((qs[j] & 0xF) - 8);
    y[j + 16] = d * static_cast<float>((qs[j] >> 4) - 8);
  }
}

void deq_q4_1(const uint8_t* b, float* y) {  // 20 bytes: d, m, qs[16]
  const float d = load_f16(b);
  const float m = load_f16(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(qs[j] & 0xF) + m;
    y[j + 16] = d * static_cast<float>(qs[j] >> 4) + m;
  }
}

void deq_q5_0(const uint8_t* b, float* y) {  // 22 bytes: d, qh (u32), qs[16]
  const float d = load_f16(b);
  const uint32_t qh = load_u32(b + 2);
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    y[j] = d * static_cast<float>(lo - 16);
    y[j + 16] = d * static_cast<float>(hi - 16);
  }
}

void deq_q5_1(const uint8_t* b, float* y) {  // 24 bytes: d, m, qh (u32), qs[16]
  const float d = load_f16(b);
  const float m = load_f16(b + 2);
  const uint32_t qh = load_u32(b + 4);
  const uint8_t* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const int lo = (qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int hi = (qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    y[j] = d * static_cast<float>(lo) + m;
    y[j + 16] = d * static_cast<float>(hi) + m;
  }
}

void deq_q8_0(const uint8_t* b, float* y) {  // 34 bytes: d, qs[32] int8
  const float d = load_f16(b);
  const auto* qs = reinterpret_cast<const int8_t*>(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(qs[j]);
}

void deq_q2_k(const uint8_t* b, float* y) {  // 84 bytes: sc[16], qs[64], d, dmin
  const uint8_t* sc = b;
  const uint8_t* qs = b + 16;
  const float d = load_f16(b + 80);
  const float dmin = load_f16(b + 82);
  for (size_t e = 0; e < kQK; ++e) {
    const size_t h = e / 128, g = (e % 128) / 32, l = e % 32;
    const int q = (qs[32 * h + l] >> (2 * g)) & 3;
    const int t = sc[e / 16];
    y[e] = d * static_cast<float>(t & 0xF) * static_cast<float>(q) - dmin * static_cast<float>(t >> 4);
  }
}

void deq_q3_k(const uint8_t* b, float* y) {  // 110 bytes: hmask[32], qs[64], s[12], d
  const uint8_t* hmask = b;
  const uint8_t* qs = b + 32;
  const uint8_t* s = b + 96;
  const float d = load_f16(b + 108);
  int scale[16];
  for (int k = 0; k < 16; ++k) scale[k] = q3_k_scale(s, k);
  for (size_t e = 0; e < kQK; ++e) {
    const size_t h = e / 128, g = (e % 128) / 32, l = e % 32;
    const int q2 = (qs[32 * h + l] >> (2 * g)) & 3;
    const int hb = (hmask[l] >> (4 * h + g)) & 1;
    const int q = q2 - (hb ? 0 : 4);
    y[e] = d * static_cast<float>(scale[e / 16]) * static_cast<float>(q);
  }
}

void deq_q4_k(const uint8_t* b, float* y) {  // 144 bytes: d, dmin, s[12], qs[128]
  const float d = load_f16(b);
  const float dmin = load_f16(b + 2);
  const uint8_t* s = b + 4;
  const uint8_t* qs = b + 16;
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    k4_scale_min(s, j, sc, m);
    const float dl = d * static_cast<float>(sc);
    const float ml = dmin * static_cast<float>(m);
    const uint8_t* p = qs + 32 * (j / 2);
    for (int l = 0; l < 32; ++l) {
      const int q = (j % 2 == 0) ? (p[l] & 0xF) : (p[l] >> 4);
      y[32 * j + l] = dl * static_cast<float>(q) - ml;
    }
  }
}

void deq_q5_k(const uint8_t* b, float* y) {  // 176 bytes: d, dmin, s[12], qh[32], qs[128]
  const float d = load_f16(b);
  const float dmin = load_f16(b + 2);
  const uint8_t* s = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = b + 48;
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    k4_scale_min(s, j, sc, m);
    const float dl = d * static_cast<float>(sc);
    const float ml = dmin * static_cast<float>(m);
    const uint8_t* p = qs + 32 * (j / 2);
    for (int l = 0; l < 32; ++l) {
      const int q = (j % 2 == 0) ? (p[l] & 0xF) : (p[l] >> 4);
      const int q5 = q | (((qh[l] >> j) & 1) << 4);
      y[32 * j + l] = dl * static_cast<float>(q5) - ml;
    }
  }
}

void deq_q6_k(const uint8_t* b, float* y) {  // 210 bytes: ql[128], qh[64], sc[16] int8, d
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = load_f16(b + 208);
  for (size_t e = 0; e < kQK; ++e) {
    const size_t h = e / 128, r = e % 128, g = r / 32, l = r % 32;
    const uint8_t byte = ql[64 * h + 32 * (g % 2) + l];
    const int lo = g < 2 ? (byte & 0xF) : (byte >> 4);
    const int hi = (qh[32 * h + l] >> (2 * g)) & 3;
    const int q = (lo | (hi << 4)) - 32;
    y[e] = d * static_cast<float>(sc[e / 16]) * static_cast<float>(q);
  }
}

void deq_iq4_nl(const uint8_t* b, float* y) {  // 18 bytes: d, qs[16]; codes index kIq4Values
  const float d = load_f16(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kIq4Values[qs[j] & 0xF]);
    y[j + 16] = d * static_cast<float>(kIq4Values[qs[j] >> 4]);
  }
}

void deq_iq4_xs(const uint8_t* b, float* y) {  // 136 bytes: d, scales_h (u16), scales_l[4], qs[128]
  const float d = load_f16(b);
  for (int sub = 0; sub < 8; ++sub) {  // each sub-block: 16 bytes, values l (low nibbles) and 16 + l
    const float dl = d * static_cast<float>(iq4_xs_scale(b, sub));
    const uint8_t* qs = b + 8 + 16 * sub;
    for (int l = 0; l < 16; ++l) {
      y[32 * sub + l] = dl * static_cast<float>(kIq4Values[qs[l] & 0xF]);
      y[32 * sub + 16 + l] = dl * static_cast<float>(kIq4Values[qs[l] >> 4]);
    }
  }
}

template <void (*Block)(const uint8_t*, float*)>
void deq_blocks(const void* src, float* dst, size_t n, size_t block_elems, size_t block_bytes) {
  const auto* p = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n / block_elems; ++i) Block(p + i * block_bytes, dst + i * block_elems);
}

}  // namespace

void dequantize_row(DType t, const void* src, float* dst, size_t n) {
  const DTypeInfo& info = weight_dtype("dequantize_row", t);
  if (n % info.block_elems != 0) {
    throw std::invalid_argument("dequantize_row: " + std::to_string(n) + " elements is not a multiple of the " +
                                dtype_label(t) + " block of " + std::to_string(info.block_elems));
  }
  const size_t be = info.block_elems, bb = info.block_bytes;
  switch (t) {
    case DType::f32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case DType::f16: {
      const auto* p = static_cast<const uint8_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = load_f16(p + 2 * i);
      return;
    }
    case DType::bf16: {
      const auto* p = static_cast<const uint8_t*>(src);
      for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(p + 2 * i));
      return;
    }
    case DType::q4_0: return deq_blocks<deq_q4_0>(src, dst, n, be, bb);
    case DType::q4_1: return deq_blocks<deq_q4_1>(src, dst, n, be, bb);
    case DType::q5_0: return deq_blocks<deq_q5_0>(src, dst, n, be, bb);
    case DType::q5_1: return deq_blocks<deq_q5_1>(src, dst, n, be, bb);
    case DType::q8_0: return deq_blocks<deq_q8_0>(src, dst, n, be, bb);
    case DType::q2_k: return deq_blocks<deq_q2_k>(src, dst, n, be, bb);
    case DType::q3_k: return deq_blocks<deq_q3_k>(src, dst, n, be, bb);
    case DType::q4_k: return deq_blocks<deq_q4_k>(src, dst, n, be, bb);
    case DType::q5_k: return deq_blocks<deq_q5_k>(src, dst, n, be, bb);
    case DType::q6_k: return deq_blocks<deq_q6_k>(src, dst, n, be, bb);
    case DType::iq4_nl: return deq_blocks<deq_iq4_nl>(src, dst, n, be, bb);
    case DType::iq4_xs: return deq_blocks<deq_iq4_xs>(src, dst, n, be, bb);
    default: throw_unsupported("dequantize_row", t);
  }
}

}  // namespace alap::kernels
