// NCCL for reductions over the GPU replicas of one process. The library is opened at run
// time (libnccl.so.2), so builds and machines without it use the host path instead.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace dinput::gpu {

struct NcclAvailability {
  bool compiled = false;  // built with CUDA and nccl.h
  bool loaded = false;    // libnccl.so.2 opened and its functions found
  int version = 0;
  std::string reason;
};

const NcclAvailability& nccl();

// Sums tensors of one dtype and shape, tensor r on GPU devices[r] (distinct GPUs), with
// ncclAllReduce, and returns the sum as a host tensor. Raises UNIMPLEMENTED for dtypes NCCL
// has no type for (callers then reduce on the host).
Tensor nccl_sum_to_host(const std::vector<Tensor>& per_replica, const std::vector<int>& devices);

// Whether nccl_sum_to_host can take tensors of this dtype.
bool nccl_supports(DType dtype);

}  // namespace dinput::gpu
