// The row-interleaved weight packer (layout in packed_layout.h): plain loops over the original
// blocks, run once at load time. Not the products that read the layout.
#include "packed_layout.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "cpu_variants.h"

namespace alap::kernels::packed {

namespace {

// Byte i of lane r of the 64-byte vector at v.
inline uint8_t& lane_byte(uint8_t* v, size_t r, size_t i) { return v[4 * r + i]; }

// Row r's n bytes at src, one into each 16-byte group of dst (dst[16·i + r] = src[i]): the
// K-quants' per-row scale bytes, side by side for the 16 rows.
inline void spread_rows(uint8_t* dst, size_t r, const uint8_t* src, size_t n) {
  for (size_t i = 0; i < n; ++i) dst[16 * i + r] = src[i];
}

// fn(o, blk, r) for every super-block u of a 16-row group, o its kOut packed bytes, and every row r,
// blk that row's kIn-byte block u (the K-quants: 256 values a block).
template <size_t kIn, size_t kOut, class Fn>
void each_block_row(const uint8_t* const* rows, size_t nu, uint8_t* g, Fn&& fn) {
  for (size_t u = 0; u < nu; ++u) {
    for (size_t r = 0; r < kRows; ++r) fn(g + kOut * u, rows[r] + kIn * u, r);
  }
}

void pack_q8_0(const uint8_t* const* rows, size_t nb, uint8_t* g) {
  for (size_t b = 0; b < nb; ++b) {
    const BlockAt at = block_at(b, nb, 0, 512);
    for (size_t r = 0; r < kRows; ++r) {
      const uint8_t* blk = rows[r] + 34 * b;
      std::memcpy(g + at.scales + 2 * r, blk, 2);
      for (size_t j = 0; j < 8; ++j) {
        for (size_t i = 0; i < 4; ++i) lane_byte(g + at.quants + 64 * j, r, i) = blk[2 + 4 * j + i] ^ 0x80;
      }
    }
  }
}

// Q4_0 / Q5_0 (kMin false) and Q4_1 / Q5_1 (kMin true: the block's fp16 min m after d in the
// file, first in the extra bytes here): scales, [mins,] [fifth bits,] nibble vectors.
template <bool kFive, bool kMin>
void pack_q45_01(const uint8_t* const* rows, size_t nb, uint8_t* g) {
  constexpr size_t kHead = kMin ? 4 : 2, kIn = kHead + (kFive ? 4 : 0) + 16;  // the file's block
  constexpr size_t kMins = q45_mins(kMin);                                  // extra: mins first
  for (size_t b = 0; b < nb; ++b) {
    const BlockAt at = block_at(b, nb, q45_extra(kFive, kMin), 256);
    for (size_t r = 0; r < kRows; ++r) {
      const uint8_t* blk = rows[r] + kIn * b;
      std::memcpy(g + at.scales + 2 * r, blk, 2);
      if (kMin) std::memcpy(g + at.extra + 2 * r, blk + 2, 2);
      const uint8_t* qs = blk + kIn - 16;
      for (size_t k = 0; k < 4; ++k) std::memcpy(g + at.quants + 64 * k + 4 * r, qs + 4 * k, 4);
      if (!kFive) continue;
      const uint32_t qh = load_u32(blk + kHead);
      for (size_t i = 0; i < 4; ++i) {
        uint8_t bits = 0;
        for (size_t k = 0; k < 4; ++k) {
          for (size_t h = 0; h < 2; ++h)
            bits |= static_cast<uint8_t>(((qh >> (16 * h + 4 * k + i)) & 1u) << (2 * k + h));
        }
        lane_byte(g + at.extra + kMins, r, i) = bits;
      }
    }
  }
}

template <bool kFive>
void pack_q45_k(const uint8_t* const* rows, size_t nu, uint8_t* g) {
  constexpr size_t kIn = kFive ? 176 : 144, kOut = kFive ? 2816 : 2304, kHead = kFive ? 2560 : 2048;
  constexpr size_t kQs = kFive ? 48 : 16;
  each_block_row<kIn, kOut>(rows, nu, g, [](uint8_t* o, const uint8_t* blk, size_t r) {
    std::memcpy(o + kHead + 2 * r, blk, 2);
    std::memcpy(o + kHead + 32 + 2 * r, blk + 2, 2);
    spread_rows(o + kHead + 64, r, blk + 4, 12);
    for (size_t c = 0; c < 4; ++c) {
      for (size_t k = 0; k < 8; ++k) std::memcpy(o + 512 * c + 64 * k + 4 * r, blk + kQs + 32 * c + 4 * k, 4);
    }
    if (kFive) {
      for (size_t k = 0; k < 8; ++k) std::memcpy(o + 2048 + 64 * k + 4 * r, blk + 16 + 4 * k, 4);
    }
  });
}

void pack_q6_k(const uint8_t* const* rows, size_t nu, uint8_t* g) {
  each_block_row<210, 3360>(rows, nu, g, [](uint8_t* o, const uint8_t* blk, size_t r) {
    uint8_t v[256];  // the unsigned 6-bit codes, FORMATS.md §2 (q = v - 32)
    for (size_t h = 0; h < 2; ++h) {
      for (size_t gq = 0; gq < 4; ++gq) {
        const uint8_t* ql = blk + 64 * h + 32 * (gq % 2);
        const uint8_t* qh = blk + 128 + 32 * h;
        uint8_t* dst = v + 128 * h + 32 * gq;
        for (size_t l = 0; l < 32; ++l) {
          const int lo = gq < 2 ? (ql[l] & 0xF) : (ql[l] >> 4);
          dst[l] = static_cast<uint8_t>(lo | (((qh[l] >> (2 * gq)) & 3) << 4));
        }
      }
    }
    for (size_t j = 0; j < 8; ++j) {
      uint8_t* nib = o + 384 * j;
      uint8_t* top = nib + 256;
      const uint8_t* a = v + 32 * j;  // values 0..15 of the block; b = a + 16: values 16..31
      for (size_t y = 0; y < 2; ++y) {
        for (size_t i = 0; i < 4; ++i) {
          const size_t z0 = 2 * y, z1 = 2 * y + 1;  // top fields k = 0, 1 (vector z0), 2, 3 (z1)
          lane_byte(top + 64 * y, r, i) =
              static_cast<uint8_t>((a[4 * z0 + i] >> 4) | ((a[16 + 4 * z0 + i] >> 4) << 2) |
                                   ((a[4 * z1 + i] >> 4) << 4) | ((a[16 + 4 * z1 + i] >> 4) << 6));
        }
      }
      for (size_t z = 0; z < 4; ++z) {
        for (size_t i = 0; i < 4; ++i) {
          lane_byte(nib + 64 * z, r, i) =
              static_cast<uint8_t>((a[4 * z + i] & 0xF) | ((a[16 + 4 * z + i] & 0xF) << 4));
        }
      }
    }
    spread_rows(o + 3072, r, blk + 192, 16);
    std::memcpy(o + 3328 + 2 * r, blk + 208, 2);
  });
}

void pack_q3_k(const uint8_t* const* rows, size_t nu, uint8_t* g) {
  each_block_row<110, 1760>(rows, nu, g, [](uint8_t* o, const uint8_t* blk, size_t r) {
    uint8_t v[256];  // the unsigned 3-bit codes, FORMATS.md §2.7.5 (q = v - 4)
    for (size_t h = 0; h < 2; ++h) {
      for (size_t gq = 0; gq < 4; ++gq) {
        for (size_t l = 0; l < 32; ++l) {
          const int q2 = (blk[32 + 32 * h + l] >> (2 * gq)) & 3, hb = (blk[l] >> (4 * h + gq)) & 1;
          v[128 * h + 32 * gq + l] = static_cast<uint8_t>(q2 | (hb << 2));
        }
      }
    }
    for (size_t j = 0; j < 8; ++j) {
      uint8_t* c = o + 192 * j;
      for (size_t i = 0; i < 4; ++i) {
        auto q = [&](size_t k) { return static_cast<unsigned>(v[32 * j + 4 * k + i]); };
        lane_byte(c, r, i) = static_cast<uint8_t>(q(0) | (q(1) << 3) | ((q(6) & 3) << 6));
        lane_byte(c + 64, r, i) = static_cast<uint8_t>(q(2) | (q(3) << 3) | ((q(7) & 3) << 6));
        lane_byte(c + 128, r, i) = static_cast<uint8_t>(q(4) | (q(5) << 3) | ((q(6) >> 2) << 6) | ((q(7) >> 2) << 7));
      }
    }
    spread_rows(o + 1536, r, blk + 96, 12);
    std::memcpy(o + 1728 + 2 * r, blk + 108, 2);
  });
}

void pack_q2_k(const uint8_t* const* rows, size_t nu, uint8_t* g) {
  each_block_row<84, 1344>(rows, nu, g, [](uint8_t* o, const uint8_t* blk, size_t r) {
    uint8_t v[256];  // the 2-bit codes, FORMATS.md §2.7.4
    for (size_t h = 0; h < 2; ++h) {
      for (size_t gq = 0; gq < 4; ++gq) {
        for (size_t l = 0; l < 32; ++l) v[128 * h + 32 * gq + l] = (blk[16 + 32 * h + l] >> (2 * gq)) & 3;
      }
    }
    for (size_t j = 0; j < 8; ++j) {
      for (size_t y = 0; y < 2; ++y) {
        for (size_t i = 0; i < 4; ++i) {
          unsigned bits = 0;
          for (size_t z = 0; z < 4; ++z) bits |= static_cast<unsigned>(v[32 * j + 16 * y + 4 * z + i]) << (2 * z);
          lane_byte(o + 128 * j + 64 * y, r, i) = static_cast<uint8_t>(bits);
        }
      }
    }
    spread_rows(o + 1024, r, blk, 16);
    std::memcpy(o + 1280 + 2 * r, blk + 80, 2);
    std::memcpy(o + 1312 + 2 * r, blk + 82, 2);
  });
}

void pack_iq4_xs(const uint8_t* const* rows, size_t nu, uint8_t* g) {
  each_block_row<136, 2176>(rows, nu, g, [](uint8_t* o, const uint8_t* blk, size_t r) {
    for (size_t b = 0; b < 8; ++b) {
      for (size_t k = 0; k < 4; ++k) std::memcpy(o + 256 * b + 64 * k + 4 * r, blk + 8 + 16 * b + 4 * k, 4);
    }
    std::memcpy(o + 2048 + 2 * r, blk, 2);
    spread_rows(o + 2080, r, blk + 2, 6);
  });
}

// F16 / BF16: the group's four runs of 4 rows, each run's rows interleaved by 32-byte chunks.
void pack_h16_fours(const uint8_t* const* rows, size_t row_bytes, uint8_t* g) {
  for (size_t q = 0; q < kRows / 4; ++q) {
    uint8_t* run = g + 4 * q * row_bytes;
    for (size_t s = 0; s < row_bytes / 32; ++s) {
      for (size_t j = 0; j < 4; ++j) std::memcpy(run + 128 * s + 32 * j, rows[4 * q + j] + 32 * s, 32);
    }
  }
}

}  // namespace

bool layout_has(DType t) {
  switch (t) {
    case DType::q8_0:
    case DType::q4_0:
    case DType::iq4_nl:
    case DType::q5_0:
    case DType::q4_1:
    case DType::q5_1:
    case DType::q4_k:
    case DType::q5_k:
    case DType::q6_k:
    case DType::q3_k:
    case DType::q2_k:
    case DType::iq4_xs:
    case DType::f16:
    case DType::bf16:
      return true;
    default:
      return false;
  }
}

size_t group_bytes(DType t, size_t n_cols) {
  if (!layout_has(t)) return 0;
  const DTypeInfo& info = *dtype_info(static_cast<uint32_t>(t));
  const size_t unit = info.block_elems == 1 ? 16 : info.block_elems;  // F16 / BF16: 16-column chunks
  if (n_cols == 0 || n_cols % unit != 0) return 0;
  return kRows * dtype_row_bytes(info, n_cols);
}

void pack(DType t, const void* data, size_t n_rows, size_t n_cols, void* dst) {
  const size_t gb = group_bytes(t, n_cols);
  if (gb == 0 || n_rows % kRows != 0) {
    throw std::invalid_argument("pack_weights: no packed form for " + dtype_label(t) + " " + std::to_string(n_rows) +
                                "x" + std::to_string(n_cols));
  }
  const size_t row_bytes = gb / kRows;
  const size_t nb = n_cols / 32, nu = n_cols / 256;
  const auto* src = static_cast<const uint8_t*>(data);
  auto* out = static_cast<uint8_t*>(dst);
  for (size_t g = 0; g < n_rows / kRows; ++g) {
    const uint8_t* rows[kRows];
    for (size_t r = 0; r < kRows; ++r) rows[r] = src + (kRows * g + r) * row_bytes;
    uint8_t* o = out + g * gb;
    switch (t) {
      case DType::q8_0:
        pack_q8_0(rows, nb, o);
        break;
      case DType::q4_0:
      case DType::iq4_nl:  // Q4_0's bytes: only the code → value map differs
        pack_q45_01<false, false>(rows, nb, o);
        break;
      case DType::q5_0:
        pack_q45_01<true, false>(rows, nb, o);
        break;
      case DType::q4_1:
        pack_q45_01<false, true>(rows, nb, o);
        break;
      case DType::q5_1:
        pack_q45_01<true, true>(rows, nb, o);
        break;
      case DType::q4_k:
        pack_q45_k<false>(rows, nu, o);
        break;
      case DType::q5_k:
        pack_q45_k<true>(rows, nu, o);
        break;
      case DType::q6_k:
        pack_q6_k(rows, nu, o);
        break;
      case DType::q3_k:
        pack_q3_k(rows, nu, o);
        break;
      case DType::q2_k:
        pack_q2_k(rows, nu, o);
        break;
      case DType::iq4_xs:
        pack_iq4_xs(rows, nu, o);
        break;
      case DType::f16:
      case DType::bf16:
        pack_h16_fours(rows, row_bytes, o);
        break;
      default:
        throw_unsupported("pack_weights", t);
    }
  }
}

}  // namespace alap::kernels::packed
