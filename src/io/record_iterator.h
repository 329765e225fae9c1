// The iterator shared by the file sources whose elements are records of files (records,
// fixed_length_records, text_lines): it opens the files in order, turns each record view
// into a bytes scalar without copying its bytes, and keeps the iterator statistics.
#pragma once

#include <functional>
#include <memory>
#include <optional>
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

// Reads the records at byte offsets of uncompressed record files, each checked as a reader
// checks it: what makes a source addressable (Iterator::read_at). Calls may come from two
// threads at once (a restore's two readers).
class RecordsAt {
 public:
  virtual ~RecordsAt() = default;
  // The records at n byte offsets of `path` into out[0..n).
  virtual void read(const std::string& path, const uint64_t* offsets, size_t n, Tensor* out) = 0;
  // A restore is about to read about `bytes` of records this way (Iterator::prepare_reads).
  virtual void prepare(uint64_t bytes) noexcept { (void)bytes; }
};
using ReadRecordAt = std::shared_ptr<RecordsAt>;

// How a source's records sit in their files, for the messages of later stages about a record
// (core/origin.h): the framing bytes before and after a record's data, and the compression
// whose decompressed stream the offsets count (nullptr: the file's own bytes).
struct RecordFraming {
  uint64_t header_bytes = 0;
  uint64_t footer_bytes = 0;
  const char* stream = nullptr;
};

// Counts every delivered record in stats->records and its bytes in stats->record_bytes,
// and the sources' skipped records and bytes in stats->corrupt_records_skipped and
// stats->corrupt_bytes_skipped. Running out of memory (std::bad_alloc) while a file is
// opened or read is RESOURCE_EXHAUSTED naming `what` (the reader), the file and the stage.
// With `framing`, the buffers the records view are marked with their file and offsets
// (core/buffer.h ByteOrigin): once per buffer, nothing per record but a check.
std::unique_ptr<Iterator> make_record_iterator(const char* what, std::vector<std::string> files,
                                               OpenRecordSource open,
                                               std::shared_ptr<IteratorStats> stats,
                                               ReadRecordAt read_one = nullptr,
                                               std::optional<RecordFraming> framing = std::nullopt);

}  // namespace dinput
