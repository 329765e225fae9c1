# CTest registration of the Python binding (included by tests/bindings/CMakeLists.txt).
#
#   bindings.python.<suite>   `python3 -m unittest test_<suite>` in bindings/python/tests, with
#                             the package from the source tree (PYTHONPATH) and the library of
#                             THIS build tree (DINPUT_LIBRARY).
#
# The interpreter is Debian's /usr/bin/python3 (python3-numpy, python3-torch) unless
# -DDINPUT_PYTHON=... names another. Without numpy (all suites) or torch (the torch suite)
# the tests fail with a message saying what to install, never silently nothing.
set(_dinput_py_dir ${PROJECT_SOURCE_DIR}/bindings/python)
if(NOT DINPUT_PYTHON)
  if(EXISTS /usr/bin/python3)
    set(DINPUT_PYTHON /usr/bin/python3 CACHE FILEPATH "Python for bindings/python's tests")
  else()
    find_program(DINPUT_PYTHON NAMES python3 DOC "Python for bindings/python's tests")
  endif()
endif()

function(_dinput_py_has module out)
  set(${out} FALSE PARENT_SCOPE)
  if(DINPUT_PYTHON)
    execute_process(COMMAND ${DINPUT_PYTHON} -c "import ${module}" RESULT_VARIABLE rc
                    OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      set(${out} TRUE PARENT_SCOPE)
    endif()
  endif()
endfunction()

_dinput_py_has(numpy _dinput_py_numpy)
_dinput_py_has(torch _dinput_py_torch)
_dinput_py_has(PIL _dinput_py_pil)

# A sanitized libdinput can only be loaded into a process whose first library is the
# sanitizer's runtime, and the interpreter is not instrumented: preload the runtime (leak
# checks off, since the interpreter itself keeps memory until exit).
set(_dinput_py_preload "")
if(DINPUT_SANITIZE MATCHES "address")
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
    OUTPUT_VARIABLE _dinput_py_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(_dinput_py_preload ";LD_PRELOAD=${_dinput_py_rt};ASAN_OPTIONS=detect_leaks=0")
elseif(DINPUT_SANITIZE MATCHES "thread")
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libtsan.so
    OUTPUT_VARIABLE _dinput_py_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(_dinput_py_preload ";LD_PRELOAD=${_dinput_py_rt}")
endif()
foreach(suite package errors tensor dataset distribute torch readme example image combine batching statistics steps autotune)
  set(_missing "")
  if(NOT DINPUT_PYTHON)
    set(_missing "python3")
  elseif(NOT _dinput_py_numpy)
    set(_missing "numpy for ${DINPUT_PYTHON} (Debian: apt-get install python3-numpy)")
  elseif(suite STREQUAL "torch" AND NOT _dinput_py_torch)
    set(_missing "torch for ${DINPUT_PYTHON} (Debian: apt-get install python3-torch)")
  elseif(suite STREQUAL "image" AND NOT _dinput_py_pil)
    set(_missing "PIL for ${DINPUT_PYTHON} (Debian: apt-get install python3-pil libjpeg-turbo-progs)")
  endif()
  if(_missing)
    add_test(NAME bindings.python.${suite}
             COMMAND ${CMAKE_COMMAND} -E echo
                     "bindings.python.${suite}: needs ${_missing}, then re-run cmake (or pass -DDINPUT_PYTHON=/path/to/python3).")
    set_tests_properties(bindings.python.${suite} PROPERTIES FAIL_REGULAR_EXPRESSION "needs")
  else()
    add_test(NAME bindings.python.${suite}
             COMMAND ${DINPUT_PYTHON} -m unittest -v test_${suite}
             WORKING_DIRECTORY ${_dinput_py_dir}/tests)
    set_tests_properties(bindings.python.${suite} PROPERTIES
      ENVIRONMENT "DINPUT_LIBRARY=$<TARGET_FILE:dinput>;PYTHONPATH=${_dinput_py_dir};PYTHONDONTWRITEBYTECODE=1${_dinput_py_preload}")
  endif()
  set_tests_properties(bindings.python.${suite} PROPERTIES LABELS "bindings;python" TIMEOUT 300)
endforeach()
