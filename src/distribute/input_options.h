// tf.distribute.InputOptions: how input is replicated and placed.
#pragma once

#include <cstdint>

namespace dinput {

enum class ReplicationMode { kPerWorker = 0, kPerReplica = 1 };

struct InputOptions {
  bool fetch_to_device = true;
  ReplicationMode replication_mode = ReplicationMode::kPerWorker;
  bool place_dataset_on_device = false;
  int64_t per_replica_buffer_size = 1;
};

enum class InputApi { kDistributeDataset, kFromFunction };

// The combinations tf.distribute rejects: INVALID_ARGUMENT, or UNIMPLEMENTED for
// PER_REPLICA with distribute_dataset.
void validate(const InputOptions& options, InputApi api);

}  // namespace dinput
