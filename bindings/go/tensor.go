package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// Tensor is an immutable dense tensor: a dtype, a shape and row-major data held by the
// library. Its dtype and shape are copied into Go when the Tensor is made, so DType, Shape,
// Rank and NumElements need no call into C and keep answering after Close; the data
// accessors return an error after Close.
type Tensor struct {
	ref   ref[C.dinput_tensor_t]
	dtype DType
	shape []int64
}

// wrapTensor takes ownership of an owned handle described by info.
func wrapTensor(p *C.dinput_tensor_t, info C.dinput_tensor_info_t) *Tensor {
	t := &Tensor{dtype: DType(info.dtype)}
	t.ref.p = p
	if info.rank > 0 {
		t.shape = append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(info.shape)), int(info.rank))...)
	} else {
		t.shape = []int64{}
	}
	runtime.SetFinalizer(t, (*Tensor).Close)
	return t
}

// wrapNewTensor wraps a handle fresh from a constructor (describing it costs one more call).
func wrapNewTensor(p *C.dinput_tensor_t) *Tensor {
	return wrapTensor(p, C.dgo_tensor_describe(p))
}

// Close releases the tensor. It is idempotent; the finalizer calls it for forgotten tensors.
func (t *Tensor) Close() error {
	if t == nil {
		return nil
	}
	t.ref.close(func(p *C.dinput_tensor_t) { C.dinput_tensor_free(p) })
	runtime.SetFinalizer(t, nil)
	return nil
}

// DType returns the tensor's dtype (InvalidDType for a nil Tensor).
func (t *Tensor) DType() DType {
	if t == nil {
		return InvalidDType
	}
	return t.dtype
}

// Shape returns a copy of the tensor's shape; empty for a scalar.
func (t *Tensor) Shape() []int64 {
	if t == nil {
		return nil
	}
	return append([]int64{}, t.shape...)
}

// Rank returns the number of dimensions (0 for a scalar, -1 for a nil Tensor).
func (t *Tensor) Rank() int {
	if t == nil {
		return -1
	}
	return len(t.shape)
}

// Dim returns dimension i, or -1 when i is out of range.
func (t *Tensor) Dim(i int) int64 {
	if t == nil || i < 0 || i >= len(t.shape) {
		return -1
	}
	return t.shape[i]
}

// NumElements returns the number of scalars: the product of the shape (1 for a scalar).
func (t *Tensor) NumElements() int64 {
	if t == nil {
		return 0
	}
	return product(t.shape)
}

// String describes the tensor, e.g. "int64[2,3]"; the data is not printed.
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	return t.dtype.String() + formatShape(t.shape)
}

func product(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

func formatShape(shape []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range shape {
		if i > 0 {
			b.WriteByte(',')
		}
		if d == UnknownDim {
			b.WriteByte('?')
		} else {
			fmt.Fprint(&b, d)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// sliceData is the address of a slice's first element, nil for an empty slice (Go 1.19 has
// no unsafe.SliceData).
func sliceData[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func shapePtr(shape []int64) *C.int64_t {
	if len(shape) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&shape[0]))
}

// checkShape validates a shape in Go where C would silently misread it: a nil data pointer
// means "zeros" to dinput_tensor_new, so a missing slice must not reach C.
func checkShape(what string, shape []int64, have int) error {
	for _, d := range shape {
		if d < 0 {
			return invalidArgument("%s: dimension %d of shape %s is negative", what, d, formatShape(shape))
		}
	}
	if n := product(shape); n != int64(have) {
		return invalidArgument("%s: shape %s needs %d value(s), got %d", what, formatShape(shape), n, have)
	}
	return nil
}

// NewTensor returns a tensor of the given shape holding a copy of data (row-major). An empty
// shape makes a scalar; len(data) must equal the product of the shape.
func NewTensor[T Scalar](shape []int64, data []T) (*Tensor, error) {
	if err := checkShape("NewTensor", shape, len(data)); err != nil {
		return nil, err
	}
	var zero T
	return newTensor(DTypeOf[T](), shape, sliceData(data), uintptr(len(data))*unsafe.Sizeof(zero))
}

// NewScalar returns a rank-0 tensor holding v.
func NewScalar[T Scalar](v T) (*Tensor, error) { return NewTensor(nil, []T{v}) }

// NewVector returns a rank-1 tensor holding a copy of data.
func NewVector[T Scalar](data []T) (*Tensor, error) {
	return NewTensor([]int64{int64(len(data))}, data)
}

// NewTensorRaw returns a tensor of any fixed-size dtype (float16 and bfloat16 included) from
// its raw little-endian bytes, len(data) = product(shape) * dtype.Size().
func NewTensorRaw(dtype DType, shape []int64, data []byte) (*Tensor, error) {
	if err := checkRaw("NewTensorRaw", dtype, shape, data); err != nil {
		return nil, err
	}
	return newTensor(dtype, shape, sliceData(data), uintptr(len(data)))
}

// checkRaw validates the arguments of NewTensorRaw and NewPinnedTensorRaw.
func checkRaw(what string, dtype DType, shape []int64, data []byte) error {
	if dtype == Bytes {
		return invalidArgument("%s: bytes tensors are made with NewBytesTensor", what)
	}
	size := dtype.Size()
	if size == 0 {
		return invalidArgument("%s: invalid dtype %d", what, int(dtype))
	}
	if len(data)%size != 0 {
		return invalidArgument("%s: %d byte(s) are not a whole number of %s scalars", what, len(data), dtype)
	}
	return checkShape(what, shape, len(data)/size)
}

// Zeros returns a tensor of zeros of a fixed-size dtype.
func Zeros(dtype DType, shape []int64) (*Tensor, error) {
	return newTensor(dtype, shape, nil, 0)
}

func newTensor(dtype DType, shape []int64, data unsafe.Pointer, nbytes uintptr) (*Tensor, error) {
	return newTensorIn(false, dtype, shape, data, nbytes)
}

// newTensorIn makes a tensor with dinput_tensor_new, or with dinput_tensor_new_pinned (same
// arguments) when pinned is set.
func newTensorIn(pinned bool, dtype DType, shape []int64, data unsafe.Pointer, nbytes uintptr) (*Tensor, error) {
	if !dtype.valid() {
		return nil, invalidArgument("unknown dtype %d", int(dtype))
	}
	var out *C.dinput_tensor_t
	err := call(func() C.dinput_status_t {
		cshape, rank, cbytes := shapePtr(shape), C.int(len(shape)), C.size_t(nbytes)
		if pinned {
			return C.dinput_tensor_new_pinned(&out, C.dinput_dtype_t(dtype), cshape, rank, data, cbytes)
		}
		return C.dinput_tensor_new(&out, C.dinput_dtype_t(dtype), cshape, rank, data, cbytes)
	})
	runtime.KeepAlive(shape)
	if err != nil {
		return nil, err
	}
	return wrapNewTensor(out), nil
}

// NewBytesTensor returns a bytes tensor of the given shape holding copies of values
// (row-major); an empty shape makes a scalar.
func NewBytesTensor(shape []int64, values [][]byte) (*Tensor, error) {
	if err := checkShape("NewBytesTensor", shape, len(values)); err != nil {
		return nil, err
	}
	lengths := make([]int, len(values))
	for i, v := range values {
		lengths[i] = len(v)
	}
	return newBytesTensor(shape, lengths, func(dst []byte, i int) { copy(dst, values[i]) })
}

// NewStringTensor is NewBytesTensor for Go strings.
func NewStringTensor(shape []int64, values []string) (*Tensor, error) {
	if err := checkShape("NewStringTensor", shape, len(values)); err != nil {
		return nil, err
	}
	lengths := make([]int, len(values))
	for i, v := range values {
		lengths[i] = len(v)
	}
	return newBytesTensor(shape, lengths, func(dst []byte, i int) { copy(dst, values[i]) })
}

// newBytesTensor stages the strings in C memory: dinput_tensor_new_bytes takes an array of
// pointers, and cgo forbids passing Go memory that holds Go pointers.
func newBytesTensor(shape []int64, lengths []int, fill func(dst []byte, i int)) (*Tensor, error) {
	n := len(lengths)
	total := 0
	for _, l := range lengths {
		total += l
	}
	buf := C.malloc(C.size_t(total + 1))
	ptrs := C.malloc(C.size_t((n + 1) * int(unsafe.Sizeof(uintptr(0)))))
	clens := C.malloc(C.size_t((n + 1) * int(unsafe.Sizeof(C.size_t(0)))))
	defer C.free(buf)
	defer C.free(ptrs)
	defer C.free(clens)
	if buf == nil || ptrs == nil || clens == nil {
		return nil, &Error{Code: ResourceExhausted, Message: "NewBytesTensor: out of memory"}
	}
	data := unsafe.Slice((*byte)(buf), total+1)
	ptrSlice := unsafe.Slice((**C.char)(ptrs), n+1)
	lenSlice := unsafe.Slice((*C.size_t)(clens), n+1)
	off := 0
	for i, l := range lengths {
		fill(data[off:off+l], i)
		ptrSlice[i] = (*C.char)(unsafe.Add(buf, off))
		lenSlice[i] = C.size_t(l)
		off += l
	}
	var out *C.dinput_tensor_t
	err := call(func() C.dinput_status_t {
		return C.dinput_tensor_new_bytes(&out, shapePtr(shape), C.int(len(shape)), (**C.char)(ptrs), (*C.size_t)(clens))
	})
	runtime.KeepAlive(shape)
	if err != nil {
		return nil, err
	}
	return wrapNewTensor(out), nil
}

// Values copies the data of a tensor whose dtype is DTypeOf[T]; any other dtype is an
// InvalidArgument error naming both dtypes. The methods Int64s, Float32s, ... are shorthands.
func Values[T Scalar](t *Tensor) ([]T, error) {
	out := make([]T, t.NumElements())
	if _, err := CopyValues(out, t); err != nil {
		return nil, err
	}
	return out, nil
}

// CopyValues copies the data of a tensor whose dtype is DTypeOf[T] into dst, which must hold
// NumElements values, and returns how many it copied. It lets a loop reuse one buffer.
func CopyValues[T Scalar](dst []T, t *Tensor) (int, error) {
	if t == nil {
		return 0, closedError("Tensor")
	}
	var zero T
	n := int(t.NumElements())
	if err := t.copyTo(DTypeOf[T](), sliceData(dst), len(dst)*int(unsafe.Sizeof(zero)), n); err != nil {
		return 0, err
	}
	normalizeBools(dst[:n])
	return n, nil
}

// normalizeBools makes every byte of a []bool that C filled a valid Go bool (0 or 1): the
// library stores bools as bytes, and a byte of another value would be an invalid Go bool.
// It does nothing for other types.
func normalizeBools[T Scalar](s []T) {
	if _, ok := any(s).([]bool); !ok || len(s) == 0 {
		return
	}
	for i, b := range unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)) {
		if b > 1 {
			*(*byte)(unsafe.Pointer(&s[i])) = 1
		}
	}
}

func dtypeMismatch(t *Tensor, want DType) error {
	return invalidArgument("the tensor is %s, not %s", t, want)
}

// copyTo copies the data into dst (capacity dstBytes) through dinput_tensor_copy_to, which
// checks the dtype and the capacity.
func (t *Tensor) copyTo(want DType, dst unsafe.Pointer, dstBytes int, n int) error {
	return use(t, func(p *C.dinput_tensor_t) error {
		if n == 0 && t.dtype == want {
			return nil // nothing to copy, and dst may be nil
		}
		return call(func() C.dinput_status_t {
			return C.dinput_tensor_copy_to(dst, C.size_t(dstBytes), p, C.dinput_dtype_t(want))
		})
	})
}

// Bools returns a copy of a bool tensor's data.
func (t *Tensor) Bools() ([]bool, error) { return Values[bool](t) }

// Int8s returns a copy of an int8 tensor's data.
func (t *Tensor) Int8s() ([]int8, error) { return Values[int8](t) }

// Int16s returns a copy of an int16 tensor's data.
func (t *Tensor) Int16s() ([]int16, error) { return Values[int16](t) }

// Int32s returns a copy of an int32 tensor's data.
func (t *Tensor) Int32s() ([]int32, error) { return Values[int32](t) }

// Int64s returns a copy of an int64 tensor's data.
func (t *Tensor) Int64s() ([]int64, error) { return Values[int64](t) }

// Uint8s returns a copy of a uint8 tensor's data.
func (t *Tensor) Uint8s() ([]uint8, error) { return Values[uint8](t) }

// Uint16s returns a copy of a uint16 tensor's data.
func (t *Tensor) Uint16s() ([]uint16, error) { return Values[uint16](t) }

// Uint32s returns a copy of a uint32 tensor's data.
func (t *Tensor) Uint32s() ([]uint32, error) { return Values[uint32](t) }

// Uint64s returns a copy of a uint64 tensor's data.
func (t *Tensor) Uint64s() ([]uint64, error) { return Values[uint64](t) }

// Float32s returns a copy of a float32 tensor's data.
func (t *Tensor) Float32s() ([]float32, error) { return Values[float32](t) }

// Float64s returns a copy of a float64 tensor's data.
func (t *Tensor) Float64s() ([]float64, error) { return Values[float64](t) }

// Raw returns a copy of the raw bytes of a tensor of any fixed-size dtype (the way to read
// float16 and bfloat16); a bytes tensor is an InvalidArgument error.
func (t *Tensor) Raw() ([]byte, error) {
	if t == nil {
		return nil, closedError("Tensor")
	}
	if t.dtype == Bytes {
		return nil, invalidArgument("the tensor is %s: read bytes tensors with Bytes or Strings", t)
	}
	out := make([]byte, int(t.NumElements())*t.dtype.Size())
	if err := t.copyTo(t.dtype, sliceData(out), len(out), len(out)); err != nil {
		return nil, err
	}
	return out, nil
}

// Bytes returns copies of the strings of a bytes tensor (row-major).
func (t *Tensor) Bytes() ([][]byte, error) {
	data, lengths, err := t.strings()
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(lengths))
	off := 0
	for i, l := range lengths {
		out[i] = data[off : off+l : off+l]
		off += l
	}
	return out, nil
}

// Strings returns the strings of a bytes tensor (row-major) as Go strings.
func (t *Tensor) Strings() ([]string, error) {
	data, lengths, err := t.strings()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(lengths))
	off := 0
	for i, l := range lengths {
		out[i] = string(data[off : off+l])
		off += l
	}
	return out, nil
}

// strings copies all strings of a bytes tensor into one Go buffer in a single cgo call.
func (t *Tensor) strings() ([]byte, []int, error) {
	if t != nil && t.dtype != Bytes {
		return nil, nil, dtypeMismatch(t, Bytes)
	}
	var data []byte
	var clens []C.size_t
	total := 0
	if err := use(t, func(p *C.dinput_tensor_t) error {
		n := int(t.NumElements())
		if n == 0 {
			clens = []C.size_t{}
			return nil
		}
		total = int(C.dinput_tensor_byte_size(p))
		data = make([]byte, total+1) // +1: a valid pointer even when every string is empty
		clens = make([]C.size_t, n)
		return call(func() C.dinput_status_t {
			return C.dgo_tensor_strings(p, &clens[0], (*C.char)(unsafe.Pointer(&data[0])), C.size_t(total))
		})
	}); err != nil {
		return nil, nil, err
	}
	n := len(clens)
	if n == 0 {
		return nil, []int{}, nil
	}
	lengths := make([]int, n)
	for i, l := range clens {
		lengths[i] = int(l)
	}
	return data[:total], lengths, nil
}
