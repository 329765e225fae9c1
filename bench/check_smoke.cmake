# Runs a benchmark with --quick and checks its output: every stdout line is a JSON object
# with a "bench" name, at least one line is printed, and every "zero_copy" is true.
# Timings and "pass" are deliberately not checked (see sources.cmake).
# Usage: cmake -DEXE=path/to/bench [-DARGS=--more] -P check_smoke.cmake
execute_process(COMMAND ${EXE} --quick ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} --quick exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/bench_lines.cmake)
bench_lines("${out}" lines names)
foreach(line IN LISTS lines)
  string(JSON name GET "${line}" bench)
  string(JSON zc ERROR_VARIABLE zerr GET "${line}" zero_copy)
  if(NOT zerr AND NOT zc STREQUAL "ON")
    message(FATAL_ERROR "${name}: replica pieces are not zero-copy views of the batch: ${line}")
  endif()
endforeach()
if(NOT lines)
  message(FATAL_ERROR "${EXE} --quick printed no measurement\nstderr:\n${err}")
endif()
