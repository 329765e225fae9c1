#!/usr/bin/env bash
# Installs the build into a fresh prefix and builds two consumers against that prefix only
# (docs/c-api.md, "Building against dinput"): a C program through
# `pkg-config --cflags --libs dinput` and a CMake project through find_package(dinput) +
# dinput::dinput. Both must run and print the result.
# Usage: consumer_test.sh BUILD_DIR CONSUMER_SRC_DIR WORK_DIR CMAKE C_COMPILER VERSION
set -euo pipefail
build=$1 src=$2 work=$3 cmake=$4 cc=$5 version=$6
passed=0 failed=0
ok() { echo "ok: $*"; passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; }

rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 || {
  cat "$work/install.log"
  bad "cmake --install failed"
  finish
  exit 1
}

# What the prefix must hold.
libdir=$(dirname "$(find "$prefix" -name 'libdinput.so.*' -print -quit)")
[ -f "$prefix/include/dinput.h" ] && ok "include/dinput.h" || bad "include/dinput.h missing"
[ -e "$libdir/libdinput.so.${version%%.*}" ] && ok "libdinput.so.${version%%.*}" || bad "SONAME link missing in $libdir"
[ -e "$libdir/libdinput.so" ] && ok "libdinput.so" || bad "development link libdinput.so missing"
pcdir=$(dirname "$(find "$prefix" -name dinput.pc -print -quit)")
[ -f "$pcdir/dinput.pc" ] && ok "dinput.pc" || bad "dinput.pc missing"
[ -n "$(find "$prefix" -path '*cmake/dinput/dinputConfig.cmake')" ] && ok "dinputConfig.cmake" || bad "dinputConfig.cmake missing"
[ -x "$prefix/bin/dinput" ] && ok "bin/dinput" || bad "the dinput tool is not installed in bin/"
# dinput_cuda.h is installed exactly when the installed library exports its functions (every
# build does): a header declaring functions the library lacks, or functions exported without
# their header, would each break a consumer.
cuda_exported=$(nm -D --defined-only "$libdir/libdinput.so.${version%%.*}" | awk '{print $NF}' |
  sed 's/@.*//' | grep -c '^dinput_tensor_cuda_' || true)
if [ -f "$prefix/include/dinput_cuda.h" ] && [ "$cuda_exported" -gt 0 ]; then
  ok "include/dinput_cuda.h installed, and the library exports $cuda_exported dinput_tensor_cuda_* functions"
elif [ ! -f "$prefix/include/dinput_cuda.h" ] && [ "$cuda_exported" -eq 0 ]; then
  ok "neither include/dinput_cuda.h nor dinput_tensor_cuda_* functions"
else
  bad "include/dinput_cuda.h $([ -f "$prefix/include/dinput_cuda.h" ] && echo installed || echo missing), but the library exports $cuda_exported dinput_tensor_cuda_* functions"
fi

# The installed tool runs from its prefix as it is: its run path finds the installed library,
# with no LD_LIBRARY_PATH and no ldconfig (and not the build tree's library: the build tree
# is hidden by running from the prefix alone).
if out=$(env -u LD_LIBRARY_PATH "$prefix/bin/dinput" --version 2>&1) &&
   [ "$(printf '%s\n' "$out" | head -1)" = "dinput $version" ]; then
  ok "installed bin/dinput --version runs without LD_LIBRARY_PATH"
else
  bad "installed bin/dinput --version failed: $out"
fi
if runpath=$(readelf -d "$prefix/bin/dinput" 2>/dev/null | grep -E 'RUNPATH|RPATH') &&
   [[ "$runpath" == *'$ORIGIN/'* ]] && [[ "$runpath" != *"$build"* ]]; then
  ok "bin/dinput has a run path relative to itself: ${runpath##*: }"
else
  bad "bin/dinput run path is '${runpath:-none}', expected \$ORIGIN/../lib and no build directory"
fi
out=$(env -u LD_LIBRARY_PATH "$prefix/bin/dinput" run 'range(3).batch(3)' 2>&1) || true
[ "$(printf '%s\n' "$out" | head -1)" = '{"worker":0,"step":0,"replicas":[[[0,1,2]]]}' ] &&
  ok "installed bin/dinput runs a pipeline" || bad "installed bin/dinput run printed '$out'"

# The run-time version and the installed header's macros must both be this build's.
expected="consumer: version=$version header=$version batches=3 sum=45"

# 1. pkg-config.
export PKG_CONFIG_PATH=$pcdir
if modversion=$(pkg-config --modversion dinput) && [ "$modversion" = "$version" ]; then
  ok "pkg-config --modversion: $modversion"
else
  bad "pkg-config --modversion gave '${modversion:-}' (expected $version)"
fi
flags=$(pkg-config --cflags --libs dinput) || bad "pkg-config --cflags --libs dinput failed"
echo "pkg-config --cflags --libs dinput: $flags"
# shellcheck disable=SC2086  # the flags are meant to split into words
if "$cc" -std=c99 -Wall -Wextra -Werror -o "$work/consumer_pc" "$src/consumer.c" $flags >"$work/pc_build.log" 2>&1; then
  ok "built with pkg-config flags"
  out=$(LD_LIBRARY_PATH=$libdir "$work/consumer_pc" 2>&1) || true
  [ "$out" = "$expected" ] && ok "pkg-config consumer ran: $out" || bad "pkg-config consumer printed '$out', expected '$expected'"
else
  cat "$work/pc_build.log"
  bad "building with pkg-config flags failed"
fi

# 2. CMake package.
if "$cmake" -S "$src" -B "$work/cmake_build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
     -DCMAKE_BUILD_TYPE=Release >"$work/cmake_configure.log" 2>&1 &&
   "$cmake" --build "$work/cmake_build" >"$work/cmake_build.log" 2>&1; then
  ok "built with find_package(dinput)"
  out=$("$work/cmake_build/consumer" 2>&1) || true
  [ "$out" = "$expected" ] && ok "CMake consumer ran: $out" || bad "CMake consumer printed '$out', expected '$expected'"
else
  cat "$work/cmake_configure.log" "$work/cmake_build.log" 2>/dev/null || true
  bad "building with find_package(dinput) failed"
fi

finish
