package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"math"
	"runtime"
	"unsafe"
)

// CUDA tensors.
//
// A distributed iterator whose replicas are GPUs delivers tensors in device memory
// (DeviceType() == DeviceCUDA), filled by an asynchronous copy on a copy stream of dinput's.
// Before a kernel on your stream reads one, order the stream after that copy with
// Tensor.CUDAWait (or Element.CUDAWait for every component); neither blocks the host. The
// wait also records the stream as a reader of the tensor: once the tensor's last handle is
// closed its memory goes back to dinput's cache, and it is handed to a later copy only after
// the work queued on every recorded stream by then has run. So a tensor may be closed as soon
// as the kernels that read it are queued. A stream that reads the tensor without that wait
// must be recorded with Tensor.CUDARecordStream.
//
// For host tensors every call here is a no-op, and in a build of dinput without CUDA they all
// succeed. The binding needs no CUDA headers: streams and events are integers.

// CUDAStream is a CUDA stream handle (a cudaStream_t, or the driver API's CUstream, which is
// the same handle) as an integer. From cgo: dinput.CUDAStream(uintptr(unsafe.Pointer(s)))
// for a C.cudaStream_t s. dinput keeps the handles it is given and records an event on each
// when the tensor's last handle is closed, so a stream passed to CUDAWait or
// CUDARecordStream must stay valid (not destroyed) until then, clones, elements and
// per-replica values holding the tensor included.
type CUDAStream uintptr

// The special stream handles, always valid.
const (
	// CUDAStreamDefault (handle 0) is the legacy default stream of the tensor's GPU.
	CUDAStreamDefault CUDAStream = 0
	// CUDAStreamLegacy is cudaStreamLegacy: the legacy default stream, whatever the
	// thread's default is.
	CUDAStreamLegacy CUDAStream = 1
	// CUDAStreamPerThread is cudaStreamPerThread: the calling thread's default stream.
	CUDAStreamPerThread CUDAStream = 2
)

// DeviceType says where a tensor's data lives; the numbers are DLPack's device types.
type DeviceType int

// The device types, with the numbers of dinput.h.
const (
	// DeviceCPU is host memory.
	DeviceCPU DeviceType = 1
	// DeviceCUDA is the memory of a GPU (see Tensor.DeviceIndex): the data accessors copy
	// it to the host.
	DeviceCUDA DeviceType = 2
	// DeviceCUDAHost is page-locked host memory, readable like DeviceCPU.
	DeviceCUDAHost DeviceType = 3
)

// String returns "cpu", "cuda" or "cuda_host".
func (d DeviceType) String() string {
	switch d {
	case DeviceCPU:
		return "cpu"
	case DeviceCUDA:
		return "cuda"
	case DeviceCUDAHost:
		return "cuda_host"
	}
	return "unknown"
}

// DeviceType returns where the tensor's data lives (DeviceCPU for a nil or closed Tensor).
func (t *Tensor) DeviceType() DeviceType {
	if t == nil {
		return DeviceCPU
	}
	p := t.ref.acquire()
	defer t.ref.release()
	d := DeviceType(C.dinput_tensor_device_type(p))
	runtime.KeepAlive(t)
	return d
}

// DeviceIndex returns the GPU ordinal of a DeviceCUDA tensor; -1 otherwise.
func (t *Tensor) DeviceIndex() int {
	if t == nil {
		return -1
	}
	p := t.ref.acquire()
	defer t.ref.release()
	i := int(C.dinput_tensor_device_index(p))
	runtime.KeepAlive(t)
	return i
}

// ToHost returns a tensor in host memory with the same values: for a CUDA tensor a copy
// (made once the copy that fills it is done), for a host tensor a new handle to the same
// data. Close both.
func (t *Tensor) ToHost() (*Tensor, error) {
	var out *C.dinput_tensor_t
	if err := callOn(t, func(p *C.dinput_tensor_t) C.dinput_status_t { return C.dinput_tensor_to_host(&out, p) }); err != nil {
		return nil, err
	}
	return wrapTensor(out, C.dgo_tensor_describe(out)), nil
}

// CUDAWait makes stream wait, on the GPU and without blocking the host, until the copy that
// fills the tensor has finished, and records stream as a reader of the tensor (as
// CUDARecordStream does). Call it before queueing kernels that read the tensor on stream;
// the tensor may be closed as soon as they are queued. A no-op for host tensors.
func (t *Tensor) CUDAWait(stream CUDAStream) error {
	return t.cudaCall(func(p *C.dinput_tensor_t) C.dinput_status_t {
		return C.dgo_tensor_cuda_wait(p, C.uintptr_t(stream))
	})
}

// CUDARecordStream tells dinput that GPU work on stream reads the tensor, so that its device
// memory is not handed to a later copy until the work queued on stream by the time the last
// handle is closed has run. CUDAWait does this already; use it for a stream that reads the
// data without that wait (one that waited on CUDAReadyEvent, or a second stream of yours),
// as PyTorch's Tensor.record_stream. A no-op for host tensors; never blocks.
func (t *Tensor) CUDARecordStream(stream CUDAStream) error {
	return t.cudaCall(func(p *C.dinput_tensor_t) C.dinput_status_t {
		return C.dgo_tensor_cuda_record_stream(p, C.uintptr_t(stream))
	})
}

func (t *Tensor) cudaCall(f func(p *C.dinput_tensor_t) C.dinput_status_t) error {
	return callOn(t, f)
}

// CUDAReadyEvent returns the CUDA event (a cudaEvent_t as an integer) that completes with
// the copy filling the tensor; 0 for host tensors, tensors whose data was ready at once, and
// a nil or closed Tensor. The event is borrowed: it is valid while the tensor is open (keep
// it reachable, e.g. with runtime.KeepAlive(t), while you use the event) and must never be
// destroyed. For cudaStreamWaitEvent on a stream of yours (then call CUDARecordStream for
// that stream) or cudaEventQuery; CUDAWait is simpler.
func (t *Tensor) CUDAReadyEvent() uintptr {
	if t == nil {
		return 0
	}
	p := t.ref.acquire()
	defer t.ref.release()
	ev := uintptr(C.dgo_tensor_cuda_ready_event(p))
	runtime.KeepAlive(t)
	return ev
}

// CUDAWait is Tensor.CUDAWait for every component of the element.
func (e *Element) CUDAWait(stream CUDAStream) error {
	return callOn(e, func(p *C.dinput_element_t) C.dinput_status_t { return C.dgo_element_cuda_wait(p, C.uintptr_t(stream)) })
}

// NewPinnedTensor is NewTensor in page-locked (pinned) host memory (DeviceCUDAHost): copies
// of it to a GPU skip the staging copy that pageable memory needs. For data a distributed
// iterator sends to GPUs many times (FromTensors with Repeat). Without a usable CUDA driver
// and device (always in a build without CUDA) it fails with FailedPrecondition; when no
// page-locked memory is left, with ResourceExhausted.
func NewPinnedTensor[T Scalar](shape []int64, data []T) (*Tensor, error) {
	if err := checkShape("NewPinnedTensor", shape, len(data)); err != nil {
		return nil, err
	}
	var zero T
	return newTensorIn(true, DTypeOf[T](), shape, sliceData(data), uintptr(len(data))*unsafe.Sizeof(zero))
}

// NewPinnedTensorRaw is NewTensorRaw in page-locked host memory (see NewPinnedTensor).
func NewPinnedTensorRaw(dtype DType, shape []int64, data []byte) (*Tensor, error) {
	if err := checkRaw("NewPinnedTensorRaw", dtype, shape, data); err != nil {
		return nil, err
	}
	return newTensorIn(true, dtype, shape, sliceData(data), uintptr(len(data)))
}

// CUDAEmptyCache releases every cached block on every GPU, and the cached pinned host
// blocks, back to CUDA; blocks that live tensors hold are kept. Blocks whose readers may
// still run on the GPU are released after that work, so it may wait for the GPU. Call it
// before another framework in the process needs the memory. The cache of a GPU is also
// emptied when the last distributed iterator feeding it is closed.
func CUDAEmptyCache() error {
	return call(func() C.dinput_status_t { return C.dinput_cuda_empty_cache() })
}

// SetCUDACacheLimit sets how many bytes of free blocks the cache of each GPU may keep
// (default 1 GiB, or DINPUT_CUDA_CACHE_MB from the environment); blocks freed beyond it go
// back to CUDA. 0 disables caching. Process-wide; takes effect at once.
func SetCUDACacheLimit(bytes uint64) error {
	if uint64(C.size_t(bytes)) != bytes {
		return invalidArgument("SetCUDACacheLimit: %d bytes do not fit in a size_t", bytes)
	}
	return call(func() C.dinput_status_t { return C.dinput_cuda_set_cache_limit(C.size_t(bytes)) })
}

// CUDACacheLimit returns the per-GPU cache limit in effect, in bytes.
func CUDACacheLimit() (uint64, error) {
	var out C.size_t
	err := call(func() C.dinput_status_t { return C.dinput_cuda_cache_limit(&out) })
	return uint64(out), err
}

// CUDAPoolBytes returns the device memory dinput holds on GPU device: held is every byte
// allocated from CUDA and not yet returned (blocks of live tensors and cached ones), cached
// the part that is free for reuse. A GPU dinput never used, or a build without CUDA, gives
// 0 and 0; a negative device is an InvalidArgument error.
func CUDAPoolBytes(device int) (held, cached uint64, err error) {
	if int64(device) > math.MaxInt32 {
		// C's int is narrower than Go's; the library checks the rest (a negative device).
		return 0, 0, invalidArgument("CUDAPoolBytes: device %d does not fit in a C int", device)
	}
	var h, c C.size_t
	err = call(func() C.dinput_status_t { return C.dinput_cuda_pool_bytes(&h, &c, C.int(device)) })
	return uint64(h), uint64(c), err
}
