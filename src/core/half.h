// float16 (IEEE binary16) and bfloat16 conversions, for arithmetic on those dtypes (reduce).
#pragma once

#include <cstdint>

namespace dinput {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even
float bfloat16_to_float(uint16_t b);
uint16_t float_to_bfloat16(float f);  // round to nearest even

}  // namespace dinput
