#include "io/record_iterator.h"

#include <algorithm>
#include <exception>

#include "core/quote.h"
#include "core/status.h"
#include "core/tensor_ops.h"

namespace dinput {

namespace {

// Reads the records of a list of files, in order.
//
// Records are parsed a group at a time: one BytesStorage holds the views of up to kGroup
// records and each record's tensor is that storage at its own index. This makes a record
// cost one small Element and no storage of its own, which is most of what a record costs
// once its bytes are not copied. The storage is complete before any of its tensors is
// handed out, so consumers on other threads only ever read it. A record that had to be
// copied (it spanned two chunks) gets a storage of its own instead, so that its buffer is
// freed with it rather than kept by its neighbours. 48 views take 768 bytes, below the
// size at which glibc's malloc starts consolidating its free lists on every request.
//
// Whatever happens while a group is parsed (an error, skipped records) takes effect when
// the consumer gets to that point: the records before an error are delivered first, and
// the statistics count records as they are delivered.
class FileRecordIterator final : public Iterator {
 public:
  static constexpr size_t kGroup = 48;

  FileRecordIterator(const char* what, std::vector<std::string> files, OpenRecordSource open,
                     std::shared_ptr<IteratorStats> stats)
      : what_(what), files_(std::move(files)), open_(std::move(open)), stats_(std::move(stats)) {
    ready_.reserve(kGroup);
  }

  bool next(Element& out) override {
    if (pos_ == ready_.size() && !refill()) return false;
    out.clear();
    out.push_back(deliver());
    return true;
  }

  // Straight into one batch tensor, without an Element per record.
  int64_t next_batch(int64_t n, Element& out) override {
    std::vector<Tensor> rows;
    rows.reserve(static_cast<size_t>(std::min<int64_t>(n, 4096)));
    while (static_cast<int64_t>(rows.size()) < n) {
      if (pos_ == ready_.size() && !refill()) break;
      rows.push_back(deliver());
    }
    if (rows.empty()) return 0;
    out.clear();
    out.push_back(stack(rows, 0));
    return static_cast<int64_t>(rows.size());
  }

 private:
  struct Ready {
    Tensor tensor;
    size_t size;
    int64_t skipped_before;  // corrupt records skipped between the previous record and this one
    int64_t skipped_bytes_before;  // and their bytes
  };

  Tensor deliver() {
    Ready& r = ready_[pos_++];
    stats_->records.fetch_add(1, std::memory_order_relaxed);
    stats_->record_bytes.fetch_add(static_cast<int64_t>(r.size), std::memory_order_relaxed);
    if (r.skipped_before)
      stats_->corrupt_records_skipped.fetch_add(r.skipped_before, std::memory_order_relaxed);
    if (r.skipped_bytes_before)
      stats_->corrupt_bytes_skipped.fetch_add(r.skipped_bytes_before, std::memory_order_relaxed);
    return std::move(r.tensor);
  }

  // Parses the next group; false when the data has ended. Rethrows a pending error.
  bool refill() {
    ready_.clear();
    pos_ = 0;
    if (!error_ && !finished_) parse_group();
    if (!ready_.empty()) return true;
    if (skipped_ || skipped_bytes_) {
      stats_->corrupt_records_skipped.fetch_add(skipped_, std::memory_order_relaxed);
      stats_->corrupt_bytes_skipped.fetch_add(skipped_bytes_, std::memory_order_relaxed);
      skipped_ = 0;
      skipped_bytes_ = 0;
    }
    if (error_) std::rethrow_exception(error_);
    return false;
  }

  void parse_group() {
    std::shared_ptr<BytesStorage> storage;
    size_t used = 0;
    const char* stage = "reading";
    try {
      while (ready_.size() < kGroup) {
        if (!source_) {
          if (file_index_ >= files_.size()) {
            finished_ = true;
            return;
          }
          stage = "opening";
          ++file_index_;
          source_ = open_(files_[file_index_ - 1]);
        }
        stage = "reading";
        RecordView view;
        bool got = source_->next(view);
        skipped_ += source_->take_skipped();
        skipped_bytes_ += source_->take_skipped_bytes();
        if (!got) {
          source_.reset();  // close the file now, not at the next file's open
          continue;
        }
        stage = "delivering a record of";
        if (view.copied) {
          Tensor t = Tensor::allocate(DType::kBytes, Shape());
          t.set_string_view(0, view.data, view.size, *view.owner);
          ready_.push_back(Ready{std::move(t), view.size, skipped_, skipped_bytes_});
        } else {
          if (!storage) storage = std::make_shared<BytesStorage>(kGroup);
          storage->set_view(used, view.data, view.size, *view.owner);
          ready_.push_back(Ready{Tensor(DType::kBytes, Shape(), storage, used), view.size, skipped_,
                                 skipped_bytes_});
          ++used;
        }
        skipped_ = 0;
        skipped_bytes_ = 0;
      }
    } catch (const std::bad_alloc&) {
      // Out of memory says where: which reader, which file, at what stage.
      source_.reset();
      error_ = std::make_exception_ptr(
          Error(Code::kResourceExhausted,
                str_cat(what_, ": out of memory ", stage, " ",
                        file_index_ > 0 ? quoted(files_[file_index_ - 1]) : "a file")));
    } catch (...) {
      // Delivered after the records parsed before it; the source is done for.
      error_ = std::current_exception();
      source_.reset();
    }
  }

  const char* what_;
  std::vector<std::string> files_;
  OpenRecordSource open_;
  std::shared_ptr<IteratorStats> stats_;
  size_t file_index_ = 0;
  std::unique_ptr<RecordSource> source_;
  std::vector<Ready> ready_;
  size_t pos_ = 0;
  int64_t skipped_ = 0;  // skipped since the last parsed record
  int64_t skipped_bytes_ = 0;
  bool finished_ = false;
  std::exception_ptr error_;
};

}  // namespace

std::unique_ptr<Iterator> make_record_iterator(const char* what, std::vector<std::string> files,
                                               OpenRecordSource open,
                                               std::shared_ptr<IteratorStats> stats) {
  return std::make_unique<FileRecordIterator>(what, std::move(files), std::move(open),
                                              std::move(stats));
}

}  // namespace dinput
