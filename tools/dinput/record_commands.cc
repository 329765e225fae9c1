#include "record_commands.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "cli_options.h"
#include "compression.h"
#include "handles.h"
#include "io/file_error.h"
#include "json_format.h"

namespace dinput_tool {

namespace {

constexpr const char* kWriteUsage =
    "usage: dinput write [--compression NONE|ZSTD|GZIP] [--level N] "
    "(--lines FILE | --chunk-size N FILE) OUTPUT";
constexpr const char* kConvertUsage =
    "usage: dinput convert [--compression NONE|ZSTD|GZIP] [--level N] "
    "[--input-compression NONE|ZSTD|GZIP] [--skip-corrupt] INPUT OUTPUT";
constexpr const char* kInspectUsage =
    "usage: dinput inspect [--compression NONE|ZSTD|GZIP] [--skip-corrupt] FILE...";

// A chunk is held in memory whole; the cap keeps a typo from asking for terabytes.
constexpr int64_t kMaxChunkSize = int64_t{1} << 30;

// ---- arguments (parsed by parse_args, cli_options.h) -------------------------------------

// `*given` (when not null): whether the option was given.
dinput_compression_t compression_option(const ParsedArgs& args, const char* name,
                                        dinput_compression_t fallback, bool* given = nullptr) {
  const std::string* value = args.find(name);
  if (given != nullptr) *given = value != nullptr;
  if (value == nullptr) return fallback;
  dinput_compression_t compression;
  // "" means NONE in the chain syntax, but an empty option value is more likely a mistake.
  if (value->empty() || !parse_compression(*value, &compression)) {
    throw invalid_argument(std::string(name) + " expects NONE, ZSTD or GZIP, got '" + *value + "'");
  }
  return compression;
}

// --level: passed to the writer, which checks its range for the compression chosen.
int level_option(const ParsedArgs& args, dinput_compression_t compression) {
  const std::string* value = args.find("--level");
  if (value == nullptr) return 0;
  if (compression == DINPUT_COMPRESSION_NONE) {
    // The writer would ignore it; saying so beats silently writing an uncompressed file.
    throw invalid_argument("--level applies to --compression ZSTD or GZIP only");
  }
  return static_cast<int>(parse_integer("--level", *value, 0, INT_MAX));
}

// ---- files -----------------------------------------------------------------------------

// Errors of the tool's own file access, coded by the library's own errno mapping
// (src/io/file_error_code.cc, compiled in), whose codes are dinput_status_t's numbers.
Failure file_error(const char* verb, const std::string& path, int err) {
  const auto code = static_cast<dinput_status_t>(dinput::file_error_code(err));
  return Failure(code, std::string("cannot ") + verb + " '" + path + "': " + std::strerror(err));
}

// An input file opened by the tool itself; "-" is stdin.
class InputFile {
 public:
  ~InputFile() {
    if (file_ != nullptr && file_ != stdin) std::fclose(file_);
  }

  void open(const std::string& path) {
    if (path == "-") {
      file_ = stdin;
      name_ = "stdin";
      return;
    }
    name_ = path;
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) throw file_error("open", path, errno);
  }

  FILE* get() const { return file_; }
  const std::string& name() const { return name_; }
  Failure read_error() const { return file_error("read", name_, errno); }

 private:
  FILE* file_ = nullptr;
  std::string name_;
};

// Reading and writing the same file is almost always a slip of the fingers (the writer would
// replace the input with itself at best), so it is refused.
void check_not_input(const struct stat& input, const std::string& output) {
  struct stat st;
  if (::stat(output.c_str(), &st) != 0) return;  // does not exist yet
  if (st.st_dev == input.st_dev && st.st_ino == input.st_ino) {
    throw invalid_argument("OUTPUT '" + output +
                           "' is the input file itself; write to another file");
  }
}

void check_output_name(const std::string& output) {
  if (output == "-") {
    throw invalid_argument("OUTPUT must be a file: record files are not written to stdout");
  }
  if (output.empty()) throw invalid_argument("OUTPUT must not be empty");
}

// zstd's magic numbers, little-endian: a data frame, and the 16 skippable-frame magics
// 0x184D2A50..0x184D2A5F (frames of user data that decoders pass over).
constexpr uint32_t kZstdMagic = 0xFD2FB528u;

bool is_skippable_magic(uint32_t magic) { return (magic & 0xFFFFFFF0u) == 0x184D2A50u; }

uint32_t load_le32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// The compression of a record file from its first bytes: a zstd frame magic (a data frame,
// or a skippable frame, which a zstd file may start with), the gzip magic, else NONE (a
// plain file starts with a record length, which has no magic).
dinput_compression_t detect_compression(const std::string& path) {
  // Only regular files are peeked at: opening a FIFO would wait for a writer, and reading a
  // pipe would take bytes the reader needs. Anything else is left to the library, which
  // names what is wrong with it (a FIFO or device is not read unless allowed).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return DINPUT_COMPRESSION_NONE;
  FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) throw file_error("open", path, errno);
  unsigned char head[4] = {0, 0, 0, 0};
  size_t n = std::fread(head, 1, sizeof head, file);
  int err = errno;
  bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) throw file_error("read", path, err);
  static const unsigned char kGzip[2] = {0x1F, 0x8B};
  if (n >= 4 && (load_le32(head) == kZstdMagic || is_skippable_magic(load_le32(head)))) {
    return DINPUT_COMPRESSION_ZSTD;
  }
  if (n >= 2 && std::memcmp(head, kGzip, 2) == 0) return DINPUT_COMPRESSION_GZIP;
  return DINPUT_COMPRESSION_NONE;
}

// The frames of a zstd file, walked by their headers (RFC 8878): data frames and skippable
// frames. The data itself is checked by the library when the records are read; this only
// counts, and stops quietly at anything it cannot walk (the read then reports the damage).
struct ZstdFrames {
  int64_t data = 0;
  int64_t skippable = 0;
  int64_t skippable_bytes = 0;
};

ZstdFrames count_zstd_frames(FILE* file) {
  ZstdFrames frames;
  auto read_exact = [file](unsigned char* p, size_t n) { return std::fread(p, 1, n, file) == n; };
  auto skip = [file](uint64_t n) {
    return n <= static_cast<uint64_t>(LONG_MAX) &&
           std::fseek(file, static_cast<long>(n), SEEK_CUR) == 0;
  };
  unsigned char b[8];
  while (read_exact(b, 4)) {
    const uint32_t magic = load_le32(b);
    if (is_skippable_magic(magic)) {
      if (!read_exact(b, 4)) return frames;
      const uint32_t size = load_le32(b);
      if (!skip(size)) return frames;
      frames.skippable += 1;
      frames.skippable_bytes += 8 + static_cast<int64_t>(size);
      continue;
    }
    if (magic != kZstdMagic || !read_exact(b, 1)) return frames;
    const unsigned fhd = b[0];
    const unsigned fcs_flag = fhd >> 6, single_segment = (fhd >> 5) & 1, checksum = (fhd >> 2) & 1;
    static const int kDidBytes[4] = {0, 1, 2, 4};
    static const int kFcsBytes[4] = {0, 2, 4, 8};
    const int header_rest = (single_segment ? 0 : 1) + kDidBytes[fhd & 3] +
                            (fcs_flag == 0 ? (single_segment ? 1 : 0) : kFcsBytes[fcs_flag]);
    if (!skip(static_cast<uint64_t>(header_rest))) return frames;
    for (;;) {  // blocks: a 3-byte header (last flag, type, size), then the content
      if (!read_exact(b, 3)) return frames;
      const uint32_t header = static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
                              static_cast<uint32_t>(b[2]) << 16;
      const uint32_t type = (header >> 1) & 3, size = header >> 3;
      if (type == 3) return frames;                    // reserved: damage
      if (!skip(type == 1 ? 1 : size)) return frames;  // RLE blocks hold one byte
      if (header & 1) break;
    }
    if (checksum && !skip(4)) return frames;
    frames.data += 1;
  }
  return frames;
}

// ---- reading and writing records ---------------------------------------------------------

// Reads the records of one file through dinput_dataset_records, so that every CRC is
// verified by the library and damage is reported as the library reports it.
class RecordSource {
 public:
  // skip_corrupt: the library skips damaged records (see Skipped) instead of failing.
  void open(const std::string& path, dinput_compression_t compression, bool skip_corrupt) {
    const char* name = path.c_str();
    dinput_records_options_t* raw_options = nullptr;
    check(dinput_records_options_new(&raw_options), "dinput_records_options_new");
    RecordsOptionsPtr records_options(raw_options);
    check(dinput_records_options_set_compression(records_options.get(), compression),
          "dinput_records_options_set_compression");
    dinput_dataset_t* dataset = nullptr;
    check(dinput_dataset_records(&dataset, &name, 1, records_options.get()),
          "dinput_dataset_records");
    DatasetPtr owned(dataset);
    if (skip_corrupt) {
      dinput_options_t* options = nullptr;
      check(dinput_options_new(&options), "dinput_options_new");
      OptionsPtr owned_options(options);
      check(dinput_options_set_skip_corrupt_records(options, 1),
            "dinput_options_set_skip_corrupt_records");
      check(dinput_dataset_with_options(&dataset, owned.get(), options),
            "dinput_dataset_with_options");
      owned.reset(dataset);
    }
    dinput_iterator_t* iterator = nullptr;
    check(dinput_dataset_iterator(&iterator, owned.get()), "dinput_dataset_iterator");
    iterator_.reset(iterator);
  }

  // The next record into *record, valid until the next call; false at the end of the file.
  bool next(std::string_view* record) {
    element_.reset();
    dinput_element_t* element = nullptr;
    dinput_status_t code = dinput_iterator_get_next(&element, iterator_.get());
    if (code == DINPUT_OUT_OF_RANGE) return false;
    check(code, "dinput_iterator_get_next");
    element_.reset(element);
    const char* data = nullptr;
    size_t size = 0;
    check(dinput_tensor_string_view(&data, &size, dinput_element_get(element, 0), 0),
          "dinput_tensor_string_view");
    *record = std::string_view(data, size);
    return true;
  }

  // The damaged records skipped so far and their bytes (the library's statistics).
  void skipped(int64_t* records, int64_t* bytes) const {
    dinput_status_t code =
        dinput_iterator_statistic(records, iterator_.get(), "corrupt_records_skipped");
    if (code == DINPUT_OK) {
      code = dinput_iterator_statistic(bytes, iterator_.get(), "corrupt_bytes_skipped");
    }
    check(code, "dinput_iterator_statistic");
  }

 private:
  IteratorPtr iterator_;
  ElementPtr element_;
};

// A record file being written. The library writes it to a temporary file and puts it at
// the output path only when Close succeeds; unless it does, the writer is discarded on
// destruction, so that an existing OUTPUT keeps its contents and no cut-off record file
// (which would only fail later, with DATA_LOSS, far from the command that made it) is left.
class RecordSink {
 public:
  ~RecordSink() {
    if (writer_ && !closed_) dinput_record_writer_discard(writer_.get());
  }

  void open(const std::string& path, dinput_compression_t compression, int level) {
    path_ = path;
    dinput_record_writer_options_t* raw_options = nullptr;
    check(dinput_record_writer_options_new(&raw_options), "dinput_record_writer_options_new");
    RecordWriterOptionsPtr options(raw_options);
    check(dinput_record_writer_options_set_compression(options.get(), compression),
          "dinput_record_writer_options_set_compression");
    check(dinput_record_writer_options_set_level(options.get(), level),
          "dinput_record_writer_options_set_level");
    dinput_record_writer_t* writer = nullptr;
    check(dinput_record_writer_open(&writer, path.c_str(), options.get()),
          "dinput_record_writer_open");
    writer_.reset(writer);
  }

  void write(const char* data, size_t size) {
    check(dinput_record_writer_write(writer_.get(), data, size), "dinput_record_writer_write");
    records_ += 1;
    bytes_ += static_cast<int64_t>(size);
  }

  void close() {
    check(dinput_record_writer_close(writer_.get()), "dinput_record_writer_close");
    closed_ = true;
  }

  // {"records":N,"bytes":B,"output":null}: the summary, for callers to extend; "output"
  // is a placeholder for path(), which dump_json writes.
  JsonObject summary() const {
    JsonObject out;
    out["records"] = records_;
    out["bytes"] = bytes_;
    out["output"] = nullptr;
    return out;
  }
  const std::string& path() const { return path_; }

 private:
  RecordWriterPtr writer_;
  std::string path_;
  bool closed_ = false;
  int64_t records_ = 0;
  int64_t bytes_ = 0;
};

// One record per line. The line end ("\n", or "\r\n" as text_lines() also reads it) is not
// part of the record; a last line without one is still a record.
void write_lines(const InputFile& in, RecordSink* sink) {
  char* line = nullptr;
  size_t capacity = 0;
  std::unique_ptr<char*, void (*)(char**)> release(&line, [](char** p) { std::free(*p); });
  for (;;) {
    errno = 0;
    ssize_t n = ::getline(&line, &capacity, in.get());
    if (n < 0) break;
    size_t size = static_cast<size_t>(n);
    if (size > 0 && line[size - 1] == '\n') {
      --size;
      if (size > 0 && line[size - 1] == '\r') --size;
    }
    sink->write(line, size);
  }
  if (std::ferror(in.get())) throw in.read_error();
}

// One record per chunk_size bytes; the last chunk holds what is left.
void write_chunks(const InputFile& in, int64_t chunk_size, RecordSink* sink) {
  std::vector<char> buffer(static_cast<size_t>(chunk_size));
  for (;;) {
    errno = 0;
    size_t n = std::fread(buffer.data(), 1, buffer.size(), in.get());
    if (n > 0) sink->write(buffer.data(), n);
    if (n < buffer.size()) break;  // fread is only short at the end or on an error
  }
  if (std::ferror(in.get())) throw in.read_error();
}

// ---- the subcommands -------------------------------------------------------------------

// "skipped 1 corrupt record (18 bytes)": the words of every skip warning.
std::string skipped_text(int64_t records, int64_t bytes) {
  return "skipped " + std::to_string(records) + " corrupt record" + (records == 1 ? "" : "s") +
         " (" + std::to_string(bytes) + " bytes)";
}

// With --skip-corrupt: the skip counts as members of the JSON object for stdout, and a warning for
// stderr when anything was skipped (printed only once the command has succeeded, so that a failure
// still prints its one line).
void skip_report(const RecordSource& source, const std::string& path, JsonObject* fields,
                 std::string* warnings) {
  int64_t records = 0, bytes = 0;
  source.skipped(&records, &bytes);
  (*fields)["corrupt_records_skipped"] = records;
  (*fields)["corrupt_bytes_skipped"] = bytes;
  if (records > 0 || bytes > 0) {
    std::string name;
    append_json_string(&name, path);
    *warnings += "warning: " + skipped_text(records, bytes) + " in " + name + "\n";
  }
}

std::string command_write(int argc, char** argv) {
  const ParsedArgs args = parse_args(
      "write", argc, argv,
      {{"--compression", true}, {"--level", true}, {"--lines", true}, {"--chunk-size", true}});
  const dinput_compression_t compression =
      compression_option(args, "--compression", DINPUT_COMPRESSION_NONE);
  const int level = level_option(args, compression);
  const std::string* lines = args.find("--lines");
  const std::string* chunk_option = args.find("--chunk-size");
  if ((lines == nullptr) == (chunk_option == nullptr)) {
    throw invalid_argument(std::string(lines ? "--lines and --chunk-size cannot be used together"
                                             : "write needs --lines FILE or --chunk-size N FILE") +
                           "; " + kWriteUsage);
  }
  const int64_t chunk_size =
      chunk_option != nullptr ? parse_integer("--chunk-size", *chunk_option, 1, kMaxChunkSize) : 0;
  // --lines names its input; with --chunk-size the input is the first operand.
  const size_t operands = lines != nullptr ? 1 : 2;
  if (args.positionals.size() != operands) {
    throw invalid_argument(std::string("expected ") +
                           (operands == 1 ? "one operand, OUTPUT" : "two operands, FILE OUTPUT") +
                           ", got " + std::to_string(args.positionals.size()) + "; " + kWriteUsage);
  }
  const std::string input_path = lines != nullptr ? *lines : args.positionals[0];
  const std::string& output = args.positionals.back();
  check_output_name(output);

  // The input is opened before the output, so that a wrong input name leaves OUTPUT as it was.
  InputFile in;
  in.open(input_path);
  struct stat input_stat;
  if (::fstat(fileno(in.get()), &input_stat) == 0) {
    check_not_input(input_stat, output);
  }
  RecordSink sink;
  sink.open(output, compression, level);
  if (lines != nullptr) {
    write_lines(in, &sink);
  } else {
    write_chunks(in, chunk_size, &sink);
  }
  sink.close();
  return dump_json(sink.summary(), {{"output", sink.path()}}) + "\n";
}

std::string command_convert(int argc, char** argv) {
  const ParsedArgs args = parse_args("convert", argc, argv,
                                     {{"--compression", true},
                                      {"--level", true},
                                      {"--input-compression", true},
                                      {"--skip-corrupt", false}});
  const bool skip_corrupt = args.find("--skip-corrupt") != nullptr;
  const dinput_compression_t compression =
      compression_option(args, "--compression", DINPUT_COMPRESSION_NONE);
  bool input_given = false;
  dinput_compression_t input_compression =
      compression_option(args, "--input-compression", DINPUT_COMPRESSION_NONE, &input_given);
  const int level = level_option(args, compression);
  if (args.positionals.size() != 2) {
    throw invalid_argument("expected two operands, INPUT OUTPUT, got " +
                           std::to_string(args.positionals.size()) + "; " + kConvertUsage);
  }
  const std::string& input = args.positionals[0];
  const std::string& output = args.positionals[1];
  check_output_name(output);
  struct stat input_stat;
  if (::stat(input.c_str(), &input_stat) != 0) throw file_error("open", input, errno);
  check_not_input(input_stat, output);
  if (!input_given) input_compression = detect_compression(input);

  RecordSource source;
  source.open(input, input_compression, skip_corrupt);
  RecordSink sink;
  sink.open(output, compression, level);
  for (std::string_view record; source.next(&record);) sink.write(record.data(), record.size());
  JsonObject summary = sink.summary();
  summary["input_compression"] = compression_name(input_compression);
  summary["compression"] = compression_name(compression);
  std::string warnings;
  if (skip_corrupt) skip_report(source, input, &summary, &warnings);
  sink.close();
  std::fputs(warnings.c_str(), stderr);
  return dump_json(summary, {{"output", sink.path()}}) + "\n";
}

std::string command_inspect(int argc, char** argv) {
  const ParsedArgs args =
      parse_args("inspect", argc, argv, {{"--compression", true}, {"--skip-corrupt", false}});
  const bool skip_corrupt = args.find("--skip-corrupt") != nullptr;
  bool force = false;
  const dinput_compression_t forced =
      compression_option(args, "--compression", DINPUT_COMPRESSION_NONE, &force);
  if (args.positionals.empty()) {
    throw invalid_argument(std::string("missing FILE; ") + kInspectUsage);
  }
  std::string out, warnings;
  for (const std::string& path : args.positionals) {
    dinput_compression_t compression = forced;
    if (!force) compression = detect_compression(path);
    RecordSource source;
    source.open(path, compression, skip_corrupt);
    int64_t records = 0, bytes = 0;
    size_t smallest = 0, largest = 0;
    for (std::string_view record; source.next(&record);) {
      const size_t size = record.size();
      smallest = records == 0 || size < smallest ? size : smallest;
      largest = size > largest ? size : largest;
      records += 1;
      bytes += static_cast<int64_t>(size);
    }
    JsonObject line;
    line["file"] = nullptr;  // written by dump_json: the name may not be UTF-8
    line["compression"] = compression_name(compression);
    line["records"] = records;
    line["payload_bytes"] = bytes;
    // A file without records has no smallest or largest record.
    line["smallest"] = records ? JsonObject(smallest) : JsonObject(nullptr);
    line["largest"] = records ? JsonObject(largest) : JsonObject(nullptr);
    if (compression == DINPUT_COMPRESSION_ZSTD) {
      // Skippable frames hold no records; they are reported so that bytes the records do not
      // account for are not mistaken for damage.
      FILE* file = std::fopen(path.c_str(), "rb");
      if (file != nullptr) {
        ZstdFrames frames = count_zstd_frames(file);
        std::fclose(file);
        if (frames.skippable > 0) {
          line["skippable_frames"] = frames.skippable;
          line["skippable_bytes"] = frames.skippable_bytes;
        }
      }
    }
    if (skip_corrupt) skip_report(source, path, &line, &warnings);
    out += dump_json(line, {{"file", path}}) + "\n";
  }
  std::fputs(warnings.c_str(), stderr);
  return out;
}

}  // namespace

std::string skip_warning(const dinput_dist_iterator_t* iterator, int worker) {
  int64_t records = 0, bytes = 0;
  if (dinput_dist_iterator_statistic(&records, iterator, "corrupt_records_skipped") != DINPUT_OK ||
      dinput_dist_iterator_statistic(&bytes, iterator, "corrupt_bytes_skipped") != DINPUT_OK ||
      (records == 0 && bytes == 0)) {
    return "";
  }
  return "warning: worker " + std::to_string(worker) + " " + skipped_text(records, bytes) + "\n";
}

bool is_record_command(const std::string& command) {
  return command == "write" || command == "convert" || command == "inspect";
}

std::string run_record_command(const std::string& command, int argc, char** argv) {
  if (command == "write") return command_write(argc, argv);
  if (command == "convert") return command_convert(argc, argv);
  if (command == "inspect") return command_inspect(argc, argv);
  throw Failure(DINPUT_INTERNAL, "unknown record command '" + command + "'");
}

}  // namespace dinput_tool
