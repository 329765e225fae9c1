// Distributed iterator states with workers as real processes over Gloo (docs/checkpoint.md,
// "Distributed iterators"): three worker processes take some steps, save (each receives the
// whole job's state, gathered through the collective) and go on; new processes, in a new
// job, restore from worker 0's copy alone and must deliver what the saving job went on to
// deliver, worker for worker. Two processes restore the same states: under DATA and FILE every
// element of the epoch is still delivered exactly once, under OFF once per worker.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "collective/gloo.h"
#include "collective/store_url.h"
#include "io/file_sources.h"
#include "process_harness.h"

namespace dinput::testing {
namespace {

constexpr int64_t kSaveAt = 3;
constexpr uint64_t kJoinedChannel = uint64_t{1} << 62;  // no iterator or strategy uses it

std::shared_ptr<Collective> join(const std::string& url, int rank, int W, const std::string& job) {
  StoreOptions store_options;
  store_options.job_id = job;
  store_options.serve = false;
  store_options.connect_timeout = milliseconds(30000);
  GlooOptions options;
  options.timeout = milliseconds(30000);
  options.address = "127.0.0.1";
  options.job_id = job;
  auto collective = make_gloo_collective(rank, W, make_store(url, rank, W, store_options), options);
  collective->barrier(rank, kJoinedChannel);
  return collective;
}

// The pipelines: a shuffle with a random seed under DATA (the restore must reuse the seed the
// saving job agreed on), a balanced split under OFF (saves inside batches), and under FILE a
// shuffle over text files that the test writes into `dir` (kFiles files, file f holding
// 100 * f + i for i < 4 + f).
constexpr int kFiles = 6;

DistributedDatasetPtr make(const std::string& name, std::shared_ptr<const Strategy> s,
                           const std::string& dir) {
  if (name == "file") {
    std::vector<std::string> files;
    for (int f = 0; f < kFiles; ++f) files.push_back(dir + "/f" + std::to_string(f) + ".txt");
    return distribute_dataset(
        std::move(s),
        with_policy(make_batch(make_shuffle(make_text_lines(files), 5, -1, true), 6, false),
                    AutoShardPolicy::kFile),
        {});
  }
  const AutoShardPolicy policy = name == "data" ? AutoShardPolicy::kData : AutoShardPolicy::kOff;
  DatasetPtr ds =
      with_policy(make_batch(make_shuffle(make_range(0, 47, 1), 9, -1, true), 6, false), policy);
  return distribute_dataset(std::move(s), ds, {});
}

const char* const kPipelines[] = {"data", "off", "file"};

std::vector<std::string> devices(int R) {
  std::vector<std::string> d;
  for (int r = 0; r < R; ++r) d.push_back("CPU:" + std::to_string(r));
  return d;
}

void record(WorkerRun& run, const std::vector<Element>& step) {
  std::vector<std::vector<int64_t>> replicas;
  for (const auto& piece : step) replicas.push_back(values_of(piece));
  run.steps.push_back(std::move(replicas));
}

// --worker state_save W RANK URL DIR: for each pipeline, takes kSaveAt steps, saves into
// DIR/<pipeline>-<rank>.state, and reports the steps before ("<p>-before") and after.
const RegisterWorker save_worker("state_save", [](const std::vector<std::string>& args) {
  const int W = std::stoi(args.at(0)), rank = std::stoi(args.at(1));
  const std::string url = args.at(2), dir = args.at(3);
  for (const std::string name : kPipelines) {
    WorkerRun before, after;
    try {
      auto strategy = make_strategy(devices(2), join(url, rank, W, "save-" + name), rank);
      DistributedIterator it(make(name, strategy, dir));
      std::vector<Element> step;
      for (int64_t i = 0; i < kSaveAt && it.next(step); ++i) record(before, step);
      const std::string state = it.save();
      std::ofstream(dir + "/" + name + "-" + std::to_string(rank) + ".state", std::ios::binary)
          << state;
      while (it.next(step)) record(after, step);
    } catch (const Error& e) {
      after.error = std::string(code_name(e.code())) + ": " + e.what();
    }
    std::fputs(report_run(name + "-before", before).c_str(), stdout);
    std::fputs(report_run(name, after).c_str(), stdout);
  }
  std::fflush(stdout);
  return 0;
});

// --worker state_restore W RANK URL DIR PIPELINES...: restores each pipeline from worker 0's
// saved copy and reports the steps.
const RegisterWorker restore_worker("state_restore", [](const std::vector<std::string>& args) {
  const int W = std::stoi(args.at(0)), rank = std::stoi(args.at(1));
  const std::string url = args.at(2), dir = args.at(3);
  for (size_t p = 4; p < args.size(); ++p) {
    const std::string& name = args[p];
    WorkerRun run;
    try {
      std::ifstream in(dir + "/" + name + "-0.state", std::ios::binary);
      std::stringstream bytes;
      bytes << in.rdbuf();
      auto strategy = make_strategy(
          devices(2), join(url, rank, W, "restore-W" + std::to_string(W) + "-" + name), rank);
      DistributedIterator it(make(name, strategy, dir), bytes.str());
      std::vector<Element> step;
      while (it.next(step)) record(run, step);
    } catch (const Error& e) {
      run.error = std::string(code_name(e.code())) + ": " + e.what();
    }
    std::fputs(report_run(name, run).c_str(), stdout);
  }
  std::fflush(stdout);
  return 0;
});

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ProcessState, ThreeProcessesSaveAndNewProcessesResume) {
  const ScratchDir scratch("process_state");
  const std::string& dir = scratch.path();
  for (int f = 0; f < kFiles; ++f) {
    std::ofstream out(dir + "/f" + std::to_string(f) + ".txt");
    for (int i = 0; i < 4 + f; ++i) out << 100 * f + i << "\n";
  }
  std::string url;
  const auto server = make_store("tcp://127.0.0.1:0", 0, 3, {}, &url);
  std::vector<ChildSpec> savers;
  for (int rank = 0; rank < 3; ++rank)
    savers.push_back({{"state_save", "3", std::to_string(rank), url, dir}});
  const std::vector<ChildResult> saved = run_children(savers, milliseconds(120000));
  std::vector<std::map<std::string, WorkerRun>> before;
  for (int rank = 0; rank < 3; ++rank) {
    ASSERT_TRUE(saved[rank].exited_ok()) << "worker " << rank << ":\n" << saved[rank].err;
    before.push_back(parse_report(saved[rank].out));
  }
  for (const std::string name : kPipelines) {
    const std::string state = slurp(dir + "/" + name + "-0.state");
    ASSERT_GT(state.size(), 24u);
    for (int rank = 1; rank < 3; ++rank)
      EXPECT_EQ(slurp(dir + "/" + name + "-" + std::to_string(rank) + ".state"), state)
          << name << ": worker " << rank << " holds other bytes";
  }

  // The same shape, in new processes: exactly what the saving job delivered after the save.
  // And DATA on two processes: the rest of the epoch, each element once.
  std::vector<ChildSpec> restorers;
  for (int rank = 0; rank < 3; ++rank)
    restorers.push_back(
        {{"state_restore", "3", std::to_string(rank), url, dir, "data", "off", "file"}});
  const std::vector<ChildResult> same = run_children(restorers, milliseconds(120000));
  for (int rank = 0; rank < 3; ++rank) {
    ASSERT_TRUE(same[rank].exited_ok()) << "worker " << rank << ":\n" << same[rank].err;
    auto report = parse_report(same[rank].out);
    for (const std::string name : kPipelines) {
      SCOPED_TRACE(name + ", worker " + std::to_string(rank));
      EXPECT_EQ(report[name].error, "");
      EXPECT_EQ(notation(report[name]), notation(before[rank][name]));
    }
  }
  std::vector<ChildSpec> elastic;
  for (int rank = 0; rank < 2; ++rank)
    elastic.push_back(
        {{"state_restore", "2", std::to_string(rank), url, dir, "data", "off", "file"}});
  const std::vector<ChildResult> two = run_children(elastic, milliseconds(120000));
  std::map<int64_t, int> seen;
  auto count = [&](const WorkerRun& run) {
    for (const auto& step : run.steps)
      for (const auto& piece : step)
        for (int64_t v : piece) ++seen[v];
  };
  for (int rank = 0; rank < 3; ++rank) count(before[rank]["data-before"]);
  for (int rank = 0; rank < 2; ++rank) {
    ASSERT_TRUE(two[rank].exited_ok()) << "worker " << rank << ":\n" << two[rank].err;
    auto report = parse_report(two[rank].out);
    EXPECT_EQ(report["data"].error, "");
    count(report["data"]);
  }
  EXPECT_EQ(seen.size(), 47u);
  for (const auto& [v, c] : seen) EXPECT_EQ(c, 1) << "value " << v;
  // Under OFF every new worker continues from the row the saved workers had reached: what
  // saved worker 0 took, then this worker's rest, holds every element once.
  for (int rank = 0; rank < 2; ++rank) {
    auto report = parse_report(two[rank].out);
    EXPECT_EQ(report["off"].error, "");
    seen.clear();
    count(before[0]["off-before"]);
    count(report["off"]);
    EXPECT_EQ(seen.size(), 47u) << "new worker " << rank;
    for (const auto& [v, c] : seen) EXPECT_EQ(c, 1) << "new worker " << rank << ", value " << v;
  }
  // Under FILE the saved workers' rest (their files' rest, what their shuffles held) is dealt
  // out over the two new workers: each element of the epoch once over all workers.
  seen.clear();
  for (int rank = 0; rank < 3; ++rank) count(before[rank]["file-before"]);
  for (int rank = 0; rank < 2; ++rank) {
    auto report = parse_report(two[rank].out);
    EXPECT_EQ(report["file"].error, "");
    count(report["file"]);
  }
  EXPECT_EQ(seen.size(), 39u);
  for (const auto& [v, c] : seen) EXPECT_EQ(c, 1) << "value " << v;
  expect_no_children();
}

}  // namespace
}  // namespace dinput::testing
