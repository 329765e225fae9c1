#include "data/options.h"

#include "core/status.h"
#include "data/dataset.h"

namespace dinput {

const char* policy_name(AutoShardPolicy policy) {
  switch (policy) {
    case AutoShardPolicy::kOff:
      return "OFF";
    case AutoShardPolicy::kAuto:
      return "AUTO";
    case AutoShardPolicy::kFile:
      return "FILE";
    case AutoShardPolicy::kData:
      return "DATA";
    case AutoShardPolicy::kHint:
      return "HINT";
  }
  return "UNKNOWN";
}

int64_t read_statistic(const IteratorStats& stats, const std::string& name) {
  if (name == "records") return stats.records.load(std::memory_order_relaxed);
  if (name == "record_bytes") return stats.record_bytes.load(std::memory_order_relaxed);
  if (name == "corrupt_records_skipped")
    return stats.corrupt_records_skipped.load(std::memory_order_relaxed);
  if (name == "corrupt_bytes_skipped")
    return stats.corrupt_bytes_skipped.load(std::memory_order_relaxed);
  if (name == "errors_ignored") return stats.errors_ignored.load(std::memory_order_relaxed);
  raise(Code::kNotFound, "no iterator statistic named '", name,
        "' (known: records, record_bytes, corrupt_records_skipped, corrupt_bytes_skipped, "
        "errors_ignored)");
}

const Options& Dataset::options() const {
  static const Options kDefaults;
  return kDefaults;
}

}  // namespace dinput
