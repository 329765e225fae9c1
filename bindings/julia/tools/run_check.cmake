# Runs one check of the Julia binding for CTest (registered by ../ctest.cmake), in script
# mode:
#   cmake -DCHECK=syntax|abi|names -DBINDING_DIR=<bindings/julia> -DHEADER=<include/dinput.h>
#         -DWORK_DIR=<a directory in the build tree> [-DNODE=<node>] [-DNPM=<npm>]
#         -P run_check.cmake
#
# syntax: installs web-tree-sitter and tree-sitter-julia (versions pinned by
#         package-lock.json) into WORK_DIR with `npm ci --ignore-scripts`, then runs
#         check_syntax.mjs: its self-test, a deliberately broken file (must be rejected), and
#         every .jl file of the package (must parse), which must include the test suite
#         test/runtests.jl, and the ```julia blocks of README.md (a README with a broken
#         block must be rejected); Project.toml must give `Pkg.test()` the Test stdlib.
# abi:    runs check_abi.mjs (Node only, no packages): its self-test with deliberate mutations
#         of the binding, a deliberately wrong wrapper (must be reported), and the package
#         against the headers, dinput.h and the dinput_cuda.h next to it (must match).
# names:  runs check_names.mjs (Node only): its self-test (mutations of the package must be
#         reported), then the package and README.md (every name they use must exist); the
#         README's read_records must be word for word the test suite's (test/readme.jl).
# Node and npm are looked up again here, so that installing them needs no reconfigure.
cmake_minimum_required(VERSION 3.16)

set(tools "${BINDING_DIR}/tools")
set(install_hint "Install Node.js (18 or later) and npm - on Debian: apt-get install nodejs npm - and run ctest again.")

if(NOT NODE OR NOT EXISTS "${NODE}")
  find_program(NODE NAMES node nodejs)
endif()
if(NOT NODE)
  message(FATAL_ERROR "bindings.julia.${CHECK}: Node.js was not found. ${install_hint}")
endif()

file(GLOB_RECURSE jl_files LIST_DIRECTORIES false "${BINDING_DIR}/Dinput/*.jl")
list(SORT jl_files)
if(NOT jl_files)
  message(FATAL_ERROR "bindings.julia.${CHECK}: no .jl files under ${BINDING_DIR}/Dinput")
endif()

# Runs node with the arguments after EXPECT; EXPECT is PASS or FAIL (a deliberately broken
# input), and with FAIL the output must also match the regular expression MATCH.
function(run_node what)
  cmake_parse_arguments(arg "" "EXPECT;MATCH;WORKING_DIRECTORY" "ARGS" ${ARGN})
  if(NOT arg_WORKING_DIRECTORY)
    set(arg_WORKING_DIRECTORY "${BINDING_DIR}")
  endif()
  execute_process(COMMAND "${NODE}" ${arg_ARGS}
                  WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("---- ${what}\n${out}${err}")
  if(arg_EXPECT STREQUAL "PASS" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "bindings.julia.${CHECK}: ${what} failed (exit status ${rc})")
  endif()
  if(arg_EXPECT STREQUAL "FAIL")
    if(rc EQUAL 0)
      message(FATAL_ERROR "bindings.julia.${CHECK}: ${what} was accepted, but the input is deliberately broken: the checker does not work")
    endif()
    if(NOT "${out}${err}" MATCHES "${arg_MATCH}")
      message(FATAL_ERROR "bindings.julia.${CHECK}: ${what} failed without reporting /${arg_MATCH}/")
    endif()
  endif()
endfunction()

if(CHECK STREQUAL "syntax")
  # The test suite a Julia user runs with Pkg.test() is parsed with the rest.
  set(runtests "${BINDING_DIR}/Dinput/test/runtests.jl")
  if(NOT runtests IN_LIST jl_files)
    message(FATAL_ERROR "bindings.julia.syntax: the package has no test suite ${runtests}")
  endif()
  file(READ "${BINDING_DIR}/Dinput/Project.toml" project)
  if(NOT project MATCHES "\n\\[extras\\][^[]*\nTest = \"8dfed614-e22c-5e08-85e1-65c5234f0b40\""
     OR NOT project MATCHES "\n\\[targets\\][^[]*\ntest = \\[[^]\n]*\"Test\"")
    message(FATAL_ERROR "bindings.julia.syntax: Dinput/Project.toml must list Test under [extras] and in [targets] test, for Pkg.test()")
  endif()
  # The npm packages live in the build tree, installed again only when the lock file changes.
  file(MAKE_DIRECTORY "${WORK_DIR}")
  foreach(f package.json package-lock.json check_syntax.mjs)
    configure_file("${tools}/${f}" "${WORK_DIR}/${f}" COPYONLY)
  endforeach()
  file(SHA256 "${tools}/package-lock.json" lock_hash)
  set(stamp "${WORK_DIR}/node_modules/.dinput-lock-sha256")
  set(installed "")
  if(EXISTS "${stamp}")
    file(READ "${stamp}" installed)
  endif()
  if(NOT installed STREQUAL lock_hash)
    if(NOT NPM OR NOT EXISTS "${NPM}")
      find_program(NPM NAMES npm)
    endif()
    if(NOT NPM)
      message(FATAL_ERROR "bindings.julia.syntax: npm was not found. ${install_hint}")
    endif()
    # --ignore-scripts: tree-sitter-julia's install script would build or download a native
    # module; only its tree-sitter-julia.wasm is used.
    execute_process(COMMAND "${NPM}" ci --ignore-scripts --no-audit --no-fund
                    WORKING_DIRECTORY "${WORK_DIR}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "bindings.julia.syntax: `npm ci` failed in ${WORK_DIR} (it needs the npm registry):\n${out}${err}")
    endif()
    file(WRITE "${stamp}" "${lock_hash}")
  endif()

  set(checker "${WORK_DIR}/check_syntax.mjs")
  run_node("check_syntax.mjs --self-test" EXPECT PASS ARGS "${checker}" --self-test)
  run_node("check_syntax.mjs on a deliberately broken file" EXPECT FAIL
           MATCH "syntax check FAILED.*1 of 1"
           ARGS "${checker}" "${tools}/selftest/syntax_error.jl.txt")
  run_node("check_syntax.mjs on a README with a broken block" EXPECT FAIL
           MATCH "readme_block_error.md.txt:18:[0-9]+: missing.*syntax check FAILED.*1 of 1"
           ARGS "${checker}" "${tools}/selftest/readme_block_error.md.txt")
  run_node("check_syntax.mjs on the package and README.md" EXPECT PASS
           ARGS "${checker}" ${jl_files} "${BINDING_DIR}/README.md")
elseif(CHECK STREQUAL "abi")
  set(checker "${tools}/check_abi.mjs")
  get_filename_component(include_dir "${HEADER}" DIRECTORY)
  set(headers "${HEADER}" "${include_dir}/dinput_cuda.h")
  run_node("check_abi.mjs --self-test" EXPECT PASS ARGS "${checker}" --self-test ${headers} ${jl_files})
  run_node("check_abi.mjs on a deliberately wrong wrapper" EXPECT FAIL
           MATCH "dinput_dataset_batch: argument 3 \\(batch_size\\) is Cint, expected Int64"
           ARGS "${checker}" "${HEADER}" "${tools}/selftest/bad_wrapper.jl.txt")
  run_node("check_abi.mjs on the package" EXPECT PASS ARGS "${checker}" ${headers} ${jl_files})
elseif(CHECK STREQUAL "names")
  set(checker "${tools}/check_names.mjs")
  run_node("check_names.mjs --self-test" EXPECT PASS
           ARGS "${checker}" --self-test "${BINDING_DIR}/Dinput" "${BINDING_DIR}/README.md")
  run_node("check_names.mjs on the package" EXPECT PASS
           ARGS "${checker}" "${BINDING_DIR}/Dinput" "${BINDING_DIR}/README.md")
  # The README's file pipeline is the test suite's read_records (Dinput/test/readme.jl),
  # which Pkg.test() runs on files it writes: the two must not drift apart.
  file(READ "${BINDING_DIR}/README.md" readme)
  file(READ "${BINDING_DIR}/Dinput/test/readme.jl" readme_test)
  string(FIND "${readme}" "\nfunction read_records(" start)
  if(start EQUAL -1)
    message(FATAL_ERROR "bindings.julia.names: README.md shows no `function read_records(`")
  endif()
  string(SUBSTRING "${readme}" ${start} -1 shown)
  string(FIND "${shown}" "\nend\n" stop)
  math(EXPR stop "${stop} + 5")
  string(SUBSTRING "${shown}" 0 ${stop} shown)
  string(FIND "${readme_test}" "${shown}" found)
  if(stop LESS 5 OR found EQUAL -1)
    message(FATAL_ERROR "bindings.julia.names: README.md's read_records is not the one Dinput/test/readme.jl runs; README shows:${shown}")
  endif()
  message("---- README.md's read_records is Dinput/test/readme.jl's")
else()
  message(FATAL_ERROR "run_check.cmake: CHECK must be syntax, abi or names, not '${CHECK}'")
endif()
