#include "distribute/auto_shard.h"

#include "core/log.h"
#include "data/nodes.h"
#include "distribute/graph.h"

namespace dinput {

namespace {

struct SourceSurvey {
  std::vector<const FileSource*> file_sources;
  // Interleaves (or flat_maps) of a built-in reader whose file names come from no file
  // source (from_tensor_slices of names, say): FILE sharding shards their input, the names.
  std::vector<const Dataset*> name_readers;
  const Dataset* unshardable = nullptr;  // the first source that reads no files
};

bool has_file_source(const DatasetPtr& root) {
  bool found = false;
  for_each_node(root, [&](const Dataset& node) {
    found = found || dynamic_cast<const FileSource*>(&node) != nullptr;
  });
  return found;
}

// A reader interleave over names that no file source lists.
bool reads_listed_names(const Dataset& node) {
  return is_reader_interleave(node) && !has_file_source(node.inputs().at(0));
}

void survey(const DatasetPtr& node, SourceSurvey& s) {
  if (reads_listed_names(*node)) {
    s.name_readers.push_back(node.get());
    return;  // the sources below give file names, which are sharded
  }
  for (const auto& in : node->inputs()) survey(in, s);
  if (!node->inputs().empty()) return;
  if (auto* f = dynamic_cast<const FileSource*>(node.get()))
    s.file_sources.push_back(f);
  else if (!s.unshardable)
    s.unshardable = node.get();
}

SourceSurvey survey_sources(const DatasetPtr& root) {
  SourceSurvey s;
  survey(root, s);
  return s;
}

DatasetPtr shard_files(const DatasetPtr& root, int num_workers, int worker_index) {
  return rewrite_graph(root, [&](const DatasetPtr& node) -> DatasetPtr {
    if (reads_listed_names(*node))
      return node->with_inputs({make_shard(node->inputs()[0], num_workers, worker_index)});
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
  for (auto* r : s.name_readers) {
    const int64_t names = r->inputs().at(0)->cardinality();  // unknown or infinite: no limit
    if (names >= 0) n = std::min(n, static_cast<size_t>(names));
  }
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
  if (survey.unshardable || (survey.file_sources.empty() && survey.name_readers.empty())) {
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
