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
#include <functional>

#include "collective/collective.h"
#include "core/quote.h"
#include "data/epoch_counters.h"
#include "data/nodes.h"
#include "data/state.h"
#include "distribute/auto_shard.h"
#include "distribute/dist_dataset.h"
#include "distribute/graph.h"
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
    if (interleave_function(*node)) {
      // Its input must be file names (list_files, or names in memory): each unread input
      // element becomes a slice, which would be the whole rest of the data otherwise.
      bool names = true;
      for_each_node(node->inputs().at(0), [&](const Dataset& below) {
        names = names && !interleave_function(below) &&
                (!dynamic_cast<const FileSource*>(&below) ||
                 std::strcmp(below.name(), "list_files") == 0);
      });
      if (!names)
        refuse(str_cat("its '", node->name(),
                       "' reads the output of another file reader, not file names"));
      return node;
    }
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
  bool restored = false;      // whether a restore reached the file stage
};

class FenceIterator final : public Iterator {
 public:
  FenceIterator(std::unique_ptr<Iterator> input, std::shared_ptr<Fence> fence)
      : input_(std::move(input)), fence_(std::move(fence)) {}
  bool next(Element& out) override { return !fence_->closed && input_->next(out); }
  void save(StateWriter& w) const override { input_->save(w); }
  void restore(StateReader& r) override {
    input_->restore(r);
    fence_->restored = true;
  }

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

// How many prefetch sections wrap a reader's saved state.
int prefetch_layers(std::string state) {
  int layers = 0;
  for (;;) {
    StateReader r(state, 0, "elastic_file");
    if (r.bytes("a reader's operation") != "prefetch") return layers;
    StateReader again(state, 0, "elastic_file");
    StateReader section = again.section("prefetch");
    state = section.bytes("the input's state");
    ++layers;
  }
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
    // The readers of an ordered parallel interleave are prefetches of their datasets (of a
    // reader resumed this way, twice).
    for (int k = prefetch_layers(state_); k > 0; --k)
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

// What rebuilding an elastic source needs: the pipeline (seeded, before sharding), its file
// stage, what makes a sharded copy into the pipeline a worker iterates, and the global batch.
struct ElasticPlan {
  DatasetPtr seeded;
  const Dataset* stage = nullptr;
  std::function<DatasetPtr(const DatasetPtr&)> finish;
  int64_t G = 0;
  std::shared_ptr<IteratorStats> stats;
  std::shared_ptr<Cancellation> cancellation;
};

// Saved worker j's pipeline (of W0), restored from its part with the fence: what it held, in
// pieces of G rows (null when it had ended), and what its files still had. A part that an
// elastically restored worker saved is restored the same way: its held streams and its
// pipeline over its slices, with the fence above that pipeline's file stage.
struct OpenedPart {
  std::unique_ptr<Iterator> rows;
  std::vector<FileSlice> slices;
  std::vector<DatasetPtr> keep;  // the datasets the iterators read
};

OpenedPart open_part(const std::shared_ptr<const ElasticPlan>& plan, std::string_view part, int W0,
                     int j);

// A new worker's source after an elastic restore: the held elements of the saved workers it
// was dealt (each a saved part, drained in pieces of G rows), then the pipeline over its share
// of the files' rest. Its state names those parts and the pieces taken from the first, the
// slices and the pipeline's state: a restore on the same shape rebuilds them.
class ElasticSource final : public Iterator {
 public:
  struct Held {
    std::unique_ptr<Iterator> rows;
    std::string part;  // saved worker j's part of a state saved by W0 workers
    int64_t W0 = 0;
    int64_t j = 0;
    int64_t pieces = 0;  // taken
  };
  // `fence`: the pipeline over the slices is read to be dealt out again (open_part).
  ElasticSource(std::shared_ptr<const ElasticPlan> plan, std::shared_ptr<Fence> fence)
      : plan_(std::move(plan)), fence_(std::move(fence)) {}
  void set(std::vector<Held> held, std::vector<FileSlice> slices, std::vector<DatasetPtr> keep,
           bool restoring) {
    held_ = std::move(held);
    slices_ = std::move(slices);
    keep_ = std::move(keep);
    DatasetPtr stage = slices_stage(*plan_->stage, slices_);
    if (fence_) stage = std::make_shared<FenceDataset>(stage, fence_);
    main_ds_ = plan_->finish(replace_stage(plan_->seeded, plan_->stage, stage));
    IteratorContext ctx;
    ctx.stats = plan_->stats;
    ctx.cancellation = plan_->cancellation;
    ctx.epochs = std::make_shared<EpochCounters>();
    ctx.restoring = restoring;
    ctx.synchronous = fence_ != nullptr;
    main_ = main_ds_->make_iterator(ctx);
  }
  // With the fence closed: the slices the pipeline over them has not read.
  std::vector<FileSlice> rest() const {
    std::vector<FileSlice> out;
    if (!fence_->stage) raise(Code::kInternal, "elastic resume: the file stage made no iterator");
    InterleaveRest rest = interleave_rest(*fence_->stage);
    auto slice = [&](const Element& index) -> const FileSlice& {
      return slices_.at(static_cast<size_t>(*index.at(0).data_as<int64_t>()));
    };
    for (auto& [index, state] : rest.open) out.push_back({slice(index).in, std::move(state)});
    for (auto& index : rest.unread) out.push_back(slice(index));
    return out;
  }

  bool next(Element& out) override {
    while (i_ < held_.size()) {
      if (held_[i_].rows->next(out)) {
        ++held_[i_].pieces;
        return true;
      }
      held_[i_++].rows.reset();
    }
    return main_->next(out);
  }

  void save(StateWriter& w) const override {
    w.section("elastic_file", [&](StateWriter& s) {
      s.u64(held_.size() - i_);
      for (size_t k = i_; k < held_.size(); ++k) {
        s.bytes(held_[k].part);
        s.u64(static_cast<uint64_t>(held_[k].W0));
        s.u64(static_cast<uint64_t>(held_[k].j));
        s.u64(static_cast<uint64_t>(held_[k].pieces));
      }
      s.u64(slices_.size());
      for (const auto& slice : slices_) {
        s.bytes(slice.in.at(0).string(0));
        s.bytes(slice.state);
      }
      s.bytes(save_to_bytes(*main_));
    });
  }

  void restore(StateReader& r) override {
    StateReader s = r.section("elastic_file");
    const uint64_t n = s.u64_in("held streams", 0, kMaxWorkers);
    std::vector<Held> held;
    std::vector<DatasetPtr> keep;
    for (uint64_t k = 0; k < n; ++k) {
      Held h;
      h.part = s.bytes("a saved worker's part");
      h.W0 = static_cast<int64_t>(s.u64_in("the saved job's workers", 1, kMaxWorkers));
      h.j = static_cast<int64_t>(s.u64_in("a saved worker", 0, static_cast<uint64_t>(h.W0 - 1)));
      const uint64_t pieces = s.u64("pieces taken");
      OpenedPart opened = open_part(plan_, h.part, static_cast<int>(h.W0), static_cast<int>(h.j));
      if (!opened.rows) s.corrupt("a held stream of a worker whose pipeline had ended");
      Element drop;
      for (; static_cast<uint64_t>(h.pieces) < pieces; ++h.pieces)
        if (!opened.rows->next(drop)) s.corrupt("a held stream ended before the pieces taken");
      h.rows = std::move(opened.rows);
      for (auto& d : opened.keep) keep.push_back(std::move(d));
      held.push_back(std::move(h));
    }
    std::vector<FileSlice> slices(s.u64_in("file slices", 0, 1 << 24));
    for (auto& slice : slices) {
      slice.in = name_element(s.bytes("a file name"));
      slice.state = s.bytes("a reader's state");
    }
    const std::string main = s.bytes("the state of the pipeline over the slices");
    s.finish();
    set(std::move(held), std::move(slices), std::move(keep), /*restoring=*/true);
    StateReader m(main, s.offset() - main.size(), "elastic_file");
    main_->restore(m);
    m.finish();
  }

 private:
  std::shared_ptr<const ElasticPlan> plan_;
  std::shared_ptr<Fence> fence_;
  std::vector<Held> held_;
  size_t i_ = 0;
  std::vector<FileSlice> slices_;
  std::vector<DatasetPtr> keep_;  // the datasets the held streams read
  DatasetPtr main_ds_;
  std::unique_ptr<Iterator> main_;
};

// The pipeline a restored elastic worker iterates, for saving and restoring: it has the
// fingerprint of the pipeline it stands for, and its iterator is an ElasticSource.
class ElasticDataset final : public Dataset {
 public:
  ElasticDataset(DatasetPtr pipeline, std::shared_ptr<const ElasticPlan> plan,
                 std::shared_ptr<Fence> fence = nullptr)
      : pipeline_(std::move(pipeline)), plan_(std::move(plan)), fence_(std::move(fence)) {}
  const char* name() const override { return pipeline_->name(); }
  std::string arguments() const override { return pipeline_->arguments(); }
  const ElementSpec& element_spec() const override { return pipeline_->element_spec(); }
  int64_t cardinality() const override { return kUnknownCardinality; }
  std::vector<DatasetPtr> inputs() const override { return pipeline_->inputs(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> inputs) const override {
    return std::make_shared<ElasticDataset>(pipeline_->with_inputs(std::move(inputs)), plan_,
                                            fence_);
  }
  const Options& options() const override { return pipeline_->options(); }
  int64_t depth() const override { return pipeline_->depth(); }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext&) const override {
    return std::make_unique<ElasticSource>(plan_, fence_);  // to be restored
  }

 private:
  DatasetPtr pipeline_;
  std::shared_ptr<const ElasticPlan> plan_;
  std::shared_ptr<Fence> fence_;
};

OpenedPart open_part(const std::shared_ptr<const ElasticPlan>& plan, std::string_view part, int W0,
                     int j) {
  OpenedPart out;
  StateReader r(part, 0, "dist_iterator worker");
  const uint64_t opened = r.u64_in("pipelines opened", 0, 2);
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
  if (ended) return out;
  const DatasetPtr sharded = auto_shard(plan->seeded, W0, j).dataset;
  auto fence = std::make_shared<Fence>();
  const Dataset* stage = nullptr;
  DatasetPtr fenced;
  if (opened == 2) {
    // Saved by a worker that read what another job left: its source is an ElasticSource.
    fenced = std::make_shared<ElasticDataset>(plan->finish(sharded), plan, fence);
  } else {
    // Worker j's pipeline as it was, with the fence above its file stage.
    stage = find_file_stage(sharded);
    fenced = plan->finish(
        replace_stage(sharded, stage, std::make_shared<FenceDataset>(stage->ptr(), fence)));
  }
  IteratorContext ctx;
  ctx.stats = plan->stats;
  ctx.cancellation = plan->cancellation;
  ctx.synchronous = true;
  std::unique_ptr<Iterator> it;
  if (opened) {
    RestoredIterator restored = restore_state(fenced, ctx, container);
    if (!restored.iterator)
      raise(Code::kDataLoss, "the iterator state is damaged: worker ", j,
            "'s pipeline has the state of an ended one");
    it = std::move(restored.iterator);
    out.keep.push_back(restored.dataset);
  } else {
    ctx.epochs = std::make_shared<EpochCounters>();
    it = fenced->make_iterator(ctx);
    out.keep.push_back(fenced);
  }
  const auto* elastic = dynamic_cast<const ElasticSource*>(it->unwrapped());
  // Rows of G, skipping those of the batch in hand that went out before the save: reading
  // that batch again is part of the restore, so the fence is still open.
  auto rows = make_balanced_split(std::move(it), {plan->G});
  if (!position.empty()) {
    StateReader p(position, 0, "distributed split");
    rows->restore_rows(p);
    p.finish();
  }
  fence->closed = true;
  if (opened && !fence->restored) {
    // A stage above the file stage had seen its input end: it saved only that (a batch, map
    // or filter: data/state.h's save_unless_ended; a shuffle with an empty buffer), so the
    // restore never reached the file stage, which stands at its start. Its files had all been
    // read: nothing is left to deal out. (Reading the stage's position would deal every file
    // out again. A read-ahead that re-reads at least one element after its snapshot restores
    // the pipeline from before that end, which hid this.)
    out.rows = std::move(rows);
    return out;
  }
  if (elastic) {
    out.slices = elastic->rest();
  } else {
    if (!fence->stage) raise(Code::kInternal, "elastic resume: the file stage made no iterator");
    out.slices = rest_of_stage(*stage, *fence->stage);
  }
  out.rows = std::move(rows);
  return out;
}

std::shared_ptr<ElasticPlan> elastic_plan(const DistributedDataset::Plan& plan,
                                          const DistributedDataset::Plan::Seeds& seeds,
                                          std::shared_ptr<IteratorStats> stats,
                                          std::shared_ptr<Cancellation> cancellation) {
  if (plan.deferred) throw *plan.deferred;
  if (!plan.seeded || plan.pipelines.size() != 1)
    refuse("it was distributed with distribute_datasets_from_function");
  auto out = std::make_shared<ElasticPlan>();
  out->G = plan.global_batch_size;
  if (out->G <= 0) refuse("its global batch size is unknown (no batch found)");
  out->seeded = plan.seeded(seeds);
  out->stage = find_file_stage(out->seeded);
  out->finish = plan.finish;
  out->stats = std::move(stats);
  out->cancellation = std::move(cancellation);
  return out;
}

}  // namespace

void DistributedIterator::restore_elastic_file(const std::vector<std::string>& parts,
                                               const DistributedDataset::Plan::Seeds& seeds) {
  auto plan = elastic_plan(dataset_->plan(), seeds, stats_, cancellation_);
  const Strategy& strategy = dataset_->strategy();
  const auto W = static_cast<size_t>(strategy.num_workers());
  const auto me = static_cast<size_t>(strategy.worker_index());
  const auto W0 = static_cast<int>(parts.size());
  std::vector<FileSlice> slices;  // every saved worker's, in worker order
  std::vector<ElasticSource::Held> held;
  std::vector<DatasetPtr> keep;
  for (int j = 0; j < W0; ++j) {
    OpenedPart opened = open_part(plan, parts[static_cast<size_t>(j)], W0, j);
    for (auto& slice : opened.slices) slices.push_back(std::move(slice));
    if (opened.rows && static_cast<size_t>(j) % W == me) {
      held.push_back({std::move(opened.rows), parts[static_cast<size_t>(j)], W0, j, 0});
      for (auto& d : opened.keep) keep.push_back(std::move(d));
    }
  }
  std::vector<FileSlice> mine;
  for (size_t s = me; s < slices.size(); s += W) mine.push_back(std::move(slices[s]));
  auto source = std::make_unique<ElasticSource>(plan, nullptr);
  source->set(std::move(held), std::move(mine), std::move(keep), /*restoring=*/false);
  pipelines_[0] = std::make_shared<ElasticDataset>(pipelines_[0], plan);
  effective_[0] = std::make_shared<ElasticDataset>(effective_[0], plan);
  elastic_ = true;
  finish_elastic(std::move(source));
}

void DistributedIterator::finish_elastic(std::unique_ptr<Iterator> source) {
  const int64_t G = dataset_->plan().global_batch_size;
  source_done_.assign(1, false);
  sources_.push_back(split(std::move(source)));
  if (!splits_.back()) {
    // One replica: pieces of G rows across the held streams' partial batches.
    auto rows = make_balanced_split(std::move(sources_.back()), {G});
    splits_.back() = rows.get();
    sources_.back() = std::move(rows);
  }
  sources_open_ = true;
}

DatasetPtr DistributedIterator::elastic_pipeline(const DatasetPtr& pipeline,
                                                 const DistributedDataset::Plan::Seeds& seeds) {
  return std::make_shared<ElasticDataset>(
      pipeline, elastic_plan(dataset_->plan(), seeds, stats_, cancellation_));
}

}  // namespace dinput
