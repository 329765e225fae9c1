"""Reading the steps of a distributed iterator as numpy values with as few ctypes calls as
possible (dinput_dist_iterator_get_next_steps): each ctypes call costs about as much as
the library's whole step of a small batch, and so does each numpy array made. Small steps
whose pieces share one shape and dtype are read ahead by copying (dinput_dist_iterator_
copy_steps): one numpy array per call holds several steps, and each piece is one of its rows."""

import ctypes
from ctypes import c_size_t, c_void_p
from time import perf_counter_ns

from . import _lib
from .errors import error
from .tensor import VIEW_DEVICES, numpy_values_from_infos, view_dtypes

_L = _lib.lib
_OUT_OF_RANGE = 11
_free = _L.dinput_per_replica_free
_c_char = ctypes.c_char

# Steps per call when reading ahead: more saves little (the call is already shared by 4)
# and holds back longer the steps the caller could work on meanwhile.
AHEAD = 4
# Steps bigger than this gain nothing measurable from sharing calls; reading them ahead
# would only hold their memory longer.
AHEAD_MAX_STEP_BYTES = 1 << 20
# Steps per call when reading ahead by copying: the array and the call are made once for all
# of them, so more steps per call pay more than for views; COPY_AHEAD * step bytes stays small.
COPY_AHEAD = 16
# Steps up to this many bytes are copied when read ahead: a copy of this size costs about as
# much as the numpy views of a step it replaces (range(n).batch(b) over 2 replicas, load 9:
# copying took half the time of views with 8 KiB steps, as long with 16, longer with 32).
COPY_MAX_STEP_BYTES = 16 << 10
# How a read-ahead iterator chooses between one step and AHEAD steps per call: it times
# (wall clock, from call to call: the caller's work included) a block of BLOCK steps each
# way, then keeps the faster way for EXPLOIT blocks, and measures again. Waiting for AHEAD
# steps can cost more than it saves when the producer and the caller take about as long per
# step and each much longer than a call. Where one way took under half the other's time (as
# copying small steps against one view per call), the other is measured 4 times less often:
# its block costs more than the change of conditions it could catch.
BLOCK = 64
EXPLOIT = 14

# dinput_tensor_info_t as 8-byte words: tensor, data, shape, byte_size, (rank, dtype),
# (device_type, device_index).
_WORDS = 6


class StepReader:
    """Takes the steps of one distributed iterator handle as lists with one numpy value per
    local replica (a tuple of them for several components). take(h, 1) is get_next;
    take_ahead(h) takes up to AHEAD steps per call, only for iterators no save can observe
    (every step taken counts as consumed)."""

    __slots__ = ("_per_step", "_replicas", "_steps", "_infos", "_words", "_count", "_args",
                 "_flat", "_ahead", "_n", "_phase", "_left", "_t0", "_one_ns", "_copy",
                 "_unfit", "_ahead_n", "_exploit")

    def __init__(self):
        self._per_step = None  # tensors per step (replicas x components), from the first step
        self._ahead = True
        self._n = 1  # steps per call now (take_ahead)
        self._phase = -1  # 0: timing 1 per call, 1: timing AHEAD, 2 ..: keeping the faster
        self._left = 0  # steps left in the current block
        self._t0 = 0
        self._one_ns = 0.0
        self._exploit = EXPLOIT  # blocks the faster way is kept before measuring again
        self._copy = None  # _CopyLayout: read-ahead steps are copied (take_copy)
        self._ahead_n = AHEAD  # steps per call when reading ahead

    def _setup(self, h):
        """Takes the first step with get_next and sizes the buffers from it."""
        out = c_void_p()
        st = _L.dinput_dist_iterator_get_next(ctypes.byref(out), h)
        if st:
            if st == _OUT_OF_RANGE:
                return []
            raise error(st)
        ph = out.value
        count = c_size_t()
        try:
            st = _L.dinput_per_replica_tensor_infos(ctypes.byref(count), None, 0, ph)
            if st:
                raise error(st)
            k = count.value
            self._replicas = _L.dinput_per_replica_size(ph)
            self._steps = (c_void_p * AHEAD)()
            self._infos = (_lib.TensorInfo * max(k * AHEAD, 1))()
            self._count = count
            st = _L.dinput_per_replica_tensor_infos(ctypes.byref(count), self._infos, k, ph)
            if st:
                raise error(st)
        except BaseException:
            _free(ph)
            raise
        self._per_step = k
        self._args = (ctypes.addressof(count), ctypes.addressof(self._steps),
                      ctypes.addressof(self._infos), k)
        infos = self._infos
        if sum(infos[i].byte_size for i in range(k)) > AHEAD_MAX_STEP_BYTES:
            self._ahead = False
        # The layout every step of the iterator shares (the spec fixes ranks and dtypes, the
        # replica the device): rank 1, one viewable dtype, host memory. Such steps are
        # viewed through one array when their pieces lie back to back (_step).
        self._flat = None
        dt = view_dtypes().get(infos[0].dtype)
        if (k and dt is not None and ctypes.sizeof(_lib.TensorInfo) == _WORDS * 8
                and all(infos[i].rank == 1 and infos[i].dtype == infos[0].dtype
                        and infos[i].device_type in VIEW_DEVICES for i in range(k))):
            self._flat = dt
            self._words = (ctypes.c_int64 * (_WORDS * len(infos))).from_buffer(infos)
        self._unfit = c_void_p()
        if self._ahead:
            self._set_copy()
        return [self._step(ph, 0)]

    def _set_copy(self):
        """Reads ahead by copying when the step in self._infos is small and its pieces are
        host arrays of one shape (rank >= 1) and dtype; otherwise through views."""
        self._copy = _copy_layout(self._infos, self._per_step, self._unfit)
        self._ahead_n = AHEAD if self._copy is None else COPY_AHEAD
        if self._n > 1:  # reading ahead now: the other way's number (self._steps holds AHEAD)
            self._n = self._ahead_n

    def _step(self, ph, first):
        k, r = self._per_step, self._replicas
        dt = self._flat
        if dt is not None:
            # The pieces as slices of one read-only array over their memory, when they lie
            # back to back and none is empty (every step of range(n).batch(b) but the last).
            w = self._words
            base = first * _WORDS
            start = w[base + 1]
            if k == 2:
                size = w[base + 3]
                end = start + size
                size2 = w[base + 9]
                if size and size2 and w[base + 7] == end:
                    raw = _memory(size + size2).from_address(start)
                    raw._h = ph
                    flat = _np_frombuffer(raw, dt)
                    flat.flags.writeable = False
                    cut = size // dt.itemsize
                    values = [flat[:cut], flat[cut:]]
                    return values if r == 2 else [tuple(values)]
            else:
                end = start
                for i in range(base, base + k * _WORDS, _WORDS):
                    size = w[i + 3]
                    if w[i + 1] != end or not size:
                        break
                    end += size
                else:
                    raw = _memory(end - start).from_address(start)
                    raw._h = ph
                    flat = _np_frombuffer(raw, dt)
                    flat.flags.writeable = False
                    isz = dt.itemsize
                    values, pos = [], 0
                    for i in range(base, base + k * _WORDS, _WORDS):
                        n = w[i + 3] // isz
                        values.append(flat[pos:pos + n])
                        pos += n
                    return values if k == r else _group(values, r)
        if k == 0:
            _free(ph)
            return [() for _ in range(r)]
        values = numpy_values_from_infos(ph, _free_handle, self._infos, first, k)
        return values if k == r else _group(values, r)

    def take(self, h, max_steps):
        """Up to max_steps (1 .. AHEAD) steps, each waited for; [] at the end of data."""
        if self._per_step is None:
            return self._setup(h)
        count, steps, infos, k = self._args
        st = _get_next_steps(count, steps, infos, max_steps, k, h)
        if st:
            if st == _OUT_OF_RANGE:
                return []
            raise error(st)
        got = self._count.value
        raw = self._steps
        if got == 1:
            return [self._step(raw[0], 0)]
        return [self._step(raw[s], s * k) for s in range(got)]

    def take_ahead(self, h):
        """take() with as many steps per call as pay (see BLOCK)."""
        if self._per_step is None or not self._ahead:
            return self.take(h, 1)
        if self._left <= 0:
            self._next_block()
        n = self._n
        steps = self.take(h, n) if n == 1 or self._copy is None else self.take_copy(h, n)
        self._left -= len(steps)
        return steps

    def take_copy(self, h, n):
        """Up to n steps copied into one new read-only array, each piece a row of it; a step
        that does not fit comes last, through views. [] at the end of data."""
        c = self._copy
        k = self._per_step
        buf = _np_empty((n * k,) + c.shape, c.dtype)
        st = _copy_steps(self._args[0], c.unfit, _addressof(_c_char.from_buffer(buf)),
                         buf.nbytes, c.code, c.dims, c.rank, n, h)
        if st:
            if st == _OUT_OF_RANGE:
                return []
            raise error(st)
        got = self._count.value
        steps = []
        if got:
            buf.flags.writeable = False
            rows = list(buf if got == n else buf[:got * k])
            if k == self._replicas:
                steps = [rows[i:i + k] for i in range(0, got * k, k)]
            else:
                r = self._replicas
                steps = [_group(rows[i:i + k], r) for i in range(0, got * k, k)]
        unfit = self._unfit.value
        if unfit:
            steps.append(self._unfit_step(unfit, got == 0))
        return steps

    def _unfit_step(self, ph, alone):
        """The step ph that did not fit the copy's layout, through views. When it came alone
        (no step copied before it), its layout becomes the copy's: the batch size changed."""
        self._unfit.value = None
        try:
            st = _L.dinput_per_replica_tensor_infos(ctypes.byref(self._count), self._infos,
                                                   self._per_step, ph)
            if st:
                raise error(st)
        except BaseException:
            _free(ph)
            raise
        if alone:
            self._set_copy()
        return self._step(ph, 0)

    def _next_block(self):
        now = perf_counter_ns()
        phase = self._phase
        if phase < 0:  # the first block: time one step per call
            self._n, self._phase = 1, 0
        elif phase == 0:  # one step per call was timed; time AHEAD next
            self._one_ns = (now - self._t0) / (BLOCK - self._left)
            self._n, self._phase = self._ahead_n, 1
        elif phase == 1:  # keep the faster way
            ahead_ns = (now - self._t0) / (BLOCK - self._left)
            self._n = self._ahead_n if ahead_ns < self._one_ns else 1
            clear = 2 * min(ahead_ns, self._one_ns) < max(ahead_ns, self._one_ns)
            self._exploit = 4 * EXPLOIT if clear else EXPLOIT
            self._phase = 2
        elif phase < 1 + self._exploit:
            self._phase = phase + 1
        else:  # measure again
            self._n, self._phase = 1, 0
        self._t0 = now
        self._left += BLOCK


class _CopyLayout:
    """The layout take_copy asks dinput_dist_iterator_copy_steps for: every piece of a step
    of dtype `code` (numpy's `dtype`) and shape `shape` (`dims`, `rank` for the call)."""

    __slots__ = ("code", "dtype", "shape", "dims", "rank", "unfit")

    def __init__(self, code, dtype, shape, unfit):
        self.code, self.dtype, self.shape, self.rank = code, dtype, shape, len(shape)
        self.dims = (ctypes.c_int64 * len(shape))(*shape)
        self.unfit = ctypes.addressof(unfit)


def _copy_layout(infos, k, unfit):
    """A _CopyLayout for steps like the one infos[0:k] describes, or None when such steps are
    better viewed: big, empty, of several shapes or dtypes, scalars, bytes, on a GPU."""
    if not k:
        return None
    first = infos[0]
    dt = view_dtypes().get(first.dtype)
    rank = first.rank
    if dt is None or rank < 1 or not 0 < first.byte_size * k <= COPY_MAX_STEP_BYTES:
        return None
    shape = tuple(first.shape[d] for d in range(rank))
    for i in range(k):
        t = infos[i]
        if (t.dtype != first.dtype or t.rank != rank or t.device_type not in VIEW_DEVICES
                or tuple(t.shape[d] for d in range(rank)) != shape):
            return None
    return _CopyLayout(first.dtype, dt, shape, unfit)


def _free_step(memory):
    try:
        _free(memory._h)
    except TypeError:  # interpreter shutdown: the module's globals may be gone
        pass


# size -> a ctypes char array type of that size whose instances free the step they view
# (their _h) when the last array over them is gone: the owner of a step's memory, cheaper
# than a separate owner object (one object and one __del__ per step fewer).
_MEMORY = {}


def _memory(size):
    t = _MEMORY.get(size)
    if t is None:
        if len(_MEMORY) >= 256:  # batch sizes vary little; never grow without bound
            _MEMORY.clear()
        t = _MEMORY[size] = type("StepMemory", (_c_char * size,), {"__del__": _free_step})
    return t


def _free_handle(ph):
    _free(ph)


def _group(values, r):
    c = len(values) // r
    return [tuple(values[i * c:(i + 1) * c]) for i in range(r)]


def _np_frombuffer(raw, dt):
    import numpy
    global _np_frombuffer
    _np_frombuffer = numpy.frombuffer
    return numpy.frombuffer(raw, dt)


def _np_empty(shape, dt):
    import numpy
    global _np_empty
    _np_empty = numpy.empty
    return numpy.empty(shape, dt)


_get_next_steps = _L.dinput_dist_iterator_get_next_steps
_copy_steps = _L.dinput_dist_iterator_copy_steps
_addressof = ctypes.addressof
