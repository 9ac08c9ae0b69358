// thread_scratch.h: compiled without ISA flags, so the ISA files need no containers of their own.
#include "thread_scratch.h"

#include <cstdlib>
#include <new>

namespace alap::kernels {

namespace {

struct Buffer {
  void* p = nullptr;
  size_t capacity = 0;
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { std::free(p); }
};

}  // namespace

void* thread_scratch(ScratchSlot slot, size_t bytes) {
  thread_local Buffer buffers[kScratchSlots];
  Buffer& b = buffers[slot];
  if (bytes > b.capacity) {
    size_t capacity = bytes > 2 * b.capacity ? bytes : 2 * b.capacity;
    capacity = (capacity + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, capacity);
    if (p == nullptr) throw std::bad_alloc();
    std::free(b.p);
    b.p = p;
    b.capacity = capacity;
  }
  return b.p;
}

}  // namespace alap::kernels
