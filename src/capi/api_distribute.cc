// Collectives, strategies, input options, distributed datasets and iterators, per-replica
// values, run and reduce.
#include <utility>

#include "capi/callbacks.h"
#include "capi/collective_handle.h"
#include "capi/dist_handles.h"
#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/host_tensors.h"
#include "capi/in_use.h"
#include "capi/tensor_info.h"
#include "collective/in_process.h"
#include "distribute/dist_dataset.h"
#include "distribute/replica_ops.h"

using namespace dinput;

struct dinput_strategy {
  std::shared_ptr<const Strategy> strategy;
};
struct dinput_input_options {
  dinput_input_options() = default;
  InputOptions options;
  capi::FreezeMark frozen;  // set by the first distribution that used it
};
struct dinput_input_context {
  InputContext ctx;
};
struct dinput_value_context {
  ReplicaContext ctx;
};
struct dinput_replica_context {
  ReplicaContext ctx;
};

namespace {

std::vector<std::string> device_names(const char* fn, const char* const* devices, int n) {
  if (n < 0) raise(Code::kInvalidArgument, fn, ": num_devices must be >= 0, got ", n);
  if (n > 0 && !devices) raise(Code::kInvalidArgument, fn, ": argument 'devices' is NULL");
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    if (!devices[i]) raise(Code::kInvalidArgument, fn, ": devices[", i, "] is NULL");
    names.emplace_back(devices[i]);
  }
  return names;
}

// The next step for get_next and get_next_as_optional; see capi::next_element.
bool next_step(DistributedIterator& it, std::vector<Element>& step) {
  return capi::next_element(
      "dinput_dist_iterator_cancel", [&] { return it.cancelled(); }, [&] { return it.next(step); });
}

// Raises (once) the failure a get_next_steps call met after the steps it returned.
void raise_pending(dinput_dist_iterator& it) {
  if (it.pending) std::rethrow_exception(std::exchange(it.pending, nullptr));
}

const InputOptions& options_or_default(const dinput_input_options_t* o) {
  static const InputOptions kDefaults;
  return o ? o->options : kDefaults;
}

}  // namespace

extern "C" {

// ---- collectives and strategies ----

DINPUT_API dinput_status_t dinput_collective_new_in_process(dinput_collective_t** out,
                                                            int num_workers, int64_t timeout_ms) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_collective>(make_in_process_collective(num_workers, timeout_ms));
  });
}

DINPUT_API void dinput_collective_free(dinput_collective_t* c) { capi::free_handle(c); }

DINPUT_API dinput_status_t dinput_collective_abort(dinput_collective_t* c, dinput_status_t code,
                                                   const char* message) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(c);
    DINPUT_CHECK_ARG(code != DINPUT_OK,
                     "dinput_collective_abort: code must be a failure status, not DINPUT_OK");
    // The peers' get_next would report OUT_OF_RANGE, which reads as end of data.
    DINPUT_CHECK_ARG(code != DINPUT_OUT_OF_RANGE,
                     "dinput_collective_abort: code must not be DINPUT_OUT_OF_RANGE, which "
                     "get_next reports as end of data");
    c->collective->abort(
        Error(capi::to_code(code), message ? message : "the collective was aborted"));
  });
}

DINPUT_API int dinput_collective_num_workers(const dinput_collective_t* c) {
  return c ? c->collective->num_workers() : 0;
}

DINPUT_API dinput_status_t dinput_strategy_new(dinput_strategy_t** out, const char* const* devices,
                                               int num_devices) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_strategy>(
        make_strategy(device_names(capi::current_function(), devices, num_devices), nullptr, 0));
  });
}

DINPUT_API dinput_status_t dinput_strategy_new_multi_worker(dinput_strategy_t** out,
                                                            dinput_collective_t* collective,
                                                            int worker_index,
                                                            const char* const* devices,
                                                            int num_devices) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(collective);
    *out = capi::new_handle<dinput_strategy>(
        make_strategy(device_names(capi::current_function(), devices, num_devices),
                      collective->collective, worker_index));
  });
}

DINPUT_API dinput_status_t dinput_strategy_new_multi_worker_cpu(dinput_strategy_t** out,
                                                                dinput_collective_t* collective,
                                                                int worker_index,
                                                                int num_replicas_in_sync) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(collective);
    const int W = collective->collective->num_workers();
    DINPUT_CHECK_ARG(num_replicas_in_sync >= 1, "num_replicas_in_sync must be >= 1, got ",
                     num_replicas_in_sync);
    if (num_replicas_in_sync % W != 0)
      raise(Code::kInvalidArgument,
            "tf.distribute expects every worker to have the same number of replicas: ",
            num_replicas_in_sync, " replicas cannot be split evenly over ", W, " workers");
    check_strategy_size(W, num_replicas_in_sync / W);  // before building the names
    std::vector<std::string> names;
    for (int r = 0; r < num_replicas_in_sync / W; ++r) names.push_back("CPU:" + std::to_string(r));
    *out = capi::new_handle<dinput_strategy>(
        make_strategy(names, collective->collective, worker_index));
  });
}

DINPUT_API void dinput_strategy_free(dinput_strategy_t* s) { capi::free_handle(s); }
DINPUT_API int dinput_strategy_num_replicas_in_sync(const dinput_strategy_t* s) {
  return s ? s->strategy->num_replicas_in_sync() : 0;
}
DINPUT_API int dinput_strategy_num_local_replicas(const dinput_strategy_t* s) {
  return s ? s->strategy->num_local_replicas() : 0;
}
DINPUT_API int dinput_strategy_num_workers(const dinput_strategy_t* s) {
  return s ? s->strategy->num_workers() : 0;
}
DINPUT_API int dinput_strategy_worker_index(const dinput_strategy_t* s) {
  return s ? s->strategy->worker_index() : 0;
}
DINPUT_API const char* dinput_strategy_device(const dinput_strategy_t* s, int i) {
  if (!s || i < 0 || i >= s->strategy->num_local_replicas()) return nullptr;
  return s->strategy->device_names()[static_cast<size_t>(i)].c_str();
}

// ---- input options ----

DINPUT_API dinput_status_t dinput_input_options_new(dinput_input_options_t** out) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_input_options>();
  });
}
DINPUT_API void dinput_input_options_free(dinput_input_options_t* o) { capi::free_handle(o); }
DINPUT_API dinput_status_t dinput_input_options_set_fetch_to_device(dinput_input_options_t* o,
                                                                    int enable) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(o);
    o->frozen.check_mutable("input options");
    o->options.fetch_to_device = enable != 0;
  });
}
DINPUT_API dinput_status_t dinput_input_options_set_replication_mode(
    dinput_input_options_t* o, dinput_replication_mode_t mode) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(o);
    o->frozen.check_mutable("input options");
    DINPUT_CHECK_ARG(
        mode == DINPUT_REPLICATION_PER_WORKER || mode == DINPUT_REPLICATION_PER_REPLICA,
        "dinput_input_options_set_replication_mode: invalid mode ", static_cast<int>(mode));
    o->options.replication_mode = static_cast<ReplicationMode>(mode);
  });
}
DINPUT_API dinput_status_t
dinput_input_options_set_place_dataset_on_device(dinput_input_options_t* o, int enable) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(o);
    o->frozen.check_mutable("input options");
    o->options.place_dataset_on_device = enable != 0;
  });
}
DINPUT_API dinput_status_t
dinput_input_options_set_per_replica_buffer_size(dinput_input_options_t* o, int64_t size) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(o);
    o->frozen.check_mutable("input options");
    DINPUT_CHECK_ARG(size >= 0,
                     "dinput_input_options_set_per_replica_buffer_size: size must be >= 0, got ",
                     size);
    o->options.per_replica_buffer_size = size;
  });
}
DINPUT_API int dinput_input_options_fetch_to_device(const dinput_input_options_t* o) {
  return options_or_default(o).fetch_to_device ? 1 : 0;
}
DINPUT_API dinput_replication_mode_t
dinput_input_options_replication_mode(const dinput_input_options_t* o) {
  return static_cast<dinput_replication_mode_t>(options_or_default(o).replication_mode);
}
DINPUT_API int dinput_input_options_place_dataset_on_device(const dinput_input_options_t* o) {
  return options_or_default(o).place_dataset_on_device ? 1 : 0;
}
DINPUT_API int64_t dinput_input_options_per_replica_buffer_size(const dinput_input_options_t* o) {
  return options_or_default(o).per_replica_buffer_size;
}

// ---- distributed datasets ----

DINPUT_API dinput_status_t dinput_strategy_distribute_dataset(
    dinput_dist_dataset_t** out, const dinput_strategy_t* strategy, const dinput_dataset_t* dataset,
    const dinput_input_options_t* options) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(strategy);
    DINPUT_REQUIRE(dataset);
    *out = capi::new_handle<dinput_dist_dataset>(
        distribute_dataset(strategy->strategy, dataset->ds, options_or_default(options)));
    if (options) options->frozen.freeze("dinput_strategy_distribute_dataset");
  });
}

DINPUT_API dinput_status_t dinput_strategy_distribute_datasets_from_function(
    dinput_dist_dataset_t** out, const dinput_strategy_t* strategy, dinput_dataset_fn fn,
    void* user_data, dinput_free_fn free_user_data, const dinput_input_options_t* options) {
  // dataset_fn is only called during this call, so user_data is released before it returns.
  capi::UserData owned(user_data, free_user_data);
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(strategy);
    DINPUT_REQUIRE(fn);
    DatasetFn call = [&](const InputContext& ctx) {
      dinput_input_context handle{ctx};
      dinput_dataset_t* produced = nullptr;
      capi::CallbackScope scope;
      dinput_status_t st = fn(&produced, &handle, owned.get());
      std::unique_ptr<dinput_dataset> taken(produced);
      capi::check_callback(st, "dataset_fn");
      if (!taken) raise(Code::kInvalidArgument, "dataset_fn returned DINPUT_OK without a dataset");
      return taken->ds;
    };
    *out = capi::new_handle<dinput_dist_dataset>(
        distribute_datasets_from_function(strategy->strategy, call, options_or_default(options)));
    if (options) options->frozen.freeze("dinput_strategy_distribute_datasets_from_function");
  });
}

DINPUT_API int dinput_input_context_num_input_pipelines(const dinput_input_context_t* c) {
  return c ? c->ctx.num_input_pipelines : 0;
}
DINPUT_API int dinput_input_context_input_pipeline_id(const dinput_input_context_t* c) {
  return c ? c->ctx.input_pipeline_id : 0;
}
DINPUT_API int dinput_input_context_num_replicas_in_sync(const dinput_input_context_t* c) {
  return c ? c->ctx.num_replicas_in_sync : 0;
}
DINPUT_API dinput_status_t dinput_input_context_get_per_replica_batch_size(
    int64_t* out, const dinput_input_context_t* c, int64_t global_batch_size) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(out);
    *out = 0;
    DINPUT_REQUIRE(c);
    *out = c->ctx.per_replica_batch_size(global_batch_size);
  });
}

DINPUT_API void dinput_dist_dataset_free(dinput_dist_dataset_t* d) { capi::free_handle(d); }

DINPUT_API const char* dinput_dist_dataset_plan(const dinput_dist_dataset_t* d) {
  return d ? d->dataset->plan().description.c_str() : "";
}

DINPUT_API dinput_status_t dinput_dist_dataset_element_spec(dinput_spec_t** out,
                                                            const dinput_dist_dataset_t* d) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(d);
    *out = capi::new_handle<dinput_spec>(d->dataset->element_spec());
  });
}

DINPUT_API dinput_status_t dinput_dist_dataset_iterator(dinput_dist_iterator_t** out,
                                                        const dinput_dist_dataset_t* d) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(d);
    *out = capi::new_handle<dinput_dist_iterator>(std::make_unique<DistributedIterator>(d->dataset),
                                                  capi::InUseFlag{});
  });
}

DINPUT_API void dinput_dist_iterator_free(dinput_dist_iterator_t* it) {
  if (!it) return;
  std::unique_ptr<dinput_dist_iterator> owned(it);
  if (owned->it->finished()) return;  // no threads left to wait for
  capi::guard_value(0, [&] {
    // Mid-epoch: the other workers could never complete another step with this one gone,
    // so they fail now instead of timing out; this worker's threads stop waiting, and
    // those inside callbacks finish them elsewhere.
    owned->it->cancel();
    dispose(std::move(owned));
    return 0;
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_cancel(dinput_dist_iterator_t* it) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(it);
    it->it->cancel();
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_get_next(dinput_per_replica_t** out,
                                                         dinput_dist_iterator_t* it) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(it);
    capi::InUseScope busy(it->in_use, "dinput_dist_iterator_get_next");
    raise_pending(*it);
    // The storage of a value freed since (capi/step_pool.h): its replicas' element vectors
    // go into the step, where the iterator cuts the pieces into them.
    std::unique_ptr<dinput_per_replica> value = it->pool->take();
    if (!value) value = std::make_unique<dinput_per_replica>();
    if (!next_step(*it->it, value->replicas)) raise(Code::kOutOfRange, "End of sequence");
    value->pool = it->pool.get();
    *out = value.release();
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_get_next_as_optional(dinput_optional_t** out,
                                                                     dinput_dist_iterator_t* it) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(it);
    capi::InUseScope busy(it->in_use, "dinput_dist_iterator_get_next_as_optional");
    raise_pending(*it);
    std::vector<Element> step;
    dinput_optional opt;
    if (next_step(*it->it, step)) opt.per_replica = dinput_per_replica{std::move(step)};
    *out = capi::new_handle<dinput_optional>(std::move(opt));
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_get_next_steps(
    size_t* num_steps, dinput_per_replica_t** steps, dinput_tensor_info_t* infos, size_t max_steps,
    size_t infos_per_step, dinput_dist_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(num_steps);
    *num_steps = 0;
    DINPUT_REQUIRE(steps);
    DINPUT_REQUIRE(iterator);
    dinput_dist_iterator& it = *iterator;
    DINPUT_CHECK_ARG(max_steps > 0,
                     "dinput_dist_iterator_get_next_steps: argument 'max_steps' is 0");
    if (infos) {
      // Checked before any step is taken, so that no step is taken and then refused.
      const DistributedDataset& d = it.it->dataset();
      const size_t replicas = static_cast<size_t>(d.strategy().num_local_replicas());
      const size_t components = d.element_spec().size();
      if (infos_per_step < replicas * components)
        raise(Code::kInvalidArgument,
              "dinput_dist_iterator_get_next_steps: argument 'infos_per_step' is ", infos_per_step,
              ", but a step has ", replicas * components, " tensors (", replicas, " replicas of ",
              components, " components)");
    }
    capi::InUseScope busy(it.in_use, "dinput_dist_iterator_get_next_steps");
    raise_pending(it);
    size_t taken = 0;
    try {
      for (; taken < max_steps; ++taken) {
        std::vector<Element> step;
        if (!next_step(*it.it, step)) break;
        std::unique_ptr<dinput_per_replica> made(
            capi::new_handle<dinput_per_replica>(std::move(step)));
        if (infos)
          capi::per_replica_tensor_infos(infos + taken * infos_per_step, infos_per_step, *made);
        steps[taken] = made.release();
      }
    } catch (...) {
      if (taken == 0) throw;
      // The steps taken are the caller's; the failure waits for the next call.
      it.pending = std::current_exception();
    }
    if (taken == 0) raise(Code::kOutOfRange, "End of sequence");
    *num_steps = taken;
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_element_spec(dinput_spec_t** out,
                                                             const dinput_dist_iterator_t* it) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(it);
    *out = capi::new_handle<dinput_spec>(it->it->dataset().element_spec());
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_statistic(int64_t* out,
                                                          const dinput_dist_iterator_t* it,
                                                          const char* name) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(out);
    *out = 0;
    DINPUT_REQUIRE(it);
    DINPUT_REQUIRE(name);
    *out = read_statistic(it->it->stats(), name);
  });
}

DINPUT_API dinput_status_t dinput_optional_get_per_replica(dinput_per_replica_t** out,
                                                           const dinput_optional_t* optional) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(optional);
    if (optional->element)
      raise(Code::kInvalidArgument,
            "dinput_optional_get_per_replica: the optional holds an element; use "
            "dinput_optional_get_value");
    if (!optional->per_replica)
      raise(Code::kInvalidArgument,
            "dinput_optional_get_per_replica: the optional is empty (no value)");
    *out = capi::new_handle<dinput_per_replica>(*optional->per_replica);
  });
}

// ---- per-replica values ----

DINPUT_API void dinput_per_replica_free(dinput_per_replica_t* v) {
  std::unique_ptr<dinput_per_replica> owned(v);
  if (!owned || !owned->pool) return;
  capi::StepPool* pool = owned->pool;  // lives on after its iterator (capi/step_pool.h)
  pool->give(std::move(owned));
}

DINPUT_API dinput_status_t dinput_per_replica_ref(dinput_per_replica_t** out,
                                                  const dinput_per_replica_t* value) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(value);
    *out = capi::new_handle<dinput_per_replica>(*value);
  });
}
// Replica counts are int in the C API; a value holds at most a strategy's local replicas
// (4096), so the size always fits.
DINPUT_API int dinput_per_replica_size(const dinput_per_replica_t* v) {
  return v ? static_cast<int>(v->replicas.size()) : 0;
}
DINPUT_API const dinput_element_t* dinput_per_replica_get(const dinput_per_replica_t* v, int i) {
  return v && i >= 0 && static_cast<size_t>(i) < v->replicas.size()
             ? capi::as_handle(v->replicas[static_cast<size_t>(i)])
             : nullptr;
}

DINPUT_API dinput_status_t dinput_per_replica_new(dinput_per_replica_t** out,
                                                  const dinput_element_t* const* elements,
                                                  int count) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_CHECK_ARG(count >= 0 && count <= kMaxLocalReplicas,
                     "dinput_per_replica_new: count must be 0..", kMaxLocalReplicas,
                     " (the most local replicas a strategy has), got ", count);
    if (count > 0) DINPUT_REQUIRE(elements);
    dinput_per_replica pr;
    for (int i = 0; i < count; ++i) {
      if (!elements[i])
        raise(Code::kInvalidArgument, "dinput_per_replica_new: elements[", i, "] is NULL");
      pr.replicas.push_back(elements[i]->parts);
    }
    *out = capi::new_handle<dinput_per_replica>(std::move(pr));
  });
}

DINPUT_API dinput_status_t dinput_strategy_distribute_values_from_function(
    dinput_per_replica_t** out, const dinput_strategy_t* strategy, dinput_value_fn fn,
    void* user_data) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(strategy);
    DINPUT_REQUIRE(fn);
    auto values = distribute_values(*strategy->strategy, [&](const ReplicaContext& ctx) {
      dinput_value_context handle{ctx};
      dinput_element_t* produced = nullptr;
      capi::CallbackScope scope;
      dinput_status_t st = fn(&produced, &handle, user_data);
      if (st != DINPUT_OK) dinput_element_free(produced);
      capi::check_callback(st, "value_fn");
      return capi::take_element(produced, "value_fn");
    });
    *out = capi::new_handle<dinput_per_replica>(std::move(values));
  });
}

DINPUT_API int dinput_value_context_replica_id_in_sync_group(const dinput_value_context_t* c) {
  return c ? c->ctx.replica_id_in_sync_group : 0;
}
DINPUT_API int dinput_value_context_num_replicas_in_sync(const dinput_value_context_t* c) {
  return c ? c->ctx.num_replicas_in_sync : 0;
}

DINPUT_API dinput_status_t dinput_strategy_run(dinput_per_replica_t** out,
                                               const dinput_strategy_t* strategy,
                                               dinput_replica_fn fn,
                                               const dinput_per_replica_t* args, void* user_data) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(strategy);
    DINPUT_REQUIRE(fn);
    auto results = run_on_replicas(
        *strategy->strategy,
        [&](const ReplicaContext& ctx, const Element* replica_args) {
          dinput_replica_context handle{ctx};
          dinput_element arg_handle;
          if (replica_args) arg_handle = capi::to_handle(Element(*replica_args));
          dinput_element_t* produced = nullptr;
          capi::CallbackScope scope;
          dinput_status_t st =
              fn(&produced, &handle, replica_args ? &arg_handle : nullptr, user_data);
          if (st != DINPUT_OK) dinput_element_free(produced);
          capi::check_callback(st, "the replica function (replica_fn)");
          return capi::take_element(produced, "the replica function (replica_fn)");
        },
        args ? &args->replicas : nullptr);
    *out = capi::new_handle<dinput_per_replica>(std::move(results));
  });
}

DINPUT_API int dinput_replica_context_replica_id_in_sync_group(const dinput_replica_context_t* c) {
  return c ? c->ctx.replica_id_in_sync_group : 0;
}
DINPUT_API int dinput_replica_context_num_replicas_in_sync(const dinput_replica_context_t* c) {
  return c ? c->ctx.num_replicas_in_sync : 0;
}
DINPUT_API const char* dinput_replica_context_device(const dinput_replica_context_t* c) {
  return c && c->ctx.device ? c->ctx.device->c_str() : nullptr;
}

DINPUT_API dinput_status_t dinput_strategy_reduce(dinput_element_t** out,
                                                  const dinput_strategy_t* strategy,
                                                  dinput_reduce_op_t op,
                                                  const dinput_per_replica_t* value, int axis) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(strategy);
    DINPUT_REQUIRE(value);
    // reduce takes CUDA tensors itself (NCCL, or copies to the host); only a tensor on a
    // device this process cannot use is refused here, before CUDA or the CPU touches it.
    for (size_t r = 0; r < value->replicas.size(); ++r) {
      const Element& e = value->replicas[r];
      if (!capi::all_on_host(e))
        capi::check_devices(e, capi::current_function(),
                            str_cat("the element of replica ", r, " in argument 'value'").c_str());
    }
    Element result = reduce(*strategy->strategy, static_cast<ReduceOp>(op), value->replicas, axis);
    *out = capi::new_handle<dinput_element>(capi::to_handle(std::move(result)));
  });
}

}  // extern "C"
