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

const std::vector<FunctionSpec> &Functions() {
  static const std::vector<FunctionSpec> kFunctions = {
      // sources
      {"range",
       Role::kSource,
       "range(stop) or range(start, stop[, step])",
       Passing::kPositionalOnly,
       {{"start", true, "stop"}, {"stop", false}, {"step", false}},
       BuildRange},
      {"from_tensors",
       Role::kSource,
       "from_tensors(tensors)",
       Passing::kAny,
       {{"tensors", true}},
       BuildFromTensors},
      {"from_tensor_slices",
       Role::kSource,
       "from_tensor_slices(tensors)",
       Passing::kAny,
       {{"tensors", true}},
       BuildFromTensorSlices},
      {"text_lines",
       Role::kSource,
       "text_lines(filenames)",
       Passing::kAny,
       {{"filenames", true}},
       BuildTextLines},
      {"records",
       Role::kSource,
       "records(filenames, compression=None, buffer_size=None)",
       Passing::kAny,
       {{"filenames", true}, {"compression", false}, {"buffer_size", false}},
       BuildRecords},
      {"fixed_length_records",
       Role::kSource,
       "fixed_length_records(filenames, record_bytes, header_bytes=0, footer_bytes=0)",
       Passing::kAny,
       {{"filenames", true}, {"record_bytes", true}, {"header_bytes", false},
        {"footer_bytes", false}},
       BuildFixedLengthRecords},
      {"list_files",
       Role::kSource,
       "list_files(file_pattern, shuffle=False, seed=None)",
       Passing::kAny,
       {{"file_pattern", true}, {"shuffle", false}, {"seed", false}},
       BuildListFiles},
      // transformations
      {"batch",
       Role::kTransform,
       "batch(batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None)",
       Passing::kAny,
       {{"batch_size", true},
        {"drop_remainder", false},
        {"num_parallel_calls", false},
        {"deterministic", false}},
       BuildBatch},
      {"repeat",
       Role::kTransform,
       "repeat(count=None)",
       Passing::kAny,
       {{"count", false}},
       BuildRepeat},
      {"shuffle",
       Role::kTransform,
       "shuffle(buffer_size, seed=None, reshuffle_each_iteration=True)",
       Passing::kAny,
       {{"buffer_size", true}, {"seed", false}, {"reshuffle_each_iteration", false}},
       BuildShuffle},
      {"shard",
       Role::kTransform,
       "shard(num_shards, index)",
       Passing::kAny,
       {{"num_shards", true}, {"index", true}},
       BuildShard},
      {"take", Role::kTransform, "take(count)", Passing::kAny, {{"count", true}}, BuildTake},
      {"skip", Role::kTransform, "skip(count)", Passing::kAny, {{"count", true}}, BuildSkip},
      {"enumerate",
       Role::kTransform,
       "enumerate(start=0)",
       Passing::kAny,
       {{"start", false}},
       BuildEnumerate},
      {"unbatch", Role::kTransform, "unbatch()", Passing::kAny, {}, BuildUnbatch},
      {"rebatch",
       Role::kTransform,
       "rebatch(batch_size, drop_remainder=False)",
       Passing::kAny,
       {{"batch_size", true}, {"drop_remainder", false}},
       BuildRebatch},
      {"prefetch",
       Role::kTransform,
       "prefetch(buffer_size)",
       Passing::kAny,
       {{"buffer_size", true}},
       BuildPrefetch},
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
       BuildInterleave},
      {"with_options",
       Role::kTransform,
       "with_options(auto_shard_policy=OFF|AUTO|FILE|DATA|HINT, skip_corrupt_records=False, "
       "max_record_bytes=268435456, map_files=False, allow_nonregular_files=False, "
       "deterministic=True)",
       Passing::kKeywordOnly,
       {{"auto_shard_policy", false},
        {"skip_corrupt_records", false},
        {"max_record_bytes", false},
        {"map_files", false},
        {"allow_nonregular_files", false},
        {"deterministic", false}},
       BuildWithOptions},
  };
  return kFunctions;
}

std::string NamesWithRole(Role role) {
  std::string names;
  for (const FunctionSpec &f : Functions()) {
    if (f.role != role) continue;
    if (!names.empty()) names += ", ";
    names += f.name;
  }
  return names;
}

}  // namespace

const FunctionSpec *FindFunction(const std::string &name) {
  for (const FunctionSpec &f : Functions()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// Python's rules for matching call arguments to parameters.
Status Bind(const FunctionSpec &spec, const Call &call, Args *args) {
  const std::string usage = std::string("; usage: ") + spec.usage;
  const std::string prefix = call.name + "(): ";
  std::vector<const Value *> bound(spec.params.size(), nullptr);
  size_t num_positional = 0;
  for (const Argument &arg : call.args) num_positional += arg.keyword.empty() ? 1 : 0;
  size_t positional = 0;
  for (const Argument &arg : call.args) {
    if (arg.keyword.empty()) {
      if (spec.passing == Passing::kKeywordOnly) {
        return InvalidArgument(prefix +
                               "takes keyword arguments only, got a positional "
                               "argument at position " +
                               std::to_string(arg.pos) + usage);
      }
      if (positional >= spec.params.size()) {
        return InvalidArgument(prefix + "takes at most " + std::to_string(spec.params.size()) +
                               " positional argument" + (spec.params.size() == 1 ? "" : "s") +
                               ", got " + std::to_string(num_positional) + usage);
      }
      bound[positional++] = &arg.value;
      continue;
    }
    if (spec.passing == Passing::kPositionalOnly) {
      return InvalidArgument(prefix + "takes no keyword arguments, got '" + arg.keyword +
                             "' at position " + std::to_string(arg.pos) + usage);
    }
    size_t i = 0;
    while (i < spec.params.size() && arg.keyword != spec.params[i].name) ++i;
    if (i == spec.params.size()) {
      return InvalidArgument(prefix + "unexpected keyword argument '" + arg.keyword +
                             "' at position " + std::to_string(arg.pos) +
                             DidYouMean(arg.keyword, spec.params, [](const auto &p) { return p.name; }) + usage);
    }
    if (bound[i] != nullptr) {
      return InvalidArgument(prefix + "got multiple values for argument '" + arg.keyword + "'" +
                             usage);
    }
    bound[i] = &arg.value;
  }
  for (size_t i = 0; i < spec.params.size(); ++i) {
    if (bound[i] == nullptr && spec.params[i].required) {
      const char *shown = spec.params[i].shown ? spec.params[i].shown : spec.params[i].name;
      return InvalidArgument(prefix + "missing required argument '" + shown + "'" + usage);
    }
    args->Set(spec.params[i].name, bound[i]);
  }
  return OkStatus();
}

}  // namespace builder

namespace {

using builder::Args;
using builder::Bind;
using builder::FindFunction;
using builder::Functions;
using builder::FunctionSpec;
using builder::NamesWithRole;
using builder::Role;

// ---- placeholders ----------------------------------------------------------------------

struct PlaceholderSpec {
  const char *name;
  size_t num_args;
};

const PlaceholderSpec kPlaceholders[] = {
    {"num_input_pipelines", 0},
    {"input_pipeline_id", 0},
    {"num_replicas_in_sync", 0},
    {"per_replica_batch_size", 1},
};

Status CheckValue(const Value &v, bool allowed) {
  if (v.kind == Value::Kind::kPlaceholder) {
    if (!allowed) {
      return InvalidArgument("the placeholder $" + v.text + " at position " +
                             std::to_string(v.pos) + " is only available with --from-function");
    }
    for (const PlaceholderSpec &p : kPlaceholders) {
      if (v.text != p.name) continue;
      if (v.items.size() != p.num_args) {
        return InvalidArgument(
            "the placeholder $" + v.text + " at position " + std::to_string(v.pos) +
            (p.num_args == 0 ? " takes no arguments"
                             : " takes one integer argument, e.g. $per_replica_batch_size(64)"));
      }
      for (const Value &arg : v.items) {
        if (arg.kind != Value::Kind::kInt) {
          return InvalidArgument("the argument of $" + v.text + " at position " +
                                 std::to_string(arg.pos) + " must be an integer, got " +
                                 DescribeKind(arg.kind));
        }
      }
      return OkStatus();
    }
    return InvalidArgument("unknown placeholder $" + v.text + " at position " +
                           std::to_string(v.pos) +
                           "; known: $num_input_pipelines, $input_pipeline_id, "
                           "$num_replicas_in_sync, $per_replica_batch_size(G)");
  }
  for (const Value &item : v.items) DINPUT_TOOL_RETURN_IF_ERROR(CheckValue(item, allowed));
  for (const Argument &arg : v.args) DINPUT_TOOL_RETURN_IF_ERROR(CheckValue(arg.value, allowed));
  return OkStatus();
}

Status ResolveValue(Value *v, const InputPipelineInfo &info) {
  if (v->kind != Value::Kind::kPlaceholder) {
    for (Value &item : v->items) DINPUT_TOOL_RETURN_IF_ERROR(ResolveValue(&item, info));
    for (Argument &arg : v->args) DINPUT_TOOL_RETURN_IF_ERROR(ResolveValue(&arg.value, info));
    return OkStatus();
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
    DINPUT_TOOL_RETURN_IF_ERROR(info.per_replica_batch_size(v->items[0].int_value, &resolved));
  } else {
    return CheckValue(*v, true);  // reports what is wrong with it
  }
  v->kind = Value::Kind::kInt;
  v->int_value = resolved;
  v->items.clear();
  v->text.clear();
  return OkStatus();
}
}  // namespace

bool ParseAutoShardPolicy(const std::string &name, dinput_auto_shard_policy_t *out) {
  std::string bare = name;
  for (const char *prefix : {"tf.data.experimental.AutoShardPolicy.", "AutoShardPolicy."}) {
    size_t n = std::strlen(prefix);
    if (bare.compare(0, n, prefix) == 0) {
      bare = bare.substr(n);
      break;
    }
  }
  for (char &c : bare) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  static const std::pair<const char *, dinput_auto_shard_policy_t> kPolicies[] = {
      {"OFF", DINPUT_AUTO_SHARD_OFF},   {"AUTO", DINPUT_AUTO_SHARD_AUTO},
      {"FILE", DINPUT_AUTO_SHARD_FILE}, {"DATA", DINPUT_AUTO_SHARD_DATA},
      {"HINT", DINPUT_AUTO_SHARD_HINT},
  };
  for (const auto &policy : kPolicies) {
    if (bare == policy.first) {
      *out = policy.second;
      return true;
    }
  }
  return false;
}

Status CheckPlaceholders(const Pipeline &pipeline, bool allowed) {
  for (const Call &call : pipeline.calls) {
    for (const Argument &arg : call.args) {
      DINPUT_TOOL_RETURN_IF_ERROR(CheckValue(arg.value, allowed));
    }
  }
  return OkStatus();
}

Status ResolvePlaceholders(const Pipeline &pipeline, const InputPipelineInfo &info, Pipeline *out) {
  Pipeline resolved = pipeline;
  for (Call &call : resolved.calls) {
    for (Argument &arg : call.args) DINPUT_TOOL_RETURN_IF_ERROR(ResolveValue(&arg.value, info));
  }
  *out = std::move(resolved);
  return OkStatus();
}

Status BuildDataset(const Pipeline &pipeline, DatasetPtr *out) {
  DINPUT_TOOL_RETURN_IF_ERROR(CheckPlaceholders(pipeline, false));
  DatasetPtr current;
  for (size_t i = 0; i < pipeline.calls.size(); ++i) {
    const Call &call = pipeline.calls[i];
    const FunctionSpec *spec = FindFunction(call.name);
    const std::string where = " at position " + std::to_string(call.pos);
    if (spec == nullptr) {
      return InvalidArgument("unknown function '" + call.name + "'" + where +
                             DidYouMean(call.name, Functions(), [](const FunctionSpec &f) { return f.name; }) + "; " +
                             (i == 0 ? "sources: " + NamesWithRole(Role::kSource)
                                     : "transformations: " + NamesWithRole(Role::kTransform)));
    }
    if (i == 0 && spec->role != Role::kSource) {
      return InvalidArgument(
          call.name + "()" + where +
          " is a transformation; a pipeline starts with a source: " + NamesWithRole(Role::kSource));
    }
    if (i > 0 && spec->role != Role::kTransform) {
      return InvalidArgument(call.name + "()" + where +
                             " is a source and cannot be applied to a dataset; "
                             "transformations: " +
                             NamesWithRole(Role::kTransform));
    }
    Args args(call.name, spec->usage);
    DINPUT_TOOL_RETURN_IF_ERROR(Bind(*spec, call, &args));
    DatasetPtr next;
    DINPUT_TOOL_RETURN_IF_ERROR(spec->build(args, current.get(), &next));
    current = std::move(next);
  }
  if (!current) return InvalidArgument("the pipeline is empty");
  *out = std::move(current);
  return OkStatus();
}

}  // namespace dinput_tool
