package dinput

import (
	"sync/atomic"
	"syscall"
	"testing"
)

// The library starts its threads through Go (threads.go): a parallel map's pool and a
// prefetch thread are goroutines locked to their threads, and every callback the library
// makes from them arrives on one of those threads.
func TestLibraryThreadsAreStartedByGo(t *testing.T) {
	const n = 2000
	before := launchedThreads.Load()
	var onLaunched, elsewhere atomic.Int64
	negate := func(in *Element) (*Element, error) {
		if _, ok := runningThreads.Load(syscall.Gettid()); ok {
			onLaunched.Add(1)
		} else {
			elsewhere.Add(1)
		}
		v := must(must(in.Tensor(0)).Int64s())
		return NewElement(must(NewTensor([]int64{}, []int64{-v[0]})))
	}
	ds := must(must(must(Range(0, n, 1)).Map(negate, &MapOptions{NumParallelCalls: 4})).Prefetch(2))
	defer ds.Close()
	got := elementsOf(t, ds)
	if len(got) != n {
		t.Fatalf("%d elements, want %d", len(got), n)
	}
	for i, s := range got {
		if want := formatInt64s([]int64{-int64(i)}); s != want {
			t.Fatalf("element %d is %s, want %s", i, s, want)
		}
	}
	// The pool's 4 threads and the prefetch thread, at least.
	if started := launchedThreads.Load() - before; started < 5 {
		t.Errorf("the launcher started %d threads, want at least 5", started)
	}
	// A pool of 4 may still run a call on the consumer's side; most run on the pool.
	if onLaunched.Load() == 0 {
		t.Errorf("no callback ran on a thread Go started (%d elsewhere)", elsewhere.Load())
	}
}
