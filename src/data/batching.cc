// batch, unbatch and rebatch: moving rows between elements.
#include <algorithm>
#include <chrono>
#include <deque>

#include "core/tensor_ops.h"
#include "data/autotune.h"
#include "data/data_errors.h"
#include "data/nodes.h"
#include "data/parallel_calls.h"
#include "data/row_reader.h"
#include "data/state.h"

namespace dinput {

// ---- batch ----

BatchDataset::BatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                           int64_t parallel)
    : UnaryDataset(std::move(input)),
      batch_size_(batch_size),
      drop_remainder_(drop_remainder),
      parallel_(parallel) {
  for (const auto& s : input_->element_spec())
    spec_.push_back({s.dtype, s.shape.prepend(drop_remainder ? batch_size : kUnknownDim)});
}

int64_t BatchDataset::cardinality() const {
  int64_t n = input_->cardinality();
  if (n < 0) return n;
  // n / b rounded up without forming n + b - 1, which overflows for huge batch sizes.
  return n / batch_size_ + (!drop_remainder_ && n % batch_size_ != 0 ? 1 : 0);
}

std::string BatchDataset::arguments() const {
  return str_cat("batch_size=", batch_size_, ", drop_remainder=", drop_remainder_ ? 1 : 0);
}

DatasetPtr BatchDataset::with_inputs(std::vector<DatasetPtr> inputs) const {
  return std::make_shared<BatchDataset>(inputs.at(0), batch_size_, drop_remainder_, parallel_);
}

namespace {

class BatchIterator final : public Iterator {
 public:
  BatchIterator(std::unique_ptr<Iterator> input, int64_t batch_size, bool drop_remainder)
      : input_(std::move(input)), batch_size_(batch_size), drop_remainder_(drop_remainder) {}

  bool next(Element& out) override {
    if (done_) return false;
    int64_t rows = input_->next_batch(batch_size_, out);
    if (rows < batch_size_) done_ = true;
    if (rows == 0 || (drop_remainder_ && rows < batch_size_)) return false;
    return true;
  }
  void save(StateWriter& w) const override { save_unless_ended(w, "batch", done_, *input_); }
  void restore(StateReader& r) override { done_ = restore_unless_ended(r, "batch", *input_); }

 private:
  std::unique_ptr<Iterator> input_;
  int64_t batch_size_;
  bool drop_remainder_;
  bool done_ = false;
};

// Stacks `rows` into a batch and lets them go at once, on the pool's thread: the rows' own
// buffers are freed there, not when the task itself is.
Element stack_and_release(std::vector<Element>& rows) {
  Element batch = stack_rows(rows);
  rows.clear();
  return batch;
}

// Batch with num_parallel_calls > 1: the rows of a batch are read on the consumer's thread
// (input iterators are single-consumer), and the copy that stacks them into the batch's
// tensors, the costly part for large elements, runs on a pool while the next batches' rows
// are read. Up to `threads` batches are in flight. Batches come out in input order whatever
// `deterministic` says: stacking takes about the same time for every batch, so letting a
// later batch overtake an earlier one would gain little and cost reproducibility.
class ParallelBatchIterator final : public Iterator {
 public:
  // tuner, knob: the autotuned parallelism (threads is then its value now), or null.
  ParallelBatchIterator(std::unique_ptr<Iterator> input, int64_t batch_size, bool drop_remainder,
                        int threads, std::shared_ptr<Cancellation> cancellation,
                        std::shared_ptr<Autotuner> tuner = nullptr,
                        std::shared_ptr<Knob> knob = nullptr)
      : input_(std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder),
        tuner_(std::move(tuner)),
        knob_(std::move(knob)),
        threads_(threads),
        calls_(threads, static_cast<size_t>(threads), std::move(cancellation)) {}

  bool next(Element& out) override {
    if (knob_ && knob_->value() != threads_) {  // lowered: fewer batches in flight
      threads_ = knob_->value();
      calls_.set_threads(static_cast<int>(threads_), static_cast<size_t>(threads_));
    }
    while (!input_done_ && !calls_.full()) {
      // The input's state before this batch's rows: what a save records while the batch
      // is in flight, so that its rows are read again after a restore.
      if (!no_state_) {
        try {
          before_.push_back(save_to_bytes(*input_));
        } catch (...) {
          no_state_ = std::current_exception();  // iteration goes on; only a save fails
          before_.clear();
        }
      }
      std::vector<Element> rows;
      rows.reserve(static_cast<size_t>(std::min<int64_t>(batch_size_, 1024)));
      Element e;
      try {
        while (static_cast<int64_t>(rows.size()) < batch_size_ && input_->next(e))
          rows.push_back(std::move(e));
      } catch (...) {
        // As in the sequential batch, the batches before the failing one come out first
        // and the rows read for the failing one are dropped: the error waits in line. After a
        // data error the next batch begins with the element after it (data/data_errors.h).
        std::exception_ptr error = std::current_exception();
        calls_.submit_error(error);
        if (is_data_error(error)) continue;
        input_done_ = true;
        break;
      }
      if (static_cast<int64_t>(rows.size()) < batch_size_) input_done_ = true;
      if (rows.empty() || (drop_remainder_ && static_cast<int64_t>(rows.size()) < batch_size_)) {
        if (!no_state_) before_.pop_back();  // no batch: nothing comes after this point
        break;
      }
      if (knob_ && (++submitted_ & 7) == 0) {
        // One call in 8 measures the copy's cost for the autotuner.
        calls_.submit([knob = knob_, rows = std::move(rows)]() mutable {
          const int64_t cpu = thread_cpu_ns();
          const auto begin = std::chrono::steady_clock::now();
          Element batch = stack_and_release(rows);
          const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now() - begin)
                                   .count();
          knob->add_work(1, took, cpu < 0 ? -1 : thread_cpu_ns() - cpu);
          return batch;
        });
      } else {
        calls_.submit([rows = std::move(rows)]() mutable { return stack_and_release(rows); });
      }
    }
    if (calls_.empty()) return false;
    if (!no_state_) before_.pop_front();
    out = calls_.take(/*in_order=*/true);
    if (knob_) {
      meter_.wait_ns += calls_.take_waited_ns();
      if (meter_.elements == 0) knob_->add_bytes(payload_bytes(out));
      if (++meter_.elements >= KnobMeter::kFlushEvery || meter_.wait_ns > 1'000'000)
        tuner_->flush(*knob_, meter_);
    }
    return true;
  }

  // The sequential batch's section: whether no batch is left, else the input's state before
  // the first batch not taken.
  void save(StateWriter& w) const override {
    if (no_state_) std::rethrow_exception(no_state_);
    w.section("batch", [&](StateWriter& s) {
      const bool ended = input_done_ && calls_.empty();
      s.flag(ended);
      if (ended) return;
      if (before_.empty())
        input_->save(s);
      else
        s.raw(before_.front());
    });
  }
  void restore(StateReader& r) override {
    StateReader s = r.section("batch");
    input_done_ = s.flag("input ended");
    if (!input_done_) input_->restore(s);
    s.finish();
  }

 private:
  std::unique_ptr<Iterator> input_;
  int64_t batch_size_;
  bool drop_remainder_;
  bool input_done_ = false;
  std::deque<std::string> before_;  // the input's state before each batch in flight
  std::exception_ptr no_state_;
  std::shared_ptr<Autotuner> tuner_;
  std::shared_ptr<Knob> knob_;
  int64_t threads_;
  int64_t submitted_ = 0;
  KnobMeter meter_;
  ParallelCalls calls_;  // last
};

}  // namespace

std::unique_ptr<Iterator> BatchDataset::make_iterator(const IteratorContext& ctx) const {
  if (parallel_ == kAutotune && ctx.autotuner) {
    auto knob = ctx.autotuner->knob(*this, "parallelism", KnobKind::kParallelism, 1,
                                    autotune_max_parallelism(), 1, 1, ctx.stage);
    const auto threads = static_cast<int>(knob->value());
    return std::make_unique<ParallelBatchIterator>(input_->make_iterator(ctx), batch_size_,
                                                   drop_remainder_, threads, ctx.cancellation,
                                                   ctx.autotuner, std::move(knob));
  }
  int64_t threads = parallel_ == kAutotune ? default_parallelism() : parallel_;
  if (threads > 1)
    return std::make_unique<ParallelBatchIterator>(input_->make_iterator(ctx), batch_size_,
                                                   drop_remainder_, static_cast<int>(threads),
                                                   ctx.cancellation);
  return std::make_unique<BatchIterator>(input_->make_iterator(ctx), batch_size_, drop_remainder_);
}

DatasetPtr make_batch(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                      int64_t num_parallel_calls) {
  DINPUT_CHECK_ARG(input != nullptr, "batch: no input dataset");
  DINPUT_CHECK_ARG(batch_size > 0, "batch: batch_size must be greater than zero, got ", batch_size);
  check_num_parallel_calls("batch", num_parallel_calls);
  if (DatasetPtr in_place = input->with_batch_rows(batch_size)) input = std::move(in_place);
  return std::make_shared<BatchDataset>(std::move(input), batch_size, drop_remainder,
                                        num_parallel_calls);
}

// ---- unbatch ----

namespace {

class UnbatchDataset final : public UnaryDataset {
 public:
  explicit UnbatchDataset(DatasetPtr input) : UnaryDataset(std::move(input)) {
    for (size_t i = 0; i < input_->element_spec().size(); ++i) {
      const auto& s = input_->element_spec()[i];
      DINPUT_CHECK_ARG(s.shape.rank() >= 1, "unbatch: component ", i, " of the input is a scalar (",
                       to_string(s), "); every component needs rank >= 1");
      spec_.push_back({s.dtype, s.shape.drop_first()});
    }
  }
  const char* name() const override { return "unbatch"; }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    return n == kInfiniteCardinality || n == 0 ? n : kUnknownCardinality;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override {
    return std::make_shared<UnbatchDataset>(inputs.at(0));
  }

  class Iter final : public Iterator {
   public:
    explicit Iter(std::unique_ptr<Iterator> input)
        : input_(std::move(input)), rows_(input_.get(), "unbatch", /*checkpointable=*/true) {}
    bool next(Element& out) override {
      if (!rows_.take(1, out)) return false;
      for (auto& t : out) t = t.reshaped(t.shape().drop_first());
      return true;
    }
    int64_t next_batch(int64_t n, Element& out) override {
      Element piece;
      if (!rows_.take(n, piece)) return 0;
      int64_t got = piece[0].dim(0);
      out = std::move(piece);
      return got;
    }
    void save(StateWriter& w) const override {
      w.section("unbatch", [&](StateWriter& s) { rows_.save(s); });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("unbatch");
      rows_.restore(s);
      s.finish();
    }

   private:
    std::unique_ptr<Iterator> input_;
    RowReader rows_;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_->make_iterator(ctx));
  }

 private:
  ElementSpec spec_;
};

class RebatchDataset final : public UnaryDataset {
 public:
  RebatchDataset(DatasetPtr input, std::vector<int64_t> sizes, bool drop_remainder)
      : UnaryDataset(std::move(input)), sizes_(std::move(sizes)), drop_remainder_(drop_remainder) {
    bool all_equal =
        std::all_of(sizes_.begin(), sizes_.end(), [&](int64_t s) { return s == sizes_[0]; });
    for (size_t i = 0; i < input_->element_spec().size(); ++i) {
      const auto& s = input_->element_spec()[i];
      DINPUT_CHECK_ARG(s.shape.rank() >= 1, "rebatch: component ", i, " of the input is a scalar (",
                       to_string(s), "); rebatch needs batched input");
      spec_.push_back(
          {s.dtype, s.shape.with_first(all_equal && drop_remainder_ ? sizes_[0] : kUnknownDim)});
    }
  }
  const char* name() const override { return "rebatch"; }
  std::string arguments() const override {
    std::string sizes;
    for (int64_t n : sizes_) sizes += (sizes.empty() ? "" : " ") + std::to_string(n);
    return str_cat("batch_sizes=[", sizes, "], drop_remainder=", drop_remainder_ ? 1 : 0);
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    return n == kInfiniteCardinality ? n : kUnknownCardinality;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override {
    return std::make_shared<RebatchDataset>(inputs.at(0), sizes_, drop_remainder_);
  }

  class Iter final : public Iterator {
   public:
    Iter(std::unique_ptr<Iterator> input, const std::vector<int64_t>& sizes, bool drop)
        : input_(std::move(input)),
          rows_(input_.get(), "rebatch", /*checkpointable=*/true),
          sizes_(sizes),
          drop_(drop) {}
    bool next(Element& out) override {
      int64_t want = sizes_[index_];
      index_ = (index_ + 1) % sizes_.size();
      if (want == 0) return rows_.empty_piece(out);
      if (!rows_.take(want, out)) return false;
      if (drop_ && out[0].dim(0) < want) return false;
      return true;
    }
    void save(StateWriter& w) const override {
      w.section("rebatch", [&](StateWriter& s) {
        s.u64(index_);
        rows_.save(s);
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("rebatch");
      index_ = static_cast<size_t>(s.u64_in("index into batch_sizes", 0, sizes_.size() - 1));
      rows_.restore(s);
      s.finish();
    }

   private:
    std::unique_ptr<Iterator> input_;
    RowReader rows_;
    std::vector<int64_t> sizes_;
    bool drop_;
    size_t index_ = 0;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_->make_iterator(ctx), sizes_, drop_remainder_);
  }

 private:
  std::vector<int64_t> sizes_;
  bool drop_remainder_;
  ElementSpec spec_;
};

}  // namespace

DatasetPtr make_unbatch(DatasetPtr input) {
  DINPUT_CHECK_ARG(input != nullptr, "unbatch: no input dataset");
  return std::make_shared<UnbatchDataset>(std::move(input));
}

DatasetPtr make_rebatch(DatasetPtr input, std::vector<int64_t> sizes, bool drop_remainder) {
  DINPUT_CHECK_ARG(input != nullptr, "rebatch: no input dataset");
  DINPUT_CHECK_ARG(!sizes.empty(), "rebatch: batch_sizes must not be empty");
  bool positive = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    DINPUT_CHECK_ARG(sizes[i] >= 0, "rebatch: batch_sizes[", i, "] is negative (", sizes[i], ")");
    positive |= sizes[i] > 0;
  }
  DINPUT_CHECK_ARG(positive, "rebatch: at least one of batch_sizes must be greater than zero");
  return std::make_shared<RebatchDataset>(std::move(input), std::move(sizes), drop_remainder);
}

}  // namespace dinput
