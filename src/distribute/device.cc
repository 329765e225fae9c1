#include "distribute/device.h"

#include <cctype>

#include "core/status.h"

namespace dinput {

std::string Device::name() const {
  return (type == DeviceType::kGPU ? "GPU:" : "CPU:") + std::to_string(index);
}

Device parse_device(std::string_view text) {
  auto bad = [&]() {
    raise(Code::kInvalidArgument, "invalid device name '", std::string(text),
          "': expected CPU:k or GPU:k (optionally as /job:.../device:GPU:k)");
  };
  // Only the last path component names the device.
  std::string_view s = text;
  size_t slash = s.rfind('/');
  if (slash != std::string_view::npos) s = s.substr(slash + 1);
  if (s.rfind("device:", 0) == 0) s = s.substr(7);
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) bad();
  std::string kind;
  for (char c : s.substr(0, colon))
    kind += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string_view digits = s.substr(colon + 1);
  if (digits.empty() || digits.size() > 6) bad();
  int index = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) bad();
    index = index * 10 + (c - '0');
  }
  Device d;
  d.index = index;
  if (kind == "CPU")
    d.type = DeviceType::kCPU;
  else if (kind == "GPU")
    d.type = DeviceType::kGPU;
  else
    bad();
  return d;
}

}  // namespace dinput
