package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// ReplicationMode says how input pipelines are replicated (tf.distribute.InputReplicationMode).
type ReplicationMode int

// The replication modes.
const (
	ReplicationPerWorker  ReplicationMode = 0
	ReplicationPerReplica ReplicationMode = 1
)

// InputOptions are the options of distributed input (tf.distribute.InputOptions). Pass nil
// for the defaults, or start from DefaultInputOptions: the zero value is not the default
// (it turns fetching to devices and the per-replica buffer off).
type InputOptions struct {
	// FetchToDevice copies each replica's values to its device (default true); false keeps
	// them in host memory.
	FetchToDevice bool
	// ReplicationMode is ReplicationPerWorker (default) or ReplicationPerReplica
	// (DistributeDatasetsFromFunction only).
	ReplicationMode ReplicationMode
	// PlaceDatasetOnDevice runs the pipeline on the device (ReplicationPerReplica only;
	// default false).
	PlaceDatasetOnDevice bool
	// PerReplicaBufferSize is the number of batches kept ahead per replica (default 1; 0
	// disables the buffer).
	PerReplicaBufferSize int64
}

// DefaultInputOptions returns the default input options.
func DefaultInputOptions() InputOptions {
	return InputOptions{FetchToDevice: true, ReplicationMode: ReplicationPerWorker, PerReplicaBufferSize: 1}
}

// toC builds the C options; nil for nil options (the library's defaults). The caller frees.
func (o *InputOptions) toC() (*C.dinput_input_options_t, error) {
	if o == nil {
		return nil, nil
	}
	if !o.ReplicationMode.valid() {
		return nil, invalidArgument("InputOptions: unknown replication mode %d", int(o.ReplicationMode))
	}
	var out *C.dinput_input_options_t
	err := call(func() C.dinput_status_t {
		return C.dgo_input_options(&out, cBool(o.FetchToDevice), C.int(o.ReplicationMode),
			cBool(o.PlaceDatasetOnDevice), C.int64_t(o.PerReplicaBufferSize))
	})
	return out, err
}

// DistributeDataset distributes a dataset batched by the global batch size
// (experimental_distribute_dataset): it auto-shards it across workers by the dataset's
// AutoShardPolicy, splits each global batch among the replicas and prefetches. options may
// be nil.
func (s *Strategy) DistributeDataset(ds *Dataset, options *InputOptions) (*DistributedDataset, error) {
	if ds == nil {
		return nil, closedError("Dataset")
	}
	copts, err := options.toC()
	if err != nil {
		return nil, err
	}
	defer C.dinput_input_options_free(copts)
	var out *C.dinput_dist_dataset_t
	if err := use(s, func(sp *C.dinput_strategy_t) error {
		return callOn(ds, func(dp *C.dinput_dataset_t) C.dinput_status_t {
			return C.dinput_strategy_distribute_dataset(&out, sp, dp, copts)
		})
	}); err != nil {
		return nil, err
	}
	return wrapDistributedDataset(out), nil
}

// InputContext describes one input pipeline to a DatasetFunc. It is valid during the call
// only: PerReplicaBatchSize fails with ErrClosed afterwards.
type InputContext struct {
	// NumInputPipelines is the number of input pipelines (workers, or replicas in
	// ReplicationPerReplica mode); InputPipelineID is this one's index.
	NumInputPipelines int
	InputPipelineID   int
	NumReplicasInSync int
	ref               ref[C.dinput_input_context_t]
}

// PerReplicaBatchSize returns globalBatchSize / NumReplicasInSync; InvalidArgument when it
// does not divide.
func (c *InputContext) PerReplicaBatchSize(globalBatchSize int64) (int64, error) {
	var out C.int64_t
	err := callOn(c, func(p *C.dinput_input_context_t) C.dinput_status_t {
		return C.dinput_input_context_get_per_replica_batch_size(&out, p, C.int64_t(globalBatchSize))
	})
	return int64(out), err
}

// DatasetFunc returns the dataset of one input pipeline, already sharded and batched by the
// per-replica batch size. It is called from the goroutine of
// DistributeDatasetsFromFunction, once per worker (ReplicationPerWorker) or local replica
// (ReplicationPerReplica).
// The returned dataset stays the caller's: the library takes its own reference.
type DatasetFunc func(ctx *InputContext) (*Dataset, error)

// DistributeDatasetsFromFunction calls fn once per input pipeline and distributes the
// datasets it returns; the library neither shards nor rebatches them. options may be nil.
func (s *Strategy) DistributeDatasetsFromFunction(fn DatasetFunc, options *InputOptions) (*DistributedDataset, error) {
	if fn == nil {
		return nil, invalidArgument("DistributeDatasetsFromFunction: fn is nil")
	}
	copts, err := options.toC()
	if err != nil {
		return nil, err
	}
	defer C.dinput_input_options_free(copts)
	var out *C.dinput_dist_dataset_t
	if err := callOn(s, func(sp *C.dinput_strategy_t) C.dinput_status_t {
		h := handles.add(fn) // the library releases it (dgoFreeHandle) before the call returns
		return C.dgo_distribute_datasets_from_function(&out, sp, C.uintptr_t(h), copts)
	}); err != nil {
		return nil, err
	}
	return wrapDistributedDataset(out), nil
}

// ValueContext describes the replica a ValueFunc computes a value for.
type ValueContext struct {
	ReplicaIDInSyncGroup int
	NumReplicasInSync    int
}

// ValueFunc returns the value of one replica. The result stays the caller's.
type ValueFunc func(ctx ValueContext) (*Element, error)

// DistributeValuesFromFunction calls fn once per local replica, in replica order, and makes
// a per-replica value of the results.
func (s *Strategy) DistributeValuesFromFunction(fn ValueFunc) (*PerReplica, error) {
	if fn == nil {
		return nil, invalidArgument("DistributeValuesFromFunction: fn is nil")
	}
	// This call takes no free function: user_data is used only during it.
	h := handles.add(fn)
	defer handles.delete(h)
	var out *C.dinput_per_replica_t
	if err := callOn(s, func(sp *C.dinput_strategy_t) C.dinput_status_t {
		return C.dgo_distribute_values_from_function(&out, sp, C.uintptr_t(h))
	}); err != nil {
		return nil, err
	}
	return wrapPerReplica(out), nil
}

// ReplicaContext describes the replica a ReplicaFunc runs for.
type ReplicaContext struct {
	ReplicaIDInSyncGroup int
	NumReplicasInSync    int
	// Device is the canonical name of the replica's device, e.g. "CPU:1".
	Device string
}

// ReplicaFunc computes one replica's result from its slice of the arguments (args is nil
// when Run was given none; it is lent for the call only, like a MapFunc's input). Run calls
// it concurrently, once per local replica. The result stays the caller's.
type ReplicaFunc func(ctx ReplicaContext, args *Element) (*Element, error)

// Run calls fn once per local replica, concurrently, with that replica's element of args
// (which may be nil), and makes a per-replica value of the results.
func (s *Strategy) Run(fn ReplicaFunc, args *PerReplica) (*PerReplica, error) {
	if fn == nil {
		return nil, invalidArgument("Run: fn is nil")
	}
	h := handles.add(fn)
	defer handles.delete(h)
	var out *C.dinput_per_replica_t
	if err := use(s, func(sp *C.dinput_strategy_t) error {
		run := func(ap *C.dinput_per_replica_t) C.dinput_status_t {
			return C.dgo_strategy_run(&out, sp, ap, C.uintptr_t(h))
		}
		if args == nil {
			return call(func() C.dinput_status_t { return run(nil) })
		}
		return callOn(args, run)
	}); err != nil {
		return nil, err
	}
	return wrapPerReplica(out), nil
}

// ReduceOp is a reduction across replicas.
type ReduceOp int

// The reductions.
const (
	ReduceSum  ReduceOp = 0
	ReduceMean ReduceOp = 1
)

// Reduce reduces a per-replica value across all replicas of all workers, component by
// component. axis AxisNone reduces element-wise (shapes must match); axis 0 also reduces over
// the first dimension (Mean divides by the total number of rows). Sums keep their dtype;
// means are float64. Every worker gets the same result.
func (s *Strategy) Reduce(op ReduceOp, value *PerReplica, axis int) (*Element, error) {
	if value == nil {
		return nil, closedError("PerReplica")
	}
	if !op.valid() {
		return nil, invalidArgument("Reduce: unknown reduce op %d", int(op))
	}
	var out *C.dinput_element_t
	if err := use(s, func(sp *C.dinput_strategy_t) error {
		return callOn(value, func(vp *C.dinput_per_replica_t) C.dinput_status_t {
			return C.dinput_strategy_reduce(&out, sp, C.dinput_reduce_op_t(op), vp, C.int(axis))
		})
	}); err != nil {
		return nil, err
	}
	return wrapElement(out), nil
}

// DistributedDataset is a dataset distributed over the replicas of a strategy.
type DistributedDataset struct {
	ref  ref[C.dinput_dist_dataset_t]
	plan string
}

func wrapDistributedDataset(p *C.dinput_dist_dataset_t) *DistributedDataset {
	d := &DistributedDataset{plan: C.GoString(C.dinput_dist_dataset_plan(p))}
	d.ref.p = p
	runtime.SetFinalizer(d, (*DistributedDataset).Close)
	return d
}

// Close releases the distributed dataset (its iterators keep it alive). Idempotent.
func (d *DistributedDataset) Close() error {
	if d == nil {
		return nil
	}
	d.ref.close(func(p *C.dinput_dist_dataset_t) { C.dinput_dist_dataset_free(p) })
	runtime.SetFinalizer(d, nil)
	return nil
}

// Plan returns how this worker's input is distributed, as JSON, e.g.
// {"policy":"DATA","split":"even","global_batch_size":4,"num_replicas_in_sync":2,
// "num_workers":1,"worker_index":0}.
func (d *DistributedDataset) Plan() string {
	if d == nil {
		return ""
	}
	return d.plan
}

// ElementSpec returns the per-replica element spec (the batch dimension is unknown when
// partial batches can occur).
func (d *DistributedDataset) ElementSpec() (Spec, error) {
	var out *C.dinput_spec_t
	if err := callOn(d, func(p *C.dinput_dist_dataset_t) C.dinput_status_t {
		return C.dinput_dist_dataset_element_spec(&out, p)
	}); err != nil {
		return nil, err
	}
	return specFromC(out), nil
}

// Iterator returns a new iterator (a new epoch). In a multi-worker strategy every worker
// must create its iterators in the same order: their steps are matched through the
// collective.
func (d *DistributedDataset) Iterator() (*DistributedIterator, error) {
	var out *C.dinput_dist_iterator_t
	if err := callOn(d, func(p *C.dinput_dist_dataset_t) C.dinput_status_t { return C.dinput_dist_dataset_iterator(&out, p) }); err != nil {
		return nil, err
	}
	runtime.KeepAlive(d)
	it := &DistributedIterator{}
	it.ref.p = out
	runtime.SetFinalizer(it, (*DistributedIterator).Close)
	return it, nil
}

// DistributedIterator iterates a DistributedDataset: each step is a PerReplica value with
// one element per local replica. It serves one goroutine at a time. See the package
// documentation for its two styles.
type DistributedIterator struct {
	ref  ref[C.dinput_dist_iterator_t]
	scan scanState[*PerReplica]
	// infos is how many tensor infos Next fetches with each step (the replicas times the
	// components of the last step); 0 until a step has shown how many.
	infos   atomic.Int64
	retired retired[C.dinput_per_replica_t] // the step of Next's before, for the next Next to free
}

// retire is the free function of Next's steps (see retired).
func (it *DistributedIterator) retire(p *C.dinput_per_replica_t) {
	it.retired.put(p, freePerReplica)
}

func freePerReplica(p *C.dinput_per_replica_t) { C.dinput_per_replica_free(p) }

// Close releases the iterator (and the current Value). Idempotent. As for Iterator.Close,
// a GetNext blocked in another goroutine is cancelled first; with several workers, closing
// an iterator that has not ended makes the other workers' iterators of the epoch fail with
// ErrCancelled instead of waiting for this worker.
func (it *DistributedIterator) Close() error {
	if it == nil {
		return nil
	}
	// Only a blocked GetNext needs the cancel; an iterator that has ended ignores it. The
	// handle is freed when that GetNext returns.
	it.Cancel()
	it.ref.close(func(p *C.dinput_dist_iterator_t) { C.dinput_dist_iterator_free(p) })
	it.scan.close()
	C.dinput_per_replica_free(it.retired.take(true))
	runtime.SetFinalizer(it, nil)
	return nil
}

// Cancel may be called from any goroutine, also while another one is blocked in GetNext:
// that call returns promptly with an error matching ErrCancelled, as does every later one,
// and with several workers the other workers' iterators of this epoch fail the same way
// instead of waiting for this one. Idempotent.
func (it *DistributedIterator) Cancel() error {
	if it == nil {
		return closedError("DistributedIterator")
	}
	err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t { return C.dinput_dist_iterator_cancel(p) })
	if errors.Is(err, ErrClosed) {
		return nil
	}
	return err
}

// GetNext returns the next step, owned by the caller. Replicas without data get an empty
// (0-row) batch; the error matches ErrOutOfRange when no replica on any worker has data.
func (it *DistributedIterator) GetNext() (*PerReplica, error) {
	var out *C.dinput_per_replica_t
	var size C.size_t
	if err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t {
		return C.dgo_dist_iterator_get_next(&out, &size, p)
	}); err != nil {
		return nil, err
	}
	return wrapPerReplicaSized(out, int(size)), nil
}

// GetNextAsOptional returns the next step as an Optional holding a PerReplica, empty at the
// end of the data.
func (it *DistributedIterator) GetNextAsOptional() (*Optional, error) {
	var out *C.dinput_optional_t
	if err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t {
		return C.dinput_dist_iterator_get_next_as_optional(&out, p)
	}); err != nil {
		return nil, err
	}
	return wrapOptional(out), nil
}

// ElementSpec returns the per-replica element spec.
func (it *DistributedIterator) ElementSpec() (Spec, error) {
	var out *C.dinput_spec_t
	if err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t {
		return C.dinput_dist_iterator_element_spec(&out, p)
	}); err != nil {
		return nil, err
	}
	return specFromC(out), nil
}

// GetNextContext is GetNext that gives up when ctx is done first, returning ctx.Err()
// promptly, also while waiting for other workers. As with Iterator.GetNextContext, giving
// up cancels the iterator (and, with several workers, this epoch on the other workers).
func (it *DistributedIterator) GetNextContext(ctx context.Context) (*PerReplica, error) {
	return withContext(ctx, it.Cancel, it.GetNext)
}

// Next advances to the next step, closing the previous Value. It returns false at the end of
// the data or on an error; Err tells them apart.
func (it *DistributedIterator) Next() bool {
	if it == nil {
		return false
	}
	return it.scan.next(it.getNextOwned)
}

// getNextOwned is GetNext for Next: the step belongs to the iterator, which closes it at the
// next Next or at Close (also from the iterator's own finalizer), so it needs no finalizer of
// its own. runtime.SetFinalizer and its removal in Close took about a fifth of a step's time
// in Go on a small batch (bench/README.md, "Bindings").
//
// It also fetches the step's tensor infos in the same cgo call, so that AppendValues reads
// host values without a call of its own: with two replicas, that is two cgo calls fewer per
// step (bench/README.md, "Bindings").
func (it *DistributedIterator) getNextOwned() (*PerReplica, error) {
	infos := make([]C.dinput_tensor_info_t, it.infos.Load())
	var out *C.dinput_per_replica_t
	var size, count C.size_t
	previous := it.retired.take(false)
	err := callOn(it, func(p *C.dinput_dist_iterator_t) C.dinput_status_t {
		freeing := previous
		previous = nil
		return C.dgo_dist_iterator_next_step(&out, &size, (*C.dinput_tensor_info_t)(sliceData(infos)),
			C.size_t(len(infos)), &count, freeing, p)
	})
	C.dinput_per_replica_free(previous) // the call did not run (the iterator is closed): NULL otherwise
	if err != nil {
		return nil, err
	}
	v := &PerReplica{n: int(size), owner: it}
	v.ref.p = out
	switch c := int(count); {
	case c > len(infos):
		it.infos.Store(int64(c)) // the next step brings them
	case c > 0 && v.n > 0 && c%v.n == 0:
		v.infos, v.components = infos[:c], c/v.n
	}
	return v, nil
}

// NextContext is Next with GetNextContext's handling of ctx: when ctx is done first it
// returns false and Err returns ctx.Err().
func (it *DistributedIterator) NextContext(ctx context.Context) bool {
	if it == nil {
		return false
	}
	return it.scan.next(func() (*PerReplica, error) { return it.GetNextContext(ctx) })
}

// Value returns the current step. It belongs to the iterator and is closed by the next call
// to Next (tensors taken from it stay valid); nil before the first Next and after the last.
func (it *DistributedIterator) Value() *PerReplica {
	if it == nil {
		return nil
	}
	return it.scan.cur
}

// Err returns the error that stopped Next, or nil when it stopped at the end of the data.
func (it *DistributedIterator) Err() error {
	if it == nil {
		return nil
	}
	return it.scan.failure()
}

// PerReplica holds one element per local replica (in replica order, like TensorFlow's
// local_results).
type PerReplica struct {
	ref ref[C.dinput_per_replica_t]
	n   int
	// owner: for a value of a DistributedIterator's Next, that iterator, which closes it (it has
	// no finalizer) and frees its handle with the next step's (retire).
	owner *DistributedIterator
	// infos: Next's values only, every replica's components' infos (replica r's component c
	// at r*components+c), borrowed from the value: read only while it is held open.
	infos      []C.dinput_tensor_info_t
	components int
}

func wrapPerReplica(p *C.dinput_per_replica_t) *PerReplica {
	return wrapPerReplicaSized(p, int(C.dinput_per_replica_size(p)))
}

func wrapPerReplicaSized(p *C.dinput_per_replica_t, n int) *PerReplica {
	v := &PerReplica{n: n}
	v.ref.p = p
	runtime.SetFinalizer(v, (*PerReplica).Close)
	return v
}

// NewPerReplica returns a per-replica value of one element per local replica.
func NewPerReplica(elements ...*Element) (*PerReplica, error) {
	ptrs := make([]*C.dinput_element_t, len(elements))
	for i, e := range elements {
		if e == nil {
			return nil, invalidArgument("NewPerReplica: element %d is nil", i)
		}
		p := e.ref.acquire()
		defer e.ref.release()
		if p == nil {
			return nil, invalidArgument("NewPerReplica: element %d is closed", i)
		}
		ptrs[i] = p
	}
	var parts **C.dinput_element_t
	if len(ptrs) > 0 {
		parts = &ptrs[0]
	}
	var out *C.dinput_per_replica_t
	err := call(func() C.dinput_status_t { return C.dinput_per_replica_new(&out, parts, C.int(len(ptrs))) })
	runtime.KeepAlive(elements)
	if err != nil {
		return nil, err
	}
	return wrapPerReplica(out), nil
}

// Close releases the value; elements and tensors taken from it stay valid. Idempotent.
func (v *PerReplica) Close() error {
	if v == nil {
		return nil
	}
	if owner := v.owner; owner != nil {
		v.ref.close(owner.retire)
		return nil
	}
	v.ref.close(func(p *C.dinput_per_replica_t) { C.dinput_per_replica_free(p) })
	runtime.SetFinalizer(v, nil)
	return nil
}

// Len returns the number of local replicas in the value.
func (v *PerReplica) Len() int {
	if v == nil {
		return 0
	}
	return v.n
}

// Element returns the element of local replica i, as a new handle.
func (v *PerReplica) Element(replica int) (*Element, error) {
	if v != nil && replica < 0 {
		return nil, invalidArgument("replica %d is out of range for a per-replica value of %d replica(s)", replica, v.n)
	}
	var out *C.dinput_element_t
	if err := callOn(v, func(p *C.dinput_per_replica_t) C.dinput_status_t {
		return C.dgo_per_replica_element(&out, p, C.size_t(replica))
	}); err != nil {
		return nil, err
	}
	return wrapElement(out), nil
}

// LocalResults returns the elements of all local replicas, in replica order.
func (v *PerReplica) LocalResults() ([]*Element, error) {
	if v == nil {
		return nil, closedError("PerReplica")
	}
	out := make([]*Element, v.n)
	for i := range out {
		e, err := v.Element(i)
		if err != nil {
			for _, done := range out[:i] {
				done.Close()
			}
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// Tensor returns component `component` of replica `replica`'s element as a new handle, in
// one call into C: the shortcut for reading steps in a loop.
func (v *PerReplica) Tensor(replica, component int) (*Tensor, error) {
	if v != nil && (replica < 0 || component < 0) {
		return nil, invalidArgument("replica %d, component %d: negative index", replica, component)
	}
	var out *C.dinput_tensor_t
	var info C.dinput_tensor_info_t
	if err := callOn(v, func(p *C.dinput_per_replica_t) C.dinput_status_t {
		return C.dgo_per_replica_tensor(&out, &info, p, C.size_t(replica), C.size_t(component))
	}); err != nil {
		return nil, err
	}
	return wrapTensor(out, info), nil
}

// Tensors returns every component of every replica as new handles, replica by replica
// (replica r's component c at r*components + c), in one call into C. InvalidArgument when the
// replicas' elements differ in their number of components.
func (v *PerReplica) Tensors() ([]*Tensor, error) {
	if v == nil {
		return nil, closedError("PerReplica")
	}
	return tensorsVia(v.n, func(out **C.dinput_tensor_t, infos *C.dinput_tensor_info_t, capacity C.size_t, count *C.size_t) error {
		return callOn(v, func(p *C.dinput_per_replica_t) C.dinput_status_t {
			return C.dgo_per_replica_tensors(out, infos, capacity, count, p)
		})
	})
}

// appendFromInfos is AppendValues without a cgo call, for a value of Next whose component
// is host memory of dtype want: the values are copied straight from the library's memory,
// with the value held open meanwhile. ok is false where it does not apply (no infos, another
// device or dtype, an index out of range), and AppendValues takes its usual path, errors
// included.
func appendFromInfos[T Scalar](dst []T, v *PerReplica, replica, component int, want C.dinput_dtype_t,
	size int) (out []T, ok bool, err error) {
	if v == nil || v.infos == nil || replica >= v.n || component >= v.components {
		return dst, false, nil
	}
	if v.ref.acquire() == nil {
		v.ref.release()
		return dst, true, closedError(v.kind())
	}
	defer v.ref.release()
	info := &v.infos[replica*v.components+component]
	if info.device_type != C.DINPUT_DEVICE_CPU || info.dtype != want || want == C.DINPUT_BYTES {
		return dst, false, nil
	}
	n := int(info.byte_size) / size
	if n == 0 {
		return dst, true, nil
	}
	out = append(dst, unsafe.Slice((*T)(info.data), n)...)
	normalizeBools(out[len(dst):])
	return out, true, nil
}

// AppendValues appends the data of component `component` of replica `replica`'s element to
// dst and returns the extended slice, like strconv.AppendInt. The tensor's dtype must be
// DTypeOf[T] (else InvalidArgument naming both). It makes no Tensor handle and, when dst has
// room, costs one call into C: the fast way to read every step of a distributed iterator
// into a reused buffer (dst[:0]).
func AppendValues[T Scalar](dst []T, v *PerReplica, replica, component int) ([]T, error) {
	if v != nil && (replica < 0 || component < 0) {
		return dst, invalidArgument("replica %d, component %d: negative index", replica, component)
	}
	want := C.dinput_dtype_t(DTypeOf[T]())
	var zero T
	size := int(unsafe.Sizeof(zero))
	if out, ok, err := appendFromInfos(dst, v, replica, component, want, size); ok {
		return out, err
	}
	for {
		free := dst[len(dst):cap(dst)]
		var n C.int64_t
		if err := callOn(v, func(p *C.dinput_per_replica_t) C.dinput_status_t {
			return C.dgo_per_replica_copy(p, C.size_t(replica), C.size_t(component), want,
				sliceData(free), C.size_t(len(free)*size), &n)
		}); err != nil {
			return dst, err
		}
		if int(n) <= len(free) {
			out := dst[:len(dst)+int(n)]
			normalizeBools(out[len(dst):])
			return out, nil
		}
		// Too small: nothing was copied; grow and copy again (at most once, since the
		// value is immutable).
		grown := make([]T, len(dst), len(dst)+int(n))
		copy(grown, dst)
		dst = grown
	}
}
