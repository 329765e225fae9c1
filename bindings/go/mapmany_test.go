package dinput

import (
	"errors"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

// negateMany is a MapManyFunc that records the length of each run.
type negateMany struct {
	mu     sync.Mutex
	counts []int
	failAt int64 // a run holding this value fails
}

func (m *negateMany) fn(out, in []*Element) error {
	m.mu.Lock()
	m.counts = append(m.counts, len(in))
	m.mu.Unlock()
	if len(out) != len(in) {
		return errors.New("out and in differ in length")
	}
	for i, e := range in {
		x, err := e.Tensor(0)
		if err != nil {
			return err
		}
		v, err := x.Int64s()
		x.Close()
		if err != nil {
			return err
		}
		if v[0] == m.failAt {
			return &Error{Code: FailedPrecondition, Message: "value refused"}
		}
		s, err := NewScalar(-v[0])
		if err != nil {
			return err
		}
		out[i], err = NewElement(s)
		s.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func negateOne(in *Element) (*Element, error) {
	var out [1]*Element
	m := negateMany{failAt: -1}
	err := m.fn(out[:], []*Element{in})
	return out[0], err
}

func TestMapManyEqualsMap(t *testing.T) {
	r := must(Range(0, 40, 1))
	want := elementsOf(t, must(r.Map(negateOne, nil)))
	for _, par := range []int64{1, 4, Autotune} {
		m := &negateMany{failAt: -1}
		got := elementsOf(t, must(r.MapMany(7, m.fn, &MapOptions{NumParallelCalls: par})))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("parallel %d: MapMany = %v, want %v", par, got, want)
		}
		counts := append([]int(nil), m.counts...)
		sort.Ints(counts)
		if !reflect.DeepEqual(counts, []int{5, 7, 7, 7, 7, 7}) {
			t.Errorf("parallel %d: run lengths %v, want five of 7 and a last one of 5", par, m.counts)
		}
		if par == 1 && m.counts[5] != 5 {
			t.Errorf("sequential: the short run came at %v", m.counts)
		}
	}
	// Out of order allowed: every result once.
	m := &negateMany{failAt: -1}
	got := elementsOf(t, must(r.MapMany(3, m.fn, &MapOptions{NumParallelCalls: 4, Deterministic: DeterministicFalse})))
	sort.Strings(got)
	sorted := append([]string(nil), want...)
	sort.Strings(sorted)
	if !reflect.DeepEqual(got, sorted) {
		t.Errorf("non-deterministic MapMany = %v", got)
	}
}

func TestMapManyHandsOverResults(t *testing.T) {
	r := must(Range(0, 10, 1))
	// Inputs returned as they are (lent elements): the library takes its own references.
	for _, par := range []int64{1, 2} {
		ident := must(r.MapMany(4, func(out, in []*Element) error { copy(out, in); return nil }, &MapOptions{NumParallelCalls: par}))
		if got := elementsOf(t, ident); len(got) != 10 || got[9] != "[9]" {
			t.Errorf("identity MapMany (parallel %d) = %v", par, got)
		}
	}
	// A made result is handed over: it reads as closed afterwards, and handing the same one
	// twice is an error naming the index.
	var made []*Element
	ds := must(r.MapMany(4, func(out, in []*Element) error {
		for i := range out {
			out[i] = scalarElement(t, 7)
			made = append(made, out[i])
		}
		return nil
	}, nil))
	if got := elementsOf(t, ds); len(got) != 10 || got[0] != "[7]" {
		t.Errorf("made results = %v", got)
	}
	if _, err := made[0].Tensor(0); !errors.Is(err, ErrClosed) {
		t.Errorf("a handed-over result: %v", err)
	}
	twice := must(r.MapMany(4, func(out, in []*Element) error {
		e := scalarElement(t, 1)
		for i := range out {
			out[i] = e
		}
		return nil
	}, nil))
	_, err := must(twice.Iterator()).GetNext()
	if !errors.Is(err, ErrClosed) && !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "index 1") {
		t.Errorf("one element handed over twice: %v", err)
	}
	// Clone makes it legal.
	cloned := must(r.MapMany(4, func(out, in []*Element) error {
		e := scalarElement(t, 1)
		for i := range out {
			var err error
			if out[i], err = e.Clone(); err != nil {
				return err
			}
		}
		return e.Close()
	}, nil))
	if got := elementsOf(t, cloned); len(got) != 10 || got[9] != "[1]" {
		t.Errorf("cloned results = %v", got)
	}
}

func TestMapManyErrors(t *testing.T) {
	r := must(Range(0, 40, 1))
	// A failing run fails at its first element, after all the runs before it.
	for _, par := range []int64{1, 4} {
		m := &negateMany{failAt: 20}
		it := must(must(r.MapMany(8, m.fn, &MapOptions{NumParallelCalls: par})).Iterator())
		n := 0
		for it.Next() {
			n++
		}
		if err := it.Err(); n != 16 || !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "value refused") {
			t.Errorf("parallel %d: %d elements, then %v", par, n, err)
		}
		it.Close()
	}
	// A nil result names its index; so does a panic's message name the function.
	nilAt2 := must(r.MapMany(4, func(out, in []*Element) error {
		copy(out, in)
		out[2] = nil
		return nil
	}, nil))
	if _, err := must(nilAt2.Iterator()).GetNext(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "index 2") {
		t.Errorf("nil result: %v", err)
	}
	panics := must(r.MapMany(4, func(out, in []*Element) error { panic("boom") }, &MapOptions{NumParallelCalls: 2}))
	if _, err := must(panics.Iterator()).GetNext(); !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("panic: %v", err)
	}
	// A result off the spec names its index in the run.
	toFloat := must(r.MapMany(4, func(out, in []*Element) error {
		copy(out, in)
		f := must(NewScalar(float32(1)))
		defer f.Close()
		out[1] = must(NewElement(f))
		return nil
	}, nil))
	if _, err := must(toFloat.Iterator()).GetNext(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "output 1") {
		t.Errorf("off-spec result: %v", err)
	}
	if _, err := r.MapMany(0, (&negateMany{}).fn, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("maxCount 0: %v", err)
	}
	if _, err := r.MapMany(4, nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil fn: %v", err)
	}
}

// Map's fast path for a function returning its lent input (the shim takes the reference):
// the input must still be open.
func TestMapReturningItsClosedInputFails(t *testing.T) {
	ds := must(must(Range(0, 3, 1)).Map(func(in *Element) (*Element, error) {
		in.Close()
		return in, nil
	}, nil))
	if _, err := must(ds.Iterator()).GetNext(); !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "closed") {
		t.Errorf("closed input returned: %v", err)
	}
	// The same for MapMany, naming the index of the closed input.
	many := must(must(Range(0, 8, 1)).MapMany(4, func(out, in []*Element) error {
		copy(out, in)
		in[3].Close()
		return nil
	}, nil))
	if _, err := must(many.Iterator()).GetNext(); !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "index 3") {
		t.Errorf("closed input returned by MapMany: %v", err)
	}
}
