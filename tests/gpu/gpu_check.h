// What every GPU test program shares: failing with a message, checking statuses, counting
// GPUs. A failed check exits 1; a program exits 77 (CTest: SKIP) without a usable GPU.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "dinput.h"

#define REQUIRE(cond, ...)                                        \
  do {                                                            \
    if (!(cond)) {                                                \
      std::fprintf(stderr, "FAILED %s:%d: ", __FILE__, __LINE__); \
      std::fprintf(stderr, __VA_ARGS__);                          \
      std::fprintf(stderr, "\n");                                 \
      std::exit(1);                                               \
    }                                                             \
  } while (0)

inline void ok(dinput_status_t st) {
  REQUIRE(st == DINPUT_OK, "%s: %s", dinput_status_name(st), dinput_last_error_message());
}

inline void cuda(cudaError_t err) {
  REQUIRE(err == cudaSuccess, "CUDA: %s", cudaGetErrorString(err));
}

inline int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}
