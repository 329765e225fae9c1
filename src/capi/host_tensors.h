// CUDA tensors coming back into the library. A distributed iterator whose replicas are GPUs
// hands out tensors in device memory, and nothing stops a caller from passing one back: as an
// argument (dinput_dataset_from_tensors, dinput_tensor_copy_to, ...) or in what a callback
// returns (a map function, a generator). Host code reads tensor bytes with the CPU, which on
// a device pointer crashes the process. So every place where a tensor from the user enters
// host code goes through one of these functions (one rule and one message for all of them),
// and the core's byte-copying operations check Tensor::on_host as a last line of defence.
#pragma once

#include "core/element.h"

namespace dinput::capi {

// `tensor` itself when its data is in host memory, else a copy in host memory (waiting for
// the copy that filled the CUDA tensor). A CUDA tensor that cannot be copied (no usable CUDA
// in this process, a device that does not exist here, a failed copy) is an error with the
// code of the cause (FAILED_PRECONDITION for an unusable device), raised before anything
// reads its memory. The message is "<fn>: <what> is a CUDA tensor (...)": fn is the exported
// function the tensor was passed to, or null for a callback's result; `what` names the
// argument ("argument 'tensor'") or the result ("the element the map callback returned").
Tensor host_tensor(const Tensor& tensor, const char* fn, const char* what);

// Whether every component of `element` is in host memory (nothing for move_to_host to do).
bool all_on_host(const Element& element);

// host_tensor for every component of `element`, in place; messages name the component
// ("component 1 of <what>"). Host components are left alone, so an element wholly in host
// memory costs one look at each component's buffer.
void move_to_host(Element& element, const char* fn, const char* what);

// Checks, without copying, that every CUDA tensor of `element` is on a device that can be
// used in this process: for operations that accept device tensors themselves (reduce), so
// that a tensor that cannot be real never reaches CUDA or host code. Errors as host_tensor's.
void check_devices(const Element& element, const char* fn, const char* what);

}  // namespace dinput::capi
