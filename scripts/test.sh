#!/usr/bin/env bash
# Sets up a fresh machine, builds dinput and runs every test (README, second command;
# .ci/run calls it). Then rebuilds the tests with AddressSanitizer and
# UndefinedBehaviorSanitizer and runs the library's own test suites under them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
(cd build && ctest --output-on-failure -j2)

if [ "${DINPUT_SKIP_SANITIZERS:-0}" != "1" ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DDINPUT_SANITIZE=address,undefined -DDINPUT_BUILD_BENCH=OFF >/dev/null
  cmake --build build-asan -j2
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j2 -R '^(unit|capi|distribute|example)\.')
fi
