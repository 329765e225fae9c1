"""dinput for Python: distributed input pipelines, through the C library with ctypes.

    import dinput
    files = dinput.Dataset.list_files("/data/train-*.rec")
    ds = (files.interleave(lambda f: dinput.Dataset.records([f]), cycle_length=4)
               .shuffle(10000).batch(256))
    strategy = dinput.Strategy(["CPU:0", "CPU:1"])
    for step in strategy.distribute_dataset(ds):
        ...  # step: one numpy batch per replica

The library is libdinput.so.0: the file named by DINPUT_LIBRARY, else the build directory of
the source tree this package is in, else the system's. Tensors export to numpy and torch
without copying (`numpy.from_dlpack`, `torch.from_dlpack`); `dinput.torch_data` (imported
on demand, needs torch) adapts a dataset to torch.utils.data.
"""

from . import _lib
from .errors import (DinputError, CancelledError, UnknownError, InvalidArgumentError,
                     DeadlineExceededError, NotFoundError, AlreadyExistsError,
                     PermissionDeniedError, ResourceExhaustedError, FailedPreconditionError,
                     AbortedError, OutOfRangeError, UnimplementedError, InternalError,
                     UnavailableError, DataLossError, UnauthenticatedError, error_class)
from .tensor import (Tensor, TensorSpec, cuda_cache_limit, cuda_empty_cache, cuda_pool_bytes,
                     cuda_set_cache_limit)
from .dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, Iterator,
                      Optional, Options, Reader, RecordWriter)
from .example import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
from .distribute import (Cluster, Collective, DistributedDataset, DistributedIterator,
                         InputContext, ReplicaContext, Strategy)

__all__ = [
    "DinputError", "CancelledError", "UnknownError", "InvalidArgumentError",
    "DeadlineExceededError", "NotFoundError", "AlreadyExistsError", "PermissionDeniedError",
    "ResourceExhaustedError", "FailedPreconditionError", "AbortedError", "OutOfRangeError",
    "UnimplementedError", "InternalError", "UnavailableError", "DataLossError",
    "UnauthenticatedError", "error_class", "Tensor", "TensorSpec", "AUTOTUNE",
    "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Dataset", "Iterator", "Optional", "Options",
    "RecordWriter", "Cluster", "Collective", "DistributedDataset", "DistributedIterator",
    "InputContext", "ReplicaContext", "Strategy", "build_info", "describe_state", "library_path",
    "cuda_cache_limit", "cuda_empty_cache", "cuda_pool_bytes", "cuda_set_cache_limit",
    "FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature", "Reader"]

library_path = _lib.path
__version__ = _lib.lib.dinput_version().decode()


def describe_state(state):
    """What a saved state (bytes from Iterator.save_state or DistributedIterator.save_state)
    holds, parsed from the library's JSON to a dict: its kind, the pipeline's operations, the
    random seeds, and for a distributed iterator the job's shape, step and each worker's
    pipelines. A damaged state raises DataLossError."""
    import json
    from ctypes import string_at
    from .dataset import _new
    state = bytes(state)
    h = _new(_lib.lib.dinput_state_describe, state, len(state))
    try:
        return json.loads(string_at(_lib.lib.dinput_state_data(h), _lib.lib.dinput_state_size(h)))
    finally:
        _lib.lib.dinput_state_free(h)


def build_info():
    """What the library was built with (JSON text parsed to a dict)."""
    import json
    return json.loads(_lib.lib.dinput_build_info().decode())
