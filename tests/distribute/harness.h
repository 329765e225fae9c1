// Runs a distributed dataset on W in-process workers (threads) and records what every
// replica received, so tests can compare whole runs with the tables of docs/semantics.md.
#pragma once

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "collective/in_process.h"
#include "core/status.h"
#include "data/datasets.h"
#include "distribute/dist_dataset.h"

namespace dinput::testing {

// Values of the first component of one replica's piece, as int64 (bytes are parsed).
inline std::vector<int64_t> values_of(const Element& piece) {
  std::vector<int64_t> v;
  const Tensor& t = piece.at(0);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.dtype() == DType::kBytes)
      v.push_back(std::stoll(std::string(t.string(i))));
    else
      v.push_back(t.data_as<int64_t>()[i]);
  }
  return v;
}

struct WorkerRun {
  std::vector<std::vector<std::vector<int64_t>>> steps;  // step -> replica -> values
  std::string error;                                     // "CODE: message" if it failed
};

// "[0,1] | [2,3] ; [4] | [5]" — one worker's steps: "|" between replicas, ";"
// between steps.
inline std::string notation(const WorkerRun& run) {
  std::string s;
  for (size_t st = 0; st < run.steps.size(); ++st) {
    if (st) s += " ; ";
    for (size_t r = 0; r < run.steps[st].size(); ++r) {
      if (r) s += " | ";
      s += "[";
      for (size_t i = 0; i < run.steps[st][r].size(); ++i)
        s += (i ? "," : "") + std::to_string(run.steps[st][r][i]);
      s += "]";
    }
  }
  return s;
}

using MakeDist = std::function<DistributedDatasetPtr(std::shared_ptr<const Strategy>)>;

// Worker w of R CPU replicas on `collective` (null for a single worker): builds its strategy
// and, once per epoch, its distributed dataset with make(), and records every step.
inline WorkerRun run_one_worker(const std::shared_ptr<Collective>& collective, int w, int R,
                                const MakeDist& make, int epochs = 1) {
  std::vector<std::string> devices;
  for (int r = 0; r < R; ++r) devices.push_back("CPU:" + std::to_string(r));
  WorkerRun run;
  try {
    auto strategy = make_strategy(devices, collective, w);
    for (int epoch = 0; epoch < epochs; ++epoch) {
      DistributedIterator it(make(strategy));
      std::vector<Element> step;
      while (it.next(step)) {
        std::vector<std::vector<int64_t>> replicas;
        for (const auto& piece : step) replicas.push_back(values_of(piece));
        run.steps.push_back(std::move(replicas));
      }
    }
  } catch (const Error& e) {
    run.error = std::string(code_name(e.code())) + ": " + e.what();
  }
  return run;
}

// One worker per collective (worker w on collectives[w]; a null collective for a single
// worker), each of R CPU replicas, as threads; make() builds each worker's distributed
// dataset, once per epoch, on one strategy per worker.
inline std::vector<WorkerRun> run_workers_on(
    const std::vector<std::shared_ptr<Collective>>& collectives, int R, const MakeDist& make,
    int epochs = 1) {
  const int W = static_cast<int>(collectives.size());
  std::vector<WorkerRun> runs(static_cast<size_t>(W));
  auto work = [&](int w) {
    runs[static_cast<size_t>(w)] =
        run_one_worker(collectives[static_cast<size_t>(w)], w, R, make, epochs);
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w) threads.emplace_back(work, w);
  for (auto& t : threads) t.join();
  return runs;
}

// W workers of R CPU replicas each, joined by one in-process collective.
inline std::vector<WorkerRun> run_workers(int W, int R, const MakeDist& make,
                                          int64_t timeout_ms = 20000) {
  std::shared_ptr<Collective> collective =
      W > 1 ? make_in_process_collective(W, timeout_ms) : nullptr;
  return run_workers_on(
      std::vector<std::shared_ptr<Collective>>(static_cast<size_t>(W), collective), R, make);
}

inline DatasetPtr with_policy(DatasetPtr ds, AutoShardPolicy p) {
  Options o;
  o.auto_shard_policy = p;
  return make_with_options(std::move(ds), o);
}

// Temporary text files holding the given integers, one per line.
class TempFiles {
 public:
  TempFiles() {
    char tmpl[] = "/tmp/dinput_test_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempFiles() {
    for (const auto& f : files_) std::remove(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string add(const std::vector<int64_t>& lines) {
    std::string path = dir_ + "/f" + std::to_string(files_.size()) + ".txt";
    FILE* f = std::fopen(path.c_str(), "w");
    for (int64_t v : lines) std::fprintf(f, "%lld\n", static_cast<long long>(v));
    std::fclose(f);
    files_.push_back(path);
    return path;
  }
  const std::vector<std::string>& files() const { return files_; }

 private:
  std::string dir_;
  std::vector<std::string> files_;
};

inline std::vector<int64_t> iota(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) v.push_back(i);
  return v;
}

}  // namespace dinput::testing
