// Moving tensors between host and device: pinned staging, one copy stream per device, and
// an event per copy so consumers can order their own streams after it.
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "core/immortal.h"
#include "device/gpu.h"
#include "device/gpu_buffers.h"

namespace dinput::gpu {

#ifdef DINPUT_HAVE_CUDA

namespace {

const DeviceBuffer* device_buffer(const Tensor& t) {
  return t.defined() && t.buffer()->kind() == MemoryKind::kDevice
             ? static_cast<const DeviceBuffer*>(t.buffer().get())
             : nullptr;
}

// Pageable sources are staged in chunks of this size. On an H100 host, 2 to 4 MiB chunks
// staged 16 MiB batches about 1.5x faster than one whole-batch block, which leaves the
// staged data out of the cache by the time the GPU reads it (bench/README.md, GPU).
constexpr size_t kStagingChunk = size_t{2} << 20;

// Queues one host-to-device copy on `stream` and returns the event that completes with it;
// `source` (the memory read) is kept alive until then. The event exists before the copy is
// queued: once the copy is queued, nothing may fail before the record that says when the
// source can be released.
Event queue_copy(char* dst, const void* src, size_t n, cudaStream_t stream,
                 std::shared_ptr<const void> source) {
  Event done = new_event();
  check_cuda(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync to GPU");
  cudaError_t recorded = cudaEventRecord(done.get(), stream);
  if (recorded != cudaSuccess) {
    cudaStreamSynchronize(stream);  // the source may be released only after the copy
    check_cuda(recorded, "cudaEventRecord after a copy to GPU");
  }
  release_after(done, std::move(source));
  return done;
}

}  // namespace

bool is_special_stream(cudaStream_t s) {
  return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread;
}

// Copies run on a stream of their own per device, so they overlap the consumer's kernels.
// Immortal, like the pools: deleters that run at exit may still name these streams.
cudaStream_t copy_stream(int device) {
  struct Streams {
    std::mutex mu;
    std::map<int, cudaStream_t> by_device;
  };
  static Immortal<Streams> streams;
  std::lock_guard<std::mutex> lock(streams->mu);
  cudaStream_t& s = streams->by_device[device];
  if (!s) {
    DeviceGuard guard(device);
    check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate for copies");
  }
  return s;
}

Tensor copy_to_device(const Tensor& tensor, int device) {
  if (tensor.dtype() == DType::kBytes) return tensor;
  if (const DeviceBuffer* d = device_buffer(tensor)) {
    if (d->device() == device) return tensor;
    return copy_to_device(copy_to_host(tensor), device);  // between devices through the host
  }
  const size_t bytes = tensor.byte_size();
  cudaStream_t stream = copy_stream(device);
  std::shared_ptr<Buffer> dst = allocate_device(device, bytes, stream);
  if (bytes == 0) return Tensor(tensor.dtype(), tensor.shape(), std::move(dst), 0);
  DeviceGuard guard(device);
  Event done;
  std::shared_ptr<const Buffer> source = tensor.buffer();
  if (source->kind() == MemoryKind::kPinnedHost) {
    // Page-locked memory is copied from directly, and kept until the copy has read it.
    done = queue_copy(static_cast<char*>(dst->data()), tensor.data(), bytes, stream, source);
  } else {
    // Anything else goes through pinned staging, one chunk at a time: the chunk being
    // filled stays small enough to be in the CPU's cache when the GPU reads it, and the copy
    // of one chunk runs while the next is filled.
    const size_t chunk = kStagingChunk;
    const char* src = static_cast<const char*>(tensor.data());
    for (size_t at = 0; at < bytes; at += chunk) {
      const size_t n = std::min(chunk, bytes - at);
      std::shared_ptr<Buffer> staging = allocate_pinned(n);
      void* staged = staging->data();  // before the move below: argument order is unspecified
      std::memcpy(staged, src + at, n);
      done =
          queue_copy(static_cast<char*>(dst->data()) + at, staged, n, stream, std::move(staging));
    }
  }
  static_cast<DeviceBuffer*>(dst.get())->set_ready(std::move(done));
  return Tensor(tensor.dtype(), tensor.shape(), std::move(dst), 0);
}

Tensor copy_to_host(const Tensor& tensor) {
  const DeviceBuffer* d = device_buffer(tensor);
  if (!d) return tensor;
  require_device(d->device());  // a clear error, not CUDA's, where the GPU cannot be used
  synchronize(tensor);
  Tensor host = Tensor::allocate(tensor.dtype(), tensor.shape());
  const size_t bytes = tensor.byte_size();
  if (bytes > 0) {
    DeviceGuard guard(d->device());
    check_cuda(cudaMemcpy(host.mutable_data(), tensor.data(), bytes, cudaMemcpyDeviceToHost),
               "cudaMemcpy to host");
  }
  return host;
}

void record_stream(const Tensor& tensor, void* stream) {
  if (const DeviceBuffer* d = device_buffer(tensor))
    d->add_reader(static_cast<cudaStream_t>(stream));
}

void stream_wait(const Tensor& tensor, void* stream) {
  const DeviceBuffer* d = device_buffer(tensor);
  if (!d) return;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (!d->ready()) return;
  std::optional<DeviceGuard> guard;
  if (is_special_stream(s)) guard.emplace(d->device());
  check_cuda(cudaStreamWaitEvent(s, d->ready(), 0), "cudaStreamWaitEvent");
}

void* ready_event(const Tensor& tensor) {
  const DeviceBuffer* d = device_buffer(tensor);
  return d ? static_cast<void*>(d->ready()) : nullptr;
}

void synchronize(const Tensor& tensor) {
  const DeviceBuffer* d = device_buffer(tensor);
  if (d && d->ready()) check_cuda(cudaEventSynchronize(d->ready()), "cudaEventSynchronize");
}

#else  // CPU-only build

Tensor copy_to_device(const Tensor& tensor, int device) {
  if (tensor.dtype() == DType::kBytes) return tensor;
  require_device(device);
  return tensor;
}
Tensor copy_to_host(const Tensor& tensor) { return tensor; }
void record_stream(const Tensor&, void*) {}
void stream_wait(const Tensor&, void*) {}
void* ready_event(const Tensor&) { return nullptr; }
void synchronize(const Tensor&) {}

#endif

}  // namespace dinput::gpu
