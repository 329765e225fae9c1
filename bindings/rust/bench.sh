#!/usr/bin/env bash
# Runs the Rust binding's benchmark (examples/bench.rs) against the libdinput of a CMake build
# directory, printing its one JSON line:
#   {"bench":"rust_range_batch256_2replicas","ns_per_elem":...,"raw_ffi_ns_per_elem":...,...}
#
# Usage: bindings/rust/bench.sh [BUILD_DIR] [-- BENCH_ARGS...]
#   BUILD_DIR   a configured and built dinput tree (default: build-bench, as bench/run.sh);
#               its src/libdinput.so is the library measured
#   BENCH_ARGS  --quick (tiny sizes, figures meaningless) or --n N
# Environment: CARGO (default: cargo on PATH, else ~/.cargo/bin/cargo), JOBS (default 2).
#
# A pkg-config file for the build tree is written into BUILD_DIR/rust-bench/ (dinput-sys
# finds the library through pkg-config) and cargo builds into BUILD_DIR/rust-bench/target,
# so nothing is written to the source tree.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build_dir="build-bench"
if [[ $# -gt 0 && $1 != "--" ]]; then
  build_dir="$1"
  shift
fi
[[ $# -gt 0 && $1 == "--" ]] && shift
[[ $build_dir = /* ]] || build_dir="$root/$build_dir"

lib="$(ls "$build_dir"/src/libdinput.so 2>/dev/null || true)"
if [[ -z $lib ]]; then
  echo "bench.sh: no $build_dir/src/libdinput.so: build dinput there first" >&2
  exit 2
fi
cargo="${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}"
version="$(sed -n 's/^project(dinput VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"

out="$build_dir/rust-bench"
mkdir -p "$out/pkgconfig"
cat >"$out/pkgconfig/dinput.pc" <<PC
Name: dinput
Description: dinput (build tree $build_dir)
Version: ${version:-0.0.0}
Libs: -L$build_dir/src -ldinput
Cflags: -I$root/include
PC

cd "$here"
PKG_CONFIG_PATH="$out/pkgconfig" CARGO_TARGET_DIR="$out/target" LD_LIBRARY_PATH="$build_dir/src" \
  "$cargo" run --release --offline --quiet -j "${JOBS:-2}" --example bench -- "$@"
