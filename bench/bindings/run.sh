#!/usr/bin/env bash
# The bindings benchmark: every binding against C on the same Release library, in one run.
#
#   iteration  range(2^24).batch(256) over 2 CPU replicas, every value read: Go/C, Rust/C,
#              goal <= 1.5x; Python in two readings, each against the same C figure: numpy
#              (each replica's batch handed to numpy: the arrays made, no value read) and sum
#              (the same, and numpy's sum of each batch), both through
#              iterator(read_ahead=True), and numpy_one_per_call (iterator(), one step per
#              call into the library: the iterator that can save)
#   map        range(2^20).map(identity).batch(256), one JSON line per variant
#              (<lang>_map_<variant>; c_map.c prints c_map_element_seq and
#              c_map_element_par2, the bindings' bench programs theirs): a ratio for every
#              variant that C has too, goals Go <= 2x, Rust <= 1.2x, Python reported; a
#              variant one side lacks (element_seq, element_par2, many64_seq and
#              many64_par2 are expected) is printed as missing, not an error
#   W1         (BINDINGS_W1=1) dinput through the Python module against PyTorch's fast
#              DataLoader on bench/w1's record files (bindings/python/bench.py --w1)
#
# The languages run one after another, ROUNDS times, in a rotated order each round; every
# program reports the median of its epochs, and the summary takes each name's best (lowest)
# figure over the rounds. Other load on a shared machine only ever adds time, so the best
# round is the least disturbed estimate of each, and rotating the order gives every language
# the same chances. All JSON lines are printed as they come, then the machine's load, then
# one line per ratio.
#
# Usage: bench/bindings/run.sh [--quick]   (--quick: tiny sizes, one round; the figures mean
#                                           nothing; what the smoke test runs)
# Env:   BINDINGS_BUILD  build tree whose src/libdinput.so is measured (default build-bench,
#                        configured Release and built here)
#        BINDINGS_NO_BUILD=1  use BINDINGS_BUILD as it is (its library must exist)
#        BINDINGS_ROUNDS (3), BINDINGS_N (2^24: the iteration row; the map rows use
#                        each program's default size)
#        BINDINGS_W1=1   also the W1 comparison; the data are bench/w1's (W1_DATA, default
#                        /tmp/dinput-w1-data, written by bench/w1/gen.c when missing: 520 MB)
#        BINDINGS_LANGS  the bindings to run (default "go rust python")
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${BINDINGS_BUILD:-$root/build-bench}"
[[ $build = /* ]] || build="$root/$build"
py=/usr/bin/python3
rounds="${BINDINGS_ROUNDS:-3}"
n="${BINDINGS_N:-16777216}"
quick=""
if [[ ${1:-} == --quick ]]; then
  quick=1 rounds=1 n=4096
elif [[ $# -gt 0 ]]; then
  echo "usage: bench/bindings/run.sh [--quick]" >&2
  exit 2
fi
langs="${BINDINGS_LANGS:-go rust python}"
# The size arguments of each program: the full run's, or --quick's.
c_map_args=() go_args=(-n "$n") rust_args=(--n "$n")
[[ -z $quick ]] || c_map_args=(4096 1) go_args=(-quick) rust_args=(--quick)

if [[ ${BINDINGS_NO_BUILD:-0} != 1 ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDINPUT_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j2 --target dinput >/dev/null
fi
lib_dir="$build/src"
[[ -e $lib_dir/libdinput.so ]] || { echo "bench/bindings/run.sh: no $lib_dir/libdinput.so" >&2; exit 2; }
bin="$build/bindings-bench"
mkdir -p "$bin"
for prog in c_range_batch256 c_map; do
  cc -O2 -std=c99 -I"$root/include" "$root/bench/bindings/$prog.c" -L"$lib_dir" \
     -Wl,-rpath,"$lib_dir" -ldinput -o "$bin/$prog"
done

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
run() { # LANG: that language's bench programs, their JSON lines to stdout and $out
  case $1 in
    c)
      "$bin/c_range_batch256" "$n"
      "$bin/c_map" "${c_map_args[@]}" ;;
    go)
      BUILD_DIR="$build" "$root/bindings/go/bench/run.sh" "${go_args[@]}" ;;
    rust)
      "$root/bindings/rust/bench.sh" "$build" -- "${rust_args[@]}" ;;
    python)
      PYTHONPATH="$root/bindings/python" DINPUT_LIBRARY="$lib_dir/libdinput.so.0" \
        "$py" "$root/bindings/python/bench.py" "$n" ;;
  esac | grep --line-buffered '^{' | tee -a "$out"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
load_before="$(loadavg)"
order=(c $langs)
for ((round = 1; round <= rounds; round++)); do
  echo "{\"bench\":\"bindings.round\",\"round\":$round,\"order\":\"${order[*]}\",\"loadavg\":\"$(loadavg)\"}"
  for lang in "${order[@]}"; do
    run "$lang"
  done
  order=("${order[@]:1}" "${order[0]}")
done

if [[ ${BINDINGS_W1:-0} == 1 ]]; then
  data="${W1_DATA:-/tmp/dinput-w1-data}"
  if ! "$py" -c "import torch" 2>/dev/null; then
    echo "{\"bench\":\"python_w1_dataloader\",\"missing\":\"$py cannot import torch\"}" | tee -a "$out"
  else
    if [[ ! -f $data/rec-31.tfrecord.zst ]]; then # bench/w1/run.sh's test for complete data
      cc -O2 -I"$root/include" -o "$bin/w1_gen" "$root/bench/w1/gen.c" -L"$lib_dir" \
         -Wl,-rpath,"$lib_dir" -ldinput
      echo "writing the W1 data to $data" >&2
      mkdir -p "$data"
      "$bin/w1_gen" "$data"
    fi
    cat "$data"/rec-??.tfrecord >/dev/null # the page cache, as bench/w1/run.sh
    PYTHONPATH="$root/bindings/python" DINPUT_LIBRARY="$lib_dir/libdinput.so.0" \
      "$py" "$root/bindings/python/bench.py" 4096 --w1 "$data" |
      grep '"python_w1_dataloader"' | tee -a "$out"
  fi
fi

echo "{\"bench\":\"bindings.machine\",\"nproc\":$(nproc),\"cpu\":\"$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')\",\"loadavg_before\":\"$load_before\",\"loadavg_after\":\"$(loadavg)\",\"rounds\":$rounds,\"n\":$n}"
"$py" - "$out" "$langs" <<'PY'
import json, re, sys

best, rounds = {}, {}
for line in open(sys.argv[1]):
    try:
        d = json.loads(line)
    except ValueError:
        continue
    if "ns_per_elem" in d:
        rounds.setdefault(d["bench"], []).append(d["ns_per_elem"])
for name, values in rounds.items():
    best[name] = min(values)
langs = sys.argv[2].split()


def ratio(name, lang, c_name, goal, kind):
    row = {"bench": name}
    v, c = best.get("%s_%s" % (lang, kind)), best.get(c_name)
    if v is None or c is None:
        row["missing"] = "no %s line" % ("%s_%s" % (lang, kind) if v is None else c_name)
    else:
        row.update({"ns_per_elem": round(v, 2), "c_ns_per_elem": round(c, 2),
                    "ratio": round(v / c, 3), "rounds": rounds["%s_%s" % (lang, kind)],
                    "c_rounds": rounds[c_name]})
        if goal:
            row.update({"goal": "<= %gx C" % goal, "pass": v / c <= goal})
    print(json.dumps(row))


for lang in langs:
    if lang == "python":
        for reading in ("numpy", "sum", "numpy_one_per_call"):
            ratio("bindings.iteration.python." + reading, lang, "c_range_batch256_2replicas",
                  1.5, "range_batch256_2replicas_" + reading)
        continue
    ratio("bindings.iteration." + lang, lang, "c_range_batch256_2replicas",
          1.5, "range_batch256_2replicas")
map_goals = {"go": 2.0, "rust": 1.2}
# Every variant C has or is expected to have, for every binding; then the variants only a
# binding has (their C line is missing).
variants = {"element_seq", "element_par2", "many64_seq", "many64_par2"}
variants |= {name[len("c_map_"):] for name in best if name.startswith("c_map_")}
for variant in sorted(variants):
    for lang in langs:
        ratio("bindings.map.%s.%s" % (lang, variant), lang, "c_map_" + variant,
              map_goals.get(lang), "map_" + variant)
for name in sorted(best):
    m = re.match(r"(%s)_map_(.+)$" % "|".join(langs), name)
    if m and m.group(2) not in variants:
        ratio("bindings.map.%s.%s" % m.groups(), m.group(1), "c_map_" + m.group(2),
              map_goals.get(m.group(1)), "map_" + m.group(2))
PY
