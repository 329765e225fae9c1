//! Status codes and errors.
//!
//! Every fallible C call returns a `dinput_status_t`; on failure the message is kept in a
//! thread-local slot of the library *until the next failing call on that thread*. The
//! wrappers therefore read it right after the failing call, on the same thread, before any
//! other dinput call ([`check`]), and copy it into the returned [`Error`].

use std::ffi::{CStr, CString};
use std::fmt;
use std::ptr::NonNull;

use dinput_sys as sys;

/// The canonical status codes (TensorFlow's / absl's numbers), without `OK`: an [`Error`]
/// always has a failing code. A code this binding does not know (the C enum is append-only)
/// reads as [`Code::Unknown`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[repr(i32)]
pub enum Code {
    Cancelled = sys::DINPUT_CANCELLED,
    Unknown = sys::DINPUT_UNKNOWN,
    InvalidArgument = sys::DINPUT_INVALID_ARGUMENT,
    DeadlineExceeded = sys::DINPUT_DEADLINE_EXCEEDED,
    NotFound = sys::DINPUT_NOT_FOUND,
    AlreadyExists = sys::DINPUT_ALREADY_EXISTS,
    PermissionDenied = sys::DINPUT_PERMISSION_DENIED,
    ResourceExhausted = sys::DINPUT_RESOURCE_EXHAUSTED,
    FailedPrecondition = sys::DINPUT_FAILED_PRECONDITION,
    Aborted = sys::DINPUT_ABORTED,
    /// End of data, as in TensorFlow.
    OutOfRange = sys::DINPUT_OUT_OF_RANGE,
    Unimplemented = sys::DINPUT_UNIMPLEMENTED,
    Internal = sys::DINPUT_INTERNAL,
    Unavailable = sys::DINPUT_UNAVAILABLE,
    DataLoss = sys::DINPUT_DATA_LOSS,
    Unauthenticated = sys::DINPUT_UNAUTHENTICATED,
}

impl Code {
    /// The code of a C status; `None` for `DINPUT_OK`, [`Code::Unknown`] for values this
    /// binding does not know.
    pub fn from_raw(status: sys::dinput_status_t) -> Option<Code> {
        Some(match status {
            sys::DINPUT_OK => return None,
            sys::DINPUT_CANCELLED => Code::Cancelled,
            sys::DINPUT_INVALID_ARGUMENT => Code::InvalidArgument,
            sys::DINPUT_DEADLINE_EXCEEDED => Code::DeadlineExceeded,
            sys::DINPUT_NOT_FOUND => Code::NotFound,
            sys::DINPUT_ALREADY_EXISTS => Code::AlreadyExists,
            sys::DINPUT_PERMISSION_DENIED => Code::PermissionDenied,
            sys::DINPUT_RESOURCE_EXHAUSTED => Code::ResourceExhausted,
            sys::DINPUT_FAILED_PRECONDITION => Code::FailedPrecondition,
            sys::DINPUT_ABORTED => Code::Aborted,
            sys::DINPUT_OUT_OF_RANGE => Code::OutOfRange,
            sys::DINPUT_UNIMPLEMENTED => Code::Unimplemented,
            sys::DINPUT_INTERNAL => Code::Internal,
            sys::DINPUT_UNAVAILABLE => Code::Unavailable,
            sys::DINPUT_DATA_LOSS => Code::DataLoss,
            sys::DINPUT_UNAUTHENTICATED => Code::Unauthenticated,
            _ => Code::Unknown,
        })
    }

    /// The C value.
    pub fn raw(self) -> sys::dinput_status_t {
        self as sys::dinput_status_t
    }

    /// The library's name of the code, e.g. `"INVALID_ARGUMENT"`.
    pub fn name(self) -> &'static str {
        // SAFETY: dinput_status_name accepts any value and returns a static NUL-terminated
        // ASCII string.
        unsafe { static_str(sys::dinput_status_name(self.raw())) }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed dinput call: its status code and the library's message (which names the
/// function, argument, file or offset at fault).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: Code,
    pub message: String,
}

/// `Result<T, dinput::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error made by Rust code, e.g. returned from a callback: the pipeline fails with
    /// this code and message.
    pub fn new(code: Code, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    pub fn code(&self) -> Code {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// True for the end of data (`OUT_OF_RANGE`).
    pub fn is_out_of_range(&self) -> bool {
        self.code == Code::OutOfRange
    }

    /// The error of the call that just returned `status` on this thread. Must run before any
    /// other dinput call on the thread, which could replace the message.
    pub(crate) fn from_last(status: sys::dinput_status_t) -> Error {
        // SAFETY: returns a thread-local NUL-terminated string valid until the next dinput
        // call on this thread; it is copied before any other call.
        let message = unsafe { owned_str(sys::dinput_last_error_message()) };
        let code = Code::from_raw(status).unwrap_or(Code::Unknown);
        let message = if message.is_empty() { format!("a dinput call failed with {}", code.name()) } else { message };
        Error { code, message }
    }

    pub(crate) fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(Code::InvalidArgument, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// The last failure of a dinput call made on this thread, or `None`. Successful calls and
/// closures the library runs on this thread (a sequential map, `run`'s replica 0, ...) leave
/// it alone. Mostly useful for diagnostics: every wrapper already returns its error.
pub fn last_error() -> Option<Error> {
    // SAFETY: no preconditions; returns this thread's code.
    let code = unsafe { sys::dinput_last_error_code() };
    Code::from_raw(code).map(|_| Error::from_last(code))
}

/// Clears this thread's last error.
pub fn clear_last_error() {
    // SAFETY: no preconditions.
    unsafe { sys::dinput_error_clear() }
}

/// Sets this thread's last error: what a failing callback does before returning its status.
pub(crate) fn set_last_error(code: Code, message: &str) {
    let message = c_string_lossy(message);
    // SAFETY: message is a valid NUL-terminated string for the duration of the call; the
    // library copies it.
    unsafe { sys::dinput_error_set(code.raw(), message.as_ptr()) }
}

/// `Ok(())` for `DINPUT_OK`, else the error of the call that just failed on this thread.
#[inline]
pub(crate) fn check(status: sys::dinput_status_t) -> Result<()> {
    if status == sys::DINPUT_OK {
        Ok(())
    } else {
        Err(Error::from_last(status))
    }
}

/// Calls a constructor that returns a handle through `out` and checks it.
#[inline]
pub(crate) fn out_handle<T>(call: impl FnOnce(*mut *mut T) -> sys::dinput_status_t) -> Result<NonNull<T>> {
    let mut out: *mut T = std::ptr::null_mut();
    check(call(&mut out))?;
    NonNull::new(out).ok_or_else(|| Error::new(Code::Internal, "dinput returned OK without a handle"))
}

/// A count, size or index for a C `int64_t` parameter. The safe layer takes these as
/// `usize`; one above `i64::MAX` would wrap to a negative, special value in C (-1 is "all" or
/// AUTOTUNE in several calls), so it is INVALID_ARGUMENT naming `what` instead.
pub(crate) fn to_i64(n: usize, what: &str) -> Result<i64> {
    i64::try_from(n).map_err(|_| Error::invalid_argument(format!("{what} {n}: more than int64 holds")))
}

/// As [`to_i64`], for a C `int` parameter (workers, replicas, devices).
pub(crate) fn to_c_int(n: usize, what: &str) -> Result<std::ffi::c_int> {
    std::ffi::c_int::try_from(n)
        .map_err(|_| Error::invalid_argument(format!("{what} {n}: more than the C API's int holds")))
}

/// A count, size or index the library returns as a signed C integer, as `usize`. The getters
/// wrapped with it are never negative for a live handle (they are -1 or 0 only for NULL);
/// a negative value would read as 0 rather than as a huge count.
pub(crate) fn to_usize<T: TryInto<usize>>(n: T) -> usize {
    n.try_into().unwrap_or(0)
}

/// A C string for the library. Interior NUL bytes cannot be passed, so they are reported as
/// INVALID_ARGUMENT naming `what`.
pub(crate) fn c_string(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::invalid_argument(format!("{what} contains a NUL byte: {s:?}")))
}

/// A C string for messages: interior NULs become U+FFFD rather than cutting the message.
pub(crate) fn c_string_lossy(s: &str) -> CString {
    CString::new(s.replace('\0', "\u{fffd}")).expect("NULs were replaced")
}

/// Copies a C string (NULL reads as "").
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string valid for the call.
pub(crate) unsafe fn owned_str(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Borrows a C string for `'a` (NULL and invalid UTF-8 read as "").
///
/// # Safety
/// `p` must be NULL or point to a NUL-terminated string that stays valid and unchanged
/// for `'a`.
pub(crate) unsafe fn borrowed_str<'a>(p: *const std::ffi::c_char) -> &'a str {
    if p.is_null() {
        return "";
    }
    // SAFETY: guaranteed by the caller. The library's names and JSON texts are ASCII/UTF-8.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// # Safety
/// As [`borrowed_str`], for a string valid for the whole program.
pub(crate) unsafe fn static_str(p: *const std::ffi::c_char) -> &'static str {
    // SAFETY: guaranteed by the caller.
    unsafe { borrowed_str(p) }
}
