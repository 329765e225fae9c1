package dinput

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The guard of a handle: every close frees exactly once, never under a user, whichever of
// close and the last release comes first (run with -race as well).
func TestRefFreesOnceAfterTheLastUser(t *testing.T) {
	for round := 0; round < 200; round++ {
		value := 7
		var r ref[int]
		r.p = &value
		var frees, inUse atomic.Int32
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 50; i++ {
					p := r.acquire()
					if p != nil {
						inUse.Add(1)
						if *p != 7 || frees.Load() != 0 {
							t.Error("a user saw the handle freed under it")
						}
						inUse.Add(-1)
					}
					r.release()
				}
			}()
		}
		free := func(p *int) {
			if inUse.Load() != 0 {
				t.Error("freed while a user held the handle")
			}
			frees.Add(1)
		}
		go r.close(free)
		r.close(free) // a second close is a no-op, whichever runs first
		wg.Wait()
		if n := frees.Load(); n != 1 {
			t.Fatalf("round %d: %d frees, want 1", round, n)
		}
		if r.acquire() != nil {
			t.Fatal("acquire after close returned the handle")
		}
		r.release()
		if r.take() != nil {
			t.Fatal("take after close returned the handle")
		}
	}
}

// take returns the handle only once its users are gone, and only to the first taker.
func TestRefTakeWaitsForUsers(t *testing.T) {
	value := 1
	var r ref[int]
	r.p = &value
	if r.acquire() == nil {
		t.Fatal("acquire on an open guard returned nil")
	}
	var released atomic.Bool
	go func() {
		time.Sleep(20 * time.Millisecond)
		released.Store(true)
		r.release()
	}()
	if p := r.take(); p != &value || !released.Load() {
		t.Fatalf("take returned %v before the user released (released %v)", p, released.Load())
	}
	if r.take() != nil {
		t.Error("a second take returned the handle")
	}
	var closed ref[int]
	closed.p = &value
	if closed.take() != &value {
		t.Error("take of an unused open guard did not return the handle")
	}
	closed.close(func(*int) { t.Error("close after take freed the handle") })
}

// The callback registry: handles are never 0, find their value until deleted, are reused
// after, and an invalid handle panics (the trampolines turn that into an INTERNAL status).
func TestRegistry(t *testing.T) {
	var r registry
	a, b := r.add("a"), r.add("b")
	if a == 0 || b == 0 || a == b {
		t.Fatalf("handles %d and %d", a, b)
	}
	if r.value(a) != "a" || r.value(b) != "b" {
		t.Fatalf("values %v, %v", r.value(a), r.value(b))
	}
	r.delete(a)
	if c := r.add("c"); c != a || r.value(c) != "c" {
		t.Errorf("a deleted slot is not reused: got %d (%v), deleted %d", c, r.value(c), a)
	}
	for _, f := range []func(){
		func() { r.value(0) },
		func() { r.value(1 << 40) },
		func() { r.value(b + 100) },
		func() { r.delete(b); r.delete(b) },
	} {
		func() {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(p.(string), "invalid callback handle") {
					t.Errorf("an invalid handle gave %v, want a panic naming it", p)
				}
			}()
			f()
		}()
	}
	// Many at once, across chunks, from several goroutines.
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			hs := make([]uintptr, 3000)
			for i := range hs {
				hs[i] = r.add(g*10000 + i)
			}
			for i, h := range hs {
				if v := r.value(h); v != g*10000+i {
					t.Errorf("handle %d holds %v, want %d", h, v, g*10000+i)
					return
				}
			}
			for _, h := range hs {
				r.delete(h)
			}
		}(g)
	}
	wg.Wait()
}
