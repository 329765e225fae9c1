#!/usr/bin/env bash
# W1: record-file reading throughput. See README.md. Usage: bench/w1/run.sh
# Env: W1_DATA (default /tmp/dinput-w1-data), W1_REPS (default 3), W1_BUILD (build dir),
# W1_BIN (where the programs are compiled, default /tmp/dinput-w1-bin),
# W1_PASSES=0 to leave out the single passes (passes.c),
# W1_TORCH=0 to leave out the PyTorch measurements (they are also left out, with a note,
# when /usr/bin/python3 cannot import torch).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
DATA="${W1_DATA:-/tmp/dinput-w1-data}"
REPS="${W1_REPS:-3}"
BIN="${W1_BIN:-/tmp/dinput-w1-bin}"
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
cc -O2 -o "$BIN/rusage" "$HERE/rusage.c"
HAVE_PASSES=1
cc -O2 -msse4.2 -o "$BIN/passes" "$HERE/passes.c" -lzstd 2>/dev/null || HAVE_PASSES=0

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
# Every run goes through rusage, which appends its wall-clock and CPU time (all threads)
# to NAME.cpu.jsonl next to the program's own JSON line in NAME.jsonl.
timed() { # name command...
  local name="$1"; shift
  "$BIN/rusage" "$RES/$name.cpu.jsonl" "$@" >>"$RES/$name.jsonl"
}
HAVE_TORCH=0
HAVE_CRC32C=0
if [ "${W1_TORCH:-1}" != 0 ] && "$PY" -c "import torch" 2>/dev/null; then
  HAVE_TORCH=1
  if "$PY" -c "import crc32c" 2>/dev/null; then HAVE_CRC32C=1; else
    echo "PyTorch with CRC checks left out ($PY cannot import crc32c)" >&2; fi
else
  echo "PyTorch measurements left out (W1_TORCH=0, or $PY cannot import torch)" >&2
fi

# Rounds: each runs every measurement once, so that all of them see the same machine load.
# The reader's two ways of getting at the files: pread() into the library's buffers (the
# default) and memory mapping (W1_MAP_FILES=1, dinput_options_set_map_files).
for i in $(seq "$REPS"); do
  W1_MAP_FILES=0 timed dinput_plain "$BIN/w1_dinput" none "${PLAIN[@]}"
  W1_MAP_FILES=1 timed dinput_plain_mmap "$BIN/w1_dinput" none "${PLAIN[@]}"
  timed baseline_c "$BIN/baseline" "${PLAIN[@]}"
  if [ "$HAVE_CRC32C" = 1 ]; then
    timed torch_w0 "$PY" "$HERE/torch_loader.py" 0 "${PLAIN[@]}"
    timed torch_w2 "$PY" "$HERE/torch_loader.py" 2 "${PLAIN[@]}"
  fi
  if [ "$HAVE_TORCH" = 1 ]; then
    W1_TORCH_CRC=0 timed torch_nocrc_w0 "$PY" "$HERE/torch_loader.py" 0 "${PLAIN[@]}"
    W1_TORCH_CRC=0 timed torch_nocrc_w2 "$PY" "$HERE/torch_loader.py" 2 "${PLAIN[@]}"
  fi
  W1_MAP_FILES=0 timed dinput_zstd "$BIN/w1_dinput" zstd "${ZST[@]}"
  W1_MAP_FILES=1 timed dinput_zstd_mmap "$BIN/w1_dinput" zstd "${ZST[@]}"
  # No JSON of their own: their time is rusage's wall clock.
  timed zstd_d bash -c "zstd -q -d -c ${ZST[*]} > /dev/null; echo '{}'"
  timed zstd_d_p2 bash -c "printf '%s\n' ${ZST[*]} | xargs -P2 -n1 zstd -q -d -c > /dev/null; echo '{}'"
done

LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" "$HERE/report.py" "$RES" "$DATA" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" "$LOAD_BEFORE" "$LOAD_AFTER" "$REPS"
rm -rf "$RES"
# The floor: what each single pass over W1's bytes costs here, one thread (passes.c).
if [ "$HAVE_PASSES" = 1 ] && [ "${W1_PASSES:-1}" != 0 ]; then
  W1_PASS_REPS="$REPS" "$BIN/passes" "$DATA"
fi
