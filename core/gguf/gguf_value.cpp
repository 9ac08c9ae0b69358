// gguf::Value: construction and lenient-but-lossless conversions of GGUF metadata values.
// Not the parser (gguf_reader.cpp) nor the encoder (gguf_writer.cpp).
#include <bit>
#include <cmath>
#include <limits>

#include "core/gguf/gguf.h"
#include "core/gguf/gguf_internal.h"

namespace alap::gguf {

const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::u8: return "u8";
    case ValueType::i8: return "i8";
    case ValueType::u16: return "u16";
    case ValueType::i16: return "i16";
    case ValueType::u32: return "u32";
    case ValueType::i32: return "i32";
    case ValueType::f32: return "f32";
    case ValueType::boolean: return "bool";
    case ValueType::string: return "string";
    case ValueType::array: return "array";
    case ValueType::u64: return "u64";
    case ValueType::i64: return "i64";
    case ValueType::f64: return "f64";
  }
  return "unknown";
}

namespace {

bool is_signed(ValueType t) {
  return t == ValueType::i8 || t == ValueType::i16 || t == ValueType::i32 || t == ValueType::i64;
}

}  // namespace

// Scalars keep their payload in bits_: signed integers sign-extended to 64 bits, unsigned ones
// zero-extended, f32 / f64 as their bit patterns, bool as 0 / 1.
#define ALAP_GGUF_SCALAR(fn, T, vt, expr) \
  Value Value::fn(T v) {                  \
    Value r;                              \
    r.type_ = ValueType::vt;              \
    r.bits_ = (expr);                     \
    return r;                             \
  }
ALAP_GGUF_SCALAR(u8, uint8_t, u8, v)
ALAP_GGUF_SCALAR(i8, int8_t, i8, static_cast<uint64_t>(static_cast<int64_t>(v)))
ALAP_GGUF_SCALAR(u16, uint16_t, u16, v)
ALAP_GGUF_SCALAR(i16, int16_t, i16, static_cast<uint64_t>(static_cast<int64_t>(v)))
ALAP_GGUF_SCALAR(u32, uint32_t, u32, v)
ALAP_GGUF_SCALAR(i32, int32_t, i32, static_cast<uint64_t>(static_cast<int64_t>(v)))
ALAP_GGUF_SCALAR(u64, uint64_t, u64, v)
ALAP_GGUF_SCALAR(i64, int64_t, i64, static_cast<uint64_t>(v))
ALAP_GGUF_SCALAR(f32, float, f32, std::bit_cast<uint32_t>(v))
ALAP_GGUF_SCALAR(f64, double, f64, std::bit_cast<uint64_t>(v))
ALAP_GGUF_SCALAR(boolean, bool, boolean, v ? 1u : 0u)
#undef ALAP_GGUF_SCALAR

Value Value::string(std::string v) {
  Value r;
  r.type_ = ValueType::string;
  r.str_ = std::move(v);
  return r;
}

Value Value::array_of_strings(std::vector<std::string> v) {
  Value r;
  r.type_ = ValueType::array;
  r.elem_type_ = ValueType::string;
  r.strs_ = std::move(v);
  return r;
}

Value Value::array_of_i32(std::vector<int32_t> v) {
  Value r;
  r.type_ = ValueType::array;
  r.elem_type_ = ValueType::i32;
  r.ints_.assign(v.begin(), v.end());
  return r;
}

Value Value::array_of_f32(std::vector<float> v) {
  Value r;
  r.type_ = ValueType::array;
  r.elem_type_ = ValueType::f32;
  r.floats_.assign(v.begin(), v.end());
  return r;
}

Value Value::array_of(ValueType elem_type, std::vector<Value> items) {
  if (!detail::is_valid_value_type(static_cast<uint32_t>(elem_type))) throw Error("array_of: invalid element type");
  Value r;
  r.type_ = ValueType::array;
  r.elem_type_ = elem_type;
  for (size_t i = 0; i < items.size(); ++i) {
    Value& it = items[i];
    if (it.type_ != elem_type) {
      throw Error(std::string("array_of: item ") + std::to_string(i) + " has type " + value_type_name(it.type_) +
                  ", expected " + value_type_name(elem_type));
    }
    switch (elem_type) {
      case ValueType::string: r.strs_.push_back(std::move(it.str_)); break;
      case ValueType::array: r.items_.push_back(std::move(it)); break;
      case ValueType::f32: r.floats_.push_back(std::bit_cast<float>(static_cast<uint32_t>(it.bits_))); break;
      case ValueType::f64: r.floats_.push_back(std::bit_cast<double>(it.bits_)); break;
      case ValueType::u64: r.uints_.push_back(it.bits_); break;
      default: r.ints_.push_back(static_cast<int64_t>(it.bits_)); break;  // already sign/zero-extended
    }
  }
  return r;
}

std::optional<int64_t> Value::to_int() const {
  if (type_ == ValueType::boolean) return static_cast<int64_t>(bits_);
  if (!detail::is_integer_type(type_)) return std::nullopt;
  if (type_ == ValueType::u64 && bits_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  return static_cast<int64_t>(bits_);
}

std::optional<uint64_t> Value::to_uint() const {
  if (!detail::is_integer_type(type_)) return std::nullopt;
  if (is_signed(type_) && static_cast<int64_t>(bits_) < 0) return std::nullopt;
  return bits_;
}

std::optional<double> Value::to_float() const {
  if (type_ == ValueType::f32) return std::bit_cast<float>(static_cast<uint32_t>(bits_));
  if (type_ == ValueType::f64) return std::bit_cast<double>(bits_);
  if (detail::is_integer_type(type_)) {
    return is_signed(type_) ? static_cast<double>(static_cast<int64_t>(bits_)) : static_cast<double>(bits_);
  }
  return std::nullopt;
}

std::optional<bool> Value::to_bool() const {
  if (type_ == ValueType::boolean) return bits_ != 0;
  if (detail::is_integer_type(type_) && (bits_ == 0 || bits_ == 1)) return bits_ == 1;
  return std::nullopt;
}

const std::string* Value::to_string() const { return type_ == ValueType::string ? &str_ : nullptr; }

size_t Value::size() const {
  if (type_ != ValueType::array) return 0;
  switch (elem_type_) {
    case ValueType::string: return strs_.size();
    case ValueType::array: return items_.size();
    case ValueType::f32:
    case ValueType::f64: return floats_.size();
    case ValueType::u64: return uints_.size();
    default: return ints_.size();
  }
}

const std::vector<std::string>* Value::strings() const {
  return type_ == ValueType::array && elem_type_ == ValueType::string ? &strs_ : nullptr;
}

std::optional<std::vector<int64_t>> Value::ints() const {
  if (type_ != ValueType::array) return std::nullopt;
  if (elem_type_ == ValueType::u64) {
    std::vector<int64_t> out;
    out.reserve(uints_.size());
    for (uint64_t u : uints_) {
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      out.push_back(static_cast<int64_t>(u));
    }
    return out;
  }
  if (detail::is_integer_type(elem_type_) || elem_type_ == ValueType::boolean) return ints_;
  return std::nullopt;
}

std::optional<std::vector<float>> Value::floats() const {
  if (type_ != ValueType::array) return std::nullopt;
  std::vector<float> out;
  if (elem_type_ == ValueType::f32 || elem_type_ == ValueType::f64) {
    out.reserve(floats_.size());
    for (double d : floats_) out.push_back(static_cast<float>(d));
  } else if (elem_type_ == ValueType::u64) {
    out.reserve(uints_.size());
    for (uint64_t u : uints_) out.push_back(static_cast<float>(u));
  } else if (detail::is_integer_type(elem_type_)) {
    out.reserve(ints_.size());
    for (int64_t i : ints_) out.push_back(static_cast<float>(i));
  } else {
    return std::nullopt;
  }
  return out;
}

std::span<const Value> Value::items() const {
  if (type_ != ValueType::array || elem_type_ != ValueType::array) return {};
  return items_;
}

}  // namespace alap::gguf
