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
    "InputContext", "ReplicaContext", "Strategy", "build_info", "library_path",
    "cuda_cache_limit", "cuda_empty_cache", "cuda_pool_bytes", "cuda_set_cache_limit",
    "Reader"]

library_path = _lib.path
__version__ = _lib.lib.dinput_version().decode()


def build_info():
    """What the library was built with (JSON text parsed to a dict)."""
    import json
    return json.loads(_lib.lib.dinput_build_info().decode())
