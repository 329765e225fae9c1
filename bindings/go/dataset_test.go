package dinput

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRangeBatchAndSpec(t *testing.T) {
	ds := rangeBatch(t, 10, 4, nil)
	defer ds.Close()
	if got := elementsOf(t, ds); !reflect.DeepEqual(got, []string{"[0,1,2,3]", "[4,5,6,7]", "[8,9]"}) {
		t.Errorf("range(10).batch(4) = %v", got)
	}
	if ds.Name() != "batch" || ds.Cardinality() != 3 {
		t.Errorf("name %q, cardinality %d", ds.Name(), ds.Cardinality())
	}
	// Without drop_remainder the batch dimension is unknown; with it, known.
	if spec := must(ds.ElementSpec()); spec.String() != "(int64[?])" {
		t.Errorf("spec %v", spec)
	}
	r := must(Range(0, 10, 1))
	dropped := must(r.Batch(4, &BatchOptions{DropRemainder: true}))
	if spec := must(dropped.ElementSpec()); len(spec) != 1 || spec[0].DType != Int64 || !reflect.DeepEqual(spec[0].Shape, []int64{4}) {
		t.Errorf("drop_remainder spec %v", spec)
	}
	if got := elementsOf(t, dropped); len(got) != 2 {
		t.Errorf("drop_remainder batches %v", got)
	}
	it := must(dropped.Iterator())
	if spec := must(it.ElementSpec()); spec.String() != "(int64[4])" {
		t.Errorf("iterator spec %v", spec)
	}
}

func TestTransforms(t *testing.T) {
	r := must(Range(0, 10, 1))
	defer r.Close()
	flat := func(ds *Dataset, err error) string {
		t.Helper()
		if err != nil {
			t.Fatalf("building: %v", err)
		}
		defer ds.Close()
		return strings.Join(elementsOf(t, ds), "")
	}
	if got := flat(r.Take(3)); got != "[0][1][2]" {
		t.Errorf("take(3) = %s", got)
	}
	if got := flat(r.Skip(7)); got != "[7][8][9]" {
		t.Errorf("skip(7) = %s", got)
	}
	if got := flat(r.Shard(4, 1)); got != "[1][5][9]" {
		t.Errorf("shard(4,1) = %s", got)
	}
	short := must(r.Take(2))
	if got := flat(short.Repeat(3)); got != "[0][1][0][1][0][1]" {
		t.Errorf("take(2).repeat(3) = %s", got)
	}
	forever := must(short.Repeat(RepeatForever))
	if forever.Cardinality() != InfiniteCardinality {
		t.Errorf("repeat forever cardinality %d", forever.Cardinality())
	}
	if got := flat(forever.Take(5)); got != "[0][1][0][1][0]" {
		t.Errorf("repeat().take(5) = %s", got)
	}
	if got := flat(r.Prefetch(Autotune)); got != "[0][1][2][3][4][5][6][7][8][9]" {
		t.Errorf("prefetch = %s", got)
	}
	b := must(r.Batch(4, nil))
	if got := flat(b.Unbatch()); got != "[0][1][2][3][4][5][6][7][8][9]" {
		t.Errorf("batch.unbatch = %s", got)
	}
	if got := flat(b.Rebatch([]int64{3, 1}, false)); got != "[0,1,2][3][4,5,6][7][8,9]" {
		t.Errorf("rebatch([3,1]) = %s", got)
	}
	// enumerate puts the index first.
	en := must(r.Enumerate(100))
	it := must(en.Iterator())
	first := must(it.GetNext())
	idx, val := must(first.Tensor(0)), must(first.Tensor(1))
	if i, v := must(idx.Int64s()), must(val.Int64s()); i[0] != 100 || v[0] != 0 || first.Len() != 2 {
		t.Errorf("enumerate first = %v, %v", i, v)
	}
}

func TestBatchOptions(t *testing.T) {
	r := must(Range(0, 100, 1))
	seq := elementsOf(t, must(r.Batch(7, nil)))
	par := elementsOf(t, must(r.Batch(7, &BatchOptions{NumParallelCalls: 4, Deterministic: DeterministicFalse})))
	if !reflect.DeepEqual(seq, par) || len(seq) != 15 {
		t.Errorf("parallel batches %v differ from %v", par, seq)
	}
	auto := elementsOf(t, must(r.Batch(7, &BatchOptions{NumParallelCalls: Autotune, DropRemainder: true})))
	if !reflect.DeepEqual(auto, seq[:14]) {
		t.Errorf("AUTOTUNE batches with drop_remainder %v", auto)
	}
	if _, err := r.Batch(7, &BatchOptions{NumParallelCalls: -5}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("NumParallelCalls -5: %v", err)
	}
	if _, err := r.Batch(7, &BatchOptions{Deterministic: Deterministic(9)}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Deterministic 9: %v", err)
	}
}

func TestWithOptionsDeterministic(t *testing.T) {
	r := must(Range(0, 10, 1))
	b := must(r.Batch(3, &BatchOptions{NumParallelCalls: 2}))
	ds := must(b.WithOptions(Options{Deterministic: DeterministicFalse}))
	if got := elementsOf(t, ds); len(got) != 4 {
		t.Errorf("batches %v", got)
	}
	if _, err := b.WithOptions(Options{Deterministic: Deterministic(7)}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Deterministic 7: %v", err)
	}
}

func TestShuffleSeedPair(t *testing.T) {
	r := must(Range(0, 50, 1))
	order := func(seeds *[2]int64) []string {
		return elementsOf(t, must(r.Shuffle(50, &ShuffleOptions{Seeds: seeds})))
	}
	if a, b := order(Seeds(3, 9)), order(Seeds(3, 9)); !reflect.DeepEqual(a, b) {
		t.Errorf("the same seed pair gave two orders")
	}
	if a, b := order(Seeds(3, 9)), order(Seeds(3, 10)); reflect.DeepEqual(a, b) {
		t.Errorf("another seed2 gave the same order")
	}
	if _, err := r.Shuffle(50, &ShuffleOptions{Seeds: Seeds(-1, 0)}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("seed -1: %v", err)
	}
}

func TestShuffleIsSeededAndComplete(t *testing.T) {
	r := must(Range(0, 50, 1))
	once := func() []string {
		ds := must(r.Shuffle(10, &ShuffleOptions{Seeds: Seeds(42, 0), SameOrderEachIteration: true}))
		defer ds.Close()
		return elementsOf(t, ds)
	}
	a, b := once(), once()
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the same seed gave two orders:\n%v\n%v", a, b)
	}
	sorted := append([]string(nil), a...)
	sort.Slice(sorted, func(i, j int) bool {
		var x, y int
		fmt.Sscanf(sorted[i], "[%d]", &x)
		fmt.Sscanf(sorted[j], "[%d]", &y)
		return x < y
	})
	for i, s := range sorted {
		if s != fmt.Sprintf("[%d]", i) {
			t.Fatalf("shuffle lost or duplicated elements: %v", a)
		}
	}
	if reflect.DeepEqual(a, elementsOf(t, r)) {
		t.Error("shuffle kept the input order")
	}
}

func TestFromTensorsAndSlices(t *testing.T) {
	features := must(NewTensor([]int64{4, 2}, []float32{0, 1, 2, 3, 4, 5, 6, 7}))
	labels := must(NewVector([]int64{10, 11, 12, 13}))
	e := must(NewElement(features, labels))
	slices := must(FromTensorSlices(e))
	if spec := must(slices.ElementSpec()); spec.String() != "(float32[2], int64[])" {
		t.Errorf("slices spec %v", spec)
	}
	it := must(slices.Iterator())
	var rows []string
	for it.Next() {
		f, l := must(it.Value().Tensor(0)), must(it.Value().Tensor(1))
		rows = append(rows, fmt.Sprint(must(f.Float32s()), must(l.Int64s())))
	}
	if it.Err() != nil || strings.Join(rows, " ") != "[0 1] [10] [2 3] [11] [4 5] [12] [6 7] [13]" {
		t.Errorf("slices = %v (%v)", rows, it.Err())
	}
	one := must(FromTensors(e))
	if one.Cardinality() != 1 {
		t.Errorf("from_tensors cardinality %d", one.Cardinality())
	}
	scalar := scalarElement(t, 3)
	if _, err := FromTensorSlices(scalar); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("slices of a scalar: %v", err)
	}
}

func TestTextLines(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	os.WriteFile(a, []byte("one\r\ntwo\n"), 0o644)
	os.WriteFile(b, []byte("three"), 0o644)
	ds := must(TextLines(a, b))
	it := must(ds.Iterator())
	var lines []string
	for it.Next() {
		s := must(it.Value().Tensor(0))
		lines = append(lines, must(s.Strings())...)
	}
	if it.Err() != nil || !reflect.DeepEqual(lines, []string{"one", "two", "three"}) {
		t.Errorf("lines %q (%v)", lines, it.Err())
	}
	// MaxRecordBytes also limits lines: "three" is longer than 3 bytes.
	limited := must(ds.WithOptions(Options{MaxRecordBytes: 3}))
	it = must(limited.Iterator())
	lines = nil
	for it.Next() {
		lines = append(lines, must(must(it.Value().Tensor(0)).Strings())...)
	}
	if !reflect.DeepEqual(lines, []string{"one", "two"}) || !errors.Is(it.Err(), ErrResourceExhausted) ||
		!strings.Contains(it.Err().Error(), "b.txt") {
		t.Errorf("MaxRecordBytes 3: lines %q, error %v", lines, it.Err())
	}
	if _, err := ds.WithOptions(Options{MaxRecordBytes: -1}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("MaxRecordBytes -1: %v", err)
	}
	missing := must(TextLines(filepath.Join(dir, "missing.txt")))
	it = must(missing.Iterator())
	if it.Next() || it.Err() == nil || !strings.Contains(it.Err().Error(), "missing.txt") {
		t.Errorf("a missing file: %v", it.Err())
	}
}

func TestGenerator(t *testing.T) {
	var starts atomic.Int32
	// Each iteration counts 0..4 on its own state: the start function makes a fresh closure.
	start := func() (GeneratorFunc, error) {
		starts.Add(1)
		i := int64(0)
		return func() (*Element, error) {
			if i == 5 {
				return nil, io.EOF
			}
			v, err := NewVector([]int64{i, i * i})
			if err != nil {
				return nil, err
			}
			defer v.Close()
			i++
			return NewElement(v)
		}, nil
	}
	gen := must(FromGenerator(Spec{{DType: Int64, Shape: []int64{2}}}, start))
	if gen.Cardinality() != UnknownCardinality {
		t.Errorf("generator cardinality %d", gen.Cardinality())
	}
	want := []string{"[0,0]", "[1,1]", "[2,4]", "[3,9]", "[4,16]"}
	if got := elementsOf(t, gen); !reflect.DeepEqual(got, want) {
		t.Errorf("first epoch %v", got)
	}
	// A second iterator restarts the generator; through prefetch its calls come from a
	// library thread.
	pre := must(gen.Prefetch(2))
	if got := elementsOf(t, pre); !reflect.DeepEqual(got, want) {
		t.Errorf("second epoch %v", got)
	}
	if starts.Load() != 2 {
		t.Errorf("start called %d times, want 2", starts.Load())
	}
}

func TestGeneratorErrors(t *testing.T) {
	spec := Spec{{DType: Int64, Shape: nil}}
	// An element that does not match the declared spec.
	wrong := must(FromGenerator(spec, func() (GeneratorFunc, error) {
		return func() (*Element, error) {
			f, _ := NewScalar(float32(1))
			return NewElement(f)
		}, nil
	}))
	it := must(wrong.Iterator())
	if _, err := it.GetNext(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("spec mismatch: %v", err)
	}
	// The start function's error reaches the iterator's creation or its first step.
	failing := must(FromGenerator(spec, func() (GeneratorFunc, error) {
		return nil, &Error{Code: NotFound, Message: "no such corpus"}
	}))
	var err error
	if it, err = failing.Iterator(); err == nil {
		_, err = it.GetNext()
	}
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "no such corpus") {
		t.Errorf("start error: %v", err)
	}
	// A panic on a prefetch thread fails the pipeline with the panic's message.
	panicking := must(FromGenerator(spec, func() (GeneratorFunc, error) {
		n := int64(0)
		return func() (*Element, error) {
			if n == 2 {
				panic("generator exploded")
			}
			n++
			s, _ := NewScalar(n)
			return NewElement(s)
		}, nil
	}))
	pre := must(panicking.Prefetch(4))
	it = must(pre.Iterator())
	got := 0
	for it.Next() {
		got++
	}
	if got != 2 || !errors.Is(it.Err(), ErrInternal) || !strings.Contains(it.Err().Error(), "generator exploded") {
		t.Errorf("after %d elements: %v", got, it.Err())
	}
	// A finished iterator repeats its error.
	if _, err := it.GetNext(); err == nil || !strings.Contains(err.Error(), "generator exploded") {
		t.Errorf("repeated error: %v", err)
	}
	if _, err := FromGenerator(spec, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil start: %v", err)
	}
	if _, err := FromGenerator(Spec{{DType: InvalidDType}}, func() (GeneratorFunc, error) { return nil, nil }); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("invalid spec: %v", err)
	}
}

func TestMapAndFilter(t *testing.T) {
	r := must(Range(0, 20, 1))
	square := func(in *Element) (*Element, error) {
		x, err := in.Tensor(0)
		if err != nil {
			return nil, err
		}
		defer x.Close()
		v, err := x.Int64s()
		if err != nil {
			return nil, err
		}
		sq, err := NewScalar(v[0] * v[0])
		if err != nil {
			return nil, err
		}
		defer sq.Close()
		return NewElement(sq)
	}
	even := func(in *Element) (bool, error) {
		x, err := in.Tensor(0)
		if err != nil {
			return false, err
		}
		defer x.Close()
		v, err := x.Int64s()
		return err == nil && v[0]%2 == 0, err
	}
	evens := must(r.Filter(even))
	squares := must(evens.Map(square, nil))
	want := []string{"[0]", "[4]", "[16]", "[36]", "[64]", "[100]", "[144]", "[196]", "[256]", "[324]"}
	if got := elementsOf(t, squares); !reflect.DeepEqual(got, want) {
		t.Errorf("filter(even).map(square) = %v", got)
	}
	// A parallel, order-keeping map on library threads gives the same result.
	par := must(evens.Map(square, &MapOptions{NumParallelCalls: 4}))
	if got := elementsOf(t, par); !reflect.DeepEqual(got, want) {
		t.Errorf("parallel map = %v", got)
	}
	// A parallel map allowed to reorder still gives every result once.
	unordered := elementsOf(t, must(evens.Map(square, &MapOptions{NumParallelCalls: 4, Deterministic: DeterministicFalse})))
	sort.Strings(unordered)
	sortedWant := append([]string(nil), want...)
	sort.Strings(sortedWant)
	if !reflect.DeepEqual(unordered, sortedWant) {
		t.Errorf("non-deterministic map = %v", unordered)
	}
	// A map that changes the spec declares it.
	toFloat := func(in *Element) (*Element, error) {
		f, err := NewVector([]float32{1, 2, 3})
		if err != nil {
			return nil, err
		}
		return NewElement(f)
	}
	floats := must(r.Map(toFloat, &MapOptions{OutSpec: Spec{{DType: Float32, Shape: []int64{3}}}}))
	if spec := must(floats.ElementSpec()); spec.String() != "(float32[3])" {
		t.Errorf("declared out spec %v", spec)
	}
	// The identity map may return its (lent) input: the library gets its own reference.
	ident := must(r.Map(func(in *Element) (*Element, error) { return in, nil }, nil))
	if got := elementsOf(t, ident); len(got) != 20 || got[19] != "[19]" {
		t.Errorf("identity map = %v", got)
	}
	if _, err := r.Map(nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil map fn: %v", err)
	}
	if _, err := r.Filter(nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil filter fn: %v", err)
	}
}

func TestCallbackArgumentsAreLentForTheCallOnly(t *testing.T) {
	r := must(Range(0, 3, 1))
	var kept *Element
	var keptTensor *Tensor
	ds := must(r.Map(func(in *Element) (*Element, error) {
		kept = in
		var err error
		keptTensor, err = in.Tensor(0)
		return in, err
	}, nil))
	elementsOf(t, ds)
	// The lent element reads as closed afterwards; a tensor taken from it is still valid.
	if _, err := kept.Tensor(0); !errors.Is(err, ErrClosed) {
		t.Errorf("lent element after the callback: %v", err)
	}
	if v := must(keptTensor.Int64s()); v[0] != 2 {
		t.Errorf("tensor taken in the callback = %v", v)
	}
}

func TestCallbackErrorsAndPanics(t *testing.T) {
	r := must(Range(0, 10, 1))
	// An error with a code keeps it.
	failing := must(r.Map(func(in *Element) (*Element, error) {
		return nil, &Error{Code: DataLoss, Message: "corrupt record 3"}
	}, nil))
	it := must(failing.Iterator())
	_, err := it.GetNext()
	var de *Error
	if !errors.As(err, &de) || de.Code != DataLoss || de.Message != "corrupt record 3" {
		t.Errorf("map error: %#v", err)
	}
	// A plain Go error is UNKNOWN with its text.
	plain := must(r.Filter(func(in *Element) (bool, error) { return false, fmt.Errorf("predicate broke") }))
	it = must(plain.Iterator())
	if _, err := it.GetNext(); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "predicate broke") {
		t.Errorf("filter error: %v", err)
	}
	// A panic in a parallel map (on a library thread) fails the pipeline; the process lives.
	boom := must(r.Map(func(in *Element) (*Element, error) {
		x, _ := in.Tensor(0)
		if v, _ := x.Int64s(); v[0] == 5 {
			panic(fmt.Sprintf("boom at %d", v[0]))
		}
		return in, nil
	}, &MapOptions{NumParallelCalls: 3}))
	it = must(boom.Iterator())
	n := 0
	for it.Next() {
		n++
	}
	if !errors.Is(it.Err(), ErrInternal) || !strings.Contains(it.Err().Error(), "boom at 5") || !strings.Contains(it.Err().Error(), "map function panicked") {
		t.Errorf("panicking map: %v after %d elements", it.Err(), n)
	}
	if n != 5 {
		t.Errorf("an order-keeping map delivered %d elements before the failure, want 5", n)
	}
	// A nil result without an error is reported, not dereferenced.
	nilResult := must(r.Map(func(in *Element) (*Element, error) { return nil, nil }, nil))
	it = must(nilResult.Iterator())
	if _, err := it.GetNext(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "nil element") {
		t.Errorf("nil map result: %v", err)
	}
}

func TestIteratorStyles(t *testing.T) {
	ds := rangeBatch(t, 5, 2, nil)
	// GetNext: the caller owns each element; the end is ErrOutOfRange, repeatedly.
	it := must(ds.Iterator())
	var got []string
	for {
		e, err := it.GetNext()
		if errors.Is(err, ErrOutOfRange) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		x := must(e.Tensor(0))
		got = append(got, formatInt64s(must(x.Int64s())))
		e.Close()
	}
	if strings.Join(got, "") != "[0,1][2,3][4]" {
		t.Errorf("GetNext loop = %v", got)
	}
	if _, err := it.GetNext(); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("after the end: %v", err)
	}
	// GetNextAsOptional: empty at the end.
	it = must(ds.Iterator())
	n := 0
	for {
		opt := must(it.GetNextAsOptional())
		if !opt.HasValue() {
			if _, err := opt.Element(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("value of an empty optional: %v", err)
			}
			opt.Close()
			break
		}
		e := must(opt.Element())
		if _, err := opt.PerReplica(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("per-replica value of an element optional: %v", err)
		}
		opt.Close()
		n += int(must(e.Tensor(0)).NumElements())
	}
	if n != 5 {
		t.Errorf("optional loop saw %d rows", n)
	}
	// Next/Value: the value is closed by the following Next.
	it = must(ds.Iterator())
	it.Next()
	first := it.Value()
	it.Next()
	if _, err := first.Tensor(0); !errors.Is(err, ErrClosed) {
		t.Errorf("a previous Value after Next: %v", err)
	}
	it.Close()
	if it.Next() || !errors.Is(it.Err(), ErrClosed) || it.Value() != nil {
		t.Errorf("Next on a closed iterator: %v, want ErrClosed", it.Err())
	}
	// A tensor taken from a Value stays valid after the Next that closed the Value (whose
	// handle a later Next frees) and after Close (which frees the last one).
	it = must(ds.Iterator())
	it.Next()
	kept := must(it.Value().Tensor(0))
	for it.Next() {
	}
	it.Close()
	if got := formatInt64s(must(kept.Int64s())); got != "[0,1]" || it.Err() != nil {
		t.Errorf("a tensor kept from the first Value: %s (%v), want [0,1]", got, it.Err())
	}
}

func TestUseAfterClose(t *testing.T) {
	r := must(Range(0, 4, 1))
	b := must(r.Batch(2, nil))
	// A derived dataset keeps its input alive: closing the input first is fine.
	r.Close()
	r.Close() // idempotent
	if got := elementsOf(t, b); len(got) != 2 {
		t.Errorf("batch after closing its input: %v", got)
	}
	checkClosed := func(what string, err error) {
		t.Helper()
		var de *Error
		if !errors.Is(err, ErrClosed) || !errors.Is(err, ErrFailedPrecondition) || !errors.As(err, &de) {
			t.Errorf("%s after Close: %v, want *Error wrapping ErrClosed", what, err)
		}
	}
	_, err := r.Batch(2, nil)
	checkClosed("Batch", err)
	_, err = r.Iterator()
	checkClosed("Iterator", err)
	_, err = r.ElementSpec()
	checkClosed("ElementSpec", err)
	_, err = r.Map(func(in *Element) (*Element, error) { return in, nil }, nil)
	checkClosed("Map", err)
	if r.Cardinality() != UnknownCardinality || r.Name() != "" {
		t.Errorf("closed dataset: cardinality %d, name %q", r.Cardinality(), r.Name())
	}
	it := must(b.Iterator())
	it.Close()
	_, err = it.GetNext()
	checkClosed("GetNext", err)
	_, err = it.GetNextAsOptional()
	checkClosed("GetNextAsOptional", err)
	x := must(NewVector([]int64{1}))
	x.Close()
	_, err = x.Int64s()
	checkClosed("Int64s", err)
	_, err = x.Raw()
	checkClosed("Raw", err)
	// Metadata is plain Go data and stays readable.
	if x.DType() != Int64 || x.NumElements() != 1 {
		t.Errorf("closed tensor metadata: %v %d", x.DType(), x.NumElements())
	}
	// nil objects behave like closed ones.
	var nilDS *Dataset
	_, err = nilDS.Batch(1, nil)
	checkClosed("Batch on nil", err)
	var nilTensor *Tensor
	_, err = nilTensor.Float64s()
	checkClosed("Float64s on nil", err)
	if nilTensor.Close() != nil || nilDS.Close() != nil {
		t.Error("Close on nil should be a no-op")
	}
}

func TestInvalidArguments(t *testing.T) {
	r := must(Range(0, 4, 1))
	_, err := r.Batch(0, nil)
	var de *Error
	if !errors.As(err, &de) || de.Code != InvalidArgument || de.Message == "" {
		t.Fatalf("Batch(0): %#v, want *Error INVALID_ARGUMENT with a message", err)
	}
	if !strings.Contains(de.Message, "batch_size") {
		t.Errorf("Batch(0) message should name the argument: %q", de.Message)
	}
	if !strings.HasPrefix(err.Error(), "INVALID_ARGUMENT: ") {
		t.Errorf("Error() = %q", err.Error())
	}
	if _, err := Range(0, 4, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Range step 0: %v", err)
	}
	if _, err := r.Rebatch([]int64{0, 0}, false); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Rebatch of zeros: %v", err)
	}
	if _, err := r.WithOptions(Options{AutoShardPolicy: 7}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown policy: %v", err)
	}
	if errors.Is(err, ErrOutOfRange) {
		t.Error("errors.Is must compare codes")
	}
}

// TestCallbackHandlesAreReleased checks that the handle of a Go callback is deleted when
// the library lets go of it, so that the closure (and what it captures) can be collected.
func TestCallbackHandlesAreReleased(t *testing.T) {
	var collected atomic.Bool
	func() {
		captured := new([64]byte)
		runtime.SetFinalizer(captured, func(*[64]byte) { collected.Store(true) })
		r := must(Range(0, 3, 1))
		m := must(r.Map(func(in *Element) (*Element, error) {
			_ = captured[0]
			return in, nil
		}, nil))
		elementsOf(t, m)
		m.Close()
		r.Close()
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !collected.Load() && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if !collected.Load() {
		t.Error("the map function's closure was never collected: its handle leaked")
	}
}

// TestConcurrentUseAndClose shares immutable objects between goroutines and closes them
// while they are in use: every call either completes or reports ErrClosed, never touching
// freed memory (run it with -race as well).
func TestConcurrentUseAndClose(t *testing.T) {
	for round := 0; round < 20; round++ {
		x := must(NewVector([]int64{1, 2, 3}))
		ds := rangeBatch(t, 64, 8, nil)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 20; i++ {
					if v, err := x.Int64s(); err != nil && !errors.Is(err, ErrClosed) {
						errs <- err
					} else if err == nil && v[2] != 3 {
						errs <- fmt.Errorf("read %v", v)
					}
					if it, err := ds.Iterator(); err == nil {
						if _, err := it.GetNext(); err != nil {
							errs <- err
						}
						it.Close()
					} else if !errors.Is(err, ErrClosed) {
						errs <- err
					}
				}
			}()
		}
		x.Close()
		ds.Close()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// TestFinalizersReleaseForgottenObjects drops objects without Close and lets the garbage
// collector finalize them, including an iterator stopped in the middle of a prefetching,
// generator-fed pipeline whose callbacks run on a library thread.
func TestFinalizersReleaseForgottenObjects(t *testing.T) {
	func() {
		gen := must(FromGenerator(Spec{{DType: Int64}}, func() (GeneratorFunc, error) {
			i := int64(0)
			return func() (*Element, error) {
				i++
				s, err := NewScalar(i)
				if err != nil {
					return nil, err
				}
				return NewElement(s)
			}, nil
		}))
		pre := must(gen.Prefetch(8))
		it := must(pre.Iterator())
		for k := 0; k < 3; k++ {
			must(it.GetNext())
		}
		s := cpuStrategy(t, 2)
		dist := must(s.DistributeDataset(rangeBatch(t, 100, 10, nil), nil))
		dit := must(dist.Iterator())
		step := must(dit.GetNext())
		must(step.Tensor(1, 0))
	}()
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
	// Reaching here without a crash, and the library still working, is the assertion.
	if got := elementsOf(t, rangeBatch(t, 3, 2, nil)); len(got) != 2 {
		t.Errorf("after finalization: %v", got)
	}
}

// TestCallbackOutOfRangeIsAnError checks that a map function returning an OUT_OF_RANGE error
// (say, from an inner iterator that ran out) stops the scanner with an error instead of a
// clean end that would drop the rest of the epoch.
func TestCallbackOutOfRangeIsAnError(t *testing.T) {
	r := must(Range(0, 10, 1))
	defer r.Close()
	inner := must(Range(0, 3, 1))
	defer inner.Close()
	innerIt := must(inner.Iterator())
	defer innerIt.Close()
	m := must(r.Map(func(in *Element) (*Element, error) {
		if _, err := innerIt.GetNext(); err != nil {
			return nil, err // OUT_OF_RANGE after three elements
		}
		return in, nil
	}, nil))
	defer m.Close()
	it := must(m.Iterator())
	defer it.Close()
	got := 0
	for it.Next() {
		got++
	}
	err := it.Err()
	if got != 3 || !errors.Is(err, ErrInvalidArgument) || errors.Is(err, ErrOutOfRange) ||
		!strings.Contains(err.Error(), "map callback returned OUT_OF_RANGE") {
		t.Errorf("after %d elements: %v, want INVALID_ARGUMENT naming the map callback", got, err)
	}
}

// File errors match the standard library's sentinels, as os's own errors do.
func TestFileErrorsMatchFS(t *testing.T) {
	dir := t.TempDir()
	missing := must(TextLines(filepath.Join(dir, "missing.txt")))
	defer missing.Close()
	it := must(missing.Iterator())
	defer it.Close()
	_, err := it.GetNext()
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, ErrNotFound) || errors.Is(err, fs.ErrPermission) {
		t.Errorf("a missing file: %v", err)
	}
	// The mapping itself, for every code that has an fs counterpart and one that has none.
	for _, c := range []struct {
		code   Code
		target error
		want   bool
	}{
		{NotFound, fs.ErrNotExist, true},
		{PermissionDenied, fs.ErrPermission, true},
		{AlreadyExists, fs.ErrExist, true},
		{NotFound, fs.ErrPermission, false},
		{DataLoss, fs.ErrNotExist, false},
		{InvalidArgument, fs.ErrInvalid, false},
	} {
		if got := errors.Is(&Error{Code: c.code}, c.target); got != c.want {
			t.Errorf("errors.Is(%v, %v) = %v", c.code, c.target, got)
		}
	}
	// A file the process may not read (root reads everything, so only as another user).
	if os.Geteuid() == 0 {
		return
	}
	locked := filepath.Join(dir, "locked.txt")
	os.WriteFile(locked, []byte("x\n"), 0)
	ds := must(TextLines(locked))
	defer ds.Close()
	it2 := must(ds.Iterator())
	defer it2.Close()
	if _, err := it2.GetNext(); !errors.Is(err, fs.ErrPermission) || !errors.Is(err, ErrPermissionDenied) {
		t.Errorf("an unreadable file: %v", err)
	}
}
