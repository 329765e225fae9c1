package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"runtime"
	"sync"
)

// Iterator iterates a Dataset. It serves one goroutine at a time; the library may produce
// ahead on background threads. See the package documentation for its two styles.
type Iterator struct {
	ref     ref[C.dinput_iterator_t]
	scan    scanState[*Element]
	retired retired[C.dinput_element_t] // the element of Next's before, for the next Next to free
}

// retired holds the handle of a value that an iterator's Next closed, for the next Next to
// free within its own cgo call (or Close to free). closed: Close has run, so a value closed
// later (its last user was another goroutine) is freed at once.
type retired[T any] struct {
	mu     sync.Mutex
	p      *T
	closed bool
}

// put leaves p for the next Next where the slot is empty and the iterator open, else frees it
// now with free.
func (r *retired[T]) put(p *T, free func(*T)) {
	r.mu.Lock()
	if !r.closed && r.p == nil {
		r.p, p = p, nil
	}
	r.mu.Unlock()
	if p != nil {
		free(p)
	}
}

// take empties the slot and returns what it held (nil if nothing); with closing, the slot
// stays shut for good.
func (r *retired[T]) take(closing bool) *T {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.p
	r.p = nil
	r.closed = r.closed || closing
	return p
}

// scanState is the scanner-style state shared by Iterator and DistributedIterator: the
// current value (owned by the iterator) and the error that ended the loop. The mutex is
// held only around the fields, never during get, so that a Close from another goroutine
// (which drops the value) does not wait for a Next blocked for data.
type scanState[V interface{ Close() error }] struct {
	mu     sync.Mutex
	cur    V
	err    error
	closed bool
}

// dropLocked closes the current value; V's Close accepts a nil receiver.
func (s *scanState[V]) dropLocked() {
	s.cur.Close()
	var none V
	s.cur = none
}

// close drops the current value for good: a Next in flight closes what it gets.
func (s *scanState[V]) close() {
	s.mu.Lock()
	s.closed = true
	s.dropLocked()
	s.mu.Unlock()
}

// next closes the current value and takes the next one from get; false at the end or on
// an error, which stops every later call too.
func (s *scanState[V]) next(get func() (V, error)) bool {
	s.mu.Lock()
	s.dropLocked()
	stopped := s.err != nil
	s.mu.Unlock()
	if stopped {
		return false
	}
	v, err := get()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.closed {
		v.Close()
		err = closedError("iterator")
	}
	if err != nil {
		s.err = err
		return false
	}
	s.cur = v
	return true
}

// value is the current value.
func (s *scanState[V]) value() V {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// failure is the error that stopped the loop, or nil when it stopped at the end of the data.
func (s *scanState[V]) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(s.err, ErrOutOfRange) {
		return nil
	}
	return s.err
}

// withContext runs get (a blocking GetNext) so that it returns promptly once ctx is done:
// a goroutine watching ctx cancels the iterator through the library (cancel), which makes
// get return ErrCancelled, reported as ctx.Err(). A context that can never be done costs
// nothing; a context already done returns its error without touching the iterator.
func withContext[V any](ctx context.Context, cancel func() error, get func() (V, error)) (V, error) {
	var none V
	if err := ctx.Err(); err != nil {
		return none, err
	}
	done := ctx.Done()
	if done == nil {
		return get()
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-done:
			cancel()
		case <-stop:
		}
	}()
	v, err := get()
	close(stop)
	if err != nil && errors.Is(err, ErrCancelled) && ctx.Err() != nil {
		return none, ctx.Err()
	}
	return v, err
}

func wrapIterator(p *C.dinput_iterator_t) *Iterator {
	it := &Iterator{}
	it.ref.p = p
	runtime.SetFinalizer(it, (*Iterator).Close)
	return it
}

// Close stops the iterator's background threads and releases it (and the current Value).
// It is idempotent. A GetNext blocked in another goroutine is cancelled first (it returns
// an error matching ErrCancelled), so Close does not wait for data; work stuck in a slow
// MapFunc or generator finishes in the background.
func (it *Iterator) Close() error {
	if it == nil {
		return nil
	}
	it.Cancel()
	it.ref.close(func(p *C.dinput_iterator_t) { C.dinput_iterator_free(p) })
	it.scan.close()
	C.dinput_element_free(it.retired.take(true))
	runtime.SetFinalizer(it, nil)
	return nil
}

// retire is the free function of Next's elements (see retired).
func (it *Iterator) retire(p *C.dinput_element_t) { it.retired.put(p, freeElement) }

func freeElement(p *C.dinput_element_t) { C.dinput_element_free(p) }

// Cancel may be called from any goroutine, also while another one is blocked in GetNext,
// GetNextAsOptional or Next: that call returns promptly with an error matching
// ErrCancelled, and so does every later one. Idempotent; a closed iterator is left as it is.
func (it *Iterator) Cancel() error {
	if it == nil {
		return closedError("Iterator")
	}
	// Cancel is the one call that may overlap GetNext; on a closed iterator it does nothing.
	err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t { return C.dinput_iterator_cancel(p) })
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// GetNext returns the next element, owned by the caller. At the end of the data (and on
// every later call) the error matches ErrOutOfRange; after any other error the iterator is
// finished and repeats that error.
func (it *Iterator) GetNext() (*Element, error) {
	var out *C.dinput_element_t
	if err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t { return C.dinput_iterator_get_next(&out, p) }); err != nil {
		return nil, err
	}
	return wrapElement(out), nil
}

// GetNextAsOptional returns the next element as an Optional, empty at the end of the data.
func (it *Iterator) GetNextAsOptional() (*Optional, error) {
	var out *C.dinput_optional_t
	if err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t {
		return C.dinput_iterator_get_next_as_optional(&out, p)
	}); err != nil {
		return nil, err
	}
	return wrapOptional(out), nil
}

// ElementSpec returns the spec of the elements.
func (it *Iterator) ElementSpec() (Spec, error) {
	var out *C.dinput_spec_t
	if err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t { return C.dinput_iterator_element_spec(&out, p) }); err != nil {
		return nil, err
	}
	return specFromC(out), nil
}

// GetNextContext is GetNext that gives up when ctx is done first: it then returns
// ctx.Err() promptly, also while the pipeline waits for data from library threads (a
// parallel Map, Prefetch, other workers). Giving up cancels the iterator as Cancel does,
// so every later call fails with ErrCancelled: an epoch abandoned this way cannot be
// resumed. A Go function that the pipeline runs on the calling thread itself (a sequential
// Map, a generator without Prefetch) cannot be interrupted: the call returns when it does.
func (it *Iterator) GetNextContext(ctx context.Context) (*Element, error) {
	return withContext(ctx, it.Cancel, it.GetNext)
}

// Next advances to the next element, closing the previous Value. It returns false at the
// end of the data or on an error; Err tells them apart.
func (it *Iterator) Next() bool {
	if it == nil {
		return false
	}
	return it.scan.next(it.getNextOwned)
}

// getNextOwned is GetNext for Next: the element belongs to the iterator, which closes it at
// the next Next or at Close, so it needs no finalizer; and one cgo call frees the element
// before, takes the next one and reads its size, where GetNext and Close take three.
func (it *Iterator) getNextOwned() (*Element, error) {
	var out *C.dinput_element_t
	var size C.size_t
	previous := it.retired.take(false)
	err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t {
		freeing := previous
		previous = nil
		return C.dgo_iterator_next_element(&out, &size, freeing, p)
	})
	C.dinput_element_free(previous) // the call did not run (the iterator is closed): NULL otherwise
	if err != nil {
		return nil, err
	}
	e := &Element{n: int(size), owner: it}
	e.ref.p = out
	return e, nil
}

// NextContext is Next with GetNextContext's handling of ctx: when ctx is done first it
// returns false and Err returns ctx.Err().
func (it *Iterator) NextContext(ctx context.Context) bool {
	if it == nil {
		return false
	}
	return it.scan.next(func() (*Element, error) { return it.GetNextContext(ctx) })
}

// Value returns the current element. It belongs to the iterator and is closed by the next
// call to Next (tensors taken from it stay valid); nil before the first Next and after the
// last.
func (it *Iterator) Value() *Element {
	if it == nil {
		return nil
	}
	return it.scan.value()
}

// Err returns the error that stopped Next, or nil when it stopped at the end of the data.
func (it *Iterator) Err() error {
	if it == nil {
		return nil
	}
	return it.scan.failure()
}

// Optional holds an element (from Iterator.GetNextAsOptional), a per-replica value (from
// DistributedIterator.GetNextAsOptional), or nothing.
type Optional struct {
	ref      ref[C.dinput_optional_t]
	hasValue bool
}

func wrapOptional(p *C.dinput_optional_t) *Optional {
	o := &Optional{hasValue: C.dinput_optional_has_value(p) != 0}
	o.ref.p = p
	runtime.SetFinalizer(o, (*Optional).Close)
	return o
}

// Close releases the optional; values taken from it stay valid. It is idempotent.
func (o *Optional) Close() error {
	if o == nil {
		return nil
	}
	o.ref.close(func(p *C.dinput_optional_t) { C.dinput_optional_free(p) })
	runtime.SetFinalizer(o, nil)
	return nil
}

// HasValue reports whether the optional holds a value (false for a nil Optional).
func (o *Optional) HasValue() bool { return o != nil && o.hasValue }

// Element returns the element held by the optional, as a new handle the caller owns.
// InvalidArgument when the optional is empty or holds a per-replica value.
func (o *Optional) Element() (*Element, error) {
	var out *C.dinput_element_t
	if err := callOn(o, func(p *C.dinput_optional_t) C.dinput_status_t { return C.dinput_optional_get_value(&out, p) }); err != nil {
		return nil, err
	}
	return wrapElement(out), nil
}

// PerReplica returns the per-replica value held by the optional, as a new handle the caller
// owns. InvalidArgument when the optional is empty or holds a plain element.
func (o *Optional) PerReplica() (*PerReplica, error) {
	var out *C.dinput_per_replica_t
	if err := callOn(o, func(p *C.dinput_optional_t) C.dinput_status_t { return C.dinput_optional_get_per_replica(&out, p) }); err != nil {
		return nil, err
	}
	return wrapPerReplica(out), nil
}
