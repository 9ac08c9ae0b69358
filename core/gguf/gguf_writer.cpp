// gguf::Writer: encodes GGUF v3 (metadata in insertion order, tensors packed in order and each
// padded to the alignment with zero bytes) and writes files atomically. Not the reader.
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "core/gguf/gguf.h"
#include "core/gguf/gguf_internal.h"

namespace alap::gguf {

namespace {

class Out {
 public:
  template <typename T>
  void put(T v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));  // little-endian host (the reader asserts it)
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    append(s.data(), s.size());
  }
  void append(const void* p, size_t n) {
    if (n == 0) return;
    const size_t at = bytes.size();
    bytes.resize(at + n);
    std::memcpy(bytes.data() + at, p, n);
  }
  void pad_to(uint64_t align) {
    while (bytes.size() % align != 0) bytes.push_back(0);
  }
  std::vector<uint8_t> bytes;
};

uint64_t align_up(uint64_t x, uint64_t align) { return x + (align - x % align) % align; }

}  // namespace

void Writer::set(std::string key, Value value) {
  if (const char* problem = detail::key_problem(key)) throw Error("gguf writer: " + std::string(problem) + ": '" + key + "'");
  if (key == "general.alignment") {
    if (value.type() != ValueType::u32) throw Error("gguf writer: general.alignment must be u32");
    if (!detail::is_power_of_two(value.bits_)) throw Error("gguf writer: general.alignment must be a power of two");
  }
  for (auto& kv : metadata_) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  }
  metadata_.push_back(KeyValue{std::move(key), std::move(value)});
}

void Writer::add_tensor(std::string name, kernels::DType type, std::vector<int64_t> ne, std::span<const uint8_t> data) {
  const std::string who = "gguf writer: tensor '" + name + "'";
  if (name.empty()) throw Error("gguf writer: empty tensor name");
  for (const auto& t : tensors_) {
    if (t.name == name) throw Error(who + " added twice");
  }
  const kernels::DTypeInfo* info = kernels::dtype_info(static_cast<uint32_t>(type));
  if (!info) throw Error(who + ": unknown type id " + std::to_string(static_cast<uint32_t>(type)));
  if (ne.empty() || ne.size() > detail::kMaxDims) throw Error(who + ": needs 1..4 dimensions");
  for (int64_t d : ne) {
    if (d < 0) throw Error(who + ": negative dimension");
  }
  if (ne[0] % info->block_elems != 0) {
    throw Error(who + ": ne[0] = " + std::to_string(ne[0]) + " is not a multiple of the " + info->name +
                " block size " + std::to_string(info->block_elems));
  }
  uint64_t bytes = static_cast<uint64_t>(ne[0]) / info->block_elems * info->block_bytes;
  uint64_t elems = static_cast<uint64_t>(ne[0]);
  for (size_t d = 1; d < ne.size(); ++d) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(ne[d]), &bytes) ||
        __builtin_mul_overflow(elems, static_cast<uint64_t>(ne[d]), &elems) ||
        elems > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw Error(who + ": size overflows");
    }
  }
  if (data.size() != bytes) {
    throw Error(who + ": data holds " + std::to_string(data.size()) + " bytes, the shape needs " + std::to_string(bytes));
  }
  tensors_.push_back(PendingTensor{std::move(name), type, std::move(ne), std::vector<uint8_t>(data.begin(), data.end())});
}

void Writer::encode_value(std::vector<uint8_t>& out, const Value& v) {
  Out o;
  o.bytes = std::move(out);
  auto scalar = [&](ValueType t, uint64_t bits) {
    const uint64_t n = detail::min_encoded_size(t);
    for (uint64_t i = 0; i < n; ++i) o.bytes.push_back(static_cast<uint8_t>(bits >> (8 * i)));
  };
  switch (v.type_) {
    case ValueType::string: o.str(v.str_); break;
    case ValueType::array:
      o.put<uint32_t>(static_cast<uint32_t>(v.elem_type_));
      o.put<uint64_t>(v.size());
      switch (v.elem_type_) {
        case ValueType::string:
          for (const auto& s : v.strs_) o.str(s);
          break;
        case ValueType::array:
          out = std::move(o.bytes);
          for (const auto& item : v.items_) encode_value(out, item);
          return;
        case ValueType::f32:
          for (double d : v.floats_) o.put<float>(static_cast<float>(d));
          break;
        case ValueType::f64:
          for (double d : v.floats_) o.put<double>(d);
          break;
        case ValueType::u64:
          for (uint64_t u : v.uints_) o.put<uint64_t>(u);
          break;
        default:
          for (int64_t i : v.ints_) scalar(v.elem_type_, static_cast<uint64_t>(i));
          break;
      }
      break;
    default: scalar(v.type_, v.bits_); break;
  }
  out = std::move(o.bytes);
}

std::vector<uint8_t> Writer::to_bytes() const {
  uint64_t align = detail::kDefaultAlignment;
  for (const auto& kv : metadata_) {
    if (kv.key == "general.alignment") align = kv.value.bits_;
  }
  Out o;
  o.append(detail::kMagic, 4);
  o.put<uint32_t>(detail::kWriteVersion);
  o.put<uint64_t>(tensors_.size());
  o.put<uint64_t>(metadata_.size());
  for (const auto& kv : metadata_) {
    o.str(kv.key);
    o.put<uint32_t>(static_cast<uint32_t>(kv.value.type()));
    encode_value(o.bytes, kv.value);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    o.str(t.name);
    o.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
    for (int64_t d : t.ne) o.put<uint64_t>(static_cast<uint64_t>(d));
    o.put<uint32_t>(static_cast<uint32_t>(t.type));
    o.put<uint64_t>(offset);
    offset += align_up(t.data.size(), align);
  }
  if (tensors_.empty()) return std::move(o.bytes);  // vocab-only: ends after the KV section
  o.pad_to(align);
  o.bytes.reserve(o.bytes.size() + offset);
  for (const auto& t : tensors_) {
    o.append(t.data.data(), t.data.size());
    o.pad_to(align);
  }
  return std::move(o.bytes);
}

void Writer::write_file(const std::filesystem::path& path) const {
  const std::vector<uint8_t> bytes = to_bytes();
  const std::filesystem::path tmp = path.string() + ".tmp";
  auto fail = [&](const std::string& what, int err) {
    std::remove(tmp.c_str());
    throw Error(path.string() + ": " + what + ": " + std::strerror(err));
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error(tmp.string() + ": cannot create: " + std::strerror(errno));
  errno = 0;
  const size_t n = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  if (n != bytes.size()) {
    const int e = errno ? errno : EIO;
    std::fclose(f);
    fail("write failed after " + std::to_string(n) + " of " + std::to_string(bytes.size()) + " bytes", e);
  }
  if (std::fflush(f) != 0) {
    const int e = errno;
    std::fclose(f);
    fail("write failed", e);
  }
  if (std::fclose(f) != 0) fail("write failed on close", errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("cannot rename the temporary file into place", errno);
}

}  // namespace alap::gguf
