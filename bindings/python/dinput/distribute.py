"""Strategies, distributed datasets and distributed iterators."""

import json
from ctypes import byref, c_int64, c_void_p, string_at

from . import _lib
from ._handle import Handle
from ._steps import StepReader
from .dataset import (Dataset, Optional, _enter, _fail, _free_user_data, _leave, _live_iterators,
                      _new, _register, _registry, _strs)
from .errors import FailedPreconditionError, check, error
from .statistics import take_string
from .tensor import element_to_py, owned_numpy_values, py_to_element

_REDUCE_OPS = {"sum": 0, "mean": 1}

_L = _lib.lib


def _str(p):
    return p.decode() if p else ""


class Cluster(Handle):
    """This process's place in a job of several worker processes: Cluster.resolve() reads
    it from the launcher's variables (TF_CONFIG, SLURM, torchrun, mpirun, or DINPUT_RANK,
    DINPUT_WORLD_SIZE and DINPUT_RDZV_URL); Cluster(rank, world_size, rdzv_url) gives it."""

    _free = _L.dinput_cluster_free
    _kind = "cluster"

    def __init__(self, rank, world_size, rdzv_url=None, _handle=None):
        if _handle is None:
            _handle = _new(_L.dinput_cluster_new, rank, world_size,
                           rdzv_url.encode() if rdzv_url else None)
        Handle.__init__(self, _handle)

    @classmethod
    def resolve(cls, source="auto"):
        """From the environment: source "auto", "explicit", "tf_config", "torchrun", "mpi"
        or "slurm". NotFoundError when "auto" finds no launcher's variables."""
        return cls(None, None, _handle=_new(_L.dinput_cluster_resolve, source.encode()))

    rank = property(lambda self: _L.dinput_cluster_rank(self._handle()))
    world_size = property(lambda self: _L.dinput_cluster_world_size(self._handle()))
    local_rank = property(lambda self: _L.dinput_cluster_local_rank(self._handle()))
    local_world_size = property(lambda self: _L.dinput_cluster_local_world_size(self._handle()))
    rdzv_url = property(lambda self: _str(_L.dinput_cluster_rdzv_url(self._handle())))
    coordinator_host = property(
        lambda self: _str(_L.dinput_cluster_coordinator_host(self._handle())))
    job_id = property(lambda self: _str(_L.dinput_cluster_job_id(self._handle())))
    source = property(lambda self: _str(_L.dinput_cluster_source(self._handle())))
    task_type = property(lambda self: _str(_L.dinput_cluster_task_type(self._handle())))
    task_index = property(lambda self: _L.dinput_cluster_task_index(self._handle()))
    is_input_worker = property(
        lambda self: bool(_L.dinput_cluster_is_input_worker(self._handle())))

    def __repr__(self):
        if self.closed:
            return "<dinput.Cluster closed>"
        return "<dinput.Cluster rank %d of %d, %s>" % (self.rank, self.world_size,
                                                        self.rdzv_url or "no rendezvous")


class Collective(Handle):
    """How the workers of a multi-worker strategy exchange their small per-step values."""

    _free = _L.dinput_collective_free
    _kind = "collective"

    @classmethod
    def in_process(cls, num_workers, timeout_ms=0):
        """Joins num_workers workers that run as threads of this process (timeout_ms 0: 60 s)."""
        return cls(_new(_L.dinput_collective_new_in_process, num_workers, timeout_ms))

    @classmethod
    def from_cluster(cls, cluster, timeout_ms=None, job_id=None, interface=None, address=None,
                     allow_loopback=None):
        """Joins the worker processes of cluster's job over TCP (Gloo); returns once every
        worker has connected. Use it with Strategy(devices, collective, cluster.rank)."""
        o = _new(_L.dinput_collective_options_new)
        try:
            if timeout_ms is not None:
                check(_L.dinput_collective_options_set_timeout_ms(o, timeout_ms))
            for fn, v in ((_L.dinput_collective_options_set_job_id, job_id),
                          (_L.dinput_collective_options_set_interface, interface),
                          (_L.dinput_collective_options_set_address, address)):
                if v is not None:
                    check(fn(o, v.encode()))
            if allow_loopback is not None:
                check(_L.dinput_collective_options_set_allow_loopback(o, 1 if allow_loopback
                                                                      else 0))
            return cls(_new(_L.dinput_collective_new_from_cluster, cluster._handle(), o))
        finally:
            _L.dinput_collective_options_free(o)

    @property
    def num_workers(self):
        return _L.dinput_collective_num_workers(self._handle())

    def abort(self, message, code=10):
        """Fails every pending and later wait of every worker with code (default ABORTED)."""
        check(_L.dinput_collective_abort(self._handle(), code, message.encode()))


class Strategy(Handle):
    """A set of replica devices. Strategy(["CPU:0", "CPU:1"]) is one worker with two
    replicas; with collective= and worker_index= it is that worker of a multi-worker
    strategy (every worker has the same devices). No devices: one replica on CPU:0."""

    _free = _L.dinput_strategy_free
    _kind = "strategy"

    def __init__(self, devices=(), collective=None, worker_index=0):
        arr, n = _strs(list(devices))
        if collective is None:
            h = _new(_L.dinput_strategy_new, arr, n)
        else:
            h = _new(_L.dinput_strategy_new_multi_worker, collective._handle(), worker_index,
                     arr, n)
        Handle.__init__(self, h)

    @classmethod
    def multi_worker_cpu(cls, collective, worker_index, num_replicas_in_sync):
        """Worker worker_index of a strategy with num_replicas_in_sync CPU replicas in all
        (divisible by the collective's number of workers)."""
        s = cls.__new__(cls)
        Handle.__init__(s, _new(_L.dinput_strategy_new_multi_worker_cpu, collective._handle(),
                                worker_index, num_replicas_in_sync))
        return s

    @property
    def num_replicas_in_sync(self):
        return _L.dinput_strategy_num_replicas_in_sync(self._handle())

    @property
    def num_local_replicas(self):
        return _L.dinput_strategy_num_local_replicas(self._handle())

    @property
    def num_workers(self):
        return _L.dinput_strategy_num_workers(self._handle())

    @property
    def worker_index(self):
        return _L.dinput_strategy_worker_index(self._handle())

    @property
    def devices(self):
        h = self._handle()
        return [_L.dinput_strategy_device(h, i).decode()
                for i in range(_L.dinput_strategy_num_local_replicas(h))]

    def distribute_dataset(self, dataset, fetch_to_device=None, per_replica_buffer_size=None):
        """Distributes a dataset batched by the global batch size: each step gives every
        local replica its share of a global batch (see DistributedDataset)."""
        o = _new(_L.dinput_input_options_new)
        try:
            if fetch_to_device is not None:
                check(_L.dinput_input_options_set_fetch_to_device(o, 1 if fetch_to_device else 0))
            if per_replica_buffer_size is not None:
                check(_L.dinput_input_options_set_per_replica_buffer_size(
                    o, per_replica_buffer_size))
            return DistributedDataset(_new(_L.dinput_strategy_distribute_dataset,
                                           self._handle(), dataset._handle(), o))
        finally:
            _L.dinput_input_options_free(o)


    def distribute_datasets_from_function(self, dataset_fn, per_replica=False,
                                          fetch_to_device=None, place_dataset_on_device=None):
        """Distributes the datasets dataset_fn(context) returns, one per input pipeline (per
        worker, or per local replica with per_replica=True), each already sharded and
        batched by the per-replica batch size. context is an InputContext, valid during the
        call only."""
        o = _new(_L.dinput_input_options_new)
        try:
            if per_replica:
                check(_L.dinput_input_options_set_replication_mode(o, 1))
            if place_dataset_on_device is not None:
                check(_L.dinput_input_options_set_place_dataset_on_device(
                    o, 1 if place_dataset_on_device else 0))
            if fetch_to_device is not None:
                check(_L.dinput_input_options_set_fetch_to_device(o, 1 if fetch_to_device else 0))
            return DistributedDataset(_new(_L.dinput_strategy_distribute_datasets_from_function,
                                           self._handle(), _dataset_fn_tramp,
                                           _register(dataset_fn), _free_user_data, o))
        finally:
            _L.dinput_input_options_free(o)

    def reduce(self, op, values, axis=None):
        """Reduces one value per local replica (a list, as a step of a distributed iterator
        gives) across all replicas of all workers: op "sum" or "mean"; axis None element-wise,
        0 also over the first dimension. Every worker gets the same result."""
        if op not in _REDUCE_OPS:
            raise ValueError("dinput: reduce op must be 'sum' or 'mean', not %r" % (op,))
        elems = []
        try:
            for v in values:
                elems.append(py_to_element(v))
            ph = _new(_L.dinput_per_replica_new, (c_void_p * max(len(elems), 1))(*elems),
                      len(elems))
        finally:
            for e in elems:
                _L.dinput_element_free(e)
        try:
            out = _new(_L.dinput_strategy_reduce, self._handle(), _REDUCE_OPS[op], ph,
                       -1 if axis is None else axis)
        finally:
            _L.dinput_per_replica_free(ph)
        try:
            return element_to_py(out)
        finally:
            _L.dinput_element_free(out)


    def distribute_values_from_function(self, value_fn):
        """One value per local replica: value_fn(replica_id_in_sync_group,
        num_replicas_in_sync) for each, in replica order. Returns the list of values as
        dinput holds them (numpy arrays, or tuples of them)."""
        key = _register(value_fn)
        try:
            ph = _new(_L.dinput_strategy_distribute_values_from_function, self._handle(),
                      _value_fn_tramp, key)
        finally:
            _free_user_data(key)
        return _per_replica(ph, "numpy")

    def run(self, fn, args=None):
        """Runs fn(context, value) once per local replica, concurrently on dinput's threads,
        with that replica's value of args (a per-replica list such as a step of a
        distributed iterator; None: fn(context, None)). context has replica_id_in_sync_group,
        num_replicas_in_sync and device. Returns the list of the replicas' results."""
        elems, ph = [], None
        try:
            if args is not None:
                for v in args:
                    elems.append(py_to_element(v))
                ph = _new(_L.dinput_per_replica_new, (c_void_p * max(len(elems), 1))(*elems),
                          len(elems))
        finally:
            for e in elems:
                _L.dinput_element_free(e)
        key = _register(fn)
        try:
            out = _new(_L.dinput_strategy_run, self._handle(), _replica_fn_tramp, ph, key)
        finally:
            _free_user_data(key)
            _L.dinput_per_replica_free(ph)
        return _per_replica(out, "numpy")


class ReplicaContext:
    """What a Strategy.run function is told about its replica (valid during the call)."""

    def __init__(self, ptr):
        self.replica_id_in_sync_group = _L.dinput_replica_context_replica_id_in_sync_group(ptr)
        self.num_replicas_in_sync = _L.dinput_replica_context_num_replicas_in_sync(ptr)
        self.device = _L.dinput_replica_context_device(ptr).decode()


@_lib.value_fn
def _value_fn_tramp(out, context, key):
    t = _enter()
    try:
        value = _registry[key](_L.dinput_value_context_replica_id_in_sync_group(context),
                               _L.dinput_value_context_num_replicas_in_sync(context))
        out[0] = py_to_element(value)
        return 0
    except BaseException as e:
        return _fail(e)
    finally:
        _leave(t)


@_lib.replica_fn
def _replica_fn_tramp(out, context, args, key):
    t = _enter()
    try:
        value = element_to_py(args) if args else None
        out[0] = py_to_element(_registry[key](ReplicaContext(context), value))
        return 0
    except BaseException as e:
        return _fail(e)
    finally:
        _leave(t)


class InputContext:
    """What a dataset_fn is told about its input pipeline (valid during the call only)."""

    def __init__(self, ptr):
        self.num_input_pipelines = _L.dinput_input_context_num_input_pipelines(ptr)
        self.input_pipeline_id = _L.dinput_input_context_input_pipeline_id(ptr)
        self.num_replicas_in_sync = _L.dinput_input_context_num_replicas_in_sync(ptr)
        self._ptr = ptr

    def get_per_replica_batch_size(self, global_batch_size):
        if not self._ptr:
            raise ValueError("dinput: the input context is only valid during dataset_fn")
        out = c_int64()
        check(_L.dinput_input_context_get_per_replica_batch_size(byref(out), self._ptr,
                                                                  global_batch_size))
        return out.value


@_lib.dataset_fn
def _dataset_fn_tramp(out, context, key):
    t = _enter()
    try:
        return _dataset_fn_body(out, context, key)
    finally:
        _leave(t)


def _dataset_fn_body(out, context, key):
    ctx = InputContext(context)
    try:
        ds = _registry[key](ctx)
        if not isinstance(ds, Dataset):
            raise TypeError("dataset_fn must return a dinput.Dataset, not %s" % type(ds).__name__)
        out[0] = _new(_L.dinput_dataset_ref, ds._handle())
        return 0
    except BaseException as e:
        return _fail(e)
    finally:
        ctx._ptr = None


class DistributedDataset(Handle):
    """A dataset distributed over a strategy's replicas. Iterating it gives one step at a
    time: a list with one value per local replica (numpy arrays, or a tuple of them)."""

    _free = _L.dinput_dist_dataset_free
    _kind = "distributed dataset"

    @property
    def plan(self):
        """How this worker's input is distributed (policy, split, batch sizes), as a dict."""
        return json.loads(_L.dinput_dist_dataset_plan(self._handle()).decode())

    @property
    def element_spec(self):
        from .tensor import spec_to_py
        return spec_to_py(_new(_L.dinput_dist_dataset_element_spec, self._handle()))

    def iterator(self, output="numpy", read_ahead=False):
        """A new distributed iterator (an epoch); output as for Dataset.iterator. In a
        multi-worker strategy every worker makes its iterators in the same order.

        read_ahead=True (numpy output): the iterator takes up to 4 steps per call into the
        library where that is faster than one (it times both ways now and then, its
        caller's work included; steps over 1 MiB always one), which saves much of the cost
        of a small step in Python; the values and their order are the same. Steps read
        ahead count as consumed, so such an iterator cannot save its state (save_state and
        get_next_as_optional raise FailedPreconditionError): use it where no checkpoint is
        taken mid-epoch."""
        return DistributedIterator(_new(_L.dinput_dist_dataset_iterator, self._handle()), output,
                                   read_ahead)

    def iterator_from_state(self, state, output="numpy"):
        """A distributed iterator that continues where the saved job's stopped (bytes from
        DistributedIterator.save_state). Every worker calls it with the same state at the
        same point, and they check through the collective that they restored the same step.
        The same number of workers and replicas, or under DATA, FILE or OFF sharding any
        other number with the same global batch. Another pipeline raises FailedPreconditionError naming the
        operation that differs; a damaged state DataLossError."""
        state = bytes(state)
        return DistributedIterator(_new(_L.dinput_dist_dataset_iterator_from_state,
                                        self._handle(), state, len(state)), output)

    def __iter__(self):
        return self.iterator()


def _per_replica(ph, output, infos=None):
    """The owned per-replica value ph as a list with one value per local replica (freed here,
    or, for numpy output, when the last array viewing it is gone). infos: the caller's cached
    TensorInfo array (a one-element list), or None for a new one."""
    if output == "numpy":
        n = _L.dinput_per_replica_size(ph)
        values = owned_numpy_values(ph, _L.dinput_per_replica_tensor_infos,
                                    _L.dinput_per_replica_free,
                                    infos or [(_lib.TensorInfo * 4)()])
        if n == 0:
            return []
        k = len(values) // n
        return values if k == 1 else [tuple(values[r * k:(r + 1) * k]) for r in range(n)]
    try:
        return [element_to_py(_L.dinput_per_replica_get(ph, i), output)
                for i in range(_L.dinput_per_replica_size(ph))]
    finally:
        _L.dinput_per_replica_free(ph)


class DistributedIterator(Handle):
    """Steps of a distributed dataset. get_next() raises OutOfRangeError when no replica of
    any worker has data left; Python iteration stops there. cancel() works from any thread
    (and in a multi-worker strategy fails this epoch's iterators on the other workers)."""

    _free = _L.dinput_dist_iterator_free
    _kind = "distributed iterator"

    def __init__(self, handle, output="numpy", read_ahead=False):
        Handle.__init__(self, handle)
        self._output = output
        if read_ahead and output != "numpy":
            raise ValueError("dinput: read_ahead needs output='numpy'")
        # numpy steps: one ctypes call per step gives the step and its tensors' layout (or
        # one per several steps, read_ahead).
        self._reader = StepReader() if output == "numpy" else None
        self._read_ahead = read_ahead
        self._ahead = []  # read_ahead: steps taken and not yet given out, the next one last
        _live_iterators.add(self)

    def _take(self):
        """The next numpy step, or None at the end of data."""
        ahead = self._ahead
        if ahead:
            return ahead.pop()
        if self._read_ahead:
            steps = self._reader.take_ahead(self._handle())
            if len(steps) > 1:
                steps.reverse()
                ahead.extend(steps)
                return ahead.pop()
        else:
            steps = self._reader.take(self._handle(), 1)
        return steps[0] if steps else None

    def get_next(self):
        if self._reader is not None:
            step = self._take()
            if step is None:
                raise error(11)  # the end of data the call just reported
            return step
        out = c_void_p()
        st = _L.dinput_dist_iterator_get_next(byref(out), self._handle())
        if st:
            raise error(st)
        return _per_replica(out, self._output)

    def __next__(self):
        ahead = self._ahead
        if ahead:
            return ahead.pop()
        if self._reader is not None:
            step = self._take()
            if step is None:
                raise StopIteration
            return step
        out = c_void_p()
        st = _L.dinput_dist_iterator_get_next(byref(out), self._handle())
        if st == 11:
            raise StopIteration
        if st:
            raise error(st)
        return _per_replica(out, self._output)

    def __iter__(self):
        return self

    def get_next_as_optional(self):
        """An Optional holding the step's per-replica list, empty at the end of data. Not on
        an iterator made with read_ahead=True (FailedPreconditionError): the steps it holds
        would come out of order."""
        if self._read_ahead:
            raise FailedPreconditionError(
                "dinput: get_next_as_optional of an iterator made with read_ahead=True; use "
                "get_next or Python iteration")
        output = self._output
        return Optional(_new(_L.dinput_dist_iterator_get_next_as_optional, self._handle()),
                        lambda oh: _per_replica(_new(_L.dinput_optional_get_per_replica, oh),
                                                output))

    def cancel(self):
        check(_L.dinput_dist_iterator_cancel(self._handle()))

    @property
    def element_spec(self):
        """The per-replica element spec of the steps."""
        from .tensor import spec_to_py
        return spec_to_py(_new(_L.dinput_dist_iterator_element_spec, self._handle()))

    def statistic(self, name):
        out = c_int64()
        check(_L.dinput_dist_iterator_statistic(byref(out), self._handle(), name.encode()))
        return out.value

    def statistics(self, all_workers=False):
        """This worker's statistics as JSON, or with all_workers every worker's, gathered
        through the collective (then every worker calls it at the same point)."""
        return take_string(_L.dinput_dist_iterator_statistics, self._handle(),
                           1 if all_workers else 0)

    def statistics_dict(self, all_workers=False):
        """statistics() parsed into a dict."""
        return json.loads(self.statistics(all_workers))

    def trace(self):
        """This worker's trace in the Trace Event JSON format."""
        return take_string(_L.dinput_dist_iterator_trace, self._handle())

    def save_state(self):
        """Where the whole job's distributed iterators are, as bytes (docs/checkpoint.md).
        Every worker calls it at the same step; the workers' parts are gathered through the
        collective, so every worker receives the same bytes. Workers saving at different
        steps raise FailedPreconditionError, as does an iterator made with read_ahead=True
        (its position is past the steps it read ahead)."""
        if self._read_ahead:
            raise FailedPreconditionError(
                "dinput: save_state of an iterator made with read_ahead=True: the steps it "
                "takes ahead count as consumed, so its state would skip them; make the "
                "iterator to save with read_ahead=False")
        state = _new(_L.dinput_dist_iterator_save, self._handle())
        try:
            return string_at(_L.dinput_state_data(state), _L.dinput_state_size(state))
        finally:
            _L.dinput_state_free(state)
