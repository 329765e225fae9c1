#include "distribute/input_options.h"

#include "core/status.h"

namespace dinput {

void validate(const InputOptions& o, InputApi api) {
  if (o.per_replica_buffer_size < 0)
    raise(Code::kInvalidArgument, "per_replica_buffer_size must be >= 0, got ",
          o.per_replica_buffer_size);
  if (o.replication_mode == ReplicationMode::kPerReplica && api == InputApi::kDistributeDataset)
    raise(Code::kUnimplemented,
          "replication_mode PER_REPLICA is only supported by distribute_datasets_from_function, "
          "not by "
          "distribute_dataset");
  if (o.place_dataset_on_device && o.replication_mode != ReplicationMode::kPerReplica)
    raise(Code::kInvalidArgument, "place_dataset_on_device requires replication_mode PER_REPLICA");
  if (o.place_dataset_on_device && o.fetch_to_device)
    raise(Code::kInvalidArgument,
          "place_dataset_on_device and fetch_to_device cannot both be set with replication_mode "
          "PER_REPLICA: the "
          "dataset already runs on the device, so set fetch_to_device to false");
}

}  // namespace dinput
