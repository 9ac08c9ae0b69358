// requantize_model: rewrites a GGUF file's weight matrices in another type with the reference
// quantisers (kernels quant.h: round to nearest, one scale per block), for measuring what a type
// costs in quality on a real model (alap-cli perplexity / kv-compare) and in speed (cpu_bench).
// Not llama-quantize: no importance matrix, no search for better scales.
//
//   requantize_model ../shared/models/alap-eval-30m-f16.gguf iq4_xs /tmp/eval-iq4_xs.gguf
//
// Which tensors, as llama-quantize's mixes (FORMATS.md §3): 2-D tensors named *weight and not
// *_norm.weight; the rest are copied as they are. output.weight (or a tied token_embd) becomes
// Q6_K for 4-bit and lower types (Q8_0 when its rows are not whole 256-blocks), and a row length
// that is not a whole block of the type falls back as llama-quantize does: K-quants to Q5_0,
// IQ4_XS to IQ4_NL.
#include <cstdio>
#include <string>
#include <vector>

#include "alap/kernels/dtype.h"
#include "alap/kernels/quant.h"
#include "core/gguf/gguf.h"
#include "tests/bench/bench_types.h"

namespace {

using alap::kernels::DType;
namespace kernels = alap::kernels;
namespace gguf = alap::gguf;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// llama.cpp's general.file_type for a whole-file type, or -1 when this tool has none for it.
int file_type_of(DType t) {
  switch (t) {
    case DType::f32: return 0;
    case DType::f16: return 1;
    case DType::q4_0: return 2;
    case DType::q4_1: return 3;
    case DType::q8_0: return 7;
    case DType::q5_0: return 8;
    case DType::q5_1: return 9;
    case DType::q2_k: return 10;
    case DType::q3_k: return 12;  // _M
    case DType::q4_k: return 15;  // _M
    case DType::q5_k: return 17;  // _M
    case DType::q6_k: return 18;
    case DType::iq4_nl: return 25;
    case DType::iq4_xs: return 30;
    case DType::bf16: return 32;
    default: return -1;
  }
}

DType target_type(const gguf::TensorInfo& t, DType want, bool is_output) {
  const int64_t cols = t.ne[0];
  const auto& info = *kernels::dtype_info(static_cast<uint32_t>(want));
  const bool low_bit = info.block_elems > 1 && want != DType::q8_0 && want != DType::q6_k && want != DType::q5_k &&
                       want != DType::q5_0 && want != DType::q5_1;
  if (is_output && low_bit) return cols % 256 == 0 ? DType::q6_k : DType::q8_0;
  if (cols % static_cast<int64_t>(info.block_elems) == 0) return want;
  if (want == DType::iq4_xs && cols % 32 == 0) return DType::iq4_nl;
  if (info.block_elems == 256 && cols % 32 == 0) return DType::q5_0;
  return DType::f16;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: requantize_model IN.gguf TYPE OUT.gguf   (TYPE: a weight type, e.g. iq4_xs, q4_k)\n");
    return 2;
  }
  DType want;
  if (!alap::bench::type_by_name(argv[2], want)) {
    std::fprintf(stderr, "requantize_model: %s is not a weight type the kernels support\n", argv[2]);
    return 2;
  }
  try {
    const gguf::File in = gguf::File::open(argv[1]);
    gguf::Writer w;
    for (const auto& kv : in.metadata()) w.set(kv.key, kv.value);
    if (const int ft = file_type_of(want); ft >= 0) {
      w.set("general.file_type", gguf::Value::u32(static_cast<uint32_t>(ft)));
    }
    const bool has_output = in.find_tensor("output.weight") != nullptr;
    std::vector<float> row;
    for (const gguf::TensorInfo& t : in.tensors()) {
      std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
      const bool matrix = t.n_dims >= 2 && ends_with(t.name, "weight") && !ends_with(t.name, "_norm.weight");
      if (!matrix) {
        w.add_tensor(t.name, t.type, ne, std::span(t.data, t.n_bytes));
        continue;
      }
      const bool is_output = t.name == "output.weight" || (!has_output && t.name == "token_embd.weight");
      const DType to = target_type(t, want, is_output);
      const auto& from_info = *kernels::dtype_info(static_cast<uint32_t>(t.type));
      const auto& to_info = *kernels::dtype_info(static_cast<uint32_t>(to));
      const auto cols = static_cast<size_t>(t.ne[0]);
      const size_t rows = static_cast<size_t>(t.n_elements()) / cols;
      const size_t from_bytes = kernels::dtype_row_bytes(from_info, cols);
      const size_t to_bytes = kernels::dtype_row_bytes(to_info, cols);
      std::vector<uint8_t> out(rows * to_bytes);
      row.resize(cols);
      for (size_t r = 0; r < rows; ++r) {
        kernels::dequantize_row(t.type, t.data + r * from_bytes, row.data(), cols);
        kernels::quantize_row(to, row.data(), out.data() + r * to_bytes, cols);
      }
      w.add_tensor(t.name, to, ne, out);
      std::printf("%-28s %-7s -> %s\n", t.name.c_str(), from_info.name, to_info.name);
    }
    w.write_file(argv[3]);
    std::printf("wrote %s\n", argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "requantize_model: %s\n", e.what());
    return 1;
  }
  return 0;
}
