package dinput

// The Go side of the callback trampolines. shim.c adapts each dinput callback signature to
// one of these exported functions; user_data is a handle (registry.go) to the Go function (or
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
		*st = panicked(what, r)
	}
}

// panicked records a recovered panic of a callback as this thread's last error.
func panicked(what string, r any) C.dinput_status_t {
	return fail(&Error{Code: Internal, Message: fmt.Sprintf("%s panicked: %v", what, r)})
}

// handOver gives the library its own handle to a callback's result element. A callback's
// goroutine stays on the library's thread for the whole call, so the C call needs no
// LockOSThread: the last error it sets is on the thread that returns the status.
func handOver(out **C.dinput_element_t, e *Element, what string) C.dinput_status_t {
	if e == nil {
		return fail(invalidArgument("%s returned a nil element without an error", what))
	}
	p := e.ref.acquire()
	defer e.ref.release()
	if p == nil {
		return fail(closedError("Element"))
	}
	return C.dinput_element_ref(out, p)
}

//export dgoFreeHandle
func dgoFreeHandle(h C.uintptr_t) { handles.delete(uintptr(h)) }

//export dgoGeneratorInit
func dgoGeneratorInit(state *C.uintptr_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the generator's start function"
	defer recoverInto(&st, what)
	var iteration any
	switch start := handles.value(uintptr(h)).(type) {
	case func() (GeneratorFunc, error):
		next, err := start()
		if err != nil {
			return fail(err)
		}
		if next == nil {
			return fail(invalidArgument("%s returned a nil GeneratorFunc without an error", what))
		}
		iteration = next
	case func() (SavableGenerator, error):
		g, err := start()
		if err != nil {
			return fail(err)
		}
		if g == nil {
			return fail(invalidArgument("%s returned a nil SavableGenerator without an error", what))
		}
		iteration = g
	}
	// One handle per iteration, deleted by dgoGeneratorFinalize when the iterator goes.
	*state = C.uintptr_t(handles.add(iteration))
	return C.DINPUT_OK
}

//export dgoGeneratorNext
func dgoGeneratorNext(out **C.dinput_element_t, state C.uintptr_t) (st C.dinput_status_t) {
	const what = "the generator function"
	defer recoverInto(&st, what)
	var next GeneratorFunc
	switch v := handles.value(uintptr(state)).(type) {
	case GeneratorFunc:
		next = v
	case SavableGenerator:
		next = v.Next
	}
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
func dgoGeneratorFinalize(state C.uintptr_t) { handles.delete(uintptr(state)) }

//export dgoGeneratorSave
func dgoGeneratorSave(state C.uintptr_t, write C.dinput_state_write_fn, sink unsafe.Pointer) (st C.dinput_status_t) {
	const what = "the generator's SaveState"
	defer recoverInto(&st, what)
	b, err := handles.value(uintptr(state)).(SavableGenerator).SaveState()
	if err != nil {
		return fail(err)
	}
	if len(b) > 0 {
		C.dgo_call_state_write(write, sink, unsafe.Pointer(&b[0]), C.size_t(len(b)))
	}
	return C.DINPUT_OK
}

//export dgoGeneratorRestore
func dgoGeneratorRestore(state C.uintptr_t, data unsafe.Pointer, size C.size_t) (st C.dinput_status_t) {
	const what = "the generator's RestoreState"
	defer recoverInto(&st, what)
	if err := handles.value(uintptr(state)).(SavableGenerator).RestoreState(C.GoBytes(data, C.int(size))); err != nil {
		return fail(err)
	}
	return C.DINPUT_OK
}

// dgoMap gets the input's component count from the shim, and returns the lent input itself
// (when fn does) by storing `in` in *out: the shim then takes the library's reference.
//
//export dgoMap
func dgoMap(out **C.dinput_element_t, in *C.dinput_element_t, n C.size_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the map function"
	arg := lendElement(in, int(n))
	// The library reclaims `in` on return, so the lent handle is taken back (later uses of
	// arg read as closed) exactly once on every path: below, or here on a panic.
	taken := false
	defer func() {
		if !taken {
			arg.ref.take()
		}
		if r := recover(); r != nil { // recover works only when called by the deferred function itself
			st = panicked(what, r)
		}
	}()
	res, err := handles.value(uintptr(h)).(MapFunc)(arg)
	// Taking the handle back also says whether fn closed it: one atomic operation for both.
	lent := arg.ref.take()
	taken = true
	if err != nil {
		return fail(err)
	}
	if res == arg {
		if lent == nil {
			return fail(closedError("Element"))
		}
		*out = in
		return C.DINPUT_OK
	}
	return handOver(out, res, what)
}

//export dgoMapMany
func dgoMapMany(outs **C.dinput_element_t, ins **C.dinput_element_t, count C.size_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the map_many function"
	defer recoverInto(&st, what)
	n := int(count)
	fn := handles.value(uintptr(h)).(MapManyFunc) // one lookup per run, not per element
	// The inputs, lent for the call: one allocation for the run, one C call for their sizes.
	sizes := make([]C.size_t, n)
	C.dgo_element_sizes(ins, count, &sizes[0])
	lent := make([]Element, n)
	args := make([]*Element, n)
	for i, p := range unsafe.Slice(ins, n) {
		lent[i] = Element{n: int(sizes[i]), borrowed: true}
		lent[i].ref.p = p
		args[i] = &lent[i]
	}
	defer func() {
		for i := range lent {
			lent[i].ref.take() // the library reclaims the inputs on return: later uses read as closed
		}
	}()
	res := make([]*Element, n)
	if err := fn(res, args); err != nil {
		return fail(err)
	}
	for i, e := range res {
		if e == nil {
			return fail(invalidArgument("%s returned a nil element at index %d without an error", what, i))
		}
	}
	// Hand the results over. An element the function made becomes the library's as it is
	// (no new reference; the Go Element reads as closed); an element lent to the function
	// (an input returned as is) gets a reference of the library's own, all of them in one C
	// call at the end, so that a failure never leaves a lent handle in outs.
	out := unsafe.Slice(outs, n)
	var lentOut []*C.dinput_element_t
	for i, e := range res {
		if e.borrowed {
			if lentOut == nil {
				lentOut = make([]*C.dinput_element_t, n)
			}
			p := e.ref.peek() // a lent handle is the library's until this returns: no user needed
			if p == nil {
				return fail(closedError(fmt.Sprintf("the element %s returned at index %d", what, i)))
			}
			lentOut[i] = p
			continue
		}
		p := e.ref.take()
		if p == nil {
			return fail(closedError(fmt.Sprintf("the element %s returned at index %d (an element is handed over once: return a Clone to return it twice)", what, i)))
		}
		out[i] = p
	}
	if lentOut != nil {
		// Inside a callback the goroutine already runs on this thread, so the last error the
		// call sets stays with the status returned.
		return C.dgo_element_ref_into(outs, &lentOut[0], count)
	}
	return C.DINPUT_OK
}

//export dgoInterleave
func dgoInterleave(out **C.dinput_dataset_t, in *C.dinput_element_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the interleave function"
	defer recoverInto(&st, what)
	fn := handles.value(uintptr(h)).(InterleaveFunc)
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
	fn := handles.value(uintptr(h)).(FilterFunc)
	arg := borrowElement(in)
	defer arg.ref.take()
	ok, err := fn(arg)
	if err != nil {
		return fail(err)
	}
	*keep = cBool(ok)
	return C.DINPUT_OK
}

//export dgoLength
func dgoLength(length *C.int64_t, in *C.dinput_element_t, h C.uintptr_t) (st C.dinput_status_t) {
	defer recoverInto(&st, "the element length function")
	fn := handles.value(uintptr(h)).(LengthFunc)
	arg := borrowElement(in)
	defer arg.ref.take()
	n, err := fn(arg)
	if err != nil {
		return fail(err)
	}
	*length = C.int64_t(n)
	return C.DINPUT_OK
}

//export dgoDatasetFn
func dgoDatasetFn(out **C.dinput_dataset_t, c *C.dinput_input_context_t, h C.uintptr_t) (st C.dinput_status_t) {
	const what = "the dataset function"
	defer recoverInto(&st, what)
	fn := handles.value(uintptr(h)).(DatasetFunc)
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
	fn := handles.value(uintptr(h)).(ValueFunc)
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
	fn := handles.value(uintptr(h)).(ReplicaFunc)
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
