// map: a user function applied to every element, sequentially or on a thread pool.
#include <deque>
#include <thread>

#include "data/nodes.h"
#include "data/parallel_calls.h"
#include "data/state.h"

namespace dinput {

int default_parallelism() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 2 : static_cast<int>(n);
}

void check_num_parallel_calls(const char* op, int64_t n) {
  DINPUT_CHECK_ARG(n >= -1, op, ": num_parallel_calls must be >= 1 or AUTOTUNE (-1), got ", n);
  DINPUT_CHECK_ARG(n <= 1024, op, ": num_parallel_calls ", n, " is more than 1024 threads");
}

namespace {

class MapDataset final : public UnaryDataset {
 public:
  MapDataset(DatasetPtr input, std::shared_ptr<const MapFn> fn, ElementSpec out_spec,
             int64_t parallel, std::optional<bool> deterministic)
      : UnaryDataset(std::move(input)),
        fn_(std::move(fn)),
        spec_(std::move(out_spec)),
        parallel_(parallel),
        deterministic_(deterministic) {}
  const char* name() const override { return "map"; }
  std::string arguments() const override {
    return "spec=" + to_string(spec_);  // parallelism changes no element, so it may change
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<MapDataset>(in.at(0), fn_, spec_, parallel_, deterministic_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  const MapFn& fn() const { return *fn_; }
  const ElementSpec& spec() const { return spec_; }

 private:
  std::shared_ptr<const MapFn> fn_;
  ElementSpec spec_;
  int64_t parallel_;
  std::optional<bool> deterministic_;  // unset: the options' (see Options::ordered)
};

Element map_one(const MapDataset& ds, const Element& in) {
  Element out = ds.fn()(in);
  check_matches(ds.spec(), out, "the map function");
  return out;
}

// A map's section: the number of input elements whose results were taken after the input's
// state that follows, then that state. Restores the input and reads past those elements
// (without calling the function: their results were delivered before the save).
void restore_map_input(StateReader& r, Iterator& input) {
  StateReader s = r.section("map");
  const int64_t skip = s.i64_in("elements taken after the input's state", 0, INT64_MAX);
  input.restore(s);
  s.finish();
  Element drop;
  for (int64_t i = 0; i < skip; ++i)
    if (!input.next(drop))
      raise(Code::kDataLoss, "map: restoring the iterator state: the input ended after ", i,
            " of the ", skip, " elements taken before the save");
}

class SequentialMapIterator final : public Iterator {
 public:
  SequentialMapIterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<Iterator> input)
      : ds_(std::move(ds)), input_(std::move(input)) {}
  bool next(Element& out) override {
    Element in;
    if (!input_->next(in)) return false;
    out = map_one(*ds_, in);
    return true;
  }
  // The same section as the parallel map's (which may restore it), with nothing to skip.
  void save(StateWriter& w) const override {
    w.section("map", [&](StateWriter& s) {
      s.i64(0);
      input_->save(s);
    });
  }
  void restore(StateReader& r) override { restore_map_input(r, *input_); }

 private:
  std::shared_ptr<const MapDataset> ds_;
  std::unique_ptr<Iterator> input_;
};

// Reads input on the consumer's thread and keeps up to 2x the pool size of function calls
// in flight (data/parallel_calls.h). With `deterministic` results come back in input order;
// otherwise whichever finishes first.
//
// Its state counts the results taken, not the calls made: every max_in_flight input
// elements it saves its input's state before reading the next one, and a save is the last
// such snapshot at or before the first result not taken, plus the elements taken since.
class ParallelMapIterator final : public Iterator {
 public:
  ParallelMapIterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<Iterator> input,
                      int threads, bool deterministic, std::shared_ptr<Cancellation> cancellation)
      : ds_(std::move(ds)),
        input_(std::move(input)),
        deterministic_(deterministic),
        every_(static_cast<int64_t>(threads) * 2),
        calls_(threads, static_cast<size_t>(threads) * 2, std::move(cancellation)) {}

  bool next(Element& out) override {
    while (!input_done_ && !calls_.full()) {
      if (!no_state_ && (snapshots_.empty() || read_ - snapshots_.back().position >= every_))
        take_snapshot();
      Element in;
      if (!input_->next(in)) {
        input_done_ = true;
        break;
      }
      ++read_;
      calls_.submit([ds = ds_, in = std::move(in)] { return map_one(*ds, in); });
    }
    if (calls_.empty()) return false;
    out = calls_.take(deterministic_);
    ++taken_;
    while (snapshots_.size() > 1 && snapshots_[1].position <= taken_) snapshots_.pop_front();
    return true;
  }

  void save(StateWriter& w) const override {
    if (!deterministic_)
      state_unsupported("map",
                        "num_parallel_calls > 1 with deterministic=false delivers results as they "
                        "finish, an order that cannot be reproduced");
    if (no_state_) std::rethrow_exception(no_state_);
    w.section("map", [&](StateWriter& s) {
      if (snapshots_.empty()) {  // nothing read yet
        s.i64(0);
        input_->save(s);
        return;
      }
      s.i64(taken_ - snapshots_.front().position);
      s.raw(snapshots_.front().state);
    });
  }

  void restore(StateReader& r) override {
    if (!deterministic_)
      state_unsupported("map",
                        "num_parallel_calls > 1 with deterministic=false delivers results as they "
                        "finish, an order that cannot be reproduced");
    restore_map_input(r, *input_);
  }

 private:
  std::shared_ptr<const MapDataset> ds_;
  std::unique_ptr<Iterator> input_;
  void take_snapshot() {
    try {
      snapshots_.push_back(Snapshot{read_, save_to_bytes(*input_)});
    } catch (...) {
      no_state_ = std::current_exception();  // iteration goes on; only a save fails
      snapshots_.clear();
    }
  }

  // The input's state before it read element `position` (counted from the restore).
  struct Snapshot {
    int64_t position;
    std::string state;
  };

  bool deterministic_;
  bool input_done_ = false;
  int64_t every_;
  int64_t read_ = 0;   // input elements read
  int64_t taken_ = 0;  // results handed out
  std::deque<Snapshot> snapshots_;
  std::exception_ptr no_state_;
  ParallelCalls calls_;  // last: its workers run map_one on ds_
};

std::unique_ptr<Iterator> MapDataset::make_iterator(const IteratorContext& ctx) const {
  auto self = std::static_pointer_cast<const MapDataset>(ptr());
  int64_t threads = parallel_ == kAutotune ? default_parallelism() : parallel_;
  if (threads <= 1)
    return std::make_unique<SequentialMapIterator>(self, input_->make_iterator(ctx));
  return std::make_unique<ParallelMapIterator>(
      self, input_->make_iterator(ctx), static_cast<int>(threads),
      ctx.options.ordered(deterministic_), ctx.cancellation);
}

}  // namespace

DatasetPtr make_map(DatasetPtr input, std::shared_ptr<const MapFn> fn, ElementSpec out_spec,
                    int64_t num_parallel_calls, std::optional<bool> deterministic) {
  DINPUT_CHECK_ARG(input != nullptr, "map: no input dataset");
  DINPUT_CHECK_ARG(fn != nullptr && *fn, "map: no function given");
  check_num_parallel_calls("map", num_parallel_calls);
  if (out_spec.empty()) out_spec = input->element_spec();
  return std::make_shared<MapDataset>(std::move(input), std::move(fn), std::move(out_spec),
                                      num_parallel_calls, deterministic);
}

}  // namespace dinput
