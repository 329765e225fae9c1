package dinput

// The library's threads, started by Go.
//
// The library runs pipelines on threads of its own, and calls Go callbacks (map functions,
// generators, dataset functions, ...) from them. Go 1.19 pays a few microseconds per call
// that arrives on a thread Go did not create: cgo attaches the thread to the runtime for the
// call and detaches it afterwards. So this package has the library start its threads through
// Go (dinput_set_thread_launcher): each is a goroutine locked to its OS thread that calls the
// thread's body in C and stays there until the library is done with it. A callback from such
// a thread enters Go as cheaply as a return from any cgo call.

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

func init() { C.dgo_install_thread_launcher() }

// What the launcher started: a count, and the OS thread ids of the threads whose bodies are
// running (both read by the tests, which check that callbacks arrive on these threads).
var (
	launchedThreads atomic.Int64
	runningThreads  sync.Map // thread id (int) -> struct{}
)

//export dgoLaunchThread
func dgoLaunchThread(body C.dinput_thread_body_fn, arg unsafe.Pointer) C.int {
	go func() {
		// Still locked when the body returns, the goroutine takes its thread with it when it
		// exits: the thread ends (and the library's per-thread state with it) rather than
		// going back to Go's pool with that state.
		runtime.LockOSThread()
		tid := syscall.Gettid()
		runningThreads.Store(tid, struct{}{})
		C.dgo_run_thread_body(body, arg)
		runningThreads.Delete(tid)
	}()
	launchedThreads.Add(1)
	return 0
}
