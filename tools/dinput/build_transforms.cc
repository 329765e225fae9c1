// The transformations other than interleave (see build_readers.cc).
#include <string>
#include <vector>

#include "builder_functions.h"
#include "pipeline_builder.h"

namespace dinput_tool {
namespace builder {

DatasetPtr build_batch(const Args& args, const dinput_dataset_t* input) {
  const int64_t batch_size = args.get_int("batch_size");
  const bool drop_remainder = args.get_bool("drop_remainder", false);
  const int64_t num_parallel_calls = args.get_int("num_parallel_calls", {kAutotune}, true, 1);
  const bool deterministic = args.get_bool("deterministic", true, true);
  dinput_batch_options_t* raw = nullptr;
  check(dinput_batch_options_new(&raw), "dinput_batch_options_new");
  BatchOptionsPtr options(raw);
  check(dinput_batch_options_set_drop_remainder(options.get(), drop_remainder ? 1 : 0), "batch");
  check(dinput_batch_options_set_num_parallel_calls(options.get(), num_parallel_calls), "batch");
  const Value* deterministic_value = args.get("deterministic");
  if (deterministic_value != nullptr && deterministic_value->kind != Value::Kind::kNone) {
    check(
        dinput_batch_options_set_deterministic(
            options.get(), deterministic ? DINPUT_DETERMINISTIC_TRUE : DINPUT_DETERMINISTIC_FALSE),
        "batch");
  }
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_batch(&made, input, batch_size, options.get()), &made, "batch");
}

DatasetPtr build_repeat(const Args& args, const dinput_dataset_t* input) {
  const int64_t count = args.get_int("count", {}, true, DINPUT_REPEAT_FOREVER);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_repeat(&made, input, count), &made, "repeat");
}

DatasetPtr build_shuffle(const Args& args, const dinput_dataset_t* input) {
  const int64_t buffer_size = args.get_int("buffer_size");
  const int64_t seed = args.get_int("seed", {}, true, -1);
  if (args.get("seed") != nullptr && args.get("seed")->kind == Value::Kind::kInt && seed < 0) {
    // The C API reserves negative seeds for "random"; an explicit seed must be honoured.
    throw args.error("seed", "must be >= 0 or None");
  }
  const bool reshuffle = args.get_bool("reshuffle_each_iteration", true);
  dinput_shuffle_options_t* raw = nullptr;
  check(dinput_shuffle_options_new(&raw), "dinput_shuffle_options_new");
  ShuffleOptionsPtr options(raw);
  // The chain's single seed is the pair (seed, 0), which the C API maps to the same order.
  if (seed >= 0) {
    check(dinput_shuffle_options_set_seed(options.get(), seed, 0), "shuffle");
  }
  check(dinput_shuffle_options_set_reshuffle_each_iteration(options.get(), reshuffle ? 1 : 0),
        "shuffle");
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_shuffle(&made, input, buffer_size, options.get()), &made, "shuffle");
}

DatasetPtr build_shard(const Args& args, const dinput_dataset_t* input) {
  const int64_t num_shards = args.get_int("num_shards", {kShardHint});
  const int64_t index = args.get_int("index", {kShardHint});
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_shard(&made, input, num_shards, index), &made, "shard");
}

DatasetPtr build_take(const Args& args, const dinput_dataset_t* input) {
  const int64_t count = args.get_int("count");
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_take(&made, input, count), &made, "take");
}

DatasetPtr build_skip(const Args& args, const dinput_dataset_t* input) {
  const int64_t count = args.get_int("count");
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_skip(&made, input, count), &made, "skip");
}

DatasetPtr build_enumerate(const Args& args, const dinput_dataset_t* input) {
  const int64_t start = args.get_int("start", {}, false, 0);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_enumerate(&made, input, start), &made, "enumerate");
}

DatasetPtr build_unbatch(const Args&, const dinput_dataset_t* input) {
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_unbatch(&made, input), &made, "unbatch");
}

DatasetPtr build_rebatch(const Args& args, const dinput_dataset_t* input) {
  const std::vector<int64_t> sizes = args.get_ints("batch_size");
  const bool drop_remainder = args.get_bool("drop_remainder", false);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_rebatch(&made, input, sizes.data(), sizes.size(), drop_remainder),
               &made, "rebatch");
}

DatasetPtr build_prefetch(const Args& args, const dinput_dataset_t* input) {
  const int64_t buffer_size = args.get_int("buffer_size", {kAutotune});
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_prefetch(&made, input, buffer_size), &made, "prefetch");
}

DatasetPtr build_with_options(const Args& args, const dinput_dataset_t* input) {
  const Value* policy_value = args.get("auto_shard_policy");
  const Value* skip_value = args.get("skip_corrupt_records");
  const Value* max_record_value = args.get("max_record_bytes");
  const Value* map_value = args.get("map_files");
  const Value* nonregular_value = args.get("allow_nonregular_files");
  const Value* deterministic_value = args.get("deterministic");
  const Value* ram_budget_value = args.get("ram_budget");
  if (policy_value == nullptr && skip_value == nullptr && max_record_value == nullptr &&
      map_value == nullptr && nonregular_value == nullptr && deterministic_value == nullptr &&
      ram_budget_value == nullptr) {
    throw invalid_argument(
        "with_options(): give at least one option; usage: with_options(auto_shard_policy=OFF|"
        "AUTO|FILE|DATA|HINT, skip_corrupt_records=False, max_record_bytes=268435456, "
        "map_files=False, allow_nonregular_files=False, deterministic=True, ram_budget=0)");
  }
  dinput_options_t* raw = nullptr;
  check(dinput_options_new(&raw), "dinput_options_new");
  OptionsPtr options(raw);
  // Only the options written are set: the library merges options per field, so an option
  // left out keeps the value an earlier with_options() gave it.
  if (policy_value != nullptr) {
    dinput_auto_shard_policy_t policy;
    if ((policy_value->kind != Value::Kind::kName && policy_value->kind != Value::Kind::kString) ||
        !parse_auto_shard_policy(policy_value->text, &policy)) {
      throw args.type_error("auto_shard_policy", "one of OFF, AUTO, FILE, DATA, HINT",
                            *policy_value);
    }
    check(dinput_options_set_auto_shard_policy(options.get(), policy),
          "dinput_options_set_auto_shard_policy");
  }
  if (skip_value != nullptr) {
    const bool skip = args.get_bool("skip_corrupt_records", false);
    check(dinput_options_set_skip_corrupt_records(options.get(), skip ? 1 : 0),
          "dinput_options_set_skip_corrupt_records");
  }
  if (max_record_value != nullptr) {
    const int64_t max_bytes = args.get_int("max_record_bytes");
    check(dinput_options_set_max_record_bytes(options.get(), max_bytes),
          "dinput_options_set_max_record_bytes");
  }
  if (map_value != nullptr) {
    const bool map = args.get_bool("map_files", false);
    check(dinput_options_set_map_files(options.get(), map ? 1 : 0), "dinput_options_set_map_files");
  }
  if (nonregular_value != nullptr) {
    const bool allow = args.get_bool("allow_nonregular_files", false);
    check(dinput_options_set_allow_nonregular_files(options.get(), allow ? 1 : 0),
          "dinput_options_set_allow_nonregular_files");
  }
  if (deterministic_value != nullptr) {
    // The order of the map, interleave and batch before it whose own deterministic is None.
    const bool deterministic = args.get_bool("deterministic", true);
    check(dinput_options_set_deterministic(options.get(), deterministic ? 1 : 0),
          "dinput_options_set_deterministic");
  }
  if (ram_budget_value != nullptr) {
    // The most bytes the AUTOTUNE buffers may hold (docs/autotune.md); 0: the default.
    check(dinput_options_set_ram_budget(options.get(), args.get_int("ram_budget")),
          "dinput_options_set_ram_budget");
  }
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_with_options(&made, input, options.get()), &made, "with_options");
}

}  // namespace builder
}  // namespace dinput_tool
