// Element data types. The numbering is the C ABI's dinput_dtype_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace dinput {

enum class DType : int {
  kInvalid = 0,
  kBool = 1,
  kInt8 = 2,
  kInt16 = 3,
  kInt32 = 4,
  kInt64 = 5,
  kUInt8 = 6,
  kUInt16 = 7,
  kUInt32 = 8,
  kUInt64 = 9,
  kFloat16 = 10,
  kBFloat16 = 11,
  kFloat32 = 12,
  kFloat64 = 13,
  kBytes = 14,
};

bool dtype_valid(DType dtype);
// Size of one scalar; 0 for kBytes (variable length) and kInvalid. Inline (every slice of a
// batch asks); dtype.cc checks the table against its list of dtypes.
constexpr size_t dtype_size(DType dtype) {
  constexpr unsigned char kSizes[] = {0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 2, 4, 8, 0};
  const auto i = static_cast<unsigned>(static_cast<int>(dtype));
  return i < sizeof kSizes ? kSizes[i] : 0;
}
const char* dtype_name(DType dtype);
DType dtype_from_name(std::string_view name);

}  // namespace dinput
