// The GPU layer behind a CUDA-free interface: the rest of the library (and builds without
// the CUDA toolkit) see only these functions. Without CUDA compiled in, or without a usable
// driver or device, they report FAILED_PRECONDITION naming the device and the reason.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

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

// Device memory from a per-device caching allocator (docs/gpu.md, "Memory reuse"): a
// released block is reused for a later request of a similar size once the GPU work that
// read it has run, which `writer` (the cudaStream_t that will fill the block) is made to
// wait for on the device. The cache keeps at most cache_limit() free bytes per device.
std::shared_ptr<Buffer> allocate_device(int device, size_t bytes, void* writer);
// Page-locked host memory from a reused staging pool whose cached total is bounded.
std::shared_ptr<Buffer> allocate_pinned(size_t bytes);

// The cache of free device blocks: its per-device bound, and releasing it.
void set_cache_limit(size_t bytes);
size_t cache_limit();
// Returns every free block of `device` (all devices for -1), and the free pinned blocks, to
// CUDA. May wait for the GPU; never called from a deleter.
void empty_cache(int device = -1);

// While one lives, `devices` are in use by an iterator; when the last DeviceUse of a device
// goes, that device's cache is emptied, so that memory dinput no longer needs goes back to
// the framework sharing the GPU.
class DeviceUse {
 public:
  explicit DeviceUse(std::vector<int> devices);
  ~DeviceUse();
  DeviceUse(const DeviceUse&) = delete;
  DeviceUse& operator=(const DeviceUse&) = delete;

 private:
  std::vector<int> devices_;
};

// The calling thread's current CUDA context, as the driver sees it (null when the thread
// has none). The runtime cannot say whether a thread has a context (cudaGetDevice answers 0
// either way), and restoring "device 0" on a thread that had none is what creates a stray
// context on GPU 0 in every process.
struct ThreadContext {
  void* context = nullptr;
  bool known = false;  // false when the driver's entry points could not be looked up
};

// Makes GPU `device` current on the calling thread for the lifetime of the guard, then puts
// back exactly what the thread had: its previous context, or none. Does nothing when
// `device` is already current, and nothing at all in a build without CUDA. See docs/gpu.md
// ("Contexts").
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  ThreadContext saved_;
  int saved_device_ = -1;  // used when the driver's entry points are unavailable
  bool switched_ = false;
};

// Makes GPU `device` current on the calling thread for good (a thread of dinput's own that
// works for that device). A no-op without CUDA or without a usable GPU.
void bind_thread(int device);

// Copies a host tensor to a device through pinned staging on the device's copy stream and
// returns at once: the result's buffer carries an event that completes with the copy.
// bytes tensors stay on the host (a device has no use for them), and so do tensors already
// on that device.
Tensor copy_to_device(const Tensor& tensor, int device);
// A host copy of any tensor (waits for its copy to finish); host tensors are returned as is.
Tensor copy_to_host(const Tensor& tensor);

// Makes `stream` (a cudaStream_t) wait until the tensor's data is ready; no-op for host
// data. Internal users that finish their reads before the tensor can go (the NCCL reduce
// synchronizes its streams) need nothing more; consumers outside also record_stream, so
// that dinput_tensor_cuda_wait does both.
void stream_wait(const Tensor& tensor, void* stream);
// Records `stream` as a reader of the tensor's device block: the block is reused only after
// the work queued on it by the time the block is released. No-op for host data.
void record_stream(const Tensor& tensor, void* stream);
// The tensor's ready event (a cudaEvent_t), or null for host data.
void* ready_event(const Tensor& tensor);
// Blocks the calling thread until the tensor's data is ready.
void synchronize(const Tensor& tensor);

// An allocator for ScopedHostAllocator that serves host memory from the pinned pool, or
// nullptr without CUDA: batches built under it reach the GPU without a staging copy.
HostAllocator pinned_host_allocator();

// Bytes of device memory the caching allocator holds for `device` (in use and cached).
size_t pooled_device_bytes(int device);
// Of those, the bytes of free blocks waiting for reuse.
size_t cached_device_bytes(int device);

// Host allocations below this size are not pinned by pinned_host_allocator: staging them is
// cheap, and page-locking many small blocks is not.
constexpr size_t kPinThreshold = size_t{256} << 10;

}  // namespace dinput::gpu
