package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"unsafe"
)

// TensorSpec is the spec of one component: a dtype and a shape whose dimensions may be
// UnknownDim.
type TensorSpec struct {
	DType DType
	Shape []int64
}

// String formats the spec like "int64[?,3]".
func (s TensorSpec) String() string { return s.DType.String() + formatShape(s.Shape) }

// Spec is the spec of an element, one TensorSpec per component. It is a plain Go value:
// specs are read from the library into Go, and built in C only for the calls that take one.
type Spec []TensorSpec

// String formats the spec like "(int64[?], float32[?,3])".
func (s Spec) String() string {
	parts := make([]string, len(s))
	for i, c := range s {
		parts[i] = c.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// specFromC copies a C spec into Go and frees it.
func specFromC(p *C.dinput_spec_t) Spec {
	defer C.dinput_spec_free(p)
	n := int(C.dinput_spec_size(p))
	out := make(Spec, n)
	for i := range out {
		rank := int(C.dinput_spec_rank(p, C.size_t(i)))
		shape := make([]int64, rank)
		if rank > 0 {
			copy(shape, unsafe.Slice((*int64)(unsafe.Pointer(C.dinput_spec_shape(p, C.size_t(i)))), rank))
		}
		out[i] = TensorSpec{DType: DType(C.dinput_spec_dtype(p, C.size_t(i))), Shape: shape}
	}
	return out
}

// toC builds the C spec (the library validates dtypes and dimensions); the caller frees it.
func (s Spec) toC() (*C.dinput_spec_t, error) {
	var p *C.dinput_spec_t
	if err := call(func() C.dinput_status_t { return C.dinput_spec_new(&p) }); err != nil {
		return nil, err
	}
	for i, c := range s {
		if !c.DType.valid() {
			C.dinput_spec_free(p)
			return nil, invalidArgument("Spec: component %d has an unknown dtype %d", i, int(c.DType))
		}
		shape := c.Shape
		err := call(func() C.dinput_status_t {
			return C.dinput_spec_add(p, C.dinput_dtype_t(c.DType), shapePtr(shape), C.int(len(shape)))
		})
		runtime.KeepAlive(shape)
		if err != nil {
			C.dinput_spec_free(p)
			return nil, err
		}
	}
	return p, nil
}
