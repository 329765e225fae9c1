// Readers as values: interleave and flat_map over file names with a built-in reader.
#include "core/status.h"
#include "data/datasets.h"
#include "io/file_sources.h"

namespace dinput {

DatasetPtr make_reader(const ReaderSpec& reader, std::vector<std::string> files) {
  switch (reader.kind) {
    case ReaderSpec::Kind::kRecords:
      return make_records(std::move(files), reader.compression, reader.buffer_size);
    case ReaderSpec::Kind::kTextLines:
      return make_text_lines(std::move(files));
    case ReaderSpec::Kind::kFixedLengthRecords:
      return make_fixed_length_records(std::move(files), reader.record_bytes, reader.header_bytes,
                                       reader.footer_bytes);
  }
  raise(Code::kInvalidArgument, "unknown reader kind ", static_cast<int>(reader.kind));
}

std::string describe(const ReaderSpec& reader) {
  switch (reader.kind) {
    case ReaderSpec::Kind::kRecords:
      return str_cat("records(compression=", compression_name(reader.compression),
                     ", buffer_size=", reader.buffer_size, ")");
    case ReaderSpec::Kind::kTextLines:
      return "text_lines()";
    case ReaderSpec::Kind::kFixedLengthRecords:
      return str_cat("fixed_length_records(record_bytes=", reader.record_bytes,
                     ", header_bytes=", reader.header_bytes, ", footer_bytes=", reader.footer_bytes,
                     ")");
  }
  return "unknown reader";
}

DatasetPtr make_reader_interleave(DatasetPtr input, const ReaderSpec& reader, int64_t cycle_length,
                                  int64_t block_length, int64_t num_parallel_calls,
                                  std::optional<bool> deterministic, bool flat_map) {
  const char* op = flat_map ? "flat_map" : "interleave";
  DINPUT_CHECK_ARG(input != nullptr, op, ": no input dataset");
  make_reader(reader, {});  // the reader's options, checked now rather than per file
  const ElementSpec& in = input->element_spec();
  DINPUT_CHECK_ARG(
      in.size() == 1 && in[0].dtype == DType::kBytes && in[0].shape.rank() == 0, op,
      ": a reader needs a dataset of file names (bytes scalars), e.g. list_files(...), but the "
      "input's elements are ",
      to_string(in));
  auto fn = std::make_shared<const InterleaveFn>([reader, op](const Element& e) {
    std::string_view name = e.at(0).string(0);
    if (name.find('\0') != std::string_view::npos)
      raise(Code::kInvalidArgument, op, ": a file name of the input contains a NUL byte");
    return make_reader(reader, {std::string(name)});
  });
  return make_reader_interleave(std::move(input), std::move(fn), describe(reader),
                                ElementSpec{{DType::kBytes, Shape()}}, cycle_length, block_length,
                                num_parallel_calls, deterministic, flat_map);
}

}  // namespace dinput
