#include "pipeline_builder.h"

#include <cctype>
#include <cstring>
#include <utility>
#include <vector>

#include "builder_functions.h"
#include "suggest.h"

namespace dinput_tool {

namespace builder {

namespace {

// ---- the function table ----------------------------------------------------------------

const std::vector<FunctionSpec>& functions() {
  static const std::vector<FunctionSpec> kFunctions = {
      // sources
      {"range",
       Role::kSource,
       "range(stop) or range(start, stop[, step])",
       Passing::kPositionalOnly,
       {{"start", true, "stop"}, {"stop", false}, {"step", false}},
       build_range},
      {"from_tensors",
       Role::kSource,
       "from_tensors(tensors)",
       Passing::kAny,
       {{"tensors", true}},
       build_from_tensors},
      {"from_tensor_slices",
       Role::kSource,
       "from_tensor_slices(tensors)",
       Passing::kAny,
       {{"tensors", true}},
       build_from_tensor_slices},
      {"text_lines",
       Role::kSource,
       "text_lines(filenames)",
       Passing::kAny,
       {{"filenames", true}},
       build_text_lines},
      {"records",
       Role::kSource,
       "records(filenames, compression=None, buffer_size=None)",
       Passing::kAny,
       {{"filenames", true}, {"compression", false}, {"buffer_size", false}},
       build_records},
      {"fixed_length_records",
       Role::kSource,
       "fixed_length_records(filenames, record_bytes, header_bytes=0, footer_bytes=0)",
       Passing::kAny,
       {{"filenames", true},
        {"record_bytes", true},
        {"header_bytes", false},
        {"footer_bytes", false}},
       build_fixed_length_records},
      {"list_files",
       Role::kSource,
       "list_files(file_pattern, shuffle=False, seed=None)",
       Passing::kAny,
       {{"file_pattern", true}, {"shuffle", false}, {"seed", false}},
       build_list_files},
      // transformations
      {"batch",
       Role::kTransform,
       "batch(batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None)",
       Passing::kAny,
       {{"batch_size", true},
        {"drop_remainder", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_batch},
      {"repeat",
       Role::kTransform,
       "repeat(count=None)",
       Passing::kAny,
       {{"count", false}},
       build_repeat},
      {"shuffle",
       Role::kTransform,
       "shuffle(buffer_size, seed=None, reshuffle_each_iteration=True)",
       Passing::kAny,
       {{"buffer_size", true}, {"seed", false}, {"reshuffle_each_iteration", false}},
       build_shuffle},
      {"shard",
       Role::kTransform,
       "shard(num_shards, index)",
       Passing::kAny,
       {{"num_shards", true}, {"index", true}},
       build_shard},
      {"take", Role::kTransform, "take(count)", Passing::kAny, {{"count", true}}, build_take},
      {"skip", Role::kTransform, "skip(count)", Passing::kAny, {{"count", true}}, build_skip},
      {"enumerate",
       Role::kTransform,
       "enumerate(start=0)",
       Passing::kAny,
       {{"start", false}},
       build_enumerate},
      {"unbatch", Role::kTransform, "unbatch()", Passing::kAny, {}, build_unbatch},
      {"rebatch",
       Role::kTransform,
       "rebatch(batch_size, drop_remainder=False)",
       Passing::kAny,
       {{"batch_size", true}, {"drop_remainder", false}},
       build_rebatch},
      {"prefetch",
       Role::kTransform,
       "prefetch(buffer_size)",
       Passing::kAny,
       {{"buffer_size", true}},
       build_prefetch},
      {"interleave",
       Role::kTransform,
       "interleave(READER, cycle_length=AUTOTUNE, block_length=1, num_parallel_calls=None, "
       "deterministic=None) with READER records, text_lines or a call of a reader without "
       "files, e.g. records(compression=\"ZSTD\") or fixed_length_records(record_bytes=16)",
       Passing::kAny,
       {{"map_func", true},
        {"cycle_length", false},
        {"block_length", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_interleave},
      // several datasets, cache and ignore_errors (build_combine.cc)
      {"zip",
       Role::kSource,
       "zip(dataset, dataset, ...) or zip((dataset, ...)), each dataset a pipeline such as "
       "range(3).batch(2)",
       Passing::kPositionalOnly,
       {{"datasets", true},
        {"dataset_2", false},
        {"dataset_3", false},
        {"dataset_4", false},
        {"dataset_5", false},
        {"dataset_6", false},
        {"dataset_7", false},
        {"dataset_8", false}},
       build_zip},
      {"sample_from_datasets",
       Role::kSource,
       "sample_from_datasets([dataset, ...], weights=None, seed=None, "
       "stop_on_empty_dataset=False)",
       Passing::kAny,
       {{"datasets", true}, {"weights", false}, {"seed", false}, {"stop_on_empty_dataset", false}},
       build_sample_from_datasets},
      {"choose_from_datasets",
       Role::kSource,
       "choose_from_datasets([dataset, ...], choice_dataset, stop_on_empty_dataset=True)",
       Passing::kAny,
       {{"datasets", true}, {"choice_dataset", true}, {"stop_on_empty_dataset", false}},
       build_choose_from_datasets},
      {"concatenate",
       Role::kTransform,
       "concatenate(dataset), dataset a pipeline such as range(5)",
       Passing::kAny,
       {{"dataset", true}},
       build_concatenate},
      {"cache",
       Role::kTransform,
       "cache(filename=\"\")",
       Passing::kAny,
       {{"filename", false}},
       build_cache},
      {"ignore_errors",
       Role::kTransform,
       "ignore_errors(log_warning=False)",
       Passing::kAny,
       {{"log_warning", false}},
       build_ignore_errors},
      // padded and windowed batches, and flat_map over a reader
      {"padded_batch",
       Role::kTransform,
       "padded_batch(batch_size, padded_shapes=None, padding_values=None, drop_remainder=False)",
       Passing::kAny,
       {{"batch_size", true},
        {"padded_shapes", false},
        {"padding_values", false},
        {"drop_remainder", false}},
       build_padded_batch},
      {"bucket_by_sequence_length",
       Role::kTransform,
       "bucket_by_sequence_length(length_component, bucket_boundaries, bucket_batch_sizes, "
       "padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False, "
       "drop_remainder=False) with the length of an element the first dimension of component "
       "length_component",
       Passing::kAny,
       {{"length_component", true},
        {"bucket_boundaries", true},
        {"bucket_batch_sizes", true},
        {"padded_shapes", false},
        {"padding_values", false},
        {"pad_to_bucket_boundary", false},
        {"drop_remainder", false}},
       build_bucket_by_sequence_length},
      {"window",
       Role::kTransform,
       "window(size, shift=None, stride=1, drop_remainder=False), each window one element of "
       "stacked rows",
       Passing::kAny,
       {{"size", true}, {"shift", false}, {"stride", false}, {"drop_remainder", false}},
       build_window},
      {"flat_map",
       Role::kTransform,
       "flat_map(READER) with READER records, text_lines or a call of a reader without files, "
       "e.g. records(compression=\"ZSTD\")",
       Passing::kAny,
       {{"map_func", true}},
       build_flat_map},
      {"with_options",
       Role::kTransform,
       "with_options(auto_shard_policy=OFF|AUTO|FILE|DATA|HINT, skip_corrupt_records=False, "
       "max_record_bytes=268435456, map_files=False, allow_nonregular_files=False, "
       "deterministic=True, ram_budget=0)",
       Passing::kKeywordOnly,
       {{"auto_shard_policy", false},
        {"skip_corrupt_records", false},
        {"max_record_bytes", false},
        {"map_files", false},
        {"allow_nonregular_files", false},
        {"deterministic", false},
        {"ram_budget", false}},
       build_with_options},
      // tf.train.Example parsing (build_example.cc)
      {"parse_example",
       Role::kTransform,
       "parse_example({\"key\": FixedLenFeature(shape, dtype, default_value=None) | "
       "VarLenFeature(dtype) | FixedLenSequenceFeature(shape, dtype, allow_missing=False, "
       "default_value=None), ...}, component=0) with dtype int64, float32 or bytes",
       Passing::kAny,
       {{"features", true}, {"component", false}},
       build_parse_example},
      {"parse_single_example",
       Role::kTransform,
       "parse_single_example({\"key\": FEATURE, ...}, component=0), FEATURE as in "
       "parse_example",
       Passing::kAny,
       {{"features", true}, {"component", false}},
       build_parse_single_example},
      {"parse_sequence_example",
       Role::kTransform,
       "parse_sequence_example(context_features=None, sequence_features=None, component=0), "
       "each a dict {\"key\": FEATURE, ...} as in parse_example",
       Passing::kAny,
       {{"context_features", false}, {"sequence_features", false}, {"component", false}},
       build_parse_sequence_example},
      // images (docs/images.md)
      {"decode_jpeg",
       Role::kTransform,
       "decode_jpeg(channels=0, component=0, num_parallel_calls=None, deterministic=None)",
       Passing::kAny,
       {{"channels", false},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_decode_jpeg},
      {"decode_png",
       Role::kTransform,
       "decode_png(channels=0, component=0, num_parallel_calls=None, deterministic=None)",
       Passing::kAny,
       {{"channels", false},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_decode_png},
      {"resize",
       Role::kTransform,
       "resize(size, component=0, num_parallel_calls=None, deterministic=None) with size [height, "
       "width]",
       Passing::kAny,
       {{"size", true},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_resize},
      {"center_crop",
       Role::kTransform,
       "center_crop(size, component=0, num_parallel_calls=None, deterministic=None)",
       Passing::kAny,
       {{"size", true},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_center_crop},
      {"random_crop",
       Role::kTransform,
       "random_crop(size, seed=None, component=0, num_parallel_calls=None, deterministic=None)",
       Passing::kAny,
       {{"size", true},
        {"seed", false},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_random_crop},
      {"random_resized_crop",
       Role::kTransform,
       "random_resized_crop(size, scale=[0.08, 1.0], ratio=[0.75, 1.3333], seed=None, component=0, "
       "num_parallel_calls=None, deterministic=None)",
       Passing::kAny,
       {{"size", true},
        {"scale", false},
        {"ratio", false},
        {"seed", false},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_random_resized_crop},
      {"random_flip_left_right",
       Role::kTransform,
       "random_flip_left_right(seed=None, component=0, num_parallel_calls=None, "
       "deterministic=None)",
       Passing::kAny,
       {{"seed", false},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_random_flip_left_right},
      {"cast",
       Role::kTransform,
       "cast(dtype=float32, component=0, num_parallel_calls=None, deterministic=None) with dtype "
       "float32 or float16",
       Passing::kAny,
       {{"dtype", false},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_cast},
      {"normalize",
       Role::kTransform,
       "normalize(mean, stddev, dtype=float32, component=0, num_parallel_calls=None, "
       "deterministic=None)",
       Passing::kAny,
       {{"mean", true},
        {"stddev", true},
        {"dtype", false},
        {"component", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       build_normalize},
  };
  return kFunctions;
}

std::string names_with_role(Role role) {
  std::string names;
  for (const FunctionSpec& f : functions()) {
    if (f.role != role) continue;
    if (!names.empty()) names += ", ";
    names += f.name;
  }
  return names;
}

}  // namespace

const FunctionSpec* find_function(const std::string& name) {
  for (const FunctionSpec& f : functions()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// Python's rules for matching call arguments to parameters.
void bind(const FunctionSpec& spec, const Call& call, Args* args) {
  const std::string usage = std::string("; usage: ") + spec.usage;
  const std::string prefix = call.name + "(): ";
  std::vector<const Value*> bound(spec.params.size(), nullptr);
  size_t num_positional = 0;
  for (const Argument& arg : call.args) num_positional += arg.keyword.empty() ? 1 : 0;
  size_t positional = 0;
  for (const Argument& arg : call.args) {
    if (arg.keyword.empty()) {
      if (spec.passing == Passing::kKeywordOnly) {
        throw invalid_argument(prefix +
                               "takes keyword arguments only, got a positional "
                               "argument at position " +
                               std::to_string(arg.pos) + usage);
      }
      if (positional >= spec.params.size()) {
        throw invalid_argument(prefix + "takes at most " + std::to_string(spec.params.size()) +
                               " positional argument" + (spec.params.size() == 1 ? "" : "s") +
                               ", got " + std::to_string(num_positional) + usage);
      }
      bound[positional++] = &arg.value;
      continue;
    }
    if (spec.passing == Passing::kPositionalOnly) {
      throw invalid_argument(prefix + "takes no keyword arguments, got '" + arg.keyword +
                             "' at position " + std::to_string(arg.pos) + usage);
    }
    size_t i = 0;
    while (i < spec.params.size() && arg.keyword != spec.params[i].name) ++i;
    if (i == spec.params.size()) {
      throw invalid_argument(
          prefix + "unexpected keyword argument '" + arg.keyword + "' at position " +
          std::to_string(arg.pos) +
          did_you_mean(arg.keyword, spec.params, [](const auto& p) { return p.name; }) + usage);
    }
    if (bound[i] != nullptr) {
      throw invalid_argument(prefix + "got multiple values for argument '" + arg.keyword + "'" +
                             usage);
    }
    bound[i] = &arg.value;
  }
  for (size_t i = 0; i < spec.params.size(); ++i) {
    if (bound[i] == nullptr && spec.params[i].required) {
      const char* shown = spec.params[i].shown ? spec.params[i].shown : spec.params[i].name;
      throw invalid_argument(prefix + "missing required argument '" + shown + "'" + usage);
    }
    args->set(spec.params[i].name, bound[i]);
  }
}

}  // namespace builder

namespace {

using builder::Args;
using builder::bind;
using builder::find_function;
using builder::functions;
using builder::FunctionSpec;
using builder::names_with_role;
using builder::Role;

// ---- placeholders ----------------------------------------------------------------------

struct PlaceholderSpec {
  const char* name;
  size_t num_args;
};

const PlaceholderSpec kPlaceholders[] = {
    {"num_input_pipelines", 0},
    {"input_pipeline_id", 0},
    {"num_replicas_in_sync", 0},
    {"per_replica_batch_size", 1},
};

void check_value(const Value& v, bool allowed) {
  if (v.kind == Value::Kind::kPlaceholder) {
    if (!allowed) {
      throw invalid_argument("the placeholder $" + v.text + " at position " +
                             std::to_string(v.pos) + " is only available with --from-function");
    }
    for (const PlaceholderSpec& p : kPlaceholders) {
      if (v.text != p.name) continue;
      if (v.items.size() != p.num_args) {
        throw invalid_argument(
            "the placeholder $" + v.text + " at position " + std::to_string(v.pos) +
            (p.num_args == 0 ? " takes no arguments"
                             : " takes one integer argument, e.g. $per_replica_batch_size(64)"));
      }
      for (const Value& arg : v.items) {
        if (arg.kind != Value::Kind::kInt) {
          throw invalid_argument("the argument of $" + v.text + " at position " +
                                 std::to_string(arg.pos) + " must be an integer, got " +
                                 describe_kind(arg.kind));
        }
      }
      return;
    }
    throw invalid_argument("unknown placeholder $" + v.text + " at position " +
                           std::to_string(v.pos) +
                           "; known: $num_input_pipelines, $input_pipeline_id, "
                           "$num_replicas_in_sync, $per_replica_batch_size(G)");
  }
  for (const Value& item : v.items) check_value(item, allowed);
  for (const Argument& arg : v.args) check_value(arg.value, allowed);
  for (const Call& call : v.chain)
    for (const Argument& arg : call.args) check_value(arg.value, allowed);
}

void resolve_value(Value* v, const InputPipelineInfo& info) {
  if (v->kind != Value::Kind::kPlaceholder) {
    for (Value& item : v->items) resolve_value(&item, info);
    for (Argument& arg : v->args) resolve_value(&arg.value, info);
    for (Call& call : v->chain)
      for (Argument& arg : call.args) resolve_value(&arg.value, info);
    return;
  }
  int64_t resolved = 0;
  if (v->text == "num_input_pipelines") {
    resolved = info.num_input_pipelines;
  } else if (v->text == "input_pipeline_id") {
    resolved = info.input_pipeline_id;
  } else if (v->text == "num_replicas_in_sync") {
    resolved = info.num_replicas_in_sync;
  } else if (v->text == "per_replica_batch_size" && v->items.size() == 1 &&
             info.per_replica_batch_size) {
    resolved = info.per_replica_batch_size(v->items[0].int_value);
  } else {
    return check_value(*v, true);  // reports what is wrong with it
  }
  v->kind = Value::Kind::kInt;
  v->int_value = resolved;
  v->items.clear();
  v->text.clear();
}
}  // namespace

bool parse_auto_shard_policy(const std::string& name, dinput_auto_shard_policy_t* out) {
  std::string bare = name;
  for (const char* prefix : {"tf.data.experimental.AutoShardPolicy.", "AutoShardPolicy."}) {
    size_t n = std::strlen(prefix);
    if (bare.compare(0, n, prefix) == 0) {
      bare = bare.substr(n);
      break;
    }
  }
  for (char& c : bare) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::pair<const char*, dinput_auto_shard_policy_t> kPolicies[] = {
      {"OFF", DINPUT_AUTO_SHARD_OFF},   {"AUTO", DINPUT_AUTO_SHARD_AUTO},
      {"FILE", DINPUT_AUTO_SHARD_FILE}, {"DATA", DINPUT_AUTO_SHARD_DATA},
      {"HINT", DINPUT_AUTO_SHARD_HINT},
  };
  for (const auto& policy : kPolicies) {
    if (bare == policy.first) {
      *out = policy.second;
      return true;
    }
  }
  return false;
}

void check_placeholders(const Pipeline& pipeline, bool allowed) {
  for (const Call& call : pipeline.calls) {
    for (const Argument& arg : call.args) {
      check_value(arg.value, allowed);
    }
  }
}

Pipeline resolve_placeholders(const Pipeline& pipeline, const InputPipelineInfo& info) {
  Pipeline resolved = pipeline;
  for (Call& call : resolved.calls) {
    for (Argument& arg : call.args) resolve_value(&arg.value, info);
  }
  return resolved;
}

namespace {

void rename_cache_files(std::vector<Call>* calls, int64_t worker, int64_t workers, bool* changed);

void rename_cache_files(Value* v, int64_t worker, int64_t workers, bool* changed) {
  for (Value& item : v->items) rename_cache_files(&item, worker, workers, changed);
  for (Argument& arg : v->args) rename_cache_files(&arg.value, worker, workers, changed);
  rename_cache_files(&v->chain, worker, workers, changed);
}

void rename_cache_files(std::vector<Call>* calls, int64_t worker, int64_t workers, bool* changed) {
  for (Call& call : *calls) {
    for (size_t i = 0; i < call.args.size(); ++i) {
      Argument& arg = call.args[i];
      const bool filename = arg.keyword == "filename" || (arg.keyword.empty() && i == 0);
      if (call.name == "cache" && filename && arg.value.kind == Value::Kind::kString &&
          !arg.value.text.empty()) {
        arg.value.text = worker_cache_file(arg.value.text, worker, workers);
        *changed = true;
        continue;
      }
      rename_cache_files(&arg.value, worker, workers, changed);
    }
  }
}

}  // namespace

std::string worker_cache_file(const std::string& filename, int64_t worker, int64_t workers) {
  return filename + ".worker-" + std::to_string(worker) + "-of-" + std::to_string(workers);
}

Pipeline with_worker_cache_files(const Pipeline& pipeline, int64_t worker, int64_t workers,
                                 bool* changed) {
  Pipeline renamed = pipeline;
  bool any = false;
  rename_cache_files(&renamed.calls, worker, workers, &any);
  if (changed) *changed = any;
  return renamed;
}

DatasetPtr build_dataset(const Pipeline& pipeline) {
  check_placeholders(pipeline, false);
  DatasetPtr current;
  for (size_t i = 0; i < pipeline.calls.size(); ++i) {
    const Call& call = pipeline.calls[i];
    const FunctionSpec* spec = find_function(call.name);
    const std::string where = " at position " + std::to_string(call.pos);
    if (spec == nullptr) {
      throw invalid_argument(
          "unknown function '" + call.name + "'" + where +
          did_you_mean(call.name, functions(), [](const FunctionSpec& f) { return f.name; }) +
          "; " +
          (i == 0 ? "sources: " + names_with_role(Role::kSource)
                  : "transformations: " + names_with_role(Role::kTransform)));
    }
    if (i == 0 && spec->role != Role::kSource) {
      throw invalid_argument(call.name + "()" + where +
                             " is a transformation; a pipeline starts with a source: " +
                             names_with_role(Role::kSource));
    }
    if (i > 0 && spec->role != Role::kTransform) {
      throw invalid_argument(call.name + "()" + where +
                             " is a source and cannot be applied to a dataset; "
                             "transformations: " +
                             names_with_role(Role::kTransform));
    }
    Args args(call.name, spec->usage);
    bind(*spec, call, &args);
    current = spec->build(args, current.get());
  }
  if (!current) throw invalid_argument("the pipeline is empty");
  return current;
}

}  // namespace dinput_tool
