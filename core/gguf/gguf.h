// GGUF files: a validated, memory-mapped reader and a writer (FORMATS.md §1).
// The reader checks every count, offset and size against the file before use; anything
// malformed throws gguf::Error naming the file, the byte offset and what is wrong.
//
//   auto file = alap::gguf::File::open("model.gguf");
//   std::string arch = file.get_string("general.architecture");
//   const alap::gguf::TensorInfo* t = file.find_tensor("token_embd.weight");
//   // t->data points into the mapping; t->ne[0] is the contiguous dimension.
//
//   alap::gguf::Writer w;
//   w.set("general.architecture", alap::gguf::Value::string("llama"));
//   w.add_tensor("x", alap::kernels::DType::f32, {4, 2}, bytes);
//   w.write_file("out.gguf");
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "alap/kernels/dtype.h"

namespace alap::gguf {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ValueType : uint32_t {
  u8 = 0,
  i8 = 1,
  u16 = 2,
  i16 = 3,
  u32 = 4,
  i32 = 5,
  f32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  u64 = 10,
  i64 = 11,
  f64 = 12,
};

const char* value_type_name(ValueType t);

// One metadata value: a scalar, a string, or an array (possibly of arrays).
class Value {
 public:
  Value() = default;

  static Value u8(uint8_t v);
  static Value i8(int8_t v);
  static Value u16(uint16_t v);
  static Value i16(int16_t v);
  static Value u32(uint32_t v);
  static Value i32(int32_t v);
  static Value u64(uint64_t v);
  static Value i64(int64_t v);
  static Value f32(float v);
  static Value f64(double v);
  static Value boolean(bool v);
  static Value string(std::string v);
  static Value array_of_strings(std::vector<std::string> v);
  static Value array_of_i32(std::vector<int32_t> v);
  static Value array_of_f32(std::vector<float> v);
  static Value array_of(ValueType elem_type, std::vector<Value> items);  // any element type, nested too

  ValueType type() const { return type_; }

  // Scalars. Lenient where lossless: to_int accepts every integer type (and bool) whose value
  // fits int64; to_float accepts f32, f64 and integers. Empty when the type does not fit.
  std::optional<int64_t> to_int() const;
  std::optional<uint64_t> to_uint() const;  // integers >= 0 only
  std::optional<double> to_float() const;
  std::optional<bool> to_bool() const;
  const std::string* to_string() const;  // nullptr unless type() == string

  // Arrays (type() == array).
  ValueType elem_type() const { return elem_type_; }
  size_t size() const;                           // number of elements
  const std::vector<std::string>* strings() const;  // ARRAY of STRING, else nullptr
  std::optional<std::vector<int64_t>> ints() const;   // ARRAY of any integer type
  std::optional<std::vector<float>> floats() const;   // ARRAY of f32/f64 (or integers)
  std::span<const Value> items() const;  // ARRAY of ARRAY (nested); empty otherwise

 private:
  friend class File;
  friend class Writer;
  ValueType type_ = ValueType::u8;
  ValueType elem_type_ = ValueType::u8;
  uint64_t bits_ = 0;  // scalar payload (integers, floats as bit patterns, bool)
  std::string str_;
  std::vector<std::string> strs_;
  std::vector<int64_t> ints_;  // integer array elements, sign-extended
  std::vector<uint64_t> uints_;  // elements of a u64 array (which may not fit int64)
  std::vector<double> floats_;
  std::vector<Value> items_;
};

struct TensorInfo {
  std::string name;
  uint32_t n_dims = 0;
  std::array<int64_t, 4> ne{1, 1, 1, 1};  // ne[0] contiguous; missing dims are 1
  kernels::DType type = kernels::DType::f32;
  uint64_t offset = 0;     // relative to the data section
  uint64_t n_bytes = 0;    // exact size of the data
  const uint8_t* data = nullptr;  // into the mapping (reader) or nullptr (writer)

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  const char* type_name() const;
};

struct KeyValue {
  std::string key;
  Value value;
};

// A parsed GGUF file, backed by a read-only memory mapping that lives as long as the File.
class File {
 public:
  // Maps and validates a file. Throws Error("<path>: offset N: <what>") on anything malformed.
  static File open(const std::filesystem::path& path);
  // Parses bytes held in memory (tests, fuzzing); `name` is used in error messages.
  static File from_bytes(std::vector<uint8_t> bytes, std::string name = "<memory>");

  File(File&&) noexcept;
  File& operator=(File&&) noexcept;
  ~File();

  const std::string& name() const;
  uint32_t version() const;
  uint64_t file_size() const;
  uint64_t alignment() const;
  uint64_t data_offset() const;  // absolute offset of the data section

  const std::vector<KeyValue>& metadata() const;
  const Value* find(std::string_view key) const;  // nullptr when absent

  // Typed getters. The required forms throw Error naming the key when it is absent or of
  // the wrong type; the optional forms return empty when absent and throw when mistyped.
  std::string get_string(std::string_view key) const;
  int64_t get_int(std::string_view key) const;
  double get_float(std::string_view key) const;
  std::optional<std::string> opt_string(std::string_view key) const;
  std::optional<int64_t> opt_int(std::string_view key) const;
  std::optional<double> opt_float(std::string_view key) const;
  std::optional<bool> opt_bool(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const;
  const TensorInfo* find_tensor(std::string_view name) const;  // nullptr when absent

  // Things that are legal but unusual (unexpected tensor order, ...), for the caller to show.
  const std::vector<std::string>& warnings() const;

  // Tells the system that the bytes [p, p + n) of a mapped file will not be read for a while, so
  // their pages leave this process's memory (a later read maps them again from the file). For
  // weights the CPU engine has copied into another layout. Does nothing for from_bytes files or
  // for a range outside the mapping; only whole pages inside the range are released.
  void release_pages(const void* p, uint64_t n) const;

 private:
  struct Impl;
  explicit File(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Builds a GGUF v3 file: metadata in insertion order, tensors packed in order, each padded to
// the alignment (general.alignment if set as u32, else 32).
class Writer {
 public:
  void set(std::string key, Value value);  // replaces an earlier value of the same key
  // data must hold exactly the bytes of a tensor of this type and shape (checked).
  void add_tensor(std::string name, kernels::DType type, std::vector<int64_t> ne, std::span<const uint8_t> data);

  std::vector<uint8_t> to_bytes() const;
  void write_file(const std::filesystem::path& path) const;  // writes to a temporary, then renames

 private:
  // Appends the encoding of v without its type tag (arrays: element type, count, elements).
  static void encode_value(std::vector<uint8_t>& out, const Value& v);
  struct PendingTensor {
    std::string name;
    kernels::DType type;
    std::vector<int64_t> ne;
    std::vector<uint8_t> data;
  };
  std::vector<KeyValue> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace alap::gguf
