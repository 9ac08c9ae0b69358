// The project's seeded weight generator, shared with tests/reference/hf_reference.py: element i
// of the tensor named N is 2·((splitmix64(fnv1a64(N) + i) >> 40) / 2^24) − 1, scaled per kind.
// Both sides produce bit-identical f32 values, so reference models are rebuilt, never shipped.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace alap::test {

inline uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  return h;
}

inline uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// n values in [-1, 1) for the tensor named `name` (the Hugging Face parameter name).
inline std::vector<float> seeded_uniform(std::string_view name, size_t n) {
  std::vector<float> v(n);
  const uint64_t seed = fnv1a64(name);
  for (size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(splitmix64(seed + i) >> 40) / static_cast<double>(1u << 24);
    v[i] = static_cast<float>(2.0 * u - 1.0);
  }
  return v;
}

// The per-kind rule of hf_reference.py's value_for(): norms 1 ± 0.25, biases ± 0.2, embeddings
// ± 1, linear weights [out][in] ± 1.7/sqrt(in). Computed in double then rounded, as numpy does.
inline std::vector<float> seeded_parameter(std::string_view name, size_t rows, size_t cols) {
  const size_t n = rows * cols;
  const uint64_t seed = fnv1a64(name);
  std::vector<float> v(n);
  auto ends_with = [&](std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  for (size_t i = 0; i < n; ++i) {
    const double u = 2.0 * (static_cast<double>(splitmix64(seed + i) >> 40) / static_cast<double>(1u << 24)) - 1.0;
    const float uf = static_cast<float>(u);  // numpy rounds u to float32 first
    float x;
    if (ends_with("norm.weight")) {
      x = static_cast<float>(1.0 + 0.25 * static_cast<double>(uf));
    } else if (ends_with(".bias")) {
      x = static_cast<float>(0.2 * static_cast<double>(uf));
    } else if (name.find("embed_tokens") != std::string_view::npos) {
      x = uf;
    } else {
      x = static_cast<float>(static_cast<double>(uf) * (1.7 / std::sqrt(static_cast<double>(cols))));
    }
    v[i] = x;
  }
  return v;
}

}  // namespace alap::test
