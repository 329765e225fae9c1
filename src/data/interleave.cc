// interleave: reading several datasets made from the input's elements in turn, the way
// tf.data's interleave does (a cycle of open datasets, block_length elements from each).
#include "data/background_producer.h"
#include "data/nodes.h"

namespace dinput {

namespace {

class InterleaveDataset final : public UnaryDataset {
 public:
  InterleaveDataset(DatasetPtr input, std::shared_ptr<const InterleaveFn> fn, ElementSpec spec,
                    int64_t cycle, int64_t block, int64_t parallel,
                    std::optional<bool> deterministic)
      : UnaryDataset(std::move(input)),
        fn_(std::move(fn)),
        spec_(std::move(spec)),
        cycle_(cycle),
        block_(block),
        parallel_(parallel),
        deterministic_(deterministic) {}
  const char* name() const override { return "interleave"; }
  std::string arguments() const override {
    return str_cat("cycle_length=", cycle_, ", block_length=", block_, ", spec=", to_string(spec_));
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    return n == 0 ? 0 : kUnknownCardinality;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<InterleaveDataset>(in.at(0), fn_, spec_, cycle_, block_, parallel_,
                                               deterministic_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  const InterleaveFn& fn() const { return *fn_; }
  const ElementSpec& spec() const { return spec_; }
  int64_t cycle_length() const { return cycle_ == kAutotune ? default_parallelism() : cycle_; }
  int64_t block_length() const { return block_; }
  bool parallel() const { return parallel_ == kAutotune || parallel_ > 1; }
  std::optional<bool> deterministic() const { return deterministic_; }

 private:
  std::shared_ptr<const InterleaveFn> fn_;
  ElementSpec spec_;
  int64_t cycle_, block_, parallel_;
  std::optional<bool> deterministic_;  // unset: the options' (see Options::ordered)
};

class InterleaveIterator final : public Iterator {
 public:
  InterleaveIterator(std::shared_ptr<const InterleaveDataset> ds, std::unique_ptr<Iterator> input,
                     IteratorContext ctx)
      : ds_(std::move(ds)),
        input_(std::move(input)),
        ctx_(std::move(ctx)),
        slots_(static_cast<size_t>(ds_->cycle_length())),
        deterministic_(ctx_.options.ordered(ds_->deterministic())) {}

  bool next(Element& out) override {
    int64_t passed_over =
        0;  // non-deterministic: open readers skipped in a row for having nothing ready
    while (!input_done_ || open_ > 0) {
      Slot& slot = slots_[cycle_index_];
      if (slot.it) {
        bool got;
        if (slot.ahead && !deterministic_ && passed_over < open_) {
          auto poll = slot.ahead->try_next(out);
          if (poll == Producer::Poll::kEmpty) {
            ++passed_over;
            advance();
            continue;
          }
          got = poll == Producer::Poll::kItem;
        } else {
          got = slot.ahead ? slot.ahead->next(out) : slot.it->next(out);
        }
        if (got) {
          check_matches(ds_->spec(), out, "the dataset made by the interleave function");
          if (++block_index_ == ds_->block_length()) advance();
          return true;
        }
        slot.ahead.reset();  // before the iterator it reads
        slot.it.reset();
        slot.ds.reset();
        --open_;
        advance();
      } else if (!input_done_) {
        Element in;
        if (!input_->next(in)) {
          input_done_ = true;
          continue;
        }
        open(slot, in);
      } else {
        advance();
      }
    }
    return false;
  }
  void save(StateWriter&) const override { state_unsupported("interleave", "not yet"); }
  void restore(StateReader&) override { state_unsupported("interleave", "not yet"); }

 private:
  using Producer = BackgroundProducer<Element>;
  struct Slot {
    DatasetPtr ds;  // first: its iterator may point into it
    std::unique_ptr<Iterator> it;
    std::unique_ptr<Producer> ahead;  // after `it`: destroyed first, since its thread reads it
  };

  void open(Slot& slot, const Element& in) {
    slot.ds = ds_->fn()(in);
    if (!slot.ds) raise(Code::kInvalidArgument, "the interleave function returned no dataset");
    slot.it = slot.ds->make_iterator(ctx_);
    if (ds_->parallel()) {
      Iterator* it = slot.it.get();
      slot.ahead = std::make_unique<Producer>(
          [it](Element& e) { return it->next(e); },
          static_cast<size_t>(std::max<int64_t>(2, ds_->block_length())), ctx_.cancellation);
    }
    ++open_;
  }

  void advance() {
    block_index_ = 0;
    cycle_index_ = (cycle_index_ + 1) % slots_.size();
  }

  std::shared_ptr<const InterleaveDataset> ds_;
  std::unique_ptr<Iterator> input_;
  IteratorContext ctx_;
  std::vector<Slot> slots_;
  bool deterministic_;
  size_t cycle_index_ = 0;
  int64_t block_index_ = 0;
  int64_t open_ = 0;
  bool input_done_ = false;
};

std::unique_ptr<Iterator> InterleaveDataset::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<InterleaveIterator>(
      std::static_pointer_cast<const InterleaveDataset>(ptr()), input_->make_iterator(ctx), ctx);
}

}  // namespace

DatasetPtr make_interleave(DatasetPtr input, std::shared_ptr<const InterleaveFn> fn,
                           ElementSpec out_spec, int64_t cycle_length, int64_t block_length,
                           int64_t num_parallel_calls, std::optional<bool> deterministic) {
  DINPUT_CHECK_ARG(input != nullptr, "interleave: no input dataset");
  DINPUT_CHECK_ARG(fn != nullptr && *fn, "interleave: no function given");
  DINPUT_CHECK_ARG(!out_spec.empty(),
                   "interleave: the spec of the datasets the function returns is required");
  DINPUT_CHECK_ARG(cycle_length == kAutotune || (cycle_length >= 1 && cycle_length <= 4096),
                   "interleave: cycle_length must be in [1, 4096] or AUTOTUNE (-1), got ",
                   cycle_length);
  DINPUT_CHECK_ARG(block_length >= 1, "interleave: block_length must be >= 1, got ", block_length);
  DINPUT_CHECK_ARG(num_parallel_calls >= -1,
                   "interleave: num_parallel_calls must be >= 0 or AUTOTUNE (-1), got ",
                   num_parallel_calls);
  return std::make_shared<InterleaveDataset>(std::move(input), std::move(fn), std::move(out_spec),
                                             cycle_length, block_length, num_parallel_calls,
                                             deterministic);
}

}  // namespace dinput
