// CUDA-only helpers shared by the gpu_*.cc files (never included without DINPUT_HAVE_CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include "core/status.h"

namespace dinput::gpu {

// Raises INTERNAL (or RESOURCE_EXHAUSTED for allocation failures) with CUDA's own text.
inline void check_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  Code code = err == cudaErrorMemoryAllocation ? Code::kResourceExhausted : Code::kInternal;
  raise(code, what, " failed: ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

// Sets the calling thread's current device for the lifetime of the guard.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cudaGetDevice(&previous_);
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace dinput::gpu
