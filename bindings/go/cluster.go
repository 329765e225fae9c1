package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Cluster is a worker process's place in a multi-process job: its rank, the number of
// workers, where they meet (the rendezvous URL) and the launcher's name of the job. It is
// read from what the launcher set (TF_CONFIG, srun, torchrun, mpirun, DINPUT_* variables)
// or given explicitly. It is immutable: its fields are read once at creation, so the
// accessors need no call into C.
type Cluster struct {
	ref             ref[C.dinput_cluster_t]
	rank            int
	worldSize       int
	localRank       int
	localWorldSize  int
	rdzvURL         string
	coordinatorHost string
	jobID           string
	source          string
	taskType        string
	taskIndex       int
	inputWorker     bool
}

// ResolveCluster reads the cluster from this process's environment. source is "auto" (or
// ""), "tf_config", "slurm", "torchrun", "mpi" or "explicit" (the DINPUT_* variables). A
// malformed or missing variable is InvalidArgument naming it and its value; "auto" finding
// no launcher's variables is NotFound.
func ResolveCluster(source string) (*Cluster, error) {
	if source == "" {
		source = "auto"
	}
	cs := C.CString(source)
	defer C.free(unsafe.Pointer(cs))
	var out *C.dinput_cluster_t
	if err := call(func() C.dinput_status_t { return C.dinput_cluster_resolve(&out, cs) }); err != nil {
		return nil, err
	}
	return newCluster(out), nil
}

// NewCluster returns a cluster given explicitly: rank in [0, worldSize), and the rendezvous
// URL (tcp://HOST:PORT, file://DIR, redis://HOST:PORT; "" for none).
func NewCluster(rank, worldSize int, rdzvURL string) (*Cluster, error) {
	cu := C.CString(rdzvURL)
	defer C.free(unsafe.Pointer(cu))
	var out *C.dinput_cluster_t
	if err := call(func() C.dinput_status_t {
		return C.dinput_cluster_new(&out, C.int(rank), C.int(worldSize), cu)
	}); err != nil {
		return nil, err
	}
	return newCluster(out), nil
}

func newCluster(p *C.dinput_cluster_t) *Cluster {
	c := &Cluster{
		rank:            int(C.dinput_cluster_rank(p)),
		worldSize:       int(C.dinput_cluster_world_size(p)),
		localRank:       int(C.dinput_cluster_local_rank(p)),
		localWorldSize:  int(C.dinput_cluster_local_world_size(p)),
		rdzvURL:         C.GoString(C.dinput_cluster_rdzv_url(p)),
		coordinatorHost: C.GoString(C.dinput_cluster_coordinator_host(p)),
		jobID:           C.GoString(C.dinput_cluster_job_id(p)),
		source:          C.GoString(C.dinput_cluster_source(p)),
		taskType:        C.GoString(C.dinput_cluster_task_type(p)),
		taskIndex:       int(C.dinput_cluster_task_index(p)),
		inputWorker:     C.dinput_cluster_is_input_worker(p) != 0,
	}
	c.ref.p = p
	runtime.SetFinalizer(c, (*Cluster).Close)
	return c
}

// Close releases the cluster handle; the values read from it stay readable. Idempotent.
func (c *Cluster) Close() error {
	if c == nil {
		return nil
	}
	c.ref.close(func(p *C.dinput_cluster_t) { C.dinput_cluster_free(p) })
	runtime.SetFinalizer(c, nil)
	return nil
}

// Rank is this process's worker index; -1 for a TF_CONFIG ps or evaluator task.
func (c *Cluster) Rank() int { return c.rank }

// WorldSize is the number of workers that read input.
func (c *Cluster) WorldSize() int { return c.worldSize }

// LocalRank is the index among the job's workers on this host; -1 when the launcher does
// not say.
func (c *Cluster) LocalRank() int { return c.localRank }

// LocalWorldSize is the number of the job's workers on this host; -1 when the launcher does
// not say.
func (c *Cluster) LocalWorldSize() int { return c.localWorldSize }

// RdzvURL is the rendezvous URL; "" when none is known.
func (c *Cluster) RdzvURL() string { return c.rdzvURL }

// CoordinatorHost is the host of the worker of rank 0; "" when unknown.
func (c *Cluster) CoordinatorHost() string { return c.coordinatorHost }

// JobID is the launcher's name of the job; "" when it gives none.
func (c *Cluster) JobID() string { return c.jobID }

// Source is where the cluster came from: "tf_config", "slurm", "torchrun", "mpi" or
// "explicit".
func (c *Cluster) Source() string { return c.source }

// TaskType is TF_CONFIG's task type ("chief", "worker", "ps", "evaluator"); "" otherwise.
func (c *Cluster) TaskType() string { return c.taskType }

// TaskIndex is TF_CONFIG's task index; -1 otherwise.
func (c *Cluster) TaskIndex() int { return c.taskIndex }

// IsInputWorker is false for a TF_CONFIG ps or evaluator task, which reads no input.
func (c *Cluster) IsInputWorker() bool { return c.inputWorker }
