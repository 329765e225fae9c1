#include "distribute/auto_shard.h"

#include "core/log.h"
#include "data/nodes.h"
#include "distribute/graph.h"

namespace dinput {

namespace {

struct SourceSurvey {
  std::vector<const FileSource*> file_sources;
  const Dataset* unshardable = nullptr;  // the first source that reads no files
};

SourceSurvey survey_sources(const DatasetPtr& root) {
  SourceSurvey s;
  for_each_node(root, [&](const Dataset& node) {
    if (!node.inputs().empty()) return;
    if (auto* f = dynamic_cast<const FileSource*>(&node))
      s.file_sources.push_back(f);
    else if (!s.unshardable)
      s.unshardable = &node;
  });
  return s;
}

DatasetPtr shard_files(const DatasetPtr& root, int num_workers, int worker_index) {
  return rewrite_graph(root, [&](const DatasetPtr& node) -> DatasetPtr {
    auto* source = dynamic_cast<const FileSource*>(node.get());
    if (!source) return node;
    std::vector<std::string> mine;
    const auto& files = source->files();
    for (size_t i = static_cast<size_t>(worker_index); i < files.size();
         i += static_cast<size_t>(num_workers))
      mine.push_back(files[i]);
    return source->with_files(std::move(mine));
  });
}

DatasetPtr fill_shard_hints(const DatasetPtr& root, int num_workers, int worker_index) {
  return rewrite_graph(root, [&](const DatasetPtr& node) -> DatasetPtr {
    auto* shard = dynamic_cast<const ShardDataset*>(node.get());
    if (!shard || !shard->is_hint()) return node;
    return make_shard(shard->input(), num_workers, worker_index);
  });
}

size_t min_file_count(const SourceSurvey& s) {
  size_t n = SIZE_MAX;
  for (auto* f : s.file_sources) n = std::min(n, f->files().size());
  return n;
}

}  // namespace

ShardPlan auto_shard(const DatasetPtr& dataset, int num_workers, int worker_index) {
  AutoShardPolicy policy = dataset->options().policy();
  ShardPlan plan{dataset, policy, std::nullopt};
  switch (policy) {
    case AutoShardPolicy::kOff:
    case AutoShardPolicy::kData:
      return plan;
    case AutoShardPolicy::kHint:
      plan.dataset = fill_shard_hints(dataset, num_workers, worker_index);
      return plan;
    case AutoShardPolicy::kFile:
    case AutoShardPolicy::kAuto:
      break;
  }

  const bool explicit_file = policy == AutoShardPolicy::kFile;
  if (explicit_file && num_workers == 1)
    return plan;  // one worker reads every file: nothing to shard
  SourceSurvey survey = survey_sources(dataset);
  if (survey.unshardable || survey.file_sources.empty()) {
    std::string name = survey.unshardable ? survey.unshardable->name() : dataset->name();
    if (explicit_file) raise(Code::kNotFound, "Found an unshardable source dataset: ", name);
    log_line(LogLevel::kInfo,
             str_cat("auto_shard_policy AUTO applies DATA sharding: FILE sharding is not possible "
                     "because of an unshardable source dataset: ",
                     name));
    plan.applied = AutoShardPolicy::kData;
    return plan;
  }
  if (num_workers == 1) {
    plan.applied = AutoShardPolicy::kFile;  // AUTO over files on one worker: FILE, a no-op
    return plan;
  }
  size_t files = min_file_count(survey);
  if (files < static_cast<size_t>(num_workers)) {
    if (!explicit_file) {
      // [dinput] TF fails at run time here; with AUTO the data is still shardable by DATA.
      log_line(LogLevel::kInfo,
               str_cat("auto_shard_policy AUTO applies DATA sharding: the dataset has only ", files,
                       " file(s) for ", num_workers, " workers"));
      plan.applied = AutoShardPolicy::kData;
      return plan;
    }
    plan.applied = AutoShardPolicy::kFile;
    plan.deferred = Error(
        Code::kInvalidArgument,
        str_cat("Could not apply FILE based sharding: the dataset only has ", files,
                " file(s), which is not enough for the required ", num_workers,
                " shards/workers. If you are using datasets with distribution strategy, consider "
                "setting the auto sharding policy to either DATA or OFF."));
    return plan;
  }
  plan.dataset = shard_files(dataset, num_workers, worker_index);
  plan.applied = AutoShardPolicy::kFile;
  return plan;
}

}  // namespace dinput
