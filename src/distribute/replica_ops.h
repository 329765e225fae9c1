// Per-replica computation: values from a function, run, and reduce (docs/semantics.md,
// "Per-replica values, run and reduce").
#pragma once

#include <functional>
#include <vector>

#include "core/element.h"
#include "distribute/strategy.h"

namespace dinput {

struct ReplicaContext {
  int replica_id_in_sync_group;
  int num_replicas_in_sync;
  const std::string* device;
};

// Calls fn once per local replica, in order, and collects the results.
std::vector<Element> distribute_values(const Strategy& strategy,
                                       const std::function<Element(const ReplicaContext&)>& fn);

// Calls fn once per local replica, concurrently (a thread per replica), with that replica's
// args (or none). The first failure in replica order is raised after all calls returned.
std::vector<Element> run_on_replicas(
    const Strategy& strategy,
    const std::function<Element(const ReplicaContext&, const Element* args)>& fn,
    const std::vector<Element>* args);

enum class ReduceOp { kSum = 0, kMean = 1 };
constexpr int kAxisNone = -1;

// Reduces across all replicas of all workers (an all-reduce when there are several).
// Components on GPU replicas are summed with NCCL only where that gives bit-for-bit the
// host path's result (the two functions below); everything else is reduced on the host.
Element reduce(const Strategy& strategy, ReduceOp op, const std::vector<Element>& per_replica,
               int axis);

// Whether a component of `dtype` whose replicas lie on the GPUs `devices` (replica order;
// one worker, element-wise) may be summed with NCCL in its own dtype: float16, bfloat16,
// float32 and float64 over exactly two distinct GPUs, where NCCL's one rounding per element
// is the host path's. The reasoning is in replica_ops.cc.
bool nccl_reduce_is_exact(DType dtype, const std::vector<int>& devices);

// Finishes one component on the NCCL path from NCCL's element-wise sum (a host tensor of
// the component's dtype): *out gets the host path's result for `op`, and true. False, with
// *out untouched, where the host path must reduce the component instead: a sum element is
// not finite, or (MEAN) a mean comes out subnormal (nonzero, below the smallest normal).
bool finish_nccl_sum(const Strategy& strategy, ReduceOp op, const Tensor& sum, Tensor* out);

}  // namespace dinput
