// IEEE binary16 and bfloat16 conversions (scalar, exact, round to nearest even).
// Not a vector kernel: SIMD conversions live beside the kernels that need them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::kernels {

float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

void fp16_to_f32_row(const uint16_t* src, float* dst, size_t n);
void f32_to_fp16_row(const float* src, uint16_t* dst, size_t n);

}  // namespace alap::kernels
