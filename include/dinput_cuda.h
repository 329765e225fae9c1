/**
 * \file dinput_cuda.h
 * dinput_cuda.h — the CUDA-typed part of the dinput C API.
 *
 * Kept apart from dinput.h so that programs and bindings that never touch CUDA types need
 * no CUDA headers. Tensors that a distributed iterator delivers to GPU replicas (fetch_to_device,
 * the default) are filled by an asynchronous copy on a copy stream of dinput's; before a
 * kernel on the consumer's stream reads one, order that stream after the copy with
 * dinput_tensor_cuda_wait (or dinput_element_cuda_wait for a whole element). These calls
 * never block the host. Host tensors need no waiting: the calls are no-ops for them.
 *
 * dinput links the CUDA runtime statically, so it needs a driver that supports the toolkit
 * it was built with (docs/gpu.md lists the minimum: 580 for CUDA 13.0); with an older
 * driver, or none, every GPU is reported unusable and the library runs on the host.
 *
 * Every build of dinput exports these functions and installs this header. In a build without
 * CUDA support they succeed as no-ops (as they do for host tensors in any build), since no
 * tensor can then live on a GPU. Including this header needs CUDA's runtime headers
 * (cuda_runtime_api.h, from the CUDA toolkit) on the include path, whatever the build of
 * dinput.
 */
#ifndef DINPUT_CUDA_H
#define DINPUT_CUDA_H

#include <cuda_runtime_api.h>

#include "dinput.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Makes `stream` wait (on the device, without blocking the host) until the copy that fills
 * `tensor` has finished, and records `stream` as a reader of the tensor (as
 * dinput_tensor_cuda_record_stream does): the tensor's memory is reused only after the work
 * queued on `stream` before its last reference was freed has run, so the handle may be freed
 * as soon as that work is queued. `stream` must stay valid until then. A stream handle of 0
 * means the legacy default stream of the tensor's GPU; cudaStreamPerThread and
 * cudaStreamLegacy are accepted too. */
DINPUT_API dinput_status_t dinput_tensor_cuda_wait(const dinput_tensor_t* tensor,
                                                   cudaStream_t stream);

/** dinput_tensor_cuda_wait for every component of the element. */
DINPUT_API dinput_status_t dinput_element_cuda_wait(const dinput_element_t* element,
                                                    cudaStream_t stream);

/** Tells dinput that GPU work on `stream` reads `tensor`, so that its device memory is not
 * handed to a later copy until the work queued on `stream` by the time the last reference to
 * the tensor is freed has run. dinput_tensor_cuda_wait records its stream this way already;
 * call this for streams that read the data without that wait, for example a stream that
 * waited on the ready event itself, or another stream of the consumer's (PyTorch's
 * Tensor.record_stream, for the same reason). The stream must stay valid until the tensor's
 * last reference is freed. No-op for host tensors. Never blocks. */
DINPUT_API dinput_status_t dinput_tensor_cuda_record_stream(const dinput_tensor_t* tensor,
                                                            cudaStream_t stream);

/** The event that completes with the copy filling `tensor`; NULL for a NULL tensor, host
 * tensors and tensors whose data was ready at once. BORROWED, so returned directly (not
 * through an out-parameter, which would be owned): valid while the tensor handle lives, and
 * never to be destroyed by the caller. For waiting on it, dinput_tensor_cuda_wait is
 * simpler; the event is for callers that need it themselves (cudaEventQuery, or
 * cudaStreamWaitEvent on a stream of their own). */
DINPUT_API cudaEvent_t dinput_tensor_cuda_ready_event(const dinput_tensor_t* tensor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DINPUT_CUDA_H */
