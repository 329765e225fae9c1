"""dinput's status codes as Python exceptions.

Every failing C call raises the subclass of DinputError for its code. The exception carries
the code (`code`, an int, and `code_name`, e.g. "NOT_FOUND") and dinput's message, which is
read right after the failing call on the same thread (the C library keeps one last error per
thread, so reading it later or elsewhere could give another call's message).
"""

from . import _lib

_L = _lib.lib


class DinputError(Exception):
    """A dinput call failed. Subclasses are named after the status codes."""

    code = 2
    code_name = "UNKNOWN"

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code
            self.code_name = _L.dinput_status_name(code).decode()
        self.message = message

    def __str__(self):
        return "%s: %s" % (self.code_name, self.message)


def _make(name, code, *bases):
    code_name = _L.dinput_status_name(code).decode()
    return type(name, bases or (DinputError,),
                {"code": code, "code_name": code_name,
                 "__doc__": "dinput status %s (%d)." % (code_name, code)})


# OUT_OF_RANGE (end of data) is also a StopIteration-like condition for callers, but it stays
# a DinputError: iteration in Python turns it into StopIteration itself.
CancelledError = _make("CancelledError", 1)
UnknownError = _make("UnknownError", 2)
InvalidArgumentError = _make("InvalidArgumentError", 3, DinputError, ValueError)
DeadlineExceededError = _make("DeadlineExceededError", 4, DinputError, TimeoutError)
NotFoundError = _make("NotFoundError", 5, DinputError, FileNotFoundError)
AlreadyExistsError = _make("AlreadyExistsError", 6, DinputError, FileExistsError)
PermissionDeniedError = _make("PermissionDeniedError", 7, DinputError, PermissionError)
ResourceExhaustedError = _make("ResourceExhaustedError", 8, DinputError, MemoryError)
FailedPreconditionError = _make("FailedPreconditionError", 9)
AbortedError = _make("AbortedError", 10)
OutOfRangeError = _make("OutOfRangeError", 11)
UnimplementedError = _make("UnimplementedError", 12, DinputError, NotImplementedError)
InternalError = _make("InternalError", 13)
UnavailableError = _make("UnavailableError", 14)
DataLossError = _make("DataLossError", 15)
UnauthenticatedError = _make("UnauthenticatedError", 16)

_BY_CODE = {c.code: c for c in [
    CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError, NotFoundError,
    AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
    AbortedError, OutOfRangeError, UnimplementedError, InternalError, UnavailableError,
    DataLossError, UnauthenticatedError]}


def error_class(code):
    """The exception class for a status code (DinputError for codes dinput may add later)."""
    return _BY_CODE.get(code, DinputError)


def error(code):
    """The exception for a failed call's status, with the thread's last error message."""
    msg = _L.dinput_last_error_message()
    msg = msg.decode("utf-8", "replace") if msg else ""
    cls = _BY_CODE.get(code)
    if cls is None:
        return DinputError(msg, code)
    e = cls.__new__(cls)
    DinputError.__init__(e, msg)
    return e


def check(status):
    """Raises the exception for a non-zero status (to be called right after the C call)."""
    if status != 0:
        raise error(status)


def status_of(exc):
    """The status code a Python exception raised inside a callback is reported with."""
    if isinstance(exc, DinputError):
        return exc.code
    if isinstance(exc, (ValueError, TypeError, IndexError, KeyError)):
        return 3
    if isinstance(exc, FileNotFoundError):
        return 5
    if isinstance(exc, PermissionError):
        return 7
    if isinstance(exc, MemoryError):
        return 8
    return 2
