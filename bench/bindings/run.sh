#!/usr/bin/env bash
# The bindings benchmark (issue "Bindings"): range(2^24).batch(256) over 2 CPU replicas from
# C, Go and Rust, against the same Release library in one run, alternating the three twice;
# prints each JSON line and the ratios Go/C and Rust/C (goal: <= 1.5x).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$root/build-bench"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDINPUT_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j2 --target dinput >/dev/null
cc -O2 -std=c99 -I"$root/include" "$root/bench/bindings/c_range_batch256.c" -L"$build/src" \
   -Wl,-rpath,"$build/src" -ldinput -o "$build/c_range_batch256"
echo "{\"bench\":\"bindings.machine\",\"nproc\":$(nproc),\"loadavg_before\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
out=$(mktemp)
for round in 1 2; do
  "$build/c_range_batch256" | tee -a "$out"
  BUILD_DIR="$build" "$root/bindings/go/bench/run.sh" | tee -a "$out"
  "$root/bindings/rust/bench.sh" "$build" | tee -a "$out"
done
python3 - "$out" <<'PY'
import json, sys, statistics
by = {}
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    by.setdefault(d["bench"], []).append(d["ns_per_elem"])
c = statistics.median(by["c_range_batch256_2replicas"])
for name, lang in (("go_range_batch256_2replicas", "go"), ("rust_range_batch256_2replicas", "rust")):
    v = statistics.median(by[name])
    print(json.dumps({"bench": "bindings." + lang, "ns_per_elem": round(v, 2), "c_ns_per_elem": round(c, 2),
                      "ratio": round(v / c, 3), "goal": "<= 1.5x C", "pass": v / c <= 1.5}))
PY
rm -f "$out"
