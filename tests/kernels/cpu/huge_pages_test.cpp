// alloc_streamed (alap/kernels/huge_pages.h): 2 MiB alignment, the whole rounded size usable, a
// valid pointer for 0 bytes, the MADV_HUGEPAGE advice on the buffer's mapping, and, where Linux has
// a free huge page, huge pages under a touched buffer (both read from /proc/self/smaps).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "alap/kernels/huge_pages.h"

namespace alap::kernels {
namespace {

// What /proc/self/smaps says of the mapping that holds address p: its AnonHugePages (kB; -1 if
// the mapping is not found) and whether its VmFlags carry "hg" (advised MADV_HUGEPAGE).
struct Mapping {
  long anon_huge_kb = -1;
  bool advised = false;
};
Mapping mapping_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  Mapping m;
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {  // a mapping's first line
      inside = lo <= a && a < hi;
      continue;
    }
    if (!inside) continue;
    if (line.rfind("AnonHugePages:", 0) == 0) m.anon_huge_kb = std::strtol(line.c_str() + 14, nullptr, 10);
    if (line.rfind("VmFlags:", 0) == 0) m.advised = (line + " ").find(" hg ") != std::string::npos;
  }
  return m;
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return s;
}

TEST(HugePages, AlignedRoundedAndUsable) {
  const size_t n = 3 * kHugePage + 12345;
  auto* p = static_cast<uint8_t*>(alloc_streamed(n));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePage, 0u);
  std::memset(p, 0x5A, 4 * kHugePage);  // the size rounded up to whole huge pages is the caller's
  EXPECT_EQ(p[4 * kHugePage - 1], 0x5A);
  std::free(p);

  void* z = alloc_streamed(0);
  EXPECT_NE(z, nullptr);
  std::free(z);
}

TEST(HugePages, TouchedBufferIsBackedByHugePagesWhereLinuxAllows) {
  const std::string mode = thp_mode();
  if (mode.find("[never]") != std::string::npos || mode.empty()) GTEST_SKIP() << "transparent huge pages are off here";
  if (!huge_pages_enabled()) GTEST_SKIP() << "ALAP_HUGE_PAGES=0";
  const size_t n = 8 * kHugePage;
  auto* p = static_cast<uint8_t*>(alloc_streamed(n));
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, n);
  const Mapping m = mapping_of(p);
  std::free(p);
  ASSERT_GE(m.anon_huge_kb, 0) << "the buffer's mapping is not in /proc/self/smaps";
  EXPECT_TRUE(m.advised) << "the buffer is not advised MADV_HUGEPAGE";
  // The kernel may have no free 2 MiB page at this moment (fragmented memory): then the advice
  // is taken and ordinary pages serve, which is correct behaviour, not a failure of ours.
  if (m.anon_huge_kb == 0) GTEST_SKIP() << "advised, but no huge page was free (THP mode: " << mode << ")";
  EXPECT_GE(m.anon_huge_kb, 2048);
}

}  // namespace
}  // namespace alap::kernels
