// Host check of the IQ4 table lookups by byte permutes, without a GPU (g++ only):
//   1. alap_lut16_bytes_by (gpu_lut16.h), the very function the HIP build runs with
//      __builtin_amdgcn_perm, here with the scalar v_perm_b32 stand-in: every code 0..15 in each of
//      the 8 nibble positions of a word (the other nibbles random) gives the table value in the
//      byte the IQ4 order puts it (low nibble of byte i -> byte i of lo, high -> byte i of hi);
//   2. the arithmetic of the CUDA sign-split dot (matmul_kernel.h iq4_dot_split, a device function,
//      restated here on a scalar model of PTX prmt): its tables and selector flips give
//      Σ K[c]·x for every code in every position and random words and activations.
// Exit 0 on success, 1 with the first failures printed.
#include <cstdint>
#include <cstdio>
#include <random>

#include "kernels/gpu/gpu_lut16.h"

namespace {

// FORMATS.md §2.9.
constexpr int kTable[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
// As the kernels hold it (matmul_kernel.h iq4_table): code e is byte e%4 of word e/4.
constexpr uint32_t kWords[4] = {0xBFAD9881u, 0xF6EADDCFu, 0x26190D01u, 0x71594535u};

int failures = 0;
void fail(const char* what, uint32_t v, int pos, int got, int want) {
  if (++failures <= 10) std::printf("FAIL %s: word %08x position %d: %d, want %d\n", what, v, pos, got, want);
}

int byte_of(uint32_t w, int i) { return static_cast<int8_t>(static_cast<uint8_t>(w >> (8 * i))); }

// PTX prmt.b32 in its default mode (PTX ISA: bits 0-2 of selector nibble i pick a byte of b:a, bit
// 3 set spreads that byte's sign bit over the result byte).
uint32_t prmt(uint32_t a, uint32_t b, uint32_t c) {
  const uint64_t in = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t s = (c >> (4 * i)) & 0xFu;
    uint32_t byte = static_cast<uint32_t>(in >> (8 * (s & 7u))) & 0xFFu;
    if (s & 8u) byte = (byte & 0x80u) != 0 ? 0xFFu : 0;
    r |= byte << (8 * i);
  }
  return r;
}
int dp4a(uint32_t a, uint32_t b, int c) {
  for (int i = 0; i < 4; ++i) c += byte_of(a, i) * byte_of(b, i);
  return c;
}

// iq4_dot_split's steps (x0, x1: activations of nibbles 0-3 and 4-7 of v).
int dot_split(uint32_t v, uint32_t x0, uint32_t x1) {
  const uint32_t n0 = 0x4153687Fu, n1 = 0x0A162331u, p0 = 0x26190D01u, p1 = 0x71594535u;
  const uint32_t f = v ^ 0x88888888u;
  int pos = 0, neg = 0;
  pos = dp4a(prmt(p0, p1, f), x0, pos);
  neg = dp4a(prmt(n0, n1, v), x0, neg);
  pos = dp4a(prmt(p0, p1, f >> 16), x1, pos);
  neg = dp4a(prmt(n0, n1, v >> 16), x1, neg);
  return pos - neg;
}

}  // namespace

int main() {
  std::mt19937 rng(27);
  int checks = 0;
  // 1. Byte order through the v_perm_b32 rule.
  auto perm = [](uint32_t s0, uint32_t s1, uint32_t sel) { return alap_perm_b32_scalar(s0, s1, sel); };
  for (int rep = 0; rep < 64; ++rep) {
    for (int pos = 0; pos < 8; ++pos) {
      for (int c = 0; c < 16; ++c) {
        const uint32_t v = (rng() & ~(0xFu << (4 * pos))) | (static_cast<uint32_t>(c) << (4 * pos));
        uint32_t lo = 0, hi = 0;
        alap_lut16_bytes_by(v, kWords, lo, hi, perm);
        for (int n = 0; n < 8; ++n) {  // every nibble of the word, the chosen one and the random ones
          const int code = static_cast<int>((v >> (4 * n)) & 0xFu);
          const int got = byte_of(n % 2 == 0 ? lo : hi, n / 2);
          if (got != kTable[code]) fail("alap_lut16_bytes_by", v, n, got, kTable[code]);
          ++checks;
        }
      }
    }
  }
  // 2. The sign-split dot: Σ over the word's 8 codes of K·x, x in [-127, 127] as the quantiser gives.
  for (int rep = 0; rep < 20000; ++rep) {
    const uint32_t v = rng();
    int8_t x[8];
    uint32_t x0 = 0, x1 = 0;
    int want = 0;
    for (int n = 0; n < 8; ++n) {
      x[n] = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
      (n < 4 ? x0 : x1) |= static_cast<uint32_t>(static_cast<uint8_t>(x[n])) << (8 * (n % 4));
      want += kTable[(v >> (4 * n)) & 0xFu] * x[n];
    }
    const int got = dot_split(v, x0, x1);
    if (got != want) fail("dot_split", v, -1, got, want);
    ++checks;
  }
  // Each code alone in each position against x = 1 (the table itself).
  for (int pos = 0; pos < 8; ++pos) {
    for (int c = 0; c < 16; ++c) {
      const uint32_t v = static_cast<uint32_t>(c) << (4 * pos) | (0x8u << (4 * ((pos + 1) % 8)));  // other codes 0/8
      const uint32_t one = pos < 4 ? 1u << (8 * pos) : 0, one1 = pos < 4 ? 0 : 1u << (8 * (pos - 4));
      const int got = dot_split(v, one, one1);
      if (got != kTable[c]) fail("dot_split, one code", v, pos, got, kTable[c]);
      ++checks;
    }
  }
  std::printf("%s: %d checks, %d failures\n", failures == 0 ? "PASS" : "FAIL", checks, failures);
  return failures == 0 ? 0 : 1;
}
