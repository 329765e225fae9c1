package dinput

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// cudaAvailable reports whether the library found a usable GPU.
func cudaAvailable() bool {
	return strings.Contains(BuildInfo(), `"cuda":{"compiled":true,"available":true`)
}

func TestCUDAWaitsOnHostTensorsAreNoOps(t *testing.T) {
	tensor := must(NewTensor([]int64{2, 2}, []int32{1, 2, 3, 4}))
	defer tensor.Close()
	scalar := must(NewScalar(int64(7)))
	defer scalar.Close()
	element := must(NewElement(tensor, scalar))
	defer element.Close()

	// A made-up handle is fine too: nothing is done with it for host tensors.
	for _, stream := range []CUDAStream{CUDAStreamDefault, CUDAStreamLegacy, CUDAStreamPerThread, 0x1234} {
		if err := tensor.CUDAWait(stream); err != nil {
			t.Errorf("CUDAWait(%#x): %v", stream, err)
		}
		if err := tensor.CUDARecordStream(stream); err != nil {
			t.Errorf("CUDARecordStream(%#x): %v", stream, err)
		}
		if err := element.CUDAWait(stream); err != nil {
			t.Errorf("Element.CUDAWait(%#x): %v", stream, err)
		}
	}
	if ev := tensor.CUDAReadyEvent(); ev != 0 {
		t.Errorf("a host tensor's ready event is %#x, want 0", ev)
	}
	if got := must(tensor.Int32s()); len(got) != 4 || got[3] != 4 {
		t.Errorf("data after the waits: %v", got)
	}

	// The device accessors.
	if d := tensor.DeviceType(); d != DeviceCPU || d.String() != "cpu" {
		t.Errorf("DeviceType() = %v, want cpu", d)
	}
	if i := tensor.DeviceIndex(); i != -1 {
		t.Errorf("DeviceIndex() = %d, want -1", i)
	}
	host := must(tensor.ToHost())
	if got := must(host.Int32s()); len(got) != 4 || got[0] != 1 || host.String() != "int32[2,2]" {
		t.Errorf("ToHost() = %v %v", host, got)
	}
	host.Close()

	// After Close: errors wrapping ErrClosed, never a crash.
	closed := must(NewScalar(int8(1)))
	closed.Close()
	for name, err := range map[string]error{
		"CUDAWait":         closed.CUDAWait(CUDAStreamDefault),
		"CUDARecordStream": closed.CUDARecordStream(CUDAStreamDefault),
		"Element.CUDAWait": (&Element{}).CUDAWait(CUDAStreamDefault),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
	if _, err := closed.ToHost(); !errors.Is(err, ErrClosed) {
		t.Errorf("ToHost after Close: %v, want ErrClosed", err)
	}
	if ev := closed.CUDAReadyEvent(); ev != 0 {
		t.Errorf("CUDAReadyEvent after Close: %#x", ev)
	}
}

func TestCUDAPinnedTensorsNeedAGPU(t *testing.T) {
	tensor, err := NewPinnedTensor([]int64{3}, []float32{1.5, 2.5, 3.5})
	raw, rawErr := NewPinnedTensorRaw(Uint8, []int64{2}, []byte{7, 9})
	if cudaAvailable() {
		if err != nil || rawErr != nil {
			t.Fatalf("NewPinnedTensor with a GPU: %v, %v", err, rawErr)
		}
		defer tensor.Close()
		defer raw.Close()
		if tensor.DeviceType() != DeviceCUDAHost {
			t.Errorf("DeviceType() = %v, want cuda_host", tensor.DeviceType())
		}
		if got := must(tensor.Float32s()); len(got) != 3 || got[2] != 3.5 {
			t.Errorf("pinned data: %v", got)
		}
		if got := must(raw.Uint8s()); len(got) != 2 || got[1] != 9 {
			t.Errorf("pinned raw data: %v", got)
		}
	} else {
		var e *Error
		if !errors.As(err, &e) || e.Code != FailedPrecondition || !strings.Contains(e.Message, "pinned") {
			t.Errorf("NewPinnedTensor without a GPU: %v, want FAILED_PRECONDITION naming pinned memory", err)
		}
		if tensor != nil {
			t.Errorf("NewPinnedTensor without a GPU returned a tensor")
		}
		if !errors.Is(rawErr, ErrFailedPrecondition) || raw != nil {
			t.Errorf("NewPinnedTensorRaw without a GPU: %v, %v", raw, rawErr)
		}
	}
	// Argument errors are found before any memory is taken, GPU or not.
	if _, err := NewPinnedTensor([]int64{4}, []int64{1, 2}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewPinnedTensor with a wrong shape: %v", err)
	}
	if _, err := NewPinnedTensorRaw(Bytes, nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NewPinnedTensorRaw(Bytes): %v", err)
	}
}

func TestCUDACacheFunctions(t *testing.T) {
	before := must(CUDACacheLimit())
	if before == 0 {
		t.Errorf("the cache limit is 0 by default")
	}
	defer SetCUDACacheLimit(before)
	for _, limit := range []uint64{12345, 0, before} {
		if err := SetCUDACacheLimit(limit); err != nil {
			t.Fatalf("SetCUDACacheLimit(%d): %v", limit, err)
		}
		if got := must(CUDACacheLimit()); got != limit {
			t.Errorf("CUDACacheLimit() = %d after setting %d", got, limit)
		}
	}

	if err := CUDAEmptyCache(); err != nil {
		t.Errorf("CUDAEmptyCache: %v", err)
	}
	held, cached, err := CUDAPoolBytes(0)
	switch {
	case err != nil:
		t.Errorf("CUDAPoolBytes(0): %v", err)
	case cudaAvailable() && cached > held:
		t.Errorf("CUDAPoolBytes(0): cached %d > held %d", cached, held)
	case !cudaAvailable() && (held != 0 || cached != 0):
		t.Errorf("CUDAPoolBytes(0) without a GPU = %d, %d; want 0, 0", held, cached)
	}
	_, _, err = CUDAPoolBytes(-1)
	var e *Error
	if !errors.As(err, &e) || e.Code != InvalidArgument || !strings.Contains(e.Message, "-1") {
		t.Errorf("CUDAPoolBytes(-1): %v, want INVALID_ARGUMENT naming the device", err)
	}
}

// TestCUDAShimDeclarationsMatchHeader checks the void* declarations of shim.c against
// include/dinput_cuda.h: the same functions, parameter names and all, with cudaStream_t and
// cudaEvent_t spelled void*. The compiler cannot check them, since the header is not
// included (it needs CUDA's headers).
func TestCUDAShimDeclarationsMatchHeader(t *testing.T) {
	header, err := os.ReadFile("../../include/dinput_cuda.h")
	if err != nil {
		t.Fatalf("this test reads the header of the source tree: %v", err)
	}
	shim := must(os.ReadFile("shim.c"))
	comments := regexp.MustCompile(`(?s)/\*.*?\*/`)
	space := regexp.MustCompile(`\s+`)
	normalize := func(decl string) string {
		decl = space.ReplaceAllString(decl, "")
		decl = strings.NewReplacer("cudaStream_t", "void*", "cudaEvent_t", "void*").Replace(decl)
		return decl
	}
	var want []string
	for _, m := range regexp.MustCompile(`(?s)DINPUT_API([^;{]*\));`).FindAllSubmatch(comments.ReplaceAll(header, nil), -1) {
		want = append(want, normalize(string(m[1])))
	}
	if len(want) != 4 {
		t.Fatalf("found %d declarations in dinput_cuda.h, expected 4: %q", len(want), want)
	}
	// The prototypes of shim.c: declarations of dinput_ functions, which end with ");".
	var have []string
	for _, m := range regexp.MustCompile(`(?m)^([A-Za-z_][^;{}]*\bdinput_\w+\([^;{}]*\));`).FindAllSubmatch(comments.ReplaceAll(shim, nil), -1) {
		have = append(have, normalize(string(m[1])))
	}
	if strings.Join(have, "\n") != strings.Join(want, "\n") {
		t.Errorf("shim.c declares\n  %s\nbut dinput_cuda.h (with void* for the CUDA handles) declares\n  %s",
			strings.Join(have, "\n  "), strings.Join(want, "\n  "))
	}
}
