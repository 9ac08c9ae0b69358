// A std::vector whose elements start on a 64-byte boundary: a cache line, and one AVX-512 vector.
// The forward pass keeps the rows that the products write in these. A std::vector of a prompt's
// rows is a large block from malloc, which starts 16 bytes into a page, so every 64-byte store of
// a row's 16 outputs was split over two lines; on an Ice Lake Xeon a Q8_0 product of Qwen2.5-0.5B's
// 4864 x 896 gate took up to 1.4x the time for it (docs/bench/cpu.md, session 60).
//
//   alap::AlignedVector<float> y(n_tok * n_rows);  // y.data() % 64 == 0
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace alap {

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace alap
