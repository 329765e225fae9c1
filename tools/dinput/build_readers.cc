// The readers of files (records, text_lines, fixed_length_records), and interleave() and
// flat_map(), which run one of them (a dinput_reader_t value) per file name of their input.
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "builder_functions.h"
#include "compression.h"

namespace dinput_tool {
namespace builder {

namespace {

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

bool reader_kind_of(const std::string& name, ReaderKind* out) {
  static const std::pair<const char*, ReaderKind> kReaders[] = {
      {"records", ReaderKind::kRecords},
      {"text_lines", ReaderKind::kTextLines},
      {"fixed_length_records", ReaderKind::kFixedLengthRecords},
  };
  for (const auto& reader : kReaders) {
    if (name == reader.first) {
      *out = reader.second;
      return true;
    }
  }
  return false;
}

ReaderConfig parse_reader_config(ReaderKind kind, const Args& args) {
  ReaderConfig config;
  config.kind = kind;
  switch (kind) {
    case ReaderKind::kRecords: {
      const Value* v = args.get("compression");
      if (v != nullptr && v->kind != Value::Kind::kNone) {
        if (v->kind != Value::Kind::kString) {
          throw args.type_error("compression", kCompressionChoices, *v);
        }
        if (!parse_compression(v->text, &config.compression)) {
          throw args.error("compression", std::string("must be one of ") + kCompressionChoices +
                                              ", got \"" + v->text + "\"");
        }
      }
      config.buffer_size = int_at_least(args, "buffer_size", 0, 0);
      break;
    }
    case ReaderKind::kFixedLengthRecords:
      config.record_bytes = args.get_int("record_bytes");
      if (config.record_bytes < 1) {
        throw args.error("record_bytes",
                         "must be >= 1, got " + std::to_string(config.record_bytes));
      }
      config.header_bytes = int_at_least(args, "header_bytes", 0, 0);
      config.footer_bytes = int_at_least(args, "footer_bytes", 0, 0);
      break;
    case ReaderKind::kTextLines:
      break;
  }
  return config;
}

// The argument `name`: a string or a list of strings, none with a NUL byte (the C API takes

DatasetPtr make_reader(const ReaderConfig& config, const std::vector<std::string>& files) {
  std::vector<const char*> names;
  for (const std::string& f : files) names.push_back(f.c_str());
  dinput_dataset_t* made = nullptr;
  switch (config.kind) {
    case ReaderKind::kRecords: {
      dinput_records_options_t* raw = nullptr;
      check(dinput_records_options_new(&raw), "dinput_records_options_new");
      RecordsOptionsPtr options(raw);
      check(dinput_records_options_set_compression(options.get(), config.compression),
            "dinput_records_options_set_compression");
      check(dinput_records_options_set_buffer_size(options.get(), config.buffer_size),
            "dinput_records_options_set_buffer_size");
      return adopt(dinput_dataset_records(&made, names.data(), names.size(), options.get()), &made,
                   "records");
    }
    case ReaderKind::kTextLines:
      return adopt(dinput_dataset_text_lines(&made, names.data(), names.size()), &made,
                   "text_lines");
    case ReaderKind::kFixedLengthRecords:
      return adopt(dinput_dataset_fixed_length_records(&made, names.data(), names.size(),
                                                       config.record_bytes, config.header_bytes,
                                                       config.footer_bytes),
                   &made, "fixed_length_records");
  }
  throw Failure(DINPUT_INTERNAL, "unknown reader");
}

DatasetPtr build_reader_source(ReaderKind kind, const Args& args) {
  const std::vector<std::string> files = file_names(args, "filenames");
  return make_reader(parse_reader_config(kind, args), files);
}

// The READER argument of interleave(): a reader's bare name or a call of it without files.
ReaderConfig parse_interleave_reader(const Args& args) {
  const Value& v = *args.get("map_func");
  const std::string wanted =
      "a reader: records, text_lines or fixed_length_records(record_bytes=N), optionally "
      "called with its options but no files, e.g. records(compression=\"ZSTD\")";
  ReaderKind kind;
  if ((v.kind != Value::Kind::kName && v.kind != Value::Kind::kCall) ||
      !reader_kind_of(v.text, &kind)) {
    if (v.kind == Value::Kind::kName || v.kind == Value::Kind::kCall) {
      throw args.error("map_func", "must be " + wanted + ", got '" + v.text + "' at position " +
                                       std::to_string(v.pos));
    }
    throw args.type_error("map_func", wanted, v);
  }
  // Bind the reader's own arguments as if it were called without its first parameter, the
  // files, which interleave supplies: records("ZSTD") is records(compression="ZSTD").
  const FunctionSpec* source = find_function(v.text);
  FunctionSpec reader = *source;
  reader.params.erase(reader.params.begin());
  std::string usage = std::string(source->usage);
  size_t files = usage.find("filenames, ");
  if (files != std::string::npos) usage.erase(files, std::strlen("filenames, "));
  files = usage.find("filenames");
  if (files != std::string::npos) usage.erase(files, std::strlen("filenames"));
  const std::string op = args.function();
  usage = op + "(" + usage + ", ...) (" + op + " gives the reader its files)";
  reader.usage = usage.c_str();
  Call call;
  call.name = v.text;
  call.pos = v.pos;
  call.args = v.args;
  for (const Argument& arg : call.args) {
    // Files given by keyword, or positionally where no option of the reader takes a list
    // or (except records' compression) a string, are files: say so rather than report a
    // type error of the option they would bind to.
    const bool first = &arg == &call.args.front() && arg.keyword.empty();
    const bool looks_like_files =
        first && (arg.value.kind == Value::Kind::kList || arg.value.kind == Value::Kind::kTuple ||
                  (arg.value.kind == Value::Kind::kString && kind != ReaderKind::kRecords) ||
                  kind == ReaderKind::kTextLines);
    if (arg.keyword == "filenames" || looks_like_files) {
      throw invalid_argument(v.text + "() inside " + op + "() at position " +
                             std::to_string(v.pos) + " takes no files: " + op +
                             " reads each file name of its input "
                             "with its own " +
                             v.text + "()");
    }
  }
  Args reader_args(v.text, usage);
  bind(reader, call, &reader_args);
  return parse_reader_config(kind, reader_args);
}

using ReaderPtr = Handle<dinput_reader_t, dinput_reader_free>;

// The reader value interleave() and flat_map() run on each file name of their input.
ReaderPtr make_reader_value(const ReaderConfig& config) {
  dinput_reader_t* made = nullptr;
  switch (config.kind) {
    case ReaderKind::kRecords: {
      dinput_records_options_t* raw = nullptr;
      check(dinput_records_options_new(&raw), "dinput_records_options_new");
      RecordsOptionsPtr options(raw);
      check(dinput_records_options_set_compression(options.get(), config.compression),
            "dinput_records_options_set_compression");
      check(dinput_records_options_set_buffer_size(options.get(), config.buffer_size),
            "dinput_records_options_set_buffer_size");
      check(dinput_reader_records(&made, options.get()), "records");
      break;
    }
    case ReaderKind::kTextLines:
      check(dinput_reader_text_lines(&made), "text_lines");
      break;
    case ReaderKind::kFixedLengthRecords:
      check(dinput_reader_fixed_length_records(&made, config.record_bytes, config.header_bytes,
                                               config.footer_bytes),
            "fixed_length_records");
      break;
  }
  return ReaderPtr(made);
}

// Fails unless the elements of `input` are file names: bytes scalars.
void check_file_name_input(const dinput_dataset_t* input, const std::string& op) {
  dinput_spec_t* raw = nullptr;
  check(dinput_dataset_element_spec(&raw, input), "dinput_dataset_element_spec");
  SpecPtr spec(raw);
  if (dinput_spec_size(spec.get()) == 1 && dinput_spec_dtype(spec.get(), 0) == DINPUT_BYTES &&
      dinput_spec_rank(spec.get(), 0) == 0) {
    return;
  }
  std::string got;
  for (size_t i = 0; i < dinput_spec_size(spec.get()); ++i) {
    if (i) got += ", ";
    got += std::string(dinput_dtype_name(dinput_spec_dtype(spec.get(), i))) + " of rank " +
           std::to_string(dinput_spec_rank(spec.get(), i));
  }
  throw invalid_argument(
      op +
      "(): the input must be a dataset of file names (bytes scalars), e.g. "
      "list_files(...) or from_tensor_slices([\"a.rec\", \"b.rec\"]); its elements are (" +
      got + ")");
}

}  // namespace

DatasetPtr build_text_lines(const Args& args, const dinput_dataset_t*) {
  return build_reader_source(ReaderKind::kTextLines, args);
}

DatasetPtr build_records(const Args& args, const dinput_dataset_t*) {
  return build_reader_source(ReaderKind::kRecords, args);
}

DatasetPtr build_fixed_length_records(const Args& args, const dinput_dataset_t*) {
  return build_reader_source(ReaderKind::kFixedLengthRecords, args);
}

DatasetPtr build_interleave(const Args& args, const dinput_dataset_t* input) {
  const ReaderConfig config = parse_interleave_reader(args);
  const int64_t cycle_length = args.get_int("cycle_length", {kAutotune}, true, DINPUT_AUTOTUNE);
  const int64_t block_length = args.get_int("block_length", {}, true, 1);
  // None, as in tf.data, reads the open files one after another on the consumer's thread.
  const int64_t num_parallel_calls = args.get_int("num_parallel_calls", {kAutotune}, true, 1);
  // None leaves deterministic unset: with_options' default applies, as in tf.data.
  const Value* deterministic_value = args.get("deterministic");
  const bool deterministic = args.get_bool("deterministic", true, true);
  check_file_name_input(input, "interleave");

  dinput_interleave_options_t* raw_options = nullptr;
  check(dinput_interleave_options_new(&raw_options), "dinput_interleave_options_new");
  InterleaveOptionsPtr options(raw_options);
  check(dinput_interleave_options_set_cycle_length(options.get(), cycle_length), "interleave");
  check(dinput_interleave_options_set_block_length(options.get(), block_length), "interleave");
  check(dinput_interleave_options_set_num_parallel_calls(options.get(), num_parallel_calls),
        "interleave");
  if (deterministic_value != nullptr && deterministic_value->kind != Value::Kind::kNone) {
    check(
        dinput_interleave_options_set_deterministic(
            options.get(), deterministic ? DINPUT_DETERMINISTIC_TRUE : DINPUT_DETERMINISTIC_FALSE),
        "interleave");
  }

  const ReaderPtr reader = make_reader_value(config);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_interleave_reader(&made, input, reader.get(), options.get()), &made,
               "interleave");
}

DatasetPtr build_flat_map(const Args& args, const dinput_dataset_t* input) {
  const ReaderConfig config = parse_interleave_reader(args);
  check_file_name_input(input, "flat_map");
  const ReaderPtr reader = make_reader_value(config);
  dinput_dataset_t* made = nullptr;
  return adopt(dinput_dataset_flat_map_reader(&made, input, reader.get()), &made, "flat_map");
}

}  // namespace builder
}  // namespace dinput_tool
