// The buffer kinds of the GPU layer (CUDA builds only).
#pragma once

#ifdef DINPUT_HAVE_CUDA

#include <cuda_runtime_api.h>

#include <memory>

#include "core/buffer.h"
#include "device/gpu_runtime.h"

namespace dinput::gpu {

// A block of device memory from the caching allocator. `ready_` completes when the copy
// that fills it has finished; the staging buffer it was copied from stays alive until then.
class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(void* data, size_t size, int device, size_t size_class);
  ~DeviceBuffer() override;
  void set_ready(cudaEvent_t event, std::shared_ptr<const Buffer> staging);
  cudaEvent_t ready() const { return ready_; }

 private:
  size_t size_class_;
  cudaEvent_t ready_ = nullptr;
  std::shared_ptr<const Buffer> staging_;
};

// A block of page-locked host memory from the staging pool.
class PinnedBuffer final : public Buffer {
 public:
  PinnedBuffer(void* data, size_t size, size_t size_class);
  ~PinnedBuffer() override;

 private:
  size_t size_class_;
};

}  // namespace dinput::gpu

#endif
