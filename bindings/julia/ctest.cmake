# Julia binding tests, included by tests/bindings/CMakeLists.txt.
#
# Julia is not installed where dinput is built, so the package's own test suite
# (Dinput/test/runtests.jl, run with `Pkg.test()`, see README.md) cannot run here. These two
# tests check what can be checked without it, with Node.js:
#   bindings.julia.syntax  every .jl file of the package, and every ```julia block of
#                          README.md, parses with the tree-sitter Julia grammar (no ERROR or
#                          MISSING node); the checker must also reject a deliberately broken
#                          file and a README with a broken block.
#   bindings.julia.abi     every ccall, @cfunction and constant matches include/dinput.h,
#                          and no ccall fixes the library at precompile time; the checker
#                          must also report deliberately wrong wrappers.
#   bindings.julia.names   every exported name is defined, and every Dinput.name (and every
#                          unexported name called unqualified) in the test suite and the
#                          README exists; the checker must also report deliberate mutations.
#                          The README's read_records must be the test suite's
#                          (Dinput/test/readme.jl, which runs it).
# The syntax test also makes sure that the test suite (Dinput/test/runtests.jl) is among the
# files it parses and that Project.toml gives Pkg.test() its Test dependency.
# Without node (or, for the syntax test, npm) they fail with a message saying what to
# install; the syntax test needs the npm registry the first time (`npm ci` into the build
# tree).
find_program(DINPUT_JULIA_NODE NAMES node nodejs)
find_program(DINPUT_JULIA_NPM NAMES npm)

foreach(check syntax abi names)
  add_test(NAME bindings.julia.${check}
           COMMAND ${CMAKE_COMMAND}
                   -DCHECK=${check}
                   -DNODE=${DINPUT_JULIA_NODE}
                   -DNPM=${DINPUT_JULIA_NPM}
                   -DBINDING_DIR=${CMAKE_CURRENT_LIST_DIR}
                   -DHEADER=${PROJECT_SOURCE_DIR}/include/dinput.h
                   -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/julia-checks
                   -P ${CMAKE_CURRENT_LIST_DIR}/tools/run_check.cmake)
  set_tests_properties(bindings.julia.${check} PROPERTIES LABELS "bindings;julia" TIMEOUT 600)
endforeach()
