#!/usr/bin/env python3
"""The Python side of the bindings benchmark (bench/bindings): prints JSON lines.

  python_range_batch256_2replicas_numpy
                                   range(N).batch(256) over 2 CPU replicas, as
                                   bench/bindings/c_range_batch256.c: each step's
                                   per-replica batches handed to numpy (read-only arrays,
                                   made and dropped; no value read), through
                                   iterator(read_ahead=True), which copies these small
                                   steps 16 per call into one array whose rows are the
                                   batches; ns per element, median of 5 epochs
  python_range_batch256_2replicas_sum
                                   the same, and every value read: numpy's sum of each
                                   replica's batch (as the C program's loop), checked
  python_range_batch256_2replicas_numpy_one_per_call
                                   the numpy figure through iterator() (one step per call
                                   into the library, each batch a view of its memory: the
                                   iterator that can save its state)
  python_map_callback              range(M).map(lambda x: x): ns per element of a trivial
                                   Python map function, against the same pipeline without it
  python_map_element_seq,          range(M).map(identity).batch(256), every batch summed, as
  python_map_element_par2,         bench/bindings/c_map.c: map sequential and with 2 parallel
  python_map_many64_seq,           calls, map_many with lists of 64 sequential and parallel;
  python_map_many64_par2           ns_per_elem the pipeline's median over 3 epochs,
                                   base_ns_per_elem that of range(M).batch(256),
                                   callback_ns_per_elem the difference (M = min(N, 2^17), a
                                   16th of it for the element map with parallel calls)
  python_w1_dataloader             with --w1 DIR (the W1 data of bench/w1: DIR/*.tfrecord):
                                   one epoch of list_files -> interleave(records) ->
                                   shuffle(10000) -> batch(256) over 2 CPU replicas through
                                   this module, against PyTorch's fast DataLoader (mmap,
                                   record index, batched sampler, 2 workers) on the same
                                   files; records per second of each, best of 3, and the
                                   ratio (see w1_dataloader)

Usage: PYTHONPATH=bindings/python DINPUT_LIBRARY=build-bench/src/libdinput.so.0 \
       python3 bindings/python/bench.py [N] [--w1 DIR] [--only range|map]
"""

import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dinput  # noqa: E402


def range_batch(n):
    s = dinput.Strategy(["CPU:0", "CPU:1"])
    d = s.distribute_dataset(dinput.Dataset.range(n).batch(256))

    def arrays(read_ahead):
        for step in d.iterator(read_ahead=read_ahead):
            for batch in step:
                pass
        return None

    def sums():
        checksum = 0
        for step in d.iterator(read_ahead=True):
            for batch in step:
                checksum += int(batch.sum())
        return checksum

    variants = (("python_range_batch256_2replicas_numpy", lambda: arrays(True)),
                ("python_range_batch256_2replicas_sum", sums),
                ("python_range_batch256_2replicas_numpy_one_per_call", lambda: arrays(False)))
    # The variants alternate epoch by epoch, so that they see the same load.
    runs = {name: [] for name, _ in variants}
    ok = True
    for _ in range(5):
        for name, epoch in variants:
            t0 = time.perf_counter()
            checksum = epoch()
            runs[name].append((time.perf_counter() - t0) / n * 1e9)
            if checksum is not None:
                ok = ok and checksum == n * (n - 1) // 2
    for name, _ in variants:
        line = {"bench": name, "n": n, "ns_per_elem": round(statistics.median(runs[name]), 2)}
        if name.endswith("_sum"):
            line["checksum_ok"] = ok
        print(json.dumps(line), flush=True)


def epoch_ns(ds, m):
    t0 = time.perf_counter()
    k = sum(1 for _ in ds)
    assert k == m
    return (time.perf_counter() - t0) / m * 1e9


def map_callback(m):
    plain = dinput.Dataset.range(m)
    mapped = plain.map(lambda x: x)
    base = statistics.median(epoch_ns(plain, m) for _ in range(3))
    with_map = statistics.median(epoch_ns(mapped, m) for _ in range(3))
    print(json.dumps({"bench": "python_map_callback", "n": m,
                      "ns_per_elem": round(with_map - base, 1),
                      "pipeline_ns_per_elem": round(with_map, 1)}))


def batches_epoch_ns(ds, m):
    t0 = time.perf_counter()
    total = sum(int(b.sum()) for b in ds)
    ns = (time.perf_counter() - t0) / m * 1e9
    assert total == m * (m - 1) // 2, (total, m)
    return ns


def median_epoch_ns(ds, m):
    batches_epoch_ns(ds, m)  # warm-up
    return statistics.median(batches_epoch_ns(ds, m) for _ in range(3))


def map_variants(m):
    for name, many, parallel, k in (("python_map_element_seq", 0, 1, m),
                                    ("python_map_element_par2", 0, 2, max(m // 16, 1)),
                                    ("python_map_many64_seq", 64, 1, m),
                                    ("python_map_many64_par2", 64, 2, m)):
        r = dinput.Dataset.range(k)
        base = median_epoch_ns(r.batch(256), k)
        if many:
            mapped = r.map_many(lambda xs: xs, many, num_parallel_calls=parallel)
        else:
            mapped = r.map(lambda x: x, num_parallel_calls=parallel)
        ns = median_epoch_ns(mapped.batch(256), k)
        print(json.dumps({"bench": name, "n": k, "ns_per_elem": round(ns, 2),
                          "base_ns_per_elem": round(base, 2),
                          "callback_ns_per_elem": round(ns - base, 2)}), flush=True)


def w1_dataloader(directory, reps=3, torch_workers=2):
    """dinput through this module against PyTorch's fast DataLoader on the W1 records
    (bench/w1: DIR/*.tfrecord, 32 files of 8192 records of 1 KiB), in the same process,
    alternating the two, best of reps epochs each (the least disturbed by other load).

    dinput: list_files -> interleave(records, cycle_length 4) -> shuffle(10000) ->
    batch(256) -> distribute over CPU:0 and CPU:1; each step's per-replica batch comes to
    Python as numpy (this module's form of a bytes tensor: an object array of 128 `bytes`,
    one copy per record); records and payload bytes are counted. The reader checks both
    CRCs of every record.

    PyTorch: the usual fast loader for such files: a map-style dataset over the mmap'd files
    with a record index built once (not timed), a BatchSampler of 256 over a seeded
    RandomSampler, a batch-level __getitem__ stacking the records into one uint8 [256, 1024]
    tensor, DataLoader(num_workers=torch_workers, prefetch_factor=4); the consumer splits
    each batch between the 2 replicas (torch.tensor_split) and counts records and bytes. No
    CRC is checked. Both times include starting the epoch (dinput's threads, the workers)."""
    import glob
    import mmap
    import struct

    import numpy
    import torch
    import torch.utils.data as tud

    pattern = os.path.join(directory, "*.tfrecord")
    files = sorted(glob.glob(pattern))
    if not files:
        raise SystemExit("bench.py --w1: no *.tfrecord files in %s (bench/bindings/run.sh "
                         "with BINDINGS_W1=1 writes them)" % directory)

    class MappedRecords(tud.Dataset):
        def __init__(self):
            self.maps, self.index = [], []
            for f, name in enumerate(files):
                with open(name, "rb") as fh:
                    m = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                self.maps.append(m)
                off = 0
                while off < len(m):  # length (8), its CRC (4), payload, payload CRC (4)
                    (length,) = struct.unpack_from("<Q", m, off)
                    self.index.append((f, off + 12, length))
                    off += 16 + length

        def __len__(self):
            return len(self.index)

        def __getitem__(self, rows):  # one call per batch, from the BatchSampler
            return torch.from_numpy(numpy.stack(
                [numpy.frombuffer(self.maps[f], numpy.uint8, n, o)
                 for f, o, n in (self.index[i] for i in rows)]))

    mapped = MappedRecords()
    ds = (dinput.Dataset.list_files(pattern)
          .interleave(lambda name: dinput.Dataset.records([name]), cycle_length=4,
                      element_spec=[("bytes", [])])
          .shuffle(10000, seed=1)
          .batch(256))
    dist = dinput.Strategy(["CPU:0", "CPU:1"]).distribute_dataset(ds)

    def dinput_epoch():
        records = nbytes = 0
        t0 = time.perf_counter()
        for step in dist:
            for batch in step:
                records += len(batch)
                nbytes += sum(map(len, batch))
        return time.perf_counter() - t0, records, nbytes

    def torch_epoch():
        g = torch.Generator()
        g.manual_seed(1)
        sampler = tud.BatchSampler(tud.RandomSampler(mapped, generator=g), 256, drop_last=False)
        extra = {"prefetch_factor": 4} if torch_workers else {}
        records = nbytes = 0
        t0 = time.perf_counter()
        loader = tud.DataLoader(mapped, sampler=sampler, batch_size=None,
                                num_workers=torch_workers, **extra)
        for batch in loader:
            for replica in torch.tensor_split(batch, 2):
                records += replica.shape[0]
                nbytes += replica.numel()
        return time.perf_counter() - t0, records, nbytes

    best = {"dinput": None, "torch": None}
    for _ in range(reps):
        for name, epoch in (("dinput", dinput_epoch), ("torch", torch_epoch)):
            seconds, records, nbytes = epoch()
            if records != len(mapped):
                raise SystemExit("bench.py --w1: %s read %d records of %d"
                                 % (name, records, len(mapped)))
            if best[name] is None or seconds < best[name][0]:
                best[name] = (seconds, nbytes)
    (d, dbytes), (t, tbytes) = best["dinput"], best["torch"]
    n = len(mapped)
    print(json.dumps({"bench": "python_w1_dataloader", "records": n, "files": len(files),
                      "reps": reps, "best_of": reps, "torch_num_workers": torch_workers,
                      "dinput_seconds": round(d, 3), "torch_seconds": round(t, 3),
                      "dinput_records_per_s": round(n / d), "torch_records_per_s": round(n / t),
                      "dinput_MB_per_s": round(dbytes / d / 1e6, 1),
                      "torch_MB_per_s": round(tbytes / t / 1e6, 1),
                      "ratio_dinput_over_torch": round(t / d, 3)}))


if __name__ == "__main__":
    args = sys.argv[1:]
    w1 = None
    if "--w1" in args:
        i = args.index("--w1")
        w1 = args[i + 1]
        del args[i:i + 2]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i:i + 2]
        if only not in ("range", "map"):
            raise SystemExit("bench.py: --only takes range or map")
    n = int(args[0]) if args else 1 << 24
    if only != "map":
        range_batch(n)
    if only != "range":
        map_callback(min(n, 1 << 17))
        map_variants(min(n, 1 << 17))
    if w1:
        w1_dataloader(w1)
