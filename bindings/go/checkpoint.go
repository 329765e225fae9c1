package dinput

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// SaveState returns where the iterator is, as a few bytes that hold positions and seeds,
// never elements (see docs/checkpoint.md). Call it between GetNext calls; elements read
// ahead but not yet returned are read again by the iterator IteratorFromState makes. An
// error matching ErrUnimplemented names an operation that cannot save its state yet.
func (it *Iterator) SaveState() ([]byte, error) {
	var st *C.dinput_state_t
	if err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t { return C.dinput_iterator_save(&st, p) }); err != nil {
		return nil, err
	}
	defer C.dinput_state_free(st)
	return C.GoBytes(C.dinput_state_data(st), C.int(C.dinput_state_size(st))), nil
}

// MarshalBinary is SaveState, so that an Iterator is an encoding.BinaryMarshaler.
func (it *Iterator) MarshalBinary() ([]byte, error) { return it.SaveState() }

// IteratorFromState returns an iterator that continues where the iterator whose state this
// is stopped. The dataset must be built the same way as the saved iterator's: otherwise an
// error matching ErrFailedPrecondition names the first operation that differs. A damaged
// or truncated state matches ErrDataLoss.
func (d *Dataset) IteratorFromState(state []byte) (*Iterator, error) {
	var out *C.dinput_iterator_t
	var data unsafe.Pointer
	if len(state) > 0 {
		data = unsafe.Pointer(&state[0])
	}
	if err := callOn(d, func(p *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_iterator_from_state(&out, p, data, C.size_t(len(state)))
	}); err != nil {
		return nil, err
	}
	return wrapIterator(out), nil
}
