#!/usr/bin/env bash
# The scale curves of W1 (bench/scale/bench_scale.c): files and record sizes, CPU replicas,
# shuffle buffers; throughput and peak RSS per point, each point in a process of its own.
# Builds bench_scale in Release (bench/build_release.sh, in bench/run.sh's build directory) and runs it,
# printing one JSON line per point between two machine lines.
#
# Usage: bench/scale/run.sh [--no-build] [bench_scale arguments: --quick, --only CURVE,
#                           --epochs N, DIR]
# Environment: BUILD_DIR (default build-bench), JOBS (default 2).
# Space: the largest data set (the shuffle curve's) is 2 GiB, written into DIR (default a new
# folder under /tmp) and removed after its curve; the page cache holds it while it runs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${BUILD_DIR:-$root/build-bench}"
jobs="${JOBS:-2}"
build=1
if [[ ${1:-} == --no-build ]]; then
  build=0
  shift
fi
if [[ $build == 1 ]]; then
  "$root/bench/build_release.sh" "$build_dir" "$jobs" bench_scale
fi
printf '{"bench":"scale.run","cpu":"%s","kernel":"%s","date":"%s","mem_total_kib":%s}\n' \
  "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)" "$(uname -r)" \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(awk '/MemTotal/ {print $2}' /proc/meminfo)"
exec "$build_dir/bench/bench_scale" "$@"
