// stream_start: how long one thread takes to read B bytes of memory that is in no cache, after
// 32 MB of other memory were read (a cold stream's start, as each product call's rows start one),
// with the software read-ahead of the kernels (kAhead = 8 KB ahead, in the loop) or not, and with
// a burst of prefetches of the stream's first lines at its start. Medians of 15. A run record of
// docs/bench/cpu.md (session 40), not part of the build:
//
//   g++ -O2 -mavx2 -std=c++20 docs/bench/runs/session40/stream_start.cpp -o /tmp/stream_start && /tmp/stream_start
#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Sums n bytes at p; `burst` lines prefetched at the start; `ahead` > 0: two lines `ahead` bytes on
// asked for every 128 bytes.
__attribute__((noinline)) long read_stream(const char* p, size_t n, int burst, size_t ahead) {
  __m256i s = _mm256_setzero_si256();
  for (int i = 0; i < burst; ++i) _mm_prefetch(p + 64 * i, _MM_HINT_T0);
  for (size_t i = 0; i < n; i += 128) {
    if (ahead != 0) _mm_prefetch(p + i + ahead, _MM_HINT_T0), _mm_prefetch(p + i + ahead + 64, _MM_HINT_T0);
    for (int k = 0; k < 4; ++k) {
      const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32 * k));
      s = _mm256_add_epi64(s, _mm256_sad_epu8(v, _mm256_setzero_si256()));
    }
  }
  return _mm256_extract_epi64(s, 0);
}

int main() {
  const size_t big = size_t{512} << 20, other = size_t{128} << 20;
  char* buf = static_cast<char*>(aligned_alloc(size_t{1} << 21, big));
  char* ev = static_cast<char*>(aligned_alloc(size_t{1} << 21, other));
  madvise(buf, big, MADV_HUGEPAGE);
  madvise(ev, other, MADV_HUGEPAGE);
  std::memset(buf, 1, big);
  std::memset(ev, 2, other);
  long sink = 0;
  size_t off = 0;
  const struct {
    const char* name;
    int burst;
    size_t ahead;
  } modes[] = {{"none", 0, 0}, {"8 KB ahead in the loop", 0, 8192}, {"32-line burst + 8 KB ahead", 32, 8192},
               {"128-line burst + 8 KB ahead", 128, 8192}};
  for (const auto& m : modes) {
    for (size_t kb : {16, 64, 256, 1024, 4096}) {
      const size_t bytes = kb << 10;
      std::vector<double> t;
      for (int r = 0; r < 15; ++r) {
        off = ((off + bytes + (size_t{3} << 20)) % (big - bytes - 4096)) & ~size_t{4095};
        const double t0 = now();
        sink += read_stream(buf + off, bytes, m.burst, m.ahead);
        t.push_back(now() - t0);
        sink += read_stream(ev + (r % 4) * (size_t{32} << 20), size_t{32} << 20, 0, 0);  // 32 MB of other memory
      }
      std::sort(t.begin(), t.end());
      std::printf("%-28s %5zu KB: %8.2f us  %5.1f GB/s\n", m.name, kb, t[7] * 1e6, bytes / t[7] / 1e9);
    }
  }
  return sink == 42;
}
