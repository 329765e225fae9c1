#!/usr/bin/env bash
# Runs the Go binding's benchmark (bench/main.go) against the library of a build tree and
# prints its JSON line. The default build tree is build-bench, the Release -O2 build that
# bench/run.sh makes, so that the Go and C figures come from the same library; if it has no
# libdinput.so yet, the dinput target is built there with bench/run.sh's flags.
#
# Usage: bindings/go/bench/run.sh [-n N] [-runs R] [-quick] [-tensors]
# Environment: BUILD_DIR (default <repo>/build-bench), JOBS (default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
build_dir="${BUILD_DIR:-$root/build-bench}"
lib_dir="$build_dir/src"

if [[ ! -e "$lib_dir/libdinput.so" ]]; then
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  if ! { cmake -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DDINPUT_BUILD_TESTS=OFF \
           -DDINPUT_BUILD_EXAMPLES=OFF "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG" \
           "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" &&
         cmake --build "$build_dir" -j "${JOBS:-2}" --target dinput; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "bindings/go/bench/run.sh: building libdinput failed" >&2
    exit 2
  fi
fi

# A pkg-config file for that build tree, and Go caches inside it: no install, no HOME needed.
go_dir="$build_dir/bindings-go"
mkdir -p "$go_dir/pkgconfig"
cat >"$go_dir/pkgconfig/dinput.pc" <<PC
Name: dinput
Description: dinput (build tree)
Version: 0
Libs: -L$lib_dir -ldinput -Wl,-rpath,$lib_dir
Cflags: -I$root/include
PC

cd "$root/bindings/go"
PKG_CONFIG_PATH="$go_dir/pkgconfig" GOFLAGS=-buildvcs=false GOPROXY=off GOWORK=off \
  GOCACHE="$go_dir/cache" GOPATH="$go_dir/gopath" CGO_ENABLED=1 \
  go build -o "$go_dir/go-bench" ./bench
exec "$go_dir/go-bench" "$@"
