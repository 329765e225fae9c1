// The buffer kinds of the GPU layer (CUDA builds only).
#pragma once

#ifdef DINPUT_HAVE_CUDA

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <vector>

#include "core/buffer.h"
#include "device/gpu_runtime.h"

namespace dinput::gpu {

// A block of device memory from the caching allocator. `ready_` completes when the copy
// that fills it has finished. The streams that read it (`readers_`) are recorded so that,
// when the last reference goes, the block returns to the cache together with events that
// complete after that reading: the next writer of the block waits on them on the GPU
// (docs/gpu.md, "Memory reuse"). Nothing here blocks the host.
class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(void* data, size_t size, int device, size_t block_size);
  ~DeviceBuffer() override;
  void set_ready(Event event) { ready_ = std::move(event); }
  cudaEvent_t ready() const { return ready_.get(); }
  // Records a stream whose work reads this block; 0 means the device's legacy stream. The
  // stream's device is looked up now, while the stream is surely valid.
  void add_reader(cudaStream_t stream) const;

 private:
  struct Reader {
    cudaStream_t stream;
    int device;
  };
  size_t block_size_;
  Event ready_;
  mutable std::mutex mu_;
  mutable std::vector<Reader> readers_;
};

// A block of page-locked host memory from the staging pool.
class PinnedBuffer final : public Buffer {
 public:
  PinnedBuffer(void* data, size_t size, size_t block_size);
  ~PinnedBuffer() override;

 private:
  size_t block_size_;
};

// Keeps `owner` (a staging or pinned source buffer) alive until `event` completes, without
// waiting for it: host memory that a queued copy still reads must not be handed out again.
void release_after(Event event, std::shared_ptr<const void> owner);

// Lets go of the owners kept by release_after whose events have completed.
void poll_deferred_releases();

// The special stream handles (0, cudaStreamLegacy, cudaStreamPerThread) name a stream of
// whichever device is current: dinput makes the tensor's device current for them.
bool is_special_stream(cudaStream_t s);

// The stream dinput copies to `device` on (created on first use, never destroyed).
cudaStream_t copy_stream(int device);

}  // namespace dinput::gpu

#endif
