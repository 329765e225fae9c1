//go:build go1.23

package dinput

import "iter"

// All returns the iterator's remaining elements for a range loop:
//
//	for e, err := range it.All() {
//		if err != nil { ... }
//		...
//	}
//
// Each element belongs to the iterator and is closed at the next step (as Value); an error
// comes once, as the last pair. Only with Go 1.23 and newer; Next/Value/Err otherwise.
func (it *Iterator) All() iter.Seq2[*Element, error] { return it.all() }

// All returns the distributed iterator's remaining steps for a range loop, as Iterator.All.
func (it *DistributedIterator) All() iter.Seq2[*PerReplica, error] { return it.all() }
