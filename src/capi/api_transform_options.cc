// The option handles of the transformations and the record writer. The functions that take
// them (api_dataset.cc, api_io.cc) copy the settings and freeze the handle.
#include "capi/firewall.h"
#include "capi/handles.h"
#include "capi/transform_options.h"

using namespace dinput;

namespace dinput::capi {

void check_not_frozen(const FreezableOptions& options) { options.frozen.check_mutable("options"); }

dinput_status_t freeze_if_ok(const FreezableOptions* options, const char* fn,
                             dinput_status_t code) {
  // The first user is the one named; later uses leave it.
  if (code == DINPUT_OK && options) options->frozen.freeze(fn);
  return code;
}

std::optional<bool> to_optional(dinput_deterministic_t deterministic) {
  if (deterministic == DINPUT_DETERMINISTIC_UNSET) return std::nullopt;
  return deterministic == DINPUT_DETERMINISTIC_TRUE;
}

int64_t combined_seed(bool has_seed, int64_t seed, int64_t seed2) {
  if (!has_seed) return -1;
  if (seed2 == 0) return seed;
  // SplitMix64's finalizer over both seeds: every bit of each reaches the result.
  uint64_t z = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(seed2);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<int64_t>(z & 0x7FFFFFFFFFFFFFFFull);
}

void check_parallel_calls(const char* fn, int64_t n) {
  DINPUT_CHECK_ARG(n >= -1 && n <= 1024, fn,
                   ": num_parallel_calls must be 0..1024 or DINPUT_AUTOTUNE (-1), got ", n);
}

void check_deterministic(const char* fn, dinput_deterministic_t d) {
  int v = static_cast<int>(d);
  DINPUT_CHECK_ARG(v >= -1 && v <= 1, fn, ": invalid deterministic ", v,
                   " (expected DINPUT_DETERMINISTIC_UNSET=-1, FALSE=0 or TRUE=1)");
}

}  // namespace dinput::capi

namespace {

template <typename Options>
dinput_status_t make(const char* fn, Options** out) {
  return capi::guard(fn, [&] {
    DINPUT_REQUIRE_OUT(out);
    *out = std::make_unique<Options>().release();  // the caller owns it until _free
  });
}

void check_compression(const char* fn, dinput_compression_t compression) {
  int c = static_cast<int>(compression);
  DINPUT_CHECK_ARG(
      c >= 0 && c <= 2, fn, ": invalid compression ", c,
      " (expected DINPUT_COMPRESSION_NONE, DINPUT_COMPRESSION_ZSTD or DINPUT_COMPRESSION_GZIP)");
}

}  // namespace

extern "C" {

// ---- map ----

DINPUT_API dinput_status_t dinput_map_options_new(dinput_map_options_t** out) {
  return make(__func__, out);
}

DINPUT_API void dinput_map_options_free(dinput_map_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t dinput_map_options_set_out_spec(dinput_map_options_t* options,
                                                           const dinput_spec_t* spec) {
  return capi::set_option(__func__, options, [&](dinput_map_options& o) {
    if (spec) {
      o.out_spec = spec->spec;
      // Copied here: like every use of a spec, this one freezes it.
      spec->frozen.freeze("dinput_map_options_set_out_spec");
    } else {
      o.out_spec.reset();
    }
  });
}

DINPUT_API dinput_status_t dinput_map_options_out_spec(dinput_spec_t** out,
                                                       const dinput_map_options_t* options) {
  return capi::guard(__func__, [&] {
    DINPUT_REQUIRE_OUT(out);
    if (options && options->out_spec) *out = capi::new_handle<dinput_spec>(*options->out_spec);
  });
}

DINPUT_API dinput_status_t dinput_map_options_set_num_parallel_calls(dinput_map_options_t* options,
                                                                     int64_t num_parallel_calls) {
  return capi::set_option(__func__, options, [&](dinput_map_options& o) {
    capi::check_parallel_calls("dinput_map_options_set_num_parallel_calls", num_parallel_calls);
    o.num_parallel_calls = num_parallel_calls;
  });
}

DINPUT_API int64_t dinput_map_options_num_parallel_calls(const dinput_map_options_t* options) {
  return options ? options->num_parallel_calls : 1;
}

DINPUT_API dinput_status_t dinput_map_options_set_deterministic(
    dinput_map_options_t* options, dinput_deterministic_t deterministic) {
  return capi::set_option(__func__, options, [&](dinput_map_options& o) {
    capi::check_deterministic("dinput_map_options_set_deterministic", deterministic);
    o.deterministic = deterministic;
  });
}

DINPUT_API dinput_deterministic_t
dinput_map_options_deterministic(const dinput_map_options_t* options) {
  return options ? options->deterministic : DINPUT_DETERMINISTIC_UNSET;
}

// ---- interleave ----

DINPUT_API dinput_status_t dinput_interleave_options_new(dinput_interleave_options_t** out) {
  return make(__func__, out);
}

DINPUT_API void dinput_interleave_options_free(dinput_interleave_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t dinput_interleave_options_set_cycle_length(
    dinput_interleave_options_t* options, int64_t cycle_length) {
  return capi::set_option(__func__, options, [&](dinput_interleave_options& o) {
    DINPUT_CHECK_ARG(cycle_length == kAutotune || (cycle_length >= 1 && cycle_length <= 4096),
                     "dinput_interleave_options_set_cycle_length: cycle_length must be 1..4096 or "
                     "DINPUT_AUTOTUNE "
                     "(-1), got ",
                     cycle_length);
    o.cycle_length = cycle_length;
  });
}

DINPUT_API int64_t
dinput_interleave_options_cycle_length(const dinput_interleave_options_t* options) {
  return options ? options->cycle_length : kAutotune;
}

DINPUT_API dinput_status_t dinput_interleave_options_set_block_length(
    dinput_interleave_options_t* options, int64_t block_length) {
  return capi::set_option(__func__, options, [&](dinput_interleave_options& o) {
    DINPUT_CHECK_ARG(block_length >= 1,
                     "dinput_interleave_options_set_block_length: block_length must be >= 1, got ",
                     block_length);
    o.block_length = block_length;
  });
}

DINPUT_API int64_t
dinput_interleave_options_block_length(const dinput_interleave_options_t* options) {
  return options ? options->block_length : 1;
}

DINPUT_API dinput_status_t dinput_interleave_options_set_num_parallel_calls(
    dinput_interleave_options_t* options, int64_t num_parallel_calls) {
  return capi::set_option(__func__, options, [&](dinput_interleave_options& o) {
    capi::check_parallel_calls("dinput_interleave_options_set_num_parallel_calls",
                               num_parallel_calls);
    o.num_parallel_calls = num_parallel_calls;
  });
}

DINPUT_API int64_t
dinput_interleave_options_num_parallel_calls(const dinput_interleave_options_t* options) {
  return options ? options->num_parallel_calls : 1;
}

DINPUT_API dinput_status_t dinput_interleave_options_set_deterministic(
    dinput_interleave_options_t* options, dinput_deterministic_t deterministic) {
  return capi::set_option(__func__, options, [&](dinput_interleave_options& o) {
    capi::check_deterministic("dinput_interleave_options_set_deterministic", deterministic);
    o.deterministic = deterministic;
  });
}

DINPUT_API dinput_deterministic_t
dinput_interleave_options_deterministic(const dinput_interleave_options_t* options) {
  return options ? options->deterministic : DINPUT_DETERMINISTIC_UNSET;
}

// ---- batch ----

DINPUT_API dinput_status_t dinput_batch_options_new(dinput_batch_options_t** out) {
  return make(__func__, out);
}

DINPUT_API void dinput_batch_options_free(dinput_batch_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t dinput_batch_options_set_drop_remainder(dinput_batch_options_t* options,
                                                                   int drop_remainder) {
  return capi::set_option(__func__, options,
                          [&](dinput_batch_options& o) { o.drop_remainder = drop_remainder != 0; });
}

DINPUT_API int dinput_batch_options_drop_remainder(const dinput_batch_options_t* options) {
  return options && options->drop_remainder ? 1 : 0;
}

DINPUT_API dinput_status_t dinput_batch_options_set_num_parallel_calls(
    dinput_batch_options_t* options, int64_t num_parallel_calls) {
  return capi::set_option(__func__, options, [&](dinput_batch_options& o) {
    capi::check_parallel_calls("dinput_batch_options_set_num_parallel_calls", num_parallel_calls);
    o.num_parallel_calls = num_parallel_calls;
  });
}

DINPUT_API int64_t dinput_batch_options_num_parallel_calls(const dinput_batch_options_t* options) {
  return options ? options->num_parallel_calls : 1;
}

DINPUT_API dinput_status_t dinput_batch_options_set_deterministic(
    dinput_batch_options_t* options, dinput_deterministic_t deterministic) {
  return capi::set_option(__func__, options, [&](dinput_batch_options& o) {
    capi::check_deterministic("dinput_batch_options_set_deterministic", deterministic);
    o.deterministic = deterministic;
  });
}

DINPUT_API dinput_deterministic_t
dinput_batch_options_deterministic(const dinput_batch_options_t* options) {
  return options ? options->deterministic : DINPUT_DETERMINISTIC_UNSET;
}

// ---- shuffle ----

DINPUT_API dinput_status_t dinput_shuffle_options_new(dinput_shuffle_options_t** out) {
  return make(__func__, out);
}

DINPUT_API void dinput_shuffle_options_free(dinput_shuffle_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t dinput_shuffle_options_set_seed(dinput_shuffle_options_t* options,
                                                           int64_t seed, int64_t seed2) {
  return capi::set_option(__func__, options, [&](dinput_shuffle_options& o) {
    DINPUT_CHECK_ARG(seed >= 0, "dinput_shuffle_options_set_seed: seed must be >= 0, got ", seed,
                     " (leave the seed unset for a random one)");
    DINPUT_CHECK_ARG(seed2 >= 0, "dinput_shuffle_options_set_seed: seed2 must be >= 0, got ",
                     seed2);
    o.has_seed = true;
    o.seed = seed;
    o.seed2 = seed2;
  });
}

DINPUT_API int64_t dinput_shuffle_options_seed(const dinput_shuffle_options_t* options) {
  return options && options->has_seed ? options->seed : -1;
}

DINPUT_API int64_t dinput_shuffle_options_seed2(const dinput_shuffle_options_t* options) {
  return options && options->has_seed ? options->seed2 : -1;
}

DINPUT_API dinput_status_t
dinput_shuffle_options_set_reshuffle_each_iteration(dinput_shuffle_options_t* options, int enable) {
  return capi::set_option(__func__, options, [&](dinput_shuffle_options& o) {
    o.reshuffle_each_iteration = enable != 0;
  });
}

DINPUT_API int dinput_shuffle_options_reshuffle_each_iteration(
    const dinput_shuffle_options_t* options) {
  return !options || options->reshuffle_each_iteration ? 1 : 0;
}

// ---- list_files ----

DINPUT_API dinput_status_t dinput_list_files_options_new(dinput_list_files_options_t** out) {
  return make(__func__, out);
}

DINPUT_API void dinput_list_files_options_free(dinput_list_files_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t
dinput_list_files_options_set_shuffle(dinput_list_files_options_t* options, int shuffle) {
  return capi::set_option(__func__, options,
                          [&](dinput_list_files_options& o) { o.shuffle = shuffle != 0; });
}

DINPUT_API int dinput_list_files_options_shuffle(const dinput_list_files_options_t* options) {
  return options && options->shuffle ? 1 : 0;
}

DINPUT_API dinput_status_t dinput_list_files_options_set_seed(dinput_list_files_options_t* options,
                                                              int64_t seed, int64_t seed2) {
  return capi::set_option(__func__, options, [&](dinput_list_files_options& o) {
    DINPUT_CHECK_ARG(seed >= 0, "dinput_list_files_options_set_seed: seed must be >= 0, got ", seed,
                     " (leave the seed unset for a random one)");
    DINPUT_CHECK_ARG(seed2 >= 0, "dinput_list_files_options_set_seed: seed2 must be >= 0, got ",
                     seed2);
    o.has_seed = true;
    o.seed = seed;
    o.seed2 = seed2;
  });
}

DINPUT_API int64_t dinput_list_files_options_seed(const dinput_list_files_options_t* options) {
  return options && options->has_seed ? options->seed : -1;
}

DINPUT_API int64_t dinput_list_files_options_seed2(const dinput_list_files_options_t* options) {
  return options && options->has_seed ? options->seed2 : -1;
}

// ---- records ----

DINPUT_API dinput_status_t dinput_records_options_new(dinput_records_options_t** out) {
  return make(__func__, out);
}

DINPUT_API void dinput_records_options_free(dinput_records_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t dinput_records_options_set_compression(
    dinput_records_options_t* options, dinput_compression_t compression) {
  return capi::set_option(__func__, options, [&](dinput_records_options& o) {
    check_compression("dinput_records_options_set_compression", compression);
    o.compression = compression;
  });
}

DINPUT_API dinput_compression_t
dinput_records_options_compression(const dinput_records_options_t* options) {
  return options ? options->compression : DINPUT_COMPRESSION_NONE;
}

DINPUT_API dinput_status_t dinput_records_options_set_buffer_size(dinput_records_options_t* options,
                                                                  int64_t buffer_size) {
  return capi::set_option(__func__, options, [&](dinput_records_options& o) {
    DINPUT_CHECK_ARG(buffer_size >= 0,
                     "dinput_records_options_set_buffer_size: buffer_size must be >= 0 (0: the "
                     "default), got ",
                     buffer_size);
    o.buffer_size = buffer_size;
  });
}

DINPUT_API int64_t dinput_records_options_buffer_size(const dinput_records_options_t* options) {
  return options ? options->buffer_size : 0;
}

// ---- record writer ----

DINPUT_API dinput_status_t dinput_record_writer_options_new(dinput_record_writer_options_t** out) {
  return make(__func__, out);
}

DINPUT_API void dinput_record_writer_options_free(dinput_record_writer_options_t* options) {
  capi::free_handle(options);
}

DINPUT_API dinput_status_t dinput_record_writer_options_set_compression(
    dinput_record_writer_options_t* options, dinput_compression_t compression) {
  return capi::set_option(__func__, options, [&](dinput_record_writer_options& o) {
    check_compression("dinput_record_writer_options_set_compression", compression);
    o.compression = compression;
  });
}

DINPUT_API dinput_compression_t
dinput_record_writer_options_compression(const dinput_record_writer_options_t* options) {
  return options ? options->compression : DINPUT_COMPRESSION_NONE;
}

DINPUT_API dinput_status_t
dinput_record_writer_options_set_level(dinput_record_writer_options_t* options, int level) {
  return capi::set_option(__func__, options, [&](dinput_record_writer_options& o) {
    DINPUT_CHECK_ARG(level >= 0 && level <= 19,
                     "dinput_record_writer_options_set_level: level must be 0..19 (0: "
                     "the codec's default), got ",
                     level);
    o.level = level;
  });
}

DINPUT_API int dinput_record_writer_options_level(const dinput_record_writer_options_t* options) {
  return options ? options->level : 0;
}

DINPUT_API dinput_status_t dinput_record_writer_options_set_zstd_window_log(
    dinput_record_writer_options_t* options, int window_log) {
  return capi::set_option(__func__, options, [&](dinput_record_writer_options& o) {
    DINPUT_CHECK_ARG(
        window_log == 0 || (window_log >= 10 && window_log <= 31),
        "dinput_record_writer_options_set_zstd_window_log: window_log must be 10..31 (0: the "
        "level's), got ",
        window_log);
    o.zstd_window_log = window_log;
  });
}

DINPUT_API int dinput_record_writer_options_zstd_window_log(
    const dinput_record_writer_options_t* options) {
  return options ? options->zstd_window_log : 0;
}

}  // extern "C"
