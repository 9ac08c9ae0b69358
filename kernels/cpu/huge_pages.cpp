// alloc_streamed (huge_pages.h): aligned_alloc + madvise(MADV_HUGEPAGE).
#include "alap/kernels/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

namespace alap::kernels {

bool huge_pages_enabled() {
  static const bool on = [] {
    const char* env = std::getenv("ALAP_HUGE_PAGES");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }();
  return on;
}

void* alloc_streamed(size_t bytes, bool advise) {
  if (bytes == 0) return std::aligned_alloc(64, 64);  // a valid, distinct pointer
  const size_t n = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, n);
#ifdef MADV_HUGEPAGE
  if (p != nullptr && advise) (void)madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

}  // namespace alap::kernels
