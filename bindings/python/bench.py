#!/usr/bin/env python3
"""The Python side of the bindings benchmark (bench/bindings): prints JSON lines.

  python_range_batch256_2replicas  range(N).batch(256) over 2 CPU replicas, each replica's
                                   batch handed to numpy (zero-copy) and summed; ns per
                                   element, median of 5 epochs (as
                                   bench/bindings/c_range_batch256.c)
  python_map_callback              range(M).map(lambda x: x): ns per element of a trivial
                                   Python map function, against the same pipeline without it
  python_map_element_seq,          range(M).map(identity).batch(256), every batch summed, as
  python_map_element_par2,         bench/bindings/c_map.c: map sequential and with 2 parallel
  python_map_many64_seq,           calls, map_many with lists of 64 sequential and parallel;
  python_map_many64_par2           ns_per_elem the pipeline's median over 3 epochs,
                                   base_ns_per_elem that of range(M).batch(256),
                                   callback_ns_per_elem the difference (M = min(N, 2^17), a
                                   16th of it for the element map with parallel calls)
  python_w1_dataloader             with --w1 DIR (record files, plain: the W1 data of
                                   bench/w1, or any *.rec): records per second through
                                   torch's DataLoader from dinput (list_files -> interleave
                                   (records) -> batch(256) -> the torch adapter) and from a
                                   pure-PyTorch IterableDataset reading the same framing, and
                                   the ratio

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
    runs, checksum = [], 0
    for _ in range(5):
        with d.iterator() as it:
            t0 = time.perf_counter()
            for step in it:
                for batch in step:
                    checksum += int(batch.sum())
            runs.append((time.perf_counter() - t0) / n * 1e9)
    ok = checksum == 5 * (n * (n - 1) // 2)
    print(json.dumps({"bench": "python_range_batch256_2replicas", "n": n,
                      "ns_per_elem": round(statistics.median(runs), 2), "checksum_ok": ok}))


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


def w1_dataloader(directory, reps=3):
    import glob
    import struct
    import torch
    import torch.utils.data
    import dinput.torch_data

    files = sorted(glob.glob(os.path.join(directory, "*.rec")))
    if not files:
        raise SystemExit("bench.py --w1: no *.rec files in %s" % directory)

    class TorchRecords(torch.utils.data.IterableDataset):
        """The record framing read in Python (no CRC check), batched as lists of bytes."""

        def __iter__(self):
            batch = []
            for name in files:
                with open(name, "rb") as f:
                    while True:
                        head = f.read(12)
                        if len(head) < 12:
                            break
                        (length,) = struct.unpack("<Q", head[:8])
                        batch.append(f.read(length))
                        f.read(4)
                        if len(batch) == 256:
                            yield batch
                            batch = []
            if batch:
                yield batch

    ds = (dinput.Dataset.list_files(os.path.join(directory, "*.rec"))
          .interleave(lambda f: dinput.Dataset.records([f]), cycle_length=4,
                      element_spec=[("bytes", [])])
          .batch(256))

    def rate(make):
        best = 0.0
        for _ in range(reps):
            t0 = time.perf_counter()
            n = sum(len(b) for b in torch.utils.data.DataLoader(make(), batch_size=None))
            best = max(best, n / (time.perf_counter() - t0))
        return n, best

    n1, d = rate(lambda: dinput.torch_data.IterableDataset(ds))
    n2, t = rate(TorchRecords)
    assert n1 == n2, (n1, n2)
    print(json.dumps({"bench": "python_w1_dataloader", "records": n1, "files": len(files),
                      "dinput_records_per_s": round(d), "torch_records_per_s": round(t),
                      "ratio_dinput_over_torch": round(d / t, 3)}))


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
