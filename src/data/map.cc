// map: a user function applied to every element, sequentially or on a thread pool. The unit of
// work is a run of consecutive elements: map_many's function serves a whole run per call, and
// the element map is the case of runs of one.
#include <chrono>
#include <cstdint>
#include <deque>
#include <thread>

#include "data/autotune.h"
#include "data/data_errors.h"
#include "data/input_snapshots.h"
#include "data/nodes.h"
#include "data/parallel_calls.h"
#include "data/stage_stats.h"
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

using Run = std::vector<Element>;

// Autotuned stages time one call in kTimeEvery (a power of two), and hand their counts to the
// tuner every KnobMeter::kFlushEvery elements or once they waited longer than this.
constexpr int64_t kTimeEvery = 8;
// On the consumer's thread (a map at parallelism 1), a call that took less than kCheapCallNs
// makes the next timed call come kCheapTimeEvery calls later: two clock reads are then a few
// per cent of such a call's time, and the tuner needs no more than a sample or two per step.
constexpr int64_t kCheapCallNs = 20'000;
constexpr int64_t kCheapTimeEvery = 64;
constexpr int64_t kFlushAfterWaitNs = 1'000'000;
// An autotuned map snapshots its input every this many runs read: often enough that a restore
// skips few elements, rarely enough that at parallelism 1 (where the sequential map takes
// none) a snapshot costs a small share of an element.
constexpr int64_t kAutotunedSnapshotEvery = 32;

class MapDataset final : public UnaryDataset {
 public:
  // many: the function was given as a map_many's (errors then name the index in the run).
  MapDataset(DatasetPtr input, std::shared_ptr<const MapManyFn> fn, size_t max_count, bool many,
             ElementSpec out_spec, int64_t parallel, std::optional<bool> deterministic,
             DatasetPtr tuned_as)
      : UnaryDataset(std::move(input)),
        fn_(std::move(fn)),
        max_count_(max_count),
        many_(many),
        spec_(std::move(out_spec)),
        parallel_(parallel),
        deterministic_(deterministic),
        tuned_as_(std::move(tuned_as)) {}
  const char* name() const override { return "map"; }
  std::string arguments() const override {
    return "spec=" + to_string(spec_);  // parallelism changes no element, so it may change
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<MapDataset>(in.at(0), fn_, max_count_, many_, spec_, parallel_,
                                        deterministic_, tuned_as_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  size_t max_count() const { return max_count_; }

  // The results of one run, checked against the spec; `ins` is consumed.
  Run apply(Run& ins) const {
    Run outs;
    outs.reserve(ins.size());
    (*fn_)(outs, ins);
    if (outs.size() != ins.size())
      raise(Code::kInternal, "map: the function gave ", outs.size(), " results for ", ins.size(),
            " elements");
    for (size_t i = 0; i < outs.size(); ++i) {
      if (matches(spec_, outs[i])) continue;
      check_matches(spec_, outs[i],
                    many_ ? str_cat("the map_many function's output ", i) : "the map function");
    }
    return outs;
  }

 private:
  std::shared_ptr<const MapManyFn> fn_;
  size_t max_count_;
  bool many_;
  ElementSpec spec_;
  int64_t parallel_;
  std::optional<bool> deterministic_;  // unset: the options' (see Options::ordered)
  DatasetPtr tuned_as_;                // the node whose AUTOTUNE knob this map uses (null: its own)
};

// Reads the next run of up to max_count inputs into `ins`; false once the input has ended (`ins`
// then holds what came before the end). An input error is kept in `error`, behind the elements
// read before it, so that those are mapped and delivered first, as an element map would.
bool read_run(Iterator& input, size_t max_count, Run& ins, std::exception_ptr& error) {
  ins.clear();
  Element e;
  try {
    while (ins.size() < max_count) {
      if (!input.next(e)) return false;
      ins.push_back(std::move(e));
    }
  } catch (...) {
    error = std::current_exception();
  }
  return true;
}

// A map's section: the number of input elements whose results were taken after the input's
// state that follows, then that state. Restores the input and reads past those elements
// (without calling the function: their results were delivered before the save).
void restore_map_input(StateReader& r, Iterator& input) {
  StateReader s = r.section("map");
  const int64_t skip = s.i64_in("elements taken after the input's state", 0, INT64_MAX);
  input.restore(s);
  s.finish();
  const int64_t passed = skip_items(input, skip);
  if (passed < skip)
    raise(Code::kDataLoss, "map: restoring the iterator state: the input ended after ", passed,
          " of the ", skip, " elements taken before the save");
}

class SequentialMapIterator final : public Iterator {
 public:
  SequentialMapIterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<Iterator> input)
      : ds_(std::move(ds)), input_(std::move(input)) {}
  bool next(Element& out) override {
    if (pos_ == outs_.size()) {
      if (error_) throw_input_error();
      if (input_done_) return false;
      if (ds_->max_count() > 1) take_run_snapshot();
      outs_.clear();
      pos_ = 0;
      input_done_ = !read_run(*input_, ds_->max_count(), ins_, error_);
      if (ins_.empty()) {
        if (error_) throw_input_error();
        return false;
      }
      outs_ = ds_->apply(ins_);
    }
    out = std::move(outs_[pos_++]);
    return true;
  }
  // The same section as the parallel map's (which may restore it). Inside a run of map_many,
  // the input has read the whole run: the state is the input's before the run plus the
  // results taken from it.
  void save(StateWriter& w) const override {
    const bool inside_run = pos_ < outs_.size();
    if (inside_run && no_state_) std::rethrow_exception(no_state_);
    w.section("map", [&](StateWriter& s) {
      if (inside_run) {
        s.i64(static_cast<int64_t>(pos_));
        s.raw(run_start_);
        return;
      }
      s.i64(0);
      input_->save(s);
    });
  }
  void restore(StateReader& r) override { restore_map_input(r, *input_); }

 private:
  std::shared_ptr<const MapDataset> ds_;
  std::unique_ptr<Iterator> input_;
  // The input's error, after the results before it: a data error once (the next call reads
  // on), any other for good.
  [[noreturn]] void throw_input_error() {
    std::exception_ptr error = error_;
    if (is_data_error(error))
      error_ = nullptr;
    else
      input_done_ = true;
    std::rethrow_exception(error);
  }
  void take_run_snapshot() {
    if (no_state_) return;
    try {
      run_start_ = save_to_bytes(*input_);
    } catch (...) {
      no_state_ = std::current_exception();  // iteration goes on; only a save fails
    }
  }

  Run ins_;
  Run outs_;  // the current run's results, handed out from pos_
  size_t pos_ = 0;
  bool input_done_ = false;
  std::exception_ptr error_;     // an input error waiting behind outs_
  std::string run_start_;        // map_many: the input's state before the current run
  std::exception_ptr no_state_;  // why the input could not be saved
};

// Reads input on the consumer's thread and keeps up to 2x the pool size of runs in flight
// (data/parallel_calls.h). With `deterministic` results come back in input order; otherwise
// the runs come back whichever finishes first (each run's results in order).
//
// Its state counts the results taken, not the calls made: every max_in_flight input
// elements (rounded up to a run) it saves its input's state before reading the next run, and
// a save is the last such snapshot at or before the first result not taken, plus the
// elements taken since.
class ParallelMapIterator final : public Iterator, public BufferedIterator {
 public:
  // In calls (one per element, or per run of map_many).
  int64_t buffered() const override { return static_cast<int64_t>(calls_.in_flight()); }
  int64_t buffer_capacity() const override { return static_cast<int64_t>(calls_.max_in_flight()); }

  // tuner, knob: the autotuned parallelism (threads is then its value now), or null.
  ParallelMapIterator(std::shared_ptr<const MapDataset> ds, std::unique_ptr<Iterator> input,
                      int threads, bool deterministic, std::shared_ptr<Cancellation> cancellation,
                      std::shared_ptr<Autotuner> tuner = nullptr,
                      std::shared_ptr<Knob> knob = nullptr)
      : ds_(std::move(ds)),
        input_(std::move(input)),
        deterministic_(deterministic),
        // Autotuned: snapshots every kAutotunedSnapshotEvery calls' worth, whatever the
        // knob's value (and the machine's cores), so that saved states do not depend on it.
        every_((knob ? kAutotunedSnapshotEvery : static_cast<int64_t>(threads) * 2) *
               static_cast<int64_t>(ds_->max_count())),
        tuner_(std::move(tuner)),
        knob_(std::move(knob)),
        threads_(threads),
        // Autotuned at 1, the function runs on this thread: no pool thread is started until
        // the knob rises (starting one costs about as much as thousands of cheap calls).
        calls_(knob_ && threads == 1 ? 0 : threads, static_cast<size_t>(threads) * 2,
               std::move(cancellation)) {}

  bool next(Element& out) override {
    if (knob_) {
      // Raised: the pool grows; lowered: fewer calls are kept in flight (the pool's threads
      // stay, idle), and at 1 the consumer's thread takes over once those have been taken.
      const int64_t want = knob_->value();
      if (want != threads_) {
        threads_ = want;
        calls_.set_threads(static_cast<int>(want), static_cast<size_t>(want) * 2);
      }
    }
    while (pos_ == outs_.size()) {
      // Autotuned at parallelism 1 (or with an input error of that path still to deliver):
      // the sequential map's path, on this thread; the pool takes over once the knob rises
      // and nothing is left of this path.
      if (knob_ && calls_.empty() && (threads_ == 1 || error_)) {
        if (!run_here()) return false;
        continue;
      }
      while (!input_done_ && !calls_.full()) {
        take_snapshot_if_due();
        Run ins;
        std::exception_ptr error;
        input_done_ = !read_run(*input_, ds_->max_count(), ins, error);
        read_ += static_cast<int64_t>(ins.size());
        if (!ins.empty()) {
          items_.push_back(static_cast<int64_t>(ins.size()));
          if (knob_ && (++submitted_ & (kTimeEvery - 1)) == 0) {
            // One call in kTimeEvery measures the function's cost for the autotuner.
            calls_.submit([ds = ds_, knob = knob_, ins = std::move(ins)]() mutable {
              const int64_t items = static_cast<int64_t>(ins.size());
              const int64_t cpu = thread_cpu_ns();
              const auto begin = std::chrono::steady_clock::now();
              Run outs = ds->apply(ins);
              const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::steady_clock::now() - begin)
                                       .count();
              knob->add_work(items, took, cpu < 0 ? -1 : thread_cpu_ns() - cpu);
              return outs;
            });
          } else {
            calls_.submit([ds = ds_, ins = std::move(ins)]() mutable { return ds->apply(ins); });
          }
        }
        if (error) {
          // In line behind the runs before it; after a data error the input reads on.
          ++read_;
          items_.push_back(1);
          calls_.submit_error(error);
          if (!is_data_error(error)) input_done_ = true;
        }
      }
      if (calls_.empty()) return false;
      outs_.clear();
      pos_ = 0;
      const int64_t items = items_.front();
      items_.pop_front();
      try {
        outs_ = calls_.take(deterministic_);
        if (knob_) meter_.wait_ns += calls_.take_waited_ns();
      } catch (...) {
        // A failed call (or an input error) stands for the items it was given: a save counts
        // them as taken, as the sequential map's input has passed them.
        count_taken(items);
        throw;
      }
    }
    out = std::move(outs_[pos_++]);
    count_taken(1);
    if (knob_) {
      if (meter_.elements == 0) knob_->add_bytes(payload_bytes(out));
      if (++meter_.elements >= KnobMeter::kFlushEvery || meter_.wait_ns > kFlushAfterWaitNs)
        tuner_->flush(*knob_, meter_);
    }
    return true;
  }

  void save(StateWriter& w) const override {
    if (!deterministic_)
      state_unsupported("map",
                        "num_parallel_calls > 1 with deterministic=false delivers results as they "
                        "finish, an order that cannot be reproduced");
    snapshots_.check();
    w.section("map", [&](StateWriter& s) {
      if (snapshots_.list().empty()) {  // nothing read yet
        s.i64(0);
        input_->save(s);
        return;
      }
      s.i64(taken_ - snapshots_.list().front().position);
      s.raw(snapshots_.list().front().state);
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
  // A snapshot of the input before the next read, every every_ items read, whichever path
  // reads: saved states are then the same bytes at any parallelism.
  void take_snapshot_if_due() {
    if (read_ >= next_snapshot_) take_snapshot();
  }
  void take_snapshot() {
    snapshots_.take(*input_, read_);
    next_snapshot_ = read_ + every_;
    const auto& list = snapshots_.list();
    if (list.size() == 2) next_drop_ = list[1].position;
  }
  // Counts items handed out; snapshots older than the last one at or before them go (looked
  // at only when the second snapshot is reached, not per element).
  void count_taken(int64_t items) {
    taken_ += items;
    if (taken_ >= next_drop_) drop_snapshots();
  }
  void drop_snapshots() {
    snapshots_.drop_before(taken_);
    const auto& list = snapshots_.list();
    next_drop_ = list.size() > 1 ? list[1].position : INT64_MAX;
  }

  // Autotuned at parallelism 1: the sequential map's path (the function runs on this thread,
  // no queue, no hand-off), with the parallel path's counts and snapshots so that a save
  // writes the same bytes and the pool can take over between two runs. The function's time
  // is the consumer's wait for the stage. Sets outs_ to the next run's results, raises the
  // input's error once the results before it were taken; false at the end.
  bool run_here() {
    if (error_) {
      std::exception_ptr error = error_;
      error_ = nullptr;
      count_taken(1);  // the error stands for one input item, as in the parallel path
      if (!is_data_error(error)) input_done_ = true;  // after a data error the input reads on
      std::rethrow_exception(error);
    }
    if (input_done_) return false;
    take_snapshot_if_due();
    input_done_ = !read_run(*input_, ds_->max_count(), ins_, error_);
    const auto items = static_cast<int64_t>(ins_.size());
    read_ += items;
    if (error_) ++read_;
    if (items == 0) return error_ != nullptr;  // the error is raised on the next turn
    // Wall-clock time only: the thread's CPU clock is a system call, which would cost a
    // cheap function more than the function itself, and the first raise is judged on the
    // wall-clock time alone (the pool's calls measure CPU time once there is a pool).
    const int64_t time_every = here_time_every_;
    const bool timed = --here_until_timed_ == 0;
    const auto begin =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    outs_.clear();
    pos_ = 0;
    try {
      outs_ = ds_->apply(ins_);
    } catch (...) {
      count_taken(items);
      throw;
    }
    if (timed) {
      const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now() - begin)
                               .count();
      knob_->add_work(items, took, -1);
      meter_.wait_ns += took * time_every;  // the untimed calls, estimated
      here_time_every_ = took < kCheapCallNs ? kCheapTimeEvery : kTimeEvery;
      here_until_timed_ = here_time_every_;
    }
    return true;
  }

  std::shared_ptr<const MapDataset> ds_;
  std::unique_ptr<Iterator> input_;
  bool deterministic_;
  bool input_done_ = false;
  Run outs_;  // the run taken last, handed out from pos_
  size_t pos_ = 0;
  int64_t every_;
  int64_t read_ = 0;           // input items read: elements, and input errors
  int64_t taken_ = 0;          // items handed out: results, and errors for their inputs
  std::deque<int64_t> items_;  // the input items of each call in flight, in order (deterministic)
  InputSnapshots snapshots_;   // positions counted from the restore
  int64_t next_snapshot_ = 0;  // read_ at which the next snapshot is due
  int64_t next_drop_ = INT64_MAX;  // the second snapshot's position, if any
  std::shared_ptr<Autotuner> tuner_;
  std::shared_ptr<Knob> knob_;
  int64_t threads_;
  int64_t submitted_ = 0;
  KnobMeter meter_;
  int64_t here_time_every_ = kTimeEvery;  // run_here: one call in this many is timed
  int64_t here_until_timed_ = kTimeEvery;
  Run ins_;                   // run_here's inputs (kept for their capacity)
  std::exception_ptr error_;  // run_here: an input error waiting behind outs_
  ParallelRunCalls calls_;    // last: its workers run apply on ds_
};

std::unique_ptr<Iterator> MapDataset::make_iterator(const IteratorContext& ctx) const {
  auto self = std::static_pointer_cast<const MapDataset>(ptr());
  if (parallel_ == kAutotune && ctx.autotuner) {
    auto knob = ctx.autotuner->knob(tuned_as_ ? *tuned_as_ : *this, "parallelism",
                                    KnobKind::kParallelism, 1, autotune_max_parallelism(), 1,
                                    2 * static_cast<int64_t>(max_count_), ctx.stage);
    knob->set_inline_at_minimum();
    const auto threads = static_cast<int>(knob->value());
    return std::make_unique<ParallelMapIterator>(self, input_->make_iterator(ctx), threads,
                                                 ctx.options.ordered(deterministic_),
                                                 ctx.cancellation, ctx.autotuner, std::move(knob));
  }
  int64_t threads = parallel_ == kAutotune ? default_parallelism() : parallel_;
  if (threads <= 1)
    return std::make_unique<SequentialMapIterator>(self, input_->make_iterator(ctx));
  return std::make_unique<ParallelMapIterator>(
      self, input_->make_iterator(ctx), static_cast<int>(threads),
      ctx.options.ordered(deterministic_), ctx.cancellation);
}

DatasetPtr make_map_node(const char* op, DatasetPtr input, std::shared_ptr<const MapManyFn> fn,
                         size_t max_count, bool many, ElementSpec out_spec,
                         int64_t num_parallel_calls, std::optional<bool> deterministic,
                         DatasetPtr tuned_as = nullptr) {
  check_num_parallel_calls(op, num_parallel_calls);
  if (out_spec.empty()) out_spec = input->element_spec();
  return std::make_shared<MapDataset>(std::move(input), std::move(fn), max_count, many,
                                      std::move(out_spec), num_parallel_calls, deterministic,
                                      std::move(tuned_as));
}

}  // namespace

DatasetPtr make_map(DatasetPtr input, std::shared_ptr<const MapFn> fn, ElementSpec out_spec,
                    int64_t num_parallel_calls, std::optional<bool> deterministic) {
  DINPUT_CHECK_ARG(input != nullptr, "map: no input dataset");
  DINPUT_CHECK_ARG(fn != nullptr && *fn, "map: no function given");
  auto one = std::make_shared<const MapManyFn>(
      [fn = std::move(fn)](Run& outs, Run& ins) { outs.push_back((*fn)(ins.front())); });
  return make_map_node("map", std::move(input), std::move(one), 1, false, std::move(out_spec),
                       num_parallel_calls, deterministic);
}

DatasetPtr make_map_many(DatasetPtr input, std::shared_ptr<const MapManyFn> fn, int64_t max_count,
                         ElementSpec out_spec, int64_t num_parallel_calls,
                         std::optional<bool> deterministic, DatasetPtr tuned_as) {
  DINPUT_CHECK_ARG(input != nullptr, "map_many: no input dataset");
  DINPUT_CHECK_ARG(fn != nullptr && *fn, "map_many: no function given");
  DINPUT_CHECK_ARG(max_count >= 1, "map_many: max_count must be at least 1, got ", max_count);
  return make_map_node("map_many", std::move(input), std::move(fn), static_cast<size_t>(max_count),
                       true, std::move(out_spec), num_parallel_calls, deterministic,
                       std::move(tuned_as));
}

}  // namespace dinput
