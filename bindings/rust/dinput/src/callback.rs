//! The boundary between library callbacks and Rust closures.
//!
//! Every C callback of this crate is an `extern "C"` trampoline, generic over the closure
//! type, that finds its closure behind `user_data` and runs it through [`call`]. A closure's
//! `Err` and a closure's panic both become a failing status *after* `dinput_error_set` has
//! recorded the message on the calling (possibly library) thread, which is where dinput.h
//! says the library reads it. A panic therefore never unwinds into C++ (that would abort
//! the process): the pipeline fails with the panic message and the process goes on.
//!
//! Closures kept by datasets are boxed and released through `free_user_data`
//! ([`drop_boxed`]) when the library drops its last reference, possibly on a library thread;
//! hence their `Send` bounds. Closures used only during one call (dataset_fn, value_fn, run)
//! are passed by reference, without `'static`.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use dinput_sys as sys;

use crate::error::{set_last_error, Code, Result};

/// The text of a panic payload (`panic!("...")` gives a `&str` or a `String`).
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    }
}

/// Runs one invocation of a callback body. `Ok` passes through; an `Err` or a panic sets this
/// thread's last error (code and message) and returns the status the trampoline must return.
///
/// `AssertUnwindSafe`: after a panic the closure may hold broken invariants, but the library
/// finishes the iterator with the error, and the closure is only used again if the program
/// starts a new iteration, exactly as with a panicking closure given to `std::thread::spawn`.
pub(crate) fn call<T>(what: &str, body: impl FnOnce() -> Result<T>) -> Result<T, sys::dinput_status_t> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => {
            set_last_error(error.code, &error.message);
            Err(error.code.raw())
        }
        Err(payload) => {
            let message = format!("{what} panicked: {}", panic_message(&*payload));
            // Dropping the payload runs foreign Drop code, which could panic in turn.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            set_last_error(Code::Unknown, &message);
            Err(Code::Unknown.raw())
        }
    }
}

/// `free_user_data` for a `Box<T>` passed as `user_data` with `Box::into_raw`.
///
/// # Safety
/// `user_data` must come from `Box::<T>::into_raw` and be released only here, once.
pub(crate) unsafe extern "C" fn drop_boxed<T>(user_data: *mut c_void) {
    // A panicking Drop must not unwind into the library.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: guaranteed by the caller (the library calls free_user_data exactly once).
        drop(unsafe { Box::from_raw(user_data as *mut T) });
    }));
}

/// Writes an owned handle into a callback's `out` and returns DINPUT_OK, or returns the
/// failing status.
///
/// # Safety
/// `out` must be the valid out-parameter the library passed to the callback.
pub(crate) unsafe fn deliver<H>(
    out: *mut *mut H,
    result: Result<*mut H, sys::dinput_status_t>,
) -> sys::dinput_status_t {
    match result {
        Ok(handle) => {
            // SAFETY: guaranteed by the caller.
            unsafe { *out = handle };
            sys::DINPUT_OK
        }
        Err(status) => status,
    }
}
