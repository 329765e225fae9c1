// Dataset options: settings attached to a pipeline with with_options(). Each field is
// optional so that options merge field by field, as in tf.data: a with_options() closer to
// the output overrides only the fields it sets.
#pragma once

#include <cstdint>
#include <optional>

namespace dinput {

// Values equal dinput_auto_shard_policy_t.
enum class AutoShardPolicy : int { kOff = -1, kAuto = 0, kFile = 1, kData = 2, kHint = 3 };

const char* policy_name(AutoShardPolicy policy);

// The largest record a reader accepts unless max_record_bytes says otherwise: a length
// field claiming more is DATA_LOSS before anything is allocated, so a damaged or hostile
// file (a "decompression bomb") cannot make a reader take gigabytes of memory.
constexpr int64_t kDefaultMaxRecordBytes = int64_t{256} << 20;
// The largest limit that can be set: far beyond any real record, and small enough that a
// record's size plus its framing never overflows.
constexpr int64_t kMaxMaxRecordBytes = int64_t{1} << 56;

struct Options {
  std::optional<AutoShardPolicy> auto_shard_policy;
  std::optional<bool> skip_corrupt_records;
  std::optional<int64_t> max_record_bytes;
  // Memory-map regular files instead of reading them into the library's buffers (only for
  // files nobody truncates or rewrites while they are read: see dinput_options_set_map_files).
  std::optional<bool> map_files;
  // Read FIFOs, character devices and other files that are not regular files.
  std::optional<bool> allow_nonregular_files;
  // The order of map, interleave and batch whose own deterministic is unset (tf.data's
  // Options.deterministic); unset: true.
  std::optional<bool> deterministic;
  // Per-stage statistics (docs/statistics.md); unset: on (kStatisticsByDefault).
  std::optional<bool> statistics;
  // The most trace events kept (0: no trace); unset: no trace.
  std::optional<int64_t> trace_events;
  // The most bytes the autotuned buffers of an iterator may hold (data/autotune.h); unset or
  // 0: default_ram_budget().
  std::optional<int64_t> ram_budget;

  AutoShardPolicy policy() const { return auto_shard_policy.value_or(AutoShardPolicy::kAuto); }
  bool skip_corrupt() const { return skip_corrupt_records.value_or(false); }
  uint64_t record_limit() const {
    return static_cast<uint64_t>(max_record_bytes.value_or(kDefaultMaxRecordBytes));
  }
  bool map() const { return map_files.value_or(false); }
  bool allow_nonregular() const { return allow_nonregular_files.value_or(false); }
  // A node's deterministic setting, `own` when set, else these options'.
  bool ordered(std::optional<bool> own) const { return own.value_or(deterministic.value_or(true)); }

  // The fields set here, and the others from `base`.
  Options over(const Options& base) const {
    Options out = base;
    if (auto_shard_policy) out.auto_shard_policy = auto_shard_policy;
    if (skip_corrupt_records) out.skip_corrupt_records = skip_corrupt_records;
    if (max_record_bytes) out.max_record_bytes = max_record_bytes;
    if (map_files) out.map_files = map_files;
    if (allow_nonregular_files) out.allow_nonregular_files = allow_nonregular_files;
    if (deterministic) out.deterministic = deterministic;
    if (statistics) out.statistics = statistics;
    if (trace_events) out.trace_events = trace_events;
    if (ram_budget) out.ram_budget = ram_budget;
    return out;
  }
};

}  // namespace dinput
