// Sources that read files. Each is a FileSource, so FILE auto-sharding can split its list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "io/compression.h"

namespace dinput {

// One bytes scalar per line; "\n" or "\r\n" ends a line, the last line needs none. Lines
// are views of the chunks read from the file; a line over max_record_bytes is
// RESOURCE_EXHAUSTED (text_lines.cc). They count as records in the iterator statistics.
DatasetPtr make_text_lines(std::vector<std::string> files);

// The names of the files matching the glob patterns (sorted; shuffled per iterator when
// `shuffle`, seed < 0 meaning random). NOT_FOUND when nothing matches.
DatasetPtr make_list_files(const std::vector<std::string>& patterns, bool shuffle, int64_t seed);

// One bytes scalar per record of TFRecord-framed files, read in order, both CRCs of every
// record verified. buffer_size: bytes per read or decompressed chunk (0: 1 MiB; kept
// within 4 KiB..1 GiB); records are views of the chunks (of the file's mapping, with
// Options::map_files, where buffer_size then matters only for compressed files and pipes).
// INVALID_ARGUMENT for a negative buffer_size or an unknown compression, UNIMPLEMENTED for
// a compression this build lacks. Honours Options::skip_corrupt_records and counts
// records, record_bytes and corrupt_records_skipped in the iterator's statistics.
DatasetPtr make_records(std::vector<std::string> files, Compression compression,
                        int64_t buffer_size);

// One bytes scalar of record_bytes bytes per record, after header_bytes at the start of
// each file and before footer_bytes at its end. record_bytes > 0 and header/footer >= 0,
// else INVALID_ARGUMENT.
DatasetPtr make_fixed_length_records(std::vector<std::string> files, int64_t record_bytes,
                                     int64_t header_bytes, int64_t footer_bytes);

// A file reader as a value: which reader, and its options (everything but its files). It is
// what interleave and flat_map run on each file name of their input without a user function
// (reader.cc).
struct ReaderSpec {
  enum class Kind { kRecords, kTextLines, kFixedLengthRecords };
  Kind kind = Kind::kRecords;
  Compression compression = Compression::kNone;  // records
  int64_t buffer_size = 0;                       // records
  int64_t record_bytes = 0;                      // fixed_length_records
  int64_t header_bytes = 0;
  int64_t footer_bytes = 0;
};

// The reader of the given files; checks the options as the reader's own factory does.
DatasetPtr make_reader(const ReaderSpec& reader, std::vector<std::string> files);

// "records(compression=ZSTD, buffer_size=0)", for fingerprints and messages.
std::string describe(const ReaderSpec& reader);

// interleave (or flat_map: one file at a time) of `input`, a dataset of file names (bytes
// scalars, else INVALID_ARGUMENT), reading each file with `reader`. FILE auto-sharding finds
// the files where the input's file source lists them (list_files), as for any interleave.
DatasetPtr make_reader_interleave(DatasetPtr input, const ReaderSpec& reader, int64_t cycle_length,
                                  int64_t block_length, int64_t num_parallel_calls,
                                  std::optional<bool> deterministic, bool flat_map);

}  // namespace dinput
