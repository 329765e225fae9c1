#include "capi/host_tensors.h"

#include <string>

#include "core/status.h"
#include "device/gpu.h"

namespace dinput::capi {

namespace {

// "<fn>: <what> is a CUDA tensor (float32[4] on GPU:0)"
std::string subject(const Tensor& tensor, const char* fn, const std::string& what) {
  return str_cat(fn ? fn : "", fn ? ": " : "", what, " is a CUDA tensor (", tensor.describe(),
                 " on GPU:", tensor.buffer()->device(), ")");
}

// Raises, naming the tensor, unless its device can be used here. Checked before any copy:
// where CUDA is not usable, or the device does not exist in this process, the tensor cannot
// be what the library made, and its memory must reach neither CUDA nor the CPU.
void require_usable_device(const Tensor& tensor, const char* fn, const std::string& what,
                           const char* use) {
  try {
    gpu::require_device(tensor.buffer()->device());
  } catch (const Error& e) {
    raise(e.code(), subject(tensor, fn, what), ", which cannot be ", use,
          " in this process: ", e.what());
  }
}

Tensor copy_checked(const Tensor& tensor, const char* fn, const std::string& what) {
  require_usable_device(tensor, fn, what, "copied to host memory");
  Tensor host;
  try {
    host = gpu::copy_to_host(tensor);
  } catch (const Error& e) {
    raise(e.code(), subject(tensor, fn, what), ", and its copy to host memory failed: ", e.what());
  }
  // A build without CUDA has no copy to make (copy_to_host returns its argument) and
  // require_device refuses every device there; this only keeps a device pointer from ever
  // reaching host code should the two disagree.
  if (!host.on_host())
    raise(Code::kInternal, subject(tensor, fn, what), ", and no copy to host memory was made");
  return host;
}

std::string component_of(size_t i, const char* what) {
  return str_cat("component ", i, " of ", what);
}

}  // namespace

Tensor host_tensor(const Tensor& tensor, const char* fn, const char* what) {
  if (tensor.on_host()) return tensor;
  return copy_checked(tensor, fn, what);
}

bool all_on_host(const Element& element) {
  for (const Tensor& t : element)
    if (!t.on_host()) return false;
  return true;
}

void move_to_host(Element& element, const char* fn, const char* what) {
  for (size_t i = 0; i < element.size(); ++i)
    if (!element[i].on_host()) element[i] = copy_checked(element[i], fn, component_of(i, what));
}

void check_devices(const Element& element, const char* fn, const char* what) {
  for (size_t i = 0; i < element.size(); ++i)
    if (!element[i].on_host()) require_usable_device(element[i], fn, component_of(i, what), "used");
}

}  // namespace dinput::capi
