// The pieces pipeline_builder.cc and the build_*.cc files share: how a call's arguments are
// bound and read (Args), the function table's types, and one declaration per function the
// chain syntax knows. The table itself is in pipeline_builder.cc; the builders are in
// build_sources.cc (range, from_tensors, from_tensor_slices, list_files), build_readers.cc
// (records, text_lines, fixed_length_records and interleave and flat_map, which run them per
// file), build_batching.cc (padded_batch, bucket_by_sequence_length, window), build_combine.cc
// (zip, concatenate, sample_from_datasets, choose_from_datasets, cache, ignore_errors),
// build_example.cc (the Example parses) and build_transforms.cc (the other transformations).
#ifndef DINPUT_TOOL_BUILDER_FUNCTIONS_H_
#define DINPUT_TOOL_BUILDER_FUNCTIONS_H_

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "chain_parser.h"
#include "handles.h"
#include "status.h"

namespace dinput_tool {
namespace builder {

// ---- named constants -------------------------------------------------------------------

bool is_autotune(const std::string& name);
bool is_shard_hint(const std::string& name);

// ---- argument binding ------------------------------------------------------------------

struct Param {
  const char* name;
  bool required;
  const char* shown = nullptr;  // the name in messages, when it differs (range's first)
};

// A named constant an integer parameter also accepts, e.g. AUTOTUNE for prefetch.
struct IntConstant {
  const char* shown;  // how the error message spells it
  bool (*matches)(const std::string&);
  int64_t value;
};

class Args {
 public:
  Args(std::string function, std::string usage)
      : function_(std::move(function)), usage_(std::move(usage)) {}

  void set(const char* name, const Value* value) { values_.emplace_back(name, value); }

  const Value* get(const char* name) const {
    for (const auto& entry : values_) {
      if (std::strcmp(entry.first, name) == 0) return entry.second;
    }
    return nullptr;
  }

  const std::string& function() const { return function_; }

  Failure error(const char* name, const std::string& problem) const {
    return invalid_argument(function_ + "(): argument '" + name + "' " + problem +
                            "; usage: " + usage_);
  }

  Failure type_error(const char* name, const std::string& wanted, const Value& got) const {
    return error(name, "must be " + wanted + ", got " + describe_kind(got.kind) + " at position " +
                           std::to_string(got.pos));
  }

  // An integer argument; absent or None gives `fallback` when `none_ok`.
  int64_t get_int(const char* name, std::initializer_list<IntConstant> constants = {},
                  bool none_ok = false, int64_t fallback = 0) const {
    return get_int_shown_as(name, name, constants, none_ok, fallback);
  }

  // get_int for a parameter whose meaning depends on the call, named `shown` in messages.
  int64_t get_int_shown_as(const char* name, const char* shown,
                           std::initializer_list<IntConstant> constants = {}, bool none_ok = false,
                           int64_t fallback = 0) const {
    const Value* v = get(name);
    name = shown;
    if (v == nullptr || (none_ok && v->kind == Value::Kind::kNone)) return fallback;
    if (v->kind == Value::Kind::kInt) return v->int_value;
    std::string wanted = "an integer";
    if (v->kind == Value::Kind::kName) {
      for (const IntConstant& c : constants) {
        if (c.matches(v->text)) return c.value;
      }
    }
    for (const IntConstant& c : constants) wanted += std::string(" or ") + c.shown;
    if (none_ok) wanted += " or None";
    if (v->kind == Value::Kind::kName) {
      throw error(name, "must be " + wanted + ", got the name '" + v->text + "' at position " +
                            std::to_string(v->pos));
    }
    throw type_error(name, wanted, *v);
  }

  // A bool argument; absent (or None, when `none_ok`) gives `fallback`.
  bool get_bool(const char* name, bool fallback, bool none_ok = false) const {
    const Value* v = get(name);
    if (v == nullptr || (none_ok && v->kind == Value::Kind::kNone)) return fallback;
    if (v->kind != Value::Kind::kBool) {
      throw type_error(name, none_ok ? "True, False or None" : "True or False", *v);
    }
    return v->bool_value;
  }

  // A string or a list of strings.
  std::vector<std::string> get_strings(const char* name) const {
    const Value* v = get(name);
    if (v->kind == Value::Kind::kString) return {v->text};
    if (v->kind != Value::Kind::kList && v->kind != Value::Kind::kTuple) {
      throw type_error(name, "a string or a list of strings", *v);
    }
    std::vector<std::string> strings;
    for (const Value& item : v->items) {
      if (item.kind != Value::Kind::kString) {
        throw type_error(name, "a string or a list of strings", item);
      }
      strings.push_back(item.text);
    }
    return strings;
  }

  // An integer or a list of integers.
  std::vector<int64_t> get_ints(const char* name) const {
    const Value* v = get(name);
    if (v->kind == Value::Kind::kInt) return {v->int_value};
    if (v->kind != Value::Kind::kList && v->kind != Value::Kind::kTuple) {
      throw type_error(name, "an integer or a list of integers", *v);
    }
    std::vector<int64_t> ints;
    for (const Value& item : v->items) {
      if (item.kind != Value::Kind::kInt) {
        throw type_error(name, "an integer or a list of integers", item);
      }
      ints.push_back(item.int_value);
    }
    return ints;
  }

 private:
  std::string function_;
  std::string usage_;
  std::vector<std::pair<const char*, const Value*>> values_;
};

// An integer >= `min`; absent or None gives `fallback`.
int64_t int_at_least(const Args& args, const char* name, int64_t min, int64_t fallback);

// The argument `name`: a string or a list of strings, none with a NUL byte (the C API takes
// NUL-terminated names).
std::vector<std::string> file_names(const Args& args, const char* name);

// ---- the function table ----------------------------------------------------------------

enum class Role { kSource, kTransform };
enum class Passing { kAny, kPositionalOnly, kKeywordOnly };

using BuildFn = DatasetPtr (*)(const Args& args, const dinput_dataset_t* input);

struct FunctionSpec {
  const char* name;
  Role role;
  const char* usage;
  Passing passing;
  std::vector<Param> params;
  BuildFn build;
};

// `made` is passed by address because the call that fills it is another argument of the
// same call, and the order in which arguments are evaluated is unspecified.
DatasetPtr adopt(dinput_status_t code, dinput_dataset_t* const* made, const char* what);

extern const IntConstant kAutotune;
extern const IntConstant kShardHint;

// The function named `name` in the table, or null.
const FunctionSpec* find_function(const std::string& name);

// Python's rules for matching call arguments to parameters.
void bind(const FunctionSpec& spec, const Call& call, Args* args);

// ---- the builders, one per function of the table ---------------------------------------

// build_sources.cc
DatasetPtr build_range(const Args& args, const dinput_dataset_t*);
DatasetPtr build_from_tensors(const Args& args, const dinput_dataset_t*);
DatasetPtr build_from_tensor_slices(const Args& args, const dinput_dataset_t*);
DatasetPtr build_list_files(const Args& args, const dinput_dataset_t*);

// build_readers.cc
DatasetPtr build_text_lines(const Args& args, const dinput_dataset_t*);
DatasetPtr build_records(const Args& args, const dinput_dataset_t*);
DatasetPtr build_fixed_length_records(const Args& args, const dinput_dataset_t*);
DatasetPtr build_interleave(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_flat_map(const Args& args, const dinput_dataset_t* input);

// build_batching.cc
DatasetPtr build_padded_batch(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_bucket_by_sequence_length(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_window(const Args& args, const dinput_dataset_t* input);

// build_transforms.cc
DatasetPtr build_batch(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_repeat(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_shuffle(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_shard(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_take(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_skip(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_enumerate(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_unbatch(const Args&, const dinput_dataset_t* input);
DatasetPtr build_rebatch(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_prefetch(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_with_options(const Args& args, const dinput_dataset_t* input);
// build_images.cc
DatasetPtr build_decode_jpeg(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_decode_png(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_resize(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_center_crop(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_random_crop(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_random_resized_crop(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_random_flip_left_right(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_cast(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_normalize(const Args& args, const dinput_dataset_t* input);

// build_example.cc
DatasetPtr build_parse_example(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_parse_single_example(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_parse_sequence_example(const Args& args, const dinput_dataset_t* input);

// build_combine.cc
DatasetPtr build_zip(const Args& args, const dinput_dataset_t*);
DatasetPtr build_sample_from_datasets(const Args& args, const dinput_dataset_t*);
DatasetPtr build_choose_from_datasets(const Args& args, const dinput_dataset_t*);
DatasetPtr build_concatenate(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_cache(const Args& args, const dinput_dataset_t* input);
DatasetPtr build_ignore_errors(const Args& args, const dinput_dataset_t* input);

}  // namespace builder
}  // namespace dinput_tool

#endif  // DINPUT_TOOL_BUILDER_FUNCTIONS_H_
