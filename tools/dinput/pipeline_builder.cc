#include "pipeline_builder.h"

#include <cctype>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <new>
#include <utility>
#include <vector>

#include "compression.h"
#include "suggest.h"
#include "tensor_literal.h"

namespace dinput_tool {

namespace {

// ---- named constants -------------------------------------------------------------------

// A name written in the chain matches `canonical` bare or with one of the module paths a
// user may copy from Python code.
bool NameMatches(const std::string &written, const std::string &canonical,
                 std::initializer_list<const char *> prefixes) {
  if (written == canonical) return true;
  for (const char *prefix : prefixes) {
    if (written == std::string(prefix) + canonical) return true;
  }
  return false;
}

bool IsAutotune(const std::string &name) {
  return NameMatches(name, "AUTOTUNE", {"tf.data.", "tf.data.experimental.", "data."});
}

bool IsShardHint(const std::string &name) {
  return NameMatches(name, "SHARD_HINT", {"tf.data.experimental.", "data.experimental."});
}

// ---- argument binding ------------------------------------------------------------------

struct Param {
  const char *name;
  bool required;
  const char *shown = nullptr;  // the name in messages, when it differs (range's first)
};

// A named constant an integer parameter also accepts, e.g. AUTOTUNE for prefetch.
struct IntConstant {
  const char *shown;  // how the error message spells it
  bool (*matches)(const std::string &);
  int64_t value;
};

class Args {
 public:
  Args(std::string function, std::string usage)
      : function_(std::move(function)), usage_(std::move(usage)) {}

  void Set(const char *name, const Value *value) { values_.emplace_back(name, value); }

  const Value *Get(const char *name) const {
    for (const auto &entry : values_) {
      if (std::strcmp(entry.first, name) == 0) return entry.second;
    }
    return nullptr;
  }

  const std::string &function() const { return function_; }

  Status Error(const char *name, const std::string &problem) const {
    return InvalidArgument(function_ + "(): argument '" + name + "' " + problem +
                           "; usage: " + usage_);
  }

  Status TypeError(const char *name, const std::string &wanted, const Value &got) const {
    return Error(name, "must be " + wanted + ", got " + DescribeKind(got.kind) + " at position " +
                           std::to_string(got.pos));
  }

  // An integer argument; absent or None gives `fallback` when `none_ok`.
  Status Int(const char *name, int64_t *out, std::initializer_list<IntConstant> constants = {},
             bool none_ok = false, int64_t fallback = 0) const {
    return IntShownAs(name, name, out, constants, none_ok, fallback);
  }

  // Int for a parameter whose meaning depends on the call, named `shown` in messages.
  Status IntShownAs(const char *name, const char *shown, int64_t *out,
                    std::initializer_list<IntConstant> constants = {}, bool none_ok = false,
                    int64_t fallback = 0) const {
    const Value *v = Get(name);
    name = shown;
    if (v == nullptr || (none_ok && v->kind == Value::Kind::kNone)) {
      *out = fallback;
      return OkStatus();
    }
    if (v->kind == Value::Kind::kInt) {
      *out = v->int_value;
      return OkStatus();
    }
    std::string wanted = "an integer";
    if (v->kind == Value::Kind::kName) {
      for (const IntConstant &c : constants) {
        if (c.matches(v->text)) {
          *out = c.value;
          return OkStatus();
        }
      }
    }
    for (const IntConstant &c : constants) wanted += std::string(" or ") + c.shown;
    if (none_ok) wanted += " or None";
    if (v->kind == Value::Kind::kName) {
      return Error(name, "must be " + wanted + ", got the name '" + v->text + "' at position " +
                             std::to_string(v->pos));
    }
    return TypeError(name, wanted, *v);
  }

  // A bool argument; absent (or None, when `none_ok`) gives `fallback`.
  Status Bool(const char *name, bool *out, bool fallback, bool none_ok = false) const {
    const Value *v = Get(name);
    if (v == nullptr || (none_ok && v->kind == Value::Kind::kNone)) {
      *out = fallback;
      return OkStatus();
    }
    if (v->kind != Value::Kind::kBool) {
      return TypeError(name, none_ok ? "True, False or None" : "True or False", *v);
    }
    *out = v->bool_value;
    return OkStatus();
  }

  // A string or a list of strings.
  Status Strings(const char *name, std::vector<std::string> *out) const {
    const Value *v = Get(name);
    if (v->kind == Value::Kind::kString) {
      out->push_back(v->text);
      return OkStatus();
    }
    if (v->kind != Value::Kind::kList && v->kind != Value::Kind::kTuple) {
      return TypeError(name, "a string or a list of strings", *v);
    }
    for (const Value &item : v->items) {
      if (item.kind != Value::Kind::kString) {
        return TypeError(name, "a string or a list of strings", item);
      }
      out->push_back(item.text);
    }
    return OkStatus();
  }

  // An integer or a list of integers.
  Status Ints(const char *name, std::vector<int64_t> *out) const {
    const Value *v = Get(name);
    if (v->kind == Value::Kind::kInt) {
      out->push_back(v->int_value);
      return OkStatus();
    }
    if (v->kind != Value::Kind::kList && v->kind != Value::Kind::kTuple) {
      return TypeError(name, "an integer or a list of integers", *v);
    }
    for (const Value &item : v->items) {
      if (item.kind != Value::Kind::kInt) {
        return TypeError(name, "an integer or a list of integers", item);
      }
      out->push_back(item.int_value);
    }
    return OkStatus();
  }

 private:
  std::string function_;
  std::string usage_;
  std::vector<std::pair<const char *, const Value *>> values_;
};

// ---- the function table ----------------------------------------------------------------

enum class Role { kSource, kTransform };
enum class Passing { kAny, kPositionalOnly, kKeywordOnly };

using BuildFn = Status (*)(const Args &args, const dinput_dataset_t *input, DatasetPtr *out);

struct FunctionSpec {
  const char *name;
  Role role;
  const char *usage;
  Passing passing;
  std::vector<Param> params;
  BuildFn build;
};

// `made` is passed by address because the call that fills it is another argument of the
// same call, and the order in which arguments are evaluated is unspecified.
Status Made(dinput_status_t code, dinput_dataset_t *const *made, const char *what,
            DatasetPtr *out) {
  if (code != DINPUT_OK) return LibraryError(code, what);
  out->reset(*made);
  return OkStatus();
}

const IntConstant kAutotune{"AUTOTUNE", IsAutotune, DINPUT_AUTOTUNE};
const IntConstant kShardHint{"SHARD_HINT", IsShardHint, DINPUT_SHARD_HINT};

Status BuildRange(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  int64_t a = 0, b = 0, step = 1;
  // range(x) means range(0, x): its only argument is the stop.
  DINPUT_TOOL_RETURN_IF_ERROR(
      args.IntShownAs("start", args.Get("stop") != nullptr ? "start" : "stop", &a));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("stop", &b));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("step", &step, {}, false, 1));
  int64_t start = 0, stop = a;  // range(stop)
  if (args.Get("stop") != nullptr) {
    start = a;
    stop = b;
  }
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_range(&made, start, stop, step), &made, "range", out);
}

Status BuildFromTensors(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  ElementPtr element;
  DINPUT_TOOL_RETURN_IF_ERROR(ElementFromLiteral(*args.Get("tensors"), args.function(), &element));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_from_tensors(&made, element.get()), &made, "from_tensors", out);
}

Status BuildFromTensorSlices(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  ElementPtr element;
  DINPUT_TOOL_RETURN_IF_ERROR(ElementFromLiteral(*args.Get("tensors"), args.function(), &element));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_from_tensor_slices(&made, element.get()), &made, "from_tensor_slices",
              out);
}

// ---- file readers ----------------------------------------------------------------------

// The readers of files. Each is a source when given its files, and the READER of
// interleave() without them: there each file name of interleave's input becomes the only
// file of one reader.
enum class ReaderKind { kRecords, kTextLines, kFixedLengthRecords };

// A reader's options: everything but its files.
struct ReaderConfig {
  ReaderKind kind = ReaderKind::kRecords;
  dinput_compression_t compression = DINPUT_COMPRESSION_NONE;
  int64_t buffer_size = 0;  // 0: the library's default
  int64_t record_bytes = 0;
  int64_t header_bytes = 0;
  int64_t footer_bytes = 0;
};

bool ReaderKindOf(const std::string &name, ReaderKind *out) {
  static const std::pair<const char *, ReaderKind> kReaders[] = {
      {"records", ReaderKind::kRecords},
      {"text_lines", ReaderKind::kTextLines},
      {"fixed_length_records", ReaderKind::kFixedLengthRecords},
  };
  for (const auto &reader : kReaders) {
    if (name == reader.first) {
      *out = reader.second;
      return true;
    }
  }
  return false;
}

// An integer >= `min`; absent or None gives `fallback`.
Status IntAtLeast(const Args &args, const char *name, int64_t min, int64_t fallback,
                  int64_t *out) {
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int(name, out, {}, true, fallback));
  if (*out < min) {
    return args.Error(name, "must be >= " + std::to_string(min) + ", got " + std::to_string(*out));
  }
  return OkStatus();
}

Status ParseReaderConfig(ReaderKind kind, const Args &args, ReaderConfig *out) {
  ReaderConfig config;
  config.kind = kind;
  switch (kind) {
    case ReaderKind::kRecords: {
      const Value *v = args.Get("compression");
      if (v != nullptr && v->kind != Value::Kind::kNone) {
        if (v->kind != Value::Kind::kString) {
          return args.TypeError("compression", kCompressionChoices, *v);
        }
        if (!ParseCompression(v->text, &config.compression)) {
          return args.Error("compression", std::string("must be one of ") + kCompressionChoices +
                                               ", got \"" + v->text + "\"");
        }
      }
      DINPUT_TOOL_RETURN_IF_ERROR(IntAtLeast(args, "buffer_size", 0, 0, &config.buffer_size));
      break;
    }
    case ReaderKind::kFixedLengthRecords:
      DINPUT_TOOL_RETURN_IF_ERROR(args.Int("record_bytes", &config.record_bytes));
      if (config.record_bytes < 1) {
        return args.Error("record_bytes",
                          "must be >= 1, got " + std::to_string(config.record_bytes));
      }
      DINPUT_TOOL_RETURN_IF_ERROR(IntAtLeast(args, "header_bytes", 0, 0, &config.header_bytes));
      DINPUT_TOOL_RETURN_IF_ERROR(IntAtLeast(args, "footer_bytes", 0, 0, &config.footer_bytes));
      break;
    case ReaderKind::kTextLines:
      break;
  }
  *out = config;
  return OkStatus();
}

// The argument `name`: a string or a list of strings, none with a NUL byte (the C API takes
// NUL-terminated names).
Status FileNames(const Args &args, const char *name, std::vector<std::string> *out) {
  DINPUT_TOOL_RETURN_IF_ERROR(args.Strings(name, out));
  for (const std::string &f : *out) {
    if (f.find('\0') != std::string::npos) return args.Error(name, "must not contain a NUL byte");
  }
  return OkStatus();
}

Status MakeReader(const ReaderConfig &config, const std::vector<std::string> &files,
                  DatasetPtr *out) {
  std::vector<const char *> names;
  for (const std::string &f : files) names.push_back(f.c_str());
  dinput_dataset_t *made = nullptr;
  switch (config.kind) {
    case ReaderKind::kRecords:
      return Made(dinput_dataset_records(&made, names.data(), names.size(), config.compression,
                                         config.buffer_size),
                  &made, "records", out);
    case ReaderKind::kTextLines:
      return Made(dinput_dataset_text_lines(&made, names.data(), names.size()), &made,
                  "text_lines", out);
    case ReaderKind::kFixedLengthRecords:
      return Made(dinput_dataset_fixed_length_records(&made, names.data(), names.size(),
                                                      config.record_bytes, config.header_bytes,
                                                      config.footer_bytes),
                  &made, "fixed_length_records", out);
  }
  return Status{DINPUT_INTERNAL, "unknown reader"};
}

Status BuildReaderSource(ReaderKind kind, const Args &args, DatasetPtr *out) {
  std::vector<std::string> files;
  DINPUT_TOOL_RETURN_IF_ERROR(FileNames(args, "filenames", &files));
  ReaderConfig config;
  DINPUT_TOOL_RETURN_IF_ERROR(ParseReaderConfig(kind, args, &config));
  return MakeReader(config, files, out);
}

Status BuildTextLines(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  return BuildReaderSource(ReaderKind::kTextLines, args, out);
}

Status BuildRecords(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  return BuildReaderSource(ReaderKind::kRecords, args, out);
}

Status BuildFixedLengthRecords(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  return BuildReaderSource(ReaderKind::kFixedLengthRecords, args, out);
}

Status BuildListFiles(const Args &args, const dinput_dataset_t *, DatasetPtr *out) {
  std::vector<std::string> patterns;
  DINPUT_TOOL_RETURN_IF_ERROR(FileNames(args, "file_pattern", &patterns));
  // Unlike tf.data (whose default is shuffle=True), the tool lists files sorted unless asked
  // to shuffle: a command line is expected to print the same output every time it runs.
  bool shuffle = false;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("shuffle", &shuffle, false, true));
  int64_t seed = -1;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("seed", &seed, {}, true, -1));
  if (args.Get("seed") != nullptr && args.Get("seed")->kind == Value::Kind::kInt && seed < 0) {
    // The C API reserves negative seeds for "random"; an explicit seed must be honoured.
    return args.Error("seed", "must be >= 0 or None");
  }
  std::vector<const char *> names;
  for (const std::string &p : patterns) names.push_back(p.c_str());
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_list_files(&made, names.data(), names.size(), shuffle ? 1 : 0, seed),
              &made, "list_files", out);
}

Status BuildBatch(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  int64_t batch_size = 0;
  bool drop_remainder = false;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("batch_size", &batch_size));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("drop_remainder", &drop_remainder, false));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_batch(&made, input, batch_size, drop_remainder), &made, "batch", out);
}

Status BuildRepeat(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  int64_t count = 0;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("count", &count, {}, true, DINPUT_REPEAT_FOREVER));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_repeat(&made, input, count), &made, "repeat", out);
}

Status BuildShuffle(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  int64_t buffer_size = 0, seed = -1;
  bool reshuffle = true;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("buffer_size", &buffer_size));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("seed", &seed, {}, true, -1));
  if (args.Get("seed") != nullptr && args.Get("seed")->kind == Value::Kind::kInt && seed < 0) {
    // The C API reserves negative seeds for "random"; an explicit seed must be honoured.
    return args.Error("seed", "must be >= 0 or None");
  }
  DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("reshuffle_each_iteration", &reshuffle, true));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_shuffle(&made, input, buffer_size, seed, reshuffle), &made, "shuffle",
              out);
}

Status BuildShard(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  int64_t num_shards = 0, index = 0;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("num_shards", &num_shards, {kShardHint}));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("index", &index, {kShardHint}));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_shard(&made, input, num_shards, index), &made, "shard", out);
}

Status BuildTake(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  int64_t count = 0;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("count", &count));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_take(&made, input, count), &made, "take", out);
}

Status BuildSkip(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  int64_t count = 0;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("count", &count));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_skip(&made, input, count), &made, "skip", out);
}

Status BuildEnumerate(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  int64_t start = 0;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("start", &start, {}, false, 0));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_enumerate(&made, input, start), &made, "enumerate", out);
}

Status BuildUnbatch(const Args &, const dinput_dataset_t *input, DatasetPtr *out) {
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_unbatch(&made, input), &made, "unbatch", out);
}

Status BuildRebatch(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  std::vector<int64_t> sizes;
  bool drop_remainder = false;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Ints("batch_size", &sizes));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("drop_remainder", &drop_remainder, false));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_rebatch(&made, input, sizes.data(), sizes.size(), drop_remainder),
              &made, "rebatch", out);
}

Status BuildPrefetch(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  int64_t buffer_size = 0;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("buffer_size", &buffer_size, {kAutotune}));
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_prefetch(&made, input, buffer_size), &made, "prefetch", out);
}

Status BuildWithOptions(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  const Value *policy_value = args.Get("auto_shard_policy");
  const Value *skip_value = args.Get("skip_corrupt_records");
  const Value *max_record_value = args.Get("max_record_bytes");
  const Value *map_value = args.Get("map_files");
  const Value *nonregular_value = args.Get("allow_nonregular_files");
  if (policy_value == nullptr && skip_value == nullptr && max_record_value == nullptr &&
      map_value == nullptr && nonregular_value == nullptr) {
    return InvalidArgument(
        "with_options(): give at least one option; usage: with_options(auto_shard_policy=OFF|"
        "AUTO|FILE|DATA|HINT, skip_corrupt_records=False, max_record_bytes=268435456, "
        "map_files=False, allow_nonregular_files=False)");
  }
  dinput_options_t *raw = nullptr;
  dinput_status_t code = dinput_options_new(&raw);
  if (code != DINPUT_OK) return LibraryError(code, "dinput_options_new");
  OptionsPtr options(raw);
  // Only the options written are set: the library merges options per field, so an option
  // left out keeps the value an earlier with_options() gave it.
  if (policy_value != nullptr) {
    dinput_auto_shard_policy_t policy;
    if ((policy_value->kind != Value::Kind::kName && policy_value->kind != Value::Kind::kString) ||
        !ParseAutoShardPolicy(policy_value->text, &policy)) {
      return args.TypeError("auto_shard_policy", "one of OFF, AUTO, FILE, DATA, HINT",
                            *policy_value);
    }
    code = dinput_options_set_auto_shard_policy(options.get(), policy);
    if (code != DINPUT_OK) return LibraryError(code, "dinput_options_set_auto_shard_policy");
  }
  if (skip_value != nullptr) {
    bool skip = false;
    DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("skip_corrupt_records", &skip, false));
    code = dinput_options_set_skip_corrupt_records(options.get(), skip ? 1 : 0);
    if (code != DINPUT_OK) return LibraryError(code, "dinput_options_set_skip_corrupt_records");
  }
  if (max_record_value != nullptr) {
    int64_t max_bytes = 0;
    DINPUT_TOOL_RETURN_IF_ERROR(args.Int("max_record_bytes", &max_bytes));
    code = dinput_options_set_max_record_bytes(options.get(), max_bytes);
    if (code != DINPUT_OK) return LibraryError(code, "dinput_options_set_max_record_bytes");
  }
  if (map_value != nullptr) {
    bool map = false;
    DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("map_files", &map, false));
    code = dinput_options_set_map_files(options.get(), map ? 1 : 0);
    if (code != DINPUT_OK) return LibraryError(code, "dinput_options_set_map_files");
  }
  if (nonregular_value != nullptr) {
    bool allow = false;
    DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("allow_nonregular_files", &allow, false));
    code = dinput_options_set_allow_nonregular_files(options.get(), allow ? 1 : 0);
    if (code != DINPUT_OK) return LibraryError(code, "dinput_options_set_allow_nonregular_files");
  }
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_with_options(&made, input, options.get()), &made, "with_options", out);
}

const FunctionSpec *FindFunction(const std::string &name);
Status Bind(const FunctionSpec &spec, const Call &call, Args *args);

// The READER argument of interleave(): a reader's bare name or a call of it without files.
Status ParseInterleaveReader(const Args &args, ReaderConfig *out) {
  const Value &v = *args.Get("map_func");
  const std::string wanted =
      "a reader: records, text_lines or fixed_length_records(record_bytes=N), optionally "
      "called with its options but no files, e.g. records(compression=\"ZSTD\")";
  ReaderKind kind;
  if ((v.kind != Value::Kind::kName && v.kind != Value::Kind::kCall) ||
      !ReaderKindOf(v.text, &kind)) {
    if (v.kind == Value::Kind::kName || v.kind == Value::Kind::kCall) {
      return args.Error("map_func", "must be " + wanted + ", got '" + v.text + "' at position " +
                                        std::to_string(v.pos));
    }
    return args.TypeError("map_func", wanted, v);
  }
  // Bind the reader's own arguments as if it were called without its first parameter, the
  // files, which interleave supplies: records("ZSTD") is records(compression="ZSTD").
  const FunctionSpec *source = FindFunction(v.text);
  FunctionSpec reader = *source;
  reader.params.erase(reader.params.begin());
  std::string usage = std::string(source->usage);
  size_t files = usage.find("filenames, ");
  if (files != std::string::npos) usage.erase(files, std::strlen("filenames, "));
  files = usage.find("filenames");
  if (files != std::string::npos) usage.erase(files, std::strlen("filenames"));
  usage = "interleave(" + usage + ", ...) (interleave gives the reader its files)";
  reader.usage = usage.c_str();
  Call call;
  call.name = v.text;
  call.pos = v.pos;
  call.args = v.args;
  for (const Argument &arg : call.args) {
    // Files given by keyword, or positionally where no option of the reader takes a list
    // or (except records' compression) a string, are files: say so rather than report a
    // type error of the option they would bind to.
    const bool first = &arg == &call.args.front() && arg.keyword.empty();
    const bool looks_like_files =
        first && (arg.value.kind == Value::Kind::kList || arg.value.kind == Value::Kind::kTuple ||
                  (arg.value.kind == Value::Kind::kString && kind != ReaderKind::kRecords) ||
                  kind == ReaderKind::kTextLines);
    if (arg.keyword == "filenames" || looks_like_files) {
      return InvalidArgument(v.text + "() inside interleave() at position " +
                             std::to_string(v.pos) +
                             " takes no files: interleave reads each file name of its input "
                             "with its own " +
                             v.text + "()");
    }
  }
  Args reader_args(v.text, usage);
  DINPUT_TOOL_RETURN_IF_ERROR(Bind(reader, call, &reader_args));
  return ParseReaderConfig(kind, reader_args, out);
}

// interleave()'s callback: the reader of the one file named by `in`. Nothing may throw out
// of a callback into the library, hence the catch.
dinput_status_t ReaderForFile(dinput_dataset_t **out, const dinput_element_t *in,
                              void *user_data) {
  try {
    const ReaderConfig &config = *static_cast<const ReaderConfig *>(user_data);
    const char *name = nullptr;
    size_t size = 0;
    dinput_status_t code = dinput_tensor_string_view(&name, &size, dinput_element_get(in, 0), 0);
    if (code != DINPUT_OK) return ReportToLibrary(LibraryError(code, "dinput_tensor_string_view"));
    std::string file(name, size);
    if (file.find('\0') != std::string::npos) {
      return ReportToLibrary(
          InvalidArgument("interleave(): a file name of the input contains a NUL byte"));
    }
    DatasetPtr reader;
    Status status = MakeReader(config, {file}, &reader);
    if (!status.ok()) return ReportToLibrary(status);
    *out = reader.release();
    return DINPUT_OK;
  } catch (const std::bad_alloc &) {
    return ReportToLibrary(Status{DINPUT_RESOURCE_EXHAUSTED, "out of memory"});
  } catch (const std::exception &e) {
    return ReportToLibrary(Status{DINPUT_INTERNAL, e.what()});
  }
}

void FreeReaderConfig(void *user_data) { delete static_cast<ReaderConfig *>(user_data); }

// Fails unless the elements of `input` are file names: bytes scalars.
Status CheckFileNameInput(const dinput_dataset_t *input) {
  dinput_spec_t *raw = nullptr;
  dinput_status_t code = dinput_dataset_element_spec(&raw, input);
  if (code != DINPUT_OK) return LibraryError(code, "dinput_dataset_element_spec");
  SpecPtr spec(raw);
  if (dinput_spec_size(spec.get()) == 1 && dinput_spec_dtype(spec.get(), 0) == DINPUT_BYTES &&
      dinput_spec_rank(spec.get(), 0) == 0) {
    return OkStatus();
  }
  std::string got;
  for (size_t i = 0; i < dinput_spec_size(spec.get()); ++i) {
    if (i) got += ", ";
    got += std::string(dinput_dtype_name(dinput_spec_dtype(spec.get(), i))) + " of rank " +
           std::to_string(dinput_spec_rank(spec.get(), i));
  }
  return InvalidArgument(
      "interleave(): the input must be a dataset of file names (bytes scalars), e.g. "
      "list_files(...) or from_tensor_slices([\"a.rec\", \"b.rec\"]); its elements are (" +
      got + ")");
}

Status BuildInterleave(const Args &args, const dinput_dataset_t *input, DatasetPtr *out) {
  ReaderConfig config;
  DINPUT_TOOL_RETURN_IF_ERROR(ParseInterleaveReader(args, &config));
  int64_t cycle_length = 0, block_length = 0, num_parallel_calls = 0;
  DINPUT_TOOL_RETURN_IF_ERROR(
      args.Int("cycle_length", &cycle_length, {kAutotune}, true, DINPUT_AUTOTUNE));
  DINPUT_TOOL_RETURN_IF_ERROR(args.Int("block_length", &block_length, {}, true, 1));
  // None, as in tf.data, reads the open files one after another on the consumer's thread.
  DINPUT_TOOL_RETURN_IF_ERROR(
      args.Int("num_parallel_calls", &num_parallel_calls, {kAutotune}, true, 1));
  bool deterministic = true;
  DINPUT_TOOL_RETURN_IF_ERROR(args.Bool("deterministic", &deterministic, true, true));
  DINPUT_TOOL_RETURN_IF_ERROR(CheckFileNameInput(input));

  dinput_spec_t *raw_spec = nullptr;
  dinput_status_t code = dinput_spec_new(&raw_spec);
  if (code != DINPUT_OK) return LibraryError(code, "dinput_spec_new");
  SpecPtr spec(raw_spec);
  code = dinput_spec_add(spec.get(), DINPUT_BYTES, nullptr, 0);  // every reader gives bytes scalars
  if (code != DINPUT_OK) return LibraryError(code, "dinput_spec_add");

  // The library owns the config from here on, also when the call fails (it then frees it),
  // so the tool never frees it itself.
  ReaderConfig *user_data = new ReaderConfig(config);
  dinput_dataset_t *made = nullptr;
  return Made(dinput_dataset_interleave(&made, input, ReaderForFile, spec.get(), cycle_length,
                                        block_length, num_parallel_calls, deterministic ? 1 : 0,
                                        user_data, FreeReaderConfig),
              &made, "interleave", out);
}

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
       "batch(batch_size, drop_remainder=False)",
       Passing::kAny,
       {{"batch_size", true}, {"drop_remainder", false}},
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
       "deterministic=True) with READER records, text_lines or a call of a reader without "
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
       "max_record_bytes=268435456, map_files=False, allow_nonregular_files=False)",
       Passing::kKeywordOnly,
       {{"auto_shard_policy", false},
        {"skip_corrupt_records", false},
        {"max_record_bytes", false},
        {"map_files", false},
        {"allow_nonregular_files", false}},
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
