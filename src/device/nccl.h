// NCCL for reductions over the GPU replicas of one process, and across the worker processes
// of a job with one GPU each. The library is opened at run time (libnccl.so.2), so builds and
// machines without it use the host path instead.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.h"

namespace dinput {
class Collective;
}

namespace dinput::gpu {

struct NcclAvailability {
  bool compiled = false;  // built with CUDA and nccl.h
  bool loaded = false;    // libnccl.so.2 opened and its functions found
  int version = 0;
  std::string reason;
  bool across_workers = false;  // non-blocking communicators (NCCL 2.14+): see below
};

const NcclAvailability& nccl();

// Sums tensors of one dtype and shape, tensor r on GPU devices[r], with ncclAllReduce in
// their own dtype (callers decide where that is exact: reduce in distribute/replica_ops.cc),
// and returns the sum as a host tensor. Raises UNIMPLEMENTED for dtypes NCCL has no type
// for and FAILED_PRECONDITION when a GPU is listed twice (NCCL needs a rank per GPU).
//
// Thread-safe. An operation holds a lock per GPU it uses, taken in ascending order, until
// its sum is complete, so collectives are queued in one order on every GPU. It waits by
// polling its streams and NCCL's asynchronous error: a collective that fails raises
// UNAVAILABLE naming NCCL's error instead of hanging. Any failure after the NCCL group
// started aborts the communicators of these devices; the next call makes new ones.
Tensor nccl_sum_to_host(const std::vector<Tensor>& per_replica, const std::vector<int>& devices);

// Whether nccl_sum_to_host can take tensors of this dtype.
bool nccl_supports(DType dtype);

// Whether nccl_sum_across_workers can run: NCCL loaded, with non-blocking communicators.
bool nccl_across_workers_available();

// Sums `local`, on GPU `device`, with the tensor of the same dtype and shape that every other
// worker of `collective` passes at the same point, one GPU per worker (the processes of a
// multi-process job, or threads), and returns the sum as a host tensor. The communicator is
// made on the first call: worker 0 makes NCCL's unique id and the job's collective carries it
// to the others (Collective::share_from_worker0). It is non-blocking: its forming and every
// sum are polled against the collective's timeout, so a worker that dies or stalls makes
// this fail with DEADLINE_EXCEEDED or UNAVAILABLE, after aborting the communicator (the next
// call forms a new one), instead of hanging the GPU. Callers decide where NCCL's sum is the
// host path's (reduce in distribute/replica_ops.cc). A worker's calls are serialized.
Tensor nccl_sum_across_workers(Collective& collective, int worker, const Tensor& local, int device);

namespace testing {
// For white-box tests only: the next nccl_sum_to_host hands NCCL an invalid datatype for
// rank `rank` inside its group, so that NCCL itself fails there, as a real error would.
void fail_next_all_reduce(int rank);
}  // namespace testing

}  // namespace dinput::gpu
