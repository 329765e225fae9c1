// Dataset options, dataset constructors, iterators and optionals.
#include "capi/callbacks.h"
#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/host_tensors.h"
#include "capi/in_use.h"
#include "capi/iterator_handle.h"
#include "capi/transform_options.h"
#include "data/datasets.h"
#include "io/file_sources.h"

using namespace dinput;

namespace {

// The shared tail of every transform: check the input and output, build, hand out.
template <typename Make>
dinput_status_t make_dataset(const char* fn, dinput_dataset_t** out, const dinput_dataset_t* input,
                             Make&& make) {
  return capi::guard(fn, [&] {
    if (!out) raise(Code::kInvalidArgument, fn, ": argument 'out' is NULL");
    *out = nullptr;
    if (!input) raise(Code::kInvalidArgument, fn, ": argument 'input' is NULL");
    *out = capi::new_handle<dinput_dataset>(make(input->ds));
  });
}

dinput_status_t make_source(const char* fn, dinput_dataset_t** out,
                            const std::function<DatasetPtr()>& make) {
  return capi::guard(fn, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_dataset>(make());
  });
}

// The next element for get_next and get_next_as_optional; see capi::next_element.
bool next_element(dinput_iterator& iterator, Element& e) {
  ConsumerCall timing(iterator.pipeline_stats.get());
  return capi::next_element(
      "dinput_iterator_cancel", [&] { return iterator.cancellation->cancelled(); },
      [&] { return iterator.it.next(e); });
}

}  // namespace

extern "C" {

// ---- options ----

DINPUT_API dinput_status_t dinput_options_new(dinput_options_t** out) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = capi::new_handle<dinput_options>();
  });
}

DINPUT_API void dinput_options_free(dinput_options_t* options) { capi::free_handle(options); }

DINPUT_API dinput_status_t dinput_options_set_auto_shard_policy(dinput_options_t* options,
                                                                dinput_auto_shard_policy_t policy) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    int p = static_cast<int>(policy);
    DINPUT_CHECK_ARG(p >= -1 && p <= 3, "dinput_options_set_auto_shard_policy: invalid policy ", p,
                     " (expected OFF=-1, AUTO=0, FILE=1, DATA=2 or HINT=3)");
    options->options.auto_shard_policy = static_cast<AutoShardPolicy>(p);
  });
}

DINPUT_API dinput_auto_shard_policy_t
dinput_options_auto_shard_policy(const dinput_options_t* options) {
  return options ? static_cast<dinput_auto_shard_policy_t>(options->options.policy())
                 : DINPUT_AUTO_SHARD_AUTO;
}

DINPUT_API dinput_status_t dinput_options_set_skip_corrupt_records(dinput_options_t* options,
                                                                   int enable) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    options->options.skip_corrupt_records = enable != 0;
  });
}

DINPUT_API int dinput_options_skip_corrupt_records(const dinput_options_t* options) {
  return options && options->options.skip_corrupt() ? 1 : 0;
}

DINPUT_API dinput_status_t dinput_options_set_max_record_bytes(dinput_options_t* options,
                                                               int64_t max_bytes) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    DINPUT_CHECK_ARG(max_bytes > 0 && max_bytes <= kMaxMaxRecordBytes,
                     "dinput_options_set_max_record_bytes: max_bytes must be 1..",
                     kMaxMaxRecordBytes, ", got ", max_bytes);
    options->options.max_record_bytes = max_bytes;
  });
}

DINPUT_API int64_t dinput_options_max_record_bytes(const dinput_options_t* options) {
  return options ? static_cast<int64_t>(options->options.record_limit()) : kDefaultMaxRecordBytes;
}

DINPUT_API dinput_status_t dinput_options_set_map_files(dinput_options_t* options, int enable) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    options->options.map_files = enable != 0;
  });
}

DINPUT_API int dinput_options_map_files(const dinput_options_t* options) {
  return options && options->options.map() ? 1 : 0;
}

DINPUT_API dinput_status_t dinput_options_set_allow_nonregular_files(dinput_options_t* options,
                                                                     int enable) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    options->options.allow_nonregular_files = enable != 0;
  });
}

DINPUT_API int dinput_options_allow_nonregular_files(const dinput_options_t* options) {
  return options && options->options.allow_nonregular() ? 1 : 0;
}

DINPUT_API dinput_status_t dinput_options_set_deterministic(dinput_options_t* options, int enable) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    options->options.deterministic = enable != 0;
  });
}

DINPUT_API int dinput_options_deterministic(const dinput_options_t* options) {
  return !options || options->options.ordered(std::nullopt) ? 1 : 0;
}

// ---- datasets ----

DINPUT_API void dinput_dataset_free(dinput_dataset_t* dataset) { capi::free_handle(dataset); }

DINPUT_API dinput_status_t dinput_dataset_ref(dinput_dataset_t** out,
                                              const dinput_dataset_t* dataset) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(dataset);
    *out = capi::new_handle<dinput_dataset>(dataset->ds);
  });
}

DINPUT_API int64_t dinput_dataset_cardinality(const dinput_dataset_t* dataset) {
  if (!dataset) return DINPUT_UNKNOWN_CARDINALITY;
  return capi::guard_value<int64_t>(DINPUT_UNKNOWN_CARDINALITY,
                                    [&] { return dataset->ds->cardinality(); });
}

DINPUT_API dinput_status_t dinput_dataset_element_spec(dinput_spec_t** out,
                                                       const dinput_dataset_t* dataset) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(dataset);
    *out = capi::new_handle<dinput_spec>(dataset->ds->element_spec());
  });
}

DINPUT_API const char* dinput_dataset_name(const dinput_dataset_t* dataset) {
  return dataset ? dataset->ds->name() : "";
}

DINPUT_API dinput_status_t dinput_dataset_range(dinput_dataset_t** out, int64_t start, int64_t stop,
                                                int64_t step) {
  return make_source(__func__, out, [&] { return make_range(start, stop, step); });
}

DINPUT_API dinput_status_t dinput_dataset_from_tensors(dinput_dataset_t** out,
                                                       const dinput_element_t* element) {
  return make_source(__func__, out, [&] {
    if (!element)
      raise(Code::kInvalidArgument, "dinput_dataset_from_tensors: argument 'element' is NULL");
    Element e = capi::to_element(*element);
    capi::move_to_host(e, capi::current_function(), "argument 'element'");
    return make_from_tensors(std::move(e));
  });
}

DINPUT_API dinput_status_t dinput_dataset_from_tensor_slices(dinput_dataset_t** out,
                                                             const dinput_element_t* element) {
  return make_source(__func__, out, [&] {
    if (!element)
      raise(Code::kInvalidArgument,
            "dinput_dataset_from_tensor_slices: argument 'element' is NULL");
    Element e = capi::to_element(*element);
    capi::move_to_host(e, capi::current_function(), "argument 'element'");
    return make_from_tensor_slices(std::move(e));
  });
}

DINPUT_API dinput_status_t dinput_dataset_from_generator(
    dinput_dataset_t** out, const dinput_spec_t* spec, dinput_generator_init_fn init,
    dinput_generator_next_fn next, dinput_generator_finalize_fn finalize, void* user_data,
    dinput_free_fn free_user_data) {
  // Own user_data from the start, so that it is released even when the call fails.
  auto owned = std::make_shared<capi::UserData>(user_data, free_user_data);
  return make_source(__func__, out, [&] {
    if (!spec)
      raise(Code::kInvalidArgument, "dinput_dataset_from_generator: argument 'spec' is NULL");
    if (!next)
      raise(Code::kInvalidArgument, "dinput_dataset_from_generator: argument 'next' is NULL");
    DatasetPtr ds = make_from_generator(
        spec->spec, capi::make_c_generator(init, next, finalize, nullptr, nullptr, owned));
    spec->frozen.freeze("dinput_dataset_from_generator");
    return ds;
  });
}

DINPUT_API dinput_status_t dinput_dataset_from_generator_with_state(
    dinput_dataset_t** out, const dinput_spec_t* spec, dinput_generator_init_fn init,
    dinput_generator_next_fn next, dinput_generator_finalize_fn finalize,
    dinput_generator_save_fn save, dinput_generator_restore_fn restore, void* user_data,
    dinput_free_fn free_user_data) {
  auto owned = std::make_shared<capi::UserData>(user_data, free_user_data);
  return make_source(__func__, out, [&] {
    const char* fn = "dinput_dataset_from_generator_with_state";
    if (!spec) raise(Code::kInvalidArgument, fn, ": argument 'spec' is NULL");
    if (!next) raise(Code::kInvalidArgument, fn, ": argument 'next' is NULL");
    if (!save != !restore)
      raise(Code::kInvalidArgument, fn, ": argument '", save ? "restore" : "save",
            "' is NULL but '", save ? "save" : "restore",
            "' is not; give both callbacks, or neither");
    DatasetPtr ds = make_from_generator(
        spec->spec, capi::make_c_generator(init, next, finalize, save, restore, owned));
    spec->frozen.freeze(fn);
    return ds;
  });
}

DINPUT_API dinput_status_t dinput_dataset_text_lines(dinput_dataset_t** out,
                                                     const char* const* files, size_t num_files) {
  return make_source(__func__, out, [&] {
    if (num_files > 0 && !files)
      raise(Code::kInvalidArgument, "dinput_dataset_text_lines: argument 'files' is NULL");
    std::vector<std::string> names;
    for (size_t i = 0; i < num_files; ++i) {
      if (!files[i])
        raise(Code::kInvalidArgument, "dinput_dataset_text_lines: files[", i, "] is NULL");
      names.emplace_back(files[i]);
    }
    return make_text_lines(std::move(names));
  });
}

DINPUT_API dinput_status_t dinput_dataset_list_files(dinput_dataset_t** out,
                                                     const char* const* patterns,
                                                     size_t num_patterns,
                                                     const dinput_list_files_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_list_files", make_source(__func__, out, [&] {
        if (num_patterns > 0 && !patterns)
          raise(Code::kInvalidArgument, "dinput_dataset_list_files: argument 'patterns' is NULL");
        std::vector<std::string> list;
        for (size_t i = 0; i < num_patterns; ++i) {
          if (!patterns[i])
            raise(Code::kInvalidArgument, "dinput_dataset_list_files: patterns[", i, "] is NULL");
          list.emplace_back(patterns[i]);
        }
        return make_list_files(list, o.shuffle, capi::combined_seed(o.has_seed, o.seed, o.seed2));
      }));
}

DINPUT_API dinput_status_t dinput_dataset_batch(dinput_dataset_t** out,
                                                const dinput_dataset_t* input, int64_t batch_size,
                                                const dinput_batch_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_batch", make_dataset(__func__, out, input, [&](DatasetPtr in) {
        // o.deterministic is accepted (and checked) but has no effect: batches keep their order.
        return make_batch(in, batch_size, o.drop_remainder, o.num_parallel_calls);
      }));
}

DINPUT_API dinput_status_t dinput_dataset_unbatch(dinput_dataset_t** out,
                                                  const dinput_dataset_t* input) {
  return make_dataset(__func__, out, input, [&](DatasetPtr in) { return make_unbatch(in); });
}

DINPUT_API dinput_status_t dinput_dataset_repeat(dinput_dataset_t** out,
                                                 const dinput_dataset_t* input, int64_t count) {
  return make_dataset(__func__, out, input, [&](DatasetPtr in) { return make_repeat(in, count); });
}

DINPUT_API dinput_status_t dinput_dataset_take(dinput_dataset_t** out,
                                               const dinput_dataset_t* input, int64_t count) {
  return make_dataset(__func__, out, input, [&](DatasetPtr in) { return make_take(in, count); });
}

DINPUT_API dinput_status_t dinput_dataset_skip(dinput_dataset_t** out,
                                               const dinput_dataset_t* input, int64_t count) {
  return make_dataset(__func__, out, input, [&](DatasetPtr in) { return make_skip(in, count); });
}

DINPUT_API dinput_status_t dinput_dataset_shard(dinput_dataset_t** out,
                                                const dinput_dataset_t* input, int64_t num_shards,
                                                int64_t index) {
  return make_dataset(__func__, out, input,
                      [&](DatasetPtr in) { return make_shard(in, num_shards, index); });
}

DINPUT_API dinput_status_t dinput_dataset_shuffle(dinput_dataset_t** out,
                                                  const dinput_dataset_t* input,
                                                  int64_t buffer_size,
                                                  const dinput_shuffle_options_t* options) {
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_shuffle", make_dataset(__func__, out, input, [&](DatasetPtr in) {
        return make_shuffle(in, buffer_size, capi::combined_seed(o.has_seed, o.seed, o.seed2),
                            o.reshuffle_each_iteration);
      }));
}

DINPUT_API dinput_status_t dinput_dataset_map(dinput_dataset_t** out, const dinput_dataset_t* input,
                                              dinput_map_fn fn, void* user_data,
                                              dinput_free_fn free_user_data,
                                              const dinput_map_options_t* options) {
  auto owned = std::make_shared<capi::UserData>(user_data, free_user_data);
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_map", make_dataset(__func__, out, input, [&](DatasetPtr in) {
        if (!fn) raise(Code::kInvalidArgument, "dinput_dataset_map: argument 'fn' is NULL");
        return make_map(in, capi::make_c_map(fn, owned), o.out_spec.value_or(ElementSpec()),
                        o.num_parallel_calls, capi::to_optional(o.deterministic));
      }));
}

DINPUT_API dinput_status_t dinput_dataset_map_many(dinput_dataset_t** out,
                                                   const dinput_dataset_t* input, size_t max_count,
                                                   dinput_map_many_fn fn, void* user_data,
                                                   dinput_free_fn free_user_data,
                                                   const dinput_map_options_t* options) {
  auto owned = std::make_shared<capi::UserData>(user_data, free_user_data);
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_map_many", make_dataset(__func__, out, input, [&](DatasetPtr in) {
        if (!fn) raise(Code::kInvalidArgument, "dinput_dataset_map_many: argument 'fn' is NULL");
        if (max_count == 0)
          raise(Code::kInvalidArgument,
                "dinput_dataset_map_many: argument 'max_count' is 0; a run "
                "has at least one element");
        if (max_count > static_cast<size_t>(INT64_MAX))
          raise(Code::kInvalidArgument, "dinput_dataset_map_many: argument 'max_count' is ",
                max_count, ", more than INT64_MAX (a negative number converted?)");
        return make_map_many(in, capi::make_c_map_many(fn, owned), static_cast<int64_t>(max_count),
                             o.out_spec.value_or(ElementSpec()), o.num_parallel_calls,
                             capi::to_optional(o.deterministic));
      }));
}

DINPUT_API dinput_status_t dinput_dataset_filter(dinput_dataset_t** out,
                                                 const dinput_dataset_t* input, dinput_filter_fn fn,
                                                 void* user_data, dinput_free_fn free_user_data) {
  auto owned = std::make_shared<capi::UserData>(user_data, free_user_data);
  return make_dataset(__func__, out, input, [&](DatasetPtr in) {
    if (!fn) raise(Code::kInvalidArgument, "dinput_dataset_filter: argument 'fn' is NULL");
    return make_filter(in, capi::make_c_filter(fn, owned));
  });
}

DINPUT_API dinput_status_t dinput_dataset_interleave(dinput_dataset_t** out,
                                                     const dinput_dataset_t* input,
                                                     dinput_interleave_fn fn,
                                                     const dinput_spec_t* out_spec, void* user_data,
                                                     dinput_free_fn free_user_data,
                                                     const dinput_interleave_options_t* options) {
  auto owned = std::make_shared<capi::UserData>(user_data, free_user_data);
  const auto& o = capi::settings(options);
  return capi::freeze_if_ok(
      options, "dinput_dataset_interleave", make_dataset(__func__, out, input, [&](DatasetPtr in) {
        if (!fn) raise(Code::kInvalidArgument, "dinput_dataset_interleave: argument 'fn' is NULL");
        if (!out_spec)
          raise(Code::kInvalidArgument, "dinput_dataset_interleave: argument 'out_spec' is NULL");
        DatasetPtr ds = make_interleave(in, capi::make_c_interleave(fn, owned), out_spec->spec,
                                        o.cycle_length, o.block_length, o.num_parallel_calls,
                                        capi::to_optional(o.deterministic));
        out_spec->frozen.freeze("dinput_dataset_interleave");
        return ds;
      }));
}

DINPUT_API dinput_status_t dinput_dataset_enumerate(dinput_dataset_t** out,
                                                    const dinput_dataset_t* input, int64_t start) {
  return make_dataset(__func__, out, input,
                      [&](DatasetPtr in) { return make_enumerate(in, start); });
}

DINPUT_API dinput_status_t dinput_dataset_prefetch(dinput_dataset_t** out,
                                                   const dinput_dataset_t* input,
                                                   int64_t buffer_size) {
  return make_dataset(__func__, out, input,
                      [&](DatasetPtr in) { return make_prefetch(in, buffer_size); });
}

DINPUT_API dinput_status_t dinput_dataset_rebatch(dinput_dataset_t** out,
                                                  const dinput_dataset_t* input,
                                                  const int64_t* sizes, size_t num_sizes,
                                                  int drop_remainder) {
  return make_dataset(__func__, out, input, [&](DatasetPtr in) {
    if (num_sizes > 0 && !sizes)
      raise(Code::kInvalidArgument, "dinput_dataset_rebatch: argument 'sizes' is NULL");
    return make_rebatch(in, std::vector<int64_t>(sizes, sizes + num_sizes), drop_remainder != 0);
  });
}

DINPUT_API dinput_status_t dinput_dataset_with_options(dinput_dataset_t** out,
                                                       const dinput_dataset_t* input,
                                                       const dinput_options_t* options) {
  return make_dataset(__func__, out, input, [&](DatasetPtr in) {
    if (!options)
      raise(Code::kInvalidArgument, "dinput_dataset_with_options: argument 'options' is NULL");
    DatasetPtr ds = make_with_options(in, options->options);
    options->frozen.freeze("dinput_dataset_with_options");
    return ds;
  });
}

// ---- iterators ----

DINPUT_API dinput_status_t dinput_dataset_iterator(dinput_iterator_t** out,
                                                   const dinput_dataset_t* dataset) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(dataset);
    IteratorContext ctx;
    ctx.cancellation = std::make_shared<Cancellation>();
    StickyIterator it(make_pipeline_iterator(dataset->ds, ctx));
    *out =
        capi::new_handle<dinput_iterator>(dataset->ds, ctx.stats, ctx.cancellation, std::move(it),
                                          capi::InUseFlag{}, dataset->ds, ctx.pipeline_stats);
  });
}

DINPUT_API void dinput_iterator_free(dinput_iterator_t* iterator) {
  if (!iterator) return;
  std::unique_ptr<dinput_iterator> owned(iterator);
  if (owned->it.finished()) return;  // no threads left to wait for
  // Stops every background wait at once; threads inside callbacks finish them elsewhere.
  owned->cancellation->cancel();
  capi::guard_value(0, [&] {
    dispose(std::move(owned));
    return 0;
  });
}

DINPUT_API dinput_status_t dinput_iterator_cancel(dinput_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(iterator);
    iterator->cancellation->cancel();
  });
}

DINPUT_API dinput_status_t dinput_iterator_get_next(dinput_element_t** out,
                                                    dinput_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    capi::InUseScope busy(iterator->in_use, "dinput_iterator_get_next");
    Element e;
    if (!next_element(*iterator, e)) raise(Code::kOutOfRange, "End of sequence");
    *out = capi::new_handle<dinput_element>(capi::to_handle(std::move(e)));
  });
}

DINPUT_API dinput_status_t dinput_iterator_get_next_as_optional(dinput_optional_t** out,
                                                                dinput_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    capi::InUseScope busy(iterator->in_use, "dinput_iterator_get_next_as_optional");
    Element e;
    dinput_optional opt;
    if (next_element(*iterator, e)) opt.element = capi::to_handle(std::move(e));
    *out = capi::new_handle<dinput_optional>(std::move(opt));
  });
}

DINPUT_API dinput_status_t dinput_iterator_element_spec(dinput_spec_t** out,
                                                        const dinput_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    *out = capi::new_handle<dinput_spec>(iterator->dataset->element_spec());
  });
}

DINPUT_API dinput_status_t dinput_iterator_statistic(int64_t* out,
                                                     const dinput_iterator_t* iterator,
                                                     const char* name) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(out);
    *out = 0;
    DINPUT_REQUIRE(iterator);
    DINPUT_REQUIRE(name);
    *out = read_statistic(*iterator->stats, name);
  });
}

// ---- optionals ----

DINPUT_API void dinput_optional_free(dinput_optional_t* optional) { capi::free_handle(optional); }

DINPUT_API int dinput_optional_has_value(const dinput_optional_t* o) {
  return o && (o->element.has_value() || o->per_replica.has_value()) ? 1 : 0;
}

DINPUT_API dinput_status_t dinput_optional_get_value(dinput_element_t** out,
                                                     const dinput_optional_t* optional) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(optional);
    if (optional->per_replica)
      raise(Code::kInvalidArgument,
            "dinput_optional_get_value: the optional holds a per-replica value; use "
            "dinput_optional_get_per_replica");
    if (!optional->element)
      raise(Code::kInvalidArgument, "dinput_optional_get_value: the optional is empty (no value)");
    *out = capi::new_handle<dinput_element>(*optional->element);
  });
}

}  // extern "C"
