#!/usr/bin/env bash
# Builds and runs the GPU benchmark (Release). Needs the CUDA toolkit and a GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DDINPUT_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target bench_gpu
./build-bench/bench/gpu/bench_gpu
