// Thread contexts and events for the GPU layer. Without CUDA, the guards do nothing.
#include "device/gpu.h"

#ifdef DINPUT_HAVE_CUDA

#include <cuda.h>

#include "device/gpu_runtime.h"

namespace dinput::gpu {

namespace {

// The two driver functions the guard needs, found through the runtime (which has opened
// the driver already) rather than by linking libcuda, which machines without a GPU lack.
struct ContextApi {
  CUresult (*get_current)(CUcontext*) = nullptr;
  CUresult (*set_current)(CUcontext) = nullptr;
};

const ContextApi& context_api() {
  static const ContextApi api = [] {
    ContextApi a;
    cudaDriverEntryPointQueryResult found{};
    void* get = nullptr;
    void* set = nullptr;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get, 12000, cudaEnableDefault,
                                         &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess &&
        cudaGetDriverEntryPointByVersion("cuCtxSetCurrent", &set, 12000, cudaEnableDefault,
                                         &found) == cudaSuccess &&
        found == cudaDriverEntryPointSuccess) {
      a.get_current = reinterpret_cast<CUresult (*)(CUcontext*)>(get);
      a.set_current = reinterpret_cast<CUresult (*)(CUcontext)>(set);
    }
    cudaGetLastError();  // a failed lookup must not linger as the runtime's last error
    return a;
  }();
  return api;
}

}  // namespace

ThreadContext current_context() {
  ThreadContext t;
  const ContextApi& api = context_api();
  CUcontext c = nullptr;
  if (api.get_current && api.get_current(&c) == CUDA_SUCCESS) {
    t.context = c;
    t.known = true;
  }
  return t;
}

void make_current(const ThreadContext& saved) {
  const ContextApi& api = context_api();
  if (saved.known && api.set_current) api.set_current(static_cast<CUcontext>(saved.context));
}

DeviceGuard::DeviceGuard(int device) {
  if (!availability().usable) return;  // nothing to switch: no GPU work can follow
  saved_ = current_context();
  int current = -1;
  if (saved_.known) {
    // A thread with no context would report device 0 without having it: switch then.
    if (saved_.context && cudaGetDevice(&current) == cudaSuccess && current == device) return;
  } else if (cudaGetDevice(&saved_device_) == cudaSuccess && saved_device_ == device) {
    return;
  }
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  switched_ = true;
}

DeviceGuard::~DeviceGuard() {
  if (!switched_) return;
  if (saved_.known)
    make_current(saved_);  // a thread that had no context gets none back, not one on GPU 0
  else if (saved_device_ >= 0)
    cudaSetDevice(saved_device_);
}

void bind_thread(int device) {
  if (!availability().usable) return;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
}

Event new_event() {
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  return Event(e, [](cudaEvent_t ev) { cudaEventDestroy(ev); });
}

}  // namespace dinput::gpu

#else  // CPU-only build: no device to make current.

namespace dinput::gpu {

DeviceGuard::DeviceGuard(int) {}
DeviceGuard::~DeviceGuard() = default;
void bind_thread(int) {}

}  // namespace dinput::gpu

#endif  // DINPUT_HAVE_CUDA
