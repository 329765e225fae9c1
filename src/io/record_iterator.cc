#include "io/record_iterator.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <thread>
#include <utility>

#include "core/quote.h"
#include "core/status.h"
#include "core/tensor_ops.h"
#include "core/thread.h"
#include "data/state.h"
#include "io/copy_arena.h"
#include "io/file_ops.h"

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
  static constexpr size_t kGroup = kRecordsPerStorage;

  FileRecordIterator(const char* what, std::vector<std::string> files, OpenRecordSource open,
                     ReadRecordAt read_one, std::shared_ptr<IteratorStats> stats,
                     std::optional<RecordFraming> framing)
      : what_(what),
        files_(std::move(files)),
        open_(std::move(open)),
        read_one_(std::move(read_one)),
        stats_(std::move(stats)),
        framing_(framing) {
    ready_.reserve(kGroup);
  }

  bool next(Element& out) override {
    if (pos_ == ready_.size() && !refill()) return false;
    out.clear();
    out.push_back(deliver());
    return true;
  }

  // Straight into one batch tensor, without an Element per record. The row array is kept for
  // the next batch: a fresh one is a large request that makes glibc's malloc consolidate its
  // free lists each time.
  int64_t next_batch(int64_t n, Element& out) override {
    std::vector<Tensor>& rows = rows_;
    rows.clear();
    rows.reserve(static_cast<size_t>(std::min<int64_t>(n, 4096)));
    try {
      while (static_cast<int64_t>(rows.size()) < n) {
        if (pos_ == ready_.size() && !refill()) break;
        rows.push_back(deliver());
      }
    } catch (...) {
      rows.clear();
      throw;
    }
    const auto got = static_cast<int64_t>(rows.size());
    if (got > 0) {
      out.clear();
      out.push_back(stack(rows, 0));
    }
    rows.clear();  // the records' chunks go with the batch, not with this array
    return got;
  }

  // Records already parsed are dropped; the rest are passed over by the source (by their
  // headers, for record files). The records read next come in small groups, each copied out
  // of its chunk: a restore keeps a few records among many it passes over, and views would
  // keep every chunk they lie in (docs/checkpoint.md, "Shuffle").
  int64_t skip(int64_t n) override {
    int64_t done = 0;
    for (; done < n && pos_ < ready_.size(); ++done) {
      const Ready& r = ready_[pos_++];
      if (r.skipped_before)
        stats_->corrupt_records_skipped.fetch_add(r.skipped_before, std::memory_order_relaxed);
      if (r.skipped_bytes_before)
        stats_->corrupt_bytes_skipped.fetch_add(r.skipped_bytes_before, std::memory_order_relaxed);
    }
    group_ = 1;
    if (done == n) return done;
    ready_.clear();
    pos_ = 0;
    try {
      if (error_ && !finished_) reopen_failed();
      while (done < n && !error_ && open_source()) {
        const Position at = parsing_;
        const bool got = source_->skip();
        skipped_ += source_->take_skipped();
        skipped_bytes_ += source_->take_skipped_bytes();
        if (!got) {
          source_.reset();
          continue;
        }
        parsing_.record = at.record + 1;
        parsing_.offset = source_->offset();
        ++done;
      }
    } catch (...) {
      error_ = std::current_exception();
      source_.reset();
    }
    if (error_) std::rethrow_exception(error_);
    return done;
  }

  // One pass over the run: each record's header is read, the kept records are copied out of
  // their chunks into the copy arenas (as after a skip) and packed kGroup to a storage, and
  // handed out a group at a time, once their storage is complete.
  int64_t select(int64_t n, const std::vector<int64_t>& keep, const Take& take) override {
    int64_t done = 0;
    size_t k = 0;
    Element e;
    for (; done < n && pos_ < ready_.size(); ++done) {  // records parsed already
      if (k < keep.size() && keep[k] == done) {
        e.clear();
        e.push_back(deliver(/*produced=*/false));
        take(k++, e);
      } else {
        skip(1);
      }
    }
    group_ = 1;
    if (done == n) return done;
    ready_.clear();
    pos_ = 0;
    std::vector<size_t> which;  // the index in `keep` of each record of ready_
    which.reserve(kGroup);
    std::shared_ptr<BytesStorage> storage;
    size_t used = 0;
    auto hand_out = [&] {  // as deliver() would, counting once per group
      int64_t bytes = 0, corrupt = 0, corrupt_bytes = 0;
      for (size_t i = 0; i < which.size(); ++i) {
        Ready& r = ready_[i];
        last_ = r.at;
        last_own_ = r.own;
        bytes += static_cast<int64_t>(r.size);
        corrupt += r.skipped_before;
        corrupt_bytes += r.skipped_bytes_before;
        e.clear();
        e.push_back(std::move(r.tensor));
        take(which[i], e);
      }
      stats_->records.fetch_add(static_cast<int64_t>(which.size()), std::memory_order_relaxed);
      stats_->record_bytes.fetch_add(bytes, std::memory_order_relaxed);
      if (corrupt) stats_->corrupt_records_skipped.fetch_add(corrupt, std::memory_order_relaxed);
      if (corrupt_bytes)
        stats_->corrupt_bytes_skipped.fetch_add(corrupt_bytes, std::memory_order_relaxed);
      ready_.clear();
      pos_ = 0;
      which.clear();
      storage.reset();
      used = 0;
    };
    try {
      if (error_ && !finished_) reopen_failed();
      while (done < n && !error_ && open_source()) {
        const Position at = parsing_;
        const bool wanted = k < keep.size() && keep[k] == done;
        RecordView view;
        const bool got = wanted ? source_->next(view) : source_->skip();
        skipped_ += source_->take_skipped();
        skipped_bytes_ += source_->take_skipped_bytes();
        if (!got) {
          source_.reset();
          continue;
        }
        parsing_.record = at.record + 1;
        parsing_.offset = source_->offset();
        ++done;
        if (!wanted) continue;
        if (framing_ && view.owner && *view.owner) mark_origin(view);
        Tensor t;
        if (view.copied) {  // a buffer of its own, freed with it (see parse_group)
          t = Tensor::allocate(DType::kBytes, Shape());
          t.set_string_view(0, view.data, view.size, *view.owner);
        } else {
          if (!storage) storage = std::make_shared<BytesStorage>(kGroup);
          // A buffer that holds the whole file (a mapping, with map_files) is never reused
          // for other bytes: its records are viewed, as a normal read views them.
          if ((*view.owner)->size() == parsing_.file_size && parsing_.file_size > 0)
            storage->set_view(used, view.data, view.size, *view.owner);
          else {
            // (The copy first: it may start a new arena, which then owns the view.)
            const char* copy = copy_to_arena(view, /*huge=*/true);
            storage->set_view(used, copy, view.size, arena_.buffer());
          }
          t = Tensor(DType::kBytes, Shape(), storage, used++);
        }
        ready_.push_back(Ready{std::move(t), view.size, skipped_, skipped_bytes_, at,
                               own_offset(at, view.size)});
        skipped_ = 0;
        skipped_bytes_ = 0;
        which.push_back(k++);
        if (ready_.size() == kGroup) hand_out();
      }
    } catch (...) {
      error_ = std::current_exception();
      source_.reset();
    }
    hand_out();  // the records before an error first
    if (error_) std::rethrow_exception(error_);
    return done;
  }

  // The run's second part is passed over by a second iterator over the same files, opened at
  // `state`, on a thread of its own; this one passes over the first part meanwhile, checks
  // that it ends where the second part begins, then hands out the second part's records and
  // goes on from where that part ended. Errors come in the order of the run: the first
  // part's, then the second's (opening it at `state` included). A state at the start of a
  // file (which this iterator reaches at the end of the file before it, so the two would not
  // compare) or one CPU: the two parts in turn on this thread.
  int64_t select_split(int64_t n, const std::vector<int64_t>& keep, const Take& take, int64_t at,
                       const std::string& state) override {
    static const bool parallel = std::thread::hardware_concurrency() > 1;
    if (!parallel || at <= 0 || at >= n || pos_ < ready_.size()) return select(n, keep, take);
    const auto first_keep =
        static_cast<size_t>(std::lower_bound(keep.begin(), keep.end(), at) - keep.begin());
    std::vector<int64_t> second_keep;
    second_keep.reserve(keep.size() - first_keep);
    for (size_t k = first_keep; k < keep.size(); ++k) second_keep.push_back(keep[k] - at);
    struct Kept {
      Element element;
      Position at;
      uint64_t own;
      size_t size;
    };
    std::vector<Kept> kept;
    kept.reserve(second_keep.size());
    FileRecordIterator part(what_, files_, open_, nullptr, stats_, framing_);
    bool split = false;  // the second part was passed over by `part`
    Position from;       // where it began
    int64_t second_got = 0;
    std::exception_ptr second_error;
    Thread worker([&] {
      try {
        StateReader in(state, 0, what_);
        part.restore(in);
        in.finish();
        if (!part.source_) return;
        split = true;
        from = part.parsing_;
        second_got = part.select(n - at, second_keep, [&](size_t, Element& e) {
          const size_t size = e.at(0).string(0).size();
          kept.push_back(Kept{std::move(e), part.last_, part.last_own_, size});
        });
      } catch (...) {
        second_error = std::current_exception();
      }
    });
    // (An exception below joins the worker as `worker` goes: a Thread joins when destroyed.)
    const int64_t got =
        select(at, std::vector<int64_t>(keep.begin(), keep.begin() + first_keep), take);
    worker.join();
    if (got < at) return got;  // the data ended before the second part: that part is moot
    if (second_error) {
      if (!split) std::rethrow_exception(second_error);  // the state did not open
    } else if (!split) {
      return at +
             select(n - at, second_keep, [&](size_t k, Element& e) { take(first_keep + k, e); });
    }
    if (parsing_.file != from.file || parsing_.record != from.record ||
        parsing_.offset != from.offset)
      raise(Code::kDataLoss, what_, ": restoring the iterator state: the records read again reach ",
            "record ", parsing_.record, " at byte offset ", parsing_.offset, " of ",
            quoted(files_[static_cast<size_t>(parsing_.file)]), " where the state says record ",
            from.record, " at byte offset ", from.offset, " of ",
            quoted(files_[static_cast<size_t>(from.file)]),
            " (did the files change since the save?)");
    // Go on as the second part ended.
    source_ = std::move(part.source_);
    parsing_ = part.parsing_;
    file_index_ = part.file_index_;
    path_ = std::move(part.path_);
    finished_ = part.finished_;
    error_ = part.error_;
    skipped_ = part.skipped_;
    skipped_bytes_ = part.skipped_bytes_;
    group_ = 1;
    for (size_t j = 0; j < kept.size(); ++j) {
      last_ = kept[j].at;
      last_own_ = kept[j].own;
      take(first_keep + j, kept[j].element);
    }
    if (second_error) std::rethrow_exception(second_error);
    return at + second_got;
  }

  // The record's size is at hand where it is delivered; reading it back from the element
  // would touch its string storage, often no longer in cache by then. Counting here also
  // lets the stage's wrapper pass its calls straight on.
  bool count_output_into(std::atomic<int64_t>* elements, std::atomic<int64_t>* bytes) override {
    stage_elements_ = elements;
    stage_bytes_ = bytes;
    return true;
  }

  bool addressable() const override { return read_one_ != nullptr; }

  void prepare_reads(uint64_t bytes) noexcept override {
    if (read_one_) read_one_->prepare(bytes);
  }

  Address last_address() const override { return Address{last_.file, last_own_}; }

  void read_at(const Address& at, Element& out) override {
    check_address(at);
    out.clear();
    out.emplace_back();
    read_one_->read(files_[static_cast<size_t>(at.file)], &at.offset, 1, &out[0]);
  }

  // The addresses of one file at a time, so that the reader can read neighbours together.
  void read_at(const std::vector<Address>& at, const Take& take) override {
    std::vector<uint64_t> offsets;
    std::vector<Tensor> tensors;
    Element e;
    for (size_t i = 0; i < at.size();) {
      check_address(at[i]);
      size_t j = i + 1;
      while (j < at.size() && at[j].file == at[i].file) ++j;
      offsets.clear();
      for (size_t k = i; k < j; ++k) offsets.push_back(at[k].offset);
      tensors.assign(j - i, Tensor());
      read_one_->read(files_[static_cast<size_t>(at[i].file)], offsets.data(), j - i,
                      tensors.data());
      for (size_t k = i; k < j; ++k) {
        e.clear();
        e.push_back(std::move(tensors[k - i]));
        take(k, e);
      }
      i = j;
    }
  }

 private:
  // Where a record, or the parser, is: the file, the records of that file before it, and
  // the stream offset just after the record before it. What a saved state records.
  struct Position {
    uint64_t file = 0;
    int64_t record = 0;
    uint64_t offset = 0;
    // The file's size when it was opened (0: not a regular file), which tells a file that
    // changed since a save from the one saved.
    uint64_t file_size = 0;
  };

  void check_address(const Address& at) const {
    if (!read_one_ || at.file >= files_.size())
      raise(Code::kDataLoss, what_, ": no record at file index ", at.file, " of ", files_.size(),
            " files");
  }

  // Where the record just parsed (`size` bytes of data) begins, for its address: with
  // skip_corrupt, corrupt records may lie between `at`, where the parse began, and it, and
  // reading at `at` would find them. The parser stands just after the record.
  uint64_t own_offset(const Position& at, size_t size) const {
    return read_one_ ? parsing_.offset - size - kRecordHeaderBytes - kRecordFooterBytes : at.offset;
  }

  static uint64_t size_of(const std::string& path) {
    struct stat st;
    if (fileops::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return static_cast<uint64_t>(st.st_size);
  }

  struct Ready {
    Tensor tensor;
    size_t size;
    int64_t skipped_before;  // corrupt records skipped between the previous record and this one
    int64_t skipped_bytes_before;  // and their bytes
    Position at;
    uint64_t own;  // where the record itself begins (own_offset)
  };

 public:
  // The next record the consumer takes, which may be parsed already (ready_) or not.
  void save(StateWriter& w) const override {
    Position at = pos_ < ready_.size()  ? ready_[pos_].at
                  : (source_ || error_) ? parsing_
                                        : Position{file_index_, 0, 0};
    w.section(what_, [&](StateWriter& s) {
      s.u64(at.file);
      s.i64(at.record);
      s.u64(at.offset);
      s.u64(at.record > 0 ? at.file_size : 0);
    });
  }

  // Opens the saved file at the saved offset; a source that cannot begin there (fixed-length
  // records) parses up to the saved record again (the cost is bounded by one file) and
  // checks that it lies at the saved offset.
  void restore(StateReader& r) override {
    StateReader s = r.section(what_);
    Position at;
    at.file = s.u64_in("file index", 0, files_.size());
    at.record = s.i64_in("record index in the file", 0, INT64_MAX);
    at.offset = s.u64("byte offset");
    at.file_size = s.u64("file size");
    s.finish();
    if (at.record > 0 && at.file == files_.size()) s.corrupt("a record index past the last file");
    file_index_ = static_cast<size_t>(at.file);
    if (at.record == 0) return;  // the file is opened when first read
    const std::string& path = files_[file_index_];
    ++file_index_;
    const uint64_t size = size_of(path);
    if (size != at.file_size)
      raise(Code::kDataLoss, what_, ": restoring the iterator state: ", quoted(path), " has ", size,
            " bytes but had ", at.file_size,
            " when the state was saved (did the file change since the save?)");
    source_ = open_(path, at.offset);
    if (framing_) path_ = std::make_shared<const std::string>(path);
    if (source_->offset() == at.offset) {
      parsing_ = at;
      return;
    }
    parsing_ = Position{at.file, 0, 0, at.file_size};
    RecordView view;
    while (parsing_.record < at.record) {
      if (!source_->next(view))
        raise(Code::kDataLoss, what_, ": restoring the iterator state: ", quoted(path), " has ",
              parsing_.record, " records but the state is at record ", at.record,
              " (did the file change since the save?)");
      ++parsing_.record;
    }
    source_->take_skipped();  // counted before the save
    source_->take_skipped_bytes();
    parsing_.offset = source_->offset();
    if (parsing_.offset != at.offset)
      raise(Code::kDataLoss, what_, ": restoring the iterator state: record ", at.record, " of ",
            quoted(path), " follows byte offset ", parsing_.offset, " but the state says ",
            at.offset, " (did the file change since the save?)");
  }

 private:
  // produced: handed out by next() or next_batch(), and counted on the stage (a restore's
  // select() is not).
  Tensor deliver(bool produced = true) {
    Ready& r = ready_[pos_++];
    last_ = r.at;
    last_own_ = r.own;
    stats_->records.fetch_add(1, std::memory_order_relaxed);
    stats_->record_bytes.fetch_add(static_cast<int64_t>(r.size), std::memory_order_relaxed);
    if (produced && stage_bytes_) {  // count_output_into: both or neither
      bump(*stage_elements_, 1);
      bump(*stage_bytes_, static_cast<int64_t>(r.size));
    }
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

  // The record that failed while read ahead (parse_group stops at it, at parsing_) is about
  // to be passed over: skipping checks less (the framing only), so open its file again at it
  // and let skip() decide. A source that cannot begin at an offset keeps the error.
  void reopen_failed() {
    std::exception_ptr failed = std::exchange(error_, nullptr);
    file_index_ = static_cast<size_t>(parsing_.file) + 1;
    source_ = open_(files_[static_cast<size_t>(parsing_.file)], parsing_.offset);
    if (source_->offset() != parsing_.offset) {
      source_.reset();
      error_ = failed;
    }
  }

  // Copies a record into the current copy arena, so that records kept after a skip hold
  // arenas of their own size rather than the chunks they came from, and cost one allocation
  // per arena rather than one each.
  void copy_out(Tensor& t, const RecordView& view) {
    const char* dst = copy_to_arena(view, /*huge=*/false);
    t.set_string_view(0, dst, view.size, arena_.buffer());
  }
  // The copy notes where the record was read from (the origin mark_origin gave its buffer).
  const char* copy_to_arena(const RecordView& view, bool huge) {
    uint64_t offset = 0;
    const std::shared_ptr<const ByteOrigin>* origin =
        view.owner && *view.owner ? (*view.owner)->origin_at(view.data, &offset) : nullptr;
    return arena_.copy(view.data, view.size, huge, origin, offset);
  }

  // Opens the next file when none is open; false when the last file is done.
  bool open_source() {
    if (source_) return true;
    if (file_index_ >= files_.size()) {
      finished_ = true;
      return false;
    }
    parsing_ = Position{file_index_, 0, 0, size_of(files_[file_index_])};
    if (framing_) path_ = std::make_shared<const std::string>(files_[file_index_]);
    ++file_index_;
    source_ = open_(files_[file_index_ - 1], 0);
    return true;
  }

  void parse_group() {
    std::shared_ptr<BytesStorage> storage;
    size_t used = 0;
    const char* stage = "reading";
    // After a skip, groups grow again from one record, copied (see skip()).
    const size_t group = group_;
    const bool copy = group < kGroup;
    group_ = std::min(kGroup, group_ * 2);
    try {
      while (ready_.size() < group) {
        if (!source_) {
          stage = "opening";
          if (!open_source()) return;
        }
        stage = "reading";
        RecordView view;
        const Position at = parsing_;
        bool got = source_->next(view);
        skipped_ += source_->take_skipped();
        skipped_bytes_ += source_->take_skipped_bytes();
        if (!got) {
          source_.reset();  // close the file now, not at the next file's open
          continue;
        }
        parsing_.record = at.record + 1;
        parsing_.offset = source_->offset();
        stage = "delivering a record of";
        if (framing_ && view.owner && *view.owner) mark_origin(view);
        if (view.copied || copy) {
          Tensor t = Tensor::allocate(DType::kBytes, Shape());
          if (view.copied)
            t.set_string_view(0, view.data, view.size, *view.owner);
          else
            copy_out(t, view);
          ready_.push_back(Ready{std::move(t), view.size, skipped_, skipped_bytes_, at,
                                 own_offset(at, view.size)});
        } else {
          if (!storage) storage = std::make_shared<BytesStorage>(kGroup);
          storage->set_view(used, view.data, view.size, *view.owner);
          ready_.push_back(Ready{Tensor(DType::kBytes, Shape(), storage, used), view.size, skipped_,
                                 skipped_bytes_, at, own_offset(at, view.size)});
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

  // Marks the buffer `view` lies in with where its bytes are in the file, unless it says so
  // already (the buffer of the record before, or a whole mapped file): one ByteOrigin per
  // buffer. A buffer that says otherwise was reused for new bytes, which it only is when no
  // record of its old bytes is alive anywhere, so no other thread reads its origin.
  void mark_origin(const RecordView& view) {
    const Buffer& owner = **view.owner;
    const uint64_t data_at = parsing_.offset - framing_->footer_bytes - view.size;
    const ByteOrigin* o = owner.origin();
    if (o && o->path == path_ &&
        o->offset +
                (reinterpret_cast<uintptr_t>(view.data) - reinterpret_cast<uintptr_t>(o->anchor)) ==
            data_at)
      return;
    auto origin = std::make_shared<ByteOrigin>();
    origin->path = path_;
    origin->stream = framing_->stream;
    origin->header_bytes = framing_->header_bytes;
    origin->anchor = view.data;
    origin->offset = data_at;
    owner.set_origin(std::move(origin));
  }

  const char* what_;
  std::vector<std::string> files_;
  OpenRecordSource open_;
  ReadRecordAt read_one_;  // null: not addressable
  std::shared_ptr<IteratorStats> stats_;
  // The asking stage's counters (count_output_into), or both null.
  std::atomic<int64_t>* stage_elements_ = nullptr;
  std::atomic<int64_t>* stage_bytes_ = nullptr;
  std::optional<RecordFraming> framing_;
  std::shared_ptr<const std::string> path_;  // the file being parsed, for ByteOrigin
  size_t file_index_ = 0;
  Position parsing_;  // of the next record source_ parses
  std::unique_ptr<RecordSource> source_;
  std::vector<Ready> ready_;
  size_t pos_ = 0;
  Position last_;             // of the record delivered last
  uint64_t last_own_ = 0;     // and its own offset
  std::vector<Tensor> rows_;  // next_batch's, reused
  size_t group_ = kGroup;     // records the next parse_group reads
  // Where records read after a skip, and those a restore keeps, are copied.
  CopyArena arena_;
  int64_t skipped_ = 0;  // skipped since the last parsed record
  int64_t skipped_bytes_ = 0;
  bool finished_ = false;
  std::exception_ptr error_;
};

}  // namespace

std::unique_ptr<Iterator> make_record_iterator(const char* what, std::vector<std::string> files,
                                               OpenRecordSource open,
                                               std::shared_ptr<IteratorStats> stats,
                                               ReadRecordAt read_one,
                                               std::optional<RecordFraming> framing) {
  return std::make_unique<FileRecordIterator>(what, std::move(files), std::move(open),
                                              std::move(read_one), std::move(stats), framing);
}

}  // namespace dinput
