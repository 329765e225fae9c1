// Stands in for the CUDA toolkit's <cuda_runtime_api.h> in a CPU-only build of the library,
// and only there (cmake/dinput_cuda.cmake puts this directory on the include path when the
// toolkit is missing). api_device.cc includes the public dinput_cuda.h, so that the compiler
// checks the definitions of its functions against their declarations in every build; that
// header needs just the two handle types, declared here exactly as the toolkit declares
// them (pointers to its opaque stream and event structs), so the exported signatures are
// the same with and without CUDA.
#pragma once

typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
