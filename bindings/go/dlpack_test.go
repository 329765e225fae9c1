package dinput

import (
	"errors"
	"reflect"
	"testing"
	"unsafe"
)

// A DLPack export shares the tensor's data (no copy), outlives the tensor, and describes
// it: shape, dtype and CPU device.
func TestDLPack(t *testing.T) {
	tensor := must(NewTensor([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6}))
	d := must(tensor.DLPack())
	tensor.Close() // the export keeps the data alive
	if got := d.Shape(); !reflect.DeepEqual(got, []int64{2, 3}) {
		t.Errorf("shape %v", got)
	}
	if code, bits, lanes := d.DType(); code != 2 || bits != 32 || lanes != 1 {
		t.Errorf("dtype (%d, %d, %d), want float32 (2, 32, 1)", code, bits, lanes)
	}
	if typ, id := d.Device(); typ != 1 || id != 0 {
		t.Errorf("device (%d, %d), want CPU (1, 0)", typ, id)
	}
	if got := unsafe.Slice((*float32)(d.Data()), 6); !reflect.DeepEqual(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("data %v", got)
	}
	d.Close()
	d.Close()
	if d.Data() != nil || d.Shape() != nil || d.Managed() != nil {
		t.Error("a closed export still describes data")
	}
	// Managed hands ownership over: the receiver (here the test) calls the deleter.
	scalar := must(NewScalar(int64(7)))
	defer scalar.Close()
	m := must(scalar.DLPack())
	if len(m.Shape()) != 0 {
		t.Errorf("scalar shape %v", m.Shape())
	}
	p := m.Managed()
	if p == nil || m.Data() != nil {
		t.Fatal("Managed did not hand the tensor over")
	}
	m.Close() // does nothing now
	(&DLPackTensor{p: (*dlManaged)(p)}).Close()
	strs := must(NewStringTensor([]int64{1}, []string{"x"}))
	defer strs.Close()
	if _, err := strs.DLPack(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a bytes tensor: %v", err)
	}
}
