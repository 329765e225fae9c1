#!/usr/bin/env bash
# Sets up a fresh machine, builds dinput and runs the main demo (README, first command).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target dinput dinput_tool example_demo
echo
./build/examples/example_demo
echo
echo '$ dinput run --replicas 2 "range(9).batch(4)"'
./build/tools/dinput/dinput run --replicas 2 "range(9).batch(4)"
