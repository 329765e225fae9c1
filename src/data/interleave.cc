// interleave: reading several datasets made from the input's elements in turn, the way
// tf.data's interleave does (a cycle of open datasets, block_length elements from each).
#include <algorithm>
#include <string_view>

#include "data/background_producer.h"
#include "data/data_errors.h"
#include "data/nodes.h"
#include "data/stage_stats.h"
#include "data/state.h"

namespace dinput {

namespace {

class InterleaveDataset final : public UnaryDataset {
 public:
  InterleaveDataset(DatasetPtr input, std::shared_ptr<const InterleaveFn> fn, ElementSpec spec,
                    int64_t cycle, int64_t block, int64_t parallel,
                    std::optional<bool> deterministic, bool flat_map = false,
                    std::string reader = {})
      : UnaryDataset(std::move(input)),
        fn_(std::move(fn)),
        spec_(std::move(spec)),
        cycle_(cycle),
        block_(block),
        parallel_(parallel),
        deterministic_(deterministic),
        flat_map_(flat_map),
        reader_(std::move(reader)) {}
  // flat_map is this node with one dataset open at a time, under its own name.
  const char* name() const override { return flat_map_ ? "flat_map" : "interleave"; }
  std::string arguments() const override {
    std::string reader = reader_.empty() ? "" : ", reader=" + reader_;
    if (flat_map_) return str_cat("spec=", to_string(spec_), reader);
    return str_cat("cycle_length=", cycle_, ", block_length=", block_, ", spec=", to_string(spec_),
                   reader);
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override {
    int64_t n = input_->cardinality();
    return n == 0 ? 0 : kUnknownCardinality;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<InterleaveDataset>(in.at(0), fn_, spec_, cycle_, block_, parallel_,
                                               deterministic_, flat_map_, reader_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  const InterleaveFn& fn() const { return *fn_; }
  const std::shared_ptr<const InterleaveFn>& fn_ptr() const { return fn_; }
  const ElementSpec& spec() const { return spec_; }
  int64_t cycle_length() const { return cycle_ == kAutotune ? default_parallelism() : cycle_; }
  int64_t block_length() const { return block_; }
  bool parallel() const { return parallel_ == kAutotune || parallel_ > 1; }
  std::optional<bool> deterministic() const { return deterministic_; }
  bool reads_files() const { return !reader_.empty(); }

 private:
  std::shared_ptr<const InterleaveFn> fn_;
  ElementSpec spec_;
  int64_t cycle_, block_, parallel_;
  std::optional<bool> deterministic_;  // unset: the options' (see Options::ordered)
  bool flat_map_;
  std::string reader_;  // the built-in reader fn_ runs, if it is one
};

class InterleaveIterator final : public Iterator, public BufferedIterator {
 public:
  // In open input datasets, out of cycle_length.
  int64_t buffered() const override { return open_; }
  int64_t buffer_capacity() const override { return static_cast<int64_t>(slots_.size()); }

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
          Fallible item;
          auto poll = slot.ahead->try_next(item);
          if (poll == Producer::Poll::kEmpty) {
            ++passed_over;
            advance();
            continue;
          }
          got = poll == Producer::Poll::kItem && take(item, out);
        } else if (slot.ahead) {
          Fallible item;
          got = slot.ahead->next(item) && take(item, out);
        } else {
          got = slot.it->next(out);
        }
        if (got) {
          check_matches(ds_->spec(), out, "the dataset made by the interleave function");
          if (++block_index_ == ds_->block_length()) advance();
          return true;
        }
        slot.ahead.reset();  // before the iterator it reads
        slot.it.reset();
        slot.ds.reset();
        slot.before.clear();
        --open_;
        advance();
      } else if (!input_done_) {
        Element in;
        std::string before;
        if (!read(in, before)) {
          input_done_ = true;
          continue;
        }
        open(slot, in);
        slot.ordinal = read_ - 1;
        slot.before = std::move(before);
      } else {
        advance();
      }
    }
    return false;
  }
  // The cycle's position, each open reader's state with the index of the input element
  // that made it, and the input's state before the oldest of those elements: a restore
  // reads the input again from there, calling the function for the elements whose readers
  // were open (docs/checkpoint.md).
  void save(StateWriter& w) const override {
    if (ds_->parallel() && !deterministic_)
      state_unsupported("interleave",
                        "num_parallel_calls > 1 with deterministic=false delivers elements as "
                        "they are ready, an order that cannot be reproduced");
    if (no_state_) std::rethrow_exception(no_state_);
    w.section("interleave", [&](StateWriter& s) {
      s.u64(slots_.size());
      s.u64(cycle_index_);
      s.i64(block_index_);
      s.flag(input_done_);
      s.i64(read_);
      s.u64(static_cast<uint64_t>(open_));
      const Slot* oldest = nullptr;
      for (size_t i = 0; i < slots_.size(); ++i) {
        const Slot& slot = slots_[i];
        if (!slot.it) continue;
        s.u64(i);
        s.i64(slot.ordinal);
        s.bytes(save_to_bytes(*slot.it));
        if (!oldest || slot.ordinal < oldest->ordinal) oldest = &slot;
      }
      if (oldest) {
        s.i64(oldest->ordinal);
        s.raw(oldest->before);
      } else if (!input_done_) {
        s.i64(read_);
        input_->save(s);
      }
    });
  }

  void restore(StateReader& r) override {
    if (ds_->parallel() && !deterministic_)
      state_unsupported("interleave",
                        "num_parallel_calls > 1 with deterministic=false delivers elements as "
                        "they are ready, an order that cannot be reproduced");
    StateReader s = r.section("interleave");
    const uint64_t cycle = s.u64("cycle length");
    if (cycle != slots_.size())
      raise(Code::kFailedPrecondition, "interleave: the saved iterator read ", cycle,
            " datasets at a time but this one reads ", slots_.size(),
            " (cycle_length AUTOTUNE follows the number of cores; set it to restore elsewhere)");
    cycle_index_ = static_cast<size_t>(s.u64_in("cycle index", 0, cycle - 1));
    block_index_ = s.i64_in("block index", 0, ds_->block_length() - 1);
    input_done_ = s.flag("input ended");
    read_ = s.i64_in("input elements read", 0, INT64_MAX);
    const auto open_count = static_cast<size_t>(s.u64_in("open readers", 0, cycle));
    struct Saved {
      size_t slot;
      int64_t ordinal;
      std::string state;
      uint64_t offset;
    };
    std::vector<Saved> saved;
    std::vector<bool> used(slots_.size());
    int64_t oldest = read_;
    for (size_t k = 0; k < open_count; ++k) {
      auto slot = static_cast<size_t>(s.u64_in("reader slot", 0, cycle - 1));
      if (used[slot]) s.corrupt(str_cat("reader slot ", slot, " appears twice"));
      used[slot] = true;
      int64_t ordinal = s.i64_in("input element of a reader", 0, read_ - 1);
      std::string state = s.bytes("a reader's state");
      saved.push_back(Saved{slot, ordinal, std::move(state), s.offset()});
      oldest = std::min(oldest, ordinal);
    }
    if (open_count > 0 || !input_done_) {
      if (s.i64("input position") != oldest)
        s.corrupt("the input's state is not at the oldest open reader's element");
      input_->restore(s);
    }
    s.finish();
    std::sort(saved.begin(), saved.end(),
              [](const Saved& a, const Saved& b) { return a.ordinal < b.ordinal; });
    size_t next = 0;
    for (int64_t ordinal = oldest; ordinal < read_; ++ordinal) {
      const bool wanted = next < saved.size() && saved[next].ordinal == ordinal;
      std::string before = wanted ? save_to_bytes(*input_) : std::string();
      Element in;
      if (!input_->next(in))
        raise(Code::kDataLoss, "interleave: restoring the iterator state: the input ended after ",
              ordinal, " elements but the saved interleave had read ", read_);
      if (!wanted) continue;
      const Saved& reader = saved[next++];
      Slot& slot = slots_[reader.slot];
      open(slot, in, /*start=*/false);
      slot.ordinal = ordinal;
      slot.before = std::move(before);
      StateReader state(reader.state, reader.offset - reader.state.size(), "interleave");
      slot.it->restore(state);
      state.finish();
    }
    if (next != saved.size()) r.corrupt("two open readers were made from one input element");
    ctx_.restoring = false;  // the readers made from now on start at once
  }

  // What this iterator has not read yet (nodes.h, InterleaveRest). Reads the input again on
  // an iterator of its own, from the state kept before the oldest open reader's element.
  InterleaveRest rest() const {
    if (ds_->parallel() && !deterministic_)
      state_unsupported("interleave", "num_parallel_calls > 1 with deterministic=false");
    if (no_state_) std::rethrow_exception(no_state_);
    InterleaveRest out;
    const Slot* oldest = nullptr;
    std::vector<const Slot*> open;  // in the order the cycle reaches them
    for (size_t k = 0; k < slots_.size(); ++k) {
      const Slot& slot = slots_[(cycle_index_ + k) % slots_.size()];
      if (!slot.it) continue;
      open.push_back(&slot);
      if (!oldest || slot.ordinal < oldest->ordinal) oldest = &slot;
    }
    if (!oldest && input_done_) return out;
    IteratorContext ctx = ctx_;
    ctx.restoring = true;
    auto input = ds_->input()->make_iterator(ctx);
    const std::string from = oldest ? oldest->before : save_to_bytes(*input_);
    StateReader r(from, 0, "interleave");
    input->restore(r);
    r.finish();
    std::vector<Element> opened(open.size());
    Element in;
    for (int64_t ordinal = oldest ? oldest->ordinal : read_; input->next(in); ++ordinal) {
      if (ordinal >= read_) {
        out.unread.push_back(std::move(in));
        continue;
      }
      for (size_t k = 0; k < open.size(); ++k)
        if (open[k]->ordinal == ordinal) opened[k] = in;
    }
    for (size_t k = 0; k < open.size(); ++k) {
      if (opened[k].empty())
        raise(Code::kDataLoss, "interleave: the input ended before the element of an open reader");
      out.open.emplace_back(std::move(opened[k]), save_to_bytes(*open[k]->it));
    }
    return out;
  }

 private:
  // A reader's element, or the data error in its place: the reader reads on after one
  // (data/data_errors.h), as its dataset would when called again.
  struct Fallible {
    Element element;
    std::exception_ptr error;
  };
  using Producer = BackgroundProducer<Fallible>;

  static bool take(Fallible& item, Element& out) {
    if (item.error) std::rethrow_exception(item.error);
    out = std::move(item.element);
    return true;
  }
  struct Slot {
    DatasetPtr ds;  // first: its iterator may point into it
    std::unique_ptr<Iterator> it;
    std::unique_ptr<Producer> ahead;  // after `it`: destroyed first, since its thread reads it
    int64_t ordinal = 0;              // the input element the dataset was made from
    std::string before;               // the input's state before that element
  };

  // Reads the next input element, first saving the input's state (the element's reader
  // needs it while open).
  bool read(Element& in, std::string& before) {
    if (!no_state_) {
      try {
        before = save_to_bytes(*input_);
      } catch (...) {
        no_state_ = std::current_exception();  // iteration goes on; only a save fails
      }
    }
    if (!input_->next(in)) return false;
    ++read_;
    return true;
  }

  // start: a parallel reader begins reading now (not when it is about to be restored).
  void open(Slot& slot, const Element& in, bool start = true) {
    slot.ds = ds_->fn()(in);
    if (!slot.ds) raise(Code::kInvalidArgument, "the interleave function returned no dataset");
    slot.it = slot.ds->make_iterator(ctx_);
    const auto capacity = static_cast<size_t>(std::max<int64_t>(16, ds_->block_length()));
    if (ds_->parallel() && deterministic_) {
      // In order, a reader is a prefetch of its dataset, whose state counts what was taken.
      slot.it = make_prefetch_iterator(std::move(slot.it), capacity, ctx_.cancellation, start);
    } else if (ds_->parallel()) {
      Iterator* it = slot.it.get();
      slot.ahead = std::make_unique<Producer>(
          [it](Fallible& item) {
            try {
              return it->next(item.element);
            } catch (...) {
              item.error = std::current_exception();
              if (!is_data_error(item.error)) throw;
              return true;
            }
          },
          capacity, ctx_.cancellation);
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
  int64_t read_ = 0;  // input elements read
  std::exception_ptr no_state_;
};

std::unique_ptr<Iterator> InterleaveDataset::make_iterator(const IteratorContext& ctx) const {
  return std::make_unique<InterleaveIterator>(
      std::static_pointer_cast<const InterleaveDataset>(ptr()), input_->make_iterator(ctx), ctx);
}

}  // namespace

InterleaveRest interleave_rest(Iterator& it) {
  auto* interleave = dynamic_cast<InterleaveIterator*>(it.unwrapped());
  if (!interleave) raise(Code::kInternal, "interleave_rest: not an interleave iterator");
  return interleave->rest();
}

std::shared_ptr<const InterleaveFn> interleave_function(const Dataset& ds) {
  auto* node = dynamic_cast<const InterleaveDataset*>(&ds);
  return node ? node->fn_ptr() : nullptr;
}

DatasetPtr interleave_like(const Dataset& ds, DatasetPtr input,
                           std::shared_ptr<const InterleaveFn> fn) {
  auto& node = dynamic_cast<const InterleaveDataset&>(ds);
  return std::make_shared<InterleaveDataset>(std::move(input), std::move(fn), node.spec(),
                                             node.cycle_length(), node.block_length(),
                                             node.parallel() ? kAutotune : 1, node.deterministic(),
                                             std::string_view(ds.name()) == "flat_map");
}

bool is_reader_interleave(const Dataset& ds) {
  auto* node = dynamic_cast<const InterleaveDataset*>(&ds);
  return node != nullptr && node->reads_files();
}

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

DatasetPtr make_flat_map(DatasetPtr input, std::shared_ptr<const InterleaveFn> fn,
                         ElementSpec out_spec) {
  DINPUT_CHECK_ARG(input != nullptr, "flat_map: no input dataset");
  DINPUT_CHECK_ARG(fn != nullptr && *fn, "flat_map: no function given");
  DINPUT_CHECK_ARG(!out_spec.empty(),
                   "flat_map: the spec of the datasets the function returns is required");
  return std::make_shared<InterleaveDataset>(std::move(input), std::move(fn), std::move(out_spec),
                                             1, 1, 1, std::nullopt, /*flat_map=*/true);
}

DatasetPtr make_reader_interleave(DatasetPtr input, std::shared_ptr<const InterleaveFn> fn,
                                  std::string reader, ElementSpec out_spec, int64_t cycle_length,
                                  int64_t block_length, int64_t num_parallel_calls,
                                  std::optional<bool> deterministic, bool flat_map) {
  DatasetPtr checked =
      flat_map ? make_flat_map(std::move(input), std::move(fn), std::move(out_spec))
               : make_interleave(std::move(input), std::move(fn), std::move(out_spec), cycle_length,
                                 block_length, num_parallel_calls, deterministic);
  auto& node = static_cast<const InterleaveDataset&>(*checked);
  return std::make_shared<InterleaveDataset>(
      node.input(), node.fn_ptr(), node.spec(), flat_map ? 1 : cycle_length,
      flat_map ? 1 : block_length, flat_map ? 1 : num_parallel_calls,
      flat_map ? std::nullopt : deterministic, flat_map, std::move(reader));
}

}  // namespace dinput
