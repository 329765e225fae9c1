// The dataset nodes that graph rewrites look into (distribution detects the global batch
// size from batch nodes, resolves shard hints, and moves shuffles on file lists). The rest
// of the nodes are private to their .cc files and built through data/datasets.h.
#pragma once

#include <atomic>
#include <optional>

#include "data/datasets.h"
#include "data/padding.h"

namespace dinput {

class BatchDataset final : public UnaryDataset {
 public:
  // parallel > 1 (or kAutotune) stacks batches on a thread pool (see batching.cc).
  BatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder, int64_t parallel = 1);
  const char* name() const override { return "batch"; }
  std::string arguments() const override;
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override;
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override;
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  int64_t batch_size() const { return batch_size_; }
  bool drop_remainder() const { return drop_remainder_; }

 private:
  int64_t batch_size_;
  bool drop_remainder_;
  int64_t parallel_;
  ElementSpec spec_;
};

// padded_batch: a batch whose rows are padded to one shape (padded_batch.cc). Distribution
// detects its batch size as it does batch()'s.
class PaddedBatchDataset final : public UnaryDataset {
 public:
  PaddedBatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder, Padding padding);
  const char* name() const override { return "padded_batch"; }
  std::string arguments() const override;
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override;
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override;
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  int64_t batch_size() const { return batch_size_; }
  bool drop_remainder() const { return drop_remainder_; }
  // The padding of each output component (a ragged value's components: zeros).
  const Padding& padding() const { return out_padding_; }
  // Pads and stacks the rows of one batch, batching ragged values as ragged values.
  Element batch_rows(const std::vector<Element>& rows, const std::vector<int64_t>& index) const;

 private:
  int64_t batch_size_;
  bool drop_remainder_;
  Padding padding_;  // of each input component
  ElementSpec spec_;
  // The input's ragged values (data/ragged.h): per component, the number of row splits after
  // it when it holds a ragged value's values, -1 for those splits, 0 for the others. Empty:
  // none, every component is padded.
  std::vector<int> ragged_;
  Padding dense_padding_;  // of the padded components alone, which are:
  std::vector<size_t> dense_;
  Padding out_padding_;
};

class ShardDataset final : public UnaryDataset {
 public:
  ShardDataset(DatasetPtr input, int64_t num_shards, int64_t index);
  const char* name() const override { return "shard"; }
  std::string arguments() const override;
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override;
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override;
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;

  bool is_hint() const { return num_shards_ == kShardHint; }
  int64_t num_shards() const { return num_shards_; }
  int64_t index() const { return index_; }

 private:
  int64_t num_shards_;
  int64_t index_;
};

class ShuffleDataset final : public UnaryDataset {
 public:
  ShuffleDataset(DatasetPtr input, int64_t buffer_size, uint64_t seed, bool reshuffle,
                 bool random_seed = false);
  const char* name() const override { return "shuffle"; }
  std::string arguments() const override;
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override;
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;
  bool has_random_seed() const override { return random_seed_; }
  DatasetPtr with_seed(uint64_t seed) const override;
  uint64_t seed() const override { return seed_; }
  EpochCounter epoch_counter() const override { return reshuffle_ ? epoch_ : nullptr; }

  int64_t buffer_size() const { return buffer_size_; }

 private:
  int64_t buffer_size_;
  uint64_t seed_;
  bool reshuffle_;
  bool random_seed_;  // seed_ was drawn at random (seed < 0)
  // Each new iterator of a reshuffling dataset draws a new (seed-derived) order.
  mutable std::shared_ptr<std::atomic<uint64_t>> epoch_;
};

class OptionsDataset final : public UnaryDataset {
 public:
  OptionsDataset(DatasetPtr input, const Options& options)
      : UnaryDataset(std::move(input)), options_(options) {}
  const char* name() const override { return "with_options"; }
  std::string arguments() const override;
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override;
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override;
  const Options& options() const override { return merged_; }

 private:
  Options options_;
  Options merged_ = options_.over(input_->options());  // these fields over the upstream ones
};

// A prefetching iterator over `input` (the iterator of prefetch(capacity), which interleave's
// ordered readers use too). start: begin reading now; else at restore() or the first next().
std::unique_ptr<Iterator> make_prefetch_iterator(std::unique_ptr<Iterator> input, size_t capacity,
                                                 std::shared_ptr<Cancellation> cancellation,
                                                 bool start);

// Whether `ds` is an interleave or flat_map that reads each input element (a file name) with
// a built-in reader (make_reader_interleave): FILE auto-sharding can shard its input when no
// file source lists the files.
bool is_reader_interleave(const Dataset& ds);

// Elastic resume under FILE sharding (distribute/elastic_file.cc): what an interleave (or
// flat_map) iterator has not delivered, beyond what the nodes above it hold. `open`: each
// open reader's input element and saved state, in the order the cycle reaches them; `unread`:
// the input elements it has not read. UNIMPLEMENTED where the iterator cannot save.
struct InterleaveRest {
  std::vector<std::pair<Element, std::string>> open;
  std::vector<Element> unread;
};
InterleaveRest interleave_rest(Iterator& interleave_iterator);
// The function of an interleave or flat_map node; null for other nodes.
std::shared_ptr<const InterleaveFn> interleave_function(const Dataset& ds);
// An interleave like `interleave_node` (cycle, block, parallelism, order) over another input
// and function.
DatasetPtr interleave_like(const Dataset& interleave_node, DatasetPtr input,
                           std::shared_ptr<const InterleaveFn> fn);

// A source that reads a list of files. FILE auto-sharding rewrites its file list.
class FileSource : public Dataset {
 public:
  virtual const std::vector<std::string>& files() const = 0;
  virtual DatasetPtr with_files(std::vector<std::string> files) const = 0;
};

}  // namespace dinput
