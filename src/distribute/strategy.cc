#include "distribute/strategy.h"

#include <unordered_set>

#include "core/status.h"

namespace dinput {

Strategy::Strategy(std::vector<Device> devices, std::shared_ptr<Collective> collective,
                   int worker_index)
    : devices_(std::move(devices)),
      collective_(std::move(collective)),
      worker_index_(worker_index) {
  for (const auto& d : devices_) names_.push_back(d.name());
}

Strategy::~Strategy() {
  if (collective_) collective_->release_worker(worker_index_);
}

void check_strategy_size(int64_t num_workers, int64_t num_local_replicas) {
  if (num_local_replicas > kMaxLocalReplicas)
    raise(Code::kInvalidArgument, "a strategy may have at most ", kMaxLocalReplicas,
          " replicas per worker, got ", num_local_replicas);
  if (num_workers * num_local_replicas > kMaxReplicasInSync)
    raise(Code::kInvalidArgument, "a strategy may have at most ", kMaxReplicasInSync,
          " replicas in sync, got ", num_workers, " worker(s) x ", num_local_replicas,
          " replica(s) = ", num_workers * num_local_replicas);
}

std::shared_ptr<const Strategy> make_strategy(const std::vector<std::string>& names,
                                              std::shared_ptr<Collective> collective,
                                              int worker_index) {
  check_strategy_size(collective ? collective->num_workers() : 1,
                      static_cast<int64_t>(names.size()));
  std::vector<Device> devices;
  std::unordered_set<int64_t> seen;  // (type, index): one pass, whatever the count
  for (const auto& n : names) {
    Device d = parse_device(n);
    const int64_t key = (d.type == DeviceType::kGPU ? int64_t{1} << 32 : 0) + d.index;
    DINPUT_CHECK_ARG(seen.insert(key).second, "device ", d.name(),
                     " is listed twice; every replica needs its own device");
    devices.push_back(d);
  }
  if (devices.empty()) devices.push_back(Device{});
  if (collective) {
    int w = collective->num_workers();
    DINPUT_CHECK_ARG(worker_index >= 0 && worker_index < w, "worker_index must be in [0, ", w,
                     "), got ", worker_index);
    if (!collective->claim_worker(worker_index))
      raise(Code::kAlreadyExists, "worker ", worker_index,
            " of this collective already has a strategy; free it first");
  } else {
    worker_index = 0;
  }
  return std::make_shared<const Strategy>(std::move(devices), std::move(collective), worker_index);
}

}  // namespace dinput
