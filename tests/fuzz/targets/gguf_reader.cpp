// Fuzz harness for the GGUF reader: parse arbitrary bytes with gguf::File::from_bytes, then touch
// every value, every getter and every tensor byte (ASan sees a read outside the copied input).
// Not a check of what the values mean: vocab and hparams have their own readers.
#include <cstring>
#include <vector>

#include "core/gguf/gguf.h"
#include "tests/fuzz/fuzz_targets.h"

namespace alap::fuzz {
namespace {

uint64_t touch_value(const gguf::Value& v, int depth) {
  check(depth < 1000, "gguf value nesting without limit");
  uint64_t h = static_cast<uint64_t>(v.type());
  if (auto i = v.to_int()) h += static_cast<uint64_t>(*i);
  if (auto u = v.to_uint()) h += *u;
  if (auto f = v.to_float()) h += static_cast<uint64_t>(*f != 0.0);
  if (auto b = v.to_bool()) h += *b;
  if (const std::string* s = v.to_string()) h += s->size();
  if (v.type() == gguf::ValueType::array) {
    h += v.size();
    if (const auto* ss = v.strings()) {
      check(ss->size() == v.size(), "string array size");
      for (const std::string& s : *ss) h += s.size();
    }
    if (auto is = v.ints()) {
      check(is->size() == v.size(), "int array size");
      for (int64_t x : *is) h += static_cast<uint64_t>(x);
    }
    if (auto fs = v.floats()) {
      check(fs->size() == v.size(), "float array size");
      h += fs->size();
    }
    for (const gguf::Value& item : v.items()) h += touch_value(item, depth + 1);
  }
  return h;
}

template <class F>
void swallow(F&& f) {
  try {
    f();
  } catch (const gguf::Error&) {
  }
}

}  // namespace

int gguf_reader(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  try {
    gguf::File file = gguf::File::from_bytes(std::move(bytes), "fuzz.gguf");
    check(file.file_size() == size, "file_size");
    check(file.data_offset() <= size, "data offset past the end");
    check(file.alignment() > 0, "zero alignment");
    volatile uint64_t sink = 0;
    for (const gguf::KeyValue& kv : file.metadata()) {
      sink = sink + touch_value(kv.value, 0);
      check(file.find(kv.key) != nullptr, "metadata key not found by find()");
      swallow([&] { sink = sink + file.opt_string(kv.key).value_or("").size(); });
      swallow([&] { sink = sink + static_cast<uint64_t>(file.opt_int(kv.key).value_or(0)); });
      swallow([&] { sink = sink + (file.opt_float(kv.key).value_or(0.0) != 0.0); });
      swallow([&] { sink = sink + file.opt_bool(kv.key).value_or(false); });
    }
    for (const char* key : {"general.architecture", "general.alignment", "tokenizer.ggml.model", "general.name"}) {
      swallow([&] { sink = sink + file.get_string(key).size(); });
      swallow([&] { sink = sink + static_cast<uint64_t>(file.get_int(key)); });
      swallow([&] { sink = sink + (file.get_float(key) != 0.0); });
    }
    const uint64_t data_bytes = size - file.data_offset();
    for (const gguf::TensorInfo& t : file.tensors()) {
      check(file.find_tensor(t.name) != nullptr, "tensor not found by find_tensor()");
      check(t.n_dims <= 4, "tensor n_dims above 4");
      for (int64_t d : t.ne) check(d >= 0, "negative dimension");
      check(t.offset <= data_bytes && t.n_bytes <= data_bytes - t.offset, "tensor outside the data section");
      check(t.data != nullptr || t.n_bytes == 0, "tensor without data");
      sink = sink + static_cast<uint64_t>(t.n_elements());
      sink = sink + std::strlen(t.type_name());
      uint64_t sum = 0;
      for (uint64_t i = 0; i < t.n_bytes; ++i) sum += t.data[i];
      sink = sink + sum;
    }
    for (const std::string& w : file.warnings()) sink = sink + w.size();
  } catch (const gguf::Error& e) {
    check(e.what()[0] != '\0', "empty gguf error message");
  }
  return 0;
}

}  // namespace alap::fuzz
