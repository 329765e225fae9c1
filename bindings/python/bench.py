#!/usr/bin/env python3
"""The Python side of the bindings benchmark (bench/bindings): prints JSON lines.

  python_range_batch256_2replicas  range(N).batch(256) over 2 CPU replicas, each replica's
                                   batch handed to numpy (zero-copy) and summed; ns per
                                   element, median of 5 epochs (as bench/bindings/c_range_batch256.c)
  python_map_callback              range(M).map(lambda x: x): ns per element of a trivial
                                   Python map function, against the same pipeline without it

Usage: PYTHONPATH=bindings/python DINPUT_LIBRARY=build-bench/src/libdinput.so.0 \
       python3 bindings/python/bench.py [N]
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


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    range_batch(n)
    map_callback(min(n, 1 << 17))
