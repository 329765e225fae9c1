// A strategy is one worker's view of W workers x R replica devices. Replica ids are
// worker_index * R + local_index; num_replicas_in_sync is W * R.
#pragma once

#include <memory>
#include <vector>

#include "collective/collective.h"
#include "distribute/device.h"

namespace dinput {

class Strategy {
 public:
  // collective may be null for a single-worker strategy.
  Strategy(std::vector<Device> devices, std::shared_ptr<Collective> collective, int worker_index);
  ~Strategy();
  Strategy(const Strategy&) = delete;
  Strategy& operator=(const Strategy&) = delete;

  int num_workers() const { return collective_ ? collective_->num_workers() : 1; }
  int worker_index() const { return worker_index_; }
  int num_local_replicas() const { return static_cast<int>(devices_.size()); }
  int num_replicas_in_sync() const { return num_workers() * num_local_replicas(); }
  int replica_id(int local) const { return worker_index_ * num_local_replicas() + local; }
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<std::string>& device_names() const { return names_; }
  // Null for a single worker: nothing to exchange.
  Collective* collective() const { return collective_.get(); }

 private:
  std::vector<Device> devices_;
  std::vector<std::string> names_;
  std::shared_ptr<Collective> collective_;
  int worker_index_;
};

// Upper bounds on a strategy's size. CPU replicas are logical, so nothing else stops a
// caller from asking for 2^30 of them; every replica costs memory per step (and a thread in
// run), so a count past these is a mistake to report at once, not to attempt.
constexpr int kMaxLocalReplicas = 4096;
constexpr int64_t kMaxReplicasInSync = int64_t{1} << 20;
// INVALID_ARGUMENT unless num_local_replicas replicas on each of num_workers workers are
// within the bounds above.
void check_strategy_size(int64_t num_workers, int64_t num_local_replicas);

// devices empty -> CPU:0. Names must be distinct.
std::shared_ptr<const Strategy> make_strategy(const std::vector<std::string>& devices,
                                              std::shared_ptr<Collective> collective,
                                              int worker_index);

}  // namespace dinput
