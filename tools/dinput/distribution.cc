#include "distribution.h"

#include <unistd.h>

#include <cstdio>
#include <exception>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "pipeline_builder.h"

namespace dinput_tool {

namespace {

// Status for an exception escaping a job: the tool must never crash on bad input or a
// failed allocation, and no exception may unwind through the library's callback frames.
Status from_exception() {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return Status{DINPUT_RESOURCE_EXHAUSTED, "out of memory"};
  } catch (const std::exception &e) {
    return Status{DINPUT_INTERNAL, e.what()};
  } catch (...) {
    return Status{DINPUT_INTERNAL, "unexpected exception"};
  }
}

// --policy, then the tool's own check that `run` without --steps terminates.
Status finish_dataset(const CliOptions &options, bool require_finite, DatasetPtr *dataset) {
  if (options.has_policy) {
    dinput_options_t *raw = nullptr;
    dinput_status_t code = dinput_options_new(&raw);
    if (code != DINPUT_OK) return library_error(code, "dinput_options_new");
    OptionsPtr dataset_options(raw);
    code = dinput_options_set_auto_shard_policy(dataset_options.get(), options.policy);
    if (code != DINPUT_OK) return library_error(code, "dinput_options_set_auto_shard_policy");
    dinput_dataset_t *made = nullptr;
    code = dinput_dataset_with_options(&made, dataset->get(), dataset_options.get());
    if (code != DINPUT_OK) return library_error(code, "dinput_dataset_with_options");
    dataset->reset(made);
  }
  if (require_finite && dinput_dataset_cardinality(dataset->get()) == DINPUT_INFINITE_CARDINALITY) {
    return invalid_argument("the pipeline is infinite; pass --steps K to stop after K steps");
  }
  return ok_status();
}

struct FunctionModeData {
  const Pipeline *pipeline;
  const CliOptions *options;
  bool require_finite;
};

// The dataset_fn of --from-function: the template with this input pipeline's values.
dinput_status_t dataset_fn(dinput_dataset_t **out, const dinput_input_context_t *context,
                          void *user_data) {
  try {
    const FunctionModeData &data = *static_cast<const FunctionModeData *>(user_data);
    InputPipelineInfo info;
    info.num_input_pipelines = dinput_input_context_num_input_pipelines(context);
    info.input_pipeline_id = dinput_input_context_input_pipeline_id(context);
    info.num_replicas_in_sync = dinput_input_context_num_replicas_in_sync(context);
    info.per_replica_batch_size = [context](int64_t global, int64_t *result) {
      dinput_status_t code =
          dinput_input_context_get_per_replica_batch_size(result, context, global);
      if (code != DINPUT_OK) return library_error(code, "get_per_replica_batch_size");
      return ok_status();
    };
    Pipeline resolved;
    Status status = resolve_placeholders(*data.pipeline, info, &resolved);
    DatasetPtr dataset;
    if (status.ok()) status = build_dataset(resolved, &dataset);
    if (status.ok()) status = finish_dataset(*data.options, data.require_finite, &dataset);
    if (!status.ok()) return report_to_library(status);
    *out = dataset.release();
    return DINPUT_OK;
  } catch (...) {
    return report_to_library(from_exception());
  }
}

Status make_strategy(const CliOptions &options, dinput_collective_t *collective, int worker,
                    StrategyPtr *out) {
  std::vector<std::string> names = options.devices;
  if (options.workers == 1 && options.replicas > 0) {
    for (int i = 0; i < options.replicas; ++i) names.push_back("CPU:" + std::to_string(i));
  }
  std::vector<const char *> devices;
  for (const std::string &name : names) devices.push_back(name.c_str());
  dinput_strategy_t *made = nullptr;
  dinput_status_t code;
  if (options.workers == 1) {
    code = dinput_strategy_new(&made, devices.data(), static_cast<int>(devices.size()));
  } else if (options.replicas > 0) {
    // The library checks that the total divides among the workers.
    code = dinput_strategy_new_multi_worker_cpu(&made, collective, worker, options.replicas);
  } else {
    code =
        dinput_strategy_new_multi_worker(&made, collective, worker, devices.data(),
                                         static_cast<int>(devices.size()));
  }
  if (code != DINPUT_OK) return library_error(code, "creating the strategy");
  out->reset(made);
  return ok_status();
}

Status run_worker(const CliOptions &options, const Pipeline &pipeline,
                 const dinput_dataset_t *shared_dataset, bool require_finite,
                 dinput_collective_t *collective, int index, const WorkerJob &job) {
  StrategyPtr strategy;
  DINPUT_TOOL_RETURN_IF_ERROR(make_strategy(options, collective, index, &strategy));

  dinput_input_options_t *raw_options = nullptr;
  dinput_status_t code = dinput_input_options_new(&raw_options);
  if (code != DINPUT_OK) return library_error(code, "dinput_input_options_new");
  InputOptionsPtr input_options(raw_options);
  code = dinput_input_options_set_fetch_to_device(input_options.get(),
                                                  options.fetch_to_device ? 1 : 0);
  if (code != DINPUT_OK) return library_error(code, "dinput_input_options_set_fetch_to_device");

  dinput_dist_dataset_t *made = nullptr;
  if (options.from_function) {
    // Lives on this frame: the library calls dataset_fn only from within this call.
    FunctionModeData data{&pipeline, &options, require_finite};
    code = dinput_strategy_distribute_datasets_from_function(&made, strategy.get(), dataset_fn,
                                                             &data, nullptr, input_options.get());
  } else {
    code = dinput_strategy_distribute_dataset(&made, strategy.get(), shared_dataset,
                                              input_options.get());
  }
  if (code != DINPUT_OK) return library_error(code, "distributing the dataset");
  DistDatasetPtr dist(made);

  Worker worker;
  worker.index = index;
  worker.strategy = strategy.get();
  worker.dataset = dist.get();
  return job(worker);
}

}  // namespace

void exit_with_error(const Status &status) {
  // Only the first failing worker reports; the others block here until the process ends.
  static std::mutex mutex;
  mutex.lock();
  std::string line = status.line() + "\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  _exit(1);
}

Status for_each_worker(const CliOptions &options, const Pipeline &pipeline, bool require_finite,
                     const WorkerJob &job) {
  DINPUT_TOOL_RETURN_IF_ERROR(check_placeholders(pipeline, options.from_function));
  // Outside --from-function every worker distributes the same (immutable) dataset; building
  // it first also reports pipeline errors before any strategy exists.
  DatasetPtr dataset;
  if (!options.from_function) {
    DINPUT_TOOL_RETURN_IF_ERROR(build_dataset(pipeline, &dataset));
    DINPUT_TOOL_RETURN_IF_ERROR(finish_dataset(options, require_finite, &dataset));
  }
  if (options.workers == 1) {
    try {
      return run_worker(options, pipeline, dataset.get(), require_finite, nullptr, 0, job);
    } catch (...) {
      return from_exception();
    }
  }

  dinput_collective_t *raw = nullptr;
  dinput_status_t code =
      dinput_collective_new_in_process(&raw, options.workers, options.timeout_ms);
  if (code != DINPUT_OK) return library_error(code, "dinput_collective_new_in_process");
  CollectivePtr collective(raw);
  // The first worker to fail keeps its error and aborts the collective, which releases the
  // others from their waits at once; every thread is then joined normally.
  std::mutex first_error_mutex;
  Status first_error;
  auto fail = [&](const Status &status) {
    std::lock_guard<std::mutex> lock(first_error_mutex);
    if (!first_error.ok()) return;
    first_error = status;
    dinput_collective_abort(collective.get(), status.code, status.message.c_str());
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < options.workers; ++w) {
    // Started workers may already wait for this one in the collective, so a thread that
    // cannot be created ends the process rather than unwinding past joinable threads.
    try {
      threads.emplace_back([&, w]() {
        Status status;
        try {
          status =
              run_worker(options, pipeline, dataset.get(), require_finite, collective.get(), w, job);
        } catch (...) {
          status = from_exception();
        }
        if (!status.ok()) fail(status);
      });
    } catch (...) {
      exit_with_error(from_exception());
    }
  }
  for (std::thread &t : threads) t.join();
  return first_error;
}

Status new_iterator(const dinput_dist_dataset_t *dataset, DistIteratorPtr *out) {
  dinput_dist_iterator_t *made = nullptr;
  dinput_status_t code = dinput_dist_dataset_iterator(&made, dataset);
  if (code != DINPUT_OK) return library_error(code, "dinput_dist_dataset_iterator");
  out->reset(made);
  return ok_status();
}

Status Stepper::next(PerReplicaPtr *out) {
  out->reset();
  dinput_per_replica_t *value = nullptr;
  if (use_optional_) {
    dinput_optional_t *raw = nullptr;
    dinput_status_t code = dinput_dist_iterator_get_next_as_optional(&raw, iterator_);
    if (code != DINPUT_OK) return library_error(code, "get_next_as_optional");
    OptionalPtr optional(raw);
    if (!dinput_optional_has_value(optional.get())) return ok_status();
    code = dinput_optional_get_per_replica(&value, optional.get());
    if (code != DINPUT_OK) return library_error(code, "dinput_optional_get_per_replica");
  } else {
    dinput_status_t code = dinput_dist_iterator_get_next(&value, iterator_);
    if (code == DINPUT_OUT_OF_RANGE) return ok_status();
    if (code != DINPUT_OK) return library_error(code, "get_next");
  }
  if (value == nullptr) {
    return Status{DINPUT_INTERNAL, "the library returned no value for a step"};
  }
  out->reset(value);
  return ok_status();
}

}  // namespace dinput_tool
