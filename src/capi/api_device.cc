// Device placement of tensors, and the functions of dinput_cuda.h. Those take CUDA stream
// and event handles, which are pointers: they are defined here with void* so that every
// build — with or without the CUDA toolkit — exports the same symbols.
#include "capi/firewall.h"
#include "capi/handles.h"
#include "device/gpu.h"

using namespace dinput;

extern "C" {

DINPUT_API dinput_device_type_t dinput_tensor_device_type(const dinput_tensor_t* t) {
  if (!t || !t->t.defined()) return DINPUT_DEVICE_CPU;
  switch (t->t.buffer()->kind()) {
    case MemoryKind::kDevice: return DINPUT_DEVICE_CUDA;
    case MemoryKind::kPinnedHost: return DINPUT_DEVICE_CUDA_HOST;
    default: return DINPUT_DEVICE_CPU;
  }
}

DINPUT_API int dinput_tensor_device_index(const dinput_tensor_t* t) {
  return t && t->t.defined() && t->t.buffer()->kind() == MemoryKind::kDevice ? t->t.buffer()->device() : -1;
}

DINPUT_API dinput_status_t dinput_tensor_to_host(dinput_tensor_t** out, const dinput_tensor_t* tensor) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(tensor);
    *out = capi::new_handle<dinput_tensor>(gpu::copy_to_host(tensor->t));
  });
}

DINPUT_API dinput_status_t dinput_tensor_cuda_wait(const dinput_tensor_t* tensor, void* stream) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(tensor);
    gpu::stream_wait(tensor->t, stream);
  });
}

DINPUT_API dinput_status_t dinput_element_cuda_wait(const dinput_element_t* element, void* stream) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(element);
    for (const auto& t : element->parts) gpu::stream_wait(t, stream);
  });
}

DINPUT_API void* dinput_tensor_cuda_ready_event(const dinput_tensor_t* tensor) {
  return capi::guard_value<void*>(nullptr, [&] { return tensor ? gpu::ready_event(tensor->t) : nullptr; });
}

}  // extern "C"
