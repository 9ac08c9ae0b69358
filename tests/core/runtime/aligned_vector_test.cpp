// AlignedVector: every allocation starts on a 64-byte line, whatever the size (malloc's large
// blocks start 16 bytes into a page), through growth, copies and moves, with the contents kept.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "core/runtime/aligned_vector.h"

namespace alap {
namespace {

template <class T>
bool on_line(const AlignedVector<T>& v) {
  return reinterpret_cast<std::uintptr_t>(v.data()) % 64 == 0;
}

TEST(AlignedVector, EverySizeStartsOnALine) {
  for (size_t n : {size_t{1}, size_t{3}, size_t{17}, size_t{4096}, size_t{1} << 18, size_t{5} << 20}) {
    AlignedVector<float> f(n);
    AlignedVector<int8_t> b(n);
    EXPECT_TRUE(on_line(f)) << n;
    EXPECT_TRUE(on_line(b)) << n;
    EXPECT_EQ(f[n - 1], 0.0f);  // value-initialised, as std::vector
  }
}

TEST(AlignedVector, GrowthCopyAndMoveKeepTheLineAndTheValues) {
  AlignedVector<int32_t> v;
  for (int32_t i = 0; i < 100000; ++i) {
    v.push_back(i);
    ASSERT_TRUE(on_line(v)) << i;
  }
  v.resize(3 << 20);
  EXPECT_TRUE(on_line(v));
  EXPECT_EQ(v[99999], 99999);
  EXPECT_EQ(v[100000], 0);
  AlignedVector<int32_t> c = v;
  EXPECT_TRUE(on_line(c));
  EXPECT_EQ(c[12345], 12345);
  AlignedVector<int32_t> m = std::move(c);
  EXPECT_TRUE(on_line(m));
  EXPECT_EQ(m[54321], 54321);
}

}  // namespace
}  // namespace alap
