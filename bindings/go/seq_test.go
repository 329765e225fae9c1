package dinput

import (
	"errors"
	"testing"
)

// The body of All, driven as a Go 1.23 range loop would drive it: every element, an early
// break, and an error delivered once at the end.
func TestSeqOf(t *testing.T) {
	ds := must(Range(0, 5, 1))
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	var got []int64
	it.all()(func(e *Element, err error) bool {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, must(must(e.Tensor(0)).Int64s())...)
		return len(got) < 3 // break after 3
	})
	it.all()(func(e *Element, err error) bool {
		got = append(got, must(must(e.Tensor(0)).Int64s())...)
		return true
	})
	if formatInt64s(got) != "[0,1,2,3,4]" {
		t.Errorf("elements %v", got)
	}
	failing := must(must(Range(0, 3, 1)).Map(func(in *Element) (*Element, error) {
		if v := must(must(in.Tensor(0)).Int64s())[0]; v == 1 {
			return nil, errors.New("element 1 is bad")
		}
		return in, nil
	}, nil))
	defer failing.Close()
	fit := must(failing.Iterator())
	defer fit.Close()
	var pairs, errs int
	fit.all()(func(e *Element, err error) bool {
		pairs++
		if err != nil {
			errs++
			if e != nil {
				t.Errorf("an element with the error: %v", e)
			}
		}
		return true
	})
	if pairs != 2 || errs != 1 {
		t.Errorf("%d pairs, %d errors; want 1 element then 1 error", pairs, errs)
	}
	steps := 0
	strategy := cpuStrategy(t, 2)
	defer strategy.Close()
	dist := must(strategy.DistributeDataset(must(must(Range(0, 8, 1)).Batch(4, nil)), nil))
	defer dist.Close()
	dit := must(dist.Iterator())
	defer dit.Close()
	dit.all()(func(v *PerReplica, err error) bool {
		if err != nil || v.Len() != 2 {
			t.Errorf("step %v, %v", v, err)
		}
		steps++
		return true
	})
	if steps != 2 {
		t.Errorf("%d distributed steps, want 2", steps)
	}
}
