// The statistics of a distributed iterator (docs/statistics.md, "Distributed iterators"):
// this worker's steps and pipelines, and every worker's gathered through the collective.
#include <nlohmann/json.hpp>

#include "data/stage_stats.h"
#include "distribute/dist_dataset.h"

namespace dinput {

namespace {

using Json = nlohmann::ordered_json;

}  // namespace

void DistributedIterator::keep_pipeline_stats(std::shared_ptr<PipelineStats> stats) {
  if (!stats) return;
  std::lock_guard<std::mutex> lock(pipeline_stats_mu_);
  pipeline_stats_.push_back(std::move(stats));
}

std::string DistributedIterator::statistics_json() const {
  const Strategy& s = dataset_->strategy();
  Json doc;
  doc["schema"] = "dinput.dist_statistics/1";
  doc["worker"] = s.worker_index();
  doc["steps"] = steps_;
  if (step_stats_) {
    Json steps = Json::parse(step_stats_->to_json());
    doc["consumer"] = steps["consumer"];
  } else {
    doc["consumer"] = nullptr;
  }
  Json pipelines = Json::array();
  {
    std::lock_guard<std::mutex> lock(pipeline_stats_mu_);
    for (const auto& p : pipeline_stats_) pipelines.push_back(Json::parse(p->to_json()));
  }
  doc["pipelines"] = std::move(pipelines);
  return doc.dump();
}

std::string DistributedIterator::gather_statistics() {
  const Strategy& s = dataset_->strategy();
  std::vector<std::string> all;
  Collective* collective = s.collective();
  if (!collective || s.num_workers() == 1) {
    all.push_back(statistics_json());
  } else {
    // On the channel of saves and restores: every worker makes the same calls on it in the
    // same order, which is what matches the gathers.
    all = collective->all_gather(s.worker_index(), state_channel_, statistics_json());
  }
  Json doc;
  doc["schema"] = "dinput.job_statistics/1";
  Json workers = Json::array();
  Json slowest = nullptr;
  int64_t slowest_ns = -1;
  for (size_t w = 0; w < all.size(); ++w) {
    Json one = Json::parse(all[w]);
    for (size_t p = 0; p < one["pipelines"].size(); ++p) {
      for (const auto& stage : one["pipelines"][p]["stages"]) {
        const int64_t ns = stage["produce_ns"].get<int64_t>();
        if (ns > slowest_ns) {
          slowest_ns = ns;
          slowest = {{"worker", w},
                     {"pipeline", p},
                     {"stage", stage["id"]},
                     {"name", stage["name"]},
                     {"produce_ns", ns}};
        }
      }
    }
    workers.push_back(std::move(one));
  }
  // The straggler: the worker whose stages spent the most time producing (the others' waits
  // for it at each step's agreement count in their get_next, so waits cannot name it).
  Json straggler = nullptr;
  int64_t most = -1;
  for (size_t w = 0; w < workers.size(); ++w) {
    int64_t total = 0;
    for (const auto& p : workers[w]["pipelines"])
      for (const auto& stage : p["stages"]) total += stage["produce_ns"].get<int64_t>();
    if (total > most) most = total, straggler = w;
  }
  doc["workers"] = std::move(workers);
  doc["slowest_stage"] = std::move(slowest);
  doc["slowest_worker"] = std::move(straggler);
  return doc.dump();
}

std::string DistributedIterator::trace_json() const {
  const int worker = dataset_->strategy().worker_index();
  Json events = Json::array();
  int64_t dropped = 0;
  auto add = [&](const PipelineStats& p, int64_t tid_base) {
    for (auto& e : Json::parse(p.trace_events_json(worker, tid_base))) events.push_back(e);
    dropped += p.dropped_events();
  };
  // Pipeline i's tracks are numbered from (i + 1) * 2^24, the steps' from 0.
  if (step_stats_) add(*step_stats_, 0);
  {
    std::lock_guard<std::mutex> lock(pipeline_stats_mu_);
    for (size_t i = 0; i < pipeline_stats_.size(); ++i)
      add(*pipeline_stats_[i], static_cast<int64_t>(i + 1) << 24);
  }
  Json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ns";
  doc["otherData"] = {
      {"schema", "dinput.trace/1"}, {"worker", worker}, {"dropped_events", dropped}};
  return doc.dump();
}

}  // namespace dinput
