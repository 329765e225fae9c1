package dinput

import (
	"errors"
	"testing"
	"unsafe"
)

// stepsOf takes every step of it with GetNextSteps(max), formatted as allSteps does, and
// returns them with the sizes of the calls and the error that ended them.
func stepsOf(t *testing.T, it *DistributedIterator, max int) ([]string, []int, error) {
	t.Helper()
	var steps []string
	var calls []int
	for {
		got, err := it.GetNextSteps(max)
		if err != nil {
			return steps, calls, err
		}
		calls = append(calls, len(got))
		for _, s := range got {
			steps = append(steps, formatStep(t, s, 0))
			s.Close()
		}
	}
}

func TestGetNextSteps(t *testing.T) {
	dist := must(cpuStrategy(t, 2).DistributeDataset(rangeBatch(t, 21, 4, nil), nil))
	want := allSteps(t, must(dist.Iterator()))
	it := must(dist.Iterator())
	defer it.Close()
	steps, calls, err := stepsOf(t, it, 4)
	if !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("ended with %v", err)
	}
	if got := joinSteps(steps); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// 6 steps: 4, then the 2 before the end; OUT_OF_RANGE comes alone.
	if len(calls) != 2 || calls[0] != 4 || calls[1] != 2 {
		t.Errorf("calls %v", calls)
	}
	if _, err := it.GetNextSteps(0); err == nil {
		t.Error("max 0 accepted")
	}
}

func TestGetNextStepsErrorMidway(t *testing.T) {
	r := must(Range(0, 64, 1))
	failing := must(r.Map(func(in *Element) (*Element, error) {
		v := must(must(in.Tensor(0)).Int64s())
		if v[0] == 30 {
			return nil, &Error{Code: DataLoss, Message: "the element that fails"}
		}
		return in, nil
	}, nil))
	ds := must(failing.Batch(4, nil))
	dist := must(cpuStrategy(t, 2).DistributeDataset(ds, nil))
	steps, calls, err := stepsOf(t, must(dist.Iterator()), 16)
	if !errors.Is(err, ErrDataLoss) {
		t.Fatalf("ended with %v", err)
	}
	// Values 0 .. 27 make 7 whole steps before the one holding 30: all of them come first.
	if len(calls) != 1 || calls[0] != 7 || len(steps) != 7 || steps[6] != "[24,25] | [26,27]" {
		t.Errorf("calls %v, steps %v", calls, steps)
	}
}

func TestGetNextStepsSaveRestore(t *testing.T) {
	dist := must(cpuStrategy(t, 2).DistributeDataset(rangeBatch(t, 21, 4, nil), nil))
	it := must(dist.Iterator())
	defer it.Close()
	first := must(it.GetNextSteps(3))
	for _, s := range first {
		s.Close()
	}
	state := must(it.SaveState())
	rest := allSteps(t, it)
	restored := must(dist.IteratorFromState(state))
	defer restored.Close()
	steps, _, err := stepsOf(t, restored, 2)
	if !errors.Is(err, ErrOutOfRange) || joinSteps(steps) != rest || rest == "" {
		t.Errorf("restored %q (%v), want %q", joinSteps(steps), err, rest)
	}
}

func joinSteps(steps []string) string {
	out := ""
	for i, s := range steps {
		if i > 0 {
			out += " ; "
		}
		out += s
	}
	return out
}

// copiedStepsOf takes every step of it with CopySteps(max) of int64 [2] pieces over 2
// replicas, formatted as allSteps does (an unfit step as well), with the steps copied by
// each call, the number of unfit steps and the error that ended them.
func copiedStepsOf(t *testing.T, it *DistributedIterator, max int) ([]string, []int, int, error) {
	t.Helper()
	var steps []string
	var calls []int
	unfits := 0
	buf := make([]byte, max*2*2*8)
	for {
		n, unfit, err := it.CopySteps(buf, Int64, []int64{2}, max)
		if err != nil {
			if n != 0 || unfit != nil {
				t.Errorf("an error with %d steps and %v", n, unfit)
			}
			return steps, calls, unfits, err
		}
		calls = append(calls, n)
		v := unsafe.Slice((*int64)(unsafe.Pointer(&buf[0])), max*4)
		for s := 0; s < n; s++ {
			steps = append(steps, formatInt64s(v[s*4:s*4+2])+" | "+formatInt64s(v[s*4+2:s*4+4]))
		}
		if unfit != nil {
			unfits++
			steps = append(steps, formatStep(t, unfit, 0))
			unfit.Close()
		}
	}
}

func TestCopySteps(t *testing.T) {
	dist := must(cpuStrategy(t, 2).DistributeDataset(rangeBatch(t, 21, 4, nil), nil))
	want := allSteps(t, must(dist.Iterator()))
	it := must(dist.Iterator())
	defer it.Close()
	steps, calls, unfits, err := copiedStepsOf(t, it, 4)
	if !errors.Is(err, ErrOutOfRange) {
		t.Fatalf("ended with %v", err)
	}
	if got := joinSteps(steps); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// 5 steps of 2 x 2 values copied 4 and 1, the short sixth ([20] | []) handed out unfit
	// after the fifth; OUT_OF_RANGE comes alone.
	if len(calls) != 2 || calls[0] != 4 || calls[1] != 1 || unfits != 1 {
		t.Errorf("calls %v, unfit %d", calls, unfits)
	}
	// A buffer too small for max steps takes no step.
	again := must(dist.Iterator())
	defer again.Close()
	if _, _, err := again.CopySteps(make([]byte, 63), Int64, []int64{2}, 2); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a 63-byte buffer for 64 bytes: %v", err)
	}
	if _, _, err := again.CopySteps(nil, Int64, []int64{2}, 0); err == nil {
		t.Error("max 0 accepted")
	}
	if got := allSteps(t, again); got != want {
		t.Errorf("after refused calls: %s", got)
	}
}
