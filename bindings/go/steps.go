package dinput

/*
#include "shim.h"
*/
import "C"

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
