// Reference quantisers (f32 → block types of FORMATS.md §2) for tests and model-making tools:
// round-to-nearest with one scale (and min) per block or sub-block. Not the optimising
// quantisers of llama-quantize; the blocks they write dequantise close to their input.
#include <algorithm>
#include <cmath>

#include "cpu_variants.h"

namespace alap::kernels {

namespace {

constexpr size_t kQK = 256;

int nearest(float v) { return static_cast<int>(std::lround(v)); }
int clampi(int v, int lo, int hi) { return std::min(std::max(v, lo), hi); }

// fp16 bits of v, and the value those bits stand for (quantise against what is stored).
uint16_t to_half(float v, float& stored) {
  const uint16_t h = f32_to_fp16(v);
  stored = fp16_to_f32(h);
  return h;
}

// The element of largest magnitude, with its sign (Q4_0/Q5_0/Q6_K/Q3_K/IQ4 map it to the most negative level).
float signed_absmax(const float* x, size_t n) {
  float best = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > std::fabs(best)) best = x[i];
  }
  return best;
}

// Symmetric blocks of 32 with 2^bits levels and an offset (Q4_0 bits 4, Q5_0 bits 5).
void quant_sym32(const float* x, int bits, float& dq, uint16_t& dh, int* q) {
  const int half = 1 << (bits - 1);
  dh = to_half(signed_absmax(x, 32) / static_cast<float>(-half), dq);
  for (int j = 0; j < 32; ++j) q[j] = dq != 0.0f ? clampi(nearest(x[j] / dq) + half, 0, 2 * half - 1) : half;
}

// Asymmetric blocks of 32 (Q4_1/Q5_1): y = d*q + m with m = the block minimum.
void quant_asym32(const float* x, int levels, uint16_t& dh, uint16_t& mh, int* q) {
  float mn = x[0], mx = x[0];
  for (int j = 1; j < 32; ++j) {
    mn = std::min(mn, x[j]);
    mx = std::max(mx, x[j]);
  }
  float dq, mq;
  dh = to_half((mx - mn) / static_cast<float>(levels), dq);
  mh = to_half(mn, mq);
  for (int j = 0; j < 32; ++j) q[j] = dq != 0.0f ? clampi(nearest((x[j] - mq) / dq), 0, levels) : 0;
}

void quant_q4_0(const float* x, uint8_t* b) {
  float dq;
  uint16_t dh;
  int q[32];
  quant_sym32(x, 4, dq, dh, q);
  store_u16(b, dh);
  for (int j = 0; j < 16; ++j) b[2 + j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
}

void quant_q4_1(const float* x, uint8_t* b) {
  uint16_t dh, mh;
  int q[32];
  quant_asym32(x, 15, dh, mh, q);
  store_u16(b, dh);
  store_u16(b + 2, mh);
  for (int j = 0; j < 16; ++j) b[4 + j] = static_cast<uint8_t>(q[j] | (q[j + 16] << 4));
}

// The low nibbles and the u32 of 5th bits of a Q5 block (bit e of qh = bit 4 of element e).
void pack_q5(const int* q, uint8_t* qh_at, uint8_t* qs) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
  for (int e = 0; e < 32; ++e) qh |= static_cast<uint32_t>((q[e] >> 4) & 1) << e;
  store_u32(qh_at, qh);
}

void quant_q5_0(const float* x, uint8_t* b) {
  float dq;
  uint16_t dh;
  int q[32];
  quant_sym32(x, 5, dq, dh, q);
  store_u16(b, dh);
  pack_q5(q, b + 2, b + 6);
}

void quant_q5_1(const float* x, uint8_t* b) {
  uint16_t dh, mh;
  int q[32];
  quant_asym32(x, 31, dh, mh, q);
  store_u16(b, dh);
  store_u16(b + 2, mh);
  pack_q5(q, b + 4, b + 8);
}

void quant_q8_0(const float* x, uint8_t* b) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  float dq;
  store_u16(b, to_half(amax / 127.0f, dq));
  for (int j = 0; j < 32; ++j) {
    b[2 + j] = static_cast<uint8_t>(static_cast<int8_t>(dq != 0.0f ? clampi(nearest(x[j] / dq), -127, 127) : 0));
  }
}

// K-quant sub-blocks with a scale and a min (Q2_K/Q4_K/Q5_K): y = d*sc*q - dmin*m, sc and m
// unsigned integers below 2^scale_bits, q in [0, levels]. Fills sc[], m[], q[] (n_sub*sub elems).
void quant_k_scale_min(const float* x, int n_sub, int sub, int levels, int scale_max, uint16_t& dh,
                       uint16_t& dminh, int* sc, int* m, int* q) {
  float scale_f[16], min_f[16];
  float max_scale = 0.0f, max_min = 0.0f;
  for (int j = 0; j < n_sub; ++j) {
    const float* p = x + j * sub;
    float mn = 0.0f, mx = p[0];
    for (int l = 0; l < sub; ++l) {
      mn = std::min(mn, p[l]);
      mx = std::max(mx, p[l]);
    }
    scale_f[j] = std::max(mx - mn, 0.0f) / static_cast<float>(levels);
    min_f[j] = -mn;
    max_scale = std::max(max_scale, scale_f[j]);
    max_min = std::max(max_min, min_f[j]);
  }
  float dq, dminq;
  dh = to_half(max_scale / static_cast<float>(scale_max), dq);
  dminh = to_half(max_min / static_cast<float>(scale_max), dminq);
  for (int j = 0; j < n_sub; ++j) {
    sc[j] = dq > 0.0f ? clampi(nearest(scale_f[j] / dq), 0, scale_max) : 0;
    m[j] = dminq > 0.0f ? clampi(nearest(min_f[j] / dminq), 0, scale_max) : 0;
    const float eff_d = dq * static_cast<float>(sc[j]);
    const float eff_m = dminq * static_cast<float>(m[j]);
    for (int l = 0; l < sub; ++l) {
      const float v = x[j * sub + l];
      q[j * sub + l] = eff_d > 0.0f ? clampi(nearest((v + eff_m) / eff_d), 0, levels) : 0;
    }
  }
}

// K-quant sub-blocks with a signed scale (Q3_K/Q6_K): y = d*sc*q, q in [-half, half-1].
void quant_k_signed(const float* x, int n_sub, int sub, int half, int scale_max, uint16_t& dh, int* sc,
                    int* q) {
  float scale_f[16];
  float amax = 0.0f;
  for (int j = 0; j < n_sub; ++j) {
    scale_f[j] = signed_absmax(x + j * sub, static_cast<size_t>(sub)) / static_cast<float>(-half);
    amax = std::max(amax, std::fabs(scale_f[j]));
  }
  float dq;
  dh = to_half(amax / static_cast<float>(scale_max), dq);
  for (int j = 0; j < n_sub; ++j) {
    sc[j] = dq > 0.0f ? clampi(nearest(scale_f[j] / dq), -scale_max, scale_max) : 0;
    const float eff = dq * static_cast<float>(sc[j]);
    for (int l = 0; l < sub; ++l) {
      q[j * sub + l] = eff != 0.0f ? clampi(nearest(x[j * sub + l] / eff), -half, half - 1) : 0;
    }
  }
}

// Packs 6-bit sc[8] and m[8] into the 12 bytes of Q4_K/Q5_K (inverse of k4_scale_min).
void pack_k4_scales(const int* sc, const int* m, uint8_t* s) {
  for (int j = 0; j < 4; ++j) {
    s[j] = static_cast<uint8_t>(sc[j] | ((sc[j + 4] >> 4) << 6));
    s[j + 4] = static_cast<uint8_t>(m[j] | ((m[j + 4] >> 4) << 6));
    s[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

void quant_q2_k(const float* x, uint8_t* b) {
  uint16_t dh, dminh;
  int sc[16], m[16], q[256];
  quant_k_scale_min(x, 16, 16, 3, 15, dh, dminh, sc, m, q);
  for (int k = 0; k < 16; ++k) b[k] = static_cast<uint8_t>(sc[k] | (m[k] << 4));
  uint8_t* qs = b + 16;
  std::fill(qs, qs + 64, uint8_t{0});
  for (size_t e = 0; e < kQK; ++e) {
    const size_t h = e / 128, g = (e % 128) / 32, l = e % 32;
    qs[32 * h + l] = static_cast<uint8_t>(qs[32 * h + l] | (q[e] << (2 * g)));
  }
  store_u16(b + 80, dh);
  store_u16(b + 82, dminh);
}

void quant_q3_k(const float* x, uint8_t* b) {
  uint16_t dh;
  int sc[16], q[256];
  quant_k_signed(x, 16, 16, 4, 31, dh, sc, q);
  uint8_t* hmask = b;
  uint8_t* qs = b + 32;
  uint8_t* s = b + 96;
  std::fill(b, b + 108, uint8_t{0});
  for (int k = 0; k < 16; ++k) {
    const int v = sc[k] + 32;  // 6 bits, stored with bias 32
    if (k < 8) {
      s[k] = static_cast<uint8_t>(s[k] | (v & 0xF));
    } else {
      s[k - 8] = static_cast<uint8_t>(s[k - 8] | ((v & 0xF) << 4));
    }
    s[8 + k % 4] = static_cast<uint8_t>(s[8 + k % 4] | ((v >> 4) << (2 * (k / 4))));
  }
  for (size_t e = 0; e < kQK; ++e) {
    const size_t h = e / 128, g = (e % 128) / 32, l = e % 32;
    const int u = q[e] + 4;  // 0..7: low two bits in qs, bit 2 in hmask
    qs[32 * h + l] = static_cast<uint8_t>(qs[32 * h + l] | ((u & 3) << (2 * g)));
    hmask[l] = static_cast<uint8_t>(hmask[l] | ((u >> 2) << (4 * h + g)));
  }
  store_u16(b + 108, dh);
}

void quant_q4_k(const float* x, uint8_t* b) {
  uint16_t dh, dminh;
  int sc[8], m[8], q[256];
  quant_k_scale_min(x, 8, 32, 15, 63, dh, dminh, sc, m, q);
  store_u16(b, dh);
  store_u16(b + 2, dminh);
  pack_k4_scales(sc, m, b + 4);
  uint8_t* qs = b + 16;
  for (int p = 0; p < 4; ++p) {
    for (int l = 0; l < 32; ++l) qs[32 * p + l] = static_cast<uint8_t>(q[64 * p + l] | (q[64 * p + 32 + l] << 4));
  }
}

void quant_q5_k(const float* x, uint8_t* b) {
  uint16_t dh, dminh;
  int sc[8], m[8], q[256];
  quant_k_scale_min(x, 8, 32, 31, 63, dh, dminh, sc, m, q);
  store_u16(b, dh);
  store_u16(b + 2, dminh);
  pack_k4_scales(sc, m, b + 4);
  uint8_t* qh = b + 16;
  uint8_t* qs = b + 48;
  std::fill(qh, qh + 32, uint8_t{0});
  for (int p = 0; p < 4; ++p) {
    for (int l = 0; l < 32; ++l) {
      const int lo = q[64 * p + l], hi = q[64 * p + 32 + l];
      qs[32 * p + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
    }
  }
  for (int j = 0; j < 8; ++j) {
    for (int l = 0; l < 32; ++l) qh[l] = static_cast<uint8_t>(qh[l] | (((q[32 * j + l] >> 4) & 1) << j));
  }
}

void quant_q6_k(const float* x, uint8_t* b) {
  uint16_t dh;
  int sc[16], q[256];
  quant_k_signed(x, 16, 16, 32, 127, dh, sc, q);
  uint8_t* ql = b;
  uint8_t* qh = b + 128;
  std::fill(b, b + 192, uint8_t{0});
  for (size_t e = 0; e < kQK; ++e) {
    const size_t h = e / 128, r = e % 128, g = r / 32, l = r % 32;
    const int u = q[e] + 32;  // 0..63
    uint8_t& lo = ql[64 * h + 32 * (g % 2) + l];
    lo = static_cast<uint8_t>(lo | (g < 2 ? (u & 0xF) : ((u & 0xF) << 4)));
    qh[32 * h + l] = static_cast<uint8_t>(qh[32 * h + l] | ((u >> 4) << (2 * g)));
  }
  for (int k = 0; k < 16; ++k) b[192 + k] = static_cast<uint8_t>(static_cast<int8_t>(sc[k]));
  store_u16(b + 208, dh);
}

// The IQ4 code whose value (kIq4Values) is nearest v; 8 (value 1) for a zero scale's NaN or infinity.
int nearest_iq4(float v) {
  if (!std::isfinite(v)) return 8;
  int best = 0;
  float best_dist = std::fabs(v - static_cast<float>(kIq4Values[0]));
  for (int c = 1; c < 16; ++c) {
    const float dist = std::fabs(v - static_cast<float>(kIq4Values[c]));
    if (dist < best_dist) best = c, best_dist = dist;
  }
  return best;
}

// 32 values as 16 bytes of codes against the step dl: byte j holds value j (low) and j + 16 (high).
void pack_iq4_codes(const float* x, float dl, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) {
    const int lo = dl != 0.0f ? nearest_iq4(x[j] / dl) : 8;
    const int hi = dl != 0.0f ? nearest_iq4(x[j + 16] / dl) : 8;
    qs[j] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

// The block's largest magnitude goes to the table's end, -127.
void quant_iq4_nl(const float* x, uint8_t* b) {
  float dq;
  store_u16(b, to_half(signed_absmax(x, 32) / -127.0f, dq));
  pack_iq4_codes(x, dq, b + 2);
}

// Each sub-block's own step (its largest magnitude to -127) in whole units of d, the largest of
// them to -32 (the 6-bit scale's end); the codes then against the stored d * scale.
void quant_iq4_xs(const float* x, uint8_t* b) {
  float step[8], widest = 0.0f;
  for (int s = 0; s < 8; ++s) {
    step[s] = signed_absmax(x + 32 * s, 32) / -127.0f;
    if (std::fabs(step[s]) > std::fabs(widest)) widest = step[s];
  }
  float dq;
  store_u16(b, to_half(widest / -32.0f, dq));
  uint16_t scales_h = 0;
  std::fill(b + 4, b + 8, uint8_t{0});
  for (int s = 0; s < 8; ++s) {
    const int l = dq != 0.0f ? clampi(nearest(step[s] / dq), -32, 31) : 0;
    const int ls = l + 32;
    b[4 + s / 2] = static_cast<uint8_t>(b[4 + s / 2] | ((ls & 0xF) << (4 * (s % 2))));
    scales_h = static_cast<uint16_t>(scales_h | ((ls >> 4) << (2 * s)));
    pack_iq4_codes(x + 32 * s, dq * static_cast<float>(l), b + 8 + 16 * s);
  }
  store_u16(b + 2, scales_h);
}

template <void (*Block)(const float*, uint8_t*)>
void quant_blocks(const float* src, void* dst, size_t n, size_t block_elems, size_t block_bytes) {
  auto* p = static_cast<uint8_t*>(dst);
  for (size_t i = 0; i < n / block_elems; ++i) Block(src + i * block_elems, p + i * block_bytes);
}

}  // namespace

void quantize_row(DType t, const float* src, void* dst, size_t n) {
  const DTypeInfo& info = weight_dtype("quantize_row", t);
  if (n % info.block_elems != 0) {
    throw std::invalid_argument("quantize_row: " + std::to_string(n) + " elements is not a multiple of the " +
                                dtype_label(t) + " block of " + std::to_string(info.block_elems));
  }
  const size_t be = info.block_elems, bb = info.block_bytes;
  auto* out = static_cast<uint8_t*>(dst);
  switch (t) {
    case DType::f32:
      std::memcpy(dst, src, n * sizeof(float));
      return;
    case DType::f16:
      for (size_t i = 0; i < n; ++i) store_u16(out + 2 * i, f32_to_fp16(src[i]));
      return;
    case DType::bf16:
      for (size_t i = 0; i < n; ++i) store_u16(out + 2 * i, f32_to_bf16(src[i]));
      return;
    case DType::q4_0: return quant_blocks<quant_q4_0>(src, dst, n, be, bb);
    case DType::q4_1: return quant_blocks<quant_q4_1>(src, dst, n, be, bb);
    case DType::q5_0: return quant_blocks<quant_q5_0>(src, dst, n, be, bb);
    case DType::q5_1: return quant_blocks<quant_q5_1>(src, dst, n, be, bb);
    case DType::q8_0: return quant_blocks<quant_q8_0>(src, dst, n, be, bb);
    case DType::q2_k: return quant_blocks<quant_q2_k>(src, dst, n, be, bb);
    case DType::q3_k: return quant_blocks<quant_q3_k>(src, dst, n, be, bb);
    case DType::q4_k: return quant_blocks<quant_q4_k>(src, dst, n, be, bb);
    case DType::q5_k: return quant_blocks<quant_q5_k>(src, dst, n, be, bb);
    case DType::q6_k: return quant_blocks<quant_q6_k>(src, dst, n, be, bb);
    case DType::iq4_nl: return quant_blocks<quant_iq4_nl>(src, dst, n, be, bb);
    case DType::iq4_xs: return quant_blocks<quant_iq4_xs>(src, dst, n, be, bb);
    default: throw_unsupported("quantize_row", t);
  }
}

}  // namespace alap::kernels
