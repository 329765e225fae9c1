package dinput_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	dinput "github.com/dinput/dinput/bindings/go"
)

// The tutorial's get_next_as_optional loop: range(9).batch(4) over 2 replicas. The last
// global batch has one row, so replica 1 gets an empty batch in the last step.
func Example() {
	strategy, err := dinput.NewStrategy("CPU:0", "CPU:1")
	if err != nil {
		log.Fatal(err)
	}
	defer strategy.Close()
	r, _ := dinput.Range(0, 9, 1)
	dataset, _ := r.Batch(4, nil) // the global batch size is 4
	dist, err := strategy.DistributeDataset(dataset, nil)
	if err != nil {
		log.Fatal(err)
	}
	it, _ := dist.Iterator()
	defer it.Close()
	for {
		opt, err := it.GetNextAsOptional()
		if err != nil {
			log.Fatal(err)
		}
		if !opt.HasValue() {
			break
		}
		step, _ := opt.PerReplica()
		for replica := 0; replica < step.Len(); replica++ {
			x, _ := step.Tensor(replica, 0)
			values, _ := x.Int64s()
			if replica > 0 {
				fmt.Print(" | ")
			}
			fmt.Print(values)
		}
		fmt.Println()
		step.Close()
		opt.Close()
	}
	// Output:
	// [0 1] | [2 3]
	// [4 5] | [6 7]
	// [8] | []
}

// The scanner-style loop; each step's value belongs to the iterator.
func ExampleDistributedIterator_Next() {
	strategy, _ := dinput.NewStrategy("CPU:0", "CPU:1")
	r, _ := dinput.Range(0, 6, 1)
	dataset, _ := r.Batch(4, nil)
	dist, _ := strategy.DistributeDataset(dataset, nil)
	it, _ := dist.Iterator()
	defer it.Close()
	for it.Next() {
		left, _ := it.Value().Tensor(0, 0)
		right, _ := it.Value().Tensor(1, 0)
		l, _ := left.Int64s()
		rr, _ := right.Int64s()
		fmt.Println(l, "|", rr)
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// [0 1] | [2 3]
	// [4] | [5]
}

// Two workers as goroutines of one process, joined by an in-process collective, with DATA
// sharding: worker 1 gets an empty batch in the last step, so both stop together.
func ExampleNewMultiWorkerCPUStrategy() {
	collective, _ := dinput.NewInProcessCollective(2, 10*time.Second)
	defer collective.Close()
	results := make([][]string, 2)
	done := make(chan struct{})
	for w := 0; w < 2; w++ {
		go func(w int) {
			defer func() { done <- struct{}{} }()
			strategy, _ := dinput.NewMultiWorkerCPUStrategy(collective, w, 2)
			r, _ := dinput.Range(0, 9, 1)
			batched, _ := r.Batch(2, nil)
			dataset, _ := batched.WithOptions(dinput.Options{AutoShardPolicy: dinput.AutoShardData})
			dist, err := strategy.DistributeDataset(dataset, nil)
			if err != nil {
				collective.Abort(dinput.Aborted, err.Error())
				return
			}
			it, _ := dist.Iterator()
			defer it.Close()
			for it.Next() {
				x, _ := it.Value().Tensor(0, 0)
				v, _ := x.Int64s()
				results[w] = append(results[w], fmt.Sprint(v))
			}
		}(w)
	}
	<-done
	<-done
	fmt.Println("worker 0:", results[0])
	fmt.Println("worker 1:", results[1])
	// Output:
	// worker 0: [[0] [2] [4] [6] [8]]
	// worker 1: [[1] [3] [5] [7] []]
}

// Record files end to end: ListFiles → Interleave(Records) → Shuffle → Batch → distribute
// over 2 replicas. Four files of 5 records each give 20 records, in global batches of 8
// split 4 rows per replica; the last batch of 4 rows fills replica 0 and leaves replica 1
// an empty batch, as tf.distribute does.
func ExampleDataset_Interleave() {
	dir, _ := os.MkdirTemp("", "dinput-example")
	defer os.RemoveAll(dir)
	for f := 0; f < 4; f++ {
		w, err := dinput.OpenRecordWriter(filepath.Join(dir, fmt.Sprintf("part-%d.tfrecord", f)), nil)
		if err != nil {
			log.Fatal(err)
		}
		for r := 0; r < 5; r++ {
			w.Write([]byte(fmt.Sprintf("file %d record %d", f, r)))
		}
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
	}

	files, err := dinput.ListFiles([]string{filepath.Join(dir, "*.tfrecord")}, nil)
	if err != nil {
		log.Fatal(err)
	}
	records, _ := files.Interleave(func(name *dinput.Element) (*dinput.Dataset, error) {
		t, err := name.Tensor(0)
		if err != nil {
			return nil, err
		}
		paths, err := t.Strings()
		if err != nil {
			return nil, err
		}
		return dinput.Records(paths, nil)
	}, dinput.Spec{{DType: dinput.Bytes}}, &dinput.InterleaveOptions{CycleLength: 4, NumParallelCalls: 2})
	shuffled, _ := records.Shuffle(100, &dinput.ShuffleOptions{Seeds: dinput.Seeds(1, 2)})
	batched, _ := shuffled.Batch(8, nil) // the global batch size

	strategy, _ := dinput.NewStrategy("CPU:0", "CPU:1")
	defer strategy.Close()
	dist, err := strategy.DistributeDataset(batched, nil)
	if err != nil {
		log.Fatal(err)
	}
	it, _ := dist.Iterator()
	defer it.Close()
	for it.Next() {
		step := it.Value()
		for replica := 0; replica < step.Len(); replica++ {
			t, _ := step.Tensor(replica, 0)
			if replica > 0 {
				fmt.Print(" ")
			}
			fmt.Print(t.Shape())
			t.Close()
		}
		fmt.Println()
	}
	if err := it.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// [4] [4]
	// [4] [4]
	// [4] [0]
}
