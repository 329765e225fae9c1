// The iterator shared by the file sources whose elements are records of files (records,
// fixed_length_records, text_lines): it opens the files in order, turns each record view
// into a bytes scalar without copying its bytes, and keeps the iterator statistics.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "io/record_reader.h"

namespace dinput {

// Opens one file of the list (errors name the file). start: a byte offset of a record that a
// saved iterator state gives, which the source may begin at (then its offset() is start);
// a source that cannot starts at 0 and the iterator parses forward to the record.
using OpenRecordSource =
    std::function<std::unique_ptr<RecordSource>(const std::string& path, uint64_t start)>;

// Reads the one record at a byte offset of a file, checked as a reader checks it: what makes
// a source addressable (Iterator::read_at), for uncompressed record files.
using ReadRecordAt = std::function<Tensor(const std::string& path, uint64_t offset)>;

// Counts every delivered record in stats->records and its bytes in stats->record_bytes,
// and the sources' skipped records and bytes in stats->corrupt_records_skipped and
// stats->corrupt_bytes_skipped. Running out of memory (std::bad_alloc) while a file is
// opened or read is RESOURCE_EXHAUSTED naming `what` (the reader), the file and the stage.
std::unique_ptr<Iterator> make_record_iterator(const char* what, std::vector<std::string> files,
                                               OpenRecordSource open,
                                               std::shared_ptr<IteratorStats> stats,
                                               ReadRecordAt read_one = nullptr);

}  // namespace dinput
