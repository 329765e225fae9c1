// Dataset options: settings attached to a pipeline with with_options().
#pragma once

namespace dinput {

// Values equal dinput_auto_shard_policy_t.
enum class AutoShardPolicy : int { kOff = -1, kAuto = 0, kFile = 1, kData = 2, kHint = 3 };

const char* policy_name(AutoShardPolicy policy);

struct Options {
  AutoShardPolicy auto_shard_policy = AutoShardPolicy::kAuto;
};

}  // namespace dinput
