// Saving and restoring a distributed iterator (docs/checkpoint.md, "Distributed iterators").
//
// A distributed state is the container of data/state.h whose payload describes the job
// (workers, replicas, sharding, agreed seeds), the step, and one part per worker: the state
// of each of that worker's pipelines (itself a container, with the pipeline's fingerprint)
// and its splitter's position. Every worker saves its part; the parts are gathered through
// the collective, so every worker returns the same bytes.
#include <cstring>

#include "collective/collective.h"
#include "core/quote.h"
#include "data/state.h"
#include "distribute/dist_dataset.h"
#include "distribute/split.h"

namespace dinput {

namespace {

constexpr char kDistOperation[] = "dist_iterator";

// A pipeline that had ended when its worker saved.
class EndedIterator final : public Iterator {
 public:
  bool next(Element&) override { return false; }
};

std::string job_description(int W, int R, const DistributedDataset::Plan& plan) {
  return str_cat(kDistOperation, "(workers=", W, ", replicas_per_worker=", R,
                 ", policy=", plan.policy, ", pipelines=", plan.pipelines.size(), ")");
}

}  // namespace

std::string DistributedIterator::save_part() const {
  StateWriter w;
  // 2: opened, and reading what a job of another shape left (elastic_file.cc).
  w.u64(elastic_ ? 2 : sources_open_ ? 1 : 0);
  if (!sources_open_) return w.take();
  w.u64(sources_.size());
  for (size_t i = 0; i < sources_.size(); ++i) {
    w.flag(source_done_[i]);
    if (source_done_[i]) continue;
    const SplitIterator* split = splits_[i];
    const std::string input = split ? split->input_state() : save_to_bytes(*sources_[i]);
    w.bytes(save_state_of_section(*pipelines_[i], *effective_[i], &input));
    StateWriter position;
    if (split) split->save_position(position);
    w.bytes(position.data());
  }
  return w.take();
}

void DistributedIterator::restore_part(std::string_view part, bool elastic) {
  const auto& plan = dataset_->plan();
  if (plan.deferred) throw *plan.deferred;
  StateReader r(part, 0, "dist_iterator worker");
  if (r.u64_in("pipelines opened", 0, 2) == 0) {
    r.finish();
    return;
  }
  r.u64_in("the number of pipelines", pipelines_.size(), pipelines_.size());
  source_done_.assign(pipelines_.size(), false);
  for (size_t i = 0; i < pipelines_.size(); ++i) {
    if (r.flag("pipeline ended")) {
      source_done_[i] = true;
      sources_.push_back(std::make_unique<EndedIterator>());
      splits_.push_back(nullptr);
      continue;
    }
    const std::string container = r.bytes("a pipeline's state");
    const std::string position = r.bytes("a splitter's position");
    IteratorContext ctx;
    ctx.stats = stats_;
    ctx.cancellation = cancellation_;
    RestoredIterator restored = restore_state(pipelines_[i], ctx, container);
    if (!restored.iterator) r.corrupt("a pipeline not ended has the state of an ended one");
    effective_[i] = restored.dataset;
    keep_pipeline_stats(ctx.pipeline_stats);
    sources_.push_back(split(std::move(restored.iterator)));
    // Between batches a splitter's position says only that (or is empty without a
    // splitter), which is what lets a state move to another number of replicas.
    const bool between = position.empty() || position == std::string(1, '\0');
    SplitIterator* splitter = splits_.back();
    if (!splitter && !between && plan.global_batch_size > 0) {
      // A single replica continuing from a row inside a batch (a state saved by several
      // workers under OFF): pieces of G rows from that row on, as a balanced split of one.
      auto rows = make_balanced_split(std::move(sources_.back()), {plan.global_batch_size});
      splitter = splits_.back() = rows.get();
      sources_.back() = std::move(rows);
    }
    if (splitter && !position.empty()) {
      StateReader p(position, r.offset() - position.size(), "distributed split");
      if (elastic)
        splitter->restore_rows(p);
      else
        splitter->restore_position(p);
      p.finish();
    } else if (!between && elastic) {
      raise(Code::kFailedPrecondition, "the iterator state was saved inside a batch of pipeline ",
            i, ", which a single replica (no split) cannot continue");
    } else if (!between) {
      r.corrupt("a splitter's position for a pipeline that has no splitter");
    }
  }
  r.finish();
  sources_open_ = true;
}

std::vector<std::string> DistributedIterator::gather_states(
    const char* what, std::string payload, const std::optional<Error>& local_error) {
  const Strategy& s = dataset_->strategy();
  Collective* collective = s.collective();
  if (!collective || s.num_workers() == 1) {
    if (local_error) throw *local_error;
    return {std::move(payload)};
  }
  // A status code (4 bytes), then the payload or the error's message: a worker that fails
  // still takes part, so that no other waits for it.
  int32_t code = local_error ? static_cast<int32_t>(local_error->code()) : 0;
  std::string mine(4, '\0');
  std::memcpy(&mine[0], &code, 4);
  mine += local_error ? std::string(local_error->what()) : payload;
  std::vector<std::string> all = collective->all_gather(s.worker_index(), state_channel_, mine);
  if (local_error) throw *local_error;
  std::vector<std::string> out;
  for (size_t k = 0; k < all.size(); ++k) {
    if (all[k].size() < 4) raise(Code::kInternal, "malformed ", what, " report from worker ", k);
    int32_t c;
    std::memcpy(&c, all[k].data(), 4);
    if (c != 0)
      throw Error(static_cast<Code>(c), str_cat("worker ", k, " could not ", what,
                                                " its iterator state: ", all[k].substr(4)));
    out.push_back(all[k].substr(4));
  }
  return out;
}

std::string DistributedIterator::save() {
  if (error_)
    raise(Code::kFailedPrecondition,
          "the distributed iterator has failed; a failed iterator has no state to save (save "
          "before the error, or restore an earlier state)");
  std::optional<Error> local_error;
  StateWriter mine;
  try {
    mine.u64(static_cast<uint64_t>(steps_));
    mine.flag(ended_);
    if (!ended_) {
      if (buffered_ && last_no_part_) std::rethrow_exception(last_no_part_);
      mine.bytes(buffered_ ? last_part_ : save_part());
    }
  } catch (const Error& e) {
    local_error = e;
  }
  std::vector<std::string> all = gather_states("save", mine.take(), local_error);
  const Strategy& s = dataset_->strategy();
  const auto& plan = dataset_->plan();
  StateWriter p;
  p.u64(1);
  p.bytes(job_description(s.num_workers(), s.num_local_replicas(), plan));
  p.u64(static_cast<uint64_t>(s.num_workers()));
  p.u64(static_cast<uint64_t>(s.num_local_replicas()));
  p.bytes(plan.policy);
  p.u64(plan.agreed_seeds.size());
  for (const auto& seed : seeds_ ? *seeds_ : plan.agreed_seeds) {
    // A restored iterator carries the seeds of its state, which pipelines_ were built with.
    p.flag(seed.has_value());
    if (seed) p.u64(*seed);
  }
  int64_t step0 = -1;
  StateWriter parts;
  for (size_t k = 0; k < all.size(); ++k) {
    StateReader r(all[k], 0, "dist_iterator worker");
    const auto step = static_cast<int64_t>(r.u64("step"));
    const bool ended = r.flag("ended");
    if (k == 0) step0 = step;
    if (step != step0)
      raise(Code::kFailedPrecondition, "the workers saved at different steps: worker 0 at step ",
            step0, ", worker ", k, " at step ", step,
            "; every worker must save its distributed iterator at the same step");
    if (k == 0) {
      p.u64(static_cast<uint64_t>(step));
      p.flag(ended);
    }
    if (!ended) parts.bytes(r.bytes("worker part"));
  }
  return seal_state(p.take() + parts.data());
}

void DistributedIterator::restore(std::string_view state) {
  const auto& plan = dataset_->plan();
  const Strategy& s = dataset_->strategy();
  const int W = s.num_workers(), R = s.num_local_replicas();
  pipelines_ = effective_ = plan.pipelines;
  open_channels();
  std::optional<Error> local_error;
  try {
    std::string_view payload = open_state(state);
    StateReader r(payload, 24, kDistOperation);
    const uint64_t count = r.u64("the number of operations");
    std::string first = count > 0 ? r.bytes("an operation's description") : std::string();
    if (count != 1 || first.rfind(str_cat(kDistOperation, "("), 0) != 0)
      raise(Code::kFailedPrecondition,
            "the iterator state was saved from a dataset iterator, not a distributed iterator "
            "(its first operation is ",
            quoted(first), "); restore it with dinput_dataset_iterator_from_state");
    const auto W0 = static_cast<int>(r.u64_in("the number of workers", 1, kMaxWorkers));
    const auto R0 = static_cast<int>(r.u64_in("the replicas per worker", 1, 1 << 20));
    const std::string policy = r.bytes("the sharding policy");
    const uint64_t n = r.u64("the number of pipelines");
    if (n != plan.pipelines.size())
      raise(Code::kFailedPrecondition, "the iterator state was saved from ", quoted(first),
            " with ", n, " input pipelines per worker, but this distributed dataset has ",
            plan.pipelines.size());
    DistributedDataset::Plan::Seeds seeds;
    for (uint64_t i = 0; i < n; ++i) {
      seeds.emplace_back();
      if (r.flag("a pipeline has an agreed seed")) seeds.back() = r.u64("an agreed seed");
    }
    const auto step = static_cast<int64_t>(r.u64("step"));
    const bool ended = r.flag("ended");
    std::vector<std::string> parts;
    if (!ended)
      for (int k = 0; k < W0; ++k) parts.push_back(r.bytes("a worker's part"));
    r.finish();
    if (policy != plan.policy)
      raise(Code::kFailedPrecondition, "the iterator state was saved under ", policy,
            " sharding but this distributed dataset applies ", plan.policy);
    const bool same_shape = W0 == W && R0 == R;
    if (!same_shape && policy != "DATA" && policy != "OFF" && policy != "FILE")
      raise(Code::kFailedPrecondition, "the iterator state was saved by ", W0, " worker(s) of ", R0,
            " replica(s) and this strategy has ", W, " of ", R,
            ": a state restores on another number of workers or replicas under DATA, FILE or "
            "OFF sharding only, and it was saved under ",
            policy);
    // Under OFF every worker runs the whole stream: the new workers start at the row where
    // the saved ones were, which must be the same row for all of them.
    if (!same_shape && policy == "OFF")
      for (size_t k = 1; k < parts.size(); ++k)
        if (parts[k] != parts[0])
          raise(Code::kFailedPrecondition, "the iterator state was saved by ", W0,
                " workers that stood at different rows of the stream (worker 0 and worker ", k,
                "; the global batch does not divide evenly among the replicas), so only ", W0,
                " workers of ", R0, " replica(s) can continue it");
    if (seeds != plan.agreed_seeds) pipelines_ = effective_ = plan.reseed(seeds);
    seeds_ = seeds;
    const size_t mine = same_shape ? static_cast<size_t>(s.worker_index()) : 0;
    if (!ended && same_shape && !parts.at(mine).empty() && parts[mine][0] == 2) {
      pipelines_[0] = elastic_pipeline(pipelines_[0], seeds);
      effective_[0] = elastic_pipeline(effective_[0], seeds);
      elastic_ = true;
    }
    steps_ = step;
    ended_ = ended;
    if (!ended && !same_shape && policy == "FILE")
      restore_elastic_file(parts, seeds);
    else if (!ended)
      restore_part(parts.at(mine), !same_shape);
  } catch (const Error& e) {
    local_error = e;
  }
  // Every worker learns whether all restored, and the same step.
  StateWriter mine;
  mine.u64(static_cast<uint64_t>(steps_));
  mine.flag(ended_);
  std::vector<std::string> all = gather_states("restore", mine.take(), local_error);
  for (size_t k = 1; k < all.size(); ++k)
    if (all[k] != all[0]) {
      StateReader a(all[0], 0, "restore"), b(all[k], 0, "restore");
      const uint64_t s0 = a.u64("step"), sk = b.u64("step");
      raise(Code::kFailedPrecondition, "the workers restored different steps: worker 0 step ", s0,
            a.flag("ended") ? " (ended)" : "", ", worker ", k, " step ", sk,
            b.flag("ended") ? " (ended)" : "", "; every worker must restore the same saved state");
    }
}

}  // namespace dinput
