#!/usr/bin/env bash
# Sets up a fresh machine, builds dinput and runs every test (README, second command; .ci/run
# calls it):
#  1. the default preset (RelWithDebInfo, build/): every CTest test — unit, C API, CLI,
#     packaging, examples, distribution, record files, fuzz corpora, bindings, the API
#     reference (Doxygen), the code style (clang-format), and the GPU tests (which report
#     SKIP without a GPU);
#  2. the asan preset (Debug, AddressSanitizer + UBSan, build-asan/): the library's own test
#     suites again, with leak detection;
#  3. the tsan preset (ThreadSanitizer, CPU-only: DINPUT_WITH_CUDA=OFF, build-tsan/): the
#     library's own suites again, which also proves the build without CUDA;
#  4. the fuzz preset (clang, libFuzzer, build-fuzz/): every fuzz target runs for 60 s on a
#     copy of its corpus (fuzz/README.md says how to keep what it finds).
# Made for 2 cores: everything uses -j2, and ccache (when installed) lets the stages share
# what they compile alike. Every stage runs; the exit status says if any failed.
# DINPUT_SKIP_SANITIZERS=1 skips stages 2-4 (a quick local run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/install-deps.sh

if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
fi

status=0
start=$(date +%s)
elapsed() { echo "($(($(date +%s) - start)) s)"; }

echo "== default preset: configure and build $(elapsed)"
cmake --preset default
cmake --build --preset default -j2

echo "== default preset: all tests $(elapsed)"
ctest --preset default --output-on-failure -j2 || status=1

# The library's own test suites (CTest names ^(unit|capi|distribute|io)\.), which the
# sanitizer stages build and run.
suite_targets=(unit_core unit_data unit_io unit_host_only unit_cluster unit_state unit_producer unit_example
               unit_combine unit_batching_ops unit_state_shuffle unit_errors unit_ragged unit_read_ahead capi_errors capi_tensors capi_checkpoint capi_dist_checkpoint capi_dist_steps capi_dist_copy_steps capi_example
               capi_datasets capi_batching capi_callbacks capi_files capi_enum_values capi_threading
               capi_transform_options capi_cluster capi_images capi_combine distribute_test store_test
               io_test capi_statistics unit_autotune capi_autotune capi_launcher)
# Targets that exist only when Gloo is found (a preset's configure says which).
optional_targets() {
  local preset=$1 t targets
  # Read whole first: under pipefail, grep -q closing the pipe early would fail the pipeline.
  targets=$(cmake --build --preset "$preset" --target help 2>/dev/null || true)
  for t in gloo_test gloo_shared_main process_test; do
    if grep -qw "$t" <<<"$targets"; then echo "$t"; fi
  done
  return 0
}

if [ "${DINPUT_SKIP_SANITIZERS:-0}" != "1" ]; then
  echo "== asan preset: configure and build the library's test suites $(elapsed)"
  cmake --preset asan
  cmake --build --preset asan -j2 --target "${suite_targets[@]}" $(optional_targets asan)
  echo "== asan preset: unit, C API, distribution and record-file tests $(elapsed)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset asan -R '^(unit|capi|distribute|io)\.' -LE python --output-on-failure -j2 || status=1

  echo "== tsan preset (CPU-only): configure and build the library, the tool and the test suites $(elapsed)"
  cmake --preset tsan
  cmake --build --preset tsan -j2 --target dinput dinput_tool "${suite_targets[@]}" \
    $(optional_targets tsan)
  echo "== tsan preset: unit, C API, distribution and record-file tests $(elapsed)"
  ctest --preset tsan --output-on-failure -j2 || status=1

  echo "== fuzz preset: configure and build the libFuzzer targets $(elapsed)"
  cmake --preset fuzz
  cmake --build --preset fuzz -j2 --target fuzz_record_reader fuzz_chain_parser fuzz_dist_iterator \
    fuzz_cluster_env fuzz_iterator_state fuzz_parse_example fuzz_image_decode
  echo "== fuzz preset: each target for 60 s $(elapsed)"
  ctest --preset fuzz --output-on-failure || status=1
fi

echo "== done $(elapsed): $([ "$status" -eq 0 ] && echo success || echo FAILED)"
exit "$status"
