// Constants and small helpers shared by the GGUF reader and writer (FORMATS.md §1).
// Private to core/gguf: not part of the public API.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/gguf/gguf.h"

namespace alap::gguf::detail {

inline constexpr uint8_t kMagic[4] = {'G', 'G', 'U', 'F'};
inline constexpr uint32_t kWriteVersion = 3;
inline constexpr uint64_t kDefaultAlignment = 32;
inline constexpr uint64_t kMaxStringBytes = uint64_t{1} << 30;  // llama.cpp's cap
inline constexpr uint64_t kMaxArrayElems = uint64_t{1} << 30;   // llama.cpp's cap
inline constexpr uint64_t kMaxKeyBytes = 65535;                  // spec
inline constexpr int kMaxArrayDepth = 32;                        // nested arrays (stack guard)
inline constexpr uint32_t kMaxDims = 4;

inline bool is_valid_value_type(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::f64); }

// Encoded size of a fixed-size value type; for strings / arrays the smallest possible encoding
// (u64 length; u32 type + u64 count), used to bound counts by the bytes left.
inline uint64_t min_encoded_size(ValueType t) {
  switch (t) {
    case ValueType::u8:
    case ValueType::i8:
    case ValueType::boolean: return 1;
    case ValueType::u16:
    case ValueType::i16: return 2;
    case ValueType::u32:
    case ValueType::i32:
    case ValueType::f32: return 4;
    case ValueType::u64:
    case ValueType::i64:
    case ValueType::f64: return 8;
    case ValueType::string: return 8;
    case ValueType::array: return 12;
  }
  return 1;
}

inline bool is_integer_type(ValueType t) {
  switch (t) {
    case ValueType::u8:
    case ValueType::i8:
    case ValueType::u16:
    case ValueType::i16:
    case ValueType::u32:
    case ValueType::i32:
    case ValueType::u64:
    case ValueType::i64: return true;
    default: return false;
  }
}

// Keys: non-empty, printable ASCII, at most 65535 bytes. Returns an error text or nullptr.
inline const char* key_problem(std::string_view key) {
  if (key.empty()) return "empty key";
  if (key.size() > kMaxKeyBytes) return "key longer than 65535 bytes";
  for (unsigned char c : key) {
    if (c < 0x20 || c > 0x7e) return "key is not printable ASCII";
  }
  return nullptr;
}

inline bool is_power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace alap::gguf::detail
