package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// DLPackTensor is a tensor exported without copying in DLPack's format, for handing the data
// to other native code (a DLPack consumer such as a deep-learning framework's C API). Its
// data stays valid until Close, whatever else is closed meanwhile, and must be treated as
// read-only. CUDA tensors are exported with their device; order reads after Tensor.CUDAWait.
// It serves one goroutine at a time (Close must not overlap the getters).
type DLPackTensor struct {
	mu sync.Mutex
	p  *C.dgo_dl_managed
}

// DLPack exports the tensor as a DLPack tensor without copying. Bool is exported as uint8
// (DLPack before 0.8 has no bool code); bytes tensors are InvalidArgument.
func (t *Tensor) DLPack() (*DLPackTensor, error) {
	var out *C.dgo_dl_managed
	if err := callOn(t, func(p *C.dinput_tensor_t) C.dinput_status_t { return C.dgo_tensor_to_dlpack(&out, p) }); err != nil {
		return nil, err
	}
	d := &DLPackTensor{p: out}
	runtime.SetFinalizer(d, (*DLPackTensor).Close)
	return d, nil
}

// Managed returns the DLManagedTensor* for a consumer that takes ownership of it, and gives
// up this value's ownership: Close then does nothing, and the consumer calls the deleter.
// nil after Close or a previous Managed.
func (d *DLPackTensor) Managed() unsafe.Pointer {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.p
	d.p = nil
	runtime.SetFinalizer(d, nil)
	return unsafe.Pointer(p)
}

// Data returns the address of the first element (the DLTensor's data plus byte_offset); a
// device address for a CUDA tensor. nil after Close.
func (d *DLPackTensor) Data() unsafe.Pointer {
	t := d.tensor()
	if t == nil {
		return nil
	}
	return unsafe.Add(t.data, uintptr(t.byte_offset))
}

// Shape returns the DLTensor's shape (a copy); nil after Close.
func (d *DLPackTensor) Shape() []int64 {
	t := d.tensor()
	if t == nil {
		return nil
	}
	if t.ndim == 0 {
		return []int64{}
	}
	return append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), int(t.ndim))...)
}

// DType returns the DLDataType as (code, bits, lanes): code 0 int, 1 uint, 2 float, 4
// bfloat. Zeros after Close.
func (d *DLPackTensor) DType() (code, bits uint8, lanes uint16) {
	t := d.tensor()
	if t == nil {
		return 0, 0, 0
	}
	return uint8(t.dtype.code), uint8(t.dtype.bits), uint16(t.dtype.lanes)
}

// Device returns the DLDevice: type 1 CPU, 2 CUDA, 3 CUDA host (page-locked), and the
// device id. Zeros after Close.
func (d *DLPackTensor) Device() (deviceType, id int) {
	t := d.tensor()
	if t == nil {
		return 0, 0
	}
	return int(t.device.device_type), int(t.device.device_id)
}

// dlManaged names the C struct for the tests, which cannot use cgo.
type dlManaged = C.dgo_dl_managed

func (d *DLPackTensor) tensor() *C.dgo_dl_tensor {
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.p == nil {
		return nil
	}
	return &d.p.dl_tensor
}

// Close calls the DLPack deleter, releasing the exported data. Idempotent.
func (d *DLPackTensor) Close() error {
	if p := d.Managed(); p != nil {
		C.dgo_dlpack_delete((*C.dgo_dl_managed)(p))
	}
	return nil
}
