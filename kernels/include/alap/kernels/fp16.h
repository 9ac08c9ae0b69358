// IEEE binary16 and bfloat16 conversions (exact, round to nearest even); fp16_to_f32_row uses
// F16C when the CPU has it. Other SIMD conversions live beside the kernels that need them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alap::kernels {

float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);

void fp16_to_f32_row(const uint16_t* src, float* dst, size_t n);  // F16C where the CPU has it (signalling NaNs come out quiet)
void fp16_to_f32_row_scalar(const uint16_t* src, float* dst, size_t n);  // its scalar twin (tests)
void f32_to_fp16_row(const float* src, uint16_t* dst, size_t n);

}  // namespace alap::kernels
