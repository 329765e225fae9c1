#!/usr/bin/python3
"""Batch 1 against PyTorch's DataLoader, per element, in one run.

dinput: bench_step --batch1, whose step.batch1.r1 line is range(N).batch(1) through
dinput_dist_iterator_get_next over one CPU replica, every value read (the C API, best of its
3 rounds). PyTorch: DataLoader(torch.arange(M), batch_size=1) at num_workers 0, 1, ... up to
the core count, every value read and summed (M = 30,000 with no worker process, 3,000 with
worker processes, which take about a millisecond per element at batch 1 on 2 cores). The rounds alternate (dinput, then each worker
count), ROUNDS of each; each side's best round counts, and PyTorch's best worker count. Goal:
PyTorch's microseconds per element >= 10x dinput's.

Usage: torch_batch1.py [--quick] [--rounds N] BENCH_STEP
         BENCH_STEP: the bench_step binary (build/bench/bench_step)
         --quick: tiny sizes, one round (the figures mean nothing; the CTest smoke test)
Output: one JSON line per PyTorch pass and per dinput run, then "step.batch1_vs_torch" with
the ratio, then the load average.
"""
import argparse
import json
import os
import subprocess
import sys
import time

try:
    import torch
    from torch.utils.data import DataLoader
except ImportError:
    print("SKIP: torch_batch1.py needs PyTorch (import torch failed)")
    sys.exit(0)


def torch_pass(n, workers):
    """Microseconds per element of one epoch of DataLoader(arange(n), batch_size=1)."""
    loader = DataLoader(torch.arange(n), batch_size=1, num_workers=workers)
    total = 0
    count = 0
    t0 = time.perf_counter()
    for batch in loader:
        total += int(batch[0])
        count += 1
    t1 = time.perf_counter()
    if count != n or total != n * (n - 1) // 2:
        sys.exit(f"torch_batch1.py: DataLoader gave {count} elements summing to {total}")
    return (t1 - t0) * 1e6 / n


def dinput_pass(bench_step, quick):
    """The step.batch1.r1 line of bench_step --batch1 (its best of 3 rounds)."""
    args = [bench_step, "--batch1"] + (["--quick"] if quick else [])
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("{"):
            doc = json.loads(line)
            if doc.get("bench") == "step.batch1.r1":
                return doc
    sys.exit("torch_batch1.py: bench_step --batch1 printed no step.batch1.r1 line")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bench_step")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    a = parser.parse_args()
    rounds = 1 if a.quick else a.rounds
    n = 300 if a.quick else 30000
    n_workers = 100 if a.quick else 3000
    torch.set_num_threads(1)
    worker_counts = list(range(0, min(os.cpu_count() or 1, 4) + 1))
    load_before = os.getloadavg()[0]
    dinput_us = []
    torch_us = {w: [] for w in worker_counts}
    for r in range(rounds):
        doc = dinput_pass(a.bench_step, a.quick)
        dinput_us.append(doc["dist_us_per_step"])
        print(json.dumps({"bench": "step.batch1_vs_torch.dinput", "round": r,
                          "dist_us_per_step": doc["dist_us_per_step"],
                          "plain_us_per_step": doc["plain_us_per_step"]}), flush=True)
        for w in worker_counts:
            m = n if w == 0 else n_workers
            us = torch_pass(m, w)
            torch_us[w].append(us)
            print(json.dumps({"bench": "step.batch1_vs_torch.torch", "round": r,
                              "num_workers": w, "elements": m, "us_per_element": round(us, 3)}),
                  flush=True)
    best_dinput = min(dinput_us)
    best_by_workers = {w: min(v) for w, v in torch_us.items()}
    best_workers = min(best_by_workers, key=best_by_workers.get)
    best_torch = best_by_workers[best_workers]
    ratio = best_torch / best_dinput if best_dinput > 0 else float("inf")
    print(json.dumps({
        "bench": "step.batch1_vs_torch", "rounds": rounds,
        "dinput_dist_us_per_element": best_dinput,
        "torch_us_per_element": {str(w): round(v, 3) for w, v in best_by_workers.items()},
        "torch_best_num_workers": best_workers, "torch_best_us_per_element": round(best_torch, 3),
        "ratio": round(ratio, 1), "goal": ">= 10", "pass": ratio >= 10,
        "torch_version": torch.__version__}), flush=True)
    print(json.dumps({"bench": "step.batch1_vs_torch.machine", "nproc": os.cpu_count(),
                      "loadavg_before": load_before, "loadavg_after": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
