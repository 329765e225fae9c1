#include "data/options.h"

#include "data/dataset.h"

namespace dinput {

const char* policy_name(AutoShardPolicy policy) {
  switch (policy) {
    case AutoShardPolicy::kOff: return "OFF";
    case AutoShardPolicy::kAuto: return "AUTO";
    case AutoShardPolicy::kFile: return "FILE";
    case AutoShardPolicy::kData: return "DATA";
    case AutoShardPolicy::kHint: return "HINT";
  }
  return "UNKNOWN";
}

const Options& Dataset::options() const {
  static const Options kDefaults;
  return kDefaults;
}

}  // namespace dinput
