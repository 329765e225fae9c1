// The option handles of the transformations and the record writer (dinput_map_options_t
// and the others): plain settings, plus the name of the function that first used the
// handle, after which the handle is frozen (its setters fail with FAILED_PRECONDITION).
#pragma once

#include <cstdint>
#include <optional>

#include "capi/firewall.h"
#include "capi/frozen.h"
#include "core/element.h"
#include "data/datasets.h"
#include "dinput.h"

namespace dinput::capi {

// What every option handle shares: once a dataset (or writer) is built from it, it is
// frozen (the same mark and message as specs and dataset options, see frozen.h), so that
// nobody can believe a later setter changed what was built.
struct FreezableOptions {
  FreezeMark frozen;
};

// FAILED_PRECONDITION naming the function that used `options` when it is frozen.
void check_not_frozen(const FreezableOptions& options);
// Passes on `code`, the status of the call `fn` (a static string) that used `options`; when
// it is DINPUT_OK, marks `options` (when not null) as used by it: a call that failed leaves
// the handle mutable.
dinput_status_t freeze_if_ok(const FreezableOptions* options, const char* fn, dinput_status_t code);

// The settings of an option handle: its own, or the defaults for NULL.
template <typename Options>
const Options& settings(const Options* options) {
  static const Options defaults;
  return options ? *options : defaults;
}

// The body of an option handle's setter `fn`: the handle must be there (INVALID_ARGUMENT)
// and not frozen (FAILED_PRECONDITION); `body` checks and stores the setting.
template <typename Options, typename Body>
dinput_status_t set_option(const char* fn, Options* options, Body&& body) {
  return guard(fn, [&] {
    if (!options) raise(Code::kInvalidArgument, fn, ": argument 'options' is NULL");
    check_not_frozen(*options);
    body(*options);
  });
}

// INVALID_ARGUMENT naming `fn` unless n is 0..1024 or DINPUT_AUTOTUNE.
void check_parallel_calls(const char* fn, int64_t n);
// INVALID_ARGUMENT naming `fn` unless d is one of dinput_deterministic_t's three values.
void check_deterministic(const char* fn, dinput_deterministic_t d);

// The three states of dinput_deterministic_t as the core takes them.
std::optional<bool> to_optional(dinput_deterministic_t deterministic);

// The one seed the core's shuffles take for a seed pair: -1 (random) when unset; the first
// seed alone when seed2 is 0, so that (s, 0) is the order of the single seed s everywhere
// else; otherwise both seeds mixed into one non-negative seed.
int64_t combined_seed(bool has_seed, int64_t seed, int64_t seed2);

}  // namespace dinput::capi

struct dinput_map_options : dinput::capi::FreezableOptions {
  std::optional<dinput::ElementSpec> out_spec;
  int64_t num_parallel_calls = 1;
  dinput_deterministic_t deterministic = DINPUT_DETERMINISTIC_UNSET;
};

struct dinput_interleave_options : dinput::capi::FreezableOptions {
  int64_t cycle_length = dinput::kAutotune;
  int64_t block_length = 1;
  int64_t num_parallel_calls = 1;
  dinput_deterministic_t deterministic = DINPUT_DETERMINISTIC_UNSET;
};

struct dinput_batch_options : dinput::capi::FreezableOptions {
  bool drop_remainder = false;
  int64_t num_parallel_calls = 1;
  dinput_deterministic_t deterministic = DINPUT_DETERMINISTIC_UNSET;
};

struct dinput_shuffle_options : dinput::capi::FreezableOptions {
  bool has_seed = false;
  int64_t seed = -1;
  int64_t seed2 = -1;
  bool reshuffle_each_iteration = true;
};

struct dinput_list_files_options : dinput::capi::FreezableOptions {
  bool shuffle = false;
  bool has_seed = false;
  int64_t seed = -1;
  int64_t seed2 = -1;
};

struct dinput_records_options : dinput::capi::FreezableOptions {
  dinput_compression_t compression = DINPUT_COMPRESSION_NONE;
  int64_t buffer_size = 0;
};

struct dinput_record_writer_options : dinput::capi::FreezableOptions {
  dinput_compression_t compression = DINPUT_COMPRESSION_NONE;
  int level = 0;
  int zstd_window_log = 0;
};
