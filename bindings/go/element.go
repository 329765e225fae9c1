package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"strings"
	"sync"
)

// Element is one dataset element: an ordered tuple of tensors (its components).
type Element struct {
	ref ref[C.dinput_element_t]
	n   int
	// borrowed marks an element lent by the library for the length of a callback: it is
	// never freed by Go, and the trampoline clears it when the callback returns.
	borrowed bool
	// owner: for an element of an Iterator's Next, that iterator, which closes it (it has no
	// finalizer) and frees its handle with the next element's (Iterator.retire).
	owner *Iterator
}

// wrapElement takes ownership of an owned handle.
func wrapElement(p *C.dinput_element_t) *Element {
	e := &Element{n: int(C.dinput_element_size(p))}
	e.ref.p = p
	runtime.SetFinalizer(e, (*Element).Close)
	return e
}

// borrowElement wraps a handle the library lends to a callback; see Element.borrowed.
func borrowElement(p *C.dinput_element_t) *Element {
	return lendElement(p, int(C.dinput_element_size(p)))
}

// lendElement is borrowElement for a handle whose component count n is known.
//
// A map function gets a new lent Element for every element, so these are cut from slabs of
// elementSlabLen, one allocation per slab instead of one per element. A slab is held by one
// callback at a time (taken from and put back into a sync.Pool, which needs no atomic
// operation on the way), so cutting from it needs none either. Slots are never reused: an
// Element a callback kept reads as closed for ever, as one of its own allocation would; it
// keeps its slab from being collected, which costs a few KiB at most per element kept.
func lendElement(p *C.dinput_element_t, n int) *Element {
	s := lentSlabs.Get().(*elementSlab)
	e := &s.elements[s.next]
	e.n, e.borrowed, e.ref.p = n, true, p
	if s.next++; s.next < elementSlabLen {
		lentSlabs.Put(s)
	}
	return e
}

const elementSlabLen = 64

type elementSlab struct {
	next     int
	elements [elementSlabLen]Element
}

// lentSlabs holds slabs with slots left.
var lentSlabs = sync.Pool{New: func() any { return new(elementSlab) }}

// NewElement returns an element of the given tensors (the element keeps its own references:
// the tensors may be closed afterwards).
func NewElement(tensors ...*Tensor) (*Element, error) {
	ptrs := make([]*C.dinput_tensor_t, len(tensors))
	for i, t := range tensors {
		if t == nil {
			return nil, invalidArgument("NewElement: tensor %d is nil", i)
		}
		p := t.ref.acquire()
		defer t.ref.release()
		if p == nil {
			return nil, invalidArgument("NewElement: tensor %d is closed", i)
		}
		ptrs[i] = p
	}
	var parts **C.dinput_tensor_t
	if len(ptrs) > 0 {
		parts = &ptrs[0]
	}
	var out *C.dinput_element_t
	err := call(func() C.dinput_status_t { return C.dinput_element_new(&out, parts, C.size_t(len(ptrs))) })
	runtime.KeepAlive(tensors)
	if err != nil {
		return nil, err
	}
	return wrapElement(out), nil
}

// indexOf returns the index of x in s, or -1.
func indexOf[T comparable](s []T, x T) int {
	for i, v := range s {
		if v == x {
			return i
		}
	}
	return -1
}

// Close releases the element. It is idempotent; tensors taken from it stay valid.
func (e *Element) Close() error {
	if e == nil {
		return nil
	}
	if e.owner != nil {
		e.ref.close(e.owner.retire)
		return nil
	}
	if e.borrowed {
		// The library owns a lent element, and it has no finalizer (it may be cut from a
		// slab: see lendElement).
		e.ref.close(func(*C.dinput_element_t) {})
		return nil
	}
	e.ref.close(func(p *C.dinput_element_t) { C.dinput_element_free(p) })
	runtime.SetFinalizer(e, nil)
	return nil
}

// Len returns the number of components (0 for a nil Element).
func (e *Element) Len() int {
	if e == nil {
		return 0
	}
	return e.n
}

// Tensor returns component i as a new Tensor handle, valid independently of the element.
func (e *Element) Tensor(i int) (*Tensor, error) {
	if e != nil && i < 0 {
		return nil, invalidArgument("component %d is out of range for an element of %d component(s)", i, e.n)
	}
	var out *C.dinput_tensor_t
	var info C.dinput_tensor_info_t
	if err := callOn(e, func(p *C.dinput_element_t) C.dinput_status_t {
		return C.dgo_element_tensor(&out, &info, p, C.size_t(i))
	}); err != nil {
		return nil, err
	}
	return wrapTensor(out, info), nil
}

// Tensors returns every component as new Tensor handles, in one call into C.
func (e *Element) Tensors() ([]*Tensor, error) {
	if e == nil || e.closed() {
		return nil, closedError("Element")
	}
	return tensorsVia(e.n, func(out **C.dinput_tensor_t, infos *C.dinput_tensor_info_t, capacity C.size_t, count *C.size_t) error {
		return callOn(e, func(p *C.dinput_element_t) C.dinput_status_t {
			return C.dgo_element_tensors(out, infos, capacity, count, p)
		})
	})
}

// tensorsVia wraps the new handles one dgo_*_tensors call takes (fill), starting with room
// for guess tensors and asking once more when there are more.
func tensorsVia(guess int, fill func(out **C.dinput_tensor_t, infos *C.dinput_tensor_info_t, capacity C.size_t, count *C.size_t) error) ([]*Tensor, error) {
	for {
		if guess < 1 {
			guess = 1
		}
		outs := make([]*C.dinput_tensor_t, guess)
		infos := make([]C.dinput_tensor_info_t, guess)
		var count C.size_t
		if err := fill(&outs[0], &infos[0], C.size_t(guess), &count); err != nil {
			return nil, err
		}
		if int(count) > guess {
			guess = int(count)
			continue
		}
		ts := make([]*Tensor, int(count))
		for i := range ts {
			ts[i] = wrapTensor(outs[i], infos[i])
		}
		return ts, nil
	}
}

func (e *Element) closed() bool {
	closed := e.ref.acquire() == nil
	e.ref.release()
	return closed
}

// String describes the element's components, e.g. "(int64[2], float32[2,3])".
func (e *Element) String() string {
	ts, err := e.Tensors()
	if err != nil {
		return "<closed element>"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
		t.Close()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Clone returns a new Element sharing this one's tensors (nothing is copied), owned by the
// caller: for keeping an element lent to a callback, or handing one to MapMany twice.
func (e *Element) Clone() (*Element, error) {
	p, err := e.cloneHandle()
	if err != nil {
		return nil, err
	}
	return wrapElement(p), nil
}

// cloneHandle returns a new owned C handle to the same element (dinput_element_ref), for
// handing an element to the library (which takes ownership of callback results) while the Go
// Element stays usable. It is cheap: nothing is copied.
func (e *Element) cloneHandle() (*C.dinput_element_t, error) {
	var out *C.dinput_element_t
	err := callOn(e, func(p *C.dinput_element_t) C.dinput_status_t { return C.dinput_element_ref(&out, p) })
	return out, err
}
