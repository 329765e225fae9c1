"""Strings the library returns (statistics and traces, docs/statistics.md)."""

from ctypes import byref, c_void_p, string_at

from . import _lib
from .errors import check

_L = _lib.lib


def take_string(fn, *args):
    """Calls fn(&out, *args), copies the string it returned and frees it."""
    out = c_void_p()
    try:
        check(fn(byref(out), *args))
        return string_at(out.value).decode() if out.value else ""
    finally:
        if out.value:
            _L.dinput_string_free(out)
