package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

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

// SaveState returns where the whole job's distributed iterators are, as a few bytes (see
// docs/checkpoint.md, "Distributed iterators"). Every worker calls it at the same step,
// between GetNext calls; the workers' parts are gathered through the collective, so every
// worker receives the same bytes and one copy is enough to keep. Steps produced ahead but
// not yet returned are produced again after a restore. Workers saving at different steps
// get an error matching ErrFailedPrecondition.
func (it *DistributedIterator) SaveState() ([]byte, error) {
	var st *C.dinput_state_t
	if err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t { return C.dinput_dist_iterator_save(&st, p) }); err != nil {
		return nil, err
	}
	defer C.dinput_state_free(st)
	return C.GoBytes(C.dinput_state_data(st), C.int(C.dinput_state_size(st))), nil
}

// MarshalBinary is SaveState, so that a DistributedIterator is an encoding.BinaryMarshaler.
func (it *DistributedIterator) MarshalBinary() ([]byte, error) { return it.SaveState() }

// IteratorFromState returns a distributed iterator that continues where the saved job's
// stopped. Every worker calls it with the same state at the same point; they check through
// the collective that they restored the same step. A state restores on the same number of
// workers and replicas, or under DATA, FILE or OFF sharding on any other number with the same
// global batch. Another pipeline matches ErrFailedPrecondition naming the operation that differs;
// a damaged state matches ErrDataLoss.
func (d *DistributedDataset) IteratorFromState(state []byte) (*DistributedIterator, error) {
	var out *C.dinput_dist_iterator_t
	var data unsafe.Pointer
	if len(state) > 0 {
		data = unsafe.Pointer(&state[0])
	}
	if err := callOn(d, func(p *C.dinput_dist_dataset_t) C.dinput_status_t {
		return C.dinput_dist_dataset_iterator_from_state(&out, p, data, C.size_t(len(state)))
	}); err != nil {
		return nil, err
	}
	runtime.KeepAlive(d)
	it := &DistributedIterator{}
	it.ref.p = out
	runtime.SetFinalizer(it, (*DistributedIterator).Close)
	return it, nil
}

// DescribeState returns what a saved state (of an Iterator or a DistributedIterator) holds,
// as JSON: its kind, the pipeline's operations, the random seeds, and for a distributed
// iterator the job's shape, step and each worker's pipelines. A damaged state matches
// ErrDataLoss.
func DescribeState(state []byte) (string, error) {
	var st *C.dinput_state_t
	var data unsafe.Pointer
	if len(state) > 0 {
		data = unsafe.Pointer(&state[0])
	}
	if err := call(func() C.dinput_status_t { return C.dinput_state_describe(&st, data, C.size_t(len(state))) }); err != nil {
		return "", err
	}
	defer C.dinput_state_free(st)
	return C.GoStringN((*C.char)(C.dinput_state_data(st)), C.int(C.dinput_state_size(st))), nil
}
