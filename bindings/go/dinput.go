// Package dinput is the Go binding of dinput, a library of distributed input pipelines for
// ML training with the semantics of TensorFlow's tf.data and tf.distribute distributed input.
//
// Datasets are immutable pipeline graphs built from sources (Range, FromTensors,
// FromTensorSlices, FromGenerator, TextLines, Records, FixedLengthRecords, ListFiles) and
// transforms (Batch, Map, Filter, Interleave, Shuffle, ...). RecordWriter writes the record
// files that Records reads. A Strategy distributes a dataset batched by the global batch size over its replicas:
// it shards the data across workers, splits every batch among the replicas and gives
// replicas that run out of data an empty batch until no replica on any worker has data.
//
// # Errors
//
// Every fallible call returns an error; errors from the library are *Error values carrying
// the TensorFlow status code and the library's message. Compare them with errors.Is against
// the sentinels (ErrInvalidArgument, ErrOutOfRange, ...), which match by code. End of data
// is ErrOutOfRange, as in TensorFlow.
//
// # Resources
//
// Every type that wraps a library object (Tensor, Element, Dataset, Iterator, Optional,
// Strategy, Collective, DistributedDataset, DistributedIterator, PerReplica) has an
// idempotent Close. A finalizer closes forgotten objects, but the garbage collector does not
// see the memory the library holds (a batch can be large), so Close what you create when
// you are done with it. Using an object after Close returns an error wrapping ErrClosed;
// it never crashes. A Close racing with a call on the same object from another goroutine
// never waits for it: the object reads as closed at once and the library's handle is freed
// when that call returns. Objects keep what they were made from alive inside the
// library, so they can be closed in any order: closing a dataset right after deriving
// another from it is fine.
//
// # Iteration
//
// Iterators offer two styles. GetNext returns a value the caller owns, or an error that
// satisfies errors.Is(err, ErrOutOfRange) at the end of data. Next/Value/Err is the
// bufio.Scanner style for loops; the value belongs to the iterator and is closed by the
// following Next, which keeps memory bounded without any Close in the loop:
//
//	for it.Next() {
//		step := it.Value()
//		...
//	}
//	if err := it.Err(); err != nil { ... }
//
// Tensors taken from a value (Element.Tensor, PerReplica.Tensor) are independent handles
// and stay valid after the value is closed.
//
// GetNextContext and NextContext take a context.Context: when it is done first, the call
// cancels the iterator and returns ctx.Err() promptly. With Go 1.23 and newer, All returns
// the elements as an iter.Seq2 for a range loop.
//
// # Callbacks
//
// Go functions serve as generators, map and filter functions, dataset functions, value
// functions and replica functions. The library may call them from its own threads, several
// at once for a parallel Map and for Strategy.Run, so they must be safe for concurrent use
// there. A callback that returns an error or panics makes the pipeline fail with its
// message; the process carries on.
//
// # Threads
//
// The library keeps the message of the last failure per OS thread, so every call that can
// fail runs with its goroutine locked to its thread until the message has been read.
// Immutable objects (tensors, elements, datasets, strategies, distributed datasets,
// per-replica values, optionals) may be shared between goroutines; an iterator serves one
// goroutine at a time.
//
// # Building
//
// The package uses cgo and finds the library with pkg-config (the dinput.pc that
// `cmake --install` writes). It refuses to compile against a dinput.h of another major
// version than 0.
package dinput

/*
#cgo pkg-config: dinput
#include "shim.h"
*/
import "C"

// Version constants of the header the binding was compiled against.
const (
	HeaderVersionMajor = int(C.DINPUT_VERSION_MAJOR)
	HeaderVersionMinor = int(C.DINPUT_VERSION_MINOR)
	HeaderVersionPatch = int(C.DINPUT_VERSION_PATCH)
)

// Version returns the run-time version of the library, "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.dinput_version()) }

// VersionNumber returns the run-time version as MAJOR*10000 + MINOR*100 + PATCH.
func VersionNumber() int { return int(C.dinput_version_number()) }

// BuildInfo returns the library's JSON description of its build: version, compiler and
// which optional components (cuda, nccl, ...) are compiled in and usable.
func BuildInfo() string { return C.GoString(C.dinput_build_info()) }

// Sentinel values of the C API.
const (
	// Autotune lets the library choose a prefetch buffer size or a map's parallelism.
	Autotune int64 = -1
	// RepeatForever is the Repeat count that repeats without end.
	RepeatForever int64 = -1
	// ShardHint is the Shard placeholder that the HINT auto-shard policy replaces by
	// (number of workers, worker index).
	ShardHint int64 = -1
	// InfiniteCardinality and UnknownCardinality are the cardinalities besides counts.
	InfiniteCardinality int64 = -1
	UnknownCardinality  int64 = -2
	// UnknownDim is an unknown dimension in a Spec.
	UnknownDim int64 = -1
	// AxisNone reduces element-wise across replicas only (Strategy.Reduce).
	AxisNone int = -1
)

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
