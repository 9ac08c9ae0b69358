// Allocation of large, long-lived buffers that are streamed again and again (core's packed weights
// and KV cache, the read-bandwidth probe): 2 MiB-aligned and advised as transparent huge pages, so
// that Linux backs them with 2 MiB pages where it can (THP "madvise" mode, the default of many
// desktops, gives huge pages only to memory that asks). Not a pool or an arena: one call, one
// buffer, std::free'd.
#pragma once

#include <cstddef>

namespace alap::kernels {

constexpr size_t kHugePage = size_t{2} << 20;

// Whether alloc_streamed gives its advice in this process (ALAP_HUGE_PAGES, read once).
bool huge_pages_enabled();

// bytes rounded up to a multiple of 2 MiB, aligned to 2 MiB, madvise(MADV_HUGEPAGE) when `advise`
// (a failed advice is ignored: the memory is then ordinary pages). Null when the memory cannot be
// had. The default follows ALAP_HUGE_PAGES (=0 skips the advice, for measuring); the probe always
// advises, so that its floor stays the best stream this machine gives.
void* alloc_streamed(size_t bytes, bool advise);
inline void* alloc_streamed(size_t bytes) { return alloc_streamed(bytes, huge_pages_enabled()); }

}  // namespace alap::kernels
