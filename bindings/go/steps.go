package dinput

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// GetNextSteps returns up to max steps in one call into the library
// (dinput_dist_iterator_get_next_steps), the same steps in the same order as that many
// GetNext calls, each owned by the caller. Fewer than max without an error means the data
// ended, or an error came, after the last of them: the next call returns that (an error
// matching ErrOutOfRange at the end); a step taken is never lost. Every step returned counts
// as taken for SaveState. Go's calls into C are cheap, so GetNext serves most uses; this is
// for loops that want one call per several small steps.
func (it *DistributedIterator) GetNextSteps(max int) ([]*PerReplica, error) {
	if max <= 0 {
		return nil, invalidArgument("GetNextSteps: max must be positive")
	}
	raw := make([]*C.dinput_per_replica_t, max)
	var n C.size_t
	if err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t {
		return C.dinput_dist_iterator_get_next_steps(&n, &raw[0], nil, C.size_t(max), 0, p)
	}); err != nil {
		return nil, err
	}
	steps := make([]*PerReplica, int(n))
	for i := range steps {
		steps[i] = wrapPerReplica(raw[i])
	}
	return steps, nil
}

// CopySteps copies up to max steps into buf (dinput_dist_iterator_copy_steps), for callers
// that want small steps as one block of memory: step s's tensor t (replica by replica,
// component by component) goes at byte (s*T + t)*P, T being the replicas times the
// components and P the bytes of one tensor of dtype and shape. It returns the number of steps
// copied and, when a step did not fit that layout (another shape, such as a short last
// batch, or dtype, or a GPU tensor), that step, owned by the caller, after them; the next
// call goes on after it. buf too small for max steps is an error before any step is taken.
// At the end of data it returns 0, nil and an error matching ErrOutOfRange. Every step
// copied or returned counts as taken for SaveState.
func (it *DistributedIterator) CopySteps(buf []byte, dtype DType, shape []int64, max int) (int, *PerReplica, error) {
	if max <= 0 {
		return 0, nil, invalidArgument("CopySteps: max must be positive")
	}
	var n C.size_t
	var unfit *C.dinput_per_replica_t
	var dst unsafe.Pointer
	if len(buf) > 0 {
		dst = unsafe.Pointer(&buf[0])
	}
	var dims *C.int64_t
	if len(shape) > 0 {
		dims = (*C.int64_t)(unsafe.Pointer(&shape[0]))
	}
	err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t {
		return C.dinput_dist_iterator_copy_steps(&n, &unfit, dst, C.size_t(len(buf)),
			C.dinput_dtype_t(dtype), dims, C.int(len(shape)), C.size_t(max), p)
	})
	if err != nil {
		return 0, nil, err
	}
	var step *PerReplica
	if unfit != nil {
		step = wrapPerReplica(unfit)
	}
	return int(n), step, nil
}
