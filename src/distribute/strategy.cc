#include "distribute/strategy.h"

#include "core/status.h"

namespace dinput {

Strategy::Strategy(std::vector<Device> devices, std::shared_ptr<Collective> collective, int worker_index)
    : devices_(std::move(devices)), collective_(std::move(collective)), worker_index_(worker_index) {
  for (const auto& d : devices_) names_.push_back(d.name());
}

Strategy::~Strategy() {
  if (collective_) collective_->release_worker(worker_index_);
}

std::shared_ptr<const Strategy> make_strategy(const std::vector<std::string>& names,
                                              std::shared_ptr<Collective> collective, int worker_index) {
  std::vector<Device> devices;
  for (const auto& n : names) {
    Device d = parse_device(n);
    for (const auto& seen : devices)
      DINPUT_CHECK_ARG(!(seen == d), "device ", d.name(), " is listed twice; every replica needs its own device");
    devices.push_back(d);
  }
  if (devices.empty()) devices.push_back(Device{});
  if (collective) {
    int w = collective->num_workers();
    DINPUT_CHECK_ARG(worker_index >= 0 && worker_index < w, "worker_index must be in [0, ", w, "), got ", worker_index);
    if (!collective->claim_worker(worker_index))
      raise(Code::kAlreadyExists, "worker ", worker_index, " of this collective already has a strategy; free it first");
  } else {
    worker_index = 0;
  }
  return std::make_shared<const Strategy>(std::move(devices), std::move(collective), worker_index);
}

}  // namespace dinput
