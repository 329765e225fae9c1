// Per-stage statistics and the trace of one pipeline instance (docs/statistics.md).
//
// Operations do not count their own work: when a pipeline's iterator is made, every node of
// the graph is wrapped in a transparent "stage" node whose iterator counts the elements and
// bytes its inner iterator produces and how long that took (instrument()). An operation added
// later is counted without any change to it. Stages that hold elements between their input
// and their output report how full they are through BufferedIterator.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace dinput {

class Autotuner;

// Implemented by iterators that buffer elements (prefetch, shuffle, parallel map,
// interleave). Called on the thread that calls the iterator's next(), right after it.
class BufferedIterator {
 public:
  virtual ~BufferedIterator() = default;
  // Elements held now.
  virtual int64_t buffered() const = 0;
  // The most it holds (-1: no fixed bound).
  virtual int64_t buffer_capacity() const = 0;
  // An iterator that copies the bytes of elements it holds so that the read buffers they
  // view can go (a shuffle: docs/records.md, "Memory behind a shuffle") adds the bytes it
  // copies to `bytes` from now on. Only its own thread writes it (bump).
  virtual void count_copies_into(std::atomic<int64_t>* bytes) { (void)bytes; }
};

// Which calls to time (timing one costs two clock reads, as much as a cheap stage's whole
// call; the totals are scaled, and elements and bytes are always exact): the first, then one
// after a gap drawn uniformly from 1 to 127 calls (64 on average), or every call while
// tracing. Gaps that vary keep the samples out of step with costs that come every so many
// calls (a reader's group of 48 records, a batch of 256): timing every 64th call, a reader's
// parse of a group fell in one timed call in three instead of one in 48, and its time came
// out 16 times too long.
class CallSampler {
 public:
  CallSampler(bool every_call, uint64_t seed) : every_call_(every_call), state_(seed | 1) {}
  // The call to time after call `n`.
  int64_t after(int64_t n) {
    if (every_call_) return n + 1;
    state_ ^= state_ << 13;  // xorshift64
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return n + 1 + static_cast<int64_t>(state_ % 127);
  }

 private:
  bool every_call_;
  uint64_t state_;
};

// What one iterator instance of a stage counted. Written by the one thread that calls that
// instance at a time (relaxed load and store, no read-modify-write), read by any thread.
struct StageCounters {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> elements{0};
  std::atomic<int64_t> bytes{0};
  // Calls timed (about one in 64, or all while tracing), and their total duration;
  // sync_*: those made on the thread the consumer stage runs on (from inside its next()).
  // Each instance's first call is always timed, and counted apart (first_*): it often does
  // the setup (opening a file, filling a buffer), and is counted once, not scaled up as a
  // sample of the others. timed_calls and sync_timed_calls include it; the *_ns do not.
  std::atomic<int64_t> timed_calls{0};
  std::atomic<int64_t> timed_ns{0};
  std::atomic<int64_t> sync_timed_calls{0};
  std::atomic<int64_t> sync_timed_ns{0};
  std::atomic<int64_t> first_calls{0};
  std::atomic<int64_t> first_ns{0};
  std::atomic<int64_t> sync_first_ns{0};
  std::atomic<int64_t> corrupt_records{0};
  std::atomic<int64_t> fill_samples{0};
  std::atomic<int64_t> fill_sum{0};
  std::atomic<int64_t> fill_max{0};
  std::atomic<int64_t> fill_last{0};
  std::atomic<int64_t> capacity{-1};
  std::atomic<int64_t> copied_bytes{0};  // BufferedIterator::count_copies_into

  void add(const StageCounters& o);
};

// One stage: a node of the instrumented graph.
struct StageInfo {
  int id = 0;
  std::string name;
  std::string arguments;
  std::vector<int> inputs;
  // The stage that reads this one (null for the output), set before any iterator exists.
  StageInfo* parent = nullptr;
  // The thread of this stage's last timed call (an index of the trace's threads).
  std::atomic<int32_t> last_thread{-1};
  std::mutex mu;
  StageCounters retired;  // of the instances already destroyed
  std::vector<std::shared_ptr<StageCounters>> live;

  std::shared_ptr<StageCounters> attach();
  void detach(const std::shared_ptr<StageCounters>& c);
  // Adds every instance's counts to `out`.
  void total(StageCounters& out);
};

// A slice of the trace: one produced element (or end) of a stage, or one consumer wait.
struct TraceEvent {
  int32_t stage;  // -1: the consumer's get_next
  int32_t thread;
  int64_t begin_ns;  // since the pipeline's start
  int64_t duration_ns;
  int32_t got;  // the elements produced (several for a next_batch call), 0: the end
};

// The newest `capacity` events; older ones are dropped and counted.
class TraceRing {
 public:
  explicit TraceRing(size_t capacity) : capacity_(capacity) {}
  void add(const TraceEvent& e);
  std::vector<TraceEvent> events(int64_t* dropped) const;
  size_t capacity() const { return capacity_; }

 private:
  mutable std::mutex mu_;
  size_t capacity_;
  size_t next_ = 0;
  int64_t total_ = 0;
  std::vector<TraceEvent> ring_;
};

// The statistics of one pipeline instance: its stages, its consumer, its trace.
class PipelineStats {
 public:
  // trace_capacity: the most trace events kept (0: no trace).
  PipelineStats(std::shared_ptr<IteratorStats> counters, size_t trace_capacity);

  int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start_)
        .count();
  }
  bool tracing() const { return trace_ != nullptr; }
  TraceRing* trace() const { return trace_.get(); }
  const std::shared_ptr<IteratorStats>& counters() const { return counters_; }

  StageInfo& add_stage(const Dataset& node, std::vector<int> inputs);
  size_t num_stages() const;

  // The consumer's calls (get_next, or a distributed step): begin at entry, end at return.
  void consumer_begin();
  void consumer_end();

  // The JSON document of docs/statistics.md ("worker" is set when >= 0).
  std::string to_json(int worker = -1) const;
  // The Trace Event JSON of docs/statistics.md, "Trace"; `worker` is its process id.
  std::string trace_json(int worker = 0) const;
  // The "traceEvents" entries alone (a JSON array), to join several pipelines' or workers'
  // traces into one file; `tid_base` is added to the track ids.
  std::string trace_events_json(int worker, int64_t tid_base = 0) const;
  // The events dropped from the trace so far.
  int64_t dropped_events() const;
  // The pipeline's autotuner, whose knobs the JSON lists under their stages.
  void set_autotuner(std::shared_ptr<Autotuner> tuner) { autotuner_ = std::move(tuner); }

 private:
  std::shared_ptr<IteratorStats> counters_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::unique_ptr<TraceRing> trace_;
  std::shared_ptr<Autotuner> autotuner_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<StageInfo>> stages_;
  // Consumer timing; written by the consumer's thread, one call at a time.
  // Sampled (stage_stats.cc): wait_ns_ over timed_calls_ calls after the first, whose wait is
  // first_wait_ns_; between_ns_ over timed_gaps_ gaps; last_end_ is the end of the last timed
  // call while its gap is still to be timed.
  std::atomic<int64_t> calls_{0};
  std::atomic<int64_t> timed_calls_{0};
  std::atomic<int64_t> wait_ns_{0};
  std::atomic<int64_t> first_wait_ns_{0};
  CallSampler consumer_sampler_;
  int64_t next_timed_call_ = 0;
  std::atomic<int64_t> timed_gaps_{0};
  std::atomic<int64_t> between_ns_{0};
  int64_t call_begin_ = 0;
  int64_t last_end_ = -1;
  bool timing_call_ = false;
};

// Times one call of a pipeline's consumer (get_next, a distributed step); `stats` may be
// null (statistics off).
class ConsumerCall {
 public:
  explicit ConsumerCall(PipelineStats* stats) : stats_(stats) {
    if (stats_) stats_->consumer_begin();
  }
  ~ConsumerCall() {
    if (stats_) stats_->consumer_end();
  }
  ConsumerCall(const ConsumerCall&) = delete;
  ConsumerCall& operator=(const ConsumerCall&) = delete;

 private:
  PipelineStats* stats_;
};

// The deepest pipeline that is instrumented: wrapping doubles the iterator chain's depth,
// and deeper pipelines keep their stack to themselves (their statistics list no stages).
constexpr int64_t kMaxInstrumentedDepth = 1000;

// Whether a pipeline whose options leave `statistics` unset is instrumented.
constexpr bool kStatisticsByDefault = true;

// `root` with every node wrapped in a stage of `stats`. Datasets that a function makes while
// iterating (interleave, flat_map) are counted under the operation that made them; a cache()
// node is one stage, its input kept as it is (its cache is shared with other iterators).
DatasetPtr instrument(const DatasetPtr& root, const std::shared_ptr<PipelineStats>& stats);

// The iterator of a pipeline's output, made as `ds->make_iterator(ctx)`, instrumented when
// `ds`'s options ask for statistics or a trace: then ctx.pipeline_stats is set (a new one).
std::unique_ptr<Iterator> make_pipeline_iterator(const DatasetPtr& ds, IteratorContext& ctx);

}  // namespace dinput
