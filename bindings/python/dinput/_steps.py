"""Reading the steps of a distributed iterator as numpy values with as few ctypes calls as
possible (dinput_dist_iterator_get_next_steps): each ctypes call costs about as much as
the library's whole step of a small batch."""

import ctypes
from ctypes import c_size_t, c_void_p
from time import perf_counter_ns

from . import _lib
from .errors import error
from .tensor import numpy_values_from_infos

_L = _lib.lib
_OUT_OF_RANGE = 11

# Steps per call when fetching ahead. More saves little (the call is already shared by 4)
# and waits longer for steps the caller could work on meanwhile.
AHEAD = 4
# A call slower than this per step was waiting for the producer: steps come slowly, so
# taking several at once would only hold back the first of them; read one per call for the
# next COOL_DOWN calls.
SLOW_NS_PER_STEP = 4000
COOL_DOWN = 64
# Steps bigger than this gain nothing measurable from sharing calls; fetching them ahead
# would only hold their memory longer.
AHEAD_MAX_STEP_BYTES = 1 << 20


class StepReader:
    """Takes the steps of one distributed iterator handle as lists with one numpy value per
    local replica (a tuple of them for several components). take(h, 1) is get_next; with
    ahead=True, take_ahead(h) takes up to AHEAD steps per call while steps come fast: only
    for iterators no save can observe, since every step taken counts as consumed."""

    __slots__ = ("_per_step", "_replicas", "_steps", "_infos", "_count", "_args", "_cool",
                 "_ahead")

    def __init__(self):
        self._per_step = None  # tensors per step (replicas x components), from the first step
        self._cool = 0
        self._ahead = True

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
            _L.dinput_per_replica_free(ph)
            raise
        self._per_step = k
        self._args = (ctypes.addressof(count), ctypes.addressof(self._steps),
                      ctypes.addressof(self._infos), k)
        if sum(self._infos[i].byte_size for i in range(k)) > AHEAD_MAX_STEP_BYTES:
            self._ahead = False
        return [self._step(ph, 0)]

    def _step(self, ph, first):
        k, r = self._per_step, self._replicas
        if k == 0:
            _L.dinput_per_replica_free(ph)
            return [() for _ in range(r)]
        values = numpy_values_from_infos(ph, _L.dinput_per_replica_free, self._infos, first, k)
        if k == r:
            return values
        c = k // r
        return [tuple(values[i * c:(i + 1) * c]) for i in range(r)]

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
        """take() with as many steps as pay: AHEAD while they come fast, else one."""
        if self._per_step is None or not self._ahead:
            return self.take(h, 1)
        if self._cool:
            self._cool -= 1
            return self.take(h, 1)
        t0 = perf_counter_ns()
        count, steps, infos, k = self._args
        st = _get_next_steps(count, steps, infos, AHEAD, k, h)
        took = perf_counter_ns() - t0
        if st:
            if st == _OUT_OF_RANGE:
                return []
            raise error(st)
        got = self._count.value
        if took > got * SLOW_NS_PER_STEP:
            self._cool = COOL_DOWN
        raw = self._steps
        return [self._step(raw[s], s * k) for s in range(got)]


_get_next_steps = _L.dinput_dist_iterator_get_next_steps
