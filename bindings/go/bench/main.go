// Command bench measures the Go binding on the distributed hot path: one epoch of
// range(N).batch(256) over 2 CPU replicas (Strategy.DistributeDataset), reading every value
// of every replica's batch, as the C benchmark bench_distribute does. It prints one JSON line:
//
//	{"bench":"go_range_batch256_2replicas","n":16777216,"runs":5,"ns_per_elem":...}
//
// ns_per_elem is the median over the runs of the epoch's wall time divided by N. The loop is
// the documented fast one (Next/Value, then AppendValues into a reused buffer: one cgo call
// per replica and step); -tensors reads through Tensor handles instead (PerReplica.Tensor,
// CopyValues, Close: three calls and a finalizer per replica and step). Either way the
// figure includes the binding's per-step costs: cgo calls, thread locking, handles.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	dinput "github.com/dinput/dinput/bindings/go"
)

const batch = 256

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(2)
}

func check[T any](v T, err error) T {
	if err != nil {
		fail("%v", err)
	}
	return v
}

// epoch iterates the distributed dataset once and returns nanoseconds per element.
func epoch(dist *dinput.DistributedDataset, n int64, buf []int64, tensors bool) float64 {
	it := check(dist.Iterator())
	defer it.Close()
	var sum, count int64
	start := time.Now()
	for it.Next() {
		step := it.Value()
		for r := 0; r < step.Len(); r++ {
			var values []int64
			if tensors {
				t := check(step.Tensor(r, 0))
				values = buf[:check(dinput.CopyValues(buf, t))]
				t.Close()
			} else {
				values = check(dinput.AppendValues(buf[:0], step, r, 0))
			}
			for _, v := range values {
				sum += v
			}
			count += int64(len(values))
		}
	}
	elapsed := time.Since(start)
	if err := it.Err(); err != nil {
		fail("iteration: %v", err)
	}
	if count != n || sum != n*(n-1)/2 {
		fail("read %d values summing to %d, expected %d summing to %d", count, sum, n, n*(n-1)/2)
	}
	return float64(elapsed.Nanoseconds()) / float64(n)
}

func main() {
	n := flag.Int64("n", 1<<24, "number of elements (range(n))")
	runs := flag.Int("runs", 5, "measured epochs (the median is reported)")
	quick := flag.Bool("quick", false, "tiny sizes for a smoke test; the figure means nothing")
	tensors := flag.Bool("tensors", false, "read through Tensor handles instead of AppendValues")
	flag.Parse()
	if *quick {
		*n, *runs = 4096, 1
	}
	if *runs < 1 || *n < 1 {
		fail("-n and -runs must be positive")
	}

	strategy := check(dinput.NewStrategy("CPU:0", "CPU:1"))
	defer strategy.Close()
	r := check(dinput.Range(0, *n, 1))
	defer r.Close()
	ds := check(r.Batch(batch, nil))
	defer ds.Close()
	dist := check(strategy.DistributeDataset(ds, nil))
	defer dist.Close()

	buf := make([]int64, batch)
	epoch(dist, *n, buf, *tensors) // warm-up: threads, allocator, page faults
	times := make([]float64, *runs)
	for i := range times {
		times[i] = epoch(dist, *n, buf, *tensors)
	}
	sort.Float64s(times)
	read := "AppendValues"
	if *tensors {
		read = "Tensor"
	}
	fmt.Printf("{\"bench\":\"go_range_batch256_2replicas\",\"n\":%d,\"batch\":%d,\"replicas\":2,\"runs\":%d,\"read\":\"%s\",\"ns_per_elem\":%.3f,\"dinput\":\"%s\"}\n",
		*n, batch, *runs, read, times[len(times)/2], dinput.Version())
}
