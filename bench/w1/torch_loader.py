"""W1 baseline (b): PyTorch DataLoader over the same record files.

A map-style Dataset over mmap'd files with a record index (built once by parsing the
TFRecord framing). A BatchSampler over a RandomSampler (fixed generator seed, batch 256)
hands the Dataset a list of indices; __getitem__ verifies both masked CRC32C of each record
(python3-crc32c, hardware CRC32C) and returns one uint8 tensor [B, L] of the batch. The
consumer sums every byte. Prints one JSON object.
Usage: /usr/bin/python3 torch_loader.py NUM_WORKERS FILE...
"""
import json
import mmap
import os
import struct
import sys
import time

import numpy as np
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

try:
    import crc32c as _crc

    _crcfn = getattr(_crc, "crc32c", None) or _crc.crc32
    CRC_IMPL = "python3-crc32c (%s)" % getattr(_crc, "hardware_based", "?")
except ImportError:  # no fast CRC32C: do not verify
    _crcfn = None
    CRC_IMPL = "none"
if os.environ.get("W1_TORCH_CRC") == "0":  # the loader as usually written: no CRC checks
    _crcfn = None
    CRC_IMPL = "off"


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class RecordDataset(Dataset):
    def __init__(self, files):
        self.files = list(files)
        self.maps = None
        fidx, offs, lens = [], [], []
        for fi, path in enumerate(self.files):  # index built once, in the parent
            with open(path, "rb") as f:
                mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            off, size = 0, len(mm)
            while off < size:
                (n,) = struct.unpack_from("<Q", mm, off)
                if off + 16 + n > size:
                    raise ValueError("%s: truncated at %d" % (path, off))
                fidx.append(fi)
                offs.append(off)
                lens.append(n)
                off += 16 + n
            mm.close()
        self.fidx = np.array(fidx, dtype=np.int32)
        self.offs = np.array(offs, dtype=np.int64)
        self.lens = np.array(lens, dtype=np.int64)
        if len(set(lens)) != 1:
            raise ValueError("this benchmark stacks equal-length records")
        self.reclen = lens[0]

    def __len__(self):
        return len(self.offs)

    def _open(self):  # lazily, so each worker process maps the files itself
        self.maps = []
        for path in self.files:
            with open(path, "rb") as f:
                self.maps.append(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))

    def __getitem__(self, indices):  # a batch-level __getitem__: a list of indices
        if self.maps is None:
            self._open()
        out = np.empty((len(indices), self.reclen), dtype=np.uint8)
        maps, fidx, offs, lens = self.maps, self.fidx, self.offs, self.lens
        unpack = struct.unpack_from
        crc = _crcfn
        for row, i in enumerate(indices):
            mm = maps[fidx[i]]
            off = int(offs[i])
            n = int(lens[i])
            mv = memoryview(mm)
            if crc is not None:
                lcrc, = unpack("<I", mm, off + 8)
                dcrc, = unpack("<I", mm, off + 12 + n)
                if masked(crc(mv[off:off + 8])) != lcrc or masked(crc(mv[off + 12:off + 12 + n])) != dcrc:
                    raise ValueError("bad CRC in %s at %d" % (self.files[fidx[i]], off))
            out[row] = np.frombuffer(mv[off + 12:off + 12 + n], dtype=np.uint8)
            mv.release()
        return torch.from_numpy(out)


def main():
    workers = int(sys.argv[1])
    files = sys.argv[2:]
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    ds = RecordDataset(files)
    g = torch.Generator()
    g.manual_seed(1)
    sampler = BatchSampler(RandomSampler(ds, generator=g), batch_size=256, drop_last=False)
    dl = DataLoader(ds, sampler=sampler, batch_size=None, num_workers=workers)
    total = 0
    records = 0
    nbytes = 0
    for batch in dl:
        total += int(batch.sum(dtype=torch.int64))
        records += batch.shape[0]
        nbytes += batch.numel()
    t1 = time.perf_counter()
    print(json.dumps({"seconds": round(t1 - t0, 6), "records": records, "bytes": nbytes,
                      "checksum": total, "num_workers": workers, "crc": CRC_IMPL,
                      "torch": torch.__version__}))


if __name__ == "__main__":
    main()
