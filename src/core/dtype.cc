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
const DTypeInfo* find(DType dtype) {
  for (const auto& info : kDTypes)
    if (info.dtype == dtype) return &info;
  return nullptr;
}
}  // namespace

bool dtype_valid(DType dtype) { return find(dtype) != nullptr; }

size_t dtype_size(DType dtype) {
  const DTypeInfo* info = find(dtype);
  return info ? info->size : 0;
}

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
