package dinput

import (
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// checkpointPipeline is range(30).shuffle(6, fixed seeds).batch(4): partial last batch,
// a shuffle buffer to rebuild.
func checkpointPipeline(t *testing.T, buffer int64) *Dataset {
	t.Helper()
	r := must(Range(0, 30, 1))
	defer r.Close()
	s := must(r.Shuffle(buffer, &ShuffleOptions{Seeds: Seeds(1, 2)}))
	defer s.Close()
	return must(s.Batch(4, nil))
}

func TestIteratorSaveAndRestore(t *testing.T) {
	reference := checkpointPipeline(t, 6)
	defer reference.Close()
	want := elementsOf(t, reference)
	for steps := 0; steps <= len(want); steps++ {
		ds := checkpointPipeline(t, 6)
		it := must(ds.Iterator())
		var got []string
		for i := 0; i < steps && it.Next(); i++ {
			got = append(got, formatInt64s(must(must(it.Value().Tensor(0)).Int64s())))
		}
		state := must(it.MarshalBinary())
		it.Close()
		restored := must(checkpointPipeline(t, 6).IteratorFromState(state))
		for restored.Next() {
			got = append(got, formatInt64s(must(must(restored.Value().Tensor(0)).Int64s())))
		}
		if err := restored.Err(); err != nil {
			t.Fatal(err)
		}
		restored.Close()
		ds.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("saved after %d batches: got %v, want %v", steps, got, want)
		}
	}
}

func TestIteratorStateErrors(t *testing.T) {
	ds := checkpointPipeline(t, 6)
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	it.Next()
	state := must(it.SaveState())
	other := checkpointPipeline(t, 60)
	defer other.Close()
	if _, err := other.IteratorFromState(state); !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "shuffle(buffer_size=6") {
		t.Errorf("another pipeline: %v", err)
	}
	if _, err := ds.IteratorFromState(state[:len(state)-1]); !errors.Is(err, ErrDataLoss) {
		t.Errorf("truncated: %v", err)
	}
	flipped := append([]byte(nil), state...)
	flipped[len(flipped)-1] ^= 4
	if _, err := ds.IteratorFromState(flipped); !errors.Is(err, ErrDataLoss) {
		t.Errorf("bit flipped: %v", err)
	}
	if _, err := ds.IteratorFromState(nil); !errors.Is(err, ErrDataLoss) {
		t.Errorf("empty: %v", err)
	}
	// Parallel results as they finish: an order no state can reproduce.
	r := must(Range(0, 5, 1))
	defer r.Close()
	unordered := must(r.Map(func(in *Element) (*Element, error) { return in, nil },
		&MapOptions{NumParallelCalls: 2, Deterministic: DeterministicFalse}))
	defer unordered.Close()
	uit := must(unordered.Iterator())
	defer uit.Close()
	if _, err := uit.SaveState(); !errors.Is(err, ErrUnimplemented) || !strings.Contains(err.Error(), "deterministic=false") {
		t.Errorf("unordered map: %v", err)
	}
}

func TestDistributedIteratorSaveAndRestore(t *testing.T) {
	for steps := 0; steps <= 9; steps++ {
		dist := must(cpuStrategy(t, 2).DistributeDataset(checkpointPipeline(t, 6), nil))
		it := must(dist.Iterator())
		for i := 0; i < steps && it.Next(); i++ {
		}
		state := must(it.MarshalBinary())
		want := allSteps(t, it)
		again := must(cpuStrategy(t, 2).DistributeDataset(checkpointPipeline(t, 6), nil))
		if got := allSteps(t, must(again.IteratorFromState(state))); got != want {
			t.Errorf("saved after %d steps: got %q, want %q", steps, got, want)
		}
		if steps != 2 {
			continue
		}
		other := must(cpuStrategy(t, 2).DistributeDataset(checkpointPipeline(t, 60), nil))
		if _, err := other.IteratorFromState(state); !errors.Is(err, ErrFailedPrecondition) || !strings.Contains(err.Error(), "shuffle(buffer_size=6") {
			t.Errorf("another pipeline: %v", err)
		}
		damaged := append([]byte(nil), state...)
		damaged[len(damaged)-1] ^= 1
		if _, err := again.IteratorFromState(damaged); !errors.Is(err, ErrDataLoss) {
			t.Errorf("damaged state: %v", err)
		}
	}
}

func TestDescribeState(t *testing.T) {
	dist := must(cpuStrategy(t, 2).DistributeDataset(checkpointPipeline(t, 6), nil))
	it := must(dist.Iterator())
	defer it.Close()
	it.Next()
	it.Next()
	text := must(DescribeState(must(it.SaveState())))
	for _, want := range []string{`"kind":"distributed_iterator"`, `"step":2`, "shuffle(buffer_size=6"} {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %s", text, want)
		}
	}
	if _, err := DescribeState([]byte("DINPUTST")); !errors.Is(err, ErrDataLoss) {
		t.Errorf("truncated: %v", err)
	}
}

// counter is a SavableGenerator of 0..9 whose position is its next value.
type counter struct{ next int64 }

func (c *counter) Next() (*Element, error) {
	if c.next >= 10 {
		return nil, io.EOF
	}
	c.next++
	return NewElement(must(NewScalar(c.next - 1)))
}

func (c *counter) SaveState() ([]byte, error) { return []byte(strconv.FormatInt(c.next, 10)), nil }

func (c *counter) RestoreState(state []byte) (err error) {
	c.next, err = strconv.ParseInt(string(state), 10, 64)
	return err
}

func TestSavableGenerator(t *testing.T) {
	gen := must(FromSavableGenerator(Spec{{DType: Int64}}, func() (SavableGenerator, error) { return &counter{}, nil }))
	defer gen.Close()
	ds := must(gen.Batch(3, nil))
	defer ds.Close()
	want := elementsOf(t, ds)
	for steps := 0; steps <= len(want); steps++ {
		it := must(ds.Iterator())
		var got []string
		for i := 0; i < steps && it.Next(); i++ {
			got = append(got, formatInt64s(must(must(it.Value().Tensor(0)).Int64s())))
		}
		state := must(it.SaveState())
		it.Close()
		restored := must(ds.IteratorFromState(state))
		for restored.Next() {
			got = append(got, formatInt64s(must(must(restored.Value().Tensor(0)).Int64s())))
		}
		restored.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("saved after %d batches: got %v, want %v", steps, got, want)
		}
	}
	plain := must(FromGenerator(Spec{{DType: Int64}}, func() (GeneratorFunc, error) { return (&counter{}).Next, nil }))
	defer plain.Close()
	it := must(plain.Iterator())
	defer it.Close()
	if _, err := it.SaveState(); !errors.Is(err, ErrUnimplemented) {
		t.Errorf("a generator without SaveState: %v", err)
	}
}
