package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync"
)

// ref guards one library handle. Calls register as users for as long as C uses the pointer
// (acquire/release); closing clears the pointer at once, so later calls see nil and report
// ErrClosed, and the handle is freed when the last user is done. A Close racing with a call
// (from another goroutine, or the finalizer) therefore never frees the handle under the call
// and never waits for it either: a GetNext blocked for data cannot hold up Close.
type ref[T any] struct {
	mu sync.Mutex
	// idle is signalled when users drops to 0; made by the first take that has to wait for
	// that, which is rare, so that the guard of every handle stays small.
	idle  *sync.Cond
	p     *T
	users int
	// dead and free are the handle a close left to the last user, and how to free it.
	dead *T
	free func(*T)
}

// acquire registers a user and returns the handle (nil when closed). Every acquire must be
// paired with a release, whatever it returned.
func (r *ref[T]) acquire() *T {
	r.mu.Lock()
	r.users++
	p := r.p
	r.mu.Unlock()
	return p
}

// release ends a use; the last user frees a handle closed in the meantime.
func (r *ref[T]) release() {
	r.mu.Lock()
	r.users--
	var dead *T
	var free func(*T)
	if r.users == 0 {
		dead, free = r.dead, r.free
		r.dead, r.free = nil, nil
		if r.idle != nil {
			r.idle.Broadcast()
		}
	}
	r.mu.Unlock()
	if dead != nil {
		free(dead)
	}
}

// take clears the handle, waits until no call uses it any more and returns what it held, nil
// when it was already cleared. It is for handles whose owner must have them back before it
// returns (an argument the library lends to a callback, a result handed over to C); the
// caller frees it or just drops it.
func (r *ref[T]) take() *T {
	r.mu.Lock()
	p := r.p
	r.p = nil
	if r.users > 0 && r.idle == nil {
		r.idle = sync.NewCond(&r.mu)
	}
	for r.users > 0 {
		r.idle.Wait()
	}
	r.mu.Unlock()
	return p
}

// close clears the handle and frees it with free: now when no call uses it, else when the
// last of them returns. It never waits. Idempotent.
func (r *ref[T]) close(free func(*T)) {
	r.mu.Lock()
	p := r.p
	r.p = nil
	if p != nil && r.users > 0 {
		r.dead, r.free = p, free
		p = nil
	}
	r.mu.Unlock()
	if p != nil {
		free(p)
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
