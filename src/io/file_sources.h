// Sources that read files. Each is a FileSource, so FILE auto-sharding can split its list.
#pragma once

#include <cstdint>
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

}  // namespace dinput
