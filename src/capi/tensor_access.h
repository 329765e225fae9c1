// The values of the per-tensor accessors whose definitions are more than a field read
// (dinput_tensor_data, dinput_tensor_device_type, dinput_tensor_device_index), inline, so
// that filling a dinput_tensor_info_t (api_tensor_info.cc) reads the tensor directly: a call
// from inside the library to one of its exported functions goes through the PLT, and a step
// over 8 replicas made 56 of them.
#pragma once

#include "core/buffer.h"
#include "core/tensor.h"
#include "dinput.h"

namespace dinput::capi {

// dinput_tensor_data: NULL for bytes tensors, whose strings are read one by one.
inline const void* tensor_data(const Tensor& t) {
  return t.dtype() != DType::kBytes ? t.data() : nullptr;
}

inline dinput_device_type_t tensor_device_type(const Tensor& t) {
  if (!t.defined()) return DINPUT_DEVICE_CPU;
  switch (t.buffer()->kind()) {
    case MemoryKind::kDevice:
      return DINPUT_DEVICE_CUDA;
    case MemoryKind::kPinnedHost:
      return DINPUT_DEVICE_CUDA_HOST;
    default:
      return DINPUT_DEVICE_CPU;
  }
}

// The CUDA ordinal of a device tensor, else -1.
inline int tensor_device_index(const Tensor& t) {
  return t.defined() && t.buffer()->kind() == MemoryKind::kDevice ? t.buffer()->device() : -1;
}

}  // namespace dinput::capi
