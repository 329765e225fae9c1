// CUDA-only helpers shared by the gpu_*.cc files (never included without DINPUT_HAVE_CUDA).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "core/status.h"
#include "device/gpu.h"

namespace dinput::gpu {

// Raises INTERNAL (or RESOURCE_EXHAUSTED for allocation failures) with CUDA's own text.
inline void check_cuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  Code code = err == cudaErrorMemoryAllocation ? Code::kResourceExhausted : Code::kInternal;
  raise(code, what, " failed: ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

// The calling thread's context, and making a saved one (or none) current again.
ThreadContext current_context();
void make_current(const ThreadContext& saved);

// A CUDA event owned by reference count (cudaEventDestroy when the last owner lets go).
using Event = std::shared_ptr<CUevent_st>;
// A new event without timing, on the current device.
Event new_event();

}  // namespace dinput::gpu
