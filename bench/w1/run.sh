#!/usr/bin/env bash
# W1: record-file reading throughput. See README.md. Usage: bench/w1/run.sh
# Env: W1_DATA (default /tmp/dinput-w1-data), W1_REPS (default 3), W1_BUILD (build dir),
# W1_TORCH=0 to leave out the PyTorch measurements (they are also left out, with a note,
# when /usr/bin/python3 cannot import torch).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DATA="${W1_DATA:-/tmp/dinput-w1-data}"
REPS="${W1_REPS:-3}"
BIN="/tmp/dinput-w1-bin"
PY=/usr/bin/python3
if [ -z "${W1_BUILD:-}" ]; then
  # use build-w1 when someone else is building in build-bench right now
  if pgrep -f "cmake --build $ROOT/build-bench" >/dev/null 2>&1; then W1_BUILD="$ROOT/build-w1"; else W1_BUILD="$ROOT/build-bench"; fi
fi

LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

echo "building library in $W1_BUILD" >&2
cmake -S "$ROOT" -B "$W1_BUILD" -DCMAKE_BUILD_TYPE=Release -DDINPUT_BUILD_TESTS=OFF >/dev/null
cmake --build "$W1_BUILD" -j2 --target dinput >/dev/null
LIBDIR="$(dirname "$(find "$W1_BUILD" -name 'libdinput.so' | head -1)")"
mkdir -p "$BIN"
cc -O2 -I"$ROOT/include" -o "$BIN/gen" "$HERE/gen.c" -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -ldinput
cc -O2 -I"$ROOT/include" -o "$BIN/w1_dinput" "$HERE/w1_dinput.c" -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -ldinput
cc -O2 -msse4.2 -o "$BIN/baseline" "$HERE/baseline.c"

if [ ! -f "$DATA/rec-31.tfrecord.zst" ]; then
  echo "writing data to $DATA" >&2
  mkdir -p "$DATA"
  "$BIN/gen" "$DATA"
fi
PLAIN=("$DATA"/rec-??.tfrecord)
ZST=("$DATA"/rec-??.tfrecord.zst)

echo "warming the page cache" >&2
cat "${PLAIN[@]}" "${ZST[@]}" >/dev/null

RES="$(mktemp -d)"
run3() { # name command... : REPS runs, each prints one JSON object on stdout
  local name="$1"; shift
  for i in $(seq "$REPS"); do "$@" >>"$RES/$name.jsonl"; done
}
time_cmd() { # prints {"seconds":...} for a shell command
  local t0 t1; t0=$(date +%s.%N); bash -c "$1"; t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN{printf "{\"seconds\":%.6f}\n", b-a}'
}

# The reader's two ways of getting at the files, interleaved run by run so that both see
# the same machine load: pread() into the library's buffers (the default) and memory
# mapping (W1_MAP_FILES=1, dinput_options_set_map_files).
for i in $(seq "$REPS"); do
  W1_MAP_FILES=0 "$BIN/w1_dinput" none "${PLAIN[@]}" >>"$RES/dinput_plain.jsonl"
  W1_MAP_FILES=1 "$BIN/w1_dinput" none "${PLAIN[@]}" >>"$RES/dinput_plain_mmap.jsonl"
done
run3 baseline_c "$BIN/baseline" "${PLAIN[@]}"
if [ "${W1_TORCH:-1}" != 0 ] && "$PY" -c "import torch, crc32c" 2>/dev/null; then
  run3 torch_w0 "$PY" "$HERE/torch_loader.py" 0 "${PLAIN[@]}"
  run3 torch_w2 "$PY" "$HERE/torch_loader.py" 2 "${PLAIN[@]}"
else
  echo "PyTorch measurements left out (W1_TORCH=0, or $PY cannot import torch and crc32c)" >&2
fi
for i in $(seq "$REPS"); do
  W1_MAP_FILES=0 "$BIN/w1_dinput" zstd "${ZST[@]}" >>"$RES/dinput_zstd.jsonl"
  W1_MAP_FILES=1 "$BIN/w1_dinput" zstd "${ZST[@]}" >>"$RES/dinput_zstd_mmap.jsonl"
done
run3 zstd_d time_cmd "zstd -q -d -c ${ZST[*]} > /dev/null"
run3 zstd_d_p2 time_cmd "printf '%s\n' ${ZST[*]} | xargs -P2 -n1 zstd -q -d -c > /dev/null"

LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" "$HERE/report.py" "$RES" "$DATA" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" "$LOAD_BEFORE" "$LOAD_AFTER" "$REPS"
rm -rf "$RES"
