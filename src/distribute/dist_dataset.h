// Distributed datasets and their iterators (docs/semantics.md: "Rebatching",
// "distribute_datasets_from_function", "Partial batches and the end of data").
//
// A distributed dataset is one worker's plan: its input pipeline(s) after auto-sharding,
// how their elements become per-replica pieces, and the spec of a piece. Its iterator builds
// "local steps" (one piece or nothing per local replica) — ahead of the consumer on a
// background thread when per_replica_buffer_size > 0 — and at every get_next agrees with
// the other workers, through the collective, whether any replica anywhere still has data.
#pragma once

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "data/dataset.h"
#include "device/gpu.h"
#include "distribute/input_options.h"
#include "distribute/strategy.h"

namespace dinput {

struct InputContext {
  int num_input_pipelines;
  int input_pipeline_id;
  int num_replicas_in_sync;
  int64_t per_replica_batch_size(int64_t global_batch_size) const;
};

class DistributedDataset : public std::enable_shared_from_this<DistributedDataset> {
 public:
  enum class Split { kNone, kEven, kBalanced };

  struct Plan {
    std::vector<DatasetPtr> pipelines;  // one (PER_WORKER) or one per local replica
    Split split = Split::kNone;
    int64_t even_pieces = 0;               // kEven: pieces per input batch
    std::vector<int64_t> even_keep;        // kEven: which of them this worker keeps
    std::vector<int64_t> balanced_sizes;   // kBalanced
    std::vector<Tensor> balanced_padding;  // kBalanced over a padded_batch: its padding values
    ElementSpec piece_spec;
    std::optional<Error> deferred;   // raised by the first get_next
    std::string description;         // JSON, for dinput_dist_dataset_plan
    std::string policy;              // the sharding applied: "DATA", "FILE", "OFF", ...; "NONE"
    int64_t global_batch_size = -1;  // detected; -1: unknown
    // Per pipeline, the seed the workers agreed on for its random-seeded operations (none:
    // it has none), and the pipelines as they are with other agreed seeds: a restored state
    // continues the orders of the seeds it was saved with (docs/checkpoint.md).
    using Seeds = std::vector<std::optional<uint64_t>>;
    Seeds agreed_seeds;
    std::function<std::vector<DatasetPtr>(const Seeds&)> reseed;
    // distribute_dataset only (elastic resume under FILE sharding, elastic_file.cc): the
    // given pipeline with the seeds of a state, before sharding, and what turns a sharded
    // copy of it into the pipeline a worker iterates (the read-ahead before the split).
    std::function<DatasetPtr(const Seeds&)> seeded;
    std::function<DatasetPtr(const DatasetPtr&)> finish;
  };

  DistributedDataset(std::shared_ptr<const Strategy> strategy, InputOptions options, Plan plan);

  const Strategy& strategy() const { return *strategy_; }
  const InputOptions& options() const { return options_; }
  const Plan& plan() const { return plan_; }
  const ElementSpec& element_spec() const { return plan_.piece_spec; }
  // The epoch counters of pipeline i: this worker's copy of it counts its own iterations,
  // so its k-th iterator draws the same shuffle orders on every worker, whatever the other
  // workers sharing the dataset object have drawn (docs/distribution.md, "With shuffle";
  // data/epoch_counters.h).
  const std::shared_ptr<EpochCounters>& epochs(size_t pipeline) const {
    return epochs_.at(pipeline);
  }

 private:
  std::shared_ptr<const Strategy> strategy_;
  InputOptions options_;
  Plan plan_;
  std::vector<std::shared_ptr<EpochCounters>> epochs_;
};

using DistributedDatasetPtr = std::shared_ptr<const DistributedDataset>;

// Whether a strategy's replicas receive data on GPUs under these options.
bool feeds_gpu(const Strategy& strategy, const InputOptions& options);
// Whether steps are produced ahead on a thread of their own (per-replica buffer for GPUs).
bool uses_step_buffer(const Strategy& strategy, const InputOptions& options);

// experimental_distribute_dataset.
DistributedDatasetPtr distribute_dataset(std::shared_ptr<const Strategy> strategy,
                                         const DatasetPtr& dataset, const InputOptions& options);

// distribute_datasets_from_function: dataset_fn is called here, once per input pipeline.
using DatasetFn = std::function<DatasetPtr(const InputContext&)>;
DistributedDatasetPtr distribute_datasets_from_function(std::shared_ptr<const Strategy> strategy,
                                                        const DatasetFn& dataset_fn,
                                                        const InputOptions& options);

class SplitIterator;

class DistributedIterator {
 public:
  explicit DistributedIterator(DistributedDatasetPtr dataset);
  // An iterator that continues where the one whose state (save()) this is stopped
  // (docs/checkpoint.md, "Distributed iterators"). Every worker makes one from the same state
  // at the same time: they check through the collective that they all restored the same
  // step (FAILED_PRECONDITION naming the workers otherwise).
  DistributedIterator(DistributedDatasetPtr dataset, std::string_view state);
  ~DistributedIterator();
  DistributedIterator(const DistributedIterator&) = delete;
  DistributedIterator& operator=(const DistributedIterator&) = delete;

  // One element per local replica; false once no replica on any worker has data. Ended and
  // failed states are sticky, as for dataset iterators. What `out` holds is discarded, but
  // its vectors' storage may be reused for the pieces (the C API passes a freed step's).
  bool next(std::vector<Element>& out);
  // Any thread, also while next() waits: that next() and every later one fail with
  // CANCELLED, and the other workers' iterators of this epoch fail at once too (through
  // the collective) instead of waiting for this worker's steps; once an iterator over
  // infinite pipelines stopped exchanging (none waits for its steps), it stops alone.
  // Idempotent.
  void cancel();
  bool cancelled() const { return cancellation_->cancelled(); }
  // Whether the iterator has ended or failed and released its pipelines; what is left
  // then needs no thread to be waited for.
  bool finished() const { return (ended_ || error_) && sources_.empty() && !buffer_; }
  const DistributedDataset& dataset() const { return *dataset_; }
  const IteratorStats& stats() const { return *stats_; }
  // The whole job's state at this step, the same bytes on every worker: every worker calls
  // it at the same step, and the workers' parts are gathered through the collective. Between
  // next() calls only. Steps produced ahead (the per-replica buffer) are produced again by
  // a restored iterator.
  std::string save();
  // Steps delivered so far.
  int64_t steps() const { return steps_; }
  // Statistics (docs/statistics.md, dist_stats.cc): this worker's pipelines and steps, or
  // every worker's, gathered through the collective (every worker calls it at the same point).
  std::string statistics_json() const;
  std::string gather_statistics();
  // This worker's trace (Trace Event JSON): its pipelines' stages and its steps' waits.
  std::string trace_json() const;

 private:
  struct LocalStep {
    std::vector<Element> pieces;  // an empty Element: this replica has no data
    int64_t count = 0;            // replicas with data
    // With a step buffer: this worker's part of a state saved right after this step, or why
    // it could not be saved (raised by a save at this step).
    std::string part;
    std::exception_ptr no_part;
  };
  void open_channels();
  // The restoring constructor's work (dist_state.cc), before start().
  void restore(std::string_view state);
  void start();  // what both constructors do after the sources (if restored) exist
  std::unique_ptr<Iterator> split(std::unique_ptr<Iterator> source);
  // This worker's part of a state: its pipelines' positions (dist_state.cc).
  std::string save_part() const;
  void restore_part(std::string_view part, bool elastic);
  // Restores the parts of a state that another number of workers or replicas saved under
  // FILE sharding: what they had not delivered is dealt out again (elastic_file.cc).
  void restore_elastic_file(const std::vector<std::string>& parts,
                            const DistributedDataset::Plan::Seeds& seeds);
  void finish_elastic(std::unique_ptr<Iterator> source);
  // The pipeline of a worker restored from a part that an elastically restored worker saved:
  // `pipeline`'s fingerprint, and an iterator that rebuilds what that worker read.
  DatasetPtr elastic_pipeline(const DatasetPtr& pipeline,
                              const DistributedDataset::Plan::Seeds& seeds);
  // What every worker saved or restored (dist_state.cc): raises the first failure, or a
  // mismatch of the steps, on every worker alike.
  std::vector<std::string> gather_states(const char* what, std::string payload,
                                         const std::optional<Error>& local_error);
  // Cuts a step's pieces into `pieces` (resized to the local replicas; those without data
  // left empty) and returns how many replicas got data.
  int64_t produce_pieces(std::vector<Element>& pieces);
  bool produce_step(LocalStep& step);  // the step buffer's producer
  void place_on_device(Element& piece, int replica) const;
  // The next step's pieces: made here, or taken from the step buffer.
  int64_t fetch_pieces(std::vector<Element>& pieces);
  void open_sources();
  struct Agreement {
    int64_t total = 0;           // replicas with data over all workers
    int32_t short_replica = -1;  // a replica (global id) without data this step, if any
  };
  // What every worker learns at a step; raises the error of the first failing worker on
  // every worker. short_replica: this worker's first local replica without data, or -1.
  Agreement agree(int64_t local_count, int32_t short_replica,
                  const std::optional<Error>& local_error);
  void release();

  // Whether the workers exchange anything per step. With one worker there is nobody to agree
  // with. When every worker's pipelines are infinite (repeat() without a count), no worker
  // can run out of data, so the per-step count is known in advance: the first step's
  // exchange also tells whether every worker's are, and later steps exchange nothing (as
  // TensorFlow drops get_next_as_optional), a pipeline error then travelling by
  // abort_channel. Every worker decides from the same gathered values. Without the exchange
  // nobody waits for this worker's steps, so cancelling (or freeing) its iterator stops it
  // alone (cancel() reads this from any thread).
  enum class Exchange { kFirstStep, kEveryStep, kNone };
  std::atomic<Exchange> exchange_{Exchange::kFirstStep};
  bool infinite_ = false;  // every pipeline of this worker has infinite cardinality

  DistributedDatasetPtr dataset_;
  std::shared_ptr<IteratorStats> stats_ = std::make_shared<IteratorStats>();
  std::shared_ptr<Cancellation> cancellation_ = std::make_shared<Cancellation>();
  uint64_t channel_ = 0;
  bool feeds_gpu_ = false;
  // The first GPU replica's device, or -1: current on the threads that produce steps, so
  // that pinned allocations and copies never make a context on another GPU.
  int first_gpu_ = -1;
  // Marks the GPUs fed as in use; declared before the pipelines so that it goes after them,
  // and the cache of a GPU is emptied when its last iterator is gone.
  std::unique_ptr<gpu::DeviceUse> device_use_;
  std::vector<std::unique_ptr<Iterator>> sources_;  // one per pipeline, after splitting
  std::vector<SplitIterator*> splits_;              // sources_' splitters (null: none)
  // The pipelines iterated: the plan's, or those of a restored state's seeds; `effective_`
  // with the random seeds of a restored state, which saving carries on.
  std::vector<DatasetPtr> pipelines_, effective_;
  // A restored iterator's: the seeds of its state, which pipelines_ were built with and which
  // its own saves carry on.
  std::optional<DistributedDataset::Plan::Seeds> seeds_;
  uint64_t state_channel_ = 0;  // saves and restores gather on a channel of their own
  int64_t steps_ = 0;
  bool started_ = false;  // start() runs once, from each constructor
  bool buffered_ = false;
  std::string last_part_;  // buffered_: the part saved after the last step delivered
  std::exception_ptr last_no_part_;
  std::string next_part_;  // buffered_: that of the step fetched, until it is delivered
  std::exception_ptr next_no_part_;
  bool sources_open_ = false;
  bool elastic_ = false;  // its pipeline reads what a job of another shape left (FILE sharding)
  std::vector<bool> source_done_;
  struct Buffer;
  std::unique_ptr<Buffer> buffer_;  // after sources_: its thread reads them
  bool ended_ = false;
  std::optional<Error> error_;
  // Statistics (dist_stats.cc): the steps' consumer timing (null when off) and each opened
  // pipeline's stages, added by the thread that opens the sources.
  void keep_pipeline_stats(std::shared_ptr<PipelineStats> stats);
  std::shared_ptr<PipelineStats> step_stats_;
  mutable std::mutex pipeline_stats_mu_;
  std::vector<std::shared_ptr<PipelineStats>> pipeline_stats_;
};

}  // namespace dinput
