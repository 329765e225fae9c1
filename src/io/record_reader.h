// Readers of one record file: TFRecord framing over a (decompressed) chunk stream, and
// fixed-length records. They yield records as views into the stream's buffers; the
// datasets (records_dataset.cc) wrap the views into bytes tensors.
//
// TFRecord framing, little-endian:
//   uint64 length | uint32 masked_crc32c(length) | byte data[length] | uint32 masked_crc32c(data)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/tensor.h"
#include "data/options.h"
#include "io/compression.h"
#include "io/copy_arena.h"
#include "io/input_stream.h"

namespace dinput {

constexpr size_t kRecordHeaderBytes = 12;  // length + its CRC
constexpr size_t kRecordFooterBytes = 4;   // CRC of the data

struct RecordView {
  const char* data = nullptr;
  size_t size = 0;
  // What keeps `data` alive. The pointer itself is only valid until the reader's next call:
  // take a copy of the shared_ptr (or give it to BytesStorage::set_view) before that.
  const std::shared_ptr<const Buffer>* owner = nullptr;
  // The record spanned chunks and was copied into a buffer of its own (owner holds just it).
  bool copied = false;
};

class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // The next good record, or false at the end of the file's data. Corrupt data is
  // DATA_LOSS naming the file and the record's byte offset, unless the reader skips
  // corrupt records: then they are counted (take_skipped) and reading goes on where the
  // framing allows it.
  virtual bool next(RecordView& out) = 0;
  // Passes over the next record as next() would take it, without handing it out; false at
  // the end. A source may check less of what it passes over (RecordParser: the framing, not
  // the data's CRC); the default takes the record with next().
  virtual bool skip() {
    RecordView view;
    return next(view);
  }
  // The byte offset in the file's (decompressed) stream where reading goes on: just after the
  // last record returned, 0 before the first. Saved iterator states record it.
  virtual uint64_t offset() const = 0;
  // Corrupt records skipped since the last call (how they are counted: docs/records.md).
  int64_t take_skipped() {
    int64_t n = skipped_;
    skipped_ = 0;
    return n;
  }
  // Bytes skipped since the last call: every byte of the (decompressed) stream that was read
  // and not delivered as part of a record.
  int64_t take_skipped_bytes() {
    int64_t n = skipped_bytes_;
    skipped_bytes_ = 0;
    return n;
  }

 protected:
  void count_skip(int64_t records, uint64_t bytes) {
    skipped_ += records;
    skipped_bytes_ += static_cast<int64_t>(bytes);
  }
  int64_t skipped_ = 0;
  int64_t skipped_bytes_ = 0;
};

// TFRecord framing over a chunk stream. `path` names the file in messages; `stream` is
// nullptr for a plain file, or "zstd"/"gzip" when the offsets are in a decompressed stream
// (messages then say so). A record whose length claims more than max_record_bytes is
// DATA_LOSS before anything is allocated for it; below that, a record that spans chunks is
// assembled in one buffer of its size as its bytes arrive (one copy, never two).
//
// With skip_corrupt, reading goes on after damage:
//   - a wrong data CRC, or a record longer than max_record_bytes: that record is skipped
//     (its framing is intact, so the next record follows it);
//   - a wrong length CRC: the framing is lost; the reader scans forward byte by byte for
//     the next header whose length CRC is right and whose length is within the limit, and
//     goes on from there (a resynchronization; the bytes in between count as one record);
//   - a truncated record, or a corrupt compressed stream: the file's data ends there
//     (one record).
// take_skipped counts one record for each of these, take_skipped_bytes every byte read and
// not delivered.
class RecordParser final : public RecordSource {
 public:
  // start: the stream offset at which `input` begins (a saved position; a record boundary).
  RecordParser(std::string path, std::unique_ptr<ChunkSource> input, const char* stream,
               bool skip_corrupt, uint64_t max_record_bytes = kDefaultMaxRecordBytes,
               uint64_t start = 0);
  bool next(RecordView& out) override;
  // Checks the record's header (its length CRC and the length limit) and passes over its
  // data and footer unread: the data's CRC is not checked, and the chunks it lies in are
  // released. With skip_corrupt a record counts only if its data is intact, so the data is
  // checked then (a full next()).
  bool skip() override;
  // Offset in the (decompressed) stream of the next record.
  uint64_t offset() const override { return base_ + pos_; }

 private:
  enum class Step { kRecord, kSkipped, kEnd };
  // Reads the header at `start` (or uses `pending`, a header found by resync), then the record.
  Step step(uint64_t start, const char* pending, RecordView& out);
  // DATA_LOSS with `message`, or (skipping) count a record of `bytes` and go on with the
  // next record or, when the stream cannot go on (`ends_file`), end the file.
  Step fail(bool ends_file, uint64_t bytes, const std::string& message);
  // After a wrong length CRC in `header` (at offset S): scans from S + 1 for the next
  // plausible header. True with the header in pending_ (consumed from the stream) and its
  // offset in pending_start_; false when the stream ends first. Counts the skipped bytes.
  bool resync(const char* header);
  // resync found `header` at stream offset `start`, its last `in_chunk` bytes at pos_ in the
  // current chunk: keeps it for step(), consumes those bytes and counts the `skipped` bytes
  // before it as one skipped record. Always true.
  bool hold_header(const char* header, uint64_t start, size_t in_chunk, uint64_t skipped);
  bool plausible(const char* header) const;
  // Moves to the next chunk; false at the end of the stream.
  bool advance();
  // Copies n bytes into dst (or, dst null, passes over them), crossing chunks; returns the
  // bytes consumed, fewer than n only at the end of the stream.
  uint64_t consume(char* dst, uint64_t n);
  size_t avail() const { return cur_.size - pos_; }
  // Prefetches the current chunk from `end` (the end of the record being read) a little
  // way ahead.
  void prefetch_ahead(const char* end);
  std::string where(uint64_t offset) const;
  const char* medium() const;
  void close();

  std::string path_;
  std::unique_ptr<ChunkSource> input_;
  const char* stream_;
  bool skip_corrupt_;
  uint64_t max_record_bytes_;
  bool done_ = false;
  Chunk cur_;
  size_t pos_ = 0;
  uint64_t base_ = 0;                    // stream offset of cur_.data
  const char* prefetched_ = nullptr;     // lines of cur_ below this were prefetched
  std::shared_ptr<const Buffer> spill_;  // the last record copied out of several chunks
  bool passing_ = false;                 // skip(): pass over the data unchecked
  bool have_pending_ = false;            // resync found a header: pending_ holds it
  char pending_[kRecordHeaderBytes];
  uint64_t pending_start_ = 0;
};

// A record file: the file's chunks, decompressed, parsed. Opening errors (NOT_FOUND,
// PERMISSION_DENIED, ...) name the file. buffer_size 0: kDefaultChunkBytes.
// start: the offset of a record in the (decompressed) stream to begin at, a position saved
// in an iterator state: an uncompressed file is read from there, a compressed one is
// decompressed from its start and the bytes before it dropped unparsed.
std::unique_ptr<RecordSource> open_record_file(
    const std::string& path, Compression compression, size_t buffer_size, bool skip_corrupt,
    std::shared_ptr<ChunkPool> pool = nullptr, uint64_t max_record_bytes = kDefaultMaxRecordBytes,
    const FileReadOptions& file_options = FileReadOptions{}, uint64_t start = 0);

// Single records at byte offsets of uncompressed record files, each checked as RecordParser
// checks it (both CRCs, the length limit) and copied out into a bytes scalar. The last file
// stays open between calls: a shuffle's restore reads the records of its buffer this way,
// most of them from a few files. The records a call reads together are copied into huge
// arenas (io/copy_arena.h), or with `map` are views of the file's mapping, and are packed
// several to a string storage, as the record iterator packs the records it reads. A file that
// cannot be opened is an error naming it; one that is shorter than the offset or holds no intact
// record there is DATA_LOSS naming the file and the offset.
class RecordsAtOffsets {
 public:
  // map: read the records out of a mapping of the file (map_files), as views of it.
  explicit RecordsAtOffsets(uint64_t max_record_bytes = kDefaultMaxRecordBytes, bool map = false);
  ~RecordsAtOffsets();
  RecordsAtOffsets(const RecordsAtOffsets&) = delete;
  RecordsAtOffsets& operator=(const RecordsAtOffsets&) = delete;

  Tensor read(const std::string& path, uint64_t offset);
  // The records at `n` offsets of one file into out[0..n), as read() would. Offsets that lie
  // close together (in increasing order) are read with one pread of the bytes from the first
  // to the last: on a file in the page cache, a pread costs about as much as copying ten
  // kilobytes. Each read goes into one buffer kept for the next.
  void read(const std::string& path, const uint64_t* offsets, size_t n, Tensor* out);

 private:
  void open(const std::string& path);
  // Reads up to n bytes at `offset` of the open file (fewer only at its end).
  size_t read_bytes(char* dst, size_t n, uint64_t offset);
  // The record at `offset` when it lies whole in window_ with its framing intact and both
  // CRCs right; false otherwise (read() then reads it alone, and reports what is wrong).
  bool from_window(uint64_t offset, Tensor& out);
  // A bytes scalar of the current storage holding [data, data + size), which is at byte
  // `data_at` of the file: a view of the mapping (with map_), else a copy in the arena.
  Tensor keep(const char* data, size_t size, uint64_t data_at);
  // origin_ for a buffer whose byte `anchor` is at `offset` of the file.
  std::shared_ptr<const ByteOrigin> origin_from(const void* anchor, uint64_t offset) const;
  std::vector<char> window_;  // bytes of the open file from window_at_ (read, not mapped)
  const char* window_bytes() const {
    return mapping_ ? static_cast<const char*>(mapping_->data()) : window_.data();
  }
  size_t window_used_ = 0;
  uint64_t window_at_ = 0;
  uint64_t max_record_bytes_;
  std::string path_;  // of the open file
  int fd_ = -1;
  bool map_;
  // With map_: the open file's mapping, the window over all of it; records are its views.
  std::shared_ptr<const Buffer> mapping_;
  CopyArena arena_;  // where records read (not mapped) are copied
  // The open file, named in the messages of later errors about its records (core/origin.h).
  std::shared_ptr<const ByteOrigin> origin_;
  // The storage being filled: a call's records only, so that it is complete before any of
  // its tensors is handed out.
  std::shared_ptr<BytesStorage> storage_;
  size_t storage_used_ = 0;
};

// Fixed-length records: header_bytes are skipped at the start and footer_bytes at the end,
// the rest is cut into records of record_bytes. A file whose body is not a multiple of
// record_bytes is DATA_LOSS naming the file and its size; with skip_corrupt the whole
// records are read and the incomplete tail counts as one skipped record. The file is read
// in chunks (open_sized_chunks), records handed out as views of them; a pipe or device,
// when allowed, is read whole first, at most file_options.whole_file_limit bytes.
std::unique_ptr<RecordSource> open_fixed_length_file(
    const std::string& path, uint64_t record_bytes, uint64_t header_bytes, uint64_t footer_bytes,
    bool skip_corrupt, const FileReadOptions& file_options = FileReadOptions{},
    std::shared_ptr<ChunkPool> pool = nullptr);

}  // namespace dinput
