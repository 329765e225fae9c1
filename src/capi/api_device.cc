// Device placement of tensors, and the functions of dinput_cuda.h. That header is included so
// that the compiler checks these definitions against its declarations. Every build exports
// them with the same signatures: a CPU-only build gets the CUDA handle types from
// capi/no_cuda/cuda_runtime_api.h, which declares them as the toolkit does, and there the
// functions are the no-ops they are for any host tensor (no tensor can be on a GPU).
#include "dinput_cuda.h"

#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/host_tensors.h"
#include "capi/tensor_access.h"
#include "device/gpu.h"

using namespace dinput;

extern "C" {

DINPUT_API dinput_device_type_t dinput_tensor_device_type(const dinput_tensor_t* t) {
  return t ? capi::tensor_device_type(t->t) : DINPUT_DEVICE_CPU;
}

DINPUT_API int dinput_tensor_device_index(const dinput_tensor_t* t) {
  return t ? capi::tensor_device_index(t->t) : -1;
}

DINPUT_API dinput_status_t dinput_tensor_to_host(dinput_tensor_t** out,
                                                 const dinput_tensor_t* tensor) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(tensor);
    *out = capi::new_handle<dinput_tensor>(
        capi::host_tensor(tensor->t, capi::current_function(), "argument 'tensor'"));
  });
}

DINPUT_API dinput_status_t dinput_tensor_cuda_wait(const dinput_tensor_t* tensor,
                                                   cudaStream_t stream) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(tensor);
    gpu::record_stream(tensor->t, stream);
    gpu::stream_wait(tensor->t, stream);
  });
}

DINPUT_API dinput_status_t dinput_element_cuda_wait(const dinput_element_t* element,
                                                    cudaStream_t stream) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(element);
    for (const auto& t : element->parts) {
      gpu::record_stream(t, stream);
      gpu::stream_wait(t, stream);
    }
  });
}

DINPUT_API dinput_status_t dinput_tensor_cuda_record_stream(const dinput_tensor_t* tensor,
                                                            cudaStream_t stream) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(tensor);
    gpu::record_stream(tensor->t, stream);
  });
}

DINPUT_API dinput_status_t dinput_cuda_empty_cache(void) {
  return capi::guard(__func__, [&] { gpu::empty_cache(); });
}

DINPUT_API dinput_status_t dinput_cuda_set_cache_limit(size_t bytes) {
  return capi::guard(__func__, [&] { gpu::set_cache_limit(bytes); });
}

DINPUT_API dinput_status_t dinput_cuda_cache_limit(size_t* out) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(out);
    *out = gpu::cache_limit();
  });
}

DINPUT_API dinput_status_t dinput_cuda_pool_bytes(size_t* out_held, size_t* out_cached,
                                                  int device) {
  return capi::guard(__func__, [&] {
    if (out_held) *out_held = 0;
    if (out_cached) *out_cached = 0;
    DINPUT_CHECK_ARG(device >= 0, "dinput_cuda_pool_bytes: device must be >= 0, got ", device);
    if (device >= gpu::availability().devices) return;  // never used: nothing held
    if (out_held) *out_held = gpu::pooled_device_bytes(device);
    if (out_cached) *out_cached = gpu::cached_device_bytes(device);
  });
}

DINPUT_API cudaEvent_t dinput_tensor_cuda_ready_event(const dinput_tensor_t* tensor) {
  return capi::guard_value<cudaEvent_t>(nullptr, [&] {
    return tensor ? static_cast<cudaEvent_t>(gpu::ready_event(tensor->t)) : nullptr;
  });
}

}  // extern "C"
