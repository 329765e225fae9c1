#!/usr/bin/env bash
# Builds benchmark targets in Release, the way every bench/ script measures: -O2 rather than
# CMake's default -O3 (the optimisation level users build with), no tests, no examples.
# Quiet on success; on failure prints the build log to stderr and exits 2.
#
# Usage: bench/build_release.sh BUILD_DIR JOBS TARGET...
#   called by bench/run.sh and bench/scale/run.sh (which share one build directory).
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 BUILD_DIR JOBS TARGET..." >&2
  exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="$1" jobs="$2"
shift 2
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! { cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DDINPUT_BUILD_TESTS=OFF \
         -DDINPUT_BUILD_EXAMPLES=OFF "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
         "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" &&
       cmake --build "$build_dir" -j "$jobs" --target "$@"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "$0: build of $* in $build_dir failed" >&2
  exit 2
fi
