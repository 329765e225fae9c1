# Optional CUDA support. With the toolkit present, the library links the static CUDA
# runtime (which needs no driver to load: without one, every CUDA call simply reports that
# no device is usable) and NCCL is opened at run time with dlopen, so one build runs on
# machines with and without GPUs. Without the toolkit, the CPU-only build reports
# FAILED_PRECONDITION whenever a GPU is asked to hold data.
#
# Every build exports the functions of include/dinput_cuda.h (in a CPU-only build they are
# no-ops, as for any host tensor), so every build installs that header too: the installed
# headers always declare exactly what the library exports.
option(DINPUT_WITH_CUDA "Build the CUDA paths when the CUDA toolkit is found" ON)
set(DINPUT_HAVE_CUDA OFF)
if(DINPUT_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND TARGET CUDA::cudart_static)
    set(DINPUT_HAVE_CUDA ON)
  endif()
endif()

if(DINPUT_HAVE_CUDA)
  message(STATUS "dinput: CUDA ${CUDAToolkit_VERSION} found: building the GPU paths")
  target_compile_definitions(dinput_objects PRIVATE DINPUT_HAVE_CUDA=1)
  target_include_directories(dinput_objects PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  find_path(DINPUT_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/include)
  if(DINPUT_NCCL_INCLUDE_DIR)
    target_compile_definitions(dinput_objects PRIVATE DINPUT_HAVE_NCCL_HEADER=1)
    target_include_directories(dinput_objects PRIVATE ${DINPUT_NCCL_INCLUDE_DIR})
  endif()
  target_link_libraries(dinput PRIVATE CUDA::cudart_static)
  target_link_libraries(dinput_static PUBLIC CUDA::cudart_static)
else()
  message(STATUS "dinput: CUDA not found or disabled: CPU-only build")
  # The CUDA handle types that dinput_cuda.h needs, for api_device.cc to include it.
  target_include_directories(dinput_objects PRIVATE ${PROJECT_SOURCE_DIR}/src/capi/no_cuda)
endif()
install(FILES ${PROJECT_SOURCE_DIR}/include/dinput_cuda.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
