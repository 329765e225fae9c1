package dinput

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestVersionMatchesHeader(t *testing.T) {
	want := fmt.Sprintf("%d.%d.%d", HeaderVersionMajor, HeaderVersionMinor, HeaderVersionPatch)
	if got := Version(); got != want {
		t.Errorf("Version() = %q, header says %q", got, want)
	}
	if got, want := VersionNumber(), HeaderVersionMajor*10000+HeaderVersionMinor*100+HeaderVersionPatch; got != want {
		t.Errorf("VersionNumber() = %d, want %d", got, want)
	}
	var info map[string]any
	if err := json.Unmarshal([]byte(BuildInfo()), &info); err != nil {
		t.Fatalf("BuildInfo() is not JSON: %v\n%s", err, BuildInfo())
	}
	if info["version"] != Version() {
		t.Errorf("BuildInfo version = %v, want %s", info["version"], Version())
	}
}

func TestCodeAndDTypeNames(t *testing.T) {
	if got := InvalidArgument.String(); got != "INVALID_ARGUMENT" {
		t.Errorf("InvalidArgument.String() = %q", got)
	}
	if got := OutOfRange.String(); got != "OUT_OF_RANGE" {
		t.Errorf("OutOfRange.String() = %q", got)
	}
	for _, d := range []DType{Bool, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float16, BFloat16, Float32, Float64, Bytes} {
		if back := ParseDType(d.String()); back != d {
			t.Errorf("ParseDType(%q) = %v, want %v", d.String(), back, d)
		}
	}
	if ParseDType("complex128") != InvalidDType {
		t.Error("ParseDType of an unknown name should be InvalidDType")
	}
	if Float16.Size() != 2 || Int64.Size() != 8 || Bytes.Size() != 0 {
		t.Errorf("sizes: float16 %d, int64 %d, bytes %d", Float16.Size(), Int64.Size(), Bytes.Size())
	}
}

// roundTrip checks that a tensor made from data reads back the same through Values.
func roundTrip[T Scalar](t *testing.T, shape []int64, data []T) {
	t.Helper()
	tensor := must(NewTensor(shape, data))
	defer tensor.Close()
	if tensor.DType() != DTypeOf[T]() {
		t.Errorf("dtype %v, want %v", tensor.DType(), DTypeOf[T]())
	}
	if !reflect.DeepEqual(tensor.Shape(), shape) && !(len(shape) == 0 && tensor.Rank() == 0) {
		t.Errorf("shape %v, want %v", tensor.Shape(), shape)
	}
	got := must(Values[T](tensor))
	if !reflect.DeepEqual(got, data) {
		t.Errorf("%v: read %v, want %v", tensor, got, data)
	}
}

func TestTensorRoundTrips(t *testing.T) {
	roundTrip(t, []int64{2, 2}, []bool{true, false, false, true})
	roundTrip(t, []int64{3}, []int8{-1, 0, 127})
	roundTrip(t, []int64{3}, []int16{-300, 0, 300})
	roundTrip(t, []int64{3}, []int32{-70000, 0, 70000})
	roundTrip(t, []int64{2, 3}, []int64{1, 2, 3, 4, 5, 1 << 40})
	roundTrip(t, []int64{3}, []uint8{0, 1, 255})
	roundTrip(t, []int64{3}, []uint16{0, 1, 65535})
	roundTrip(t, []int64{3}, []uint32{0, 1, 1 << 31})
	roundTrip(t, []int64{3}, []uint64{0, 1, 1 << 63})
	roundTrip(t, []int64{1, 2}, []float32{1.5, -2.25})
	roundTrip(t, []int64{2}, []float64{3.125, 1e300})
	roundTrip(t, nil, []int64{42})
	roundTrip(t, []int64{0, 3}, []float32{})

	scalar := must(NewScalar(float32(0.5)))
	if scalar.Rank() != 0 || scalar.NumElements() != 1 || scalar.String() != "float32[]" {
		t.Errorf("scalar: rank %d, %d elements, %s", scalar.Rank(), scalar.NumElements(), scalar)
	}
	vec := must(NewVector([]int32{7, 8, 9}))
	if got := must(vec.Int32s()); !reflect.DeepEqual(got, []int32{7, 8, 9}) || vec.Dim(0) != 3 || vec.Dim(1) != -1 {
		t.Errorf("vector: %v, dims %d %d", got, vec.Dim(0), vec.Dim(1))
	}
	// The shorthands read the same data as Values.
	i64 := must(NewVector([]int64{4, 5}))
	if got := must(i64.Int64s()); !reflect.DeepEqual(got, []int64{4, 5}) {
		t.Errorf("Int64s = %v", got)
	}
	buf := make([]int64, 2)
	if n, err := CopyValues(buf, i64); err != nil || n != 2 || buf[1] != 5 {
		t.Errorf("CopyValues = %d, %v, %v", n, err, buf)
	}
	if _, err := CopyValues(make([]int64, 1), i64); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("CopyValues into a short buffer: %v, want INVALID_ARGUMENT", err)
	}
}

func TestRawAndZeros(t *testing.T) {
	// float16 1.0 is 0x3c00 and 2.0 is 0x4000 (little-endian bytes).
	raw := []byte{0x00, 0x3c, 0x00, 0x40}
	h := must(NewTensorRaw(Float16, []int64{2}, raw))
	if got := must(h.Raw()); !reflect.DeepEqual(got, raw) || h.DType() != Float16 {
		t.Errorf("float16 raw = %x (%v)", got, h.DType())
	}
	if _, err := h.Float32s(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("reading float16 as float32: %v", err)
	}
	if _, err := NewTensorRaw(Float16, []int64{3}, raw); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("raw size mismatch: %v", err)
	}
	z := must(Zeros(Float64, []int64{2, 2}))
	if got := must(z.Float64s()); !reflect.DeepEqual(got, []float64{0, 0, 0, 0}) {
		t.Errorf("Zeros = %v", got)
	}
	if _, err := Zeros(Bytes, []int64{1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Zeros(bytes): %v, want INVALID_ARGUMENT", err)
	}
}

func TestBytesTensors(t *testing.T) {
	words := []string{"alpha", "", "γάμμα", "d"}
	s := must(NewStringTensor([]int64{2, 2}, words))
	defer s.Close()
	if s.DType() != Bytes || s.String() != "bytes[2,2]" {
		t.Errorf("string tensor is %v", s)
	}
	if got := must(s.Strings()); !reflect.DeepEqual(got, words) {
		t.Errorf("Strings() = %q, want %q", got, words)
	}
	raw := [][]byte{[]byte("x\x00y"), {}, []byte("zz")}
	b := must(NewBytesTensor([]int64{3}, raw))
	got := must(b.Bytes())
	if len(got) != 3 || string(got[0]) != "x\x00y" || len(got[1]) != 0 || string(got[2]) != "zz" {
		t.Errorf("Bytes() = %q", got)
	}
	empty := must(NewStringTensor([]int64{0}, nil))
	if got := must(empty.Strings()); len(got) != 0 {
		t.Errorf("empty Strings() = %q", got)
	}
}

func TestWrongDTypeIsAnError(t *testing.T) {
	ints := must(NewVector([]int64{1, 2, 3}))
	defer ints.Close()
	_, err := ints.Float32s()
	var de *Error
	if !errors.As(err, &de) || de.Code != InvalidArgument {
		t.Fatalf("Float32s on int64: %v, want *Error INVALID_ARGUMENT", err)
	}
	if !strings.Contains(de.Message, "int64") || !strings.Contains(de.Message, "float32") {
		t.Errorf("message should name both dtypes: %q", de.Message)
	}
	if _, err := ints.Strings(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "not bytes") {
		t.Errorf("Strings on int64: %v", err)
	}
	if _, err := ints.Bools(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Bools on int64: %v", err)
	}
	words := must(NewStringTensor([]int64{1}, []string{"a"}))
	if _, err := words.Int64s(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Int64s on bytes: %v", err)
	}
	if _, err := words.Raw(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Raw on bytes: %v", err)
	}
}

func TestTensorArgumentErrors(t *testing.T) {
	if _, err := NewTensor([]int64{2, 2}, []int64{1, 2, 3}); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "needs 4 value(s), got 3") {
		t.Errorf("size mismatch: %v", err)
	}
	if _, err := NewTensor([]int64{-1}, []int64{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative dimension: %v", err)
	}
	if _, err := NewStringTensor([]int64{2}, []string{"a"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("string count mismatch: %v", err)
	}
}

func TestElements(t *testing.T) {
	a := must(NewVector([]int64{1, 2}))
	b := must(NewStringTensor(nil, []string{"label"}))
	e := must(NewElement(a, b))
	// The element holds its own references: closing the tensors changes nothing.
	a.Close()
	b.Close()
	if e.Len() != 2 || e.String() != "(int64[2], bytes[])" {
		t.Errorf("element %v with %d components", e, e.Len())
	}
	parts := must(e.Tensors())
	e.Close()
	// Tensors taken from an element outlive it.
	if got := must(parts[0].Int64s()); !reflect.DeepEqual(got, []int64{1, 2}) {
		t.Errorf("component 0 = %v", got)
	}
	if got := must(parts[1].Strings()); got[0] != "label" {
		t.Errorf("component 1 = %q", got)
	}
	if _, err := e.Tensor(0); !errors.Is(err, ErrClosed) {
		t.Errorf("Tensor on a closed element: %v", err)
	}
	other := must(NewElement(parts[0]))
	if _, err := other.Tensor(5); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("Tensor(5): %v", err)
	}
	if _, err := other.Tensor(-1); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Tensor(-1): %v", err)
	}
	if _, err := NewElement(parts[0], nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewElement with nil: %v", err)
	}
	parts[1].Close()
	if _, err := NewElement(parts[1]); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewElement with a closed tensor: %v", err)
	}
}

func TestBoolBytesOtherThanZeroAndOneAreRejected(t *testing.T) {
	// The library refuses a bool byte that is neither 0 nor 1, naming the element.
	_, err := NewTensorRaw(Bool, []int64{3}, []byte{0, 1, 7})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "bool element 2 is 7") {
		t.Fatalf("NewTensorRaw with a 7: %v", err)
	}
	b := must(NewTensorRaw(Bool, []int64{3}, []byte{0, 1, 1}))
	got := must(b.Bools())
	if !reflect.DeepEqual(got, []bool{false, true, true}) {
		t.Errorf("Bools() = %v", got)
	}
}

func TestOutOfRangeEnumsAreRejectedInGo(t *testing.T) {
	// Values no enum of dinput.h has never reach the C++ library (undefined behaviour there).
	if DType(99).String() != "invalid" || DType(99).Size() != 0 || Code(99).String() != "UNKNOWN_STATUS" {
		t.Errorf("names of unknown values: %q %d %q", DType(99), DType(99).Size(), Code(99))
	}
	if _, err := Zeros(DType(99), nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Zeros(99): %v", err)
	}
	if _, err := FromGenerator(Spec{{DType: DType(-3)}}, func() (GeneratorFunc, error) { return nil, nil }); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("spec dtype -3: %v", err)
	}
	if _, err := (&InputOptions{ReplicationMode: 5}).toC(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("replication mode 5: %v", err)
	}
	s := must(NewStrategy())
	v := must(NewPerReplica(scalarElement(t, 1)))
	if _, err := s.Reduce(ReduceOp(9), v, AxisNone); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("reduce op 9: %v", err)
	}
	c := must(NewInProcessCollective(1, 0))
	if err := c.Abort(Code(42), "x"); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("abort code 42: %v", err)
	}
	// A callback's error with an unknown code reaches the caller as UNKNOWN.
	r := must(Range(0, 1, 1))
	m := must(r.Map(func(*Element) (*Element, error) { return nil, &Error{Code: 77, Message: "odd code"} }, nil))
	it := must(m.Iterator())
	if _, err := it.GetNext(); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "odd code") {
		t.Errorf("callback error with code 77: %v", err)
	}
}

// PerReplica.Tensors and Element.Tensors take every tensor in one call into C, asking again
// when the first guess of their number was short.
func TestTensorsInOneCall(t *testing.T) {
	var parts []*Tensor
	for i := int64(0); i < 3; i++ {
		parts = append(parts, must(NewVector([]int64{i, 10 * i})))
	}
	pair := must(NewElement(parts[0], parts[1]))
	single := must(NewElement(parts[2]))
	step := must(NewPerReplica(pair, pair)) // 4 tensors where the guess is 2
	got := must(step.Tensors())
	var flat [][]int64
	for _, tensor := range got {
		flat = append(flat, must(tensor.Int64s()))
	}
	want := [][]int64{{0, 0}, {1, 10}, {0, 0}, {1, 10}}
	if !reflect.DeepEqual(flat, want) {
		t.Errorf("PerReplica.Tensors = %v, want %v", flat, want)
	}
	step.Close()
	if got := must(got[3].Int64s()); !reflect.DeepEqual(got, []int64{1, 10}) {
		t.Errorf("a tensor taken from a closed step = %v", got)
	}
	ragged := must(NewPerReplica(pair, single))
	if _, err := ragged.Tensors(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "replica 1 has 1 components") {
		t.Errorf("replicas with different components: %v", err)
	}
	if _, err := step.Tensors(); !errors.Is(err, ErrClosed) {
		t.Errorf("Tensors of a closed step: %v", err)
	}
}
