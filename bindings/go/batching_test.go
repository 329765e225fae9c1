package dinput

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readInt64s iterates ds and returns component c of every element as int64 values, with
// each element's shape.
func readInt64s(t *testing.T, ds *Dataset, c int) ([][]int64, [][]int64) {
	t.Helper()
	it := must(ds.Iterator())
	defer it.Close()
	var values, shapes [][]int64
	for it.Next() {
		tensor := must(it.Value().Tensor(c))
		values = append(values, must(tensor.Int64s()))
		shapes = append(shapes, tensor.Shape())
	}
	if it.Err() != nil {
		t.Fatalf("iterating %s: %v", ds.Name(), it.Err())
	}
	return values, shapes
}

// fills is range(lo, hi) with each x made into x copies of x (tf.fill([x], x)).
func fills(t *testing.T, lo, hi int64) *Dataset {
	fill := func(in *Element) (*Element, error) {
		x := must(must(in.Tensor(0)).Int64s())[0]
		v := make([]int64, x)
		for i := range v {
			v[i] = x
		}
		return NewElement(must(NewVector(v)))
	}
	return must(must(Range(lo, hi, 1)).Map(fill, &MapOptions{OutSpec: Spec{{DType: Int64, Shape: []int64{UnknownDim}}}}))
}

func TestPaddedBatch(t *testing.T) {
	a := fills(t, 1, 5)
	got, shapes := readInt64s(t, must(a.PaddedBatch(2, nil)), 0)
	if want := [][]int64{{1, 0, 2, 2}, {3, 3, 3, 0, 4, 4, 4, 4}}; !reflect.DeepEqual(got, want) {
		t.Errorf("padded_batch(2): %v", got)
	}
	if want := [][]int64{{2, 2}, {2, 4}}; !reflect.DeepEqual(shapes, want) {
		t.Errorf("shapes %v", shapes)
	}
	values := must(NewElement(must(NewScalar(int64(-1)))))
	got, _ = readInt64s(t, must(a.PaddedBatch(2, &PaddedBatchOptions{PaddedShapes: [][]int64{{5}}, PaddingValues: values})), 0)
	if want := [][]int64{{1, -1, -1, -1, -1, 2, 2, -1, -1, -1}, {3, 3, 3, -1, -1, 4, 4, 4, 4, -1}}; !reflect.DeepEqual(got, want) {
		t.Errorf("padded to 5 with -1: %v", got)
	}
	// Too small a padded shape fails the iteration with InvalidArgument.
	it := must(must(a.PaddedBatch(2, &PaddedBatchOptions{PaddedShapes: [][]int64{{2}}})).Iterator())
	defer it.Close()
	for it.Next() {
	}
	if !errors.Is(it.Err(), ErrInvalidArgument) {
		t.Errorf("padded shape too small: %v", it.Err())
	}
	if _, err := a.PaddedBatch(2, &PaddedBatchOptions{PaddedShapes: [][]int64{{2}, {3}}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("two shapes for one component: %v", err)
	}
}

// The length from a Go function: range(8) by x % 3, boundaries [1, 2], two per bucket.
func TestBucketBySequenceLengthFunc(t *testing.T) {
	mod3 := func(in *Element) (int64, error) {
		x, err := in.Tensor(0)
		if err != nil {
			return 0, err
		}
		v, err := x.Int64s()
		if err != nil {
			return 0, err
		}
		if v[0] == 100 {
			return -1, nil
		}
		return v[0] % 3, nil
	}
	got, _ := readInt64s(t, must(must(Range(0, 8, 1)).BucketBySequenceLengthFunc(mod3, []int64{1, 2}, []int64{2, 2, 2}, false, nil)), 0)
	want := [][]int64{{0, 3}, {1, 4}, {2, 5}, {6}, {7}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bucket_by_sequence_length with a length function: %v", got)
	}
	if _, err := must(Range(0, 8, 1)).BucketBySequenceLengthFunc(nil, []int64{1}, []int64{1, 1}, false, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("nil fn: %v", err)
	}
	it := must(must(must(Range(100, 101, 1)).BucketBySequenceLengthFunc(mod3, []int64{1}, []int64{1, 1}, false, nil)).Iterator())
	defer it.Close()
	if _, err := it.GetNext(); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "gave -1") {
		t.Errorf("a negative length: %v", err)
	}
}

func TestBucketBySequenceLengthAndWindow(t *testing.T) {
	a := fills(t, 1, 7)
	got, _ := readInt64s(t, must(a.BucketBySequenceLength(0, []int64{3, 5}, []int64{2, 2, 2}, false, nil)), 0)
	want := [][]int64{{1, 0, 2, 2}, {3, 3, 3, 0, 4, 4, 4, 4}, {5, 5, 5, 5, 5, 0, 6, 6, 6, 6, 6, 6}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("bucket_by_sequence_length: %v", got)
	}
	if _, err := a.BucketBySequenceLength(0, []int64{3, 5}, []int64{2}, false, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("one batch size for three buckets: %v", err)
	}
	w := must(must(Range(0, 7, 1)).Window(3, 3, 2, false))
	got, _ = readInt64s(t, w, 0)
	if want := [][]int64{{0, 2, 4}, {3, 5}, {6}}; !reflect.DeepEqual(got, want) {
		t.Errorf("window(3, stride=2): %v", got)
	}
}

func TestFlatMapAndReaders(t *testing.T) {
	rows := must(Range(1, 4, 1))
	flat := must(rows.FlatMap(func(in *Element) (*Dataset, error) {
		x := must(must(in.Tensor(0)).Int64s())[0]
		return Range(10*x, 10*x+x, 1)
	}, Spec{{DType: Int64}}))
	got, _ := readInt64s(t, flat, 0)
	if want := [][]int64{{10}, {20}, {21}, {30}, {31}, {32}}; !reflect.DeepEqual(got, want) {
		t.Errorf("flat_map: %v", got)
	}

	dir := t.TempDir()
	for _, f := range []string{"a", "b"} {
		w := must(OpenRecordWriter(filepath.Join(dir, f+".tfrecord"), nil))
		for i := 0; i < 2; i++ {
			w.Write([]byte(f + string(rune('0'+i))))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f+".txt"), []byte(f+"x\n"+f+"y\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	records := must(ListFiles([]string{filepath.Join(dir, "*.tfrecord")}, nil))
	names, it := readStrings(t, must(records.InterleaveReader(RecordsReader(nil), &InterleaveOptions{CycleLength: 2})))
	it.Close()
	if want := []string{"a0", "b0", "a1", "b1"}; !reflect.DeepEqual(names, want) {
		t.Errorf("interleave(records): %q", names)
	}
	names, it = readStrings(t, must(records.FlatMapReader(RecordsReader(&RecordsOptions{BufferSize: 4096}))))
	it.Close()
	if want := []string{"a0", "a1", "b0", "b1"}; !reflect.DeepEqual(names, want) {
		t.Errorf("flat_map(records): %q", names)
	}
	texts := must(ListFiles([]string{filepath.Join(dir, "*.txt")}, nil))
	names, it = readStrings(t, must(texts.InterleaveReader(TextLinesReader(), &InterleaveOptions{CycleLength: 2})))
	it.Close()
	if want := []string{"ax", "bx", "ay", "by"}; !reflect.DeepEqual(names, want) {
		t.Errorf("interleave(text_lines): %q", names)
	}
	names, it = readStrings(t, must(texts.FlatMapReader(FixedLengthRecordsReader(3, 0, 0))))
	it.Close()
	if want := []string{"ax\n", "ay\n", "bx\n", "by\n"}; !reflect.DeepEqual(names, want) {
		t.Errorf("flat_map(fixed_length_records): %q", names)
	}
	if _, err := texts.FlatMapReader(FixedLengthRecordsReader(0, 0, 0)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("record_bytes 0: %v", err)
	}
	if _, err := rows.InterleaveReader(TextLinesReader(), nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a reader over int64 elements: %v", err)
	}
}
