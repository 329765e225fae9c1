// Elastic resume under FILE sharding (docs/checkpoint.md, "Elastic resume"): a state saved by
// W workers restored on W' workers (or other replicas per worker). Each saved worker's part
// becomes two things:
//
// - what it held: the elements its pipeline had read from its files but not delivered
//   (a shuffle's buffer, the rest of the batch its splitter was cutting). The pipeline is
//   restored with a fence right above its file stage and no thread reading ahead; once the
//   restore has put it where the saved one stood, the fence closes, so that the pipeline
//   delivers exactly those elements and ends. New worker w drains the held elements of the
//   saved workers j with j mod W' == w.
// - what its files still had: the file stage's open readers (an input element, a file name,
//   and the reader's saved state: its file, record and byte offset) and the names it had not
//   read. Every new worker computes the list of all saved workers and takes the slices s with
//   s mod W' == w, which a copy of the file stage reads (the open ones from their saved
//   positions) under the nodes that were above it.
//
// So each element of the epoch is delivered once over all workers: before the save, or
// after it by exactly one new worker. The order is no uninterrupted run's.
#include <atomic>
#include <cstring>

#include "core/quote.h"
#include "data/epoch_counters.h"
#include "data/nodes.h"
#include "data/state.h"
#include "distribute/auto_shard.h"
#include "distribute/dist_dataset.h"
#include "distribute/split.h"

namespace dinput {

namespace {

// The nodes that may stand between the batches and the file stage: each reads one input and,
// at the end of that input, delivers what it holds and ends (the fence relies on it).
constexpr const char* kAllowedAbove[] = {"prefetch",
                                         "batch",
                                         "padded_batch",
                                         "shuffle",
                                         "map",
                                         "filter",
                                         "with_options",
                                         "parse_example",
                                         "ignore_errors",
                                         "parse_single_example",
                                         "parse_sequence_example"};

[[noreturn]] void refuse(const std::string& why) {
  raise(Code::kFailedPrecondition,
        "the iterator state was saved under FILE sharding by another number of workers or "
        "replicas, and this pipeline's rest cannot be dealt out again: ",
        why, " (docs/checkpoint.md, \"Elastic resume\")");
}

// The node that reads the files: an interleave (or flat_map) of file readers, or a source
// that reads a list of files itself. The path to it from the output must hold only nodes of
// kAllowedAbove; others are refused, naming the operation.
const Dataset* find_file_stage(const DatasetPtr& root) {
  const Dataset* node = root.get();
  for (;;) {
    if (interleave_function(*node)) return node;
    if (dynamic_cast<const FileSource*>(node)) {
      if (std::strcmp(node->name(), "list_files") == 0)
        refuse("its file names (list_files) are not read by an interleave or flat_map");
      return node;
    }
    bool allowed = false;
    for (const char* name : kAllowedAbove)
      allowed = allowed || std::strcmp(node->name(), name) == 0;
    if (!allowed || node->inputs().size() != 1)
      refuse(str_cat("operation '", node->name(),
                     "' stands between its batches and the files it reads; only ",
                     "map, filter, shuffle, batch, padded_batch, prefetch, the Example parses, "
                     "ignore_errors and with_options may"));
    node = node->inputs()[0].get();
  }
}

// `node` with `stage` (on its chain of single inputs) replaced by `by`.
DatasetPtr replace_stage(const DatasetPtr& node, const Dataset* stage, const DatasetPtr& by) {
  if (node.get() == stage) return by;
  return node->with_inputs({replace_stage(node->inputs().at(0), stage, by)});
}

// ---- The fence ----

struct Fence {
  std::atomic<bool> closed{false};
  Iterator* stage = nullptr;  // the file stage's iterator, when made
};

class FenceIterator final : public Iterator {
 public:
  FenceIterator(std::unique_ptr<Iterator> input, std::shared_ptr<Fence> fence)
      : input_(std::move(input)), fence_(std::move(fence)) {}
  bool next(Element& out) override { return !fence_->closed && input_->next(out); }
  void save(StateWriter& w) const override { input_->save(w); }
  void restore(StateReader& r) override { input_->restore(r); }

 private:
  std::unique_ptr<Iterator> input_;
  std::shared_ptr<Fence> fence_;
};

// The file stage under a fence. It is the stage for every other purpose (name, arguments,
// inputs), so that the pipeline keeps its fingerprint and restores the saved state.
class FenceDataset final : public Dataset {
 public:
  FenceDataset(DatasetPtr stage, std::shared_ptr<Fence> fence)
      : stage_(std::move(stage)), fence_(std::move(fence)) {}
  const char* name() const override { return stage_->name(); }
  std::string arguments() const override { return stage_->arguments(); }
  const ElementSpec& element_spec() const override { return stage_->element_spec(); }
  int64_t cardinality() const override { return stage_->cardinality(); }
  std::vector<DatasetPtr> inputs() const override { return stage_->inputs(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override {
    return std::make_shared<FenceDataset>(stage_->with_inputs(std::move(inputs)), fence_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    auto it = stage_->make_iterator(ctx);
    fence_->stage = it.get();
    return std::make_unique<FenceIterator>(std::move(it), fence_);
  }
  const Options& options() const override { return stage_->options(); }
  int64_t depth() const override { return stage_->depth(); }
  bool has_random_seed() const override { return stage_->has_random_seed(); }
  DatasetPtr with_seed(uint64_t seed) const override {
    return std::make_shared<FenceDataset>(stage_->with_seed(seed), fence_);
  }
  uint64_t seed() const override { return stage_->seed(); }
  EpochCounter epoch_counter() const override { return stage_->epoch_counter(); }
  const DatasetPtr& stage() const { return stage_; }

 private:
  DatasetPtr stage_;
  std::shared_ptr<Fence> fence_;
};

// ---- The rest of the files ----

// One unit of what the files still have: an input element of the file stage (a file name)
// and, for a file open at the save, its reader's saved state.
struct FileSlice {
  Element in;
  std::string state;
};

Element name_element(const std::string& name) {
  Tensor t = Tensor::allocate(DType::kBytes, Shape());
  t.set_string(0, name);
  return {std::move(t)};
}

// The slices that the file stage `it` (an iterator of `stage`) has not read, in its order.
std::vector<FileSlice> rest_of_stage(const Dataset& stage, Iterator& it) {
  std::vector<FileSlice> out;
  if (interleave_function(stage)) {
    InterleaveRest rest = interleave_rest(it);
    for (auto& [in, state] : rest.open) out.push_back({std::move(in), std::move(state)});
    for (auto& in : rest.unread) out.push_back({std::move(in), std::string()});
    return out;
  }
  // A source of several files: its state is (file index, record, byte offset, file size)
  // (io/record_iterator.cc); the open file's becomes the state of a reader of that file alone.
  const auto& files = dynamic_cast<const FileSource&>(stage).files();
  const std::string saved = save_to_bytes(it);
  StateReader r(saved, 0, stage.name());
  StateReader s = r.section(stage.name());
  const auto file = static_cast<size_t>(s.u64_in("file index", 0, files.size()));
  const int64_t record = s.i64_in("record index in the file", 0, INT64_MAX);
  const uint64_t offset = s.u64("byte offset");
  const uint64_t size = s.u64("file size");
  s.finish();
  r.finish();
  for (size_t f = file; f < files.size(); ++f) {
    StateWriter state;
    if (f == file && record > 0)
      state.section(stage.name(), [&](StateWriter& x) {
        x.u64(0);
        x.i64(record);
        x.u64(offset);
        x.u64(size);
      });
    out.push_back({name_element(files[f]), state.take()});
  }
  return out;
}

// A reader made by the file stage's function that begins where a saved reader stood.
class ResumedReader final : public Dataset {
 public:
  ResumedReader(DatasetPtr reader, std::string state)
      : reader_(std::move(reader)), state_(std::move(state)) {}
  const char* name() const override { return reader_->name(); }
  std::string arguments() const override { return reader_->arguments(); }
  const ElementSpec& element_spec() const override { return reader_->element_spec(); }
  int64_t cardinality() const override { return reader_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }
  const Options& options() const override { return reader_->options(); }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    IteratorContext inner = ctx;
    inner.restoring = true;
    auto it = reader_->make_iterator(inner);
    // The readers of an ordered parallel interleave are prefetches of their datasets.
    StateReader peek(state_, 0, reader_->name());
    if (peek.bytes("a reader's operation") == "prefetch")
      it = make_prefetch_iterator(std::move(it), 2, ctx.cancellation, /*start=*/false);
    if (!ctx.restoring) {  // else the interleave restores it from a newer state
      StateReader r(state_, 0, reader_->name());
      it->restore(r);
      r.finish();
    }
    return it;
  }

 private:
  DatasetPtr reader_;
  std::string state_;
};

// A copy of `stage` that reads `slices`: the same interleave over them, or one file at a time
// for a source of several files.
DatasetPtr slices_stage(const Dataset& stage, std::vector<FileSlice> slices) {
  auto shared = std::make_shared<const std::vector<FileSlice>>(std::move(slices));
  std::shared_ptr<const InterleaveFn> reader = interleave_function(stage);
  if (!reader) {
    DatasetPtr source = stage.ptr();
    reader = std::make_shared<const InterleaveFn>([source](const Element& e) {
      return dynamic_cast<const FileSource&>(*source).with_files({std::string(e.at(0).string(0))});
    });
  }
  auto fn = std::make_shared<const InterleaveFn>([shared, reader](const Element& e) -> DatasetPtr {
    const FileSlice& slice = shared->at(static_cast<size_t>(*e.at(0).data_as<int64_t>()));
    DatasetPtr ds = (*reader)(slice.in);
    if (!ds || slice.state.empty()) return ds;
    return std::make_shared<ResumedReader>(std::move(ds), slice.state);
  });
  DatasetPtr indices = make_range(0, static_cast<int64_t>(shared->size()), 1);
  if (interleave_function(stage)) return interleave_like(stage, std::move(indices), std::move(fn));
  return make_interleave(std::move(indices), std::move(fn), stage.element_spec(), 1, 1, 1,
                         std::nullopt);
}

// The held elements' streams, then the new pipeline's. A state saved after an elastic restore
// would have to name the saved job's parts it drains: not built (UNIMPLEMENTED).
class ConcatIterator final : public Iterator {
 public:
  ConcatIterator(std::vector<std::unique_ptr<Iterator>> parts, std::vector<DatasetPtr> keep)
      : parts_(std::move(parts)), keep_(std::move(keep)) {}
  bool next(Element& out) override {
    while (i_ < parts_.size()) {
      if (parts_[i_]->next(out)) return true;
      parts_[i_++].reset();
    }
    return false;
  }
  void save(StateWriter&) const override {
    state_unsupported("distributed iterator",
                      "it was restored on another number of workers or replicas under FILE "
                      "sharding; it saves again once restored on the same shape as its state's");
  }

 private:
  std::vector<std::unique_ptr<Iterator>> parts_;
  std::vector<DatasetPtr> keep_;  // the datasets the iterators read
  size_t i_ = 0;
};

}  // namespace

void DistributedIterator::restore_elastic_file(const std::vector<std::string>& parts,
                                               const DistributedDataset::Plan::Seeds& seeds) {
  const auto& plan = dataset_->plan();
  if (plan.deferred) throw *plan.deferred;
  const Strategy& strategy = dataset_->strategy();
  const auto W = static_cast<size_t>(strategy.num_workers());
  const auto me = static_cast<size_t>(strategy.worker_index());
  if (!plan.seeded || plan.pipelines.size() != 1)
    refuse("it was distributed with distribute_datasets_from_function");
  const int64_t G = plan.global_batch_size;
  if (G <= 0) refuse("its global batch size is unknown (no batch found)");
  const DatasetPtr seeded = plan.seeded(seeds);
  const Dataset* stage = find_file_stage(seeded);

  std::vector<FileSlice> slices;                // every saved worker's, in worker order
  std::vector<std::unique_ptr<Iterator>> held;  // this worker's share of the held elements
  std::vector<DatasetPtr> keep;
  const auto W0 = static_cast<int>(parts.size());
  for (int j = 0; j < W0; ++j) {
    StateReader r(parts[static_cast<size_t>(j)], 0, "dist_iterator worker");
    const bool opened = r.flag("pipelines opened");
    bool ended = false;
    std::string container, position;
    if (opened) {
      r.u64_in("the number of pipelines", 1, 1);
      ended = r.flag("pipeline ended");
      if (!ended) {
        container = r.bytes("a pipeline's state");
        position = r.bytes("a splitter's position");
      }
    }
    r.finish();
    if (ended) continue;
    // Worker j's pipeline as it was, with the fence above its file stage.
    const DatasetPtr sharded = auto_shard(seeded, W0, j).dataset;
    const Dataset* its_stage = find_file_stage(sharded);
    auto fence = std::make_shared<Fence>();
    const DatasetPtr fenced = plan.finish(
        replace_stage(sharded, its_stage, std::make_shared<FenceDataset>(its_stage->ptr(), fence)));
    IteratorContext ctx;
    ctx.stats = stats_;
    ctx.cancellation = cancellation_;
    ctx.synchronous = true;
    std::unique_ptr<Iterator> it;
    if (opened) {
      RestoredIterator restored = restore_state(fenced, ctx, container);
      if (!restored.iterator)
        raise(Code::kDataLoss, "the iterator state is damaged: worker ", j,
              "'s pipeline has the state of an ended one");
      it = std::move(restored.iterator);
      keep.push_back(restored.dataset);
    } else {
      ctx.epochs = std::make_shared<EpochCounters>();
      it = fenced->make_iterator(ctx);
      keep.push_back(fenced);
    }
    // Rows of G, skipping those of the batch in hand that went out before the save: reading
    // that batch again is part of the restore, so the fence is still open.
    auto rows = make_balanced_split(std::move(it), {G});
    if (!position.empty()) {
      StateReader p(position, 0, "distributed split");
      rows->restore_rows(p);
      p.finish();
    }
    fence->closed = true;
    if (!fence->stage) raise(Code::kInternal, "elastic resume: the file stage made no iterator");
    for (auto& slice : rest_of_stage(*its_stage, *fence->stage)) slices.push_back(std::move(slice));
    if (static_cast<size_t>(j) % W == me) held.push_back(std::move(rows));
  }
  std::vector<FileSlice> mine;
  for (size_t s = me; s < slices.size(); s += W) mine.push_back(std::move(slices[s]));
  const DatasetPtr rest = plan.finish(replace_stage(seeded, stage, slices_stage(*stage, mine)));
  IteratorContext ctx;
  ctx.stats = stats_;
  ctx.cancellation = cancellation_;
  ctx.epochs = std::make_shared<EpochCounters>();
  held.push_back(rest->make_iterator(ctx));
  keep.push_back(rest);
  source_done_.assign(1, false);
  sources_.push_back(split(std::make_unique<ConcatIterator>(std::move(held), std::move(keep))));
  if (!splits_.back()) {
    // One replica: pieces of G rows across the held streams' partial batches.
    auto rows = make_balanced_split(std::move(sources_.back()), {G});
    splits_.back() = rows.get();
    sources_.back() = std::move(rows);
  }
  sources_open_ = true;
}

}  // namespace dinput
