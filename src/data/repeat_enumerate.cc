// repeat, enumerate and with_options: transforms that keep the elements and change how many
// there are, what they carry along, or the options of the pipeline.
#include "core/tensor_ops.h"
#include "data/nodes.h"
#include "data/state.h"

namespace dinput {

namespace {

// The epoch counters of the reshuffling operations in `ds`'s graph.
void collect_counters(const Dataset& ds, std::vector<EpochCounter>& out) {
  if (EpochCounter c = ds.epoch_counter()) out.push_back(std::move(c));
  for (const auto& in : ds.inputs()) collect_counters(*in, out);
}

class RepeatDataset final : public UnaryDataset {
 public:
  RepeatDataset(DatasetPtr input, int64_t count) : UnaryDataset(std::move(input)), count_(count) {
    collect_counters(*input_, counters_);
  }
  const char* name() const override { return "repeat"; }
  std::string arguments() const override { return str_cat("count=", count_); }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  // As in tf.data: repeating forever an input that may be non-empty (UNKNOWN included) is
  // INFINITE, so that `records(...).repeat()` is caught as endless; only an input known to
  // be empty gives 0. (At run time an input epoch that yields nothing still ends the repeat.)
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    if (count_ == 0 || n == 0) return 0;
    if (count_ < 0) return kInfiniteCardinality;
    if (n < 0) return n;
    return n > INT64_MAX / count_ ? kInfiniteCardinality : n * count_;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<RepeatDataset>(in.at(0), count_);
  }

  class Iter final : public Iterator {
   public:
    Iter(DatasetPtr input, IteratorContext ctx, int64_t count, std::vector<EpochCounter> counters)
        : input_(std::move(input)), ctx_(ctx), left_(count), counters_(std::move(counters)) {}
    bool next(Element& out) override {
      while (start_epoch()) {
        if (current_->next(out)) {
          produced_in_epoch_ = true;
          return true;
        }
        end_epoch();
      }
      return false;
    }
    // Batches may span epochs, as in tf.data: `range(3).repeat(2).batch(4)` gives [0,1,2,0].
    int64_t next_batch(int64_t n, Element& out) override {
      std::vector<Element> parts;
      int64_t got = 0;
      while (got < n && start_epoch()) {
        Element part;
        int64_t k = current_->next_batch(n - got, part);
        if (k > 0) {
          produced_in_epoch_ = true;
          got += k;
          parts.push_back(std::move(part));
        }
        if (got < n) end_epoch();
      }
      if (!parts.empty()) out = concat_elements(parts);
      return got;
    }

    // An epoch's iterator is made when it is first read, so a state saved between epochs
    // has none open: the restored repeat makes it (drawing the next epoch) when read. The
    // epochs the reshuffling operations inside draw next are saved too, as they were when
    // the open epoch began: read-ahead below may have drawn later ones since.
    void save(StateWriter& w) const override {
      w.section("repeat", [&](StateWriter& s) {
        s.i64(left_);
        const std::vector<uint64_t> epochs = current_ ? epochs_after_open_ : next_epochs();
        for (uint64_t e : epochs) s.u64(e);
        s.flag(current_ != nullptr);
        if (current_) {
          s.flag(produced_in_epoch_);
          current_->save(s);
        }
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("repeat");
      left_ = s.i64_in("epochs left", left_ < 0 ? -1 : 0, std::max<int64_t>(left_, 0));
      std::vector<uint64_t> epochs(counters_.size());
      for (auto& e : epochs) e = s.u64("the next epoch of a reshuffling operation");
      if (s.flag("epoch open")) {
        if (left_ == 0) s.corrupt("an epoch is open but no epoch is left");
        produced_in_epoch_ = s.flag("epoch produced");
        current_ = input_->make_iterator(ctx_);
        set_next_epochs(epochs);  // before the epoch's own iterators restore theirs
        epochs_after_open_ = epochs;
        current_->restore(s);
      } else {
        set_next_epochs(epochs);
      }
      s.finish();
      ctx_.restoring = false;  // the epochs made from now on start their threads at once
    }

   private:
    bool start_epoch() {
      if (current_) return true;
      if (left_ == 0) return false;
      current_ = input_->make_iterator(ctx_);
      if (!counters_.empty()) epochs_after_open_ = next_epochs();
      produced_in_epoch_ = false;
      return true;
    }
    std::vector<uint64_t> next_epochs() const {
      std::vector<uint64_t> out;
      for (const auto& c : counters_) out.push_back(peek_epoch(ctx_, c));
      return out;
    }
    void set_next_epochs(const std::vector<uint64_t>& epochs) {
      for (size_t i = 0; i < epochs.size(); ++i) set_epoch(ctx_, counters_[i], epochs[i]);
    }
    void end_epoch() {
      current_.reset();
      if (left_ > 0) --left_;
      // An input that produced nothing would make repeat-forever spin; it ends instead.
      if (!produced_in_epoch_) left_ = 0;
    }
    DatasetPtr input_;
    IteratorContext ctx_;
    int64_t left_;                        // -1: forever
    std::vector<EpochCounter> counters_;  // of the reshuffling operations below
    std::unique_ptr<Iterator> current_;
    bool produced_in_epoch_ = false;
    std::vector<uint64_t> epochs_after_open_;  // next_epochs() just after current_ was made
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_, ctx, count_, counters_);
  }

 private:
  int64_t count_;
  std::vector<EpochCounter> counters_;  // of the reshuffling operations in the input's graph
};

class EnumerateDataset final : public UnaryDataset {
 public:
  EnumerateDataset(DatasetPtr input, int64_t start)
      : UnaryDataset(std::move(input)), start_(start) {
    spec_.push_back({DType::kInt64, Shape()});
    for (const auto& s : input_->element_spec()) spec_.push_back(s);
  }
  const char* name() const override { return "enumerate"; }
  std::string arguments() const override { return str_cat("start=", start_); }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<EnumerateDataset>(in.at(0), start_);
  }

  class Iter final : public Iterator {
   public:
    Iter(std::unique_ptr<Iterator> input, int64_t start)
        : input_(std::move(input)), start_(start), next_index_(start) {}
    bool next(Element& out) override {
      Element in;
      if (!input_->next(in)) return false;
      // The element after index INT64_MAX has no index: fail rather than wrap to INT64_MIN.
      // Not OUT_OF_RANGE, which get_next uses for a normal end and would hide the rest.
      if (past_max_)
        raise(Code::kInvalidArgument, "enumerate: the index of element ",
              static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(start_) + 1,
              " (counting from 0) would be ", INT64_MAX,
              " + 1, which overflows int64 (start=", start_, ")");
      Tensor index = Tensor::allocate(DType::kInt64, Shape());
      *index.mutable_data_as<int64_t>() = next_index_;
      if (next_index_ == INT64_MAX) {
        past_max_ = true;
      } else {
        ++next_index_;
      }
      out.clear();
      out.reserve(in.size() + 1);
      out.push_back(std::move(index));
      for (auto& t : in) out.push_back(std::move(t));
      return true;
    }
    void save(StateWriter& w) const override {
      w.section("enumerate", [&](StateWriter& s) {
        s.i64(next_index_);
        s.flag(past_max_);
        input_->save(s);
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("enumerate");
      next_index_ = s.i64_in("next index", start_, INT64_MAX);
      past_max_ = s.flag("past the largest index");
      input_->restore(s);
      s.finish();
    }

   private:
    std::unique_ptr<Iterator> input_;
    int64_t start_;
    int64_t next_index_;
    bool past_max_ = false;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_->make_iterator(ctx), start_);
  }

 private:
  int64_t start_;
  ElementSpec spec_;
};

}  // namespace

std::string OptionsDataset::arguments() const {
  // What changes the elements or their order; thread counts and buffers do not.
  return str_cat(
      "deterministic=", options_.deterministic ? (*options_.deterministic ? "1" : "0") : "unset",
      ", skip_corrupt_records=",
      options_.skip_corrupt_records ? (*options_.skip_corrupt_records ? "1" : "0") : "unset");
}

DatasetPtr OptionsDataset::with_inputs(std::vector<DatasetPtr> in) const {
  return std::make_shared<OptionsDataset>(in.at(0), options_);
}

std::unique_ptr<Iterator> OptionsDataset::make_iterator(const IteratorContext& ctx) const {
  // Options set downstream (closer to the output) win over these.
  IteratorContext inner = ctx;
  inner.options = ctx.options.over(options_);
  return input_->make_iterator(inner);
}

DatasetPtr make_repeat(DatasetPtr input, int64_t count) {
  DINPUT_CHECK_ARG(input != nullptr, "repeat: no input dataset");
  DINPUT_CHECK_ARG(count >= -1, "repeat: count must be >= -1 (-1 repeats forever), got ", count);
  return std::make_shared<RepeatDataset>(std::move(input), count);
}

DatasetPtr make_enumerate(DatasetPtr input, int64_t start) {
  DINPUT_CHECK_ARG(input != nullptr, "enumerate: no input dataset");
  return std::make_shared<EnumerateDataset>(std::move(input), start);
}

DatasetPtr make_with_options(DatasetPtr input, const Options& options) {
  DINPUT_CHECK_ARG(input != nullptr, "with_options: no input dataset");
  if (options.auto_shard_policy) {
    int p = static_cast<int>(*options.auto_shard_policy);
    DINPUT_CHECK_ARG(p >= -1 && p <= 3, "with_options: invalid auto_shard_policy ", p);
  }
  return std::make_shared<OptionsDataset>(std::move(input), options);
}

}  // namespace dinput
