package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync/atomic"
	"time"
)

// ref guards one library handle. Calls register as users for as long as C uses the pointer
// (acquire/release); closing marks the guard closed at once, so later calls see nil and
// report ErrClosed, and the handle is freed when the last user is done. A Close racing with a
// call (from another goroutine, or the finalizer) therefore never frees the handle under the
// call and never waits for it either: a GetNext blocked for data cannot hold up Close.
//
// The whole state is one atomic word, so that acquire, release and take are one atomic
// operation each: a map callback takes back the element lent to it once per element, and
// every method call acquires and releases (a mutex made each of these two).
type ref[T any] struct {
	// state: the number of users (refUsers), and the refClaimed, refClosed and refFreed
	// flags, in that order of setting.
	state atomic.Int64
	// p is set once, before the guard is shared, and never written again: the flags say
	// whether it may still be used.
	p *T
	// free is how the close that claimed the guard frees the handle; written before that
	// close sets refClosed, and read only by whoever then sets refFreed.
	free func(*T)
}

const (
	refUsers   = 1<<32 - 1
	refClaimed = 1 << 32 // a close or a take won the guard: there is no second one
	refClosed  = 1 << 33 // acquire returns nil from now on
	refFreed   = 1 << 34 // a close's free ran (exactly once, by close or by the last user)
)

// acquire registers a user and returns the handle (nil when closed). Every acquire must be
// paired with a release, whatever it returned.
func (r *ref[T]) acquire() *T {
	if r.state.Add(1)&refClosed != 0 {
		return nil
	}
	return r.p
}

// peek returns the handle, nil when closed, without registering a user: only for a handle
// nobody else may free meanwhile (one the library lends to a callback that is still running).
func (r *ref[T]) peek() *T {
	if r.state.Load()&refClosed != 0 {
		return nil
	}
	return r.p
}

// release ends a use; the last user frees a handle closed in the meantime.
func (r *ref[T]) release() {
	if s := r.state.Add(-1); s&refUsers == 0 && s&(refClosed|refFreed) == refClosed {
		r.finish(s)
	}
}

// finish runs the close's free for a closed guard without users, s being its state, unless
// somebody did already (or a user came and will do it when it goes).
func (r *ref[T]) finish(s int64) {
	if r.state.CompareAndSwap(s, s|refFreed) && r.free != nil && r.p != nil {
		r.free(r.p)
	}
}

// take closes the guard, waits until no call uses the handle any more and returns it, nil
// when the guard was already closed. It is for handles whose owner must have them back
// before it returns (an argument the library lends to a callback, a result handed over to
// C); the caller frees it or just drops it.
func (r *ref[T]) take() *T {
	if r.state.CompareAndSwap(0, refClaimed|refClosed) { // open and unused: the usual case
		return r.p
	}
	won := r.claim(refClosed)
	// Also when it was closed before (nothing to return), the owner may not reclaim the
	// handle under a call that uses it.
	r.waitIdle()
	if !won {
		return nil
	}
	return r.p
}

// claim sets refClaimed and flags, unless a close or take claimed the guard first; it says
// whether this call did.
func (r *ref[T]) claim(flags int64) bool {
	for {
		s := r.state.Load()
		if s&refClaimed != 0 {
			return false
		}
		if r.state.CompareAndSwap(s, s|refClaimed|flags) {
			return true
		}
	}
}

// waitIdle waits until the guard has no users. Only a take racing with a call from another
// goroutine waits, and such calls are short (no call on a lent or handed-over element
// blocks), so yielding and then sleeping briefly is enough.
func (r *ref[T]) waitIdle() {
	for i := 0; r.state.Load()&refUsers != 0; i++ {
		if i < 64 {
			runtime.Gosched()
		} else {
			time.Sleep(20 * time.Microsecond)
		}
	}
}

// close closes the guard and frees the handle with free: now when no call uses it, else when
// the last of them returns. It never waits. Idempotent.
func (r *ref[T]) close(free func(*T)) {
	if !r.claim(0) {
		return
	}
	r.free = free
	if s := r.state.Add(refClosed); s&refUsers == 0 {
		r.finish(s)
	}
}

// object is a Go type that wraps a library handle of type T (Tensor, Dataset, ...).
type object[T any] interface {
	// handle returns the guard of the handle; nil for a nil receiver.
	handle() *ref[T]
	// kind names the type in errors ("Iterator").
	kind() string
}

// use runs f with the handle of o held open: the one place that does the nil check, the
// acquire/release pairing and the closed check. A nil or closed o gives an error wrapping
// ErrClosed without calling f; o stays reachable until f returns, so its finalizer cannot
// run in the middle of a call.
func use[T any, O object[T]](o O, f func(p *T) error) error {
	r := o.handle()
	if r == nil {
		return closedError(o.kind())
	}
	p := r.acquire()
	defer r.release()
	if p == nil {
		return closedError(o.kind())
	}
	err := f(p)
	runtime.KeepAlive(o)
	return err
}

// callOn is use for the common case of one fallible C call on the handle (see call).
func callOn[T any, O object[T]](o O, f func(p *T) C.dinput_status_t) error {
	return use(o, func(p *T) error { return call(func() C.dinput_status_t { return f(p) }) })
}

func (c *Cluster) handle() *ref[C.dinput_cluster_t] {
	if c == nil {
		return nil
	}
	return &c.ref
}
func (*Cluster) kind() string { return "Cluster" }

func (d *Dataset) handle() *ref[C.dinput_dataset_t] {
	if d == nil {
		return nil
	}
	return &d.ref
}
func (*Dataset) kind() string { return "Dataset" }

func (c *InputContext) handle() *ref[C.dinput_input_context_t] {
	if c == nil {
		return nil
	}
	return &c.ref
}
func (*InputContext) kind() string { return "InputContext" }

func (d *DistributedDataset) handle() *ref[C.dinput_dist_dataset_t] {
	if d == nil {
		return nil
	}
	return &d.ref
}
func (*DistributedDataset) kind() string { return "DistributedDataset" }

func (it *DistributedIterator) handle() *ref[C.dinput_dist_iterator_t] {
	if it == nil {
		return nil
	}
	return &it.ref
}
func (*DistributedIterator) kind() string { return "DistributedIterator" }

func (v *PerReplica) handle() *ref[C.dinput_per_replica_t] {
	if v == nil {
		return nil
	}
	return &v.ref
}
func (*PerReplica) kind() string { return "PerReplica" }

func (e *Element) handle() *ref[C.dinput_element_t] {
	if e == nil {
		return nil
	}
	return &e.ref
}
func (*Element) kind() string { return "Element" }

func (it *Iterator) handle() *ref[C.dinput_iterator_t] {
	if it == nil {
		return nil
	}
	return &it.ref
}
func (*Iterator) kind() string { return "Iterator" }

func (o *Optional) handle() *ref[C.dinput_optional_t] {
	if o == nil {
		return nil
	}
	return &o.ref
}
func (*Optional) kind() string { return "Optional" }

func (c *Collective) handle() *ref[C.dinput_collective_t] {
	if c == nil {
		return nil
	}
	return &c.ref
}
func (*Collective) kind() string { return "Collective" }

func (s *Strategy) handle() *ref[C.dinput_strategy_t] {
	if s == nil {
		return nil
	}
	return &s.ref
}
func (*Strategy) kind() string { return "Strategy" }

func (t *Tensor) handle() *ref[C.dinput_tensor_t] {
	if t == nil {
		return nil
	}
	return &t.ref
}
func (*Tensor) kind() string { return "Tensor" }
