package dinput

import "testing"

// Micro-benchmarks of the binding's own per-call costs, with no pipeline behind them: what a
// distributed loop pays per replica and step on top of the library
// (go test -run - -bench .).

// benchValue is a per-replica value of two replicas sharing one 128-row int64 element.
func benchValue() *PerReplica {
	x := must(NewVector(make([]int64, 128)))
	e := must(NewElement(x))
	return must(NewPerReplica(e, e))
}

// A Tensor handle per read: one call to make it (plus a finalizer), one to copy, one to free.
func BenchmarkPerReplicaTensorCopyClose(b *testing.B) {
	v := benchValue()
	buf := make([]int64, 128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t, _ := v.Tensor(i&1, 0)
		CopyValues(buf, t)
		t.Close()
	}
}

// AppendValues: one call per read, no handle.
func BenchmarkAppendValues(b *testing.B) {
	v := benchValue()
	buf := make([]int64, 0, 128)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf, _ = AppendValues(buf[:0], v, i&1, 0)
	}
}

// The floor: one fallible call (thread lock, cgo call, status check) copying one value.
func BenchmarkCopyOneValue(b *testing.B) {
	x := must(NewVector([]int64{1}))
	buf := make([]int64, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		CopyValues(buf, x)
	}
}

// Iterating range(b.N) through an identity Map: the cost of one Go map callback per
// element (compare BenchmarkIterateRange, the same without the map).
func BenchmarkMapCallback(b *testing.B) {
	ds := must(must(Range(0, int64(b.N), 1)).Map(func(in *Element) (*Element, error) { return in, nil }, nil))
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	b.ResetTimer()
	for it.Next() {
	}
}

// Iterating range(b.N) with no callback.
func BenchmarkIterateRange(b *testing.B) {
	ds := must(Range(0, int64(b.N), 1))
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	b.ResetTimer()
	for it.Next() {
	}
}

// The same map on two library threads, which the package's launcher started as locked
// goroutines (threads.go): each callback enters Go from a thread Go already knows.
func BenchmarkMapCallbackParallel(b *testing.B) {
	ds := must(must(Range(0, int64(b.N), 1)).Map(func(in *Element) (*Element, error) { return in, nil },
		&MapOptions{NumParallelCalls: 2}))
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	b.ResetTimer()
	for it.Next() {
	}
}

// MapMany with runs of 64: one callback per 64 elements (compare BenchmarkMapCallback).
func BenchmarkMapManyCallback(b *testing.B) {
	benchMapMany(b, 1)
}

// The same on two library threads.
func BenchmarkMapManyCallbackParallel(b *testing.B) {
	benchMapMany(b, 2)
}

func benchMapMany(b *testing.B, parallel int64) {
	ident := func(out, in []*Element) error { copy(out, in); return nil }
	ds := must(must(Range(0, int64(b.N), 1)).MapMany(64, ident, &MapOptions{NumParallelCalls: parallel}))
	defer ds.Close()
	it := must(ds.Iterator())
	defer it.Close()
	b.ResetTimer()
	for it.Next() {
	}
}
