// Malformed GGUF inputs: each must throw gguf::Error whose message names the file, the offset of
// the bad field and what is wrong; no input (every prefix of a valid file included) may crash.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/gguf/gguf.h"

namespace alap::gguf {
namespace {

// Hand-assembles GGUF bytes, so tests can write what the Writer refuses to.
struct Raw {
  std::vector<uint8_t> b;
  Raw& u8(uint8_t v) { return put(&v, 1); }
  Raw& u32(uint32_t v) { return put(&v, 4); }
  Raw& u64(uint64_t v) { return put(&v, 8); }
  Raw& put(const void* p, size_t n) {
    const auto* c = static_cast<const uint8_t*>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
  Raw& str(const std::string& s) {
    u64(s.size());
    return put(s.data(), s.size());
  }
  Raw& header(uint64_t n_tensors, uint64_t n_kv, uint32_t version = 3) {
    put("GGUF", 4);
    u32(version);
    u64(n_tensors);
    return u64(n_kv);
  }
  Raw& kv_u32(const std::string& k, uint32_t v) { return str(k).u32(4).u32(v); }
  Raw& tensor(const std::string& name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
    str(name).u32(static_cast<uint32_t>(ne.size()));
    for (uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  Raw& pad(size_t align = 32) {
    while (b.size() % align) b.push_back(0);
    return *this;
  }
  Raw& zeros(size_t n) {
    b.resize(b.size() + n, 0);
    return *this;
  }
};

struct Case {
  const char* what;
  std::function<Raw()> make;
  std::string expect;  // substring of the error message
};

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    File::from_bytes(bytes, "bad.gguf");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GgufMalformed, Table) {
  const uint64_t big = uint64_t{1} << 40;
  const std::vector<Case> cases = {
      {"bad magic", [] { Raw r; r.put("GGUX", 4).u32(3).u64(0).u64(0); return r; }, "bad.gguf: offset 0: bad magic"},
      {"empty", [] { return Raw{}; }, "bad.gguf: offset 0: truncated header"},
      {"v1", [] { return Raw{}.header(0, 0, 1); }, "offset 4: GGUF version 1 is no longer supported"},
      {"v0", [] { return Raw{}.header(0, 0, 0); }, "offset 4: unsupported GGUF version 0"},
      {"v4", [] { return Raw{}.header(0, 0, 4); }, "offset 4: unsupported GGUF version 4"},
      {"byte-swapped", [] { return Raw{}.header(0, 0, 0x03000000); }, "offset 4: version 50331648 looks byte-swapped"},
      {"tensor count", [] { return Raw{}.header(uint64_t{1} << 62, 0); }, "offset 8: tensor count"},
      {"kv count", [] { return Raw{}.header(0, 1000); }, "offset 16: metadata count 1000"},
      {"huge key length", [=] { Raw r; r.header(0, 1).u64(big).zeros(64); return r; },
       "offset 24: key length 1099511627776 exceeds the limit of 2^30 bytes"},
      {"key past end", [] { Raw r; r.header(0, 1).u64(100).zeros(20); return r; },
       "offset 24: key length 100 runs past the end of the file"},
      {"huge string value", [=] { Raw r; r.header(0, 1).str("a.b").u32(8).u64(big).zeros(64); return r; },
       "offset 39: string value length 1099511627776 exceeds"},
      {"huge array count", [] { Raw r; r.header(0, 1).str("a.b").u32(9).u32(0).u64(uint64_t{1} << 31).zeros(64); return r; },
       "offset 43: array count 2147483648 exceeds the limit of 2^30 elements"},
      {"array past end", [] { Raw r; r.header(0, 1).str("a.b").u32(9).u32(4).u64(1000).zeros(64); return r; },
       "offset 43: array of 1000 u32 elements runs past the end of the file"},
      {"array string past end", [] { Raw r; r.header(0, 1).str("a.b").u32(9).u32(8).u64(2).str("x").u64(1u << 20).zeros(4); return r; },
       "array string length 1048576 runs past the end"},
      {"unknown value type", [] { Raw r; r.header(0, 1).str("a.b").u32(13).zeros(8); return r; },
       "offset 35: key 'a.b' has unknown value type 13"},
      {"unknown array element type", [] { Raw r; r.header(0, 1).str("a.b").u32(9).u32(77).u64(0); return r; },
       "offset 39: array has unknown element type 77"},
      {"nested too deep", [] {
         Raw r;
         r.header(0, 1).str("a.b").u32(9);
         for (int i = 0; i < 40; ++i) r.u32(9).u64(1);
         r.u32(0).u64(0);
         return r;
       }, "nested deeper than 32 levels"},
      {"duplicate key", [] { return Raw{}.header(0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2); }, "offset 43: duplicate key 'a.b'"},
      {"empty key", [] { return Raw{}.header(0, 1).kv_u32("", 1); }, "offset 24: empty key"},
      {"non-ASCII key", [] { return Raw{}.header(0, 1).kv_u32("k\xc3\xa9y", 1); }, "offset 24: key is not printable ASCII"},
      {"alignment type", [] { Raw r; r.header(0, 1).str("general.alignment").u32(10).u64(32); return r; },
       "offset 49: general.alignment must be u32, not u64"},
      {"alignment value", [] { return Raw{}.header(0, 1).kv_u32("general.alignment", 48); },
       "offset 53: general.alignment 48 is not a power of two"},
      {"alignment zero", [] { return Raw{}.header(0, 1).kv_u32("general.alignment", 0); },
       "general.alignment 0 is not a power of two"},
      {"n_dims 5", [] { Raw r; r.header(1, 0).tensor("t", {1, 1, 1, 1, 1}, 0, 0).pad().zeros(32); return r; },
       "offset 33: tensor 't' has n_dims 5 (must be 1..4)"},
      {"n_dims 0", [] { Raw r; r.header(1, 0).tensor("t", {}, 0, 0).pad().zeros(32); return r; }, "has n_dims 0"},
      {"unknown type id 4", [] { Raw r; r.header(1, 0).tensor("t", {32}, 4, 0).pad().zeros(32); return r; },
       "offset 45: tensor 't' has unknown type id 4"},
      {"unknown type id 43", [] { Raw r; r.header(1, 0).tensor("t", {32}, 43, 0).pad().zeros(32); return r; },
       "unknown type id 43"},
      {"negative dimension", [] { Raw r; r.header(1, 0).tensor("t", {1, uint64_t{1} << 63}, 0, 0).pad().zeros(32); return r; },
       "offset 45: tensor 't' has a negative dimension ne[1]"},
      {"element overflow", [] { Raw r; r.header(1, 0).tensor("t", {uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0).pad().zeros(32); return r; },
       "tensor 't' has too many elements"},
      {"byte size overflow", [] { Raw r; r.header(1, 0).tensor("t", {uint64_t{1} << 31, uint64_t{1} << 31}, 0, 0).pad().zeros(32); return r; },
       "tensor 't' byte size overflows"},
      {"ne0 not block multiple", [] { Raw r; r.header(1, 0).tensor("t", {48, 2}, 2, 0).pad().zeros(64); return r; },
       "offset 33: tensor 't' has ne[0] = 48, not a multiple of the Q4_0 block size 32"},
      {"misaligned offset", [] { Raw r; r.header(2, 0).tensor("a", {4}, 0, 0).tensor("b", {4}, 0, 8).pad().zeros(64); return r; },
       "offset 82: tensor 'b' has offset 8, not a multiple of the alignment 32"},
      {"offset outside file", [] { Raw r; r.header(1, 0).tensor("t", {8}, 0, 64).pad().zeros(64); return r; },
       "offset 49: tensor 't' data (offset 64, 32 bytes) lies outside the file (data section holds 64 bytes)"},
      {"data past end", [] { Raw r; r.header(1, 0).tensor("t", {64}, 0, 0).pad().zeros(100); return r; },
       "tensor 't' data (offset 0, 256 bytes) lies outside the file"},
      {"huge offset", [] { Raw r; r.header(1, 0).tensor("t", {8}, 0, ~uint64_t{0} - 31).pad().zeros(32); return r; },
       "lies outside the file"},
      {"duplicate tensor", [] { Raw r; r.header(2, 0).tensor("t", {8}, 0, 0).tensor("t", {8}, 0, 32).pad().zeros(64); return r; },
       "offset 57: duplicate tensor name 't'"},
      {"empty tensor name", [] { Raw r; r.header(1, 0).tensor("", {8}, 0, 0).pad().zeros(32); return r; },
       "offset 24: tensor 0 has an empty name"},
      {"no data section", [] { return Raw{}.header(1, 0).tensor("t", {0}, 0, 0); }, "data section would start at 64"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(c.make().b);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.what << ": got \"" << msg << "\", want \"" << c.expect << "\"";
    EXPECT_EQ(msg.rfind("bad.gguf: ", 0), 0u) << c.what << ": " << msg;
  }
}

TEST(GgufMalformed, EveryPrefixOfAValidFileThrows) {
  Writer w;
  w.set("general.architecture", Value::string("llama"));
  w.set("general.alignment", Value::u32(32));
  w.set("x.arr", Value::array_of(ValueType::array, {Value::array_of_strings({"a", "bc"}), Value::array_of_i32({7})}));
  w.set("x.f", Value::array_of_f32({1.0f, 2.0f}));
  w.set("x.b", Value::boolean(false));
  const std::vector<uint8_t> d8(8, 1), d34(34, 2);
  w.add_tensor("a", kernels::DType::f32, {2}, d8);
  w.add_tensor("b", kernels::DType::q8_0, {32}, d34);
  const auto bytes = w.to_bytes();
  ASSERT_NO_THROW(File::from_bytes(bytes));
  // The last tensor's end: the file is valid from there on (its final padding is optional).
  const File full = File::from_bytes(bytes);
  const size_t min_valid = full.data_offset() + full.tensors()[1].offset + 34;
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    if (n >= min_valid) {
      EXPECT_NO_THROW(File::from_bytes(prefix)) << n;
    } else {
      EXPECT_THROW(File::from_bytes(prefix), Error) << "prefix of " << n << " bytes";
    }
  }
}

TEST(GgufMalformed, SingleByteCorruptionsNeverCrash) {
  Writer w;
  w.set("general.architecture", Value::string("llama"));
  w.set("x.arr", Value::array_of(ValueType::array, {Value::array_of_strings({"a", "bc"})}));
  const std::vector<uint8_t> d(64, 3);
  w.add_tensor("a", kernels::DType::f16, {32}, d);
  const auto bytes = w.to_bytes();
  int errors = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{0x80}, uint8_t{0x7f}}) {
      auto b = bytes;
      b[i] = v;
      try {
        File::from_bytes(b);
      } catch (const Error&) {
        ++errors;
      }
    }
  }
  EXPECT_GT(errors, 100);  // most header/KV/info bytes matter
}

TEST(GgufMalformed, UnpackedOrderIsAWarning) {
  Raw r;
  r.header(2, 0).tensor("a", {8}, 0, 32).tensor("b", {8}, 0, 0).pad().zeros(64);
  const File f = File::from_bytes(r.b);
  ASSERT_EQ(f.warnings().size(), 1u);
  EXPECT_NE(f.warnings()[0].find("tensor 'a' has offset 32, expected 0"), std::string::npos) << f.warnings()[0];
  EXPECT_EQ(f.tensors()[0].data, f.tensors()[1].data + 32);
}

TEST(GgufMalformed, Version2IsAccepted) {
  Raw r;
  r.header(1, 1, 2).kv_u32("a.b", 5).tensor("t", {8}, 0, 0).pad().zeros(32);
  const File f = File::from_bytes(r.b);
  EXPECT_EQ(f.version(), 2u);
  EXPECT_EQ(f.get_int("a.b"), 5);
  EXPECT_EQ(f.data_offset(), 96u);
}

}  // namespace
}  // namespace alap::gguf
