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
Element reduce(const Strategy& strategy, ReduceOp op, const std::vector<Element>& per_replica,
               int axis);

}  // namespace dinput
