// A 16-entry byte table applied to the 8 nibbles of a word in byte order, by byte permutes with the
// rule of AMD's v_perm_b32 (byte selectors). Plain C++ with the permute as a parameter, so that the
// HIP path (gpu_port.h: __builtin_amdgcn_perm), its CUDA emulation (-DALAP_GPU_BYTE_SEL_PERM) and a
// host check compiled by g++ (tests/kernels/gpu/gpu_lut16_check.cpp) run the same function.
// gpu_port.h defines ALAP_LUT16_FN as __device__ __forceinline__ before including it.
#pragma once

#include <cstdint>

#ifndef ALAP_LUT16_FN
#define ALAP_LUT16_FN inline
#endif

// v_perm_b32 D, S0, S1, S2 (RDNA3 ISA; the same since GCN3): byte i of D is f(byte i of S2) over the
// 8 bytes in = {S0, S1}, S1 bytes 0-3 and S0 bytes 4-7: f(k) = in[k] for k < 8; k = 8..11 spreads
// the sign bit of in[1], in[3], in[5], in[7] over the byte; 12 gives 0x00, 13 and up 0xFF. The
// scalar stand-in for the builtin, whole rule included so that a selector outside 0..7 shows up as
// a wrong value in the checks rather than as a silent match.
ALAP_LUT16_FN uint32_t alap_perm_b32_scalar(uint32_t s0, uint32_t s1, uint32_t sel) {
  const uint64_t in = (static_cast<uint64_t>(s0) << 32) | s1;
  uint32_t r = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t k = (sel >> (8 * i)) & 0xFFu;
    uint32_t b;
    if (k >= 13) {
      b = 0xFFu;
    } else if (k == 12) {
      b = 0;
    } else if (k >= 8) {
      b = ((in >> (16 * (k - 8) + 15)) & 1u) != 0 ? 0xFFu : 0;
    } else {
      b = static_cast<uint32_t>(in >> (8 * k)) & 0xFFu;
    }
    r |= b << (8 * i);
  }
  return r;
}

// Byte i of lo = table[low nibble of byte i of v], of hi = table[high nibble of byte i]; entry e is
// byte e%4 of t[e/4]. That is the IQ4 element order itself (low nibbles of a 16-byte run are values
// 0..15, high ones 16..31), so neither the weights nor the activations need sorting. Per 4 codes:
// byte selectors c & 7, one permute from each table half (t[0]:t[1], t[2]:t[3]), and a third that
// keeps byte i of the low half's result or of the high half's by bit 3 of c (merge selector i or
// 4 + i). 13 operations a word: 6 permutes, 2 shifts, 2 ands, 2 and-ors (v_and_or_b32), 1 shift for
// the high nibbles, where a per-nibble shift-and-mask lookup takes about 9 a value.
template <class Perm>
ALAP_LUT16_FN void alap_lut16_bytes_by(uint32_t v, const uint32_t (&t)[4], uint32_t& lo, uint32_t& hi, Perm perm) {
  const uint32_t u = v >> 4;
  const uint32_t sl = v & 0x07070707u, sh = u & 0x07070707u;
  const uint32_t ml = ((v >> 1) & 0x04040404u) | 0x03020100u;  // i + 4·bit3 of byte i's low code
  const uint32_t mh = ((u >> 1) & 0x04040404u) | 0x03020100u;  // likewise, high code
  lo = perm(perm(t[3], t[2], sl), perm(t[1], t[0], sl), ml);
  hi = perm(perm(t[3], t[2], sh), perm(t[1], t[0], sh), mh);
}
