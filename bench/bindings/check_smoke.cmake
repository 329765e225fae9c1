# bench.smoke.bindings: bench/bindings/run.sh --quick against the library of this build tree
# (tiny sizes, one round). Every stdout line must be a JSON object with a "bench" name, and
# every name the benchmark is made of must be there: the C programs' lines, each binding's
# iteration line, the machine's load, and a ratio (or a "missing" note) for every binding
# and map variant. Timings and "pass" are not checked: a shared CI machine's are noise.
# Usage: cmake -DRUN_SH=bench/bindings/run.sh -DBUILD_DIR=<build tree> -P check_smoke.cmake
cmake_minimum_required(VERSION 3.16)
foreach(tool go cargo)
  find_program(_tool_${tool} ${tool} HINTS $ENV{HOME}/.cargo/bin /usr/lib/go/bin)
  if(NOT _tool_${tool})
    message("SKIP: bench.smoke.bindings needs ${tool} (the Go and Rust bench programs)")
    return()
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E env BINDINGS_BUILD=${BUILD_DIR} BINDINGS_NO_BUILD=1
                        BINDINGS_W1=0 bash ${RUN_SH} --quick
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "run.sh --quick exited with ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/../bench_lines.cmake)
bench_lines("${out}" lines names)
set(expected c_range_batch256_2replicas c_map_element_seq c_map_element_par2 bindings.round
    bindings.machine)
foreach(lang go rust python)
  list(APPEND expected bindings.map.${lang}.element_seq bindings.map.${lang}.element_par2)
endforeach()
foreach(lang go rust)
  list(APPEND expected ${lang}_range_batch256_2replicas bindings.iteration.${lang})
endforeach()
# Python's iteration in its readings (bindings/python/bench.py).
foreach(reading numpy sum numpy_one_per_call)
  list(APPEND expected python_range_batch256_2replicas_${reading}
       bindings.iteration.python.${reading})
endforeach()
foreach(name IN LISTS expected)
  if(NOT name IN_LIST names)
    message(FATAL_ERROR "run.sh --quick printed no \"${name}\" line\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endforeach()
