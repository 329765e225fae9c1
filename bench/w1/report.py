"""Summarises the W1 runs: one JSON line per measurement (best and median of the rounds, wall
clock and CPU time), with the ratios the goals are stated in, taken on the best rounds."""
import glob
import json
import os
import statistics
import sys

res, data, nproc, cpu, load_before, load_after, reps = sys.argv[1:8]


def load(name):
    with open(os.path.join(res, name + ".jsonl")) as f:
        return [json.loads(l) for l in f if l.strip()]


plain_bytes = 32 * 8192 * 1024  # payload bytes of one epoch
plain_records = 32 * 8192
out = []


def summary(name, what, check_records=True):
    runs = load(name)
    cpus = load(name + ".cpu")
    # The program's own timing when it gives one (set-up included, process start-up not),
    # else the wall clock of the process.
    secs = [r.get("seconds", c["wall_s"]) for r, c in zip(runs, cpus)]
    cpu = [c["cpu_s"] for c in cpus]
    med = statistics.median(secs)
    best = min(secs)
    for r in runs:
        if check_records and r.get("records") not in (None, plain_records):
            raise SystemExit("%s delivered %s records, expected %d" % (name, r.get("records"), plain_records))
    d = {"measurement": name, "what": what, "runs_s": secs, "median_s": med, "best_s": best,
         "cpu_runs_s": cpu, "cpu_best_s": min(cpu),
         "MB_per_s": round(plain_bytes / best / 1e6, 1),
         "records_per_s": round(plain_records / best, 0)}
    consumer = [r["consumer_cpu_s"] for r in runs if "consumer_cpu_s" in r]
    if consumer:  # the thread that calls get_next (w1_dinput)
        d["consumer_cpu_best_s"] = min(consumer)
    extra = {k: v for k, v in runs[0].items() if k not in ("seconds", "consumer_cpu_s")}
    if extra:
        d["detail"] = extra
    return d


def have(name):
    return os.path.exists(os.path.join(res, name + ".jsonl"))


m = {}
m["dinput_plain"] = summary("dinput_plain", "dinput records.shuffle(10000,1).batch(256) over CPU:0,CPU:1, CRCs verified, every byte summed; files read with pread (default)")
m["dinput_plain_mmap"] = summary("dinput_plain_mmap", "the same with map_files=1: files memory-mapped")
m["baseline_c"] = summary("baseline_c", "single-thread C: mmap, index, Fisher-Yates, memcpy gather 256, SSE4.2 CRC32C x2, byte sum")
if have("torch_w0"):
    m["torch_w0"] = summary("torch_w0", "PyTorch DataLoader num_workers=0, BatchSampler(RandomSampler) 256, batch __getitem__, both CRCs checked (python3-crc32c)")
    m["torch_w2"] = summary("torch_w2", "PyTorch DataLoader num_workers=2")
if have("torch_nocrc_w0"):
    m["torch_nocrc_w0"] = summary("torch_nocrc_w0", "the same DataLoader without CRC checks (W1_TORCH_CRC=0), num_workers=0")
    m["torch_nocrc_w2"] = summary("torch_nocrc_w2", "the same without CRC checks, num_workers=2")
m["dinput_zstd"] = summary("dinput_zstd", "dinput, same pipeline, ZSTD level-3 files (MB/s of decompressed payload); compressed files read with pread")
m["dinput_zstd_mmap"] = summary("dinput_zstd_mmap", "the same with map_files=1: compressed files memory-mapped")
m["zstd_d"] = summary("zstd_d", "zstd -d -c all 32 files > /dev/null, one process (no -T0: decompression is single-threaded)", False)
m["zstd_d_p2"] = summary("zstd_d_p2", "zstd -d -c per file, 2 processes in parallel (xargs -P2), info only", False)
# zstd outputs the whole record file (payload + 16 B framing per record); throughput counts payload
m["zstd_d"]["note"] = m["zstd_d_p2"]["note"] = "MB/s counts the 1 KiB payloads (decompressed output incl. framing is 1.6% larger)"

# Ratios of the best rounds: speed (the other's time over dinput's) and CPU time.
plain = m["dinput_plain"]
plain["vs_baseline_c"] = r1 = round(m["baseline_c"]["best_s"] / plain["best_s"], 3)
plain["goal_vs_baseline_c"] = ">= 1.0"
plain["pass_vs_baseline_c"] = r1 >= 1.0
plain["cpu_vs_baseline_c"] = c1 = round(plain["cpu_best_s"] / m["baseline_c"]["cpu_best_s"], 3)
plain["goal_cpu_vs_baseline_c"] = "<= 1.3"
plain["pass_cpu_vs_baseline_c"] = c1 <= 1.3
for key, names in (("vs_best_torch", ("torch_w0", "torch_w2")),
                   ("vs_best_torch_nocrc", ("torch_nocrc_w0", "torch_nocrc_w2"))):
    if names[0] in m:
        best_torch = min(m[n]["best_s"] for n in names)
        plain[key] = r2 = round(best_torch / plain["best_s"], 2)
        plain["goal_" + key] = ">= 3"
        plain["pass_" + key] = r2 >= 3
# The cost of reading with pread instead of mapping: time with pread / time with mmap.
for name in ("dinput_plain", "dinput_zstd"):
    m[name]["pread_over_mmap_time"] = round(m[name]["best_s"] / m[name + "_mmap"]["best_s"], 3)
m["dinput_zstd"]["vs_zstd_d"] = r3 = round(m["zstd_d"]["best_s"] / m["dinput_zstd"]["best_s"], 3)
m["dinput_zstd"]["goal_vs_zstd_d"] = ">= 1.0"
m["dinput_zstd"]["pass_vs_zstd_d"] = r3 >= 1.0
m["dinput_zstd"]["cpu_vs_zstd_d"] = round(m["dinput_zstd"]["cpu_best_s"] / m["zstd_d"]["cpu_best_s"], 3)

zsize = sum(os.path.getsize(p) for p in glob.glob(os.path.join(data, "rec-??.tfrecord.zst")))
print(json.dumps({"measurement": "machine", "nproc": int(nproc), "cpu": cpu, "loadavg_before": load_before,
                  "loadavg_after": load_after, "repetitions": int(reps), "data_dir": data,
                  "payload_bytes": plain_bytes, "records": plain_records, "zstd_files_bytes": zsize}))
for v in m.values():
    print(json.dumps(v))
