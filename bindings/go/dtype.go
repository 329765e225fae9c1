package dinput

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// DType is the data type of a tensor's scalars.
type DType int

// The dtypes, with the numbers of dinput.h. Bytes tensors hold a variable-length byte
// string per scalar.
const (
	InvalidDType DType = 0
	Bool         DType = 1
	Int8         DType = 2
	Int16        DType = 3
	Int32        DType = 4
	Int64        DType = 5
	Uint8        DType = 6
	Uint16       DType = 7
	Uint32       DType = 8
	Uint64       DType = 9
	Float16      DType = 10
	BFloat16     DType = 11
	Float32      DType = 12
	Float64      DType = 13
	Bytes        DType = 14
)

// String returns the library's name of the dtype ("int64", "float32", "bytes", ...;
// "invalid" for unknown values).
func (d DType) String() string {
	if !d.valid() {
		return "invalid"
	}
	return C.GoString(C.dinput_dtype_name(C.dinput_dtype_t(d)))
}

// Size returns the size of one scalar in bytes; 0 for Bytes and invalid dtypes.
func (d DType) Size() int {
	if !d.valid() {
		return 0
	}
	return int(C.dinput_dtype_size(C.dinput_dtype_t(d)))
}

// ParseDType parses a dtype name as printed by DType.String; it returns InvalidDType for an
// unknown name.
func ParseDType(name string) DType {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	return DType(C.dinput_dtype_from_name(cs))
}

// Scalar is the set of Go types with a fixed-size dtype: NewTensor and Values accept them.
// float16 and bfloat16 have no Go type; use NewTensorRaw and Tensor.Raw for them.
type Scalar interface {
	bool | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

// DTypeOf returns the dtype of a Scalar type.
func DTypeOf[T Scalar]() DType {
	var zero T
	switch any(zero).(type) {
	case bool:
		return Bool
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case float32:
		return Float32
	case float64:
		return Float64
	}
	return InvalidDType // unreachable: the constraint lists exactly the cases above
}
