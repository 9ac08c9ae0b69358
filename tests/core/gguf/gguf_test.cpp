// Round trips through core/gguf's writer and reader, and the real GGUF files of ../shared
// (FORMATS.md §1.7 test vector, vocab-only fixtures, the alap-eval-30m models).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include <unistd.h>

#include "core/gguf/gguf.h"
#include "tests/support/shared_fixtures.h"

namespace alap::gguf {
namespace {

using kernels::DType;

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

TEST(GgufRoundTrip, EveryScalarType) {
  Writer w;
  w.set("t.u8", Value::u8(255));
  w.set("t.i8", Value::i8(-128));
  w.set("t.u16", Value::u16(65535));
  w.set("t.i16", Value::i16(-32768));
  w.set("t.u32", Value::u32(4294967295u));
  w.set("t.i32", Value::i32(std::numeric_limits<int32_t>::min()));
  w.set("t.u64", Value::u64(std::numeric_limits<uint64_t>::max()));
  w.set("t.i64", Value::i64(std::numeric_limits<int64_t>::min()));
  w.set("t.f32", Value::f32(-1.5e-5f));
  w.set("t.f64", Value::f64(3.141592653589793));
  w.set("t.bool", Value::boolean(true));
  w.set("t.str", Value::string("আলাপ \"x\"\n"));
  w.set("t.empty", Value::string(""));
  const auto bytes = w.to_bytes();
  const File f = File::from_bytes(bytes, "scalars");
  EXPECT_EQ(f.version(), 3u);
  ASSERT_EQ(f.metadata().size(), 13u);
  EXPECT_EQ(f.metadata()[0].key, "t.u8");  // insertion order
  EXPECT_EQ(f.metadata()[12].key, "t.empty");
  EXPECT_EQ(f.find("t.u8")->type(), ValueType::u8);
  EXPECT_EQ(f.get_int("t.u8"), 255);
  EXPECT_EQ(f.get_int("t.i8"), -128);
  EXPECT_EQ(f.get_int("t.u16"), 65535);
  EXPECT_EQ(f.get_int("t.i16"), -32768);
  EXPECT_EQ(f.get_int("t.u32"), 4294967295LL);
  EXPECT_EQ(f.get_int("t.i32"), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(f.find("t.u64")->to_uint(), std::numeric_limits<uint64_t>::max());
  EXPECT_FALSE(f.find("t.u64")->to_int().has_value());  // does not fit int64
  EXPECT_EQ(f.get_int("t.i64"), std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(f.find("t.i64")->to_uint().has_value());
  EXPECT_EQ(f.find("t.f32")->type(), ValueType::f32);
  EXPECT_EQ(static_cast<float>(f.get_float("t.f32")), -1.5e-5f);
  EXPECT_EQ(f.get_float("t.f64"), 3.141592653589793);
  EXPECT_EQ(f.get_float("t.u16"), 65535.0);  // integers widen to float
  EXPECT_EQ(f.opt_bool("t.bool"), true);
  EXPECT_EQ(f.get_string("t.str"), "আলাপ \"x\"\n");
  EXPECT_EQ(f.get_string("t.empty"), "");
  EXPECT_EQ(f.tensors().size(), 0u);
  // Vocab-only layout: the file ends right after the KV section, unpadded.
  EXPECT_EQ(f.data_offset(), bytes.size());
  EXPECT_EQ(f.file_size(), bytes.size());
  // Exact encoding of the first pair: key, type tag, one byte.
  const uint8_t first[] = {4, 0, 0, 0, 0, 0, 0, 0, 't', '.', 'u', '8', 0, 0, 0, 0, 255};
  EXPECT_EQ(std::memcmp(bytes.data() + 24, first, sizeof first), 0);
}

TEST(GgufRoundTrip, ArraysIncludingNested) {
  Writer w;
  w.set("a.strs", Value::array_of_strings({"<unk>", "", "ন"}));
  w.set("a.i32", Value::array_of_i32({-1, 0, 2147483647}));
  w.set("a.f32", Value::array_of_f32({0.5f, -2.25f}));
  w.set("a.u8", Value::array_of(ValueType::u8, {Value::u8(1), Value::u8(200)}));
  w.set("a.i8", Value::array_of(ValueType::i8, {Value::i8(-5)}));
  w.set("a.u16", Value::array_of(ValueType::u16, {Value::u16(60000)}));
  w.set("a.i16", Value::array_of(ValueType::i16, {Value::i16(-30000)}));
  w.set("a.u32", Value::array_of(ValueType::u32, {Value::u32(4000000000u)}));
  w.set("a.u64", Value::array_of(ValueType::u64, {Value::u64(7), Value::u64(~uint64_t{0})}));
  w.set("a.i64", Value::array_of(ValueType::i64, {Value::i64(-9000000000LL)}));
  w.set("a.f64", Value::array_of(ValueType::f64, {Value::f64(1e300)}));
  w.set("a.bool", Value::array_of(ValueType::boolean, {Value::boolean(true), Value::boolean(false)}));
  w.set("a.empty", Value::array_of(ValueType::i32, {}));
  w.set("a.nested",
        Value::array_of(ValueType::array, {Value::array_of_i32({1, 2}), Value::array_of_i32({}),
                                           Value::array_of(ValueType::array, {Value::array_of_strings({"deep"})})}));
  const File f = File::from_bytes(w.to_bytes());
  const Value* strs = f.find("a.strs");
  ASSERT_NE(strs, nullptr);
  EXPECT_EQ(strs->type(), ValueType::array);
  EXPECT_EQ(strs->elem_type(), ValueType::string);
  EXPECT_EQ(*strs->strings(), (std::vector<std::string>{"<unk>", "", "ন"}));
  EXPECT_EQ(*f.find("a.i32")->ints(), (std::vector<int64_t>{-1, 0, 2147483647}));
  EXPECT_EQ(*f.find("a.f32")->floats(), (std::vector<float>{0.5f, -2.25f}));
  EXPECT_EQ(*f.find("a.u8")->ints(), (std::vector<int64_t>{1, 200}));
  EXPECT_EQ(*f.find("a.i8")->ints(), (std::vector<int64_t>{-5}));
  EXPECT_EQ(*f.find("a.u16")->ints(), (std::vector<int64_t>{60000}));
  EXPECT_EQ(*f.find("a.i16")->ints(), (std::vector<int64_t>{-30000}));
  EXPECT_EQ(*f.find("a.u32")->ints(), (std::vector<int64_t>{4000000000LL}));
  EXPECT_EQ(f.find("a.u64")->size(), 2u);
  EXPECT_FALSE(f.find("a.u64")->ints().has_value());  // 2^64-1 does not fit
  EXPECT_EQ(*f.find("a.i64")->ints(), (std::vector<int64_t>{-9000000000LL}));
  EXPECT_EQ(f.find("a.f64")->elem_type(), ValueType::f64);
  EXPECT_EQ(f.find("a.f64")->size(), 1u);
  EXPECT_EQ(*f.find("a.bool")->ints(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(f.find("a.empty")->size(), 0u);
  EXPECT_EQ(f.find("a.empty")->elem_type(), ValueType::i32);
  const Value* nested = f.find("a.nested");
  ASSERT_EQ(nested->items().size(), 3u);
  EXPECT_EQ(*nested->items()[0].ints(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(nested->items()[1].size(), 0u);
  ASSERT_EQ(nested->items()[2].items().size(), 1u);
  EXPECT_EQ(*nested->items()[2].items()[0].strings(), std::vector<std::string>{"deep"});
  EXPECT_EQ(f.find("a.i32")->items().size(), 0u);
  EXPECT_EQ(f.find("a.i32")->strings(), nullptr);
  EXPECT_FALSE(f.find("a.strs")->ints().has_value());
  // The reader's output re-encodes to the same bytes.
  Writer again;
  for (const auto& kv : f.metadata()) again.set(kv.key, kv.value);
  EXPECT_EQ(again.to_bytes(), w.to_bytes());
}

TEST(GgufRoundTrip, SetReplacesInPlace) {
  Writer w;
  w.set("a", Value::u32(1));
  w.set("b", Value::u32(2));
  w.set("a", Value::string("x"));
  const File f = File::from_bytes(w.to_bytes());
  ASSERT_EQ(f.metadata().size(), 2u);
  EXPECT_EQ(f.metadata()[0].key, "a");
  EXPECT_EQ(f.get_string("a"), "x");
}

TEST(GgufRoundTrip, EveryTensorTypeSize) {
  Writer w;
  std::map<std::string, std::vector<uint8_t>> data;
  std::map<std::string, uint64_t> want_bytes;
  int n = 0;
  for (uint32_t id = 0; id < 64; ++id) {
    const kernels::DTypeInfo* info = kernels::dtype_info(id);
    if (!info) continue;
    const std::string name = std::string("t.") + info->name;
    const int64_t ne0 = 2 * info->block_elems;
    const uint64_t bytes = 2ull * info->block_bytes * 3;  // [ne0, 3]
    data[name] = pattern(bytes, static_cast<uint8_t>(id));
    want_bytes[name] = bytes;
    w.add_tensor(name, static_cast<DType>(id), {ne0, 3}, data[name]);
    ++n;
  }
  EXPECT_EQ(n, 35);  // FORMATS.md §1.8 lists 35 valid ids
  const auto bytes = w.to_bytes();
  const File f = File::from_bytes(bytes);
  ASSERT_EQ(f.tensors().size(), static_cast<size_t>(n));
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.data_offset() % 32, 0u);
  uint64_t expect_offset = 0;
  for (const auto& t : f.tensors()) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.n_dims, 2u);
    EXPECT_EQ(t.ne[1], 3);
    EXPECT_EQ(t.ne[2], 1);
    EXPECT_EQ(t.n_bytes, want_bytes[t.name]);
    EXPECT_EQ(t.offset, expect_offset);
    EXPECT_EQ(std::string("t.") + t.type_name(), t.name);
    ASSERT_NE(t.data, nullptr);
    EXPECT_EQ(std::memcmp(t.data, data[t.name].data(), t.n_bytes), 0);
    expect_offset += (t.n_bytes + 31) / 32 * 32;
  }
  EXPECT_EQ(f.file_size(), f.data_offset() + expect_offset);  // last tensor padded too
  EXPECT_TRUE(f.warnings().empty());
  // Q4_K: 256 elements a block, 144 bytes.
  const TensorInfo* q4k = f.find_tensor("t.Q4_K");
  ASSERT_NE(q4k, nullptr);
  EXPECT_EQ(q4k->n_bytes, 2u * 144 * 3);
  EXPECT_EQ(q4k->n_elements(), 512 * 3);
  EXPECT_EQ(f.find_tensor("t.nope"), nullptr);
}

TEST(GgufRoundTrip, CustomAlignmentAndPadding) {
  Writer w;
  w.set("general.alignment", Value::u32(64));
  const auto a = pattern(12, 1);  // f32 [3]
  const auto b = pattern(4, 2);   // i8 [2, 2]
  w.add_tensor("a", DType::f32, {3}, a);
  w.add_tensor("b", DType::i8, {2, 2, 1, 1}, b);
  const auto bytes = w.to_bytes();
  const File f = File::from_bytes(bytes);
  EXPECT_EQ(f.alignment(), 64u);
  EXPECT_EQ(f.data_offset() % 64, 0u);
  EXPECT_EQ(f.tensors()[0].offset, 0u);
  EXPECT_EQ(f.tensors()[1].offset, 64u);
  EXPECT_EQ(f.tensors()[1].n_dims, 4u);
  EXPECT_EQ(bytes.size(), f.data_offset() + 128);
  for (size_t i = f.data_offset() + 12; i < f.data_offset() + 64; ++i) EXPECT_EQ(bytes[i], 0) << i;  // zero padding
}

TEST(GgufWriter, RefusesBadInput) {
  Writer w;
  const auto d = pattern(8, 0);
  EXPECT_THROW(w.add_tensor("x", DType::f32, {3}, d), Error);        // 12 bytes needed
  EXPECT_THROW(w.add_tensor("x", DType::q4_0, {16}, d), Error);      // not a block multiple
  EXPECT_THROW(w.add_tensor("x", DType::f32, {1, 1, 1, 1, 2}, d), Error);
  EXPECT_THROW(w.add_tensor("x", static_cast<DType>(4), {2}, d), Error);
  w.add_tensor("x", DType::f32, {2}, d);
  EXPECT_THROW(w.add_tensor("x", DType::f32, {2}, d), Error);  // duplicate
  EXPECT_THROW(w.set("", Value::u8(1)), Error);
  EXPECT_THROW(w.set("general.alignment", Value::u64(32)), Error);
  EXPECT_THROW(w.set("general.alignment", Value::u32(24)), Error);
  EXPECT_THROW(Value::array_of(ValueType::u8, {Value::i8(1)}), Error);
}

TEST(GgufWriter, WriteFileAtomicallyAndOpenWithMmap) {
  const auto dir = std::filesystem::temp_directory_path() / ("alap_gguf_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "m.gguf";
  Writer w;
  w.set("general.architecture", Value::string("llama"));
  const auto d = pattern(64, 9);
  w.add_tensor("w", DType::f16, {32}, d);
  w.write_file(path);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  {
    const File f = File::open(path);
    EXPECT_EQ(f.name(), path.string());
    EXPECT_EQ(f.get_string("general.architecture"), "llama");
    EXPECT_EQ(std::memcmp(f.find_tensor("w")->data, d.data(), 64), 0);
    File moved = File::from_bytes(w.to_bytes());
    moved = File::open(path);  // move-assign keeps the mapping valid
    EXPECT_EQ(std::memcmp(moved.find_tensor("w")->data, d.data(), 64), 0);
  }
  try {
    w.write_file(dir / "missing" / "x.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("x.gguf.tmp: cannot create"), std::string::npos) << e.what();
  }
  try {
    File::open(dir / "absent.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("absent.gguf: cannot open"), std::string::npos) << e.what();
  }
  EXPECT_THROW(File::open(dir), Error);  // a directory
  std::filesystem::remove_all(dir);
}

TEST(GgufFile, GetterErrorsNameTheKey) {
  Writer w;
  w.set("k.s", Value::string("x"));
  w.set("k.f", Value::f32(1));
  const File f = File::from_bytes(w.to_bytes(), "g.gguf");
  try {
    (void)f.get_int("k.s");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "g.gguf: offset 24: key 'k.s' has type string, expected an integer that fits i64");
  }
  try {
    (void)f.get_string("k.none");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "g.gguf: missing key 'k.none'");
  }
  EXPECT_THROW((void)f.get_string("k.f"), Error);
  EXPECT_THROW((void)f.opt_bool("k.f"), Error);
  EXPECT_FALSE(f.opt_int("k.none").has_value());
  EXPECT_FALSE(f.opt_string("k.none").has_value());
  EXPECT_EQ(f.opt_float("k.f"), 1.0);
}

// FORMATS.md §1.7.
TEST(GgufShared, Stories260KTestVector) {
  ALAP_SHARED_FILE_OR_SKIP(path, "fixtures/stories260K.gguf");
  const File f = File::open(path);
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.file_size(), 1185376u);
  EXPECT_EQ(f.tensors().size(), 48u);
  EXPECT_EQ(f.metadata().size(), 19u);
  EXPECT_EQ(f.data_offset(), 14176u);
  EXPECT_EQ(f.alignment(), 32u);
  EXPECT_EQ(f.get_string("general.architecture"), "llama");
  EXPECT_EQ(f.metadata()[0].key, "tokenizer.ggml.tokens");
  ASSERT_NE(f.find("tokenizer.ggml.tokens")->strings(), nullptr);
  EXPECT_EQ(f.find("tokenizer.ggml.tokens")->size(), 512u);
  EXPECT_EQ(f.find("tokenizer.ggml.tokens")->strings()->at(0), "<unk>");
  EXPECT_EQ(f.get_int("tokenizer.ggml.seperator_token_id"), 4294967295LL);
  const auto shape = [&](const char* name) {
    const TensorInfo* t = f.find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    return t ? std::vector<int64_t>(t->ne.begin(), t->ne.begin() + t->n_dims) : std::vector<int64_t>{};
  };
  EXPECT_EQ(shape("token_embd.weight"), (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(shape("blk.0.attn_k.weight"), (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(shape("blk.0.ffn_down.weight"), (std::vector<int64_t>{172, 64}));
  uint64_t end = 0;
  for (const auto& t : f.tensors()) {
    EXPECT_EQ(t.type, DType::f32);
    end = std::max(end, t.offset + (t.n_bytes + 31) / 32 * 32);
  }
  EXPECT_EQ(f.data_offset() + end, f.file_size());
  EXPECT_TRUE(f.warnings().empty());
  // First bytes of the file, as listed in §1.7.
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> head(24);
  in.read(reinterpret_cast<char*>(head.data()), 24);
  const std::vector<uint8_t> want = {0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0, 0x30, 0, 0, 0, 0, 0, 0, 0, 0x13, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(head, want);
}

TEST(GgufShared, EveryVocabFixtureParses) {
  const auto dir = test::shared_dir();
  if (dir.empty() || !std::filesystem::is_directory(dir / "fixtures")) GTEST_SKIP() << "../shared/fixtures is absent";
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "fixtures")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("ggml-vocab-", 0) != 0 || e.path().extension() != ".gguf") continue;
    SCOPED_TRACE(name);
    const File f = File::open(e.path());
    EXPECT_TRUE(f.version() == 2 || f.version() == 3);
    EXPECT_EQ(f.tensors().size(), 0u);
    EXPECT_EQ(f.data_offset(), f.file_size());  // vocab-only: ends after the KV section
    ASSERT_NE(f.find("tokenizer.ggml.tokens"), nullptr);
    EXPECT_GT(f.find("tokenizer.ggml.tokens")->size(), 100u);
    EXPECT_TRUE(f.opt_string("tokenizer.ggml.model").has_value());
    ++n;
  }
  EXPECT_GE(n, 15);
}

std::map<std::string, int> type_counts(const File& f) {
  std::map<std::string, int> m;
  for (const auto& t : f.tensors()) ++m[t.type_name()];
  return m;
}

TEST(GgufShared, EvalModels) {
  ALAP_SHARED_FILE_OR_SKIP(q8, "models/alap-eval-30m-q8_0.gguf");
  ALAP_SHARED_FILE_OR_SKIP(q4, "models/alap-eval-30m-q4_k_m.gguf");
  ALAP_SHARED_FILE_OR_SKIP(f16, "models/alap-eval-30m-f16.gguf");
  const File a = File::open(q8);
  EXPECT_EQ(a.file_size(), 33112160u);
  EXPECT_EQ(a.tensors().size(), 75u);
  EXPECT_EQ(type_counts(a), (std::map<std::string, int>{{"Q8_0", 58}, {"F32", 17}}));
  const File b = File::open(q4);
  EXPECT_EQ(b.file_size(), 20596832u);
  EXPECT_EQ(b.tensors().size(), 75u);
  EXPECT_EQ(type_counts(b), (std::map<std::string, int>{{"Q4_K", 45}, {"Q6_K", 5}, {"Q5_0", 4}, {"Q8_0", 4}, {"F32", 17}}));
  const File c = File::open(f16);
  EXPECT_EQ(c.tensors().size(), 75u);
  int64_t n_params = 0;
  for (const auto& t : c.tensors()) n_params += t.n_elements();
  EXPECT_EQ(n_params, 30941696);
  EXPECT_EQ(c.get_int("general.file_type"), 1);
  EXPECT_EQ(c.get_int("llama.block_count"), 8);
  EXPECT_EQ(c.get_int("llama.attention.head_count_kv"), 2);
  EXPECT_EQ(c.find_tensor("blk.0.ffn_down.weight")->ne[0], 1408);
  for (const File* f : {&a, &b, &c}) {
    EXPECT_EQ(f->version(), 3u);
    EXPECT_TRUE(f->warnings().empty()) << f->warnings().front();
  }
}


// release_pages drops a mapped file's pages from the process; reading them again must give the
// same bytes (they come back from the file). For bytes held in memory it must change nothing
// (releasing anonymous pages would zero them).
TEST(GgufFile, ReleasedPagesReadBackTheSameBytes) {
  const auto dir = std::filesystem::temp_directory_path() / ("alap_gguf_release_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "r.gguf";
  Writer w;
  w.set("general.architecture", Value::string("llama"));
  const auto d = pattern(4 * 8192, 5);  // 32 KiB: whole pages inside the tensor
  w.add_tensor("big", DType::f32, {8192}, d);
  w.write_file(path);
  {
    const File mapped = File::open(path);
    const File owned = File::from_bytes(w.to_bytes());
    for (const File* f : {&mapped, &owned}) {
      const TensorInfo* t = f->find_tensor("big");
      ASSERT_NE(t, nullptr);
      ASSERT_EQ(std::memcmp(t->data, d.data(), d.size()), 0);
      f->release_pages(t->data, t->n_bytes);
      f->release_pages(d.data(), d.size());  // not inside this file: ignored
      f->release_pages(t->data, uint64_t{1} << 40);  // runs past the end: ignored
      EXPECT_EQ(std::memcmp(t->data, d.data(), d.size()), 0) << f->name();
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace alap::gguf
