"""Summarises the W1 runs: one JSON line per measurement (median of the repetitions)."""
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
    secs = [r["seconds"] for r in runs]
    med = statistics.median(secs)
    for r in runs:
        if check_records and r.get("records") not in (None, plain_records):
            raise SystemExit("%s delivered %s records, expected %d" % (name, r.get("records"), plain_records))
    d = {"measurement": name, "what": what, "runs_s": secs, "median_s": med,
         "MB_per_s": round(plain_bytes / med / 1e6, 1),
         "records_per_s": round(plain_records / med, 0)}
    extra = {k: v for k, v in runs[0].items() if k not in ("seconds",)}
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
    m["torch_w0"] = summary("torch_w0", "PyTorch DataLoader num_workers=0, BatchSampler(RandomSampler) 256, batch __getitem__")
    m["torch_w2"] = summary("torch_w2", "PyTorch DataLoader num_workers=2")
m["dinput_zstd"] = summary("dinput_zstd", "dinput, same pipeline, ZSTD level-3 files (MB/s of decompressed payload); compressed files read with pread")
m["dinput_zstd_mmap"] = summary("dinput_zstd_mmap", "the same with map_files=1: compressed files memory-mapped")
m["zstd_d"] = summary("zstd_d", "zstd -d -c all 32 files > /dev/null, one process (no -T0: decompression is single-threaded)", False)
m["zstd_d_p2"] = summary("zstd_d_p2", "zstd -d -c per file, 2 processes in parallel (xargs -P2), info only", False)
# zstd outputs the whole record file (payload + 16 B framing per record); throughput counts payload
m["zstd_d"]["note"] = m["zstd_d_p2"]["note"] = "MB/s counts the 1 KiB payloads (decompressed output incl. framing is 1.6% larger)"

rec_a = m["baseline_c"]["records_per_s"]
m["dinput_plain"]["vs_baseline_c"] = r1 = round(m["dinput_plain"]["records_per_s"] / rec_a, 3)
m["dinput_plain"]["goal_vs_baseline_c"] = ">= 0.8"
m["dinput_plain"]["pass_vs_baseline_c"] = r1 >= 0.8
if "torch_w0" in m:
    best_torch = max(m["torch_w0"]["records_per_s"], m["torch_w2"]["records_per_s"])
    m["dinput_plain"]["vs_best_torch"] = r2 = round(m["dinput_plain"]["records_per_s"] / best_torch, 2)
    m["dinput_plain"]["goal_vs_best_torch"] = ">= 5"
    m["dinput_plain"]["pass_vs_best_torch"] = r2 >= 5
# The cost of reading with pread instead of mapping: time with pread / time with mmap.
for name in ("dinput_plain", "dinput_zstd"):
    m[name]["pread_over_mmap_time"] = round(m[name]["median_s"] / m[name + "_mmap"]["median_s"], 3)
m["dinput_zstd"]["vs_zstd_d"] = r3 = round(m["zstd_d"]["median_s"] / m["dinput_zstd"]["median_s"], 3)
m["dinput_zstd"]["goal_vs_zstd_d"] = ">= 0.8"
m["dinput_zstd"]["pass_vs_zstd_d"] = r3 >= 0.8

zsize = sum(os.path.getsize(p) for p in glob.glob(os.path.join(data, "rec-??.tfrecord.zst")))
print(json.dumps({"measurement": "machine", "nproc": int(nproc), "cpu": cpu, "loadavg_before": load_before,
                  "loadavg_after": load_after, "repetitions": int(reps), "data_dir": data,
                  "payload_bytes": plain_bytes, "records": plain_records, "zstd_files_bytes": zsize}))
for v in m.values():
    print(json.dumps(v))
