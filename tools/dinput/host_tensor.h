// Reading values the library delivered to a GPU: the tool prints and checksums host memory,
// so a CUDA tensor is first copied back with dinput_tensor_to_host.
#ifndef DINPUT_TOOL_HOST_TENSOR_H_
#define DINPUT_TOOL_HOST_TENSOR_H_

#include "dinput.h"
#include "status.h"

namespace dinput_tool {

class HostTensor {
 public:
  HostTensor() = default;
  ~HostTensor() { dinput_tensor_free(copy_); }
  HostTensor(const HostTensor&) = delete;
  HostTensor& operator=(const HostTensor&) = delete;

  // `tensor` itself when it is in host memory, else a host copy owned by this object.
  void open(const dinput_tensor_t* tensor) {
    view_ = tensor;
    if (dinput_tensor_device_type(tensor) != DINPUT_DEVICE_CUDA) return;
    check(dinput_tensor_to_host(&copy_, tensor), "dinput_tensor_to_host");
    view_ = copy_;
  }
  const dinput_tensor_t* get() const { return view_; }

 private:
  const dinput_tensor_t* view_ = nullptr;
  dinput_tensor_t* copy_ = nullptr;
};

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_HOST_TENSOR_H_
