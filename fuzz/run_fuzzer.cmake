# Runs one libFuzzer target for SECONDS seconds on a fresh copy of its seed corpus (new
# inputs go to the copy, never into the source tree). Fails when the fuzzer finds a crash,
# a leak, a timeout or an out-of-memory input; the input is kept in WORK as crash-*/leak-*
# /timeout-*/oom-* for reproduction: FUZZER <that file>.
#   cmake -DFUZZER=... -DCORPUS=... -DWORK=... -DSECONDS=30 -P run_fuzzer.cmake
foreach(var FUZZER CORPUS WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake: ${var} is not set")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK}/corpus)
file(MAKE_DIRECTORY ${WORK}/corpus)
file(GLOB seeds ${CORPUS}/*)
file(COPY ${seeds} DESTINATION ${WORK}/corpus)
# Memory: 3 GiB. The record reader accepts zstd windows of up to 2^31 bytes (long-window
# streams, src/io/input_stream.h), so a few header bytes may make libzstd allocate just over
# 2 GiB; that is the documented limit, not a leak, and libFuzzer's default cap (2 GiB) would
# call it out-of-memory.
execute_process(
  COMMAND ${FUZZER} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=3072 -max_len=65536
          -print_final_stats=1 -artifact_prefix=${WORK}/ ${WORK}/corpus
  WORKING_DIRECTORY ${WORK}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (exit ${rc}); see the crash-*/leak-*/timeout-*/oom-* file in ${WORK}")
endif()
