"""Tensors and elements: conversion from Python/numpy values and zero-copy export via DLPack."""

import ctypes
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char_p, c_int, c_int32, c_int64,
                    c_size_t, c_uint8, c_uint16, c_uint64, c_void_p, py_object)

from . import _lib
from .errors import check

_L = _lib.lib

# dinput dtype numbers (dinput_dtype_t) by name, and the numpy names they correspond to.
DTYPES = {"bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "uint8": 6, "uint16": 7,
          "uint32": 8, "uint64": 9, "float16": 10, "bfloat16": 11, "float32": 12,
          "float64": 13, "bytes": 14}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
BYTES = 14

DEVICE_CPU, DEVICE_CUDA, DEVICE_CUDA_HOST = 1, 2, 3


# --- DLPack (dlpack.h 0.x): only what the capsule protocol needs -------------------------
class _DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class _DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class _DLTensor(Structure):
    _fields_ = [("data", c_void_p), ("device", _DLDevice), ("ndim", c_int32),
                ("dtype", _DLDataType), ("shape", POINTER(c_int64)),
                ("strides", POINTER(c_int64)), ("byte_offset", c_uint64)]


class _DLManagedTensor(Structure):
    pass


_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", c_void_p),
                             ("deleter", CFUNCTYPE(None, POINTER(_DLManagedTensor)))]

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
_api.PyCapsule_IsValid.restype = c_int
_api.PyCapsule_IsValid.argtypes = [c_void_p, c_char_p]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [c_void_p, c_char_p]

# The capsule names must outlive every capsule: module-level constants.
_DLTENSOR = b"dltensor"


@CFUNCTYPE(None, c_void_p)
def _capsule_destructor(capsule):
    # A consumer renames the capsule to "used_dltensor" and then owns the tensor; only a
    # capsule nobody consumed still holds it and must release it here.
    if _api.PyCapsule_IsValid(capsule, _DLTENSOR):
        managed = ctypes.cast(_api.PyCapsule_GetPointer(capsule, _DLTENSOR),
                              POINTER(_DLManagedTensor))
        if managed.contents.deleter:
            managed.contents.deleter(managed)


_DESTRUCTOR = ctypes.cast(_capsule_destructor, c_void_p)


def _np():
    import numpy
    return numpy


class Tensor:
    """A handle to an immutable dinput tensor.

    `numpy()` gives a numpy array (zero-copy for fixed-size dtypes); `numpy.from_dlpack(t)`
    and `torch.from_dlpack(t)` take the tensor's memory without copying it, and the memory
    stays valid as long as the array (or torch tensor) lives, whatever happens to `t`.
    """

    __slots__ = ("_h", "__weakref__")

    def __init__(self, handle):
        self._h = handle  # owned

    @classmethod
    def _borrowed(cls, ptr):
        out = c_void_p()
        check(_L.dinput_tensor_ref(byref(out), ptr))
        return cls(out)

    @classmethod
    def from_value(cls, value):
        """A tensor holding a copy of a numpy array, a scalar or a (nested) list; str and
        bytes values (or arrays of them) make a bytes tensor."""
        return cls(_new_tensor(value))

    @classmethod
    def pinned(cls, value):
        """Like from_value, in page-locked host memory from dinput's pool (fast copies to
        GPUs). FailedPreconditionError without a usable CUDA driver and device."""
        return cls(_new_tensor(value, _L.dinput_tensor_new_pinned))

    def cuda_wait(self, stream=0):
        """Orders the work of CUDA stream `stream` (a cudaStream_t as an int, such as
        torch.cuda.current_stream().cuda_stream; 0: the legacy default stream) after the
        copy that fills this CUDA tensor. Nothing to do for host tensors."""
        check(_L.dinput_tensor_cuda_wait(self._handle(), stream or None))

    def cuda_record_stream(self, stream):
        """Tells dinput that `stream` reads this CUDA tensor, so that its memory is reused
        only after that stream's work so far has run."""
        check(_L.dinput_tensor_cuda_record_stream(self._handle(), stream or None))

    def cuda_ready_event(self):
        """The cudaEvent_t (an int) recorded after the copy that fills this CUDA tensor, or
        None. Borrowed: valid while this handle lives."""
        return _L.dinput_tensor_cuda_ready_event(self._handle())

    def close(self):
        """Releases this handle (idempotent). Arrays exported from it stay valid."""
        h, self._h = self._h, None
        if h:
            _L.dinput_tensor_free(h)

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the module globals may be gone
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _handle(self):
        if not self._h:
            raise ValueError("dinput: the tensor is closed")
        return self._h

    @property
    def dtype(self):
        """The dtype's name: "int64", "float32", "bytes", ..."""
        return DTYPE_NAMES.get(_L.dinput_tensor_dtype(self._handle()), "invalid")

    @property
    def shape(self):
        h = self._handle()
        rank = _L.dinput_tensor_rank(h)
        dims = _L.dinput_tensor_shape(h)
        return tuple(dims[i] for i in range(rank))

    @property
    def device_type(self):
        """DLPack's device type: 1 CPU, 2 CUDA, 3 CUDA host (page-locked)."""
        return _L.dinput_tensor_device_type(self._handle())

    def data_ptr(self):
        """The address of the tensor's data (None for bytes tensors)."""
        return _L.dinput_tensor_data(self._handle())

    def __dlpack_device__(self):
        h = self._handle()
        t = _L.dinput_tensor_device_type(h)
        return (t, max(_L.dinput_tensor_device_index(h), 0) if t == DEVICE_CUDA else 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        # Exported as an unversioned "dltensor" capsule, which every DLPack consumer takes.
        # CUDA tensors: DLPack's `stream` is the consumer's stream (1 and 2 are CUDA's legacy
        # and per-thread default streams, which are also their cudaStream_t values; -1: no
        # synchronization wanted); its work is ordered after the copy that fills the tensor.
        if copy:
            raise BufferError("dinput: __dlpack__ exports without copying (copy=True refused)")
        h = self._handle()
        if _L.dinput_tensor_device_type(h) == DEVICE_CUDA and stream != -1:
            check(_L.dinput_tensor_cuda_wait(h, stream or None))
        managed = c_void_p()
        check(_L.dinput_tensor_to_dlpack(byref(managed), h))
        return _api.PyCapsule_New(managed, _DLTENSOR, _DESTRUCTOR)

    def numpy(self):
        """The tensor as a numpy array. Fixed-size dtypes share the tensor's memory (the array
        is read-only by contract: dinput tensors are immutable); bool comes as numpy bool;
        bytes tensors give bytes (rank 0) or an object array of bytes. bfloat16 has no numpy
        dtype: use torch.from_dlpack."""
        np = _np()
        h = self._handle()
        code = _L.dinput_tensor_dtype(h)
        if code == BYTES:
            # One call per string (the C API has no bulk view of a bytes tensor), so the
            # loop keeps everything it touches in locals.
            n = _L.dinput_tensor_num_elements(h)
            p, ln = c_void_p(), c_size_t()
            rp, rln = byref(p), byref(ln)
            view, string_at = _L.dinput_tensor_string_view, ctypes.string_at
            vals = [None] * n
            for i in range(n):
                st = view(rp, rln, h, i)
                if st:
                    check(st)
                vals[i] = string_at(p.value, ln.value)
            if not self.shape:
                return vals[0]
            arr = np.empty(n, dtype=object)
            arr[:] = vals
            return arr.reshape(self.shape)
        if code == DTYPES["bfloat16"]:
            raise TypeError("dinput: bfloat16 has no numpy dtype; use torch.from_dlpack(tensor)")
        if _L.dinput_tensor_device_type(h) == DEVICE_CUDA:
            host = c_void_p()
            check(_L.dinput_tensor_to_host(byref(host), h))
            return Tensor(host).numpy()
        arr = np.from_dlpack(self)
        if code == DTYPES["bool"]:
            arr = arr.view(np.bool_)  # exported as uint8 (DLPack before 0.8 has no bool)
        return arr

    def __repr__(self):
        if not self._h:
            return "<dinput.Tensor closed>"
        return "<dinput.Tensor %s %s>" % (self.dtype, list(self.shape))


def _new_tensor(value, new_fixed=None):
    """A new tensor handle (owned) with a copy of value (see Tensor.from_value)."""
    np = _np()
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    ndim = arr.ndim
    shape = (c_int64 * ndim)(*arr.shape) if ndim else None
    out = c_void_p()
    code = _codes(np).get(arr.dtype)
    if code is None and arr.dtype.kind in "biuf" and not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))  # dinput holds native byte order
        code = _codes(np).get(arr.dtype)
    if code is None:
        if arr.dtype.kind not in "SUO":
            raise TypeError("dinput: numpy dtype %s has no dinput dtype" % arr.dtype)
        flat = [x.encode() if isinstance(x, str) else bytes(x) for x in arr.reshape(-1).tolist()]
        strs = (c_char_p * max(len(flat), 1))(*flat)
        lens = (c_size_t * max(len(flat), 1))(*[len(x) for x in flat])
        check(_L.dinput_tensor_new_bytes(byref(out), shape, ndim, strs, lens))
        return out
    if not arr.flags.c_contiguous:  # (ascontiguousarray would turn rank 0 into rank 1)
        arr = arr.copy(order="C")
    check((new_fixed or _L.dinput_tensor_new)(byref(out), code, shape, ndim, arr.ctypes.data,
                                              arr.nbytes))
    return out


class _Capsule:
    """Hands one already made DLPack capsule to numpy.from_dlpack."""

    __slots__ = ("cap", "device")

    def __init__(self, cap, device):
        self.cap, self.device = cap, device

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self.cap

    def __dlpack_device__(self):
        return self.device


_NP_DTYPES = {}
_CODES = {}


def _codes(np):
    """numpy dtype -> dinput dtype code (a dict keyed by dtype objects: dtype.name is slow)."""
    if not _CODES:
        for name, code in DTYPES.items():
            if name not in ("bytes", "bfloat16"):
                _CODES[np.dtype(name)] = code
    return _CODES


def _tensor_to_numpy(th):
    """A borrowed tensor pointer as a numpy value that outlives the handle: a copy for
    scalars (cheaper than an export for a few bytes), the tensor's own memory otherwise."""
    code = _L.dinput_tensor_dtype(th)
    if (code == BYTES or code == DTYPES["bfloat16"]
            or _L.dinput_tensor_device_type(th) != DEVICE_CPU):
        with Tensor._borrowed(th) as t:
            return t.numpy()
    np = _np()
    dt = _NP_DTYPES.get(code)
    if dt is None:
        dt = _NP_DTYPES[code] = np.dtype(DTYPE_NAMES[code])
    if _L.dinput_tensor_rank(th) == 0:
        return np.frombuffer(ctypes.string_at(_L.dinput_tensor_data(th), dt.itemsize), dt)[0]
    managed = c_void_p()
    check(_L.dinput_tensor_to_dlpack(byref(managed), th))
    arr = np.from_dlpack(_Capsule(_api.PyCapsule_New(managed, _DLTENSOR, _DESTRUCTOR), (1, 0)))
    return arr.view(np.bool_) if code == 1 else arr


class Owner:
    """Owns one handle (an element or a per-replica value) and frees it when the last numpy
    array viewing its memory is gone: the arrays of one step share one owner."""

    __slots__ = ("_h", "_free")

    def __init__(self, h, free):
        self._h, self._free = h, free

    def __del__(self):
        self._free(self._h)


VIEW_DEVICES = (DEVICE_CPU, DEVICE_CUDA_HOST)


def owned_numpy_values(h, infos_fn, free_fn, buffers):
    """The numpy values of every tensor of the owned handle h (an element or a per-replica
    value, by infos_fn), read through one C call instead of several per tensor (see
    numpy_values_from_infos). buffers is a one-element list caching the caller's TensorInfo
    array; h is freed on every path."""
    count = c_size_t()
    try:
        infos = buffers[0]
        check(infos_fn(byref(count), infos, len(infos), h))
        n = count.value
        if n > len(infos):
            infos = buffers[0] = (_lib.TensorInfo * n)()
            check(infos_fn(byref(count), infos, n, h))
    except BaseException:
        free_fn(h)
        raise
    return numpy_values_from_infos(h, free_fn, infos, 0, n)


# dinput dtype code -> numpy dtype, for the dtypes a numpy array can view in place (all
# fixed-size ones but bfloat16; bool is one byte in both).
_VIEW_DTYPES = {}


def view_dtypes():
    """dinput dtype code -> numpy dtype, for the dtypes numpy arrays can view in place."""
    if not _VIEW_DTYPES:
        np = _np()
        for name, code in DTYPES.items():
            if name not in ("bytes", "bfloat16"):
                _VIEW_DTYPES[code] = np.dtype(name)
    return _VIEW_DTYPES


def numpy_values_from_infos(h, free_fn, infos, first, n):
    """The numpy values of the n tensors infos[first:first + n] describe, all borrowed from the
    owned handle h, which one Owner frees (free_fn) when the last array viewing its memory is
    gone. Host tensors of fixed-size dtypes become read-only views: when they lie back to back
    in memory with one dtype (the replicas' pieces of one split batch do), through one
    frombuffer and a slice each, the cheapest numpy offers; the rest (scalars, bytes, bfloat16,
    CUDA) go through _tensor_to_numpy."""
    owner = Owner(h, free_fn)
    a = infos[first]
    code = a.dtype
    dt = view_dtypes().get(code)
    if dt is not None and a.rank and a.device_type in VIEW_DEVICES and a.data:
        start = a.data
        end = start + a.byte_size
        sizes = [a.byte_size]
        for i in range(first + 1, first + n):
            b = infos[i]
            if (b.dtype != code or not b.rank or b.device_type not in VIEW_DEVICES
                    or b.data != end):
                break
            end += b.byte_size
            sizes.append(b.byte_size)
        else:
            if end == start:  # no data to view: the general path makes the empty arrays
                return _numpy_values_one_by_one(owner, infos, first, n)
            raw = (ctypes.c_char * (end - start)).from_address(start)
            raw._owner = owner
            flat = _np().frombuffer(raw, dt)
            flat.flags.writeable = False
            if n == 1 and a.rank == 1:
                return [flat]
            values = []
            pos, isz = 0, dt.itemsize
            for i, size in enumerate(sizes):
                v = flat[pos:pos + size // isz]
                pos += size // isz
                b = infos[first + i]
                if b.rank != 1:
                    v = v.reshape(tuple(b.shape[:b.rank]))
                values.append(v)
            return values
    return _numpy_values_one_by_one(owner, infos, first, n)


def _numpy_values_one_by_one(owner, infos, first, n):
    np = _np()
    values = [None] * n
    for i in range(n):
        info = infos[first + i]
        code = info.dtype
        rank = info.rank
        dt = view_dtypes().get(code)
        if rank == 0 or info.device_type not in VIEW_DEVICES or dt is None:
            values[i] = _tensor_to_numpy(info.tensor)
            continue
        size = info.byte_size
        if size == 0:
            arr = np.empty(tuple(info.shape[:rank]), dt)
        else:
            raw = (ctypes.c_char * size).from_address(info.data)
            raw._owner = owner
            arr = np.frombuffer(raw, dt)
            if rank != 1:
                arr = arr.reshape(tuple(info.shape[:rank]))
        arr.flags.writeable = False
        values[i] = arr
    return values


def element_tensors(eh):
    """The components of a (borrowed) element handle as new Tensor handles."""
    return [Tensor._borrowed(_L.dinput_element_get(eh, i))
            for i in range(_L.dinput_element_size(eh))]


def element_to_py(eh, output="numpy"):
    """An element as Python values: one component gives the value itself, several a tuple.
    output "numpy": numpy arrays (bytes scalars as bytes); "tensor": Tensor handles."""
    n = _L.dinput_element_size(eh)
    if output == "numpy":
        if n == 1:
            return _tensor_to_numpy(_L.dinput_element_get(eh, 0))
        return tuple(_tensor_to_numpy(_L.dinput_element_get(eh, i)) for i in range(n))
    vals = element_tensors(eh)
    return vals[0] if n == 1 else tuple(vals)


def py_to_element(value):
    """A new element handle (owned) from a value: a tuple is several components, anything
    else (an array, a list, a scalar, a Tensor) one."""
    comps = value if isinstance(value, tuple) else (value,)
    hs, made = [], []
    try:
        for c in comps:
            if isinstance(c, Tensor):
                hs.append(c._handle())
            else:
                h = _new_tensor(c)
                made.append(h)
                hs.append(h)
        out = c_void_p()
        check(_L.dinput_element_new(byref(out), (c_void_p * len(hs))(*hs), len(hs)))
        return out
    finally:
        for h in made:
            _L.dinput_tensor_free(h)


class TensorSpec(tuple):
    """(dtype name, shape) of one component; None in the shape for an unknown dimension."""

    __slots__ = ()

    def __new__(cls, dtype, shape):
        return tuple.__new__(cls, (dtype, tuple(shape)))

    dtype = property(lambda self: self[0])
    shape = property(lambda self: self[1])

    def __repr__(self):
        return "TensorSpec(%r, %r)" % (self[0], self[1])


def spec_to_py(sh):
    """Reads and frees an owned spec handle: a list of TensorSpec."""
    try:
        out = []
        for i in range(_L.dinput_spec_size(sh)):
            rank = _L.dinput_spec_rank(sh, i)
            dims = _L.dinput_spec_shape(sh, i)
            out.append(TensorSpec(DTYPE_NAMES.get(_L.dinput_spec_dtype(sh, i), "invalid"),
                                  [None if dims[k] < 0 else dims[k] for k in range(rank)]))
        return out
    finally:
        _L.dinput_spec_free(sh)


def py_to_spec(spec):
    """A new spec handle (owned) from a list of (dtype, shape) pairs."""
    sh = c_void_p()
    check(_L.dinput_spec_new(byref(sh)))
    try:
        for dtype, shape in spec:
            code = DTYPES.get(dtype) if isinstance(dtype, str) else int(dtype)
            if code is None:
                raise ValueError("dinput: unknown dtype %r" % (dtype,))
            dims = [-1 if d is None else int(d) for d in shape]
            check(_L.dinput_spec_add(sh, code, (c_int64 * max(len(dims), 1))(*dims), len(dims)))
    except BaseException:
        _L.dinput_spec_free(sh)
        raise
    return sh


# --- GPU memory caches (no-ops reporting 0 bytes in a build without CUDA) -----------------
def cuda_empty_cache():
    """Returns the cached blocks of freed CUDA tensors (and pinned host blocks) to CUDA."""
    check(_L.dinput_cuda_empty_cache())


def cuda_set_cache_limit(nbytes):
    """How many bytes of free blocks each GPU's cache may keep (process-wide)."""
    check(_L.dinput_cuda_set_cache_limit(nbytes))


def cuda_cache_limit():
    out = c_size_t()
    check(_L.dinput_cuda_cache_limit(byref(out)))
    return out.value


def cuda_pool_bytes(device=0):
    """(held, cached): device memory dinput holds on GPU `device`, and the free part of it."""
    held, cached = c_size_t(), c_size_t()
    check(_L.dinput_cuda_pool_bytes(byref(held), byref(cached), device))
    return held.value, cached.value
