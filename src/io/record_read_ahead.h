// Reading record files ahead on background threads: a file's records are parsed (read,
// decompressed, both CRCs checked) on a thread of its own while the pipeline consumes the
// records parsed before, and the next file of a list starts before the current one ends.
// On a machine with two cores, decoding a zstd file then runs beside the shuffle, the
// batching and the consumer instead of in turn with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "io/record_reader.h"

namespace dinput {

// Opens a record file at a stream offset (0: its start), as open_record_file does.
using OpenRecordFileAt = std::function<std::unique_ptr<RecordSource>(uint64_t start)>;

// A record source whose records are parsed ahead by `open(0)`'s source on a background
// thread and handed over in blocks of about block_bytes (one hand-off per block, not per
// record), at most `blocks` blocks ahead. Its records, their order, its offsets, skipped
// counts and errors are those of the source read directly: an error (opening included) is
// raised when the reader gets to it, after every record parsed before it. skip() at a record
// that failed while parsed ahead passes over it as the direct source would (which checks
// only the framing): the file is opened again at that record with `reopen` (null: the error
// stands). Destroying it stops the thread after the block in progress.
std::unique_ptr<RecordSource> read_ahead(OpenRecordFileAt open, OpenRecordFileAt reopen,
                                         size_t block_bytes, size_t blocks);

// Opens the files of a list for one iterator: a file opened at its start is read ahead
// (read_ahead) and, once it is, the file after it in the list starts too, so that its first
// records are ready when the reader gets there. Opening at another offset (a restore) reads
// directly. `enabled` false (or one CPU): every file is read directly.
class FileListReadAhead {
 public:
  using OpenFile =
      std::function<std::unique_ptr<RecordSource>(const std::string& path, uint64_t start)>;
  FileListReadAhead(std::vector<std::string> files, OpenFile open, bool enabled,
                    bool reopen_on_skip);
  ~FileListReadAhead();
  FileListReadAhead(const FileListReadAhead&) = delete;
  FileListReadAhead& operator=(const FileListReadAhead&) = delete;

  std::unique_ptr<RecordSource> open(const std::string& path, uint64_t start);

  // The hand-off sizes: blocks of about 256 KiB, 16 of them ahead per file. A block is
  // 50-100 us of the pipeline's work; with 8 ahead (2 MiB), a decoding thread that lost its
  // core for a time slice often left the pipeline waiting (W1 on ZSTD files: 11-13 ms an
  // epoch; 16 ahead cut the epoch by 6-7%, bench/README.md).
  static constexpr size_t kBlockBytes = size_t{256} << 10;
  static constexpr size_t kBlocks = 16;

 private:
  std::unique_ptr<RecordSource> start(const std::string& path);

  std::vector<std::string> files_;
  OpenFile open_;
  bool enabled_;
  bool reopen_on_skip_;
  // Guards the two below: the two record iterators of a split restore
  // (Iterator::select_split) open files of one list from two threads.
  std::mutex mu_;
  size_t next_index_ = 0;                // of the file started ahead (ahead_), or to start
  std::unique_ptr<RecordSource> ahead_;  // files_[next_index_], started ahead
};

}  // namespace dinput
