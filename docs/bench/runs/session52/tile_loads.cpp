#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <sys/syscall.h>
#include <unistd.h>
struct alignas(64) Cfg { uint8_t palette = 1, start = 0, res[14] = {}; uint16_t colsb[16] = {}; uint8_t rows[16] = {}; };
#define LD(n, p) __asm__ volatile("tileloadd (%0,%1,1), %%tmm" #n :: "r"(p), "r"(64L) : "memory")
#define D(c, a, b) __asm__ volatile("tdpbf16ps %tmm" #b ", %tmm" #a ", %tmm" #c)
alignas(64) static uint16_t buf[1024 * 1024];
int main(int argc, char** argv) {
  syscall(SYS_arch_prctl, 0x1023, 18);
  Cfg c; for (int i = 0; i < 8; ++i) c.rows[i] = 16, c.colsb[i] = 64;
  __asm__ volatile("ldtilecfg %0" :: "m"(c));
  int mode = atoi(argv[1]); long span = atol(argv[2]);
  for (size_t i = 0; i < sizeof(buf) / 2; ++i) buf[i] = 0x3f80 + (i % 7);
  const long iters = 2000000;
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < iters; ++i) {
    const uint16_t* a = buf + (i % span) * 2048;
    if (mode == 0) { LD(4, a); LD(5, a + 512); LD(6, a + 1024); LD(7, a + 1536); D(0,4,6); D(1,5,6); D(2,4,7); D(3,5,7); }
    if (mode == 1) { D(0,4,6); D(1,5,6); LD(6, a + 1024); D(2,4,7); LD(4, a); D(3,5,7); LD(5, a + 512); LD(7, a + 1536); }
    if (mode == 2) { D(0,4,6); D(1,4,7); LD(4, a); D(2,5,6); LD(6, a + 1024); D(3,5,7); LD(5, a + 512); LD(7, a + 1536); }
    if (mode == 3) { D(0,4,6); D(1,5,6); D(2,4,7); D(3,5,7); }
    if (mode == 4) { LD(4, a); LD(6, a + 1024); D(0,4,6); D(1,4,6); D(2,4,6); D(3,4,6); }  // 2 loads per 4 dots
    if (mode == 5) { LD(4, a); D(0,4,6); D(1,4,7); D(2,4,5); D(3,4,6); }  // 1 load per 4 dots
  }
  double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("mode %d span %ld: %.2f ns per dot, %.0f GMAC/s\n", mode, span, dt / iters / 4 * 1e9, iters * 4.0 * 8192 / dt / 1e9);
  __asm__ volatile("tilerelease");
}
