package dinput

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

func TestZipAndConcatenate(t *testing.T) {
	a, b := must(Range(1, 4, 1)), must(Range(4, 7, 1))
	z := must(Zip(a, b))
	defer z.Close()
	if z.Cardinality() != 3 || z.Name() != "zip" {
		t.Errorf("zip: cardinality %d name %q", z.Cardinality(), z.Name())
	}
	it := must(z.Iterator())
	if !it.Next() {
		t.Fatalf("zip: no element: %v", it.Err())
	}
	second := must(it.Value().Tensor(1))
	if v := must(second.Int64s()); v[0] != 4 {
		t.Errorf("zip's second component %v", v)
	}
	second.Close()
	it.Close()
	c := must(a.Concatenate(b))
	if got := elementsOf(t, c); !reflect.DeepEqual(got, []string{"[1]", "[2]", "[3]", "[4]", "[5]", "[6]"}) {
		t.Errorf("concatenate = %v", got)
	}
	if _, err := Zip(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Zip() error %v", err)
	}
	if _, err := Zip(a, nil); err == nil {
		t.Errorf("Zip(a, nil) succeeded")
	}
}

func TestSampleAndChoose(t *testing.T) {
	a, b := must(Range(0, 20, 1)), must(Range(100, 120, 1))
	s1 := elementsOf(t, must(SampleFromDatasets([]*Dataset{a, b}, []float64{1, 1}, 5, false)))
	s2 := elementsOf(t, must(SampleFromDatasets([]*Dataset{a, b}, nil, 5, false)))
	if len(s1) != 40 || !reflect.DeepEqual(s1, s2) {
		t.Errorf("sample: %v vs %v", s1, s2)
	}
	if _, err := SampleFromDatasets([]*Dataset{a, b}, []float64{1}, 5, false); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("one weight for two datasets: %v", err)
	}
	sel := must(FromTensorSlices(must(NewElement(must(NewTensor([]int64{3}, []int64{1, 0, 1}))))))
	got := elementsOf(t, must(ChooseFromDatasets([]*Dataset{a, b}, sel, true)))
	if !reflect.DeepEqual(got, []string{"[100]", "[0]", "[101]"}) {
		t.Errorf("choose = %v", got)
	}
}

func TestCacheAndIgnoreErrors(t *testing.T) {
	calls := 0
	failOnThree := func(in *Element) (*Element, error) {
		calls++
		x := must(in.Tensor(0))
		defer x.Close()
		if v := must(x.Int64s()); v[0]%3 == 0 {
			return nil, &Error{Code: InvalidArgument, Message: "multiple of 3"}
		}
		return in.Clone()
	}
	m := must(must(Range(0, 7, 1)).Map(failOnThree, nil))
	ig := must(m.IgnoreErrors(false))
	it := must(ig.Iterator())
	var n int
	for it.Next() {
		n++
	}
	if it.Err() != nil || n != 4 {
		t.Errorf("ignore_errors gave %d elements, error %v", n, it.Err())
	}
	if c, err := it.Statistic("errors_ignored"); err != nil || c != 3 {
		t.Errorf("errors_ignored = %d, %v", c, err)
	}
	it.Close()

	path := filepath.Join(t.TempDir(), "cache")
	calls = 0
	first := elementsOf(t, must(ig.Cache(path)))
	if calls != 7 {
		t.Errorf("first pass: %d calls", calls)
	}
	calls = 0
	again := elementsOf(t, must(ig.Cache(path)))
	if calls != 0 || !reflect.DeepEqual(first, again) {
		t.Errorf("second run read the input %d times: %v vs %v", calls, first, again)
	}
	mem := must(must(ig.Cache("")).Repeat(2))
	calls = 0
	if got := elementsOf(t, mem); len(got) != 8 || calls != 7 {
		t.Errorf("memory cache: %v with %d calls", got, calls)
	}
}
