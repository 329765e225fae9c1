package dinput

/*
#include "shim.h"
*/
import "C"

// takeString copies a string the library returned and frees it (dinput_string_free).
func takeString(s *C.char) string {
	if s == nil {
		return ""
	}
	defer C.dinput_string_free(s)
	return C.GoString(s)
}

// setStatisticsOptions applies Options.DisableStatistics and Options.TraceEvents.
func setStatisticsOptions(opts *C.dinput_options_t, o Options) error {
	if o.DisableStatistics {
		if err := call(func() C.dinput_status_t { return C.dinput_options_set_statistics(opts, 0) }); err != nil {
			return err
		}
	}
	if o.TraceEvents != 0 {
		if err := call(func() C.dinput_status_t {
			return C.dinput_options_set_trace(opts, C.int64_t(o.TraceEvents))
		}); err != nil {
			return err
		}
	}
	return nil
}

// Statistics returns the iterator's per-stage statistics so far as a JSON document (schema
// "dinput.statistics/1", docs/statistics.md). Safe while another goroutine calls Next.
func (it *Iterator) Statistics() (string, error) {
	var out *C.char
	err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t { return C.dinput_iterator_statistics(&out, p) })
	return takeString(out), err
}

// Trace returns the iterator's trace in the Trace Event JSON format (Perfetto,
// chrome://tracing); empty of slices unless Options.TraceEvents was set.
func (it *Iterator) Trace() (string, error) {
	var out *C.char
	err := callOn(it, func(p *C.dinput_iterator_t) C.dinput_status_t { return C.dinput_iterator_trace(&out, p) })
	return takeString(out), err
}

// Statistics returns this worker's statistics (schema "dinput.dist_statistics/1"), or with
// allWorkers those of every worker gathered through the collective (schema
// "dinput.job_statistics/1"): then every worker calls it at the same point.
func (it *DistributedIterator) Statistics(allWorkers bool) (string, error) {
	var out *C.char
	err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t {
		return C.dinput_dist_iterator_statistics(&out, p, cBool(allWorkers))
	})
	return takeString(out), err
}

// Trace returns this worker's trace in the Trace Event JSON format.
func (it *DistributedIterator) Trace() (string, error) {
	var out *C.char
	err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t { return C.dinput_dist_iterator_trace(&out, p) })
	return takeString(out), err
}
