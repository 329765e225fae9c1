"""Feature specs for parsing serialized tf.train.Example and SequenceExample records
(Dataset.parse_example and its relatives; docs/examples.md)."""

from ctypes import byref, c_int64, c_void_p

from . import _lib
from .errors import check
from .tensor import DTYPES, _new_tensor

_L = _lib.lib


def _dtype(dtype):
    code = DTYPES.get(dtype) if isinstance(dtype, str) else int(dtype)
    if code is None:
        raise ValueError("dinput: unknown dtype %r" % (dtype,))
    return code


class FixedLenFeature:
    """tf.io.FixedLenFeature(shape, dtype, default_value): exactly prod(shape) values of dtype
    ("int64", "float32" or "bytes") per record; default_value (that many values, or one to
    repeat) stands in for a record that lacks the key."""

    def __init__(self, shape, dtype, default_value=None):
        self.shape, self.dtype, self.default_value = list(shape), dtype, default_value

    def _add(self, sh, key):
        dims = [int(d) for d in self.shape]
        with _Default(self.default_value, self.dtype) as d:
            check(_L.dinput_feature_spec_add_fixed_len(
                sh, key, _dtype(self.dtype), (c_int64 * max(len(dims), 1))(*dims), len(dims), d))


class VarLenFeature:
    """tf.io.VarLenFeature(dtype): any number of values; parse_example gives the values and
    their int64 row splits (TensorFlow's RaggedTensor encoding)."""

    def __init__(self, dtype):
        self.dtype = dtype

    def _add(self, sh, key):
        check(_L.dinput_feature_spec_add_var_len(sh, key, _dtype(self.dtype)))


class FixedLenSequenceFeature:
    """tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing, default_value): a sequence
    of values of shape per record, padded in a batch with default_value (one value)."""

    def __init__(self, shape, dtype, allow_missing=False, default_value=None):
        self.shape, self.dtype = list(shape), dtype
        self.allow_missing, self.default_value = allow_missing, default_value

    def _add(self, sh, key):
        dims = [int(d) for d in self.shape]
        with _Default(self.default_value, self.dtype) as d:
            check(_L.dinput_feature_spec_add_fixed_len_sequence(
                sh, key, _dtype(self.dtype), (c_int64 * max(len(dims), 1))(*dims), len(dims),
                1 if self.allow_missing else 0, d))


class _Default:
    """A temporary tensor handle for a default value (None: NULL)."""

    def __init__(self, value, dtype):
        self.h = None
        if value is not None:
            import numpy as np
            if dtype == "bytes":
                arr = np.asarray(value, dtype=object)
            else:
                arr = np.asarray(value, dtype=dtype)
            self.h = _new_tensor(arr)

    def __enter__(self):
        return self.h

    def __exit__(self, *exc):
        if self.h is not None:
            _L.dinput_tensor_free(self.h)


class FeatureSpec:
    """A C feature spec built from a dict of key -> feature (None: NULL), freed on exit."""

    def __init__(self, features):
        self.h = None
        if features is None:
            return
        self.h = c_void_p()
        check(_L.dinput_feature_spec_new(byref(self.h)))
        try:
            for key, feature in features.items():
                feature._add(self.h, key.encode() if isinstance(key, str) else bytes(key))
        except BaseException:
            _L.dinput_feature_spec_free(self.h)
            raise

    def __enter__(self):
        return self.h

    def __exit__(self, *exc):
        if self.h is not None:
            _L.dinput_feature_spec_free(self.h)
