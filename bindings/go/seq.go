package dinput

// seqOf is the body of the iterators' All (seq_go123.go, built by Go 1.23 and newer, whose
// range-over-func loops take it): a func(yield) of the iter.Seq2 shape, kept here so that it
// is compiled and tested with every toolchain. It drives the scanner-style Next, so each
// value belongs to the iterator and is closed at the next step, as Value is; the loop ends
// at the end of the data, or after one last (zero, err) for an error.
func seqOf[V any](next func() bool, value func() V, failure func() error) func(yield func(V, error) bool) {
	return func(yield func(V, error) bool) {
		for next() {
			if !yield(value(), nil) {
				return
			}
		}
		if err := failure(); err != nil {
			var none V
			yield(none, err)
		}
	}
}

func (it *Iterator) all() func(yield func(*Element, error) bool) {
	return seqOf(it.Next, it.Value, it.Err)
}

func (it *DistributedIterator) all() func(yield func(*PerReplica, error) bool) {
	return seqOf(it.Next, it.Value, it.Err)
}
