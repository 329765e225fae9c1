# CTest cases of the Go binding, included by tests/bindings/CMakeLists.txt:
#   bindings.go.vet   go vet ./...   in bindings/go
#   bindings.go.test  go test -race ./...  in bindings/go
# Both build against the library of THIS build tree: a dinput.pc generated below points cgo
# at include/ and at the directory of the dinput target (with an rpath, so the test binary
# finds libdinput.so without LD_LIBRARY_PATH). The Go caches live in the build tree and the
# module has no dependencies (GOPROXY=off), so neither HOME nor the network matter.
# Without the toolchain, both names are registered as failing tests that say what to install.

set(_dinput_go_source_dir ${PROJECT_SOURCE_DIR}/bindings/go)
set(_dinput_go_binary_dir ${CMAKE_CURRENT_BINARY_DIR}/go)

find_program(DINPUT_GO_EXECUTABLE NAMES go go-1.19 PATHS /usr/lib/go/bin /usr/local/go/bin)
find_program(DINPUT_PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf)

if(NOT DINPUT_GO_EXECUTABLE OR NOT DINPUT_PKG_CONFIG_EXECUTABLE)
  set(_dinput_go_missing "")
  if(NOT DINPUT_GO_EXECUTABLE)
    string(APPEND _dinput_go_missing " golang-go")
  endif()
  if(NOT DINPUT_PKG_CONFIG_EXECUTABLE)
    string(APPEND _dinput_go_missing " pkg-config")
  endif()
  file(WRITE ${_dinput_go_binary_dir}/missing-toolchain.cmake
       "message(FATAL_ERROR \"the Go binding needs the Go toolchain and pkg-config: install${_dinput_go_missing} (apt-get install${_dinput_go_missing}), then re-run cmake\")\n")
  foreach(_dinput_go_test vet test)
    add_test(NAME bindings.go.${_dinput_go_test}
             COMMAND ${CMAKE_COMMAND} -P ${_dinput_go_binary_dir}/missing-toolchain.cmake)
  endforeach()
  return()
endif()

# The pkg-config file of the build tree. The library's directory is only known at generate
# time (it depends on the configuration), hence file(GENERATE).
file(GENERATE OUTPUT ${_dinput_go_binary_dir}/pkgconfig/dinput.pc
     CONTENT "Name: dinput
Description: dinput (build tree)
Version: ${PROJECT_VERSION}
Libs: -L$<TARGET_FILE_DIR:dinput> -ldinput -Wl,-rpath,$<TARGET_FILE_DIR:dinput>
Cflags: -I${PROJECT_SOURCE_DIR}/include
")

set(_dinput_go_env
    "PKG_CONFIG_PATH=${_dinput_go_binary_dir}/pkgconfig"
    "PKG_CONFIG=${DINPUT_PKG_CONFIG_EXECUTABLE}"
    "GOFLAGS=-buildvcs=false"
    "GOPROXY=off"
    "GOTOOLCHAIN=local"
    "GOWORK=off"
    "GO111MODULE=on"
    "GOENV=off"
    "GOCACHE=${_dinput_go_binary_dir}/cache"
    "GOPATH=${_dinput_go_binary_dir}/gopath"
    "CGO_ENABLED=1")

# A sanitized libdinput.so wants the sanitizer runtimes loaded first; the Go test binary is
# not built with them, so preload them. Leak checking stays with the C tests: LeakSanitizer
# cannot see the handles Go objects hold (the Go heap is not scanned) and a Go program exits
# without running atexit handlers anyway.
if(DINPUT_SANITIZE)
  set(_dinput_go_runtimes "")
  if(DINPUT_SANITIZE MATCHES "address")
    list(APPEND _dinput_go_runtimes asan)
  endif()
  if(DINPUT_SANITIZE MATCHES "undefined")
    list(APPEND _dinput_go_runtimes ubsan)
  endif()
  set(_dinput_go_preload "")
  foreach(_dinput_go_rt IN LISTS _dinput_go_runtimes)
    execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=lib${_dinput_go_rt}.so
                    OUTPUT_VARIABLE _dinput_go_rt_path OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(IS_ABSOLUTE "${_dinput_go_rt_path}")
      list(APPEND _dinput_go_preload ${_dinput_go_rt_path})
    endif()
  endforeach()
  string(REPLACE ";" ":" _dinput_go_preload "${_dinput_go_preload}")
  list(APPEND _dinput_go_env "LD_PRELOAD=${_dinput_go_preload}"
       "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0")
endif()

add_test(NAME bindings.go.vet
         COMMAND ${DINPUT_GO_EXECUTABLE} vet ./...
         WORKING_DIRECTORY ${_dinput_go_source_dir})
# -count=1: the test cache does not know when libdinput.so was rebuilt, so always run.
# -race: the binding's locking (handles closed while calls are in flight, Close during Next,
# context cancellation) is what its tests exercise. Not with a sanitized library: Go's race
# detector is ThreadSanitizer too and cannot share the process with another sanitizer.
set(_dinput_go_race -race)
if(DINPUT_SANITIZE)
  set(_dinput_go_race "")
endif()
add_test(NAME bindings.go.test
         COMMAND ${DINPUT_GO_EXECUTABLE} test -count=1 ${_dinput_go_race} ./...
         WORKING_DIRECTORY ${_dinput_go_source_dir})
set_tests_properties(bindings.go.vet bindings.go.test PROPERTIES
                     ENVIRONMENT "${_dinput_go_env}"
                     LABELS "bindings;go"
                     TIMEOUT 900)
