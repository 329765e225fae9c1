// The JSON text of dinput_build_info, made from what the components report, apart from the
// probes so that it can be tested with any report (messages with quotes, control characters
// or bytes that are not UTF-8 included).
#pragma once

#include <string>

#include "device/gpu.h"
#include "device/nccl.h"

namespace dinput::capi {

// One JSON object, written by nlohmann-json: every string escaped (control characters as
// \uXXXX), bytes that are not UTF-8 replaced by U+FFFD.
std::string build_info_json(const gpu::Availability& cuda, const gpu::NcclAvailability& nccl);

}  // namespace dinput::capi
