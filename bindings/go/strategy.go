package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"time"
	"unsafe"
)

// Collective joins the workers of a multi-worker strategy; they exchange the small values
// the distributed iterator and Reduce need through it. This release has the in-process
// collective: the workers are goroutines (or threads) of one process.
type Collective struct {
	ref        ref[C.dinput_collective_t]
	numWorkers int
}

// NewInProcessCollective returns a collective joining numWorkers workers of this process.
// Every collective wait is bounded by timeout (0: one minute); a worker that does not
// arrive in time makes the wait fail with DeadlineExceeded.
func NewInProcessCollective(numWorkers int, timeout time.Duration) (*Collective, error) {
	return newCollective(func(out **C.dinput_collective_t) C.dinput_status_t {
		return C.dinput_collective_new_in_process(out, C.int(numWorkers), C.int64_t(timeout.Milliseconds()))
	})
}

// newCollective wraps the collective that create makes, with its finalizer.
func newCollective(create func(out **C.dinput_collective_t) C.dinput_status_t) (*Collective, error) {
	var out *C.dinput_collective_t
	if err := call(func() C.dinput_status_t { return create(&out) }); err != nil {
		return nil, err
	}
	c := &Collective{numWorkers: int(C.dinput_collective_num_workers(out))}
	c.ref.p = out
	runtime.SetFinalizer(c, (*Collective).Close)
	return c, nil
}

// Loopback says whether a worker of a job of several may listen on a loopback address.
type Loopback int

const (
	// LoopbackUnset leaves it to the environment variable DINPUT_GLOO_ALLOW_LOOPBACK (1
	// allows it).
	LoopbackUnset Loopback = iota
	// LoopbackAllow lets the worker listen on a loopback address: every worker runs on this
	// host.
	LoopbackAllow
	// LoopbackRefuse refuses it unless the job shows that it runs on one host.
	LoopbackRefuse
)

// CollectiveOptions are the options of NewCollectiveFromCluster; nil or the zero value gives
// the defaults.
type CollectiveOptions struct {
	// Timeout bounds the rendezvous and every later wait (0: one minute).
	Timeout time.Duration
	// JobID namespaces the rendezvous keys ("": the cluster's job id, else "dinput").
	JobID string
	// Interface is the network interface (such as "eth0") whose address this worker listens
	// on ("": DINPUT_GLOO_IFACE, else Address).
	Interface string
	// Address is a host name or address of this host to listen on ("": DINPUT_GLOO_ADDRESS,
	// else the address this host's name resolves to).
	Address string
	// AllowLoopback: with several workers, a loopback address is refused (FailedPrecondition)
	// unless the job shows it runs on one host (a launcher's local world size equal to the
	// world size, or a loopback rendezvous host) or this allows it.
	AllowLoopback Loopback
}

// toC builds the C options; nil for nil options (the library's defaults). The caller frees.
func (o *CollectiveOptions) toC() (*C.dinput_collective_options_t, error) {
	if o == nil {
		return nil, nil
	}
	if o.Timeout < 0 {
		return nil, invalidArgument("CollectiveOptions: Timeout must be >= 0, got %v", o.Timeout)
	}
	ms := o.Timeout.Milliseconds()
	if o.Timeout > 0 && ms == 0 {
		ms = 1 // 0 would mean the default; the shortest wait the library can express
	}
	allow := C.int(-1)
	switch o.AllowLoopback {
	case LoopbackUnset:
	case LoopbackAllow:
		allow = 1
	case LoopbackRefuse:
		allow = 0
	default:
		return nil, invalidArgument("CollectiveOptions: unknown AllowLoopback %d", int(o.AllowLoopback))
	}
	strs := []string{o.JobID, o.Interface, o.Address}
	cs := make([]*C.char, len(strs))
	for i, s := range strs {
		cs[i] = C.CString(s)
		defer C.free(unsafe.Pointer(cs[i]))
	}
	var out *C.dinput_collective_options_t
	err := call(func() C.dinput_status_t {
		return C.dgo_collective_options(&out, C.int64_t(ms), cs[0], cs[1], cs[2], allow)
	})
	return out, err
}

// NewCollectiveFromCluster returns a collective joining the worker processes of a job over
// TCP: this process is worker cluster.Rank(), and the workers meet at the cluster's
// rendezvous URL. It returns once every worker has connected. options may be nil (the
// defaults). Unimplemented in a build without Gloo.
func NewCollectiveFromCluster(cluster *Cluster, options *CollectiveOptions) (*Collective, error) {
	copts, err := options.toC()
	if err != nil {
		return nil, err
	}
	defer C.dinput_collective_options_free(copts)
	var c *Collective
	err = use(cluster, func(p *C.dinput_cluster_t) (err error) {
		c, err = newCollective(func(out **C.dinput_collective_t) C.dinput_status_t {
			return C.dinput_collective_new_from_cluster(out, p, copts)
		})
		return err
	})
	return c, err
}

// Close releases the collective (strategies made with it keep it alive). Idempotent.
func (c *Collective) Close() error {
	if c == nil {
		return nil
	}
	c.ref.close(func(p *C.dinput_collective_t) { C.dinput_collective_free(p) })
	runtime.SetFinalizer(c, nil)
	return nil
}

// NumWorkers returns the number of workers the collective joins.
func (c *Collective) NumWorkers() int {
	if c == nil {
		return 0
	}
	return c.numWorkers
}

// Abort fails every pending and future wait of every worker with code (not OK) and message,
// so that a worker that cannot continue releases its peers at once. Irreversible.
func (c *Collective) Abort(code Code, message string) error {
	if c != nil && !code.valid() {
		return invalidArgument("Abort: unknown status code %d", int(code))
	}
	msg := C.CString(message)
	defer C.free(unsafe.Pointer(msg))
	return callOn(c, func(p *C.dinput_collective_t) C.dinput_status_t {
		return C.dinput_collective_abort(p, C.dinput_status_t(code), msg)
	})
}

// Strategy is a set of replica devices: W workers x R local replicas, seen from one worker.
// Its topology is read once at creation, so the accessors need no call into C.
type Strategy struct {
	ref               ref[C.dinput_strategy_t]
	numReplicasInSync int
	numWorkers        int
	workerIndex       int
	devices           []string
}

func wrapStrategy(p *C.dinput_strategy_t) *Strategy {
	s := &Strategy{
		numReplicasInSync: int(C.dinput_strategy_num_replicas_in_sync(p)),
		numWorkers:        int(C.dinput_strategy_num_workers(p)),
		workerIndex:       int(C.dinput_strategy_worker_index(p)),
	}
	n := int(C.dinput_strategy_num_local_replicas(p))
	s.devices = make([]string, n)
	for i := range s.devices {
		s.devices[i] = C.GoString(C.dinput_strategy_device(p, C.int(i)))
	}
	s.ref.p = p
	runtime.SetFinalizer(s, (*Strategy).Close)
	return s
}

// cStrings copies Go strings into a C array of C strings; free releases them all.
func cStrings(strs []string) (arr **C.char, free func()) {
	if len(strs) == 0 {
		return nil, func() {}
	}
	mem := C.calloc(C.size_t(len(strs)), C.size_t(unsafe.Sizeof(uintptr(0))))
	items := unsafe.Slice((**C.char)(mem), len(strs))
	for i, s := range strs {
		items[i] = C.CString(s)
	}
	return (**C.char)(mem), func() {
		for _, s := range items {
			C.free(unsafe.Pointer(s))
		}
		C.free(mem)
	}
}

// NewStrategy returns a single-worker strategy over the given devices, named "CPU:k" or
// "GPU:k" ("/cpu:0" and "/job:worker/device:GPU:1" forms are accepted). No devices gives the
// default strategy: one replica on CPU:0.
func NewStrategy(devices ...string) (*Strategy, error) {
	arr, free := cStrings(devices)
	defer free()
	var out *C.dinput_strategy_t
	if err := call(func() C.dinput_status_t { return C.dinput_strategy_new(&out, arr, C.int(len(devices))) }); err != nil {
		return nil, err
	}
	return wrapStrategy(out), nil
}

// NewMultiWorkerStrategy returns worker workerIndex of a multi-worker strategy whose workers
// are joined by collective; every worker has the given local devices (none: CPU:0).
func NewMultiWorkerStrategy(collective *Collective, workerIndex int, devices ...string) (*Strategy, error) {
	arr, free := cStrings(devices)
	defer free()
	var out *C.dinput_strategy_t
	if err := callOn(collective, func(cp *C.dinput_collective_t) C.dinput_status_t {
		return C.dinput_strategy_new_multi_worker(&out, cp, C.int(workerIndex), arr, C.int(len(devices)))
	}); err != nil {
		return nil, err
	}
	return wrapStrategy(out), nil
}

// NewMultiWorkerCPUStrategy is NewMultiWorkerStrategy with numReplicasInSync CPU replicas in
// total; InvalidArgument when that is not divisible by the number of workers.
func NewMultiWorkerCPUStrategy(collective *Collective, workerIndex, numReplicasInSync int) (*Strategy, error) {
	var out *C.dinput_strategy_t
	if err := callOn(collective, func(cp *C.dinput_collective_t) C.dinput_status_t {
		return C.dinput_strategy_new_multi_worker_cpu(&out, cp, C.int(workerIndex), C.int(numReplicasInSync))
	}); err != nil {
		return nil, err
	}
	return wrapStrategy(out), nil
}

// Close releases the strategy (distributed datasets made with it keep it alive). Idempotent.
func (s *Strategy) Close() error {
	if s == nil {
		return nil
	}
	s.ref.close(func(p *C.dinput_strategy_t) { C.dinput_strategy_free(p) })
	runtime.SetFinalizer(s, nil)
	return nil
}

// NumReplicasInSync returns N = W * R.
func (s *Strategy) NumReplicasInSync() int {
	if s == nil {
		return 0
	}
	return s.numReplicasInSync
}

// NumLocalReplicas returns R, the replicas of this worker.
func (s *Strategy) NumLocalReplicas() int {
	if s == nil {
		return 0
	}
	return len(s.devices)
}

// NumWorkers returns W.
func (s *Strategy) NumWorkers() int {
	if s == nil {
		return 0
	}
	return s.numWorkers
}

// WorkerIndex returns this worker's index.
func (s *Strategy) WorkerIndex() int {
	if s == nil {
		return 0
	}
	return s.workerIndex
}

// Devices returns the canonical names ("CPU:0", "GPU:1") of the local replicas, in order.
func (s *Strategy) Devices() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.devices...)
}
