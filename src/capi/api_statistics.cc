// Per-stage statistics and traces (docs/statistics.md): the option setters and the JSON
// readers of dataset and distributed iterators.
#include <cstdlib>
#include <cstring>

#include "capi/dist_handles.h"
#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/iterator_handle.h"
#include "capi/transform_options.h"
#include "data/stage_stats.h"

using namespace dinput;

namespace {

// The most trace events an iterator may keep (each takes 24 bytes).
constexpr int64_t kMaxTraceEvents = 100000000;

// `text` as a string the caller frees with dinput_string_free (malloc'd, NUL-terminated).
char* owned_string(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (!out) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

// The document of an iterator whose statistics are off: no stages, no consumer figures.
std::string disabled_json(const std::shared_ptr<IteratorStats>& counters) {
  PipelineStats none(counters, 0);
  return none.to_json();
}

}  // namespace

extern "C" {

DINPUT_API void dinput_string_free(char* string) { std::free(string); }

DINPUT_API dinput_status_t dinput_options_set_statistics(dinput_options_t* options, int enable) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    options->options.statistics = enable != 0;
  });
}

DINPUT_API dinput_status_t dinput_options_set_trace(dinput_options_t* options, int64_t max_events) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE(options);
    options->frozen.check_mutable("options");
    if (max_events < 0 || max_events > kMaxTraceEvents)
      raise(Code::kInvalidArgument,
            "dinput_options_set_trace: argument 'max_events' must be in [0, 100000000], got ",
            max_events);
    options->options.trace_events = max_events;
  });
}

DINPUT_API dinput_status_t dinput_iterator_statistics(char** out,
                                                      const dinput_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    *out = owned_string(iterator->pipeline_stats ? iterator->pipeline_stats->to_json()
                                                 : disabled_json(iterator->stats));
  });
}

DINPUT_API dinput_status_t dinput_iterator_trace(char** out, const dinput_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    *out = owned_string(iterator->pipeline_stats ? iterator->pipeline_stats->trace_json()
                                                 : PipelineStats(iterator->stats, 0).trace_json());
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_statistics(char** out,
                                                           dinput_dist_iterator_t* iterator,
                                                           int all_workers) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    // Between get_next calls: it reads the step count, which get_next moves.
    capi::InUseScope busy(iterator->in_use, "dinput_dist_iterator_statistics");
    *out = owned_string(all_workers ? iterator->it->gather_statistics()
                                    : iterator->it->statistics_json());
  });
}

DINPUT_API dinput_status_t dinput_dist_iterator_trace(char** out,
                                                      const dinput_dist_iterator_t* iterator) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    DINPUT_REQUIRE(iterator);
    *out = owned_string(iterator->it->trace_json());
  });
}

}  // extern "C"
