// Auto-sharding: rewriting a worker's copy of the input graph so that the workers together
// read every element once (docs/semantics.md, "Sharding policies").
#pragma once

#include <optional>

#include "core/status.h"
#include "data/dataset.h"

namespace dinput {

struct ShardPlan {
  DatasetPtr dataset;             // the worker's (possibly rewritten) dataset
  AutoShardPolicy applied;        // OFF, FILE, DATA or HINT after resolving AUTO
  std::optional<Error> deferred;  // an error that iteration must raise (FILE with too few files)
};

ShardPlan auto_shard(const DatasetPtr& dataset, int num_workers, int worker_index);

}  // namespace dinput
