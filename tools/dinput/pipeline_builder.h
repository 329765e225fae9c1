// Turns a parsed chain (see chain_parser.h) into a dataset through the C API. Which
// functions exist and their parameters is one table in pipeline_builder.cc; how each maps
// onto a dinput_dataset_* call is in build_sources.cc, build_readers.cc and
// build_transforms.cc (see builder_functions.h).
#ifndef DINPUT_TOOL_PIPELINE_BUILDER_H_
#define DINPUT_TOOL_PIPELINE_BUILDER_H_

#include <cstdint>
#include <functional>

#include "chain_parser.h"
#include "handles.h"
#include "status.h"

namespace dinput_tool {

// What a dataset_fn template (--from-function) can refer to: the accessors of one input
// pipeline's dinput_input_context_t.
struct InputPipelineInfo {
  int64_t num_input_pipelines = 1;
  int64_t input_pipeline_id = 0;
  int64_t num_replicas_in_sync = 1;
  std::function<int64_t(int64_t global_batch_size)> per_replica_batch_size;
};

// Checks every `$name(...)` placeholder of the pipeline: known name, right arguments.
// `allowed` is false outside --from-function, where any placeholder is an error.
void check_placeholders(const Pipeline& pipeline, bool allowed);

// Returns a copy of the pipeline with every placeholder replaced by its integer value for
// one input pipeline. Failures of get_per_replica_batch_size propagate unchanged.
Pipeline resolve_placeholders(const Pipeline& pipeline, const InputPipelineInfo& info);

// The file name a cache(filename) gets in worker `worker` of `workers` (> 1): workers read
// different data (FILE sharding, a dataset_fn), so each caches to its own file,
// "FILENAME.worker-W-of-N". A memory cache (no file name) stays as it is.
std::string worker_cache_file(const std::string& filename, int64_t worker, int64_t workers);
// The pipeline with every cache(filename) given worker_cache_file's name, in nested
// pipelines too; `changed` (if given) says whether there was one.
Pipeline with_worker_cache_files(const Pipeline& pipeline, int64_t worker, int64_t workers,
                                 bool* changed = nullptr);

// Builds the dataset. The pipeline must not contain placeholders any more.
DatasetPtr build_dataset(const Pipeline& pipeline);

// Parses an auto-shard policy name: OFF, AUTO, FILE, DATA, HINT (any case), optionally
// qualified as AutoShardPolicy.X or tf.data.experimental.AutoShardPolicy.X.
bool parse_auto_shard_policy(const std::string& name, dinput_auto_shard_policy_t* out);

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_PIPELINE_BUILDER_H_
