package dinput

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// readStrings iterates ds and returns component 0 of every element as strings.
func readStrings(t *testing.T, ds *Dataset) ([]string, *Iterator) {
	t.Helper()
	it := must(ds.Iterator())
	var got []string
	for it.Next() {
		got = append(got, must(must(it.Value().Tensor(0)).Strings())...)
	}
	if it.Err() != nil {
		t.Fatalf("iterating %s: %v", ds.Name(), it.Err())
	}
	return got, it
}

// Records written by RecordWriter, in each compression, read back by Records; the
// iterator's statistics count them.
func TestRecordWriterAndRecords(t *testing.T) {
	dir := t.TempDir()
	want := []string{"alpha", "", "gamma gamma gamma"}
	for _, c := range []Compression{CompressionNone, CompressionZstd, CompressionGzip} {
		path := filepath.Join(dir, c.String()+".tfrecord")
		w := must(OpenRecordWriter(path, &RecordWriterOptions{Compression: c}))
		for _, r := range want {
			if err := w.Write([]byte(r)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%v: Close: %v", c, err)
		}
		if err := w.Close(); err != nil {
			t.Errorf("%v: a second Close: %v", c, err)
		}
		if err := w.Write([]byte("late")); !errors.Is(err, ErrClosed) {
			t.Errorf("%v: Write after Close: %v", c, err)
		}
		ds := must(Records([]string{path}, &RecordsOptions{Compression: c}))
		got, it := readStrings(t, ds)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: records %q", c, got)
		}
		if n := must(it.Statistic("records")); n != 3 {
			t.Errorf("%v: statistic records = %d", c, n)
		}
		if _, err := it.Statistic("no such statistic"); !errors.Is(err, ErrNotFound) {
			t.Errorf("an unknown statistic: %v", err)
		}
		it.Close()
		ds.Close()
	}
	// Discard leaves the path as it was; a missing directory is fs.ErrNotExist.
	path := filepath.Join(dir, "NONE.tfrecord")
	w := must(OpenRecordWriter(path, nil))
	w.Write([]byte("discarded"))
	if err := w.Discard(); err != nil {
		t.Fatal(err)
	}
	got, it := readStrings(t, must(Records([]string{path}, nil)))
	it.Close()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after Discard: %q", got)
	}
	if _, err := OpenRecordWriter(filepath.Join(dir, "missing", "x.tfrecord"), nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a writer in a missing directory: %v", err)
	}
	if _, err := OpenRecordWriter(path, &RecordWriterOptions{Level: 99}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("level 99: %v", err)
	}
}

func TestListFilesAndFixedLengthRecords(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.bin", "a.bin", "c.txt"} {
		os.WriteFile(filepath.Join(dir, name), []byte("HHabcdefF"), 0o644)
	}
	names, it := readStrings(t, must(ListFiles([]string{filepath.Join(dir, "*.bin")}, nil)))
	it.Close()
	if !reflect.DeepEqual(names, []string{filepath.Join(dir, "a.bin"), filepath.Join(dir, "b.bin")}) {
		t.Errorf("ListFiles: %q", names)
	}
	shuffled, it := readStrings(t, must(ListFiles([]string{filepath.Join(dir, "*")},
		&ListFilesOptions{Shuffle: true, Seeds: Seeds(1, 2)})))
	it.Close()
	if len(shuffled) != 3 {
		t.Errorf("shuffled ListFiles: %q", shuffled)
	}
	if _, err := ListFiles([]string{filepath.Join(dir, "*.none")}, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a pattern matching nothing: %v", err)
	}
	records, it := readStrings(t, must(FixedLengthRecords(names, 3, 2, 1)))
	it.Close()
	if !reflect.DeepEqual(records, []string{"abc", "def", "abc", "def"}) {
		t.Errorf("FixedLengthRecords: %q", records)
	}
	bad := must(FixedLengthRecords(names, 4, 2, 1))
	bit := must(bad.Iterator())
	defer bit.Close()
	if _, err := bit.GetNext(); !errors.Is(err, ErrDataLoss) {
		t.Errorf("a body that is not a multiple of the record size: %v", err)
	}
}

// ListFiles → Interleave(Records): three files read round robin, sequentially and in
// parallel; the function's error fails the iteration with its message.
func TestInterleaveRecords(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a", "b", "c"} {
		w := must(OpenRecordWriter(filepath.Join(dir, f+".tfrecord"), nil))
		for i := 0; i < 2; i++ {
			w.Write([]byte(f + string(rune('0'+i))))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	files := must(ListFiles([]string{filepath.Join(dir, "*.tfrecord")}, nil))
	defer files.Close()
	open := func(in *Element) (*Dataset, error) {
		name, err := must(in.Tensor(0)).Strings()
		if err != nil {
			return nil, err
		}
		return Records(name, nil)
	}
	spec := Spec{{DType: Bytes}}
	for _, opts := range []*InterleaveOptions{
		{CycleLength: 3},
		{CycleLength: 3, BlockLength: 1, NumParallelCalls: 2, Deterministic: DeterministicTrue},
	} {
		ds := must(files.Interleave(open, spec, opts))
		got, it := readStrings(t, ds)
		it.Close()
		ds.Close()
		if want := []string{"a0", "b0", "c0", "a1", "b1", "c1"}; !reflect.DeepEqual(got, want) {
			t.Errorf("interleave %+v: %q", *opts, got)
		}
	}
	blocks, it := readStrings(t, must(files.Interleave(open, spec, &InterleaveOptions{CycleLength: 2, BlockLength: 2})))
	it.Close()
	if want := []string{"a0", "a1", "b0", "b1", "c0", "c1"}; !reflect.DeepEqual(blocks, want) {
		t.Errorf("blocks of 2: %q", blocks)
	}
	failing := must(files.Interleave(func(*Element) (*Dataset, error) {
		return nil, errors.New("no reader for this file")
	}, spec, nil))
	defer failing.Close()
	fit := must(failing.Iterator())
	defer fit.Close()
	if _, err := fit.GetNext(); err == nil || !strings.Contains(err.Error(), "no reader for this file") {
		t.Errorf("a failing interleave function: %v", err)
	}
	if _, err := files.Interleave(nil, spec, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a nil function: %v", err)
	}
}
