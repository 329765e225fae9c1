"""Datasets, options and iterators."""

import atexit
import itertools
import operator
import json
import os
import threading
import time
import weakref
from ctypes import byref, c_char_p, c_double, c_float, c_int64, c_void_p, string_at

from . import _lib
from ._handle import Handle
from .errors import DinputError, OutOfRangeError, check, error, status_of
from .statistics import take_string
from .tensor import (DTYPES, element_to_py, owned_numpy_values, py_to_element, py_to_spec,
                     spec_to_py)

_L = _lib.lib

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2

_SHARD_POLICIES = {"off": -1, "auto": 0, "file": 1, "data": 2, "hint": 3}
_COMPRESSION = {None: 0, "": 0, "none": 0, "zstd": 1, "gzip": 2}
_DETERMINISTIC = {None: -1, False: 0, True: 1}


def _strs(values):
    """A C array of byte strings (and the list that keeps them alive)."""
    if isinstance(values, (str, bytes)):
        values = [values]
    enc = [v.encode() if isinstance(v, str) else bytes(v) for v in values]
    return (c_char_p * max(len(enc), 1))(*enc), len(enc)


def _new(fn, *args):
    out = c_void_p()
    check(fn(byref(out), *args))
    return out


def _dtype_code(dtype):
    """A dtype name ("float32") or numpy dtype as its dinput_dtype_t number."""
    name = getattr(dtype, "name", None) or str(dtype)
    if name not in DTYPES:
        raise ValueError("unknown dtype %r" % (dtype,))
    return DTYPES[name]


def _handles(datasets):
    """A C array of the datasets' handles (valid while the datasets are)."""
    return (c_void_p * max(len(datasets), 1))(*[d._handle() for d in datasets])


class _OptionHandle(Handle):
    """A temporary C options handle built from keyword settings."""

    def __init__(self, new, free, setters):
        Handle.__init__(self, _new(new))
        self._free_fn = free
        try:
            for fn, args in setters:
                check(fn(self._h, *args))
        except BaseException:
            self.close()
            raise

    def close(self):
        h, self._h = self._h, None
        if h:
            self._free_fn(h)


# --- callbacks ---------------------------------------------------------------------------
# The C library calls back through one ctypes trampoline per kind; user_data is a key into
# this registry, and the library's free_user_data call drops the entry when no dataset or
# iterator uses the callable any more.
_registry = {}
_keys = itertools.count(1)
_lock = threading.Lock()


def _register(obj):
    with _lock:
        key = next(_keys)
        _registry[key] = obj
    return key


@_lib.free_fn
def _free_user_data(key):
    with _lock:
        _registry.pop(key, None)


# Python code must not be entered by dinput's threads once the interpreter is finalizing
# (such a thread is stopped by an unwind that aborts the process). At exit, every live
# iterator is closed, which stops its background threads from starting new callbacks, and
# the callbacks still running are given time to return.
_live_iterators = weakref.WeakSet()
_in_callback = {}  # thread id -> depth; each thread updates only its own key


def _enter():
    t = threading.get_ident()
    _in_callback[t] = _in_callback.get(t, 0) + 1
    return t


def _leave(t):
    d = _in_callback.pop(t, 1) - 1
    if d:
        _in_callback[t] = d


@atexit.register
def _close_iterators_at_exit():
    for it in list(_live_iterators):
        try:
            it.close()
        except Exception:
            pass
    deadline = time.monotonic() + 2.0
    main = threading.get_ident()
    quiet = 0
    while time.monotonic() < deadline and quiet < 3:
        busy = any(t != main for t in list(_in_callback))
        quiet = 0 if busy else quiet + 1
        time.sleep(0.01)


def _fail(exc):
    code = status_of(exc)
    if code == 11:  # end of data from a callback would be misread: report a bad callback
        code = 3
    msg = exc.message if isinstance(exc, DinputError) else "%s: %s" % (type(exc).__name__, exc)
    _L.dinput_error_set(code, msg.encode("utf-8", "replace"))
    return code


@_lib.interleave_fn
def _interleave_tramp(out, elem, key):
    t = _enter()
    try:
        return _interleave_tramp_body(out, elem, key)
    finally:
        _leave(t)


def _interleave_tramp_body(out, elem, key):
    try:
        fn = _registry[key]
        ds = fn(element_to_py(elem))
        if not isinstance(ds, Dataset):
            raise TypeError("the interleave function must return a dinput.Dataset, not %s"
                            % type(ds).__name__)
        out[0] = _new(_L.dinput_dataset_ref, ds._handle())
        return 0
    except BaseException as e:
        return _fail(e)


@_lib.map_fn
def _map_tramp(out, elem, key):
    t = _enter()
    try:
        return _map_tramp_body(out, elem, key)
    finally:
        _leave(t)


def _map_tramp_body(out, elem, key):
    try:
        out[0] = py_to_element(_registry[key](element_to_py(elem)))
        return 0
    except BaseException as e:
        return _fail(e)


@_lib.map_many_fn
def _map_many_tramp(outs, ins, count, key):
    t = _enter()
    try:
        return _map_many_tramp_body(outs, ins, count, key)
    finally:
        _leave(t)


def _map_many_tramp_body(outs, ins, count, key):
    try:
        results = _registry[key]([element_to_py(ins[i]) for i in range(count)])
        if not isinstance(results, (list, tuple)) or len(results) != count:
            raise ValueError("the map_many function must return a list of %d results (one per "
                             "input), not %s" % (count, _describe_results(results)))
        # Each output set is the library's, also if a later one fails to convert.
        for i, r in enumerate(results):
            outs[i] = py_to_element(r)
        return 0
    except BaseException as e:
        return _fail(e)


def _describe_results(results):
    if isinstance(results, (list, tuple)):
        return "%d" % len(results)
    return "a %s" % type(results).__name__


@_lib.filter_fn
def _filter_tramp(keep, elem, key):
    t = _enter()
    try:
        return _filter_tramp_body(keep, elem, key)
    finally:
        _leave(t)


def _filter_tramp_body(keep, elem, key):
    try:
        keep[0] = 1 if _registry[key](element_to_py(elem)) else 0
        return 0
    except BaseException as e:
        return _fail(e)


@_lib.length_fn
def _length_tramp(length, elem, key):
    t = _enter()
    try:
        return _length_tramp_body(length, elem, key)
    finally:
        _leave(t)


def _length_tramp_body(length, elem, key):
    try:
        n = _registry[key](element_to_py(elem))
        if isinstance(n, bool):
            raise TypeError("the element length function must return an int, not bool")
        length[0] = operator.index(n)  # ints and numpy integers; a float is a TypeError
        return 0
    except BaseException as e:
        return _fail(e)


@_lib.generator_init_fn
def _gen_init(state, key):
    t = _enter()
    try:
        return _gen_init_body(state, key)
    finally:
        _leave(t)


def _gen_init_body(state, key):
    try:
        # One Python iterator per dinput iterator, kept in the registry under its own key.
        state[0] = _register(iter(_registry[key]()))
        return 0
    except BaseException as e:
        return _fail(e)


@_lib.generator_next_fn
def _gen_next(out, key):
    t = _enter()
    try:
        return _gen_next_body(out, key)
    finally:
        _leave(t)


def _gen_next_body(out, key):
    try:
        value = next(_registry[key])
    except StopIteration:
        return 11  # end of data: the one callback allowed to say so
    except BaseException as e:
        return _fail(e)
    try:
        out[0] = py_to_element(value)
        return 0
    except BaseException as e:
        return _fail(e)


@_lib.generator_finalize_fn
def _gen_finalize(key):
    _free_user_data(key)


class _SavableGenerator:
    """from_generator's generator with save and restore functions: each call makes a
    _SavableIterator, which the save and restore callbacks reach through the registry."""

    def __init__(self, generator, save, restore):
        self.generator, self.save, self.restore = generator, save, restore

    def __call__(self):
        return _SavableIterator(self, iter(self.generator()))


class _SavableIterator:
    def __init__(self, owner, inner):
        self.owner, self.inner = owner, inner

    def __iter__(self):
        return self

    def __next__(self):
        return next(self.inner)


@_lib.generator_save_fn
def _gen_save(key, write, sink):
    t = _enter()
    try:
        it = _registry[key]
        data = bytes(it.owner.save(it.inner))
        write(sink, data, len(data))
        return 0
    except BaseException as e:
        return _fail(e)
    finally:
        _leave(t)


@_lib.generator_restore_fn
def _gen_restore(key, data, size):
    t = _enter()
    try:
        it = _registry[key]
        it.inner = iter(it.owner.restore(it.inner, string_at(data, size) if size else b""))
        return 0
    except BaseException as e:
        return _fail(e)
    finally:
        _leave(t)


# --- options -----------------------------------------------------------------------------
class Options:
    """Dataset options (as tf.data.Options), attached with Dataset.with_options.

    auto_shard_policy: "auto", "off", "file", "data" or "hint"; skip_corrupt_records,
    map_files, allow_nonregular_files, deterministic: bools; max_record_bytes: int;
    statistics: bool (per-stage statistics, on by default); trace_events: int (a trace of up
    to that many events, Iterator.trace); ram_budget: int (the most bytes the AUTOTUNE buffers
    of each iterator may hold, 0: half of the physical memory). Settings left at None keep
    dinput's defaults."""

    def __init__(self, auto_shard_policy=None, skip_corrupt_records=None, max_record_bytes=None,
                 map_files=None, allow_nonregular_files=None, deterministic=None,
                 statistics=None, trace_events=None, ram_budget=None):
        self.auto_shard_policy = auto_shard_policy
        self.skip_corrupt_records = skip_corrupt_records
        self.max_record_bytes = max_record_bytes
        self.map_files = map_files
        self.allow_nonregular_files = allow_nonregular_files
        self.deterministic = deterministic
        self.statistics = statistics
        self.trace_events = trace_events
        self.ram_budget = ram_budget

    def _c(self):
        s = []
        if self.auto_shard_policy is not None:
            p = self.auto_shard_policy
            if isinstance(p, str):
                if p.lower() not in _SHARD_POLICIES:
                    raise ValueError("dinput: unknown auto_shard_policy %r (one of %s)"
                                     % (p, ", ".join(_SHARD_POLICIES)))
                p = _SHARD_POLICIES[p.lower()]
            s.append((_L.dinput_options_set_auto_shard_policy, (p,)))
        for name in ("skip_corrupt_records", "map_files", "allow_nonregular_files",
                     "deterministic", "statistics"):
            v = getattr(self, name)
            if v is not None:
                s.append((getattr(_L, "dinput_options_set_" + name), (1 if v else 0,)))
        if self.max_record_bytes is not None:
            s.append((_L.dinput_options_set_max_record_bytes, (self.max_record_bytes,)))
        if self.trace_events is not None:
            s.append((_L.dinput_options_set_trace, (self.trace_events,)))
        if self.ram_budget is not None:
            s.append((_L.dinput_options_set_ram_budget, (self.ram_budget,)))
        return _OptionHandle(_L.dinput_options_new, _L.dinput_options_free, s)

    def __repr__(self):
        return "Options(%s)" % ", ".join("%s=%r" % kv for kv in vars(self).items()
                                         if kv[1] is not None)


# --- datasets ----------------------------------------------------------------------------
class Dataset(Handle):
    """An immutable dataset (a node of a pipeline). Transformations return new datasets;
    iterating one yields its elements as numpy arrays (a tuple for several components,
    bytes for a bytes scalar)."""

    _free = _L.dinput_dataset_free
    _kind = "dataset"

    # sources
    @classmethod
    def range(cls, start, stop=None, step=1):
        """int64 scalars like Python's range."""
        if stop is None:
            start, stop = 0, start
        return cls(_new(_L.dinput_dataset_range, start, stop, step))

    @classmethod
    def from_tensors(cls, value):
        """One element: value (a tuple for several components)."""
        e = py_to_element(value)
        try:
            return cls(_new(_L.dinput_dataset_from_tensors, e))
        finally:
            _L.dinput_element_free(e)

    @classmethod
    def from_tensor_slices(cls, value):
        """The slices of value (numpy arrays, lists; a tuple for several components) along
        their first dimension. The data is copied into dinput."""
        e = py_to_element(value)
        try:
            return cls(_new(_L.dinput_dataset_from_tensor_slices, e))
        finally:
            _L.dinput_element_free(e)

    @classmethod
    def from_generator(cls, generator, element_spec, save=None, restore=None):
        """Elements from a Python generator: generator() is called for each new iterator and
        its values (a tuple for several components) must match element_spec, a list of
        (dtype, shape) pairs (None for an unknown dimension). It may run on a dinput thread.

        save and restore (both or neither) let Iterator.save_state save the generator's
        position: save(iterator) returns bytes saying where the iterator generator() returned
        is; restore(iterator, data) is given a new one and those bytes, and returns the
        iterator to continue with (it may be the same, advanced). Without them save_state
        raises UnimplementedError naming from_generator."""
        if not callable(generator):
            raise TypeError("dinput: from_generator takes a callable returning an iterable")
        if (save is None) != (restore is None):
            raise TypeError("dinput: from_generator takes save and restore together")
        spec = py_to_spec(element_spec)
        try:
            if save is None:
                return cls(_new(_L.dinput_dataset_from_generator, spec, _gen_init, _gen_next,
                                _gen_finalize, _register(generator), _free_user_data))
            savable = _SavableGenerator(generator, save, restore)
            return cls(_new(_L.dinput_dataset_from_generator_with_state, spec, _gen_init,
                            _gen_next, _gen_finalize, _gen_save, _gen_restore,
                            _register(savable), _free_user_data))
        finally:
            _L.dinput_spec_free(spec)

    @classmethod
    def fixed_length_records(cls, files, record_bytes, header_bytes=0, footer_bytes=0):
        """One bytes scalar of record_bytes bytes per record of each file."""
        arr, n = _strs(files)
        return cls(_new(_L.dinput_dataset_fixed_length_records, arr, n, record_bytes,
                        header_bytes, footer_bytes))

    @classmethod
    def text_lines(cls, files):
        """One bytes scalar per line of each file."""
        arr, n = _strs(files)
        return cls(_new(_L.dinput_dataset_text_lines, arr, n))

    @classmethod
    def records(cls, files, compression=None, buffer_size=None):
        """One bytes scalar per record of TFRecord-framed files (compression None, "zstd" or
        "gzip"; buffer_size: the read buffer in bytes, None for dinput's choice)."""
        if compression not in _COMPRESSION:
            raise ValueError("dinput: compression must be None, 'zstd' or 'gzip', not %r"
                             % (compression,))
        arr, n = _strs(files)
        s = [(_L.dinput_records_options_set_compression, (_COMPRESSION[compression],))]
        if buffer_size is not None:
            s.append((_L.dinput_records_options_set_buffer_size, (buffer_size,)))
        with _OptionHandle(_L.dinput_records_options_new, _L.dinput_records_options_free,
                           s) as o:
            return cls(_new(_L.dinput_dataset_records, arr, n, o._h))

    @classmethod
    def list_files(cls, patterns, shuffle=False, seed=None):
        """The names (bytes) of the files matching the glob patterns, sorted, or shuffled."""
        arr, n = _strs(patterns)
        s = [(_L.dinput_list_files_options_set_shuffle, (1 if shuffle else 0,))]
        if seed is not None:
            s.append((_L.dinput_list_files_options_set_seed, (seed, 0)))
        with _OptionHandle(_L.dinput_list_files_options_new, _L.dinput_list_files_options_free,
                           s) as o:
            return cls(_new(_L.dinput_dataset_list_files, arr, n, o._h))

    # transforms
    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None):
        s = [(_L.dinput_batch_options_set_drop_remainder, (1 if drop_remainder else 0,))]
        if deterministic is not None:
            s.append((_L.dinput_batch_options_set_deterministic,
                      (_DETERMINISTIC[bool(deterministic)],)))
        if num_parallel_calls is not None:
            s.append((_L.dinput_batch_options_set_num_parallel_calls, (num_parallel_calls,)))
        with _OptionHandle(_L.dinput_batch_options_new, _L.dinput_batch_options_free, s) as o:
            return Dataset(_new(_L.dinput_dataset_batch, self._handle(), batch_size, o._h))

    def unbatch(self):
        return Dataset(_new(_L.dinput_dataset_unbatch, self._handle()))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        s = [(_L.dinput_shuffle_options_set_reshuffle_each_iteration,
              (1 if reshuffle_each_iteration else 0,))]
        if seed is not None:
            s.append((_L.dinput_shuffle_options_set_seed, (seed, 0)))
        with _OptionHandle(_L.dinput_shuffle_options_new, _L.dinput_shuffle_options_free,
                           s) as o:
            return Dataset(_new(_L.dinput_dataset_shuffle, self._handle(), buffer_size, o._h))

    def repeat(self, count=None):
        """count times, or forever when count is None."""
        return Dataset(_new(_L.dinput_dataset_repeat, self._handle(),
                            -1 if count is None else count))

    def take(self, count):
        return Dataset(_new(_L.dinput_dataset_take, self._handle(), count))

    def skip(self, count):
        return Dataset(_new(_L.dinput_dataset_skip, self._handle(), count))

    def shard(self, num_shards, index):
        return Dataset(_new(_L.dinput_dataset_shard, self._handle(), num_shards, index))

    def rebatch(self, sizes, drop_remainder=False):
        """Regroups the rows of batched input into batches whose sizes cycle through sizes."""
        sizes = list(sizes)
        return Dataset(_new(_L.dinput_dataset_rebatch, self._handle(),
                            (c_int64 * max(len(sizes), 1))(*sizes), len(sizes),
                            1 if drop_remainder else 0))

    def enumerate(self, start=0):
        return Dataset(_new(_L.dinput_dataset_enumerate, self._handle(), start))

    def prefetch(self, buffer_size=AUTOTUNE):
        return Dataset(_new(_L.dinput_dataset_prefetch, self._handle(), buffer_size))

    # --- tf.train.Example parsing (docs/examples.md) ---
    def parse_example(self, features, component=0):
        """Parses batches of serialized Examples: component `component` is a bytes vector;
        the parsed components (by sorted key of `features`, a dict of key -> feature) take
        its place."""
        from .example import FeatureSpec
        with FeatureSpec(features) as f:
            return Dataset(_new(_L.dinput_dataset_parse_example, self._handle(), f, component))

    def parse_single_example(self, features, component=0):
        """As parse_example, for one serialized Example (a bytes scalar) per element."""
        from .example import FeatureSpec
        with FeatureSpec(features) as f:
            return Dataset(_new(_L.dinput_dataset_parse_single_example, self._handle(), f,
                                component))

    def parse_sequence_example(self, context_features=None, sequence_features=None,
                               component=0):
        """Parses serialized SequenceExamples (a bytes scalar or vector): the context
        features, then the feature lists."""
        from .example import FeatureSpec
        with FeatureSpec(context_features) as c, FeatureSpec(sequence_features) as s:
            return Dataset(_new(_L.dinput_dataset_parse_sequence_example, self._handle(), c,
                                s, component))

    # images (docs/images.md): each maps one component; num_parallel_calls and deterministic
    # as for map
    def _image_op(self, fn, args, component, num_parallel_calls, deterministic):
        s = [(_L.dinput_image_options_set_component, (component,))]
        if num_parallel_calls is not None:
            s.append((_L.dinput_image_options_set_num_parallel_calls, (num_parallel_calls,)))
        if deterministic is not None:
            s.append((_L.dinput_image_options_set_deterministic,
                      (_DETERMINISTIC[bool(deterministic)],)))
        with _OptionHandle(_L.dinput_image_options_new, _L.dinput_image_options_free, s) as o:
            return Dataset(_new(fn, self._handle(), *args, o._h))

    def decode_jpeg(self, channels=0, component=0, num_parallel_calls=None, deterministic=None):
        """JPEG bytes to uint8 [height, width, channels]."""
        return self._image_op(_L.dinput_dataset_decode_jpeg, (channels,), component,
                              num_parallel_calls, deterministic)

    def decode_png(self, channels=0, component=0, num_parallel_calls=None, deterministic=None):
        """PNG bytes to uint8 [height, width, channels]."""
        return self._image_op(_L.dinput_dataset_decode_png, (channels,), component,
                              num_parallel_calls, deterministic)

    def resize(self, size, component=0, num_parallel_calls=None, deterministic=None):
        """Bilinear resizing (half-pixel centres) to size = (height, width); float32."""
        return self._image_op(_L.dinput_dataset_resize, tuple(size), component,
                              num_parallel_calls, deterministic)

    def center_crop(self, size, component=0, num_parallel_calls=None, deterministic=None):
        return self._image_op(_L.dinput_dataset_center_crop, tuple(size), component,
                              num_parallel_calls, deterministic)

    def random_crop(self, size, seed=None, component=0, num_parallel_calls=None,
                    deterministic=None):
        return self._image_op(_L.dinput_dataset_random_crop,
                              tuple(size) + (-1 if seed is None else seed,), component,
                              num_parallel_calls, deterministic)

    def random_resized_crop(self, size, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), seed=None,
                            component=0, num_parallel_calls=None, deterministic=None):
        return self._image_op(_L.dinput_dataset_random_resized_crop,
                              tuple(size) + (scale[0], scale[1], ratio[0], ratio[1],
                                             -1 if seed is None else seed),
                              component, num_parallel_calls, deterministic)

    def random_flip_left_right(self, seed=None, component=0, num_parallel_calls=None,
                               deterministic=None):
        return self._image_op(_L.dinput_dataset_random_flip_left_right,
                              (-1 if seed is None else seed,), component, num_parallel_calls,
                              deterministic)

    def cast_image(self, dtype="float32", component=0, num_parallel_calls=None,
                   deterministic=None):
        return self._image_op(_L.dinput_dataset_cast_image, (_dtype_code(dtype),), component,
                              num_parallel_calls, deterministic)

    def normalize(self, mean, stddev, dtype="float32", component=0, num_parallel_calls=None,
                  deterministic=None):
        """(x - mean[c]) / stddev[c] per channel c."""
        mean, stddev = list(mean), list(stddev)
        n = max(len(mean), 1)
        return self._image_op(_L.dinput_dataset_normalize,
                              ((c_float * n)(*mean), (c_float * n)(*stddev), len(mean),
                               _dtype_code(dtype)),
                              component, num_parallel_calls, deterministic)

    def with_options(self, options):
        with options._c() as o:
            return Dataset(_new(_L.dinput_dataset_with_options, self._handle(), o._h))

    # ---- several datasets, cache and ignore_errors ----

    @staticmethod
    def zip(*datasets):
        """Elements made of one element of each dataset, their components one after the
        other in one flat tuple; ends with the shortest. Dataset.zip(a, b) or
        Dataset.zip((a, b))."""
        if len(datasets) == 1 and isinstance(datasets[0], (tuple, list)):
            datasets = tuple(datasets[0])
        return Dataset(_new(_L.dinput_dataset_zip, _handles(datasets), len(datasets)))

    def concatenate(self, dataset):
        """This dataset's elements, then those of dataset (compatible specs)."""
        return Dataset(_new(_L.dinput_dataset_concatenate, self._handle(), dataset._handle()))

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
        """Each element from one of datasets, picked at random with probabilities
        proportional to weights (None: equal); the same seed gives the same picks (None:
        random). stop_on_empty_dataset ends at the first pick of an exhausted dataset."""
        datasets = list(datasets)
        w = None
        if weights is not None:
            weights = [float(x) for x in weights]
            if len(weights) != len(datasets):
                raise ValueError("sample_from_datasets: %d weights for %d datasets"
                                 % (len(weights), len(datasets)))
            w = (c_double * max(len(weights), 1))(*weights)
        if seed is not None and seed < 0:
            raise ValueError("sample_from_datasets: seed must be >= 0, got %d" % seed)
        return Dataset(_new(_L.dinput_dataset_sample_from_datasets, _handles(datasets),
                            len(datasets), w, -1 if seed is None else seed,
                            1 if stop_on_empty_dataset else 0))

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        """Each element from datasets[i], i being the next element of choice_dataset (int64
        scalars); an index outside the datasets fails iteration (InvalidArgumentError)."""
        datasets = list(datasets)
        return Dataset(_new(_L.dinput_dataset_choose_from_datasets, _handles(datasets),
                            len(datasets), choice_dataset._handle(),
                            1 if stop_on_empty_dataset else 0))

    def cache(self, filename=""):
        """Keeps the first complete pass (in memory, or in the file filename that a later run
        reads back) and delivers it to later passes."""
        return Dataset(_new(_L.dinput_dataset_cache, self._handle(),
                            os.fsencode(filename) if filename else None))

    def ignore_errors(self, log_warning=False):
        """Drops the elements whose making failed with InvalidArgumentError or DataLossError;
        the iterator statistic "errors_ignored" counts them. Other errors pass."""
        return Dataset(_new(_L.dinput_dataset_ignore_errors, self._handle(),
                            1 if log_warning else 0))

    def map(self, fn, num_parallel_calls=None, element_spec=None, deterministic=None):
        """Applies fn (numpy values in, values out) to each element. element_spec, a list of
        (dtype, shape) pairs, is needed when the results' spec differs from the input's.
        fn runs on dinput's threads (holding the GIL while it runs)."""
        return self._map_node(lambda o: _new(_L.dinput_dataset_map, self._handle(), _map_tramp,
                                             _register(fn), _free_user_data, o),
                              num_parallel_calls, element_spec, deterministic)

    def map_many(self, fn, max_count, num_parallel_calls=None, element_spec=None,
                 deterministic=None):
        """map with a function that serves up to max_count consecutive elements per call: fn
        takes a list of elements (each as map's fn gets it) and returns a list of as many
        results, in order; only the last list of the input is shorter. The results are map's,
        with one crossing into Python per list instead of per element. An exception from fn
        fails the iteration at the first element of its list."""
        if max_count < 1:
            raise ValueError("map_many: max_count must be at least 1, got %r" % (max_count,))
        return self._map_node(lambda o: _new(_L.dinput_dataset_map_many, self._handle(),
                                             max_count, _map_many_tramp, _register(fn),
                                             _free_user_data, o),
                              num_parallel_calls, element_spec, deterministic)

    def _map_node(self, make, num_parallel_calls, element_spec, deterministic):
        s = []
        if num_parallel_calls is not None:
            s.append((_L.dinput_map_options_set_num_parallel_calls, (num_parallel_calls,)))
        if deterministic is not None:
            s.append((_L.dinput_map_options_set_deterministic,
                      (_DETERMINISTIC[bool(deterministic)],)))
        spec = py_to_spec(element_spec) if element_spec is not None else None
        try:
            if spec is not None:
                s.append((_L.dinput_map_options_set_out_spec, (spec,)))
            with _OptionHandle(_L.dinput_map_options_new, _L.dinput_map_options_free, s) as o:
                # The library owns user_data from the call on (and frees it on failure too).
                return Dataset(make(o._h))
        finally:
            _L.dinput_spec_free(spec)

    def filter(self, predicate):
        """Keeps the elements for which predicate (numpy values in) is true."""
        return Dataset(_new(_L.dinput_dataset_filter, self._handle(), _filter_tramp,
                            _register(predicate), _free_user_data))

    def interleave(self, fn, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, element_spec=None):
        """For each element (numpy values, a file name as bytes), fn returns a Dataset;
        cycle_length of them are read at once, block_length elements from each in turn.
        element_spec (a list of (dtype, shape)) is the spec of the datasets fn returns; when
        omitted it is read from fn applied to the first element of this dataset."""
        if element_spec is None:
            with self.take(1) as first, first.iterator() as it:
                try:
                    probe = fn(it.get_next())
                except OutOfRangeError:
                    probe = None
            element_spec = probe.element_spec if probe is not None else [("bytes", [])]
        s = []
        if cycle_length is not None:
            s.append((_L.dinput_interleave_options_set_cycle_length, (cycle_length,)))
        if block_length is not None:
            s.append((_L.dinput_interleave_options_set_block_length, (block_length,)))
        if num_parallel_calls is not None:
            s.append((_L.dinput_interleave_options_set_num_parallel_calls, (num_parallel_calls,)))
        if deterministic is not None:
            s.append((_L.dinput_interleave_options_set_deterministic,
                      (_DETERMINISTIC[bool(deterministic)],)))
        spec = py_to_spec(element_spec)
        try:
            with _OptionHandle(_L.dinput_interleave_options_new,
                               _L.dinput_interleave_options_free, s) as o:
                return Dataset(_new(_L.dinput_dataset_interleave, self._handle(),
                                    _interleave_tramp, spec, _register(fn), _free_user_data,
                                    o._h))
        finally:
            _L.dinput_spec_free(spec)

    # padded batches, buckets, windows, flat_map, and readers as values
    def _padded_options(self, padded_shapes, padding_values, drop_remainder):
        """The setters of a padded-batch options handle for this dataset's elements."""
        spec = self.element_spec
        s = [(_L.dinput_padded_batch_options_set_drop_remainder, (1 if drop_remainder else 0,))]
        made = []
        if padded_shapes is not None:
            if len(spec) == 1 and all(d is None or isinstance(d, int) for d in padded_shapes):
                padded_shapes = [padded_shapes]
            if len(padded_shapes) != len(spec):
                raise ValueError("dinput: padded_shapes has %d shapes but the elements have %d "
                                 "components" % (len(padded_shapes), len(spec)))
            h = py_to_spec([(c.dtype, shape) for c, shape in zip(spec, padded_shapes)])
            made.append((_L.dinput_spec_free, h))
            s.append((_L.dinput_padded_batch_options_set_padded_shapes, (h,)))
        if padding_values is not None:
            if not isinstance(padding_values, tuple):
                padding_values = (padding_values,) * len(spec)
            import numpy as np
            values = tuple(v if c.dtype == "bytes" else np.asarray(v, dtype=c.dtype)
                           for c, v in zip(spec, padding_values))
            h = py_to_element(values)
            made.append((_L.dinput_element_free, h))
            s.append((_L.dinput_padded_batch_options_set_padding_values, (h,)))
        return s, made

    def _with_padded_options(self, padded_shapes, padding_values, drop_remainder, make):
        s, made = self._padded_options(padded_shapes, padding_values, drop_remainder)
        try:
            with _OptionHandle(_L.dinput_padded_batch_options_new,
                               _L.dinput_padded_batch_options_free, s) as o:
                return Dataset(make(o._h))
        finally:
            for free, h in made:
                free(h)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False):
        """Combines batch_size consecutive elements like batch, padding each component to one
        shape first (tf.data's padded_batch): padded_shapes gives one shape per component (a
        single shape for one component; None in a shape pads to the batch's longest),
        padding_values one value per component (a tuple) or one for all (default 0 or b"")."""
        return self._with_padded_options(
            padded_shapes, padding_values, drop_remainder,
            lambda o: _new(_L.dinput_dataset_padded_batch, self._handle(), batch_size, o))

    def bucket_by_sequence_length(self, length_component, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None, padding_values=None,
                                  pad_to_bucket_boundary=False, drop_remainder=False):
        """Groups elements by the length (first dimension) of component length_component into
        padded batches: bucket i takes lengths in [boundaries[i-1], boundaries[i]) and goes out
        once it holds bucket_batch_sizes[i] elements; at the end of the input the partly
        filled buckets go out in bucket order."""
        b, n = list(bucket_boundaries), list(bucket_batch_sizes)
        return self._with_padded_options(
            padded_shapes, padding_values, drop_remainder,
            lambda o: _new(_L.dinput_dataset_bucket_by_sequence_length, self._handle(),
                           length_component, (c_int64 * max(len(b), 1))(*b), len(b),
                           (c_int64 * max(len(n), 1))(*n), len(n),
                           1 if pad_to_bucket_boundary else 0, o))

    def bucket_by_sequence_length_fn(self, element_length_func, bucket_boundaries,
                                     bucket_batch_sizes, padded_shapes=None, padding_values=None,
                                     pad_to_bucket_boundary=False, drop_remainder=False):
        """bucket_by_sequence_length with each element's length given by
        element_length_func (numpy values in, an int >= 0 out), as tf.data's
        element_length_func, rather than taken from a component."""
        b, n = list(bucket_boundaries), list(bucket_batch_sizes)
        return self._with_padded_options(
            padded_shapes, padding_values, drop_remainder,
            lambda o: _new(_L.dinput_dataset_bucket_by_sequence_length_fn, self._handle(),
                           _length_tramp, _register(element_length_func), _free_user_data,
                           (c_int64 * max(len(b), 1))(*b), len(b),
                           (c_int64 * max(len(n), 1))(*n), len(n),
                           1 if pad_to_bucket_boundary else 0, o))

    def window(self, size, shift=None, stride=1, drop_remainder=False):
        """Sliding windows, each one element stacking its rows (tf.data's window followed by
        flat_map(lambda *w: zip(w).batch(size))); shift None: size."""
        return Dataset(_new(_L.dinput_dataset_window, self._handle(), size,
                            size if shift is None else shift, stride,
                            1 if drop_remainder else 0))

    def flat_map(self, fn, element_spec):
        """For each element, reads the Dataset fn returns to its end before the next one
        (tf.data's flat_map); element_spec is the spec of those datasets."""
        spec = py_to_spec(element_spec)
        try:
            return Dataset(_new(_L.dinput_dataset_flat_map, self._handle(), _interleave_tramp,
                                spec, _register(fn), _free_user_data))
        finally:
            _L.dinput_spec_free(spec)

    def interleave_reader(self, reader, cycle_length=None, block_length=None,
                          num_parallel_calls=None, deterministic=None):
        """interleave over file names, each read by reader (a Reader), with no Python
        callback. FILE auto-sharding splits the file list."""
        s = []
        if cycle_length is not None:
            s.append((_L.dinput_interleave_options_set_cycle_length, (cycle_length,)))
        if block_length is not None:
            s.append((_L.dinput_interleave_options_set_block_length, (block_length,)))
        if num_parallel_calls is not None:
            s.append((_L.dinput_interleave_options_set_num_parallel_calls, (num_parallel_calls,)))
        if deterministic is not None:
            s.append((_L.dinput_interleave_options_set_deterministic,
                      (_DETERMINISTIC[bool(deterministic)],)))
        r = reader._make()
        try:
            with _OptionHandle(_L.dinput_interleave_options_new,
                               _L.dinput_interleave_options_free, s) as o:
                return Dataset(_new(_L.dinput_dataset_interleave_reader, self._handle(), r,
                                    o._h))
        finally:
            _L.dinput_reader_free(r)

    def flat_map_reader(self, reader):
        """Reads each file named by this dataset whole, in order, with reader."""
        r = reader._make()
        try:
            return Dataset(_new(_L.dinput_dataset_flat_map_reader, self._handle(), r))
        finally:
            _L.dinput_reader_free(r)

    # properties and iteration
    @property
    def cardinality(self):
        """Number of elements, INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2)."""
        return _L.dinput_dataset_cardinality(self._handle())

    def __len__(self):
        n = self.cardinality
        if n < 0:
            raise TypeError("dinput: the dataset's length is %s"
                            % ("infinite" if n == -1 else "unknown"))
        return n

    @property
    def element_spec(self):
        """A list of TensorSpec (dtype, shape) per component."""
        return spec_to_py(_new(_L.dinput_dataset_element_spec, self._handle()))

    @property
    def name(self):
        return _L.dinput_dataset_name(self._handle()).decode()

    def iterator(self, output="numpy"):
        """A new iterator (an epoch). output "numpy" yields numpy values, "tensor" Tensor
        handles (for DLPack consumers such as torch.from_dlpack)."""
        return Iterator(_new(_L.dinput_dataset_iterator, self._handle()), output)

    def iterator_from_state(self, state, output="numpy"):
        """An iterator that continues where the iterator that saved `state` (bytes from
        Iterator.save_state) stopped. This dataset must be built as the saved one was, else
        FailedPreconditionError names the first operation that differs; a damaged or
        truncated state raises DataLossError."""
        state = bytes(state)
        return Iterator(_new(_L.dinput_dataset_iterator_from_state, self._handle(), state,
                             len(state)), output)

    def __iter__(self):
        return self.iterator()

    def __repr__(self):
        return "<dinput.Dataset %s>" % (self.name if self._h else "closed")


class Optional(Handle):
    """A value or nothing, from get_next_as_optional."""

    _free = _L.dinput_optional_free
    _kind = "optional"

    def __init__(self, handle, convert):
        Handle.__init__(self, handle)
        self._convert = convert

    def has_value(self):
        return bool(_L.dinput_optional_has_value(self._handle()))

    def get_value(self):
        """The value; InvalidArgumentError when empty."""
        return self._convert(self._handle())


class Iterator(Handle):
    """One pass over a dataset. `get_next()` raises OutOfRangeError at the end; Python
    iteration stops there instead. cancel() may be called from any thread."""

    _free = _L.dinput_iterator_free
    _kind = "iterator"

    def __init__(self, handle, output="numpy"):
        Handle.__init__(self, handle)
        self._output = output
        self._infos = [(_lib.TensorInfo * 4)()]
        _live_iterators.add(self)

    def _value(self, eh):
        if self._output == "numpy":
            values = owned_numpy_values(eh, _L.dinput_element_tensor_infos,
                                        _L.dinput_element_free, self._infos)
            return values[0] if len(values) == 1 else tuple(values)
        try:
            return element_to_py(eh, self._output)
        finally:
            _L.dinput_element_free(eh)

    def get_next(self):
        out = c_void_p()
        st = _L.dinput_iterator_get_next(byref(out), self._handle())
        if st:
            raise error(st)
        return self._value(out)

    def __next__(self):
        out = c_void_p()
        st = _L.dinput_iterator_get_next(byref(out), self._handle())
        if st == 11:
            raise StopIteration
        if st:
            raise error(st)
        return self._value(out)

    def __iter__(self):
        return self

    def get_next_as_optional(self):
        def convert(oh):
            return self._value(_new(_L.dinput_optional_get_value, oh))
        return Optional(_new(_L.dinput_iterator_get_next_as_optional, self._handle()), convert)

    def cancel(self):
        check(_L.dinput_iterator_cancel(self._handle()))

    @property
    def element_spec(self):
        return spec_to_py(_new(_L.dinput_iterator_element_spec, self._handle()))

    def statistic(self, name):
        """A counter: "records", "record_bytes", "corrupt_records_skipped", ..."""
        out = c_int64()
        check(_L.dinput_iterator_statistic(byref(out), self._handle(), name.encode()))
        return out.value

    def statistics(self):
        """The per-stage statistics so far, a JSON document (docs/statistics.md)."""
        return take_string(_L.dinput_iterator_statistics, self._handle())

    def statistics_dict(self):
        """statistics() parsed into a dict."""
        return json.loads(self.statistics())

    def trace(self):
        """The trace in the Trace Event JSON format (Perfetto, chrome://tracing); no slices
        unless Options(trace_events=N) asked for them."""
        return take_string(_L.dinput_iterator_trace, self._handle())

    def save_state(self):
        """Where the iterator is, as bytes holding positions and seeds, never elements
        (docs/checkpoint.md); Dataset.iterator_from_state continues from them, reading again
        what was read ahead but not returned. UnimplementedError names an operation that
        cannot save its state yet."""
        state = _new(_L.dinput_iterator_save, self._handle())
        try:
            return string_at(_L.dinput_state_data(state), _L.dinput_state_size(state))
        finally:
            _L.dinput_state_free(state)


class RecordWriter(Handle):
    """Writes a TFRecord-framed file (compression None, "zstd" or "gzip"; level 0: the
    codec's default). Used by one thread at a time."""

    _free = _L.dinput_record_writer_free
    _kind = "record writer"

    def __init__(self, path, compression=None, level=0, zstd_window_log=0):
        if compression not in _COMPRESSION:
            raise ValueError("dinput: compression must be None, 'zstd' or 'gzip', not %r"
                             % (compression,))
        s = [(_L.dinput_record_writer_options_set_compression, (_COMPRESSION[compression],)),
             (_L.dinput_record_writer_options_set_level, (level,)),
             (_L.dinput_record_writer_options_set_zstd_window_log, (zstd_window_log,))]
        with _OptionHandle(_L.dinput_record_writer_options_new,
                           _L.dinput_record_writer_options_free, s) as o:
            Handle.__init__(self, _new(_L.dinput_record_writer_open, str(path).encode(), o._h))

    def write(self, record):
        data = record.encode() if isinstance(record, str) else bytes(record)
        check(_L.dinput_record_writer_write(self._handle(), data, len(data)))

    def flush(self):
        check(_L.dinput_record_writer_flush(self._handle()))

    def discard(self):
        """Abandons the file (removes what was written) and frees the writer."""
        h = getattr(self, "_h", None)
        if not h:
            return
        self._h = None
        try:
            check(_L.dinput_record_writer_discard(h))
        finally:
            _L.dinput_record_writer_free(h)

    def __exit__(self, exc_type, *rest):
        # An exception inside the with block leaves no half-written file behind.
        if exc_type is not None:
            self.discard()
        else:
            self.close()

    def close(self):
        """Flushes and closes the file (errors are raised), then frees the writer."""
        h = getattr(self, "_h", None)
        if not h:
            return
        self._h = None
        try:
            check(_L.dinput_record_writer_close(h))
        finally:
            _L.dinput_record_writer_free(h)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h:  # collected unclosed: free without raising
            try:
                _L.dinput_record_writer_free(h)
            except Exception:
                pass


class Reader:
    """A file reader as a value, for Dataset.interleave_reader and flat_map_reader:
    Reader.records(compression=None, buffer_size=None), Reader.text_lines() or
    Reader.fixed_length_records(record_bytes, header_bytes=0, footer_bytes=0)."""

    def __init__(self, make):
        self._make = make

    @classmethod
    def records(cls, compression=None, buffer_size=None):
        if compression not in _COMPRESSION:
            raise ValueError("dinput: compression must be None, 'zstd' or 'gzip', not %r"
                             % (compression,))
        s = [(_L.dinput_records_options_set_compression, (_COMPRESSION[compression],))]
        if buffer_size is not None:
            s.append((_L.dinput_records_options_set_buffer_size, (buffer_size,)))

        def make():
            with _OptionHandle(_L.dinput_records_options_new, _L.dinput_records_options_free,
                               s) as o:
                return _new(_L.dinput_reader_records, o._h)
        return cls(make)

    @classmethod
    def text_lines(cls):
        return cls(lambda: _new(_L.dinput_reader_text_lines))

    @classmethod
    def fixed_length_records(cls, record_bytes, header_bytes=0, footer_bytes=0):
        return cls(lambda: _new(_L.dinput_reader_fixed_length_records, record_bytes,
                                header_bytes, footer_bytes))
