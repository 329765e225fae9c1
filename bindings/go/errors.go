package dinput

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"runtime"
)

// Code is a status code of the library: TensorFlow's (and absl's) canonical codes.
type Code int

// The status codes, with the numbers of dinput.h.
const (
	OK                 Code = 0
	Cancelled          Code = 1
	Unknown            Code = 2
	InvalidArgument    Code = 3
	DeadlineExceeded   Code = 4
	NotFound           Code = 5
	AlreadyExists      Code = 6
	PermissionDenied   Code = 7
	ResourceExhausted  Code = 8
	FailedPrecondition Code = 9
	Aborted            Code = 10
	OutOfRange         Code = 11
	Unimplemented      Code = 12
	Internal           Code = 13
	Unavailable        Code = 14
	DataLoss           Code = 15
	Unauthenticated    Code = 16
)

// String returns the library's name of the code, e.g. "INVALID_ARGUMENT".
func (c Code) String() string {
	if !c.valid() {
		return "UNKNOWN_STATUS"
	}
	// dinput_status_name returns static strings, so this is safe from any thread and needs
	// no locking; it also keeps the names identical to the C API's.
	return C.GoString(C.dinput_status_name(C.dinput_status_t(c)))
}

// Error is an error reported by the library (or by the binding on its behalf).
type Error struct {
	Code    Code
	Message string
	// cause is what the error wraps, e.g. ErrClosed for a use after Close.
	cause error
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.String()
	}
	return e.Code.String() + ": " + e.Message
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, ErrOutOfRange) holds for every OUT_OF_RANGE error whatever its message.
// It also matches the standard library's file errors, so that code written for os and
// io/fs works unchanged: NOT_FOUND is fs.ErrNotExist, PERMISSION_DENIED is
// fs.ErrPermission and ALREADY_EXISTS is fs.ErrExist.
func (e *Error) Is(target error) bool {
	switch target {
	case fs.ErrNotExist:
		return e.Code == NotFound
	case fs.ErrPermission:
		return e.Code == PermissionDenied
	case fs.ErrExist:
		return e.Code == AlreadyExists
	}
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Unwrap returns the error this one wraps (ErrClosed for a closed object), if any.
func (e *Error) Unwrap() error { return e.cause }

// Sentinels for errors.Is: each matches every *Error with its code.
var (
	ErrCancelled          = &Error{Code: Cancelled}
	ErrUnknown            = &Error{Code: Unknown}
	ErrInvalidArgument    = &Error{Code: InvalidArgument}
	ErrDeadlineExceeded   = &Error{Code: DeadlineExceeded}
	ErrNotFound           = &Error{Code: NotFound}
	ErrAlreadyExists      = &Error{Code: AlreadyExists}
	ErrPermissionDenied   = &Error{Code: PermissionDenied}
	ErrResourceExhausted  = &Error{Code: ResourceExhausted}
	ErrFailedPrecondition = &Error{Code: FailedPrecondition}
	ErrAborted            = &Error{Code: Aborted}
	ErrOutOfRange         = &Error{Code: OutOfRange}
	ErrUnimplemented      = &Error{Code: Unimplemented}
	ErrInternal           = &Error{Code: Internal}
	ErrUnavailable        = &Error{Code: Unavailable}
	ErrDataLoss           = &Error{Code: DataLoss}
	ErrUnauthenticated    = &Error{Code: Unauthenticated}
)

// ErrClosed is wrapped by the error of any use of an object after its Close (or of a nil
// object, or of a callback argument after the callback returned). Such errors are *Error
// with code FailedPrecondition, so both errors.Is(err, ErrClosed) and
// errors.Is(err, ErrFailedPrecondition) hold.
var ErrClosed = errors.New("dinput: object is closed")

func closedError(what string) error {
	return &Error{Code: FailedPrecondition, Message: what + " is closed (or nil)", cause: ErrClosed}
}

func invalidArgument(format string, args ...any) error {
	return &Error{Code: InvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// lastError turns a failing status into an *Error with this thread's last message. It must
// run on the thread that made the failing call: callers hold runtime.LockOSThread.
func lastError(st C.dinput_status_t) error {
	if st == C.DINPUT_OK {
		return nil
	}
	return &Error{Code: Code(st), Message: C.GoString(C.dinput_last_error_message())}
}

// call runs one fallible C call with the goroutine locked to its OS thread, so that the
// thread-local last-error message read afterwards is the one this call set; without the
// lock the scheduler could move the goroutine to another thread in between.
func call(f func() C.dinput_status_t) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return lastError(f())
}
