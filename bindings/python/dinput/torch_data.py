"""dinput datasets as torch.utils.data datasets. Importing this module imports torch; the
rest of the package never does.

    loader = torch.utils.data.DataLoader(dinput.torch_data.IterableDataset(ds), batch_size=None)

Batch with dinput (Dataset.batch) and give the DataLoader batch_size=None: dinput's batches
then reach the training loop as they are, without torch collating them again.
"""

import torch
import torch.utils.data

from .dataset import Dataset
from .tensor import BYTES, DTYPES

_BOOL = DTYPES["bool"]


def to_torch(tensor):
    """A dinput Tensor as a torch tensor sharing its memory (through DLPack); bytes tensors
    become bytes (rank 0) or a list of bytes, which torch has no dtype for."""
    from . import _lib
    code = _lib.lib.dinput_tensor_dtype(tensor._handle())
    if code == BYTES:
        v = tensor.numpy()
        return v if isinstance(v, bytes) else v.tolist()
    t = torch.utils.dlpack.from_dlpack(tensor)
    if code == _BOOL:
        t = t.view(torch.bool)  # exported as uint8 (DLPack before 0.8 has no bool)
    return t


class IterableDataset(torch.utils.data.IterableDataset):
    """Iterates a dinput Dataset, yielding torch tensors (a tuple for several components).

    With DataLoader(num_workers=N > 1), each worker process reads the shard of the dataset
    with its worker id (Dataset.shard), so that the workers do not yield the same elements;
    pass shard=False when the dataset is already split another way."""

    def __init__(self, dataset, shard=True):
        super().__init__()
        if not isinstance(dataset, Dataset):
            raise TypeError("dinput.torch_data.IterableDataset takes a dinput.Dataset, not %s"
                            % type(dataset).__name__)
        self.dataset = dataset
        self.shard = shard

    def __iter__(self):
        ds = self.dataset
        info = torch.utils.data.get_worker_info()
        if self.shard and info is not None and info.num_workers > 1:
            ds = ds.shard(info.num_workers, info.id)
        with ds.iterator(output="tensor") as it:
            for value in it:
                if isinstance(value, tuple):
                    yield tuple(self._convert(t) for t in value)
                else:
                    yield self._convert(value)

    @staticmethod
    def _convert(t):
        try:
            return to_torch(t)
        finally:
            t.close()

    def __len__(self):
        return len(self.dataset)
