#include "io/record_read_ahead.h"

#include <sys/stat.h>

#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "data/background_producer.h"
#include "io/file_ops.h"

namespace dinput {

namespace {

// Records parsed ahead: views into the chunks `owners` keep alive, each with what the source
// said about it. A block ends early at the end of the file or at an error (which follows
// its records).
struct Block {
  struct Record {
    const char* data;
    size_t size;
    uint64_t end;           // the source's offset() after it
    int64_t skipped;        // corrupt records skipped just before it
    int64_t skipped_bytes;  // and their bytes
    uint32_t owner;         // index in owners
    bool copied;
  };
  std::vector<Record> records;
  std::vector<std::shared_ptr<const Buffer>> owners;
  bool last = false;         // the file ends after these records (or with `error`)
  uint64_t end = 0;          // the source's offset() at its end
  int64_t tail_skipped = 0;  // skipped after the last record
  int64_t tail_skipped_bytes = 0;
  std::exception_ptr error;  // raised after the records
};

class ReadAheadSource final : public RecordSource {
 public:
  ReadAheadSource(OpenRecordFileAt open, OpenRecordFileAt reopen, size_t block_bytes, size_t blocks)
      : open_(std::move(open)), reopen_(std::move(reopen)), block_bytes_(block_bytes) {
    producer_.emplace([this](Block& b) { return parse(b); }, blocks);
  }

  ~ReadAheadSource() override {
    // The thread uses source_ and open_: stop it before they go.
    producer_.reset();
  }

  bool next(RecordView& out) override {
    if (direct_) return from_direct(direct_->next(out));
    if (!advance()) return false;
    take(out);
    return true;
  }

  bool skip() override {
    if (direct_) return from_direct(direct_->skip());
    fetch();
    if (pos_ == block_.records.size() && block_.error && reopen_) {
      // The record that failed ahead is skipped as the direct source skips it (the framing
      // only): read directly from it on.
      producer_.reset();
      block_ = Block{};
      direct_ = reopen_(offset_);
      return from_direct(direct_->skip());
    }
    if (!advance()) return false;
    RecordView view;
    take(view);
    return true;
  }

  uint64_t offset() const override { return offset_; }

 private:
  // Runs on the thread: the next block of records.
  bool parse(Block& b) {
    if (ended_) return false;
    size_t bytes = 0;
    try {
      reuse(b);
      b.records.reserve(block_bytes_ / 1024 + 1);
      if (!source_) source_ = open_(0);
      while (bytes < block_bytes_) {
        RecordView view;
        const bool got = source_->next(view);
        const int64_t skipped = source_->take_skipped();
        const int64_t skipped_bytes = source_->take_skipped_bytes();
        if (!got) {
          b.last = true;
          b.end = source_->offset();
          b.tail_skipped = skipped;
          b.tail_skipped_bytes = skipped_bytes;
          break;
        }
        if (b.owners.empty() || b.owners.back() != *view.owner) b.owners.push_back(*view.owner);
        b.records.push_back(Block::Record{view.data, view.size, source_->offset(), skipped,
                                          skipped_bytes, static_cast<uint32_t>(b.owners.size() - 1),
                                          view.copied});
        bytes += view.size + kRecordHeaderBytes + kRecordFooterBytes;
      }
    } catch (...) {
      b.error = std::current_exception();
      b.last = true;
    }
    if (b.last) {
      ended_ = true;
      source_.reset();  // close the file on the thread, now
    }
    return true;
  }

  // Gets the next block once block_ is used up, unless it was the file's last.
  void fetch() {
    if (pos_ < block_.records.size() || block_.last || done_) return;
    Block b;
    if (!producer_->next(b)) b.last = true;  // not reached: the last block says so
    recycle(std::move(block_));
    block_ = std::move(b);
    pos_ = 0;
  }

  // A used block's arrays go back to the thread for a later block: allocating and freeing
  // them afresh, on two threads, made glibc's malloc consolidate its free lists often.
  void recycle(Block used) {
    used.owners.clear();  // the chunks go now: only the records handed out keep them
    used.records.clear();
    std::lock_guard<std::mutex> lock(spare_mu_);
    if (spare_.size() < kSpares) spare_.push_back(std::move(used));
  }

  // On the thread: a recycled block's arrays, if there is one.
  void reuse(Block& b) {
    std::lock_guard<std::mutex> lock(spare_mu_);
    if (spare_.empty()) return;
    b.records = std::move(spare_.back().records);
    b.owners = std::move(spare_.back().owners);
    spare_.pop_back();
  }

  // Makes a record of block_ current; false at the end (or raises the error there).
  bool advance() {
    fetch();
    if (pos_ < block_.records.size()) return true;
    if (done_) return false;
    count_skip(block_.tail_skipped, static_cast<uint64_t>(block_.tail_skipped_bytes));
    std::exception_ptr e = block_.error;
    if (!e) offset_ = block_.end;
    finish();
    if (e) std::rethrow_exception(e);
    return false;
  }

  void take(RecordView& out) {
    const Block::Record& r = block_.records[pos_++];
    count_skip(r.skipped, static_cast<uint64_t>(r.skipped_bytes));
    offset_ = r.end;
    out.data = r.data;
    out.size = r.size;
    out.owner = &block_.owners[r.owner];
    out.copied = r.copied;
  }

  // The file is done: the thread and the last block go.
  void finish() {
    done_ = true;
    block_ = Block{};
    block_.last = true;
    pos_ = 0;
    producer_.reset();
  }

  bool from_direct(bool got) {
    count_skip(direct_->take_skipped(), static_cast<uint64_t>(direct_->take_skipped_bytes()));
    offset_ = direct_->offset();
    return got;
  }

  OpenRecordFileAt open_;
  OpenRecordFileAt reopen_;
  size_t block_bytes_;
  // The thread's side.
  std::unique_ptr<RecordSource> source_;
  bool ended_ = false;
  // The reader's side.
  Block block_;
  size_t pos_ = 0;
  uint64_t offset_ = 0;
  bool done_ = false;
  std::unique_ptr<RecordSource> direct_;  // after skip() reopened at a failed record
  // Used blocks whose arrays the thread reuses.
  static constexpr size_t kSpares = 2;
  std::mutex spare_mu_;
  std::vector<Block> spare_;
  // Last: its thread calls parse(), which uses the members above.
  std::optional<BackgroundProducer<Block>> producer_;
};

}  // namespace

std::unique_ptr<RecordSource> read_ahead(OpenRecordFileAt open, OpenRecordFileAt reopen,
                                         size_t block_bytes, size_t blocks) {
  return std::make_unique<ReadAheadSource>(std::move(open), std::move(reopen), block_bytes, blocks);
}

FileListReadAhead::FileListReadAhead(std::vector<std::string> files, OpenFile open, bool enabled,
                                     bool reopen_on_skip)
    : files_(std::move(files)),
      open_(std::move(open)),
      enabled_(enabled && std::thread::hardware_concurrency() > 1),
      reopen_on_skip_(reopen_on_skip) {}

FileListReadAhead::~FileListReadAhead() = default;

std::unique_ptr<RecordSource> FileListReadAhead::start(const std::string& path) {
  OpenFile open = open_;
  OpenRecordFileAt reopen;
  if (reopen_on_skip_) reopen = [open, path](uint64_t at) { return open(path, at); };
  return read_ahead([open, path](uint64_t at) { return open(path, at); }, std::move(reopen),
                    kBlockBytes, kBlocks);
}

namespace {

// Only regular files are read ahead. Opening a FIFO waits for a writer, and reading a pipe or
// a device may wait without end: a thread waiting there could not be stopped, and freeing the
// iterator would wait for it. A path that cannot be examined is opened directly too, which
// reports why when the reader gets to it.
bool regular_file(const std::string& path) {
  struct stat st;
  return fileops::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::unique_ptr<RecordSource> FileListReadAhead::open(const std::string& path, uint64_t start_at) {
  if (!enabled_ || start_at != 0 || !regular_file(path)) {
    std::unique_ptr<RecordSource> dropped;  // stopped outside the lock
    {
      std::lock_guard<std::mutex> lock(mu_);
      dropped = std::move(ahead_);
    }
    return open_(path, start_at);
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<RecordSource> source;
  if (ahead_ && next_index_ < files_.size() && files_[next_index_] == path) {
    source = std::move(ahead_);
  } else {
    // Not the file expected (a restore moved the reader): find it in the list.
    ahead_.reset();
    size_t i = next_index_ < files_.size() && files_[next_index_] == path ? next_index_ : 0;
    while (i < files_.size() && files_[i] != path) ++i;
    next_index_ = i;
    source = start(path);
  }
  ++next_index_;
  if (next_index_ < files_.size() && regular_file(files_[next_index_]))
    ahead_ = start(files_[next_index_]);
  return source;
}

}  // namespace dinput
