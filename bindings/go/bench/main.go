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
//
// Then (unless -only range) the map callbacks, as bench/bindings/c_map.c measures them in C:
// range(M).map(identity).batch(256), every batch read, one line per variant:
//
//	{"bench":"go_map_element_seq","n":...,"ns_per_elem":...,"base_ns_per_elem":...,"callback_ns_per_elem":...}
//
// go_map_element_seq and go_map_element_par2 use Map (sequential; NumParallelCalls 2),
// go_map_many64_seq and go_map_many64_par2 MapMany with runs of 64. ns_per_elem is the
// pipeline's median wall time per element over 3 epochs, base_ns_per_elem that of
// range(M).batch(256), callback_ns_per_elem the difference. M is -map-n (2^20), and a 16th
// of it for go_map_element_par2, whose every element waits for a library thread.
// -variant NAME runs that map variant alone (with -only map), for a profiler.
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
	mapN := flag.Int64("map-n", 1<<20, "number of elements of the map benchmarks")
	only := flag.String("only", "", "range or map: run only that part")
	variant := flag.String("variant", "", "with -only map: run only the map variant of this name (go_map_element_seq, ...), for a profiler")
	flag.Parse()
	if *quick {
		*n, *runs, *mapN = 4096, 1, 4096
	}
	if *only != "" && *only != "range" && *only != "map" {
		fail("-only takes range or map")
	}
	if *mapN < 1 {
		fail("-map-n must be positive")
	}
	if *only == "map" {
		mapBenchmarks(*mapN, *variant)
		return
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
	if *only != "range" {
		mapBenchmarks(*mapN, "")
	}
}

// mapEpoch iterates ds (batches of range(n) values) once and returns nanoseconds per element.
func mapEpoch(ds *dinput.Dataset, n int64, buf []int64) float64 {
	it := check(ds.Iterator())
	defer it.Close()
	var sum, count int64
	start := time.Now()
	for it.Next() {
		t := check(it.Value().Tensor(0))
		k := check(dinput.CopyValues(buf, t))
		t.Close()
		for _, v := range buf[:k] {
			sum += v
		}
		count += int64(k)
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

// medianEpoch is the median of 3 epochs after a warm-up one.
func medianEpoch(ds *dinput.Dataset, n int64, buf []int64) float64 {
	mapEpoch(ds, n, buf)
	times := []float64{mapEpoch(ds, n, buf), mapEpoch(ds, n, buf), mapEpoch(ds, n, buf)}
	sort.Float64s(times)
	return times[1]
}

func mapBenchmarks(n int64, only string) {
	identity := func(in *dinput.Element) (*dinput.Element, error) { return in, nil }
	identityMany := func(out, in []*dinput.Element) error { copy(out, in); return nil }
	buf := make([]int64, batch)
	variants := []struct {
		name     string
		many     int
		parallel int64
		n        int64
	}{
		{"go_map_element_seq", 0, 1, n},
		{"go_map_element_par2", 0, 2, max64(n/16, 1)},
		{"go_map_many64_seq", 64, 1, n},
		{"go_map_many64_par2", 64, 2, n},
	}
	bases := map[int64]float64{}
	for _, v := range variants {
		if only != "" && v.name != only {
			continue
		}
		r := check(dinput.Range(0, v.n, 1))
		if _, ok := bases[v.n]; !ok {
			plain := check(r.Batch(batch, nil))
			bases[v.n] = medianEpoch(plain, v.n, buf)
			plain.Close()
		}
		opts := &dinput.MapOptions{NumParallelCalls: v.parallel}
		var m *dinput.Dataset
		if v.many > 0 {
			m = check(r.MapMany(v.many, identityMany, opts))
		} else {
			m = check(r.Map(identity, opts))
		}
		ds := check(m.Batch(batch, nil))
		ns := medianEpoch(ds, v.n, buf)
		fmt.Printf("{\"bench\":\"%s\",\"n\":%d,\"ns_per_elem\":%.2f,\"base_ns_per_elem\":%.2f,\"callback_ns_per_elem\":%.2f}\n",
			v.name, v.n, ns, bases[v.n], ns-bases[v.n])
		ds.Close()
		m.Close()
		r.Close()
	}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
