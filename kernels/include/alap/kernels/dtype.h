// Element types of tensors (ggml type ids, FORMATS.md §1.8) and their block geometry.
// The table is the single source of block sizes for the GGUF reader and every kernel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::kernels {

enum class DType : uint32_t {
  f32 = 0,
  f16 = 1,
  q4_0 = 2,
  q4_1 = 3,
  q5_0 = 6,
  q5_1 = 7,
  q8_0 = 8,
  q8_1 = 9,
  q2_k = 10,
  q3_k = 11,
  q4_k = 12,
  q5_k = 13,
  q6_k = 14,
  q8_k = 15,
  iq2_xxs = 16,
  iq2_xs = 17,
  iq3_xxs = 18,
  iq1_s = 19,
  iq4_nl = 20,
  iq3_s = 21,
  iq2_s = 22,
  iq4_xs = 23,
  i8 = 24,
  i16 = 25,
  i32 = 26,
  i64 = 27,
  f64 = 28,
  iq1_m = 29,
  bf16 = 30,
  tq1_0 = 34,
  tq2_0 = 35,
  mxfp4 = 39,
  nvfp4 = 40,
  q1_0 = 41,
  q2_0 = 42,
};

struct DTypeInfo {
  const char* name;       // "Q4_K", "F16", ... as llama.cpp spells them
  uint32_t block_elems;   // elements per block (1 for plain types)
  uint32_t block_bytes;   // bytes per block
  bool weights_supported; // Alap can multiply weights of this type
};

// Geometry of a type id as found in a file; nullptr for ids that are unknown or removed (4, 5, 31-33, 36-38, >= 43).
const DTypeInfo* dtype_info(uint32_t id);

// Bytes of one row of n elements; n must be a multiple of the block size (checked by callers).
inline size_t dtype_row_bytes(const DTypeInfo& info, uint64_t n) {
  return static_cast<size_t>(n / info.block_elems) * info.block_bytes;
}

}  // namespace alap::kernels
