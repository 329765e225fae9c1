# Benchmark targets. Each is a C program that uses only dinput.h and compares dinput with a
# baseline measured in the same run; bench/run.sh builds them in Release and runs them.
set(DINPUT_BENCHMARKS bench_core bench_distribute bench_step bench_checkpoint bench_stats bench_autotune)
foreach(name ${DINPUT_BENCHMARKS})
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.c)
  target_link_libraries(${name} PRIVATE dinput)
  target_compile_options(${name} PRIVATE -Wall -Wextra)
endforeach()

# A smoke run of each benchmark with tiny sizes, so they cannot rot. It checks only that the
# program succeeds and prints well-formed JSON (and that the rebatch pieces are zero-copy):
# timings on a shared CI machine are not something a test can assert.
# (add_test does nothing unless the top level enabled testing.)
foreach(name ${DINPUT_BENCHMARKS})
  string(REPLACE "bench_" "" short ${name})
  add_test(NAME bench.smoke.${short}
           COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${name}>
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/check_smoke.cmake)
  set_tests_properties(bench.smoke.${short} PROPERTIES TIMEOUT 120 LABELS bench)
endforeach()
# bench_step's mode with a busy-looping child per core: the children must start and be
# killed again (a leftover child would keep the test's process group alive past its timeout).
add_test(NAME bench.smoke.step_load
         COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:bench_step> -DARGS=--load
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_smoke.cmake)
set_tests_properties(bench.smoke.step_load PROPERTIES TIMEOUT 120 LABELS bench)

# JPEG decoding against a plain TurboJPEG loop (bench_image.c), when TurboJPEG is found.
find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(DINPUT_BENCH_TURBOJPEG QUIET IMPORTED_TARGET libturbojpeg)
endif()
if(DINPUT_BENCH_TURBOJPEG_FOUND AND DINPUT_HAVE_JPEG)
  add_executable(bench_image ${CMAKE_CURRENT_SOURCE_DIR}/bench_image.c)
  target_link_libraries(bench_image PRIVATE dinput PkgConfig::DINPUT_BENCH_TURBOJPEG)
  target_compile_options(bench_image PRIVATE -Wall -Wextra)
  add_test(NAME bench.smoke.image
           COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:bench_image>
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/check_smoke.cmake)
  set_tests_properties(bench.smoke.image PROPERTIES TIMEOUT 120 LABELS bench)
endif()
# The ImageNet-style pipeline against PyTorch (bench/image_pipeline.py, through the Python
# binding), in quick mode: it must run and print its measurement line.
if(EXISTS /usr/bin/python3 AND DINPUT_HAVE_JPEG AND NOT DINPUT_SANITIZE)
  add_test(NAME bench.smoke.image_pipeline
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/image_pipeline.py --quick)
  set_tests_properties(bench.smoke.image_pipeline PROPERTIES TIMEOUT 300 LABELS bench
                       ENVIRONMENT "DINPUT_LIBRARY=$<TARGET_FILE:dinput>;PYTHONDONTWRITEBYTECODE=1"
                       PASS_REGULAR_EXPRESSION "\"bench\": \"image.pipeline\"")
endif()

# CRC32C: the library's SSE4.2 code against ISA-L's crc32_iscsi (bench/README.md). White-box,
# so it links the static library; it prints a "skipped" line in a build without ISA-L.
add_executable(bench_crc32c ${CMAKE_CURRENT_SOURCE_DIR}/bench_crc32c.cc)
target_link_libraries(bench_crc32c PRIVATE dinput_static)
target_compile_options(bench_crc32c PRIVATE -Wall -Wextra)
add_test(NAME bench.smoke.crc32c
         COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:bench_crc32c>
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_smoke.cmake)
set_tests_properties(bench.smoke.crc32c PROPERTIES TIMEOUT 120 LABELS bench)

# The per-step agreement over Gloo against a bare Gloo all-reduce (bench/README.md). White-box
# like bench_crc32c; it prints a "skipped" line in a build without Gloo.
add_executable(bench_gloo ${CMAKE_CURRENT_SOURCE_DIR}/bench_gloo.cc)
target_link_libraries(bench_gloo PRIVATE dinput_static)
if(DINPUT_HAVE_GLOO)
  target_compile_definitions(bench_gloo PRIVATE DINPUT_HAVE_GLOO=1)
  target_link_libraries(bench_gloo PRIVATE gloo)
endif()
target_compile_options(bench_gloo PRIVATE -Wall -Wextra)
add_test(NAME bench.smoke.gloo
         COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:bench_gloo>
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_smoke.cmake)
set_tests_properties(bench.smoke.gloo PROPERTIES TIMEOUT 120 LABELS bench)

# The soak test (bench/soak/soak.c): the W1 pipeline over in-process workers with random
# worker restarts, checking exactly-once delivery in every completed epoch. Its real run
# lasts 30 minutes (bench/README.md); CTest runs a few seconds of it on small files, which
# still fails on any duplicate, loss, hang or leaked file descriptor.
add_executable(soak ${CMAKE_CURRENT_SOURCE_DIR}/soak/soak.c)
target_link_libraries(soak PRIVATE dinput Threads::Threads)
target_compile_options(soak PRIVATE -Wall -Wextra)
add_test(NAME bench.smoke.soak
         COMMAND soak --dir ${CMAKE_CURRENT_BINARY_DIR} --minutes 0.05 --workers 2 --replicas 2
                 --files 4 --records 300 --record-bytes 64 --restart-percent 40 --seed 7)
set_tests_properties(bench.smoke.soak PROPERTIES TIMEOUT 120 LABELS bench)

# parse_example against C++ libprotobuf parsing the same records into generated classes
# (bench/README.md). The classes are generated here, for the benchmark only; without
# libprotobuf and protoc it measures dinput alone and says the baseline was skipped.
add_executable(bench_parse_example ${CMAKE_CURRENT_SOURCE_DIR}/bench_parse_example.cc)
target_link_libraries(bench_parse_example PRIVATE dinput)
target_compile_options(bench_parse_example PRIVATE -Wall -Wextra)
find_package(Protobuf QUIET)
if(Protobuf_FOUND AND Protobuf_PROTOC_EXECUTABLE)
  set(dinput_bench_pb_dir ${CMAKE_CURRENT_BINARY_DIR}/example_pb)
  file(MAKE_DIRECTORY ${dinput_bench_pb_dir})
  add_custom_command(
    OUTPUT ${dinput_bench_pb_dir}/example.pb.cc ${dinput_bench_pb_dir}/example.pb.h
    COMMAND ${Protobuf_PROTOC_EXECUTABLE} --cpp_out=${dinput_bench_pb_dir}
            --proto_path=${CMAKE_CURRENT_SOURCE_DIR}/example example.proto
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/example/example.proto
    COMMENT "protoc: bench/example/example.proto (the libprotobuf baseline of bench_parse_example)")
  target_sources(bench_parse_example PRIVATE ${dinput_bench_pb_dir}/example.pb.cc)
  target_include_directories(bench_parse_example PRIVATE ${dinput_bench_pb_dir})
  target_compile_definitions(bench_parse_example PRIVATE DINPUT_BENCH_HAVE_PROTOBUF=1)
  target_link_libraries(bench_parse_example PRIVATE protobuf::libprotobuf)
endif()
add_test(NAME bench.smoke.parse_example
         COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:bench_parse_example>
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_smoke.cmake)
set_tests_properties(bench.smoke.parse_example PROPERTIES TIMEOUT 120 LABELS bench)

# Batch 1 through the distributed iterator against PyTorch's DataLoader (bench/torch_batch1.py
# runs bench_step --batch1 and the DataLoader in turn), in quick mode: it must run and print
# its comparison line. Skipped where /usr/bin/python3 has no torch.
if(EXISTS /usr/bin/python3 AND NOT DINPUT_SANITIZE)
  add_test(NAME bench.smoke.torch_batch1
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/torch_batch1.py --quick
                   $<TARGET_FILE:bench_step>)
  set_tests_properties(bench.smoke.torch_batch1 PROPERTIES TIMEOUT 300 LABELS bench
                       ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1"
                       PASS_REGULAR_EXPRESSION "\"bench\": \"step.batch1_vs_torch\", "
                       SKIP_REGULAR_EXPRESSION "SKIP: torch_batch1.py needs")
endif()

# Scale curves of W1 (bench/scale: files and record sizes, replicas, shuffle buffers), one
# process per point for its peak memory; bench/scale/run.sh runs the full sizes. The smoke
# test runs --quick and checks that every point of every curve is printed.
add_executable(bench_scale ${CMAKE_CURRENT_SOURCE_DIR}/scale/bench_scale.c)
target_link_libraries(bench_scale PRIVATE dinput)
target_compile_options(bench_scale PRIVATE -Wall -Wextra)
add_test(NAME bench.smoke.scale
         COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:bench_scale>
                 "-DEXPECT=scale.files=6,scale.replicas=7,scale.shuffle=4,scale.machine=1"
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/check_smoke.cmake)
set_tests_properties(bench.smoke.scale PROPERTIES TIMEOUT 300 LABELS bench)
