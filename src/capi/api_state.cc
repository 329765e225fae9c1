// Saving an iterator's state, or a distributed iterator's, and making an iterator from one
// (docs/checkpoint.md).
#include <cstring>

#include "capi/dist_handles.h"
#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/iterator_handle.h"
#include "data/state.h"
#include "distribute/state_json.h"

using namespace dinput;

struct dinput_state {
  std::string bytes;
};

extern "C" {

DINPUT_API dinput_status_t dinput_iterator_save(dinput_state_t** out, dinput_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    capi::InUseScope busy(iterator->in_use, "dinput_iterator_save");
    const Iterator* it = iterator->it.for_save();
    *out = capi::new_handle<dinput_state>(
        save_state(*iterator->dataset, *iterator->effective, it, it == nullptr));
  });
}

DINPUT_API const void* dinput_state_data(const dinput_state_t* state) {
  return state ? state->bytes.data() : nullptr;
}

DINPUT_API size_t dinput_state_size(const dinput_state_t* state) {
  return state ? state->bytes.size() : 0;
}

DINPUT_API void dinput_state_free(dinput_state_t* state) { capi::free_handle(state); }

DINPUT_API dinput_status_t dinput_dataset_iterator_from_state(dinput_iterator_t** out,
                                                              const dinput_dataset_t* dataset,
                                                              const void* state, size_t size) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(dataset);
    if (!state && size > 0)
      raise(Code::kInvalidArgument, "dinput_dataset_iterator_from_state: argument 'state' is NULL");
    IteratorContext ctx;
    ctx.cancellation = std::make_shared<Cancellation>();
    RestoredIterator restored =
        restore_state(dataset->ds, ctx, std::string_view(static_cast<const char*>(state), size));
    StickyIterator it =
        restored.iterator ? StickyIterator(std::move(restored.iterator)) : StickyIterator();
    *out = capi::new_handle<dinput_iterator>(dataset->ds, ctx.stats, ctx.cancellation,
                                             std::move(it), capi::InUseFlag{},
                                             std::move(restored.dataset), ctx.pipeline_stats);
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_save(dinput_state_t** out,
                                                     dinput_dist_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    capi::InUseScope busy(iterator->in_use, "dinput_dist_iterator_save");
    *out = capi::new_handle<dinput_state>(iterator->it->save());
  });
}

DINPUT_API dinput_status_t dinput_dist_dataset_iterator_from_state(
    dinput_dist_iterator_t** out, const dinput_dist_dataset_t* dataset, const void* state,
    size_t size) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(dataset);
    if (!state && size > 0)
      raise(Code::kInvalidArgument,
            "dinput_dist_dataset_iterator_from_state: argument 'state' is NULL");
    *out = capi::new_handle<dinput_dist_iterator>(
        std::make_unique<DistributedIterator>(
            dataset->dataset, std::string_view(static_cast<const char*>(state), size)),
        capi::InUseFlag{});
  });
}

DINPUT_API dinput_status_t dinput_state_describe(dinput_state_t** out, const void* state,
                                                 size_t size) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    if (!state && size > 0)
      raise(Code::kInvalidArgument, "dinput_state_describe: argument 'state' is NULL");
    *out = capi::new_handle<dinput_state>(
        describe_state(std::string_view(static_cast<const char*>(state), size)));
  });
}

}  // extern "C"
