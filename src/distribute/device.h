// Replica devices: "CPU:k" (logical host replicas, any number) and "GPU:k" (CUDA devices).
#pragma once

#include <string>
#include <string_view>

namespace dinput {

enum class DeviceType { kCPU, kGPU };

struct Device {
  DeviceType type = DeviceType::kCPU;
  int index = 0;

  std::string name() const;  // canonical: "CPU:0", "GPU:1"
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
};

// Accepts "CPU:0", "cpu:0", "GPU:1", "/gpu:1", "/device:GPU:1",
// "/job:worker/replica:0/task:1/device:CPU:0". INVALID_ARGUMENT names the text otherwise.
Device parse_device(std::string_view text);

}  // namespace dinput
