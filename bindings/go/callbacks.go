package dinput

// The Go side of the callback trampolines. shim.c adapts each dinput callback signature to
// one of these exported functions; user_data is a runtime/cgo.Handle to the Go function (or
// to the per-iteration GeneratorFunc). The library may call them from its own threads; cgo
// runs the Go code on that thread, so dinput_error_set below reaches the right thread-local
// slot without any locking.
//
// Every trampoline recovers panics: a panic must not unwind through C frames (that would
// kill the process), so it becomes a failing status with the panic's message, which the
// library hands to the caller of GetNext/Run/....

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"runtime/cgo"
	"unsafe"
)

// fail records err as this thread's last error and returns its status. An *Error keeps its
// code (and, when returned as is, its bare message, so that the caller does not see the code
// name twice); any other error is UNKNOWN with the error's text.
func fail(err error) C.dinput_status_t {
	code, msg := Unknown, err.Error()
	var de *Error
	if errors.As(err, &de) && de.Code != OK && de.Code.valid() {
		code = de.Code
		if de == err && de.Message != "" {
			msg = de.Message
		}
	}
	cmsg := C.CString(msg)
	defer C.free(unsafe.Pointer(cmsg))
	C.dinput_error_set(C.dinput_status_t(code), cmsg)
	return C.dinput_status_t(code)
}

// recoverInto, deferred first thing in a trampoline, turns a panic into a failing status.
func recoverInto(st *C.dinput_status_t, what string) {
	if r := recover(); r != nil {
		*st = fail(&Error{Code: Internal, Message: fmt.Sprintf("%s panicked: %v", what, r)})
	}
}

// handOver gives the library its own handle to a callback's result element.
func handOver(out **C.dinput_element_t, e *Element, what string) C.dinput_status_t {
	if e == nil {
		return fail(invalidArgument("%s returned a nil element without an error", what))
	}
	p, err := e.cloneHandle()
	if err != nil {
		return fail(err)
	}
	*out = p
	return C.DINPUT_OK
}

//export dgoFreeHandle
func dgoFreeHandle(h C.uintptr_t) { cgo.Handle(h).Delete() }

//export dgoGeneratorInit
func dgoGeneratorInit(state *C.uintptr_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the generator's start function"
	defer recoverInto(&st, what)
	start := cgo.Handle(h).Value().(func() (GeneratorFunc, error))
	next, err := start()
	if err != nil {
		return fail(err)
	}
	if next == nil {
		return fail(invalidArgument("%s returned a nil GeneratorFunc without an error", what))
	}
	// One handle per iteration, deleted by dgoGeneratorFinalize when the iterator goes.
	*state = C.uintptr_t(cgo.NewHandle(next))
	return C.DINPUT_OK
}

//export dgoGeneratorNext
func dgoGeneratorNext(out **C.dinput_element_t, state C.uintptr_t) (st C.dinput_status_t) {
	const what = "the generator function"
	defer recoverInto(&st, what)
	next := cgo.Handle(state).Value().(GeneratorFunc)
	e, err := next()
	if errors.Is(err, io.EOF) || errors.Is(err, ErrOutOfRange) {
		return C.DINPUT_OUT_OF_RANGE
	}
	if err != nil {
		return fail(err)
	}
	return handOver(out, e, what)
}

//export dgoGeneratorFinalize
func dgoGeneratorFinalize(state C.uintptr_t) { cgo.Handle(state).Delete() }

//export dgoMap
func dgoMap(out **C.dinput_element_t, in *C.dinput_element_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the map function"
	defer recoverInto(&st, what)
	fn := cgo.Handle(h).Value().(MapFunc)
	arg := borrowElement(in)
	defer arg.ref.take() // the library reclaims `in` on return: later uses read as closed
	res, err := fn(arg)
	if err != nil {
		return fail(err)
	}
	return handOver(out, res, what)
}

//export dgoInterleave
func dgoInterleave(out **C.dinput_dataset_t, in *C.dinput_element_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the interleave function"
	defer recoverInto(&st, what)
	fn := cgo.Handle(h).Value().(InterleaveFunc)
	arg := borrowElement(in)
	defer arg.ref.take()
	ds, err := fn(arg)
	if err != nil {
		return fail(err)
	}
	return handOverDataset(out, ds, what)
}

//export dgoFilter
func dgoFilter(keep *C.int, in *C.dinput_element_t, h C.uintptr_t) (st C.dinput_status_t) {
	defer recoverInto(&st, "the filter function")
	fn := cgo.Handle(h).Value().(FilterFunc)
	arg := borrowElement(in)
	defer arg.ref.take()
	ok, err := fn(arg)
	if err != nil {
		return fail(err)
	}
	*keep = cBool(ok)
	return C.DINPUT_OK
}

//export dgoDatasetFn
func dgoDatasetFn(out **C.dinput_dataset_t, c *C.dinput_input_context_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the dataset function"
	defer recoverInto(&st, what)
	fn := cgo.Handle(h).Value().(DatasetFunc)
	ctx := &InputContext{
		NumInputPipelines: int(C.dinput_input_context_num_input_pipelines(c)),
		InputPipelineID:   int(C.dinput_input_context_input_pipeline_id(c)),
		NumReplicasInSync: int(C.dinput_input_context_num_replicas_in_sync(c)),
	}
	ctx.ref.p = c
	defer ctx.ref.take()
	ds, err := fn(ctx)
	if err != nil {
		return fail(err)
	}
	return handOverDataset(out, ds, what)
}

// handOverDataset gives the library, in *out, a handle of its own to the dataset a callback
// returned: the library takes ownership of what it gets, while the Go Dataset stays the
// caller's.
func handOverDataset(out **C.dinput_dataset_t, ds *Dataset, what string) C.dinput_status_t {
	if ds == nil {
		return fail(invalidArgument("%s returned a nil dataset without an error", what))
	}
	if err := callOn(ds, func(p *C.dinput_dataset_t) C.dinput_status_t { return C.dinput_dataset_ref(out, p) }); err != nil {
		return fail(err)
	}
	return C.DINPUT_OK
}

//export dgoValueFn
func dgoValueFn(out **C.dinput_element_t, c *C.dinput_value_context_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the value function"
	defer recoverInto(&st, what)
	fn := cgo.Handle(h).Value().(ValueFunc)
	res, err := fn(ValueContext{
		ReplicaIDInSyncGroup: int(C.dinput_value_context_replica_id_in_sync_group(c)),
		NumReplicasInSync:    int(C.dinput_value_context_num_replicas_in_sync(c)),
	})
	if err != nil {
		return fail(err)
	}
	return handOver(out, res, what)
}

//export dgoReplicaFn
func dgoReplicaFn(out **C.dinput_element_t, c *C.dinput_replica_context_t, args *C.dinput_element_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the replica function"
	defer recoverInto(&st, what)
	fn := cgo.Handle(h).Value().(ReplicaFunc)
	ctx := ReplicaContext{
		ReplicaIDInSyncGroup: int(C.dinput_replica_context_replica_id_in_sync_group(c)),
		NumReplicasInSync:    int(C.dinput_replica_context_num_replicas_in_sync(c)),
		Device:               C.GoString(C.dinput_replica_context_device(c)),
	}
	var arg *Element
	if args != nil {
		arg = borrowElement(args)
		defer arg.ref.take()
	}
	res, err := fn(ctx, arg)
	if err != nil {
		return fail(err)
	}
	return handOver(out, res, what)
}
