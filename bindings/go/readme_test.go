package dinput_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dinput "github.com/dinput/dinput/bindings/go"
)

// countRecords is the README's record-file pipeline, word for word (TestReadmePipeline
// checks that README.md shows exactly this function and runs it).
func countRecords(ctx context.Context, pattern string) ([]int, error) {
	files, err := dinput.ListFiles([]string{pattern}, &dinput.ListFilesOptions{Shuffle: true})
	if err != nil {
		return nil, err
	}
	defer files.Close()
	records, err := files.Interleave(func(name *dinput.Element) (*dinput.Dataset, error) {
		t, err := name.Tensor(0)
		if err != nil {
			return nil, err
		}
		defer t.Close()
		paths, err := t.Strings()
		if err != nil {
			return nil, err
		}
		return dinput.Records(paths, nil)
	}, dinput.Spec{{DType: dinput.Bytes}}, &dinput.InterleaveOptions{CycleLength: 4, NumParallelCalls: 4})
	if err != nil {
		return nil, err
	}
	defer records.Close()
	shuffled, err := records.Shuffle(10000, nil)
	if err != nil {
		return nil, err
	}
	defer shuffled.Close()
	batched, err := shuffled.Batch(256, nil) // the global batch: 128 records per replica
	if err != nil {
		return nil, err
	}
	defer batched.Close()

	strategy, err := dinput.NewStrategy("CPU:0", "CPU:1")
	if err != nil {
		return nil, err
	}
	defer strategy.Close()
	dist, err := strategy.DistributeDataset(batched, nil)
	if err != nil {
		return nil, err
	}
	defer dist.Close()
	it, err := dist.Iterator()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	counts := make([]int, 2)
	for it.NextContext(ctx) { // false at the end of the data, on an error or when ctx is done
		step := it.Value() // one batch per replica, owned by the iterator
		for replica := 0; replica < step.Len(); replica++ {
			batch, err := step.Tensor(replica, 0)
			if err != nil {
				return nil, err
			}
			payloads, err := batch.Bytes() // the records, copied into Go memory
			batch.Close()
			if err != nil {
				return nil, err
			}
			counts[replica] += len(payloads)
		}
	}
	return counts, it.Err() // nil at the normal end of the data
}

// TestReadmePipeline runs countRecords on record files written here, and fails when the
// README's Go block beginning with "func countRecords(" differs from the function above.
func TestReadmePipeline(t *testing.T) {
	dir := t.TempDir()
	for f := 0; f < 3; f++ {
		w, err := dinput.OpenRecordWriter(filepath.Join(dir, fmt.Sprintf("train-%d.tfrecord", f)), nil)
		if err != nil {
			t.Fatal(err)
		}
		for r := 0; r < 300; r++ {
			if err := w.Write([]byte(fmt.Sprintf("file %d record %d", f, r))); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := countRecords(context.Background(), filepath.Join(dir, "train-*.tfrecord"))
	if err != nil {
		t.Fatal(err)
	}
	// 900 records: three global batches of 256 (128 per replica), then one of 132, which
	// fills replica 0's 128 rows first and leaves 4 to replica 1 (as tf.distribute does).
	if counts[0] != 512 || counts[1] != 388 {
		t.Errorf("records per replica %v, want [512 388]", counts)
	}

	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("readme_test.go")
	if err != nil {
		t.Fatal(err)
	}
	shown := goBlockStartingWith(string(readme), "func countRecords(")
	if shown == "" {
		t.Fatal("README.md has no ```go block starting with func countRecords(")
	}
	if !strings.Contains(string(source), "\n"+shown) {
		t.Errorf("README.md's countRecords is not the one readme_test.go runs; README shows:\n%s", shown)
	}
}

// goBlockStartingWith returns the body of the first ```go block of markdown whose first line
// starts with prefix, with its final newline ("" if none).
func goBlockStartingWith(markdown, prefix string) string {
	for _, part := range strings.Split(markdown, "```go\n")[1:] {
		end := strings.Index(part, "\n```")
		if end >= 0 && strings.HasPrefix(part, prefix) {
			return part[:end+1]
		}
	}
	return ""
}
