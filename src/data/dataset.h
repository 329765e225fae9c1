// A dataset is an immutable node of a pipeline graph: a source, or a transform of its
// inputs. Building one does no work; make_iterator() instantiates the chain of iterators.
// Because the graph is inspectable and nodes can be rebuilt with other inputs, distribution
// rewrites it (auto-sharding, batch-size detection) instead of special-casing iterators.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/element.h"
#include "data/cancellation.h"
#include "data/epoch_counters.h"
#include "data/iterator.h"
#include "data/options.h"

namespace dinput {

constexpr int64_t kInfiniteCardinality = -1;
constexpr int64_t kUnknownCardinality = -2;
// The most operations (nodes) a pipeline may have along its longest path from the output
// to a source. Iterator creation, iteration and cardinality walk that path recursively, so
// an unbounded chain would overflow the stack; a deeper pipeline is refused when built.
constexpr int64_t kMaxPipelineDepth = 10000;

class Dataset;
class PipelineStats;
class Autotuner;
using DatasetPtr = std::shared_ptr<const Dataset>;

// Counters of an iterator's work, shared by every iterator of one pipeline instance and
// read through dinput_iterator_statistic.
struct IteratorStats {
  std::atomic<int64_t> records{0};
  std::atomic<int64_t> record_bytes{0};
  std::atomic<int64_t> corrupt_records_skipped{0};
  // Every byte of the files' (decompressed) data read and not delivered in a record because
  // of damage; see docs/records.md for how records and bytes are counted.
  std::atomic<int64_t> corrupt_bytes_skipped{0};
  // Elements that ignore_errors() dropped because their upstream stage failed.
  std::atomic<int64_t> errors_ignored{0};
};

// The counter called `name` ("records", "record_bytes", "corrupt_records_skipped",
// "corrupt_bytes_skipped", "errors_ignored"); NOT_FOUND for other names.
int64_t read_statistic(const IteratorStats& stats, const std::string& name);

// What an iterator needs to know about where it runs: the options of the with_options()
// nodes downstream of it, and where to count its work.
struct IteratorContext {
  Options options;
  std::shared_ptr<IteratorStats> stats = std::make_shared<IteratorStats>();
  // The epoch counters of this pipeline instance; null: reshuffling nodes count their own
  // iterators (data/epoch_counters.h).
  std::shared_ptr<EpochCounters> epochs;
  // Set by dinput_iterator_cancel; every wait of the pipeline ends with CANCELLED when it
  // is. Null: the pipeline cannot be cancelled.
  std::shared_ptr<Cancellation> cancellation;
  // The iterator is made to be restored (data/state.h): it starts no background thread
  // before restore() or its first next(), since restore() must see its input unread.
  bool restoring = false;
  // No background thread reads ahead: prefetches make their elements on the consumer's
  // thread. Elastic resume under FILE sharding restores a pipeline this way, so that what
  // its file source has read stops where the restore left it (docs/checkpoint.md).
  bool synchronous = false;
  // The per-stage statistics of this pipeline instance (data/stage_stats.h); null when the
  // pipeline is not instrumented.
  std::shared_ptr<PipelineStats> pipeline_stats;
  // The autotuner of this pipeline instance (data/autotune.h); null: AUTOTUNE settings keep
  // their fixed defaults (a pipeline iterated without make_pipeline_iterator).
  std::shared_ptr<Autotuner> autotuner;
  // The statistics' stage whose iterator is being made (-1: none), which an autotuned knob
  // is listed under.
  int stage = -1;
};

class Dataset : public std::enable_shared_from_this<Dataset> {
 public:
  virtual ~Dataset() = default;

  // Short node name as in the chain syntax: "range", "batch", ...
  virtual const char* name() const = 0;
  // The node's arguments in a canonical form ("buffer_size=10000, seed=42"): with name(), one
  // operation's entry in the fingerprint of a saved iterator state (data/state.h). Seeds
  // drawn at random are "random"; functions are opaque.
  virtual std::string arguments() const { return ""; }
  virtual const ElementSpec& element_spec() const = 0;
  virtual int64_t cardinality() const = 0;
  virtual std::vector<DatasetPtr> inputs() const { return {}; }
  // The same node over other inputs (same count as inputs()). Sources return themselves.
  virtual DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const = 0;
  virtual std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const = 0;

  // Options in effect at this node: the nearest with_options() on the way to the sources.
  virtual const Options& options() const;
  // Operations on the longest path from this node to a source, this node included.
  virtual int64_t depth() const { return 1; }
  // Whether this node drew its seed at random (a shuffle or list_files given seed < 0), and
  // the same node with a chosen seed instead: the workers of a distribution agree on one
  // (distribute/dist_dataset.cc), as their shards must come from the same order.
  virtual bool has_random_seed() const { return false; }
  virtual DatasetPtr with_seed(uint64_t) const { return ptr(); }
  // The same node writing its elements where a batch of `rows` of them will hold them (the
  // elements of each run of `rows` slices of one buffer, which stack() then returns without
  // copying), or null where the node cannot (most do not). make_batch asks its input.
  virtual DatasetPtr with_batch_rows(int64_t) const { return nullptr; }
  // The seed a node with has_random_seed() drew (a saved iterator state carries it).
  virtual uint64_t seed() const { return 0; }
  // The counter of a node that draws a new order for each of its iterators (a reshuffling
  // shuffle or list_files), null for the others; a saved state carries its count.
  virtual EpochCounter epoch_counter() const { return nullptr; }
  // Which components are the row splits of a ragged value, in TensorFlow's RaggedTensor
  // encoding (data/ragged.h): true at each such component; a ragged value's splits follow its
  // values, outermost first. Empty when there are none. The parse nodes report theirs; padded_batch
  // batches them as ragged values rather than padding them.
  virtual std::vector<bool> row_splits_components() const { return {}; }
  // Whether this node's iterator runs its input node's work itself rather than through the
  // input's iterator (a chain of image operations is one map): the per-stage statistics then
  // count the two as one stage, since no iterator sits between them to wrap.
  virtual bool fuses_input() const { return false; }

  DatasetPtr ptr() const { return shared_from_this(); }

 protected:
  friend void release_inputs_iteratively(std::vector<DatasetPtr> inputs);
  // Gives up this node's inputs; called only on a node that nobody else owns, as it dies
  // (release_inputs_iteratively).
  virtual std::vector<DatasetPtr> take_inputs() { return {}; }
};

// Drops `inputs`, and the inputs of every node that only this drop owned, one node at a time
// rather than recursively: a node's destructor calls it so that freeing a long pipeline
// cannot exhaust the stack.
void release_inputs_iteratively(std::vector<DatasetPtr> inputs);

// Convenience for single-input transforms.
// Refuses (INVALID_ARGUMENT) a pipeline deeper than kMaxPipelineDepth.
class UnaryDataset : public Dataset {
 public:
  explicit UnaryDataset(DatasetPtr input);
  // Frees a chain of inputs that only this node owns one node at a time, not recursively.
  ~UnaryDataset() override;
  std::vector<DatasetPtr> inputs() const override { return {input_}; }
  const Options& options() const override { return input_->options(); }
  int64_t depth() const override { return depth_; }
  const DatasetPtr& input() const { return input_; }

 protected:
  std::vector<DatasetPtr> take_inputs() override { return {std::move(input_)}; }
  DatasetPtr input_;

 private:
  int64_t depth_;
};

}  // namespace dinput
