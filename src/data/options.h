// Dataset options: settings attached to a pipeline with with_options(). Each field is
// optional so that options merge field by field, as in tf.data: a with_options() closer to
// the output overrides only the fields it sets.
#pragma once

#include <optional>

namespace dinput {

// Values equal dinput_auto_shard_policy_t.
enum class AutoShardPolicy : int { kOff = -1, kAuto = 0, kFile = 1, kData = 2, kHint = 3 };

const char* policy_name(AutoShardPolicy policy);

struct Options {
  std::optional<AutoShardPolicy> auto_shard_policy;
  std::optional<bool> skip_corrupt_records;

  AutoShardPolicy policy() const { return auto_shard_policy.value_or(AutoShardPolicy::kAuto); }
  bool skip_corrupt() const { return skip_corrupt_records.value_or(false); }

  // The fields set here, and the others from `base`.
  Options over(const Options& base) const {
    Options out = base;
    if (auto_shard_policy) out.auto_shard_policy = auto_shard_policy;
    if (skip_corrupt_records) out.skip_corrupt_records = skip_corrupt_records;
    return out;
  }
};

}  // namespace dinput
