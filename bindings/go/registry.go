package dinput

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// registry hands Go values (callbacks, generator iterations) to C as integers, the user_data
// of the library's callbacks, and finds them again when C calls back. It does what
// runtime/cgo.Handle does, but a lookup is two plain loads instead of a sync.Map lookup with
// an interface hash: a map function looks its handle up once per element, so the lookup is
// on the hot path of every callback.
//
// Handles are indexes into chunks of slots that are never moved or freed, so a lookup needs
// no lock; creating and deleting handles take a mutex. A deleted slot is reused, so a handle
// is only valid until it is deleted, exactly as with cgo.Handle.
type registry struct {
	mu     sync.Mutex
	free   []uintptr // deleted slots, reused first
	next   uintptr   // the lowest slot never used; slot 0 is never used (0 is no handle)
	chunks [registryChunks]atomic.Pointer[registryChunk]
}

const (
	registryChunkBits = 10
	registryChunkLen  = 1 << registryChunkBits
	// 4,096 chunks of 1,024 slots: over 4 million live callbacks, far beyond any pipeline.
	registryChunks = 1 << 12
)

type registryChunk [registryChunkLen]atomic.Pointer[registryEntry]

type registryEntry struct{ v any }

// handles is the registry of every callback of this package.
var handles registry

// add stores v and returns its handle, never 0.
func (r *registry) add(v any) uintptr {
	r.mu.Lock()
	defer r.mu.Unlock()
	var h uintptr
	if n := len(r.free); n > 0 {
		h, r.free = r.free[n-1], r.free[:n-1]
	} else {
		if r.next == 0 {
			r.next = 1
		}
		h = r.next
		if h>>registryChunkBits >= registryChunks {
			panic(fmt.Sprintf("dinput: more than %d Go callbacks alive at once", registryChunks*registryChunkLen-1))
		}
		r.next++
	}
	c := r.chunks[h>>registryChunkBits].Load()
	if c == nil {
		c = new(registryChunk)
		r.chunks[h>>registryChunkBits].Store(c)
	}
	c[h&(registryChunkLen-1)].Store(&registryEntry{v})
	return h
}

// value returns the value of a live handle. A handle that was never made, or was deleted,
// panics (the callback trampolines turn a panic into an INTERNAL status).
func (r *registry) value(h uintptr) any {
	if h>>registryChunkBits < registryChunks {
		if c := r.chunks[h>>registryChunkBits].Load(); c != nil {
			if e := c[h&(registryChunkLen-1)].Load(); e != nil {
				return e.v
			}
		}
	}
	panic(fmt.Sprintf("dinput: invalid callback handle %d", h))
}

// delete lets go of a handle's value, so that it can be collected; the handle may be reused.
// Deleting an invalid handle panics, as value does.
func (r *registry) delete(h uintptr) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h>>registryChunkBits < registryChunks {
		if c := r.chunks[h>>registryChunkBits].Load(); c != nil {
			if c[h&(registryChunkLen-1)].Swap(nil) != nil {
				r.free = append(r.free, h)
				return
			}
		}
	}
	panic(fmt.Sprintf("dinput: deleting an invalid callback handle %d", h))
}
