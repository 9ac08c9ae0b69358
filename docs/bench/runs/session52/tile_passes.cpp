#include <chrono>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <sys/syscall.h>
#include <unistd.h>
struct alignas(64) Cfg { uint8_t palette = 1, start = 0, res[14] = {}; uint16_t colsb[16] = {}; uint8_t rows[16] = {}; };
#define LD(n, p) __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #n :: "r"(p), "r"(64L) : "memory")
#define ST(n, p) __asm__ volatile("tilestored %%tmm" #n ", (%0,%1,1)" :: "r"(p), "r"(64L) : "memory")
int main(int argc, char** argv) {
  syscall(SYS_arch_prctl, 0x1023, 18);
  Cfg c; for (int i = 0; i < 8; ++i) c.rows[i] = 16, c.colsb[i] = 64;
  __asm__ volatile("ldtilecfg %0" :: "m"(c));
  const size_t pass = argc > 1 ? atoi(argv[1]) : 16, ntp = argc > 2 ? atoi(argv[2]) : 4;
  const int nostore = argc > 3 ? atoi(argv[3]) : 0;
  const size_t pf = argc > 4 ? atoi(argv[4]) : 0;
  const size_t nb = 64;
  uint16_t* xb = (uint16_t*)aligned_alloc(4096, ntp * 2 * 16 * 2048 * 2);
  uint16_t* wb = (uint16_t*)aligned_alloc(4096, 2 * pass * 1024);
  float* part = (float*)aligned_alloc(4096, ntp * 2 * 512 * 4);
  for (size_t i = 0; i < ntp * 2 * 16 * 2048; ++i) xb[i] = 0x3f80;
  for (size_t i = 0; i < 2 * pass * 512; ++i) wb[i] = 0x3f80;
  for (size_t i = 0; i < ntp * 1024; ++i) part[i] = 0;
  double best = 1e9;
  for (int rep = 0; rep < 20; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (int gp = 0; gp < 64; ++gp)
      for (size_t b0 = 0; b0 < nb; b0 += pass)
        for (size_t tp = 0; tp < ntp; ++tp) {
          float* pt = part + 1024 * tp;
          if (b0 == 0 || nostore) { __asm__ volatile("tilezero %tmm0\n tilezero %tmm1\n tilezero %tmm2\n tilezero %tmm3"); }
          else { LD(0, pt); LD(1, pt + 256); LD(2, pt + 512); LD(3, pt + 768); }
          const uint16_t* xa = xb + tp * 2 * 16 * 2048 + 512 * b0;
          for (size_t b = 0; b < pass; ++b) {
            if (pf) { const char* n0 = (const char*)(xa + 512 * (b + pf)); const char* n1 = (const char*)(xa + 16 * 2048 + 512 * (b + pf));
              for (int l = 0; l < 1024; l += 64) { __builtin_prefetch(n0 + l, 0, 3); __builtin_prefetch(n1 + l, 0, 3); } }
            LD(4, xa + 512 * b); LD(5, xa + 16 * 2048 + 512 * b); LD(6, wb + 512 * b); LD(7, wb + pass * 512 + 512 * b);
            __asm__ volatile("tdpbf16ps %tmm6, %tmm4, %tmm0\n tdpbf16ps %tmm6, %tmm5, %tmm1\n tdpbf16ps %tmm7, %tmm4, %tmm2\n tdpbf16ps %tmm7, %tmm5, %tmm3");
          }
          if (!nostore || b0 + pass >= nb) { ST(0, pt); ST(1, pt + 256); ST(2, pt + 512); ST(3, pt + 768); }
        }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, dt);
  }
  double dots = 64.0 * nb * ntp * 4;
  printf("pass %zu ntp %zu nostore %d: %.2f ns per dot, %.0f GMAC/s\n", pass, ntp, nostore, best / dots * 1e9, dots * 8192 / best / 1e9);
  __asm__ volatile("tilerelease");
}
