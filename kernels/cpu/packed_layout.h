// Private to kernels/cpu: the row-interleaved ("packed") weight layout that pack_weights writes and
// the packed products read, and its plain-C++ packer. Not the products themselves (those are per
// ISA, e.g. avx512_vnni/packed_vnni.cpp); core never sees this header.
//
// A matrix of n_rows (a multiple of 16) rows is stored as n_rows/16 groups, one after another;
// group g holds rows 16g..16g+15 in group_bytes(n_cols) bytes, exactly 16 of the original rows'
// bytes. Inside a group every "quad" (4 consecutive values of one row) sits beside the same quad
// of the other 15 rows: 64 bytes, lane r (bytes 4r..4r+3) = row r, so one 512-bit vpdpbusd with
// the token's 4 activation bytes broadcast gives 16 rows' partial sums. Weights are the unsigned
// operand: Q8_0 quants are stored XOR 0x80 (q + 128), the others keep their unsigned codes.
//   Blocks of 32 (Q8_0, Q4_0, Q5_0, Q4_1, Q5_1, IQ4_NL) go in pairs (2b, 2b+1; a last odd block alone),
//   each unit [its blocks' 16 fp16 scales][its blocks' extra bytes: Q4_1/Q5_1 16 fp16 mins, then
//   Q5_0/Q5_1 a fifth-bit vector][its blocks' quant vectors], so one stream, 64-byte aligned per
//   pair (block_at gives the offsets):
//   Q8_0: 8 quant vectors a block: quad j = values 32b+4j..+3             — 544 bytes a block
//   Q4_0: 4 vectors a block: vector k, lane r, byte i = the row's qs[4k+i] as stored (low nibble
//         value 4k+i, high nibble value 16+4k+i)                           — 288 bytes a block
//   IQ4_NL: Q4_0's layout byte for byte (the same block bytes; the codes index kIq4Values)
//   Q5_0: Q4_0's nibble vectors and 1 vector of fifth bits a block: lane r, byte i, bit 2k+h =
//         bit 4 of value 16h+4k+i                                          — 352 bytes a block
//   Q4_1: Q4_0's nibble vectors after 16 fp16 mins (value = d·q + m)       — 320 bytes a block
//   Q5_1: Q5_0's fifth-bit and nibble vectors after 16 fp16 mins          — 384 bytes a block
//   Q4_K (per super-block of 256, 2304 bytes): [32 vectors: chunk c (0..3), vector k (0..7),
//          lane r, byte i = the row's qs[32c+4k+i] (low nibble value 64c+4k+i, high nibble value
//          64c+32+4k+i)] [16 fp16 d] [16 fp16 dmin] [12 × 16 bytes: byte p of the rows' 12-byte
//          packed 6-bit scales, row r at 16p+r]
//   Q5_K (per super-block, 2816 bytes): Q4_K's 32 nibble vectors, then [8 vectors: vector k,
//          lane r, byte i = the row's qh[4k+i] (bit j = bit 4 of value 32j+4k+i)], then d, dmin
//          and scales as in Q4_K
//   Q6_K (per super-block, 3360 bytes): for each block j of 32 values: [4 nibble vectors: vector
//          z, lane r, byte i: low nibble = low 4 bits of value 32j+4z+i, high nibble = of value
//          32j+16+4z+i] then [2 vectors of top bits: vector y, lane r, byte i, bits 2k..2k+1 (k =
//          2(z-2y)+h) = top 2 bits of value 32j+16h+4z+i]; after the 8 blocks [16 × 16 int8
//          scales: scale n of row r at 16n+r] [16 fp16 d]
//   Q3_K (per super-block, 1760 bytes, the file's own size): for each block j of 32 values, 3
//          vectors of 3-bit codes u = q + 4 (0..7), lane r, byte i, c_k = u of value 32j+4k+i:
//          [c_0 | c_1<<3 | (c_6&3)<<6] [c_2 | c_3<<3 | (c_7&3)<<6] [c_4 | c_5<<3 | (c_6>>2)<<6 |
//          (c_7>>2)<<7]; after the 8 blocks [12 × 16 bytes: byte p of the rows' 12-byte packed
//          6-bit scales, row r at 16p+r] [16 fp16 d]
//   Q2_K (per super-block, 1344 bytes, the file's own size 16 × 84): for each block j of 32
//          values, 2 vectors of 2-bit codes (0..3): vector y, lane r, byte i, bits 2z..2z+1 = code
//          of value 32j+16y+4z+i (quad 4y+z; vector y is half block 2j+y); after the 8 blocks
//          [16 × 16 bytes: the file's scale byte n (low nibble scale, high nibble min) of row r at
//          16n+r] [16 fp16 d] [16 fp16 dmin]
//   IQ4_XS (per super-block, 2176 bytes, the file's own size 16 × 136): [32 vectors: sub-block b
//          (0..7), vector k (0..3), lane r, byte i = the row's qs[16b+4k+i] (low nibble value
//          32b+4k+i, high nibble value 32b+16+4k+i)] [16 fp16 d] [6 × 16 bytes: byte p of the rows'
//          scales_h (p = 0, 1) and scales_l (p = 2..5), row r at 16p+r]
//   F16 / BF16 (n_cols a multiple of 16; the file's size): not lanes of 16 rows but four runs of
//          4 rows, rows 4i..4i+3 of the group at 4i·(row bytes), each run 16-column chunks of 32
//          bytes in turn: chunk s of its row j at 128s + 32j. The one-token product reads four
//          rows at a time (each row's two FMA chains as in the file's layout, so the same bits):
//          one stream where the file's rows are four. Read through avx2::H16Rows (avx2/avx2_common.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "alap/kernels/dtype.h"

namespace alap::kernels::packed {

constexpr size_t kRows = 16;  // rows per group

// Bytes of one group of 16 rows of n_cols values of type t; 0 when t has no packed layout or
// n_cols is not a multiple of its block (of 16 for F16 / BF16).
size_t group_bytes(DType t, size_t n_cols);

// Where block b (of nb) of a group of a blocks-of-32 type starts: its scales, its extra bytes
// (Q4_1/Q5_1's mins, Q5_0/Q5_1's fifth bits; extra = bytes of them a block, else 0) and its quants
// (quant = bytes a block).
struct BlockAt {
  size_t scales, extra, quants;
};

// Q4_0 / Q5_0 / Q4_1 / Q5_1's extra bytes a block: Q4_1/Q5_1's 16 fp16 mins (q45_mins bytes), then
// Q5_0/Q5_1's fifth-bit vector (64 bytes).
constexpr size_t q45_mins(bool min) { return min ? 32 : 0; }
constexpr size_t q45_extra(bool five, bool min) { return q45_mins(min) + (five ? 64 : 0); }
// The bytes of a whole pair's unit.
constexpr size_t pair_bytes(size_t extra, size_t quant) { return 2 * (32 + extra + quant); }
// Where block k (0 or 1) of a unit of n blocks (2, or 1 for a last odd block) starts, from the
// unit's start: constants where its arguments are, as in the one-token passes over whole pairs.
constexpr BlockAt in_unit(size_t k, size_t n, size_t extra, size_t quant) {
  return BlockAt{32 * k, 32 * n + extra * k, (32 + extra) * n + quant * k};
}
// The same offsets for block b of nb from the group's start (the sums in this order: the per-block
// paths' code as measured; the asserts below bind it to in_unit).
constexpr BlockAt block_at(size_t b, size_t nb, size_t extra, size_t quant) {
  const size_t unit = b / 2 * 2 * (32 + extra + quant);
  const size_t n = b / 2 * 2 + 1 < nb ? 2 : 1, k = b % 2;
  return BlockAt{unit + 32 * k, unit + 32 * n + extra * k, unit + (32 + extra) * n + quant * k};
}
constexpr bool block_at_is_in_unit(size_t b, size_t nb, size_t extra, size_t quant) {
  const size_t unit = b / 2 * pair_bytes(extra, quant);
  const BlockAt a = block_at(b, nb, extra, quant), u = in_unit(b % 2, b + 1 < nb || b % 2 ? 2 : 1, extra, quant);
  return a.scales == unit + u.scales && a.extra == unit + u.extra && a.quants == unit + u.quants;
}
static_assert(block_at_is_in_unit(3, 8, 96, 256) && block_at_is_in_unit(6, 7, 0, 512) &&
              block_at_is_in_unit(5, 9, 32, 256));

// True for the types the layout above defines.
bool layout_has(DType t);

// Packs rows [0, n_rows) (n_rows a multiple of 16) of `data` into dst (n_rows/16 groups).
void pack(DType t, const void* data, size_t n_rows, size_t n_cols, void* dst);

}  // namespace alap::kernels::packed
