#include "data/stage_stats.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "data/autotune.h"
#include "data/state.h"

namespace dinput {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// Small numbers for the threads that appear in traces.
std::atomic<int32_t> g_next_thread{0};
thread_local int32_t tls_thread = -1;
int32_t thread_index() {
  if (tls_thread < 0) tls_thread = g_next_thread.fetch_add(1, kRelaxed);
  return tls_thread;
}

// The lengths of `count` strings, out of line (a scalar string does not need the loop). Four
// sums at a time and not vectorised: the lengths are every other word of the array, which the
// vectoriser gathers with more shuffles than the scalar loads and adds it replaces (12
// instructions per string against 5.5, measured with callgrind on batches of 256).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-vectorize")))
#endif
__attribute__((noinline)) int64_t
string_bytes(const ByteString* s, int64_t count) {
  int64_t a = 0, b = 0, c = 0, d = 0, i = 0;
  for (; i + 4 <= count; i += 4) {
    a += static_cast<int64_t>(s[i].size);
    b += static_cast<int64_t>(s[i + 1].size);
    c += static_cast<int64_t>(s[i + 2].size);
    d += static_cast<int64_t>(s[i + 3].size);
  }
  for (; i < count; ++i) a += static_cast<int64_t>(s[i].size);
  return a + b + c + d;
}

// Tensor::byte_size without its per-tensor calls (the shape's product, the dtype's size, one
// virtual call per string).
int64_t tensor_bytes(const Tensor& t) {
  if (!t.defined()) return 0;
  const Shape& shape = t.shape();
  const int rank = shape.rank();
  if (t.dtype() == DType::kBytes) {
    const BytesStorage* strings = t.buffer()->bytes();
    // An empty tensor (a ragged row of none, a batch of 0) may sit at the end of its storage,
    // where there is no string to point at.
    const int64_t count = rank == 0 ? 1 : shape.num_elements();
    if (!strings || count == 0) return 0;
    return string_bytes(&strings->at(t.offset()), count);
  }
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) count *= shape[i];
  return count * static_cast<int64_t>(dtype_size(t.dtype()));
}

__attribute__((noinline)) int64_t all_bytes(const Element& e) {
  int64_t n = 0;
  for (const auto& t : e) n += tensor_bytes(t);
  return n;
}

// The payload bytes of `e`. A source stage pays this on every element it hands out, most
// often one scalar string (a record, a line): that case is inline, the others out of line, so
// that the wrapper's short path stays short.
inline int64_t element_bytes(const Element& e) {
  if (e.size() == 1) {
    const Tensor& t = e[0];
    if (t.dtype() == DType::kBytes && t.rank() == 0 && t.defined())
      if (const BytesStorage* strings = t.buffer()->bytes())
        return static_cast<int64_t>(strings->at(t.offset()).size);
  }
  return all_bytes(e);
}

// kWatchSkips: the stage may skip corrupt records (StageDataset::make_iterator), and counts
// them; the others (most stages) leave that out of their short path. kInnerCounts: the inner
// iterator counts the elements and bytes it hands out (Iterator::count_output_into).
template <bool kWatchSkips, bool kInnerCounts>
class StageIterator final : public Iterator {
 public:
  // `stats` is held: the iterator may be torn down after its pipeline's handle is gone.
  // `counters` is what `stage` attached for this instance.
  StageIterator(std::unique_ptr<Iterator> inner, StageInfo& stage,
                std::shared_ptr<PipelineStats> stats, std::shared_ptr<StageCounters> counters)
      : inner_(std::move(inner)),
        buffered_(dynamic_cast<const BufferedIterator*>(inner_.get())),
        stage_(stage),
        keep_(std::move(stats)),
        stats_(*keep_),
        counters_(std::move(counters)),
        skipped_(&stats_.counters()->corrupt_records_skipped),
        sampler_(stats_.tracing(), 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(stage.id)) {}
  ~StageIterator() override { stage_.detach(counters_); }

  // The calls that are not timed (63 in 64) take the short path: one virtual call into this
  // wrapper, a few loads and stores, and the element and byte counts. When the inner
  // iterator counts those itself, the call is passed on as it is (a tail call). The timed
  // calls are out of line.
  bool next(Element& out) override {
    StageCounters& c = *counters_;
    const int64_t n = c.calls.load(kRelaxed);
    c.calls.store(n + 1, kRelaxed);
    if (__builtin_expect(n == next_timed_, 0)) {
      next_timed_ = sampler_.after(n);
      return timed_call([&] { return inner_->next(out); },
                        [&](bool got) { return got ? int64_t{1} : int64_t{0}; }, out, n == 0);
    }
    if constexpr (kInnerCounts && !kWatchSkips) return inner_->next(out);
    const int64_t corrupt_before = corrupt_seen();
    const bool got = inner_->next(out);
    counted(c, got ? 1 : 0, out, corrupt_before);
    return got;
  }

  int64_t next_batch(int64_t n, Element& out) override {
    StageCounters& c = *counters_;
    const int64_t calls = c.calls.load(kRelaxed);
    c.calls.store(calls + 1, kRelaxed);
    int64_t rows = 0;
    if (calls == next_timed_) {
      next_timed_ = sampler_.after(calls);
      timed_call([&] { return (rows = inner_->next_batch(n, out)) > 0; },
                 [&](bool) { return rows; }, out, calls == 0);
      return rows;
    }
    if constexpr (kInnerCounts && !kWatchSkips) return inner_->next_batch(n, out);
    const int64_t corrupt_before = corrupt_seen();
    rows = inner_->next_batch(n, out);
    counted(c, rows, out, corrupt_before);
    return rows;
  }

  void save(StateWriter& w) const override { inner_->save(w); }
  void restore(StateReader& r) override { inner_->restore(r); }
  // A restore's passes and reads by address are not production: forwarded, not counted.
  int64_t skip(int64_t n) override { return inner_->skip(n); }
  int64_t select(int64_t n, const std::vector<int64_t>& keep, const Take& take) override {
    return inner_->select(n, keep, take);
  }
  int64_t select_split(int64_t n, const std::vector<int64_t>& keep, const Take& take, int64_t at,
                       const std::string& state) override {
    return inner_->select_split(n, keep, take, at, state);
  }
  bool addressable() const override { return inner_->addressable(); }
  Address last_address() const override { return inner_->last_address(); }
  void prepare_reads(uint64_t bytes) noexcept override { inner_->prepare_reads(bytes); }
  void read_at(const Address& at, Element& out) override { inner_->read_at(at, out); }
  void read_at(const std::vector<Address>& at, const Take& take) override {
    inner_->read_at(at, take);
  }
  Iterator* unwrapped() override { return inner_->unwrapped(); }
  // Not forwarded: this stage counts its own output (a stage around another would otherwise
  // take the inner stage's counts away from it).
  bool count_output_into(std::atomic<int64_t>*, std::atomic<int64_t>*) override { return false; }

 private:
  // The pipeline's count of skipped corrupt records now (0 for stages that are not sources).
  int64_t corrupt_seen() const {
    if constexpr (kWatchSkips) return skipped_->load(kRelaxed);
    return 0;
  }

  // Adds `produced` elements (those in `out`) and the records skipped since `corrupt_before`.
  void counted(StageCounters& c, int64_t produced, const Element& out, int64_t corrupt_before) {
    if constexpr (kWatchSkips) {
      const int64_t skipped = skipped_->load(kRelaxed) - corrupt_before;
      if (skipped) bump(c.corrupt_records, skipped);
    }
    if constexpr (!kInnerCounts) {
      if (produced > 0) {
        bump(c.elements, produced);
        bump(c.bytes, element_bytes(out));
      }
    }
  }

  // A timed call (the first, then about one in 64, every call with a trace; its `calls`
  // already counted): runs `produce` (true: produced), counting `count(got)` elements and
  // their bytes, its time (apart for the `first` call), the trace event and the buffer's fill.
  template <typename Produce, typename Count>
  __attribute__((noinline)) bool timed_call(Produce&& produce, Count&& count, Element& out,
                                            bool first) {
    StageCounters& c = *counters_;
    // Whether the consumer stage reads this one on its own thread (synchronously): decided on
    // the timed calls only, from the thread of the consumer's last timed call, so that the
    // other calls touch no thread-local state. A stage's first call is timed, and a consumer
    // calls its input inside its own call, so the consumer's thread is known by then.
    const int32_t me = thread_index();
    stage_.last_thread.store(me, kRelaxed);
    const bool sync = !stage_.parent || stage_.parent->last_thread.load(kRelaxed) == me;
    const int64_t corrupt_before = corrupt_seen();
    const int64_t begin = stats_.now_ns();
    const bool got = produce();
    const int64_t took = stats_.now_ns() - begin;
    bump(c.timed_calls, 1);
    if (sync) bump(c.sync_timed_calls, 1);
    if (first) {
      bump(c.first_calls, 1);
      bump(c.first_ns, took);
      if (sync) bump(c.sync_first_ns, took);
    } else {
      bump(c.timed_ns, took);
      if (sync) bump(c.sync_timed_ns, took);
    }
    if (TraceRing* trace = stats_.trace())
      trace->add(
          TraceEvent{stage_.id, me, begin, took, got ? static_cast<int32_t>(count(got)) : 0});
    if (buffered_) {
      const int64_t fill = buffered_->buffered();
      bump(c.fill_samples, 1);
      bump(c.fill_sum, fill);
      c.fill_last.store(fill, kRelaxed);
      if (fill > c.fill_max.load(kRelaxed)) c.fill_max.store(fill, kRelaxed);
      c.capacity.store(buffered_->buffer_capacity(), kRelaxed);
    }
    counted(c, got ? count(got) : 0, out, corrupt_before);
    return got;
  }

  std::unique_ptr<Iterator> inner_;
  const BufferedIterator* buffered_;
  StageInfo& stage_;
  std::shared_ptr<PipelineStats> keep_;
  PipelineStats& stats_;
  std::shared_ptr<StageCounters> counters_;
  // The pipeline's count of skipped corrupt records (watched with kWatchSkips).
  const std::atomic<int64_t>* skipped_;
  CallSampler sampler_;
  int64_t next_timed_ = 0;  // the next call to time (the first is)
};

// The transparent node: the same elements, spec, cardinality and options as its input.
class StageDataset final : public Dataset {
 public:
  StageDataset(DatasetPtr input, StageInfo& stage, std::shared_ptr<PipelineStats> stats)
      : input_(std::move(input)), stage_(stage), stats_(std::move(stats)) {}
  const char* name() const override { return input_->name(); }
  std::string arguments() const override { return input_->arguments(); }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  std::vector<DatasetPtr> inputs() const override { return input_->inputs(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<StageDataset>(input_->with_inputs(std::move(in)), stage_, stats_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    // Skipped records are counted on the stages that read files: those without input stages.
    // A source node skips them only when the options say so; a stage whose inputs are kept
    // out of the statistics (cache()) may hold a source whose own options do.
    const bool watch_skips =
        stage_.inputs.empty() && (ctx.options.skip_corrupt() || !input_->inputs().empty());
    IteratorContext staged = ctx;  // autotuned knobs are listed under this stage
    staged.stage = stage_.id;
    std::unique_ptr<Iterator> inner = input_->make_iterator(staged);
    std::shared_ptr<StageCounters> counters = stage_.attach();
    const bool inner_counts = inner->count_output_into(&counters->elements, &counters->bytes);
    if (auto* buffered = dynamic_cast<BufferedIterator*>(inner.get()))
      buffered->count_copies_into(&counters->copied_bytes);
    auto staged_as = [&](auto watch, auto counts) -> std::unique_ptr<Iterator> {
      return std::make_unique<StageIterator<decltype(watch)::value, decltype(counts)::value>>(
          std::move(inner), stage_, stats_, std::move(counters));
    };
    using Yes = std::true_type;
    using No = std::false_type;
    if (watch_skips) return inner_counts ? staged_as(Yes{}, Yes{}) : staged_as(Yes{}, No{});
    return inner_counts ? staged_as(No{}, Yes{}) : staged_as(No{}, No{});
  }
  int id() const { return stage_.id; }
  const Options& options() const override { return input_->options(); }
  int64_t depth() const override { return input_->depth(); }
  // What nodes above learn of their inputs' graphs (repeat and cache collect the reshuffling
  // counters, saves read the seeds) comes from the wrapped node.
  bool has_random_seed() const override { return input_->has_random_seed(); }
  DatasetPtr with_seed(uint64_t seed) const override {
    return std::make_shared<StageDataset>(input_->with_seed(seed), stage_, stats_);
  }
  uint64_t seed() const override { return input_->seed(); }
  EpochCounter epoch_counter() const override { return input_->epoch_counter(); }
  DatasetPtr with_batch_rows(int64_t rows) const override {
    DatasetPtr placed = input_->with_batch_rows(rows);
    return placed ? std::make_shared<StageDataset>(std::move(placed), stage_, stats_) : nullptr;
  }
  std::vector<bool> row_splits_components() const override {
    return input_->row_splits_components();
  }
  bool fuses_input() const override { return input_->fuses_input(); }

 private:
  DatasetPtr input_;
  StageInfo& stage_;  // owned by stats_
  std::shared_ptr<PipelineStats> stats_;
};

DatasetPtr wrap(const DatasetPtr& node, const std::shared_ptr<PipelineStats>& stats);

// `node` with its inputs wrapped, itself not; `ids` gets the stages of its inputs. The input
// of a node that fuses its input's work into its own iterator is rebuilt the same way without
// a stage of its own, so that the pair stays fused and counts as one stage.
DatasetPtr rebuild(const DatasetPtr& node, const std::shared_ptr<PipelineStats>& stats,
                   std::vector<int>& ids) {
  // cache() keeps what it cached in its node: a rebuilt node would start an empty cache.
  if (std::string(node->name()) == "cache") return node;
  std::vector<DatasetPtr> inputs = node->inputs();
  if (inputs.empty()) return node;
  const bool fused = node->fuses_input();
  for (auto& in : inputs) {
    if (fused) {
      in = rebuild(in, stats, ids);
      continue;
    }
    in = wrap(in, stats);
    ids.push_back(static_cast<const StageDataset&>(*in).id());
  }
  return node->with_inputs(std::move(inputs));
}

DatasetPtr wrap(const DatasetPtr& node, const std::shared_ptr<PipelineStats>& stats) {
  std::vector<int> ids;
  DatasetPtr rebuilt = rebuild(node, stats, ids);
  StageInfo& stage = stats->add_stage(*node, std::move(ids));
  return std::make_shared<StageDataset>(std::move(rebuilt), stage, stats);
}

using Json = nlohmann::ordered_json;

// `part` of `whole` calls were timed, and took `ns`: the estimate for all of them.
int64_t scaled(int64_t ns, int64_t part, int64_t whole) {
  if (part <= 0) return 0;
  return static_cast<int64_t>(static_cast<double>(ns) * static_cast<double>(whole) /
                              static_cast<double>(part));
}

// The autotuned knobs of stage `id`: null when it has none.
Json knobs_json(const std::vector<std::shared_ptr<Knob>>& knobs, int id) {
  Json out = Json::array();
  for (const auto& k : knobs) {
    if (k->stage() != id) continue;
    out.push_back({{"knob", k->name()},
                   {"value", k->value()},
                   {"min", k->minimum()},
                   {"max", k->maximum()},
                   {"estimated_bytes", k->bytes_at(k->value())}});
  }
  return out.empty() ? Json(nullptr) : out;
}

// The time of a stage's calls, from its counters: the first calls' `first` exactly, the
// others' sampled `timed` scaled to all of them (the sync_* pair: the calls made on the
// consumer stage's thread, whose share of all calls is estimated from the timed ones). A
// stage of a few calls may have no sample beyond its first calls: those stand for the rest.
int64_t stage_ns(const StageCounters& c, const std::atomic<int64_t>& first,
                 const std::atomic<int64_t>& timed) {
  const int64_t firsts = c.first_calls.load(kRelaxed);
  const int64_t samples = c.timed_calls.load(kRelaxed) - firsts;
  const int64_t rest = c.calls.load(kRelaxed) - firsts;
  const int64_t f = first.load(kRelaxed);
  return f + (samples > 0 ? scaled(timed.load(kRelaxed), samples, rest) : scaled(f, firsts, rest));
}

// A stage's input read mostly on another thread (behind prefetch, or a read-ahead).
bool read_in_background(const StageCounters& c) {
  return c.timed_calls.load(kRelaxed) > 2 * c.sync_timed_calls.load(kRelaxed);
}

}  // namespace

void StageCounters::add(const StageCounters& o) {
  auto plus = [](std::atomic<int64_t>& a, const std::atomic<int64_t>& b) {
    a.store(a.load(kRelaxed) + b.load(kRelaxed), kRelaxed);
  };
  plus(calls, o.calls);
  plus(elements, o.elements);
  plus(bytes, o.bytes);
  plus(timed_calls, o.timed_calls);
  plus(timed_ns, o.timed_ns);
  plus(sync_timed_calls, o.sync_timed_calls);
  plus(sync_timed_ns, o.sync_timed_ns);
  plus(first_calls, o.first_calls);
  plus(first_ns, o.first_ns);
  plus(sync_first_ns, o.sync_first_ns);
  plus(corrupt_records, o.corrupt_records);
  plus(fill_samples, o.fill_samples);
  plus(fill_sum, o.fill_sum);
  plus(copied_bytes, o.copied_bytes);
  fill_max.store(std::max(fill_max.load(kRelaxed), o.fill_max.load(kRelaxed)), kRelaxed);
  if (o.fill_samples.load(kRelaxed) > 0) {
    fill_last.store(o.fill_last.load(kRelaxed), kRelaxed);
    capacity.store(o.capacity.load(kRelaxed), kRelaxed);
  }
}

std::shared_ptr<StageCounters> StageInfo::attach() {
  auto c = std::make_shared<StageCounters>();
  std::lock_guard<std::mutex> lock(mu);
  live.push_back(c);
  return c;
}

void StageInfo::detach(const std::shared_ptr<StageCounters>& c) {
  std::lock_guard<std::mutex> lock(mu);
  retired.add(*c);
  live.erase(std::remove(live.begin(), live.end(), c), live.end());
}

void StageInfo::total(StageCounters& out) {
  std::lock_guard<std::mutex> lock(mu);
  out.add(retired);
  for (const auto& c : live) out.add(*c);
}

void TraceRing::add(const TraceEvent& e) {
  std::lock_guard<std::mutex> lock(mu_);
  ++total_;
  if (ring_.size() < capacity_) {
    ring_.push_back(e);
    return;
  }
  ring_[next_] = e;
  next_ = (next_ + 1) % capacity_;
}

std::vector<TraceEvent> TraceRing::events(int64_t* dropped) const {
  std::lock_guard<std::mutex> lock(mu_);
  *dropped = total_ - static_cast<int64_t>(ring_.size());
  std::vector<TraceEvent> out(ring_.begin() + static_cast<std::ptrdiff_t>(next_), ring_.end());
  out.insert(out.end(), ring_.begin(), ring_.begin() + static_cast<std::ptrdiff_t>(next_));
  return out;
}

PipelineStats::PipelineStats(std::shared_ptr<IteratorStats> counters, size_t trace_capacity)
    : counters_(std::move(counters)), consumer_sampler_(trace_capacity > 0, 0x2545f4914f6cdd1dull) {
  if (trace_capacity > 0) trace_ = std::make_unique<TraceRing>(trace_capacity);
}

StageInfo& PipelineStats::add_stage(const Dataset& node, std::vector<int> inputs) {
  std::lock_guard<std::mutex> lock(mu_);
  auto s = std::make_unique<StageInfo>();
  s->id = static_cast<int>(stages_.size());
  s->name = node.name();
  s->arguments = node.arguments();
  s->inputs = std::move(inputs);
  for (int in : s->inputs) stages_[static_cast<size_t>(in)]->parent = s.get();
  stages_.push_back(std::move(s));
  return *stages_.back();
}

size_t PipelineStats::num_stages() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stages_.size();
}

// The consumer's calls are sampled as the stages' are: the first call (counted apart: it
// waits for the pipeline to start) and about one in 64 after it are timed (all of them with a
// trace), and so is the gap from a timed call's end to the start of the next call, since a
// clock read costs as much as a whole get_next of a small element.
void PipelineStats::consumer_begin() {
  const int64_t n = calls_.load(kRelaxed);
  timing_call_ = n == next_timed_call_;
  if (timing_call_) next_timed_call_ = consumer_sampler_.after(n);
  if (!timing_call_ && last_end_ < 0) return;
  call_begin_ = now_ns();
  if (last_end_ >= 0) {
    bump(between_ns_, call_begin_ - last_end_);
    bump(timed_gaps_, 1);
    last_end_ = -1;
  }
}

void PipelineStats::consumer_end() {
  const int64_t n = calls_.load(kRelaxed);
  calls_.store(n + 1, kRelaxed);
  if (!timing_call_) return;
  last_end_ = now_ns();
  if (n == 0) {
    first_wait_ns_.store(last_end_ - call_begin_, kRelaxed);
  } else {
    bump(wait_ns_, last_end_ - call_begin_);
    bump(timed_calls_, 1);
  }
  if (trace_) trace_->add(TraceEvent{-1, thread_index(), call_begin_, last_end_ - call_begin_, 1});
}

DatasetPtr instrument(const DatasetPtr& root, const std::shared_ptr<PipelineStats>& stats) {
  if (root->depth() > kMaxInstrumentedDepth) return root;
  return wrap(root, stats);
}

std::unique_ptr<Iterator> make_pipeline_iterator(const DatasetPtr& ds, IteratorContext& ctx) {
  const Options& o = ds->options();
  const int64_t trace = o.trace_events.value_or(0);
  ctx.autotuner = std::make_shared<Autotuner>(o.ram_budget.value_or(0));
  if (!o.statistics.value_or(kStatisticsByDefault) && trace == 0) return ds->make_iterator(ctx);
  ctx.pipeline_stats = std::make_shared<PipelineStats>(ctx.stats, static_cast<size_t>(trace));
  ctx.pipeline_stats->set_autotuner(ctx.autotuner);
  return instrument(ds, ctx.pipeline_stats)->make_iterator(ctx);
}

}  // namespace dinput

namespace dinput {

std::string PipelineStats::to_json(int worker) const {
  std::vector<StageInfo*> stages;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& s : stages_) stages.push_back(s.get());
  }
  std::vector<StageCounters> totals(stages.size());
  for (size_t i = 0; i < stages.size(); ++i) stages[i]->total(totals[i]);

  Json doc;
  doc["schema"] = "dinput.statistics/1";
  if (worker >= 0) doc["worker"] = worker;
  doc["elapsed_ns"] = now_ns();
  const int64_t calls = calls_.load(kRelaxed);
  // The first call's wait exactly, the others' scaled from their samples (or from the first,
  // when a short run has none).
  const int64_t first_wait = first_wait_ns_.load(kRelaxed);
  const int64_t rest = std::max<int64_t>(calls - 1, 0);
  const int64_t wait =
      first_wait + (timed_calls_.load(kRelaxed) > 0
                        ? scaled(wait_ns_.load(kRelaxed), timed_calls_.load(kRelaxed), rest)
                        : scaled(first_wait, 1, rest));
  const int64_t between = scaled(between_ns_.load(kRelaxed), timed_gaps_.load(kRelaxed),
                                 std::max<int64_t>(calls - 1, 0));
  doc["consumer"] = {
      {"calls", calls},
      {"wait_ns", wait},
      {"between_ns", between},
      {"input_bound_percent",
       wait + between > 0 ? 100.0 * static_cast<double>(wait) / static_cast<double>(wait + between)
                          : 0.0}};
  std::vector<std::shared_ptr<Knob>> knobs;
  if (autotuner_) knobs = autotuner_->knobs();
  Json list = Json::array();
  int slowest = -1;
  int64_t slowest_ns = -1;
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageInfo& info = *stages[i];
    const StageCounters& c = totals[i];
    const int64_t calls = c.calls.load(kRelaxed);
    const int64_t time = stage_ns(c, c.first_ns, c.timed_ns);
    int64_t input_wait = 0;
    bool waits_on_buffer = false;
    for (int in : info.inputs) {
      const StageCounters& ic = totals[static_cast<size_t>(in)];
      // The synchronous calls' share of all calls is estimated from the timed ones.
      input_wait += stage_ns(ic, ic.sync_first_ns, ic.sync_timed_ns);
      waits_on_buffer = waits_on_buffer || read_in_background(ic);
    }
    // A stage whose input runs on another thread spends its own time waiting for it.
    if (waits_on_buffer) input_wait = time;
    input_wait = std::min(input_wait, time);
    const int64_t produce = time - input_wait;
    Json s;
    s["id"] = info.id;
    s["name"] = info.name;
    s["arguments"] = info.arguments;
    s["inputs"] = info.inputs;
    s["elements"] = c.elements.load(kRelaxed);
    s["bytes"] = c.bytes.load(kRelaxed);
    s["calls"] = calls;
    s["time_ns"] = time;
    s["produce_ns"] = produce;
    s["input_wait_ns"] = input_wait;
    s["background"] = read_in_background(c);
    s["corrupt_records_skipped"] = c.corrupt_records.load(kRelaxed);
    const int64_t samples = c.fill_samples.load(kRelaxed);
    if (samples > 0)
      s["buffer"] = {{"capacity", c.capacity.load(kRelaxed)},
                     {"mean_fill", static_cast<double>(c.fill_sum.load(kRelaxed)) /
                                       static_cast<double>(samples)},
                     {"max_fill", c.fill_max.load(kRelaxed)},
                     {"last_fill", c.fill_last.load(kRelaxed)},
                     {"copied_bytes", c.copied_bytes.load(kRelaxed)}};
    else
      s["buffer"] = nullptr;
    s["autotune"] = knobs_json(knobs, info.id);
    if (produce > slowest_ns) slowest_ns = produce, slowest = info.id;
    list.push_back(std::move(s));
  }
  doc["stages"] = std::move(list);
  doc["slowest_stage"] = slowest;
  const IteratorStats& k = *counters_;
  doc["counters"] = {{"records", k.records.load(kRelaxed)},
                     {"record_bytes", k.record_bytes.load(kRelaxed)},
                     {"corrupt_records_skipped", k.corrupt_records_skipped.load(kRelaxed)},
                     {"corrupt_bytes_skipped", k.corrupt_bytes_skipped.load(kRelaxed)},
                     {"errors_ignored", k.errors_ignored.load(kRelaxed)}};
  if (autotuner_)
    doc["autotune"] = {{"ram_budget", autotuner_->ram_budget()},
                       {"estimated_bytes", autotuner_->estimated_bytes()},
                       {"steps", autotuner_->steps()},
                       {"raises", autotuner_->raises()},
                       {"lowers", autotuner_->lowers()}};
  else
    doc["autotune"] = nullptr;
  if (trace_) {
    int64_t dropped = 0;
    trace_->events(&dropped);
    doc["trace"] = {{"capacity", trace_->capacity()}, {"dropped_events", dropped}};
  } else {
    doc["trace"] = nullptr;
  }
  return doc.dump();
}

int64_t PipelineStats::dropped_events() const {
  int64_t dropped = 0;
  if (trace_) trace_->events(&dropped);
  return dropped;
}

std::string PipelineStats::trace_events_json(int worker, int64_t tid_base) const {
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& s : stages_) names.push_back(s->name);
  }
  int64_t dropped = 0;
  std::vector<TraceEvent> events = trace_ ? trace_->events(&dropped) : std::vector<TraceEvent>{};
  Json out = Json::array();
  out.push_back({{"ph", "M"},
                 {"name", "process_name"},
                 {"pid", worker},
                 {"args", {{"name", "worker " + std::to_string(worker)}}}});
  // One track per stage and thread: the track id is the stage (the consumer is 0, stage i is
  // i + 1) times 4096 plus the thread.
  std::map<int64_t, std::string> tracks;
  auto track_of = [&](const TraceEvent& e) {
    const int64_t tid = tid_base + (int64_t{e.stage} + 1) * 4096 + e.thread;
    if (!tracks.count(tid)) {
      std::string what = e.stage < 0 ? std::string("get_next")
                                     : "stage " + std::to_string(e.stage) + " " +
                                           (static_cast<size_t>(e.stage) < names.size()
                                                ? names[static_cast<size_t>(e.stage)]
                                                : std::string("?"));
      tracks[tid] = what + " (thread " + std::to_string(e.thread) + ")";
    }
    return tid;
  };
  for (const auto& e : events) {
    const int64_t tid = track_of(e);
    Json x = {{"ph", "X"},
              {"name", e.stage < 0 ? std::string("get_next wait")
                                   : tracks[tid].substr(0, tracks[tid].find(" (thread"))},
              {"cat", e.stage < 0 ? "consumer" : "stage"},
              {"pid", worker},
              {"tid", tid},
              {"ts", static_cast<double>(e.begin_ns) / 1000.0},
              {"dur", static_cast<double>(e.duration_ns) / 1000.0}};
    if (e.stage >= 0) x["args"] = {{"elements", e.got}};
    out.push_back(std::move(x));
  }
  for (const auto& t : tracks)
    out.push_back({{"ph", "M"},
                   {"name", "thread_name"},
                   {"pid", worker},
                   {"tid", t.first},
                   {"args", {{"name", t.second}}}});
  return out.dump();
}

std::string PipelineStats::trace_json(int worker) const {
  int64_t dropped = 0;
  if (trace_) trace_->events(&dropped);
  Json doc;
  doc["traceEvents"] = Json::parse(trace_events_json(worker));
  doc["displayTimeUnit"] = "ns";
  doc["otherData"] = {{"schema", "dinput.trace/1"},
                      {"dropped_events", dropped},
                      {"capacity", trace_ ? trace_->capacity() : 0}};
  return doc.dump();
}

}  // namespace dinput
