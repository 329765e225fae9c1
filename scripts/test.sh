#!/usr/bin/env bash
# Sets up a fresh machine, builds dinput and runs every test (README, second command; .ci/run
# calls it):
#  1. the default preset (RelWithDebInfo, build/): every CTest test — unit, C API, CLI,
#     packaging, examples, distribution, record files, fuzz corpora, bindings, and the GPU
#     tests (which report SKIP without a GPU);
#  2. the asan preset (Debug, AddressSanitizer + UBSan, build-asan/): the library's own test
#     suites again, with leak detection.
# Made for 2 cores: everything uses -j2. Every stage runs; the exit status says if any failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh

status=0
start=$(date +%s)
elapsed() { echo "($(($(date +%s) - start)) s)"; }

echo "== default preset: configure and build $(elapsed)"
cmake --preset default
cmake --build --preset default -j2

echo "== default preset: all tests $(elapsed)"
ctest --preset default --output-on-failure -j2 || status=1

if [ "${DINPUT_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== asan preset: configure and build the library's test suites $(elapsed)"
  cmake --preset asan
  asan_targets=(unit_core unit_data unit_io capi_errors capi_tensors capi_datasets capi_callbacks capi_files
                capi_enum_values distribute_test io_test)
  cmake --build --preset asan -j2 --target "${asan_targets[@]}"
  echo "== asan preset: unit, C API, distribution and record-file tests $(elapsed)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset asan -R '^(unit|capi|distribute|io)\.' --output-on-failure -j2 || status=1
fi

echo "== done $(elapsed): $([ "$status" -eq 0 ] && echo success || echo FAILED)"
exit "$status"
