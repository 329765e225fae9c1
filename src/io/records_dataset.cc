// records and fixed_length_records: file sources whose elements are the records of their
// files, one bytes scalar each, handed out as views of the chunks read from the file (or of
// its mapping, with map_files) or of the decompressed chunks (no copy of the bytes).
#include <memory>
#include <mutex>
#include <vector>

#include "data/nodes.h"
#include "data/state.h"
#include "io/file_sources.h"
#include "io/huge_pages.h"
#include "io/record_iterator.h"
#include "io/record_read_ahead.h"
#include "io/record_reader.h"

namespace dinput {

namespace {

// An uncompressed regular record file can be read at a record's offset, so its records have
// addresses (Iterator::read_at); a compressed stream cannot be entered in the middle, nor a
// pipe. A reader keeps the last file it read open; a restore reads on two threads at once,
// so each call takes a reader of the iterator's few (made when none is free) and puts it
// back after. With map_files the records are views of the file's mapping, as a normal read
// makes them; otherwise they are copied into huge-page arenas, which prepare() faults in
// ahead.
class RecordReaders final : public RecordsAt {
 public:
  RecordReaders(uint64_t max_record, bool map) : max_record_(max_record), map_(map) {}
  void read(const std::string& path, const uint64_t* offsets, size_t n, Tensor* out) override {
    std::unique_ptr<RecordsAtOffsets> reader;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        reader = std::move(free_.back());
        free_.pop_back();
      }
    }
    if (!reader) reader = std::make_unique<RecordsAtOffsets>(max_record_, map_);
    reader->read(path, offsets, n, out);
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(reader));  // (not after an error: its file may be the bad one)
  }
  void prepare(uint64_t bytes) noexcept override {
    if (!map_) prefault_huge_arenas(bytes);
  }

 private:
  uint64_t max_record_;
  bool map_;
  std::mutex mu_;
  std::vector<std::unique_ptr<RecordsAtOffsets>> free_;
};

ReadRecordAt read_one(Compression compression, uint64_t max_record,
                      const FileReadOptions& file_options) {
  if (compression != Compression::kNone || file_options.allow_nonregular) return nullptr;
  return std::make_shared<RecordReaders>(max_record, file_options.map);
}

class RecordsDataset final : public FileSource {
 public:
  RecordsDataset(std::vector<std::string> files, Compression compression, size_t buffer_size)
      : files_(std::move(files)),
        compression_(compression),
        buffer_size_(buffer_size),
        spec_{{DType::kBytes, Shape()}} {}
  const char* name() const override { return "records"; }
  // The read buffer size changes no record, so it is not part of the fingerprint.
  std::string arguments() const override {
    return str_cat("compression=", compression_name(compression_), ", files=", list_digest(files_));
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return files_.empty() ? 0 : kUnknownCardinality; }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }
  const std::vector<std::string>& files() const override { return files_; }
  DatasetPtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<RecordsDataset>(std::move(files), compression_, buffer_size_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    Compression compression = compression_;
    size_t buffer_size = buffer_size_;
    bool skip = ctx.options.skip_corrupt();
    uint64_t max_record = ctx.options.record_limit();
    FileReadOptions file_options = file_read_options(ctx.options);
    // One pool per iterator, so that the chunks of one file are reused for the next (files
    // mapped with map_files need none).
    auto pool = make_chunk_pool(buffer_size);
    // Compressed files are decoded ahead on threads of their own (record_read_ahead.h):
    // decoding is most of what reading them costs, and it then overlaps the rest of the
    // pipeline.
    auto files = std::make_shared<FileListReadAhead>(
        files_,
        [=](const std::string& path, uint64_t start) {
          return open_record_file(path, compression, buffer_size, skip, pool, max_record,
                                  file_options, start);
        },
        /*enabled=*/compression != Compression::kNone, /*reopen_on_skip=*/!skip);
    return make_record_iterator(
        "records", files_,
        [files](const std::string& path, uint64_t start) { return files->open(path, start); },
        ctx.stats, read_one(compression, max_record, file_options),
        RecordFraming{kRecordHeaderBytes, kRecordFooterBytes,
                      compression == Compression::kZstd   ? "zstd"
                      : compression == Compression::kGzip ? "gzip"
                                                          : nullptr});
  }

 private:
  std::vector<std::string> files_;
  Compression compression_;
  size_t buffer_size_;
  ElementSpec spec_;
};

class FixedLengthRecordsDataset final : public FileSource {
 public:
  FixedLengthRecordsDataset(std::vector<std::string> files, uint64_t record_bytes,
                            uint64_t header_bytes, uint64_t footer_bytes)
      : files_(std::move(files)),
        record_bytes_(record_bytes),
        header_bytes_(header_bytes),
        footer_bytes_(footer_bytes),
        spec_{{DType::kBytes, Shape()}} {}
  const char* name() const override { return "fixed_length_records"; }
  std::string arguments() const override {
    return str_cat("record_bytes=", record_bytes_, ", header_bytes=", header_bytes_,
                   ", footer_bytes=", footer_bytes_, ", files=", list_digest(files_));
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return files_.empty() ? 0 : kUnknownCardinality; }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }
  const std::vector<std::string>& files() const override { return files_; }
  DatasetPtr with_files(std::vector<std::string> files) const override {
    return std::make_shared<FixedLengthRecordsDataset>(std::move(files), record_bytes_,
                                                       header_bytes_, footer_bytes_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    uint64_t record = record_bytes_, header = header_bytes_, footer = footer_bytes_;
    bool skip = ctx.options.skip_corrupt();
    FileReadOptions file_options = file_read_options(ctx.options);
    auto pool = make_chunk_pool(kDefaultChunkBytes);
    return make_record_iterator(
        "fixed_length_records", files_,
        [=](const std::string& path, uint64_t /*start: parsed up to instead*/) {
          return open_fixed_length_file(path, record, header, footer, skip, file_options, pool);
        },
        ctx.stats, nullptr, RecordFraming{});
  }

 private:
  std::vector<std::string> files_;
  uint64_t record_bytes_, header_bytes_, footer_bytes_;
  ElementSpec spec_;
};

}  // namespace

DatasetPtr make_records(std::vector<std::string> files, Compression compression,
                        int64_t buffer_size) {
  check_compression("records", compression);
  DINPUT_CHECK_ARG(buffer_size >= 0, "records: buffer_size must be >= 0 (0: the default), got ",
                   buffer_size);
  return std::make_shared<RecordsDataset>(std::move(files), compression,
                                          static_cast<size_t>(buffer_size));
}

DatasetPtr make_fixed_length_records(std::vector<std::string> files, int64_t record_bytes,
                                     int64_t header_bytes, int64_t footer_bytes) {
  DINPUT_CHECK_ARG(record_bytes > 0,
                   "fixed_length_records: record_bytes must be greater than zero, got ",
                   record_bytes);
  DINPUT_CHECK_ARG(header_bytes >= 0, "fixed_length_records: header_bytes must be >= 0, got ",
                   header_bytes);
  DINPUT_CHECK_ARG(footer_bytes >= 0, "fixed_length_records: footer_bytes must be >= 0, got ",
                   footer_bytes);
  return std::make_shared<FixedLengthRecordsDataset>(
      std::move(files), static_cast<uint64_t>(record_bytes), static_cast<uint64_t>(header_bytes),
      static_cast<uint64_t>(footer_bytes));
}

}  // namespace dinput
