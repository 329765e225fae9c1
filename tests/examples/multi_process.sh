#!/usr/bin/env bash
# examples/multi_process.c run as W real processes on 127.0.0.1 (a tcp:// rendezvous served
# by rank 0) prints, merged in worker order, exactly what the same W workers print as threads
# of one process (--threads W). W = 2, 3 and 4. Every process is bounded by a timeout and
# reaped; a failure shows each worker's output and errors.
set -euo pipefail
program=$1
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
for workers in 2 3 4; do
  timeout 60 "$program" --threads "$workers" > "$work/threads.txt"
  port=$(free_port)
  pids=()
  for ((rank = 0; rank < workers; rank++)); do
    DINPUT_RANK=$rank DINPUT_WORLD_SIZE=$workers DINPUT_RDZV_URL=tcp://127.0.0.1:$port \
      timeout 60 "$program" > "$work/out.$rank" 2> "$work/err.$rank" &
    pids+=($!)
  done
  failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  : > "$work/processes.txt"
  for ((rank = 0; rank < workers; rank++)); do cat "$work/out.$rank" >> "$work/processes.txt"; done
  if [ $failed -ne 0 ] || ! cmp -s "$work/threads.txt" "$work/processes.txt"; then
    echo "W=$workers: the processes differ from the threads (or failed)"
    echo "--- threads:"; cat "$work/threads.txt"
    for ((rank = 0; rank < workers; rank++)); do
      echo "--- process $rank:"; cat "$work/out.$rank"; cat "$work/err.$rank"
    done
    exit 1
  fi
  echo "W=$workers: $(wc -l < "$work/processes.txt") lines, the same as threads"
done
