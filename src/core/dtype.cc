#include "core/dtype.h"

namespace dinput {

namespace {
struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::kBool, "bool", 1},         {DType::kInt8, "int8", 1},
    {DType::kInt16, "int16", 2},       {DType::kInt32, "int32", 4},
    {DType::kInt64, "int64", 8},       {DType::kUInt8, "uint8", 1},
    {DType::kUInt16, "uint16", 2},     {DType::kUInt32, "uint32", 4},
    {DType::kUInt64, "uint64", 8},     {DType::kFloat16, "float16", 2},
    {DType::kBFloat16, "bfloat16", 2}, {DType::kFloat32, "float32", 4},
    {DType::kFloat64, "float64", 8},   {DType::kBytes, "bytes", 0},
};
// The table is in the enum's order, from 1 (kInvalid has no entry): a lookup is an index.
constexpr bool in_enum_order() {
  for (size_t i = 0; i < sizeof kDTypes / sizeof kDTypes[0]; ++i)
    if (static_cast<size_t>(kDTypes[i].dtype) != i + 1) return false;
  return true;
}
static_assert(in_enum_order(), "kDTypes must list the dtypes in the order of their values");
constexpr bool sizes_agree() {
  for (const auto& info : kDTypes)
    if (dtype_size(info.dtype) != info.size) return false;
  return dtype_size(DType::kInvalid) == 0 && dtype_size(static_cast<DType>(15)) == 0;
}
static_assert(sizes_agree(), "dtype_size (dtype.h) must agree with kDTypes");
const DTypeInfo* find(DType dtype) {
  const auto i = static_cast<size_t>(static_cast<int>(dtype)) - 1;  // kInvalid wraps around
  return i < sizeof kDTypes / sizeof kDTypes[0] ? &kDTypes[i] : nullptr;
}
}  // namespace

bool dtype_valid(DType dtype) { return find(dtype) != nullptr; }

const char* dtype_name(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? info->name : "invalid";
}

DType dtype_from_name(std::string_view name) {
  for (const auto& info : kDTypes)
    if (name == info.name) return info.dtype;
  return DType::kInvalid;
}

}  // namespace dinput
