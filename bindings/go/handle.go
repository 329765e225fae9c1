package dinput

import "sync"

// ref guards one library handle. Calls hold the read lock for as long as C uses the pointer,
// and Close takes the write lock to clear it, so a Close racing with a call (from another
// goroutine, or the finalizer) can never free the handle under the call: the call either
// finishes first or sees nil and reports ErrClosed.
type ref[T any] struct {
	mu sync.RWMutex
	p  *T
}

// acquire read-locks the handle and returns it (nil when closed). Every acquire must be
// paired with a release, whatever it returned.
func (r *ref[T]) acquire() *T {
	r.mu.RLock()
	return r.p
}

func (r *ref[T]) release() { r.mu.RUnlock() }

// take clears the handle and returns what it held, nil when it was already cleared; the
// caller frees it (or, for a borrowed handle, just drops it).
func (r *ref[T]) take() *T {
	r.mu.Lock()
	p := r.p
	r.p = nil
	r.mu.Unlock()
	return p
}
