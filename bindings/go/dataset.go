package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"strconv"
	"unsafe"
)

// Dataset is an immutable input pipeline: a node of a graph of sources and transforms.
// Building one does no work; an Iterator runs it. A derived dataset keeps its input alive
// inside the library, so the input may be closed as soon as the derived one exists.
type Dataset struct {
	ref ref[C.dinput_dataset_t]
}

func wrapDataset(p *C.dinput_dataset_t) *Dataset {
	d := &Dataset{}
	d.ref.p = p
	runtime.SetFinalizer(d, (*Dataset).Close)
	return d
}

// Close releases the dataset. It is idempotent.
func (d *Dataset) Close() error {
	if d == nil {
		return nil
	}
	d.ref.close(func(p *C.dinput_dataset_t) { C.dinput_dataset_free(p) })
	runtime.SetFinalizer(d, nil)
	return nil
}

// newDataset runs a source constructor.
func newDataset(f func(out **C.dinput_dataset_t) C.dinput_status_t) (*Dataset, error) {
	var out *C.dinput_dataset_t
	if err := call(func() C.dinput_status_t { return f(&out) }); err != nil {
		return nil, err
	}
	return wrapDataset(out), nil
}

// derive runs a transform with d as its input.
func (d *Dataset) derive(f func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t) (*Dataset, error) {
	var ds *Dataset
	err := use(d, func(p *C.dinput_dataset_t) (err error) {
		ds, err = newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t { return f(out, p) })
		return err
	})
	return ds, err
}

// Cardinality returns the number of elements, InfiniteCardinality or UnknownCardinality
// (also for a closed dataset).
func (d *Dataset) Cardinality() int64 {
	if d == nil {
		return UnknownCardinality
	}
	p := d.ref.acquire()
	defer d.ref.release()
	return int64(C.dinput_dataset_cardinality(p)) // NULL gives UNKNOWN
}

// Name returns the short name of the dataset's node ("range", "batch", ...); "" when closed.
func (d *Dataset) Name() string {
	if d == nil {
		return ""
	}
	p := d.ref.acquire()
	defer d.ref.release()
	return C.GoString(C.dinput_dataset_name(p))
}

// ElementSpec returns the spec of the dataset's elements.
func (d *Dataset) ElementSpec() (Spec, error) {
	var out *C.dinput_spec_t
	if err := callOn(d, func(p *C.dinput_dataset_t) C.dinput_status_t { return C.dinput_dataset_element_spec(&out, p) }); err != nil {
		return nil, err
	}
	return specFromC(out), nil
}

// ---- sources ----

// Range returns the int64 scalars start, start+step, ... up to (excluding) stop; step must
// not be 0.
func Range(start, stop, step int64) (*Dataset, error) {
	return newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_range(out, C.int64_t(start), C.int64_t(stop), C.int64_t(step))
	})
}

// FromTensors returns a dataset of one element: e itself.
func FromTensors(e *Element) (*Dataset, error) { return fromElement(e, false) }

// FromTensorSlices returns the slices of e along its first dimension; every component must
// have rank >= 1 and the same leading size.
func FromTensorSlices(e *Element) (*Dataset, error) { return fromElement(e, true) }

func fromElement(e *Element, slices bool) (*Dataset, error) {
	var ds *Dataset
	err := use(e, func(p *C.dinput_element_t) (err error) {
		ds, err = newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t {
			if slices {
				return C.dinput_dataset_from_tensor_slices(out, p)
			}
			return C.dinput_dataset_from_tensors(out, p)
		})
		return err
	})
	return ds, err
}

// TextLines returns one bytes scalar per line of each file, files read in order ("\n" and
// "\r\n" end a line). It is a file source for FILE auto-sharding.
func TextLines(files ...string) (*Dataset, error) {
	// The array of C strings lives in C memory: cgo does not allow passing Go memory that
	// holds pointers.
	n := len(files)
	arr := (**C.char)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
	defer C.free(unsafe.Pointer(arr))
	names := unsafe.Slice(arr, n+1)
	for i, f := range files {
		names[i] = C.CString(f)
	}
	defer func() {
		for _, s := range names[:n] {
			C.free(unsafe.Pointer(s))
		}
	}()
	return newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_text_lines(out, arr, C.size_t(n))
	})
}

// GeneratorFunc returns the next element of one iteration of a generator dataset. It
// returns io.EOF (or an error matching ErrOutOfRange) at the end of the data; any other
// error fails the iteration with its message. The element is copied by reference into the
// pipeline, so the function may return the same Element more than once.
type GeneratorFunc func() (*Element, error)

// FromGenerator returns a dataset whose elements a Go function produces. start is called
// once per new iterator and returns the GeneratorFunc of that iteration (typically a closure
// over its state); calls to it never overlap but may come from a library thread. Elements
// must match spec, else the iteration fails with InvalidArgument.
func FromGenerator(spec Spec, start func() (GeneratorFunc, error)) (*Dataset, error) {
	if start == nil {
		return nil, invalidArgument("FromGenerator: start is nil")
	}
	cspec, err := spec.toC()
	if err != nil {
		return nil, err
	}
	defer C.dinput_spec_free(cspec)
	// From here on the library owns the handle: it calls dgoFreeHandle when the last
	// dataset or iterator using the generator is gone, and also when the call fails.
	h := handles.add(start)
	return newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t {
		return C.dgo_dataset_from_generator(out, cspec, C.uintptr_t(h))
	})
}

// SavableGenerator is one iteration of a generator dataset whose position can be saved with
// the iterator's state (Iterator.SaveState): Next is its GeneratorFunc, SaveState returns
// bytes saying where it is, and RestoreState, called on a new iteration before its first
// Next, puts it where those bytes say.
type SavableGenerator interface {
	Next() (*Element, error)
	SaveState() ([]byte, error)
	RestoreState(state []byte) error
}

// FromSavableGenerator is FromGenerator for iterations that can save their position, so
// that the dataset's iterators can save their state (FromGenerator's fail with an error
// matching ErrUnimplemented).
func FromSavableGenerator(spec Spec, start func() (SavableGenerator, error)) (*Dataset, error) {
	if start == nil {
		return nil, invalidArgument("FromSavableGenerator: start is nil")
	}
	cspec, err := spec.toC()
	if err != nil {
		return nil, err
	}
	defer C.dinput_spec_free(cspec)
	h := handles.add(start)
	return newDataset(func(out **C.dinput_dataset_t) C.dinput_status_t {
		return C.dgo_dataset_from_savable_generator(out, cspec, C.uintptr_t(h))
	})
}

// ---- transforms ----

// Deterministic is tf.data's three-state deterministic of Map and Batch. Unlike most
// constants of this package its numbers are not dinput.h's: the zero value has to mean
// "unset" so that an options struct left empty follows the pipeline's setting.
type Deterministic int

const (
	// DeterministicUnset follows the pipeline's options (ordered unless they say otherwise).
	DeterministicUnset Deterministic = iota
	// DeterministicTrue keeps the input order.
	DeterministicTrue
	// DeterministicFalse lets elements come in the order they are ready.
	DeterministicFalse
)

// BatchOptions tune Batch; the zero value (or nil) keeps a short last batch and assembles
// batches on the consumer's thread.
type BatchOptions struct {
	// DropRemainder drops a last batch shorter than n.
	DropRemainder bool
	// NumParallelCalls is 0 or 1 to stack rows on the consumer's thread, more than 1 (or
	// Autotune) to stack several batches at once on library threads. The batches are the
	// same either way.
	NumParallelCalls int64
	// Deterministic is accepted as in tf.data; batches currently always keep their order.
	Deterministic Deterministic
}

// Batch stacks n consecutive elements along a new first dimension. The last batch may be
// shorter unless opts.DropRemainder. n must be >= 1.
func (d *Dataset) Batch(n int64, opts *BatchOptions) (*Dataset, error) {
	if opts == nil {
		opts = &BatchOptions{}
	}
	var copts *C.dinput_batch_options_t
	if err := call(func() C.dinput_status_t { return C.dinput_batch_options_new(&copts) }); err != nil {
		return nil, err
	}
	defer C.dinput_batch_options_free(copts)
	parallel := opts.NumParallelCalls
	if parallel == 0 {
		parallel = 1
	}
	if err := call(func() C.dinput_status_t {
		if st := C.dinput_batch_options_set_drop_remainder(copts, cBool(opts.DropRemainder)); st != C.DINPUT_OK {
			return st
		}
		if st := C.dinput_batch_options_set_num_parallel_calls(copts, C.int64_t(parallel)); st != C.DINPUT_OK {
			return st
		}
		return C.dinput_batch_options_set_deterministic(copts, opts.Deterministic.toC())
	}); err != nil {
		return nil, err
	}
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_batch(out, in, C.int64_t(n), copts)
	})
}

// toC gives dinput_deterministic_t's number; other values pass through for the library
// to refuse.
func (d Deterministic) toC() C.dinput_deterministic_t {
	switch d {
	case DeterministicUnset:
		return C.DINPUT_DETERMINISTIC_UNSET
	case DeterministicTrue:
		return C.DINPUT_DETERMINISTIC_TRUE
	case DeterministicFalse:
		return C.DINPUT_DETERMINISTIC_FALSE
	}
	return C.dinput_deterministic_t(d)
}

// Unbatch splits each element along its first dimension into rows.
func (d *Dataset) Unbatch() (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_unbatch(out, in)
	})
}

// Repeat repeats the dataset count times (RepeatForever: without end).
func (d *Dataset) Repeat(count int64) (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_repeat(out, in, C.int64_t(count))
	})
}

// Take keeps the first count elements (-1: all).
func (d *Dataset) Take(count int64) (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_take(out, in, C.int64_t(count))
	})
}

// Skip drops the first count elements (-1: all of them).
func (d *Dataset) Skip(count int64) (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_skip(out, in, C.int64_t(count))
	})
}

// Shard keeps elements i with i % numShards == index. Both may be ShardHint (together).
func (d *Dataset) Shard(numShards, index int64) (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_shard(out, in, C.int64_t(numShards), C.int64_t(index))
	})
}

// ShuffleOptions tune Shuffle; the zero value (or nil) draws a random seed per dataset and
// uses a new order for every iterator.
type ShuffleOptions struct {
	// Seeds is the seed pair (seed, seed2), as tf.data's global and operation seeds, both
	// >= 0: the same pair gives the same order everywhere. nil: a random seed.
	Seeds *[2]int64
	// SameOrderEachIteration turns off tf.data's reshuffle_each_iteration: every iterator
	// of the dataset then uses the same order.
	SameOrderEachIteration bool
}

// Seeds returns the seed pair (seed, seed2) for ShuffleOptions.
func Seeds(seed, seed2 int64) *[2]int64 { return &[2]int64{seed, seed2} }

// Shuffle shuffles with a buffer of bufferSize elements.
func (d *Dataset) Shuffle(bufferSize int64, opts *ShuffleOptions) (*Dataset, error) {
	if opts == nil {
		opts = &ShuffleOptions{}
	}
	var copts *C.dinput_shuffle_options_t
	if err := call(func() C.dinput_status_t { return C.dinput_shuffle_options_new(&copts) }); err != nil {
		return nil, err
	}
	defer C.dinput_shuffle_options_free(copts)
	if err := call(func() C.dinput_status_t {
		if opts.Seeds != nil {
			if st := C.dinput_shuffle_options_set_seed(copts, C.int64_t(opts.Seeds[0]), C.int64_t(opts.Seeds[1])); st != C.DINPUT_OK {
				return st
			}
		}
		return C.dinput_shuffle_options_set_reshuffle_each_iteration(copts, cBool(!opts.SameOrderEachIteration))
	}); err != nil {
		return nil, err
	}
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_shuffle(out, in, C.int64_t(bufferSize), copts)
	})
}

// Enumerate pairs each element with its int64 index (counting from start): the result has
// the index as its first component, followed by the element's components.
func (d *Dataset) Enumerate(start int64) (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_enumerate(out, in, C.int64_t(start))
	})
}

// Prefetch produces up to bufferSize elements ahead on a background thread (Autotune: the
// library chooses; 0: no prefetch).
func (d *Dataset) Prefetch(bufferSize int64) (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_prefetch(out, in, C.int64_t(bufferSize))
	})
}

// Rebatch regroups the rows of batched input into batches whose sizes cycle through sizes,
// like Unbatch().Batch(k) with k cycling. Sizes may be 0; at least one must be positive.
func (d *Dataset) Rebatch(sizes []int64, dropRemainder bool) (*Dataset, error) {
	ds, err := d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_rebatch(out, in, shapePtr(sizes), C.size_t(len(sizes)), cBool(dropRemainder))
	})
	runtime.KeepAlive(sizes)
	return ds, err
}

// AutoShardPolicy says how DistributeDataset shards a dataset across workers (the values
// of TensorFlow's tf.data.experimental.AutoShardPolicy).
type AutoShardPolicy int

// The auto-shard policies.
const (
	AutoShardOff  AutoShardPolicy = -1
	AutoShardAuto AutoShardPolicy = 0
	AutoShardFile AutoShardPolicy = 1
	AutoShardData AutoShardPolicy = 2
	AutoShardHint AutoShardPolicy = 3
)

func (p AutoShardPolicy) String() string {
	switch p {
	case AutoShardOff:
		return "OFF"
	case AutoShardAuto:
		return "AUTO"
	case AutoShardFile:
		return "FILE"
	case AutoShardData:
		return "DATA"
	case AutoShardHint:
		return "HINT"
	}
	return "AutoShardPolicy(" + strconv.Itoa(int(p)) + ")"
}

// Options are a dataset's options (tf.data.Options). The zero value is the default.
type Options struct {
	AutoShardPolicy AutoShardPolicy
	// SkipCorruptRecords skips damaged records (counted in the iterator statistics
	// "corrupt_records_skipped" and "corrupt_bytes_skipped") instead of failing with
	// DATA_LOSS. See dinput_options_set_skip_corrupt_records.
	SkipCorruptRecords bool
	// MaxRecordBytes is the largest record, or text line, the readers accept; 0 keeps the
	// default (256 MiB). A longer one fails before memory is taken for it. See
	// dinput_options_set_max_record_bytes.
	MaxRecordBytes int64
	// MapFiles memory-maps regular files instead of reading them into the library's
	// buffers: only for files nobody truncates or rewrites while they are read (a mapped
	// file truncated meanwhile kills the process with SIGBUS). See dinput_options_set_map_files.
	MapFiles bool
	// AllowNonregularFiles lets the readers read FIFOs and devices, which they refuse
	// otherwise. See dinput_options_set_allow_nonregular_files.
	AllowNonregularFiles bool
	// Deterministic is the order of the Map and Batch before it whose own Deterministic
	// is DeterministicUnset (tf.data's Options.deterministic); the zero value keeps the
	// default, ordered. See dinput_options_set_deterministic.
	Deterministic Deterministic
	// DisableStatistics turns the per-stage statistics off (they are on by default). See
	// dinput_options_set_statistics and Iterator.Statistics.
	DisableStatistics bool
	// TraceEvents, when not 0, records a trace of up to that many events (Iterator.Trace).
	// See dinput_options_set_trace.
	TraceEvents int64
	// RAMBudget is the most bytes the AUTOTUNE buffers of each iterator may hold; 0 keeps the
	// default (half of the physical memory). See dinput_options_set_ram_budget.
	RAMBudget int64
}

// WithOptions returns the same data with the given options.
func (d *Dataset) WithOptions(o Options) (*Dataset, error) {
	if !o.AutoShardPolicy.valid() {
		return nil, invalidArgument("WithOptions: unknown auto-shard policy %d", int(o.AutoShardPolicy))
	}
	var opts *C.dinput_options_t
	if err := call(func() C.dinput_status_t { return C.dinput_options_new(&opts) }); err != nil {
		return nil, err
	}
	defer C.dinput_options_free(opts)
	if err := call(func() C.dinput_status_t {
		return C.dinput_options_set_auto_shard_policy(opts, C.dinput_auto_shard_policy_t(o.AutoShardPolicy))
	}); err != nil {
		return nil, err
	}
	if o.SkipCorruptRecords {
		if err := call(func() C.dinput_status_t { return C.dinput_options_set_skip_corrupt_records(opts, 1) }); err != nil {
			return nil, err
		}
	}
	switch o.Deterministic {
	case DeterministicUnset:
	case DeterministicTrue, DeterministicFalse:
		if err := call(func() C.dinput_status_t {
			return C.dinput_options_set_deterministic(opts, cBool(o.Deterministic == DeterministicTrue))
		}); err != nil {
			return nil, err
		}
	default:
		return nil, invalidArgument("WithOptions: unknown Deterministic %d", int(o.Deterministic))
	}
	if o.MaxRecordBytes != 0 {
		if err := call(func() C.dinput_status_t {
			return C.dinput_options_set_max_record_bytes(opts, C.int64_t(o.MaxRecordBytes))
		}); err != nil {
			return nil, err
		}
	}
	if o.MapFiles {
		if err := call(func() C.dinput_status_t { return C.dinput_options_set_map_files(opts, 1) }); err != nil {
			return nil, err
		}
	}
	if o.AllowNonregularFiles {
		if err := call(func() C.dinput_status_t { return C.dinput_options_set_allow_nonregular_files(opts, 1) }); err != nil {
			return nil, err
		}
	}
	if err := setAutotuneOptions(opts, o); err != nil {
		return nil, err
	}
	if err := setStatisticsOptions(opts, o); err != nil {
		return nil, err
	}
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return C.dinput_dataset_with_options(out, in, opts)
	})
}

// MapFunc computes an output element from an input element. The input is lent for the
// call only: it reads as closed afterwards (tensors taken from it stay valid). The result
// is shared into the pipeline by reference, so the function keeps ownership of it.
type MapFunc func(in *Element) (*Element, error)

// MapOptions tune Map; the zero value (or nil) is a sequential, order-keeping map whose
// results have the input's spec.
type MapOptions struct {
	// OutSpec is the spec of the function's results; nil means the input's spec. A result
	// that does not match fails the iteration with InvalidArgument.
	OutSpec Spec
	// NumParallelCalls is 0 or 1 for sequential calls, more than 1 (or Autotune) for a
	// pool of library threads calling the function concurrently.
	NumParallelCalls int64
	// Deterministic: DeterministicFalse lets parallel results come out of input order; the
	// zero value follows the pipeline's setting (ordered by default).
	Deterministic Deterministic
}

// Map applies fn to each element.
func (d *Dataset) Map(fn MapFunc, opts *MapOptions) (*Dataset, error) {
	if fn == nil {
		return nil, invalidArgument("Map: fn is nil")
	}
	return d.deriveMap(fn, opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, cspec *C.dinput_spec_t, opts *MapOptions, h C.uintptr_t) C.dinput_status_t {
		return C.dgo_dataset_map(out, in, cspec, C.int64_t(opts.NumParallelCalls), C.int(opts.Deterministic.toC()), h)
	})
}

// deriveMap is deriveWithHandle for Map and MapMany: opts (nil: the defaults) with its
// output spec in C form, freed once the dataset is made.
func (d *Dataset) deriveMap(fn any, opts *MapOptions, f func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, cspec *C.dinput_spec_t, opts *MapOptions, h C.uintptr_t) C.dinput_status_t) (*Dataset, error) {
	if opts == nil {
		opts = &MapOptions{}
	}
	var cspec *C.dinput_spec_t
	if opts.OutSpec != nil {
		var err error
		if cspec, err = opts.OutSpec.toC(); err != nil {
			return nil, err
		}
		defer C.dinput_spec_free(cspec)
	}
	return d.deriveWithHandle(fn, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, h C.uintptr_t) C.dinput_status_t {
		return f(out, in, cspec, opts, h)
	})
}

// MapManyFunc computes out[i] from in[i] for every i of a run of consecutive elements
// (len(out) == len(in), from 1 to MapMany's maxCount; only the last run of the input is
// shorter). The inputs are lent for the call only, as for MapFunc. The results are handed
// over to the pipeline without a copy: each element put in out reads as closed afterwards
// (tensors taken from it stay valid). An input may be put in out as it is; to return one
// element twice, Clone it.
type MapManyFunc func(out, in []*Element) error

// MapMany is Map with a function that serves a whole run of up to maxCount elements per call,
// so that the cost of entering Go from the library is paid once per run rather than per
// element (a parallel map's threads are not Go's, and cgo sets up each call from them). The
// results are the same elements Map would give, under the same options; with
// NumParallelCalls > 1 each run is one call on a library thread. An error from fn fails the
// iteration at the first element of its run.
func (d *Dataset) MapMany(maxCount int, fn MapManyFunc, opts *MapOptions) (*Dataset, error) {
	if fn == nil {
		return nil, invalidArgument("MapMany: fn is nil")
	}
	if maxCount < 1 {
		return nil, invalidArgument("MapMany: maxCount must be at least 1, got %d", maxCount)
	}
	return d.deriveMap(fn, opts, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, cspec *C.dinput_spec_t, opts *MapOptions, h C.uintptr_t) C.dinput_status_t {
		return C.dgo_dataset_map_many(out, in, C.size_t(maxCount), cspec, C.int64_t(opts.NumParallelCalls), C.int(opts.Deterministic.toC()), h)
	})
}

// InterleaveFunc returns the dataset to read for one input element (lent for the call only,
// as for MapFunc), for example Records of the file name it holds. The dataset stays the
// caller's: the library keeps its own handle, so the function may close it or return the
// same one again.
type InterleaveFunc func(in *Element) (*Dataset, error)

// InterleaveOptions tune Interleave; the zero value (or nil) keeps the library's defaults:
// a cycle of one dataset per core, blocks of 1, read on the consumer's thread, in order.
type InterleaveOptions struct {
	// CycleLength is how many datasets are read at once: 1..4096 or Autotune; 0: default.
	CycleLength int64
	// BlockLength is the consecutive elements taken from one dataset before moving on;
	// 0: default (1).
	BlockLength int64
	// NumParallelCalls: 0 or 1 reads on the consumer's thread; more (or Autotune) reads
	// each open dataset ahead on a library thread of its own.
	NumParallelCalls int64
	// Deterministic: DeterministicFalse lets a parallel interleave pass over a dataset
	// that has no element ready instead of waiting for it.
	Deterministic Deterministic
}

// Interleave calls fn for each element and reads up to CycleLength of the datasets it
// returns at once, BlockLength elements from each in turn (tf.data's interleave). outSpec
// is the spec of those datasets: interleave cannot infer it. fn runs on the consumer's
// thread. The ListFiles → Interleave(Records) pipeline reads many record files at once.
func (d *Dataset) Interleave(fn InterleaveFunc, outSpec Spec, opts *InterleaveOptions) (*Dataset, error) {
	if fn == nil {
		return nil, invalidArgument("Interleave: fn is nil")
	}
	if opts == nil {
		opts = &InterleaveOptions{}
	}
	cspec, err := outSpec.toC()
	if err != nil {
		return nil, err
	}
	defer C.dinput_spec_free(cspec)
	return d.deriveWithHandle(fn, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, h C.uintptr_t) C.dinput_status_t {
		return C.dgo_dataset_interleave(out, in, cspec, C.int64_t(opts.CycleLength), C.int64_t(opts.BlockLength),
			C.int64_t(opts.NumParallelCalls), C.int(opts.Deterministic.toC()), h)
	})
}

// FilterFunc reports whether to keep an element (lent for the call, as for MapFunc).
type FilterFunc func(in *Element) (bool, error)

// Filter keeps the elements for which fn returns true.
func (d *Dataset) Filter(fn FilterFunc) (*Dataset, error) {
	if fn == nil {
		return nil, invalidArgument("Filter: fn is nil")
	}
	return d.deriveWithHandle(fn, func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, h C.uintptr_t) C.dinput_status_t {
		return C.dgo_dataset_filter(out, in, h)
	})
}

// deriveWithHandle is derive for transforms that take a Go callback: the handle (registry.go) is made
// only once the input is known to be open, because from the C call on the library owns it
// (it calls dgoFreeHandle when the last user is gone, and also when the call fails).
func (d *Dataset) deriveWithHandle(fn any, f func(out **C.dinput_dataset_t, in *C.dinput_dataset_t, h C.uintptr_t) C.dinput_status_t) (*Dataset, error) {
	return d.derive(func(out **C.dinput_dataset_t, in *C.dinput_dataset_t) C.dinput_status_t {
		return f(out, in, C.uintptr_t(handles.add(fn)))
	})
}

// Iterator starts iterating the dataset from its beginning (a new epoch).
func (d *Dataset) Iterator() (*Iterator, error) {
	var out *C.dinput_iterator_t
	if err := callOn(d, func(p *C.dinput_dataset_t) C.dinput_status_t { return C.dinput_dataset_iterator(&out, p) }); err != nil {
		return nil, err
	}
	return wrapIterator(out), nil
}
