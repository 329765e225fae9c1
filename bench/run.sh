#!/usr/bin/env bash
# Builds the benchmarks in Release and runs them all, printing one JSON object per line:
# first the machine ({"bench":"machine",...}), then every measurement, then
# {"bench":"machine.after",...} with the load and the share of the CPUs other processes used.
#
# Usage: bench/run.sh [--strict] [--quick] [--no-build]
#   --strict    exit 1 when any measurement misses its goal ("pass":false). Without it the
#               exit status only reports build or run failures: timings on a shared machine
#               are information, not a verdict.
#   --quick     tiny sizes (what the CTest smoke tests run); the figures mean nothing.
#   --no-build  use the binaries already in the build directory.
# Environment: BUILD_DIR (default build-bench), JOBS (default 2: the machine is shared).
set -euo pipefail

strict=0 quick=0 build=1
for arg in "$@"; do
  case "$arg" in
    --strict) strict=1 ;;
    --quick) quick=1 ;;
    --no-build) build=0 ;;
    *) echo "usage: $0 [--strict] [--quick] [--no-build]" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build-bench}"
jobs="${JOBS:-2}"
benchmarks=(bench_core bench_distribute bench_step bench_crc32c bench_gloo bench_parse_example bench_stats bench_autotune)

if [[ $build == 1 ]]; then
  "$root/bench/build_release.sh" "$build_dir" "$jobs" "${benchmarks[@]}"
fi

# The machine, so that figures are never read without knowing where they came from. The load
# matters on a shared machine: the figures are only meaningful when it is low. The load
# average lags by a minute, so the idle share of the CPUs over the last 2 s is recorded too.
json_str() { printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g'; }
# Busy and total jiffies of all CPUs, and the CPU jiffies of this script's finished children:
# their differences over the run give the share of the CPUs that *other* processes used.
cpu_jiffies() {
  local u n s i w q sq st rest
  read -r _ u n s i w q sq st _ </proc/stat
  rest="$(sed 's/.*) //' /proc/$$/stat)"
  set -- $rest
  # after the command name: state is field 3, cutime 16 and cstime 17 -> $14 and $15 here
  echo "$((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st)) $((${14} + ${15}))"
}
cpu_idle_pct() {
  local u n s i w q sq st t1 i1 t2 i2
  read -r _ u n s i w q sq st _ </proc/stat
  t1=$((u + n + s + i + w + q + sq + st)) i1=$((i + w))
  sleep 2
  read -r _ u n s i w q sq st _ </proc/stat
  t2=$((u + n + s + i + w + q + sq + st)) i2=$((i + w))
  echo $((100 * (i2 - i1) / (t2 - t1 > 0 ? t2 - t1 : 1)))
}
cpu="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)"
printf '{"bench":"machine","nproc":%s,"cpu":"%s","kernel":"%s","date":"%s","loadavg_before":"%s","cpu_idle_pct_before":%s,"build":"Release -O2"}\n' \
  "$(nproc)" "$(json_str "${cpu:-unknown}")" "$(json_str "$(uname -sr)")" \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(cpu_idle_pct)"

read -r busy0 total0 ours0 <<<"$(cpu_jiffies)"
args=()
[[ $quick == 1 ]] && args+=(--quick)
failed_goals=0
for b in "${benchmarks[@]}"; do
  exe="$build_dir/bench/$b"
  if ! out="$("$exe" "${args[@]}")"; then
    printf '%s\n' "$out"
    echo "bench/run.sh: $b failed" >&2
    exit 2
  fi
  printf '%s\n' "$out"
  if grep -q '"pass":false' <<<"$out"; then
    grep '"pass":false' <<<"$out" | sed -e 's/^{"bench":"\([^"]*\)".*/bench\/run.sh: goal missed: \1/' >&2
    failed_goals=1
  fi
done
read -r busy1 total1 ours1 <<<"$(cpu_jiffies)"
others=$(( (busy1 - busy0 - (ours1 - ours0)) * 100 / (total1 - total0 > 0 ? total1 - total0 : 1) ))
printf '{"bench":"machine.after","loadavg_after":"%s","others_cpu_pct_during":%s}\n' \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$(( others < 0 ? 0 : others ))"

if [[ $strict == 1 && $failed_goals == 1 ]]; then
  exit 1
fi
exit 0
