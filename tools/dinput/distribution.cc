#include "distribution.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pipeline_builder.h"
#include "stage_report.h"

namespace dinput_tool {

namespace {

// --policy, then the tool's own check that `run` without --steps terminates.
DatasetPtr finish_dataset(const CliOptions& options, bool require_finite, DatasetPtr dataset) {
  if (options.has_policy) {
    dinput_options_t* raw = nullptr;
    check(dinput_options_new(&raw), "dinput_options_new");
    OptionsPtr dataset_options(raw);
    check(dinput_options_set_auto_shard_policy(dataset_options.get(), options.policy),
          "dinput_options_set_auto_shard_policy");
    dinput_dataset_t* made = nullptr;
    check(dinput_dataset_with_options(&made, dataset.get(), dataset_options.get()),
          "dinput_dataset_with_options");
    dataset.reset(made);
  }
  if (!options.trace_file.empty()) {  // bench --trace: every stage's slices
    dinput_options_t* raw = nullptr;
    check(dinput_options_new(&raw), "dinput_options_new");
    OptionsPtr dataset_options(raw);
    check(dinput_options_set_trace(dataset_options.get(), kTraceEvents),
          "dinput_options_set_trace");
    dinput_dataset_t* made = nullptr;
    check(dinput_dataset_with_options(&made, dataset.get(), dataset_options.get()),
          "dinput_dataset_with_options");
    dataset.reset(made);
  }
  if (require_finite && dinput_dataset_cardinality(dataset.get()) == DINPUT_INFINITE_CARDINALITY) {
    throw invalid_argument("the pipeline is infinite; pass --steps K to stop after K steps");
  }
  return dataset;
}

struct FunctionModeData {
  const Pipeline* pipeline;
  const CliOptions* options;
  bool require_finite;
};

// The dataset_fn of --from-function: the template with this input pipeline's values.
dinput_status_t dataset_fn(dinput_dataset_t** out, const dinput_input_context_t* context,
                           void* user_data) {
  return call_from_library([&] {
    const FunctionModeData& data = *static_cast<const FunctionModeData*>(user_data);
    InputPipelineInfo info;
    info.num_input_pipelines = dinput_input_context_num_input_pipelines(context);
    info.input_pipeline_id = dinput_input_context_input_pipeline_id(context);
    info.num_replicas_in_sync = dinput_input_context_num_replicas_in_sync(context);
    info.per_replica_batch_size = [context](int64_t global) {
      int64_t result = 0;
      check(dinput_input_context_get_per_replica_batch_size(&result, context, global),
            "get_per_replica_batch_size");
      return result;
    };
    Pipeline resolved = resolve_placeholders(*data.pipeline, info);
    if (info.num_input_pipelines > 1)  // each input pipeline caches to its own file
      resolved =
          with_worker_cache_files(resolved, info.input_pipeline_id, info.num_input_pipelines);
    *out = finish_dataset(*data.options, data.require_finite, build_dataset(resolved)).release();
  });
}

// world_size: the number of workers in the job (1: no collective).
StrategyPtr make_strategy(const CliOptions& options, int world_size,
                          dinput_collective_t* collective, int worker) {
  std::vector<std::string> names = options.devices;
  if (world_size == 1 && options.replicas > 0) {
    for (int i = 0; i < options.replicas; ++i) names.push_back("CPU:" + std::to_string(i));
  }
  std::vector<const char*> devices;
  for (const std::string& name : names) devices.push_back(name.c_str());
  dinput_strategy_t* made = nullptr;
  dinput_status_t code;
  if (world_size == 1) {
    code = dinput_strategy_new(&made, devices.data(), static_cast<int>(devices.size()));
  } else if (options.replicas > 0) {
    // The library checks that the total divides among the workers.
    code = dinput_strategy_new_multi_worker_cpu(&made, collective, worker, options.replicas);
  } else {
    code = dinput_strategy_new_multi_worker(&made, collective, worker, devices.data(),
                                            static_cast<int>(devices.size()));
  }
  check(code, "creating the strategy");
  return StrategyPtr(made);
}

// Whether the environment names this process's place in a job the way `dinput launch` does.
bool launched_as_worker() {
  for (const char* name : {"DINPUT_RANK", "DINPUT_WORLD_SIZE"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return true;
  }
  return false;
}

// The job this process is one worker of, or null when it runs on its own.
ClusterPtr join_cluster(const CliOptions& options) {
  const JobOptions& job = options.job;
  dinput_cluster_t* made = nullptr;
  if (!job.cluster.empty()) {
    check(dinput_cluster_resolve(&made, job.cluster.c_str()), "resolving --cluster");
    ClusterPtr resolved(made);
    if (job.rdzv.empty()) return resolved;
    // --rdzv replaces the launcher's rendezvous address; rank and world size stay.
    check(dinput_cluster_new(&made, dinput_cluster_rank(resolved.get()),
                             dinput_cluster_world_size(resolved.get()), job.rdzv.c_str()),
          "--rdzv");
    return ClusterPtr(made);
  }
  if (job.has_rank) {
    check(dinput_cluster_new(&made, job.rank, job.world_size, job.rdzv.c_str()),
          "--rank/--world-size/--rdzv");
    return ClusterPtr(made);
  }
  if (launched_as_worker()) {
    if (options.workers != 1) {
      throw invalid_argument(
          "--workers simulates workers in one process, but DINPUT_RANK/DINPUT_WORLD_SIZE make "
          "this process one worker of a job (as 'dinput launch' starts it); drop --workers");
    }
    check(dinput_cluster_resolve(&made, "explicit"), "reading DINPUT_RANK and DINPUT_WORLD_SIZE");
    return ClusterPtr(made);
  }
  if (!job.job_id.empty()) {
    throw invalid_argument("--job-id needs a job: give --cluster, or --rank and --world-size");
  }
  return nullptr;
}

void run_worker(const CliOptions& options, const Pipeline& pipeline,
                const dinput_dataset_t* shared_dataset, bool require_finite, int world_size,
                dinput_collective_t* collective, int index, int slot, const WorkerJob& job) {
  const StrategyPtr strategy = make_strategy(options, world_size, collective, index);

  dinput_input_options_t* raw_options = nullptr;
  check(dinput_input_options_new(&raw_options), "dinput_input_options_new");
  InputOptionsPtr input_options(raw_options);
  check(dinput_input_options_set_fetch_to_device(input_options.get(),
                                                 options.fetch_to_device ? 1 : 0),
        "dinput_input_options_set_fetch_to_device");

  // Workers read different data (FILE sharding), so a cache file is per worker: this worker
  // builds its own dataset then (docs/cli.md, "Several workers").
  DatasetPtr own;
  if (!options.from_function && world_size > 1) {
    bool caches = false;
    Pipeline renamed = with_worker_cache_files(pipeline, index, world_size, &caches);
    if (caches) {
      own = finish_dataset(options, require_finite, build_dataset(renamed));
      shared_dataset = own.get();
    }
  }

  dinput_dist_dataset_t* made = nullptr;
  dinput_status_t code;
  if (options.from_function) {
    // Lives on this frame: the library calls dataset_fn only from within this call.
    FunctionModeData data{&pipeline, &options, require_finite};
    code = dinput_strategy_distribute_datasets_from_function(&made, strategy.get(), dataset_fn,
                                                             &data, nullptr, input_options.get());
  } else {
    code = dinput_strategy_distribute_dataset(&made, strategy.get(), shared_dataset,
                                              input_options.get());
  }
  check(code, "distributing the dataset");
  DistDatasetPtr dist(made);

  Worker worker;
  worker.index = index;
  worker.slot = slot;
  worker.strategy = strategy.get();
  worker.dataset = dist.get();
  job(worker);
}

// This process as worker `rank` of the cluster's job: it meets the others through the
// rendezvous, and a failure here aborts the job's collective so that the others stop at once
// instead of waiting out the timeout.
void run_job_worker(const CliOptions& options, const Pipeline& pipeline,
                    const dinput_dataset_t* shared_dataset, bool require_finite,
                    const dinput_cluster_t* cluster, const WorkerJob& job) {
  const int world_size = dinput_cluster_world_size(cluster);
  const int rank = dinput_cluster_rank(cluster);
  if (world_size == 1 && dinput_cluster_is_input_worker(cluster)) {
    run_worker(options, pipeline, shared_dataset, require_finite, 1, nullptr, 0, 0, job);
    return;
  }
  dinput_collective_options_t* made_options = nullptr;
  check(dinput_collective_options_new(&made_options), "dinput_collective_options_new");
  const CollectiveOptionsPtr collective_options(made_options);
  if (options.timeout_ms != 0) {
    check(dinput_collective_options_set_timeout_ms(collective_options.get(), options.timeout_ms),
          "--timeout-ms");
  }
  if (!options.job.job_id.empty()) {
    check(
        dinput_collective_options_set_job_id(collective_options.get(), options.job.job_id.c_str()),
        "--job-id");
  }
  dinput_collective_t* raw = nullptr;
  check(dinput_collective_new_from_cluster(&raw, cluster, collective_options.get()),
        "joining the job");
  CollectivePtr collective(raw);
  try {
    run_worker(options, pipeline, shared_dataset, require_finite, world_size, collective.get(),
               rank, 0, job);
  } catch (...) {
    const Failure failure = current_failure();
    dinput_collective_abort(collective.get(), failure.code(), failure.message().c_str());
    throw failure;
  }
}

}  // namespace

bool joins_job(const CliOptions& options) { return options.job.given() || launched_as_worker(); }

int local_workers(const CliOptions& options) { return joins_job(options) ? 1 : options.workers; }

void exit_with_error(const Failure& failure) {
  // Only the first failing worker reports; the others block here until the process ends.
  static std::mutex mutex;
  mutex.lock();
  std::string line = failure.line() + "\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  _exit(1);
}

void for_each_worker(const CliOptions& options, const Pipeline& pipeline, bool require_finite,
                     const WorkerJob& job) {
  check_placeholders(pipeline, options.from_function);
  // Outside --from-function every worker distributes the same (immutable) dataset; building
  // it first also reports pipeline errors before any strategy exists.
  DatasetPtr dataset;
  if (!options.from_function) {
    dataset = finish_dataset(options, require_finite, build_dataset(pipeline));
  }
  if (const ClusterPtr cluster = join_cluster(options)) {
    run_job_worker(options, pipeline, dataset.get(), require_finite, cluster.get(), job);
    return;
  }
  if (options.workers == 1) {
    run_worker(options, pipeline, dataset.get(), require_finite, 1, nullptr, 0, 0, job);
    return;
  }

  dinput_collective_t* raw = nullptr;
  check(dinput_collective_new_in_process(&raw, options.workers, options.timeout_ms),
        "dinput_collective_new_in_process");
  CollectivePtr collective(raw);
  // The first worker to fail keeps its error and aborts the collective, which releases the
  // others from their waits at once; every thread is then joined normally.
  std::mutex first_failure_mutex;
  std::optional<Failure> first_failure;
  auto fail = [&](const Failure& failure) {
    std::lock_guard<std::mutex> lock(first_failure_mutex);
    if (first_failure) return;
    first_failure = failure;
    dinput_collective_abort(collective.get(), failure.code(), failure.message().c_str());
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < options.workers; ++w) {
    // Started workers may already wait for this one in the collective, so a thread that
    // cannot be created ends the process rather than unwinding past joinable threads.
    try {
      threads.emplace_back([&, w]() {
        // A worker's failure goes to the thread that started it, which throws it once every
        // worker has ended.
        try {
          run_worker(options, pipeline, dataset.get(), require_finite, options.workers,
                     collective.get(), w, w, job);
        } catch (...) {
          fail(current_failure());
        }
      });
    } catch (...) {
      exit_with_error(current_failure());
    }
  }
  for (std::thread& t : threads) t.join();
  if (first_failure) throw *first_failure;
}

DistIteratorPtr new_iterator(const dinput_dist_dataset_t* dataset) {
  dinput_dist_iterator_t* made = nullptr;
  check(dinput_dist_dataset_iterator(&made, dataset), "dinput_dist_dataset_iterator");
  return DistIteratorPtr(made);
}

PerReplicaPtr Stepper::next() {
  dinput_per_replica_t* value = nullptr;
  if (use_optional_) {
    dinput_optional_t* raw = nullptr;
    check(dinput_dist_iterator_get_next_as_optional(&raw, iterator_), "get_next_as_optional");
    OptionalPtr optional(raw);
    if (!dinput_optional_has_value(optional.get())) return nullptr;
    check(dinput_optional_get_per_replica(&value, optional.get()),
          "dinput_optional_get_per_replica");
  } else {
    dinput_status_t code = dinput_dist_iterator_get_next(&value, iterator_);
    if (code == DINPUT_OUT_OF_RANGE) return nullptr;
    check(code, "get_next");
  }
  if (value == nullptr) {
    throw Failure(DINPUT_INTERNAL, "the library returned no value for a step");
  }
  return PerReplicaPtr(value);
}

}  // namespace dinput_tool
