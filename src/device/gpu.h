// The GPU layer behind a CUDA-free interface: the rest of the library (and builds without
// the CUDA toolkit) see only these functions. Without CUDA compiled in, or without a usable
// driver or device, they report FAILED_PRECONDITION naming the device and the reason.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/buffer.h"
#include "core/tensor.h"

namespace dinput::gpu {

struct Availability {
  bool compiled = false;  // CUDA support built in
  bool usable = false;    // a driver answered and at least one device exists
  int devices = 0;
  std::string reason;  // why not usable, e.g. "no CUDA driver: ..."
};

// Probed once (cached); never throws.
const Availability& availability();

// Raises FAILED_PRECONDITION "device GPU:k: <reason>" unless GPU `index` can be used.
void require_device(int index);

// Device memory from a per-device caching allocator: released blocks return to the pool
// and are reused for later requests of the same size class.
std::shared_ptr<Buffer> allocate_device(int device, size_t bytes);
// Page-locked host memory from a reused staging pool whose cached total is bounded.
std::shared_ptr<Buffer> allocate_pinned(size_t bytes);

// Copies a host tensor to a device through pinned staging on the device's copy stream and
// returns at once: the result's buffer carries an event that completes with the copy.
// bytes tensors stay on the host (a device has no use for them), and so do tensors already
// on that device.
Tensor copy_to_device(const Tensor& tensor, int device);
// A host copy of any tensor (waits for its copy to finish); host tensors are returned as is.
Tensor copy_to_host(const Tensor& tensor);

// Makes `stream` (a cudaStream_t) wait until the tensor's data is ready; no-op for host data.
void stream_wait(const Tensor& tensor, void* stream);
// The tensor's ready event (a cudaEvent_t), or null for host data.
void* ready_event(const Tensor& tensor);
// Blocks the calling thread until the tensor's data is ready.
void synchronize(const Tensor& tensor);

// An allocator for ScopedHostAllocator that serves host memory from the pinned pool, or
// nullptr without CUDA: batches built under it reach the GPU without a staging copy.
HostAllocator pinned_host_allocator();

// Bytes of device memory the caching allocator holds for `device` (in use and cached).
size_t pooled_device_bytes(int device);

}  // namespace dinput::gpu
