// gguf::File: maps a GGUF v2/v3 file (or takes bytes) and validates every field through a
// bounds-checked cursor before anything is used. Not the writer (gguf_writer.cpp).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "core/gguf/gguf.h"
#include "core/gguf/gguf_internal.h"

namespace alap::gguf {

using detail::kMaxArrayDepth;
using detail::kMaxArrayElems;
using detail::kMaxStringBytes;

struct File::Impl {
  std::string name;
  std::vector<uint8_t> owned;  // from_bytes
  void* map = nullptr;         // open(): the read-only mapping
  size_t map_size = 0;
  const uint8_t* base = nullptr;
  uint64_t size = 0;

  uint32_t version = 0;
  uint64_t alignment = detail::kDefaultAlignment;
  uint64_t data_offset = 0;
  std::vector<KeyValue> metadata;
  std::vector<uint64_t> kv_offsets;  // where each KV pair starts (for getter errors)
  std::map<std::string, size_t, std::less<>> kv_index;
  std::vector<TensorInfo> tensors;
  std::map<std::string, size_t, std::less<>> tensor_index;
  std::vector<std::string> warnings;

  ~Impl() {
    if (map) munmap(map, map_size);
  }

  [[noreturn]] void fail(uint64_t offset, const std::string& what) const {
    throw Error(name + ": offset " + std::to_string(offset) + ": " + what);
  }

  class Cursor;
  void parse();
  Value read_array(Cursor& c, int depth);
  Value read_value(Cursor& c, ValueType type, uint64_t at, int depth);
  [[noreturn]] void wrong_type(std::string_view key, uint64_t at, const Value& v, const char* want) const {
    fail(at, "key '" + std::string(key) + "' has type " + value_type_name(v.type()) + ", expected " + want);
  }
  const Value& require(std::string_view key) const;
  const Value* find(std::string_view key, uint64_t* offset) const;
};

// A read position in [0, size). Every read checks the bytes left first and names the field
// (and where it starts) when they run out.
class File::Impl::Cursor {
 public:
  explicit Cursor(const File::Impl& f) : f_(f) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return f_.size - pos_; }

  void need(uint64_t n, uint64_t at, const char* what) const {
    if (n > left()) {
      f_.fail(at, std::string("truncated ") + what + " (needs " + std::to_string(n) + " bytes, " +
                      std::to_string(left()) + " left)");
    }
  }

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), pos_, what);
    T v;
    std::memcpy(&v, f_.base + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;  // the host is little-endian (checked at compile time below)
  }

  // u64 length + bytes, capped and checked against the bytes left.
  std::string string(const char* what) {
    const uint64_t at = pos_;
    const uint64_t len = read<uint64_t>(what);
    if (len > kMaxStringBytes) {
      f_.fail(at, std::string(what) + " length " + std::to_string(len) + " exceeds the limit of 2^30 bytes");
    }
    if (len > left()) {
      f_.fail(at, std::string(what) + " length " + std::to_string(len) + " runs past the end of the file (" +
                      std::to_string(left()) + " bytes left)");
    }
    std::string s(reinterpret_cast<const char*>(f_.base + pos_), static_cast<size_t>(len));
    pos_ += len;
    return s;
  }

 private:
  const File::Impl& f_;
  uint64_t pos_ = 0;
};

namespace {
uint64_t align_up(uint64_t x, uint64_t align) { return x + (align - x % align) % align; }
}  // namespace

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");


// Reads an array body (element type, count, elements); `at` is where the array value starts.
Value File::Impl::read_array(Cursor& c, int depth) {
  const uint64_t at = c.pos();
  if (depth >= kMaxArrayDepth) fail(at, "arrays nested deeper than " + std::to_string(kMaxArrayDepth) + " levels");
  const uint32_t et = c.read<uint32_t>("array element type");
  if (!detail::is_valid_value_type(et)) fail(at, "array has unknown element type " + std::to_string(et));
  const auto elem = static_cast<ValueType>(et);
  const uint64_t count_at = c.pos();
  const uint64_t count = c.read<uint64_t>("array count");
  if (count > kMaxArrayElems) {
    fail(count_at, "array count " + std::to_string(count) + " exceeds the limit of 2^30 elements");
  }
  const uint64_t min_size = detail::min_encoded_size(elem);  // count <= 2^30, size <= 12: no overflow
  if (count * min_size > c.left()) {
    fail(count_at, "array of " + std::to_string(count) + " " + value_type_name(elem) +
                         " elements runs past the end of the file (" + std::to_string(c.left()) + " bytes left)");
  }
  Value v;
  v.type_ = ValueType::array;
  v.elem_type_ = elem;
  const auto n = static_cast<size_t>(count);
  switch (elem) {
    case ValueType::string:
      v.strs_.reserve(n);
      for (size_t i = 0; i < n; ++i) v.strs_.push_back(c.string("array string"));
      break;
    case ValueType::array:
      v.items_.reserve(n);
      for (size_t i = 0; i < n; ++i) v.items_.push_back(read_array(c, depth + 1));
      break;
    case ValueType::f32:
      v.floats_.reserve(n);
      for (size_t i = 0; i < n; ++i) v.floats_.push_back(c.read<float>("f32 element"));
      break;
    case ValueType::f64:
      v.floats_.reserve(n);
      for (size_t i = 0; i < n; ++i) v.floats_.push_back(c.read<double>("f64 element"));
      break;
    case ValueType::u64:
      v.uints_.reserve(n);
      for (size_t i = 0; i < n; ++i) v.uints_.push_back(c.read<uint64_t>("u64 element"));
      break;
    default:
      v.ints_.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        const Value s = read_value(c, elem, c.pos(), depth + 1);
        v.ints_.push_back(static_cast<int64_t>(s.bits_));
      }
      break;
  }
  return v;
}

Value File::Impl::read_value(Cursor& c, ValueType type, uint64_t at, int depth) {
  switch (type) {
    case ValueType::u8: return Value::u8(c.read<uint8_t>("u8 value"));
    case ValueType::i8: return Value::i8(c.read<int8_t>("i8 value"));
    case ValueType::u16: return Value::u16(c.read<uint16_t>("u16 value"));
    case ValueType::i16: return Value::i16(c.read<int16_t>("i16 value"));
    case ValueType::u32: return Value::u32(c.read<uint32_t>("u32 value"));
    case ValueType::i32: return Value::i32(c.read<int32_t>("i32 value"));
    case ValueType::u64: return Value::u64(c.read<uint64_t>("u64 value"));
    case ValueType::i64: return Value::i64(c.read<int64_t>("i64 value"));
    case ValueType::f32: return Value::f32(c.read<float>("f32 value"));
    case ValueType::f64: return Value::f64(c.read<double>("f64 value"));
    case ValueType::boolean: return Value::boolean(c.read<uint8_t>("bool value") != 0);  // llama.cpp: non-zero = true
    case ValueType::string: return Value::string(c.string("string value"));
    case ValueType::array: return read_array(c, depth);
  }
  fail(at, "unknown value type");
}

void File::Impl::parse() {
  Cursor c(*this);

  // Header (§1.2).
  c.need(4, 0, "header (magic)");
  if (std::memcmp(base, detail::kMagic, 4) != 0) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "%02x %02x %02x %02x", base[0], base[1], base[2], base[3]);
    fail(0, std::string("bad magic (") + hex + "), not a GGUF file");
  }
  c.read<uint32_t>("magic");
  version = c.read<uint32_t>("version");
  if (version == 1) fail(4, "GGUF version 1 is no longer supported (need 2 or 3)");
  if ((version & 0xFFFF) == 0 && version != 0) {
    fail(4, "version " + std::to_string(version) + " looks byte-swapped (big-endian file); only little-endian GGUF is supported");
  }
  if (version != 2 && version != 3) fail(4, "unsupported GGUF version " + std::to_string(version) + " (need 2 or 3)");
  const uint64_t tensor_count = c.read<uint64_t>("tensor count");
  if (tensor_count > static_cast<uint64_t>(INT64_MAX) || tensor_count > c.left() / 32) {
    fail(8, "tensor count " + std::to_string(tensor_count) + " is larger than the file can hold");
  }
  const uint64_t kv_count = c.read<uint64_t>("metadata count");
  if (kv_count > static_cast<uint64_t>(INT64_MAX) || kv_count > c.left() / 13) {
    fail(16, "metadata count " + std::to_string(kv_count) + " is larger than the file can hold");
  }

  // Metadata (§1.3, §1.4).
  bool alignment_set = false;
  for (uint64_t i = 0; i < kv_count; ++i) {
    const uint64_t at = c.pos();
    std::string key = c.string("key");
    if (const char* problem = detail::key_problem(key)) fail(at, std::string(problem) + " in metadata pair " + std::to_string(i));
    if (kv_index.count(key)) fail(at, "duplicate key '" + key + "'");
    const uint64_t type_at = c.pos();
    const uint32_t t = c.read<uint32_t>("value type");
    if (!detail::is_valid_value_type(t)) fail(type_at, "key '" + key + "' has unknown value type " + std::to_string(t));
    const uint64_t value_at = c.pos();
    Value v = read_value(c, static_cast<ValueType>(t), value_at, 0);
    if (key == "general.alignment") {
      if (v.type() != ValueType::u32) {
        fail(type_at, std::string("general.alignment must be u32, not ") + value_type_name(v.type()));
      }
      if (!detail::is_power_of_two(v.bits_)) {
        fail(value_at, "general.alignment " + std::to_string(v.bits_) + " is not a power of two");
      }
      alignment = v.bits_;
      alignment_set = true;
    }
    kv_index.emplace(key, metadata.size());
    kv_offsets.push_back(at);
    metadata.push_back(KeyValue{std::move(key), std::move(v)});
  }
  (void)alignment_set;

  // Tensor infos (§1.5).
  std::vector<uint64_t> offset_field_at;
  tensors.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    const uint64_t at = c.pos();
    TensorInfo t;
    t.name = c.string("tensor name");
    if (t.name.empty()) fail(at, "tensor " + std::to_string(i) + " has an empty name");
    if (tensor_index.count(t.name)) fail(at, "duplicate tensor name '" + t.name + "'");
    const std::string who = "tensor '" + t.name + "'";
    const uint64_t dims_at = c.pos();
    t.n_dims = c.read<uint32_t>("tensor n_dims");
    if (t.n_dims < 1 || t.n_dims > detail::kMaxDims) {
      fail(dims_at, who + " has n_dims " + std::to_string(t.n_dims) + " (must be 1..4)");
    }
    uint64_t n_elem = 1;
    for (uint32_t d = 0; d < t.n_dims; ++d) {
      const uint64_t ne_at = c.pos();
      const uint64_t ne = c.read<uint64_t>("tensor dimension");
      if (ne > static_cast<uint64_t>(INT64_MAX)) fail(ne_at, who + " has a negative dimension ne[" + std::to_string(d) + "]");
      if (__builtin_mul_overflow(n_elem, ne, &n_elem) || n_elem > static_cast<uint64_t>(INT64_MAX)) {
        fail(ne_at, who + " has too many elements (size overflows)");
      }
      t.ne[d] = static_cast<int64_t>(ne);
    }
    const uint64_t type_at = c.pos();
    const uint32_t type_id = c.read<uint32_t>("tensor type");
    const kernels::DTypeInfo* info = kernels::dtype_info(type_id);
    if (!info) fail(type_at, who + " has unknown type id " + std::to_string(type_id));
    t.type = static_cast<kernels::DType>(type_id);
    if (static_cast<uint64_t>(t.ne[0]) % info->block_elems != 0) {
      fail(dims_at, who + " has ne[0] = " + std::to_string(t.ne[0]) + ", not a multiple of the " + info->name +
                        " block size " + std::to_string(info->block_elems));
    }
    uint64_t bytes = (static_cast<uint64_t>(t.ne[0]) / info->block_elems) * info->block_bytes;
    for (int d = 1; d < 4; ++d) {
      if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(t.ne[d]), &bytes)) {
        fail(dims_at, who + " byte size overflows");
      }
    }
    t.n_bytes = bytes;
    const uint64_t off_at = c.pos();
    t.offset = c.read<uint64_t>("tensor offset");
    if (t.offset % alignment != 0) {
      fail(off_at, who + " has offset " + std::to_string(t.offset) + ", not a multiple of the alignment " +
                       std::to_string(alignment));
    }
    offset_field_at.push_back(off_at);
    tensor_index.emplace(t.name, tensors.size());
    tensors.push_back(std::move(t));
  }

  // Data section (§1.6): only padded when there are tensors; vocab-only files end after the KVs.
  if (tensor_count == 0) {
    data_offset = c.pos();
    return;
  }
  data_offset = align_up(c.pos(), alignment);
  if (data_offset > size) {
    fail(c.pos(), "data section would start at " + std::to_string(data_offset) + ", past the end of the file (size " +
                      std::to_string(size) + ")");
  }
  const uint64_t data_size = size - data_offset;
  uint64_t expected = 0;
  bool order_warned = false;
  uint64_t max_end = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    TensorInfo& t = tensors[i];
    if (t.offset > data_size || t.n_bytes > data_size - t.offset) {
      fail(offset_field_at[i], "tensor '" + t.name + "' data (offset " + std::to_string(t.offset) + ", " +
                                   std::to_string(t.n_bytes) + " bytes) lies outside the file (data section holds " +
                                   std::to_string(data_size) + " bytes)");
    }
    t.data = base + data_offset + t.offset;
    if (t.offset != expected && !order_warned) {
      warnings.push_back("tensor '" + t.name + "' has offset " + std::to_string(t.offset) + ", expected " +
                         std::to_string(expected) + " (tensor data not packed in info order)");
      order_warned = true;
    }
    expected = align_up(t.offset + t.n_bytes, alignment);  // in bounds, so no overflow
    max_end = std::max(max_end, t.offset + t.n_bytes);
  }
  // Overlapping tensors are legal for the format but unusual.
  std::vector<size_t> by_offset(tensors.size());
  for (size_t i = 0; i < by_offset.size(); ++i) by_offset[i] = i;
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) { return tensors[a].offset < tensors[b].offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& a = tensors[by_offset[i - 1]];
    const TensorInfo& b = tensors[by_offset[i]];
    if (a.n_bytes > 0 && b.n_bytes > 0 && a.offset + a.n_bytes > b.offset) {
      warnings.push_back("tensors '" + a.name + "' and '" + b.name + "' overlap");
      break;
    }
  }
  if (align_up(max_end, alignment) < data_size) {
    warnings.push_back(std::to_string(data_size - align_up(max_end, alignment)) + " unused bytes after the tensor data");
  }
}

const Value* File::Impl::find(std::string_view key, uint64_t* offset) const {
  auto it = kv_index.find(key);
  if (it == kv_index.end()) return nullptr;
  if (offset) *offset = kv_offsets[it->second];
  return &metadata[it->second].value;
}

const Value& File::Impl::require(std::string_view key) const {
  const Value* v = find(key, nullptr);
  if (!v) throw Error(name + ": missing key '" + std::string(key) + "'");
  return *v;
}

File File::open(const std::filesystem::path& path) {
  auto impl = std::make_unique<Impl>();
  impl->name = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(impl->name + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(impl->name + ": cannot stat: " + std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(impl->name + ": not a regular file");
  }
  impl->size = static_cast<uint64_t>(st.st_size);
  if (impl->size == 0) {
    ::close(fd);
    impl->fail(0, "empty file, not a GGUF file");
  }
  void* m = mmap(nullptr, static_cast<size_t>(impl->size), PROT_READ, MAP_PRIVATE, fd, 0);
  const int e = errno;
  ::close(fd);
  if (m == MAP_FAILED) throw Error(impl->name + ": cannot map: " + std::strerror(e));
  impl->map = m;
  impl->map_size = static_cast<size_t>(impl->size);
  impl->base = static_cast<const uint8_t*>(m);
  impl->parse();
  return File(std::move(impl));
}

File File::from_bytes(std::vector<uint8_t> bytes, std::string name) {
  auto impl = std::make_unique<Impl>();
  impl->name = std::move(name);
  impl->owned = std::move(bytes);
  impl->base = impl->owned.data();
  impl->size = impl->owned.size();
  impl->parse();
  return File(std::move(impl));
}

File::File(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

void File::release_pages(const void* p, uint64_t n) const {
  if (impl_->map == nullptr || p == nullptr || n == 0) return;
  const auto lo = reinterpret_cast<uintptr_t>(impl_->map);
  const auto a = reinterpret_cast<uintptr_t>(p);
  if (a < lo || a - lo > impl_->map_size || n > impl_->map_size - (a - lo)) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = (a + page - 1) / page * page, last = (a + n) / page * page;
  // MADV_DONTNEED on a private read-only file mapping drops the pages; they are read again on use.
  if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

const std::string& File::name() const { return impl_->name; }
uint32_t File::version() const { return impl_->version; }
uint64_t File::file_size() const { return impl_->size; }
uint64_t File::alignment() const { return impl_->alignment; }
uint64_t File::data_offset() const { return impl_->data_offset; }
const std::vector<KeyValue>& File::metadata() const { return impl_->metadata; }
const Value* File::find(std::string_view key) const { return impl_->find(key, nullptr); }
const std::vector<TensorInfo>& File::tensors() const { return impl_->tensors; }
const std::vector<std::string>& File::warnings() const { return impl_->warnings; }

const TensorInfo* File::find_tensor(std::string_view name) const {
  auto it = impl_->tensor_index.find(name);
  return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

std::string File::get_string(std::string_view key) const {
  auto s = opt_string(key);
  if (!s) impl_->require(key);
  return *s;
}

int64_t File::get_int(std::string_view key) const {
  auto v = opt_int(key);
  if (!v) impl_->require(key);
  return *v;
}

double File::get_float(std::string_view key) const {
  auto v = opt_float(key);
  if (!v) impl_->require(key);
  return *v;
}

std::optional<std::string> File::opt_string(std::string_view key) const {
  uint64_t at = 0;
  const Value* v = impl_->find(key, &at);
  if (!v) return std::nullopt;
  if (!v->to_string()) impl_->wrong_type(key, at, *v, "string");
  return *v->to_string();
}

std::optional<int64_t> File::opt_int(std::string_view key) const {
  uint64_t at = 0;
  const Value* v = impl_->find(key, &at);
  if (!v) return std::nullopt;
  auto i = v->to_int();
  if (!i) impl_->wrong_type(key, at, *v, "an integer that fits i64");
  return i;
}

std::optional<double> File::opt_float(std::string_view key) const {
  uint64_t at = 0;
  const Value* v = impl_->find(key, &at);
  if (!v) return std::nullopt;
  auto d = v->to_float();
  if (!d) impl_->wrong_type(key, at, *v, "a number");
  return d;
}

std::optional<bool> File::opt_bool(std::string_view key) const {
  uint64_t at = 0;
  const Value* v = impl_->find(key, &at);
  if (!v) return std::nullopt;
  auto b = v->to_bool();
  if (!b) impl_->wrong_type(key, at, *v, "bool");
  return b;
}

const char* TensorInfo::type_name() const {
  const kernels::DTypeInfo* info = kernels::dtype_info(static_cast<uint32_t>(type));
  return info ? info->name : "unknown";
}

}  // namespace alap::gguf
