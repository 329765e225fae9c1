// Moving tensors between host and device: pinned staging, one copy stream per device, and
// an event per copy so consumers can order their own streams after it.
#include <cstring>
#include <map>
#include <mutex>

#include "device/gpu.h"
#include "device/gpu_buffers.h"

namespace dinput::gpu {

#ifdef DINPUT_HAVE_CUDA

namespace {

// Copies run on a stream of their own per device, so they overlap the consumer's kernels.
cudaStream_t copy_stream(int device) {
  static std::mutex mu;
  static std::map<int, cudaStream_t> streams;
  std::lock_guard<std::mutex> lock(mu);
  cudaStream_t& s = streams[device];
  if (!s) {
    DeviceGuard guard(device);
    check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate for copies");
  }
  return s;
}

const DeviceBuffer* device_buffer(const Tensor& t) {
  return t.defined() && t.buffer()->kind() == MemoryKind::kDevice
             ? static_cast<const DeviceBuffer*>(t.buffer().get())
             : nullptr;
}

}  // namespace

Tensor copy_to_device(const Tensor& tensor, int device) {
  if (tensor.dtype() == DType::kBytes) return tensor;
  if (const DeviceBuffer* d = device_buffer(tensor)) {
    if (d->device() == device) return tensor;
    return copy_to_device(copy_to_host(tensor), device);  // between devices through the host
  }
  const size_t bytes = tensor.byte_size();
  std::shared_ptr<Buffer> dst = allocate_device(device, bytes);
  if (bytes > 0) {
    // Page-locked memory is copied from directly (and kept alive until the copy is done);
    // anything else goes through a pinned staging block first.
    std::shared_ptr<const Buffer> source = tensor.buffer();
    const void* src = tensor.data();
    if (source->kind() != MemoryKind::kPinnedHost) {
      std::shared_ptr<Buffer> staging = allocate_pinned(bytes);
      std::memcpy(staging->data(), src, bytes);
      src = staging->data();
      source = std::move(staging);
    }
    DeviceGuard guard(device);
    cudaStream_t stream = copy_stream(device);
    check_cuda(cudaMemcpyAsync(dst->data(), src, bytes, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync to GPU");
    cudaEvent_t done = nullptr;
    check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
    check_cuda(cudaEventRecord(done, stream), "cudaEventRecord");
    static_cast<DeviceBuffer*>(dst.get())->set_ready(done, std::move(source));
  }
  return Tensor(tensor.dtype(), tensor.shape(), std::move(dst), 0);
}

Tensor copy_to_host(const Tensor& tensor) {
  const DeviceBuffer* d = device_buffer(tensor);
  if (!d) return tensor;
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

void stream_wait(const Tensor& tensor, void* stream) {
  const DeviceBuffer* d = device_buffer(tensor);
  if (!d || !d->ready()) return;
  check_cuda(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), d->ready(), 0),
             "cudaStreamWaitEvent");
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
void stream_wait(const Tensor&, void*) {}
void* ready_event(const Tensor&) { return nullptr; }
void synchronize(const Tensor&) {}

#endif

}  // namespace dinput::gpu
