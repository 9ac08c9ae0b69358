// Shared by the benchmark programs of tests/bench: a weight type by its lower-case name ("q4_k").
#pragma once

#include <cctype>
#include <cstdint>
#include <string>

#include "alap/kernels/dtype.h"

namespace alap::bench {

// True and out set when `name` is a weight type the kernels support.
inline bool type_by_name(const std::string& name, kernels::DType& out) {
  for (uint32_t id = 0; id < 64; ++id) {
    const kernels::DTypeInfo* info = kernels::dtype_info(id);
    if (info == nullptr || !info->weights_supported) continue;
    std::string n = info->name;
    for (auto& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (n == name) {
      out = static_cast<kernels::DType>(id);
      return true;
    }
  }
  return false;
}

}  // namespace alap::bench
