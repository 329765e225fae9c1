#include "distribute/dist_dataset.h"

#include <cstring>

#include <nlohmann/json.hpp>

#include "core/seed.h"
#include "core/tensor_ops.h"
#include "data/background_producer.h"
#include "data/datasets.h"
#include "data/stage_stats.h"
#include "device/gpu.h"
#include "distribute/auto_shard.h"
#include "distribute/graph.h"
#include "distribute/split.h"

namespace dinput {

int64_t InputContext::per_replica_batch_size(int64_t global_batch_size) const {
  DINPUT_CHECK_ARG(global_batch_size >= 0, "global_batch_size must be >= 0, got ",
                   global_batch_size);
  if (global_batch_size % num_replicas_in_sync != 0)
    raise(Code::kInvalidArgument, "The `global_batch_size` ", global_batch_size,
          " is not divisible by `num_replicas_in_sync` ", num_replicas_in_sync);
  return global_batch_size / num_replicas_in_sync;
}

namespace {

// A GPU that is to hold data must exist; with fetch_to_device off, GPU:k is only a name.
void check_devices(const Strategy& strategy, const InputOptions& options) {
  if (!feeds_gpu(strategy, options)) return;
  for (const auto& d : strategy.devices()) {
    if (d.type != DeviceType::kGPU) continue;
    try {
      gpu::require_device(d.index);
    } catch (const Error& e) {
      raise(e.code(), e.what(), " (set fetch_to_device to false to keep values in host memory)");
    }
  }
}

// The spec of one replica's piece: the batch dimension becomes unknown wherever pieces can
// differ in size (partial batches, several workers).
ElementSpec piece_spec(const ElementSpec& spec, int num_workers, int64_t num_replicas) {
  if (num_replicas == 1) return spec;
  ElementSpec out = spec;
  for (auto& s : out) {
    if (s.shape.rank() == 0) continue;
    int64_t b = s.shape[0];
    s.shape[0] =
        (num_workers == 1 && b >= 0 && b % num_replicas == 0) ? b / num_replicas : kUnknownDim;
  }
  return out;
}

void check_batched(const ElementSpec& spec) {
  for (const auto& s : spec)
    if (s.shape.rank() == 0)
      raise(Code::kInvalidArgument,
            "Expected a dataset whose elements have rank >= 1 but found a dataset whose elements "
            "are scalars. Fix the "
            "issue by adding the `batch` transformation to the dataset.");
}

const char* split_name(DistributedDataset::Split split) {
  switch (split) {
    case DistributedDataset::Split::kEven:
      return "even";
    case DistributedDataset::Split::kBalanced:
      return "balanced";
    default:
      return "none";
  }
}

std::string describe_plan(const char* policy, const DistributedDataset::Plan& plan, int64_t G,
                          const Strategy& s) {
  nlohmann::ordered_json text = {{"policy", policy},
                                 {"split", split_name(plan.split)},
                                 {"global_batch_size", G},
                                 {"num_replicas_in_sync", s.num_replicas_in_sync()},
                                 {"num_workers", s.num_workers()},
                                 {"worker_index", s.worker_index()}};
  return text.dump();
}

// A shuffle (or list_files) given a negative seed draws a random one when it is built, so
// each worker's copy of the pipeline would shuffle in its own order, and the workers'
// shards of those orders would lose some elements and repeat others. The workers agree on
// worker 0's draw through the collective instead, and every random-seeded node gets a seed
// derived from it and from its place in the graph. Every worker must therefore reach this
// point (distribute the dataset) in the same order as the others.
// The pipeline with the random-seeded nodes given seeds derived from `agreed` and their
// place in the graph (the same graph visits its nodes in the same order on every worker).
DatasetPtr apply_agreed_seed(const DatasetPtr& dataset, uint64_t agreed) {
  uint64_t k = 0;
  return rewrite_graph(dataset, [&](const DatasetPtr& node) {
    return node->has_random_seed() ? node->with_seed(mix_seed(agreed ^ mix_seed(k++))) : node;
  });
}

bool has_random_seeds(const DatasetPtr& dataset) {
  bool random = false;
  for_each_node(dataset, [&](const Dataset& node) { random = random || node.has_random_seed(); });
  return random;
}

// A shuffle (or list_files) given a negative seed draws a random one when it is built, so
// each worker's copy of the pipeline would shuffle in its own order, and the workers'
// shards of those orders would lose some elements and repeat others. The workers agree on
// worker 0's draw through the collective instead, and every random-seeded node gets a seed
// derived from it and from its place in the graph. Every worker must therefore reach this
// point (distribute the dataset) in the same order as the others. A single worker draws its
// own: a saved state then holds one seed however many workers saved it.
std::optional<uint64_t> agree_on_random_seed(const DatasetPtr& dataset, const Strategy& strategy,
                                             const char* fn) {
  if (!has_random_seeds(dataset)) return std::nullopt;
  Collective* collective = strategy.collective();
  const uint64_t mine = seed_or_random(-1);
  if (!collective || strategy.num_workers() == 1) return mine;
  const int w = strategy.worker_index();
  std::vector<std::string> all;
  try {
    all = collective->all_gather(w, collective->open_agreement_channel(w),
                                 std::string(reinterpret_cast<const char*>(&mine), sizeof mine));
  } catch (const Error& e) {
    raise(
        e.code(), fn,
        ": the dataset has a shuffle with a random seed (seed < 0), and the workers must agree on "
        "one before sharding, so every worker must call ",
        fn, " for it (in the same order): ", e.what());
  }
  uint64_t agreed;
  if (all.at(0).size() != sizeof agreed)
    raise(Code::kInternal, fn, ": malformed seed from worker 0");
  std::memcpy(&agreed, all[0].data(), sizeof agreed);
  return agreed;
}

// Whether making an element of `dataset` can only run library code: its nodes are all of kinds
// known to call no user function (map, filter, generators and interleave do). Unknown kinds
// count as user code.
bool runs_only_library_code(const DatasetPtr& dataset) {
  static const char* const kLibraryOnly[] = {"range",
                                             "from_tensors",
                                             "from_tensor_slices",
                                             "batch",
                                             "rebatch",
                                             "unbatch",
                                             "padded_batch",
                                             "bucket_by_sequence_length",
                                             "window",
                                             "repeat",
                                             "enumerate",
                                             "take",
                                             "skip",
                                             "shard",
                                             "shuffle",
                                             "prefetch",
                                             "with_options",
                                             "records",
                                             "fixed_length_records",
                                             "text_lines",
                                             "list_files",
                                             "parse_example",
                                             "parse_single_example",
                                             "parse_sequence_example",

                                             "zip",
                                             "concatenate",
                                             "sample_from_datasets",
                                             "choose_from_datasets",
                                             "cache",
                                             "ignore_errors"};
  bool only = true;
  for_each_node(dataset, [&](const Dataset& node) {
    bool known = false;
    for (const char* name : kLibraryOnly) known = known || std::strcmp(node.name(), name) == 0;
    only = only && known;
  });
  return only;
}

// The read-ahead of R elements (or more, small ones: data/prefetch.cc) before the split. Each
// step would otherwise cost a thread hand-off, which is most of a step when the elements are
// cheap: while they are, and the pipeline runs no user code (which a cancel could not
// interrupt on the caller's thread), the adaptive read-ahead makes them on the caller's
// thread and starts its thread only for elements that cost more to make than the hand-off.
DatasetPtr read_ahead(const DatasetPtr& dataset, int64_t R) {
  return make_read_ahead(dataset, R, runs_only_library_code(dataset));
}

}  // namespace

DistributedDataset::DistributedDataset(std::shared_ptr<const Strategy> strategy,
                                       InputOptions options, Plan plan)
    : strategy_(std::move(strategy)), options_(options), plan_(std::move(plan)) {
  for (size_t i = 0; i < plan_.pipelines.size(); ++i)
    epochs_.push_back(std::make_shared<EpochCounters>());
}

bool feeds_gpu(const Strategy& strategy, const InputOptions& options) {
  if (!options.fetch_to_device && !options.place_dataset_on_device) return false;
  for (const auto& d : strategy.devices())
    if (d.type == DeviceType::kGPU) return true;
  return false;
}

// The per-replica buffer exists to overlap copies to devices with the consumer's work. CPU
// replicas receive views of host batches, with nothing to copy: a buffer thread there would
// cost a thread hand-off per step and overlap nothing the prefetch does not already overlap.
bool uses_step_buffer(const Strategy& strategy, const InputOptions& options) {
  return options.per_replica_buffer_size > 0 && feeds_gpu(strategy, options);
}

DistributedDatasetPtr distribute_dataset(std::shared_ptr<const Strategy> strategy,
                                         const DatasetPtr& given, const InputOptions& options) {
  DINPUT_CHECK_ARG(given != nullptr, "distribute_dataset: no dataset given");
  validate(options, InputApi::kDistributeDataset);
  check_devices(*strategy, options);
  const std::optional<uint64_t> agreed =
      agree_on_random_seed(given, *strategy, "distribute_dataset");
  const DatasetPtr dataset = agreed ? apply_agreed_seed(given, *agreed) : given;
  const int W = strategy->num_workers(), w = strategy->worker_index(),
            R = strategy->num_local_replicas();
  const int64_t N = strategy->num_replicas_in_sync();
  if (N > 1) check_batched(dataset->element_spec());

  ShardPlan shard = auto_shard(dataset, W, w);
  DistributedDataset::Plan plan;
  plan.deferred = shard.deferred;
  plan.piece_spec = piece_spec(shard.dataset->element_spec(), W, N);
  const int64_t G = detect_global_batch_size(shard.dataset);
  if (N == 1) {
    plan.split = DistributedDataset::Split::kNone;
  } else if (shard.applied == AutoShardPolicy::kData || G < 0) {
    plan.split = DistributedDataset::Split::kEven;
    plan.even_pieces = N;
    if (shard.applied == AutoShardPolicy::kData) {
      for (int r = 0; r < R; ++r) plan.even_keep.push_back(w + static_cast<int64_t>(r) * W);
    } else {
      for (int64_t i = 0; i < N; ++i) plan.even_keep.push_back(i);
    }
  } else {
    plan.split = DistributedDataset::Split::kBalanced;
    plan.balanced_sizes = balanced_sizes(G, W, R, w);
    plan.balanced_padding = detect_batch_padding(shard.dataset);
  }
  // R elements (or more) are read ahead before splitting so that every replica's next piece
  // is ready.
  // When the iterator's step producer runs on its own thread (a per-replica buffer for GPU
  // replicas) it already reads ahead; a second thread would only add a hand-off per batch.
  const bool buffered = uses_step_buffer(*strategy, options);
  plan.pipelines.push_back(buffered ? shard.dataset : read_ahead(shard.dataset, R));
  plan.policy = policy_name(shard.applied);
  plan.global_batch_size = G;
  plan.description = describe_plan(policy_name(shard.applied), plan, G, *strategy);
  plan.agreed_seeds = {agreed};
  plan.reseed = [given, W, w, R, buffered](const DistributedDataset::Plan::Seeds& seeds) {
    const DatasetPtr seeded = seeds.at(0) ? apply_agreed_seed(given, *seeds[0]) : given;
    DatasetPtr sharded = auto_shard(seeded, W, w).dataset;
    return std::vector<DatasetPtr>{buffered ? sharded : read_ahead(sharded, R)};
  };
  plan.seeded = [given](const DistributedDataset::Plan::Seeds& seeds) {
    return seeds.at(0) ? apply_agreed_seed(given, *seeds[0]) : given;
  };
  plan.finish = [R, buffered](const DatasetPtr& sharded) {
    return buffered ? sharded : read_ahead(sharded, R);
  };
  return std::make_shared<const DistributedDataset>(std::move(strategy), options, std::move(plan));
}

DistributedDatasetPtr distribute_datasets_from_function(std::shared_ptr<const Strategy> strategy,
                                                        const DatasetFn& dataset_fn,
                                                        const InputOptions& options) {
  validate(options, InputApi::kFromFunction);
  check_devices(*strategy, options);
  const int W = strategy->num_workers(), R = strategy->num_local_replicas();
  const int N = strategy->num_replicas_in_sync();
  DistributedDataset::Plan plan;
  std::vector<int> replica_of;  // PER_REPLICA: the replica each pipeline feeds
  std::vector<DatasetPtr> given;
  auto call = [&](const InputContext& ctx) {
    DatasetPtr ds = dataset_fn(ctx);
    if (!ds)
      raise(Code::kInvalidArgument, "dataset_fn returned no dataset for input pipeline ",
            ctx.input_pipeline_id);
    std::optional<uint64_t> agreed =
        agree_on_random_seed(ds, *strategy, "distribute_datasets_from_function");
    plan.agreed_seeds.push_back(agreed);
    given.push_back(ds);
    plan.pipelines.push_back(agreed ? apply_agreed_seed(ds, *agreed) : ds);
    replica_of.push_back(ctx.input_pipeline_id);
  };
  if (options.replication_mode == ReplicationMode::kPerWorker) {
    call(InputContext{W, strategy->worker_index(), N});
  } else {
    for (int r = 0; r < R; ++r) call(InputContext{N, strategy->replica_id(r), N});
  }
  // The replicas' pieces are one per-replica value: their dtypes and ranks must agree (the
  // sizes of dimensions may differ and become unknown).
  const ElementSpec& first = plan.pipelines[0]->element_spec();
  ElementSpec spec = first;
  for (size_t i = 1; i < plan.pipelines.size(); ++i) {
    const ElementSpec& other = plan.pipelines[i]->element_spec();
    bool same = other.size() == first.size();
    for (size_t c = 0; same && c < first.size(); ++c)
      same = other[c].dtype == first[c].dtype && other[c].shape.rank() == first[c].shape.rank();
    if (!same)
      raise(Code::kInvalidArgument,
            "distribute_datasets_from_function: dataset_fn returned elements ", to_string(other),
            " for replica ", replica_of[i], " but ", to_string(first), " for replica ",
            replica_of[0],
            "; every replica's dataset must have the same number of components, dtypes and ranks");
    spec = merge_specs(spec, other);
  }
  if (N > 1)
    for (auto& s : spec)
      if (s.shape.rank() > 0) s.shape[0] = kUnknownDim;
  plan.piece_spec = spec;
  plan.split = DistributedDataset::Split::kNone;
  plan.policy = "NONE";
  plan.description = describe_plan("NONE", plan, -1, *strategy);
  plan.reseed = [given](const DistributedDataset::Plan::Seeds& seeds) {
    std::vector<DatasetPtr> out;
    for (size_t i = 0; i < given.size(); ++i)
      out.push_back(seeds.at(i) ? apply_agreed_seed(given[i], *seeds[i]) : given[i]);
    return out;
  };
  return std::make_shared<const DistributedDataset>(std::move(strategy), options, std::move(plan));
}

// ---- iterator ----

struct DistributedIterator::Buffer {
  Buffer(DistributedIterator* it, size_t capacity, std::shared_ptr<Cancellation> cancellation)
      : producer(
            [it, bound = false](LocalStep& step) mutable {
              // The producer thread works for the first GPU replica from its first step on.
              if (!bound && it->first_gpu_ >= 0) gpu::bind_thread(it->first_gpu_);
              bound = true;
              return it->produce_step(step);
            },
            capacity, std::move(cancellation)) {}
  BackgroundProducer<LocalStep> producer;
};

DistributedIterator::DistributedIterator(DistributedDatasetPtr dataset)
    : dataset_(std::move(dataset)) {
  pipelines_ = effective_ = dataset_->plan().pipelines;
  open_channels();
  start();
}

DistributedIterator::DistributedIterator(DistributedDatasetPtr dataset, std::string_view state)
    : dataset_(std::move(dataset)) {
  restore(state);  // dist_state.cc
  start();
}

void DistributedIterator::open_channels() {
  const Strategy& s = dataset_->strategy();
  if (!s.collective()) return;
  channel_ = s.collective()->open_channel(s.worker_index());
  state_channel_ = s.collective()->open_channel(s.worker_index());
}

void DistributedIterator::start() {
  // A second start would replace the step buffer while its thread may already have taken
  // steps from the sources: those steps would be lost (a restore once did this).
  if (started_) raise(Code::kInternal, "a distributed iterator was started twice");
  started_ = true;
  if (!pipelines_.empty()) {
    const Options& o = pipelines_[0]->options();
    const int64_t trace = o.trace_events.value_or(0);
    if (o.statistics.value_or(kStatisticsByDefault) || trace > 0)
      step_stats_ = std::make_shared<PipelineStats>(stats_, static_cast<size_t>(trace));
  }
  const Strategy& s = dataset_->strategy();
  feeds_gpu_ = feeds_gpu(s, dataset_->options());
  if (feeds_gpu_) {
    std::vector<int> gpus;
    for (const auto& d : s.devices())
      if (d.type == DeviceType::kGPU) gpus.push_back(d.index);
    first_gpu_ = gpus.front();
    device_use_ = std::make_unique<gpu::DeviceUse>(std::move(gpus));
  }
  if (!s.collective() || s.num_workers() == 1) exchange_ = Exchange::kNone;
  infinite_ = true;
  for (const auto& p : pipelines_)
    infinite_ = infinite_ && p->cardinality() == kInfiniteCardinality;
  // Steps are produced ahead on one background thread: per_replica_buffer_size steps ready
  // for the consumer, plus the one being split (which stands in for the R elements
  // distribute_dataset prefetches before splitting).
  if (uses_step_buffer(s, dataset_->options()) && !ended_) {
    buffered_ = true;
    try {
      last_part_ = save_part();  // the position before the first step
    } catch (...) {
      last_no_part_ = std::current_exception();
    }
    buffer_ = std::make_unique<Buffer>(
        this, static_cast<size_t>(dataset_->options().per_replica_buffer_size) + 1, cancellation_);
  }
}

DistributedIterator::~DistributedIterator() { release(); }

void DistributedIterator::release() {
  buffer_.reset();  // first: its thread reads the sources
  sources_.clear();
}

std::unique_ptr<Iterator> DistributedIterator::split(std::unique_ptr<Iterator> it) {
  const auto& plan = dataset_->plan();
  std::unique_ptr<SplitIterator> out;
  switch (plan.split) {
    case DistributedDataset::Split::kNone:
      splits_.push_back(nullptr);
      return it;
    case DistributedDataset::Split::kEven: {
      // A step ends inside a batch when a batch has more pieces to keep than a step takes;
      // the splitter then keeps its input's state from before each batch for a save.
      const size_t R = static_cast<size_t>(dataset_->strategy().num_local_replicas());
      // When one source's batch makes exactly one step, the step's pieces are lent views of
      // its last one: a step goes out whole (next()), and the C API keeps it whole in one
      // per-replica value, whose tensors are copied when taken out. Pieces bound for GPUs are
      // replaced by their copies, so they gain nothing.
      const bool lend = plan.even_keep.size() == R && pipelines_.size() == 1 && !feeds_gpu_;
      out = make_even_split(std::move(it), plan.even_pieces, plan.even_keep,
                            plan.even_keep.size() > R, lend);
      break;
    }
    case DistributedDataset::Split::kBalanced:
      out = make_balanced_split(std::move(it), plan.balanced_sizes, plan.balanced_padding);
      break;
  }
  splits_.push_back(out.get());
  return out;
}

void DistributedIterator::open_sources() {
  const auto& plan = dataset_->plan();
  if (plan.deferred) throw *plan.deferred;
  for (size_t i = 0; i < pipelines_.size(); ++i) {
    IteratorContext ctx;
    ctx.stats = stats_;
    ctx.epochs = dataset_->epochs(i);
    ctx.cancellation = cancellation_;
    sources_.push_back(split(make_pipeline_iterator(pipelines_[i], ctx)));
    keep_pipeline_stats(ctx.pipeline_stats);
  }
  source_done_.assign(sources_.size(), false);
  sources_open_ = true;
}

int64_t DistributedIterator::produce_pieces(std::vector<Element>& pieces) {
  // Batches bound for GPUs are allocated page-locked, so their copies need no staging.
  std::optional<ScopedHostAllocator> pinned;
  if (feeds_gpu_) pinned.emplace(gpu::pinned_host_allocator());
  std::optional<gpu::DeviceGuard> on_gpu;  // a no-op on the producer thread, bound already
  if (first_gpu_ >= 0) on_gpu.emplace(first_gpu_);
  if (!sources_open_) open_sources();
  const size_t R = static_cast<size_t>(dataset_->strategy().num_local_replicas());
  // Refilled, not replaced: the pieces are cut into the vectors of an earlier step (the C
  // API's pooled per-replica values). A replica without data is left an empty piece.
  pieces.resize(R);
  size_t count = 0;
  if (sources_.size() == 1) {
    // PER_WORKER: the replicas take consecutive pieces of the worker's one source.
    if (!source_done_[0]) {
      count = sources_[0]->next_many(pieces.data(), R);
      if (count < R) source_done_[0] = true;
    } else {
      for (Element& piece : pieces) piece.clear();
    }
  } else {
    for (Element& piece : pieces) piece.clear();
    for (size_t r = 0; r < R; ++r) {
      if (source_done_[r]) continue;
      if (sources_[r]->next(pieces[r]))
        ++count;
      else
        source_done_[r] = true;
    }
  }
  if (feeds_gpu_)
    for (size_t r = 0; r < R; ++r) place_on_device(pieces[r], static_cast<int>(r));
  return static_cast<int64_t>(count);
}

bool DistributedIterator::produce_step(LocalStep& step) {
  step.count = produce_pieces(step.pieces);
  if (buffered_) {
    // The consumer's position once it takes this step, saved here while the sources stand
    // there (the producer reads on); a failure is raised only by a save at this step.
    try {
      step.part = save_part();
    } catch (...) {
      step.no_part = std::current_exception();
    }
  }
  return step.count > 0;
}

void DistributedIterator::place_on_device(Element& piece, int replica) const {
  const InputOptions& o = dataset_->options();
  const Device& device = dataset_->strategy().devices()[static_cast<size_t>(replica)];
  if (device.type != DeviceType::kGPU || !(o.fetch_to_device || o.place_dataset_on_device)) return;
  // Asynchronous: the copy overlaps the consumer's work; the tensors carry a ready event.
  for (auto& t : piece) t = gpu::copy_to_device(t, device.index);
}

int64_t DistributedIterator::fetch_pieces(std::vector<Element>& pieces) {
  if (!buffer_) return produce_pieces(pieces);
  // The step buffer's thread made the step; the part saved with it is kept aside until the
  // step is agreed on and delivered.
  LocalStep step;
  step.pieces = std::move(pieces);
  const bool got = buffer_->producer.next(step);
  pieces = std::move(step.pieces);
  next_part_ = std::move(step.part);
  next_no_part_ = step.no_part;
  return got ? step.count : 0;
}

DistributedIterator::Agreement DistributedIterator::agree(int64_t local_count,
                                                          int32_t short_replica,
                                                          const std::optional<Error>& local_error) {
  const Strategy& s = dataset_->strategy();
  Collective* collective = s.collective();
  if (exchange_ == Exchange::kNone) {
    if (local_error) {
      // The others learn of it by abort (with one worker, there are none).
      if (collective && s.num_workers() > 1) collective->abort_channel(channel_, *local_error);
      throw *local_error;
    }
    // Another worker's error or cancel, or a lost connection, stops this worker too.
    if (collective && s.num_workers() > 1) collective->raise_if_failed(channel_);
    return Agreement{local_count, short_replica};
  }
  // Payload: count (8 bytes), status code (4), a replica without data or -1 (4), whether this
  // worker's pipelines are infinite (4, first step only), message.
  constexpr size_t kHeader = 20;
  std::string payload(kHeader, '\0');
  int32_t code = local_error ? static_cast<int32_t>(local_error->code()) : 0;
  const int32_t infinite = exchange_ == Exchange::kFirstStep && infinite_ ? 1 : 0;
  std::memcpy(&payload[0], &local_count, 8);
  std::memcpy(&payload[8], &code, 4);
  std::memcpy(&payload[12], &short_replica, 4);
  std::memcpy(&payload[16], &infinite, 4);
  if (local_error) payload += local_error->what();
  std::vector<std::string> all;
  try {
    all = collective->all_gather(s.worker_index(), channel_, std::move(payload));
  } catch (const Error& e) {
    // This worker's own failure is the real cause here, even when the others gave up
    // waiting for it (it was slow to fail) or aborted: keep it, and say what they did.
    // When the others failed alike and gave up first, their error repeats this one: the
    // note would only make the workers' messages differ (a launcher shows equal ones once).
    if (local_error && e.code() == local_error->code() &&
        std::string_view(e.what()) == std::string_view(local_error->what()))
      throw *local_error;
    if (local_error)
      throw Error(local_error->code(),
                  str_cat(local_error->what(), " [the other workers did not take this step: ",
                          code_name(e.code()), ": ", e.what(), "]"));
    throw;
  }
  Agreement agreed;
  bool all_infinite = true;
  for (const auto& p : all) {
    if (p.size() < kHeader) raise(Code::kInternal, "malformed step report from a worker");
    int64_t count;
    int32_t c, short_r, inf;
    std::memcpy(&count, p.data(), 8);
    std::memcpy(&c, p.data() + 8, 4);
    std::memcpy(&short_r, p.data() + 12, 4);
    std::memcpy(&inf, p.data() + 16, 4);
    // Every worker raises the same error: that of the lowest-numbered failing worker.
    if (c != 0) throw Error(static_cast<Code>(c), p.substr(kHeader));
    agreed.total += count;
    if (agreed.short_replica < 0) agreed.short_replica = short_r;
    all_infinite = all_infinite && inf == 1;
  }
  if (exchange_ == Exchange::kFirstStep)
    exchange_ = all_infinite && agreed.total > 0 ? Exchange::kNone : Exchange::kEveryStep;
  return agreed;
}

void DistributedIterator::cancel() {
  cancellation_->cancel();
  const Strategy& s = dataset_->strategy();
  if (s.collective() && exchange_ != Exchange::kNone)
    s.collective()->abort_channel(
        channel_, Error(Code::kCancelled,
                        str_cat("worker ", s.worker_index(),
                                " cancelled its distributed iterator of this epoch, so no worker's "
                                "iterator can take another step")));
}

bool DistributedIterator::next(std::vector<Element>& out) {
  ConsumerCall timing(step_stats_.get());
  if (error_) throw *error_;
  if (ended_) return false;
  cancellation_->raise_if_cancelled();
  // `out` may bring the element vectors of an earlier step (the C API keeps them): refilled,
  // they take this step's pieces without new allocations.
  int64_t count = 0;
  std::optional<Error> local_error;
  try {
    count = fetch_pieces(out);
  } catch (const Error& e) {
    local_error = e;
  } catch (const std::bad_alloc&) {
    local_error = Error(Code::kResourceExhausted, "out of memory while producing input");
  } catch (const std::exception& e) {
    local_error =
        Error(Code::kInternal, str_cat("internal error while producing input: ", e.what()));
  }
  const Strategy& strategy = dataset_->strategy();
  const size_t R = static_cast<size_t>(strategy.num_local_replicas());
  out.resize(R);
  // A step of R replicas with data has no empty piece (but for elements of no components,
  // where an empty piece is the data).
  const bool all_filled = count == static_cast<int64_t>(R) && !local_error;
  int32_t short_replica = -1;
  for (size_t r = 0; r < R && short_replica < 0 && !all_filled; ++r)
    if (out[r].empty()) short_replica = strategy.replica_id(static_cast<int>(r));
  const ElementSpec& spec = dataset_->element_spec();
  Agreement agreed;
  try {
    agreed = agree(count, short_replica, local_error);
    // A replica without data gets a batch of zero rows; a scalar has no such empty form, and
    // inventing a value (a 0) would pass for data. Every worker fails the step alike.
    if (agreed.total > 0 && agreed.short_replica >= 0)
      for (const auto& s : spec)
        if (s.shape.rank() == 0)
          raise(Code::kFailedPrecondition, "replica ", agreed.short_replica,
                " has no more data while other replicas still have some, and its elements ",
                to_string(spec),
                " include a scalar, which has no empty batch to stand for 'no data'; batch the "
                "dataset or give "
                "every replica the same number of elements");
  } catch (const Error& e) {
    // This worker's own cancel is reported as such, whatever the collective made of it.
    error_ = cancellation_->cancelled() ? Error(Code::kCancelled, "the iterator was cancelled") : e;
    // The other pipelines stop. After a cancel their threads may be inside slow callbacks:
    // they are left to the iterator's disposal (dinput_dist_iterator_free) rather than
    // waited for here.
    if (!cancellation_->cancelled()) release();
    throw *error_;
  }
  if (agreed.total == 0) {
    ended_ = true;
    release();
    return false;
  }
  ++steps_;
  if (buffered_) {
    last_part_ = std::move(next_part_);
    last_no_part_ = std::exchange(next_no_part_, nullptr);
  }
  for (size_t r = 0; r < R && !all_filled; ++r) {
    Element& piece = out[r];
    if (!piece.empty()) continue;
    // A replica without data this step gets a dummy batch with zero rows, on its device.
    for (const auto& s : spec) piece.push_back(empty_rows(s.dtype, s.shape));
    place_on_device(piece, static_cast<int>(r));
  }
  return true;
}

}  // namespace dinput
