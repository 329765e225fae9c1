// Probing for CUDA at run time: the same build runs with and without a driver or GPU.
#include "core/status.h"
#include "device/gpu.h"

#ifdef DINPUT_HAVE_CUDA
#include "device/gpu_runtime.h"
#endif

namespace dinput::gpu {

const Availability& availability() {
  static const Availability probed = [] {
    Availability a;
#ifdef DINPUT_HAVE_CUDA
    a.compiled = true;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      a.reason = std::string(err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice
                                 ? "no usable CUDA driver or device ("
                                 : "CUDA is not usable (") +
                 cudaGetErrorName(err) + ": " + cudaGetErrorString(err) + ")";
      cudaGetLastError();  // clear the sticky error state of the runtime
    } else if (count == 0) {
      a.reason = "the CUDA driver reports no devices";
    } else {
      a.usable = true;
      a.devices = count;
    }
#else
    a.reason = "this build of dinput has no CUDA support";
#endif
    return a;
  }();
  return probed;
}

void require_device(int index) {
  const Availability& a = availability();
  if (!a.usable) raise(Code::kFailedPrecondition, "device GPU:", index, ": ", a.reason);
  if (index < 0 || index >= a.devices)
    raise(Code::kFailedPrecondition, "device GPU:", index, ": no such device (", a.devices,
          " CUDA device", a.devices == 1 ? "" : "s", " found: GPU:0..GPU:", a.devices - 1, ")");
}

}  // namespace dinput::gpu
