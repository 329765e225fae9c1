// The per-step "who still has data" exchange is skipped where no worker can run out of data
// (issue 9, performance): with infinite pipelines only the first step exchanges (it tells
// every worker that every pipeline is infinite), and errors and cancels then travel by
// abort. Finite pipelines still agree every step; one worker never exchanges.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "collective/gloo.h"
#include "collective/store.h"
#include "harness.h"

namespace dinput::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Counts the all_gathers each worker makes, per channel, and passes everything on.
class CountingCollective final : public Collective {
 public:
  explicit CountingCollective(std::shared_ptr<Collective> inner) : inner_(std::move(inner)) {}
  int num_workers() const override { return inner_->num_workers(); }
  std::vector<std::string> all_gather(int worker, uint64_t channel, std::string payload) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++calls_[{worker, channel}];
    }
    return inner_->all_gather(worker, channel, std::move(payload));
  }
  void abort(const Error& error) override { inner_->abort(error); }
  void abort_channel(uint64_t channel, const Error& error) override {
    inner_->abort_channel(channel, error);
  }
  void raise_if_failed(uint64_t channel) override { inner_->raise_if_failed(channel); }
  // All of worker w's all_gathers, over every channel.
  int64_t calls(int worker) {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t n = 0;
    for (const auto& [key, count] : calls_)
      if (key.first == worker) n += count;
    return n;
  }

 private:
  std::shared_ptr<Collective> inner_;
  std::mutex mu_;
  std::map<std::pair<int, uint64_t>, int64_t> calls_;
};

// range(8) repeated (count -1: forever), batches of 4, over the workers' replicas.
DatasetPtr repeated(int64_t count, AutoShardPolicy policy) {
  return with_policy(make_batch(make_repeat(make_range(0, 8, 1), count), 4, false), policy);
}

// Each worker takes up to `steps` steps of its distributed dataset (or to its end).
std::vector<WorkerRun> take_steps(const std::vector<std::shared_ptr<Collective>>& collectives,
                                  int R, const MakeDist& make, int steps) {
  const int W = static_cast<int>(collectives.size());
  std::vector<std::string> devices;
  for (int r = 0; r < R; ++r) devices.push_back("CPU:" + std::to_string(r));
  std::vector<WorkerRun> runs(static_cast<size_t>(W));
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w)
    threads.emplace_back([&, w] {
      WorkerRun& run = runs[static_cast<size_t>(w)];
      try {
        DistributedIterator it(
            make(make_strategy(devices, collectives[static_cast<size_t>(w)], w)));
        std::vector<Element> step;
        for (int s = 0; s < steps && it.next(step); ++s) {
          std::vector<std::vector<int64_t>> replicas;
          for (const auto& piece : step) replicas.push_back(values_of(piece));
          run.steps.push_back(std::move(replicas));
        }
      } catch (const Error& e) {
        run.error = std::string(code_name(e.code())) + ": " + e.what();
      }
    });
  for (auto& t : threads) t.join();
  return runs;
}

TEST(AgreementSkip, InfinitePipelineExchangesOnlyOnItsFirstStep) {
  for (auto policy : {AutoShardPolicy::kOff, AutoShardPolicy::kData}) {
    SCOPED_TRACE(static_cast<int>(policy));
    auto counting = std::make_shared<CountingCollective>(make_in_process_collective(2, 20000));
    const std::vector<std::shared_ptr<Collective>> on(2, counting);
    auto infinite = take_steps(
        on, 2, [&](auto s) { return distribute_dataset(s, repeated(-1, policy), {}); }, 40);
    // The same steps as a finite run of the same pipeline, which exchanges every step (and
    // once more to learn that it ended).
    auto plain = std::make_shared<CountingCollective>(make_in_process_collective(2, 20000));
    auto finite = take_steps(
        {plain, plain}, 2, [&](auto s) { return distribute_dataset(s, repeated(20, policy), {}); },
        1000);
    for (int w = 0; w < 2; ++w) {
      const auto i = static_cast<size_t>(w);
      EXPECT_EQ(infinite[i].error, "");
      EXPECT_EQ(finite[i].error, "");
      ASSERT_EQ(infinite[i].steps.size(), 40u);
      ASSERT_GE(finite[i].steps.size(), 40u);
      WorkerRun first = finite[i];
      first.steps.resize(40);
      EXPECT_EQ(notation(infinite[i]), notation(first));
      EXPECT_EQ(counting->calls(w), 1) << "worker " << w;
      EXPECT_EQ(plain->calls(w), static_cast<int64_t>(finite[i].steps.size()) + 1)
          << "worker " << w;
    }
  }
}

TEST(AgreementSkip, OneWorkerNeverExchanges) {
  for (int64_t count : {int64_t{-1}, int64_t{3}}) {
    auto counting = std::make_shared<CountingCollective>(make_in_process_collective(1, 20000));
    auto runs = take_steps(
        {counting}, 2,
        [&](auto s) { return distribute_dataset(s, repeated(count, AutoShardPolicy::kOff), {}); },
        20);
    EXPECT_EQ(runs[0].error, "");
    EXPECT_EQ(runs[0].steps.size(), count < 0 ? 20u : 6u);
    EXPECT_EQ(counting->calls(0), 0) << "count " << count;
  }
}

TEST(AgreementSkip, WorkersWhosePipelinesDifferKeepExchanging) {
  // Worker 0's pipeline is infinite, worker 1's ends after 3 batches: the first step tells
  // worker 0 that not every pipeline is infinite, so both go on agreeing each step, and
  // worker 1 receives empty batches once its own data ends (deciding alone, worker 0 would
  // stop exchanging and leave worker 1 waiting).
  auto counting = std::make_shared<CountingCollective>(make_in_process_collective(2, 20000));
  auto runs = take_steps(
      {counting, counting}, 1,
      [&](auto s) {
        return distribute_datasets_from_function(
            s,
            [](const InputContext& ctx) {
              return repeated(ctx.input_pipeline_id == 0 ? -1 : 3, AutoShardPolicy::kOff);
            },
            InputOptions{});
      },
      10);
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(runs[static_cast<size_t>(w)].error, "");
    EXPECT_EQ(runs[static_cast<size_t>(w)].steps.size(), 10u);
    EXPECT_EQ(counting->calls(w), 10) << "worker " << w;
  }
  // range(8).repeat(3).batch(4): 6 batches, then empty ones.
  ASSERT_EQ(runs[1].steps.size(), 10u);
  EXPECT_EQ(runs[1].steps[5][0].size(), 4u) << notation(runs[1]);
  EXPECT_TRUE(runs[1].steps[6][0].empty()) << notation(runs[1]);
}

// Runs workers on infinite pipelines until each fails (or 30 s pass); worker 1's pipeline
// fails on element 37, the others' never. Returns each worker's error.
std::vector<std::string> fail_one_infinite(const std::vector<std::shared_ptr<Collective>>& on) {
  auto failing = std::make_shared<const MapFn>([](const Element& e) -> Element {
    if (e.at(0).data_as<int64_t>()[0] == 37) raise(Code::kDataLoss, "corrupt record 37");
    return e;
  });
  const int W = static_cast<int>(on.size());
  std::vector<std::string> errors(static_cast<size_t>(W));
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w)
    threads.emplace_back([&, w] {
      try {
        auto s = make_strategy({"CPU:0"}, on[static_cast<size_t>(w)], w);
        DatasetPtr ds = make_range(0, 100, 1);
        if (w == 1) ds = make_map(ds, failing, {}, 1, true);
        ds = make_repeat(ds, -1);
        DistributedIterator it(distribute_dataset(
            s, with_policy(make_batch(ds, 1, false), AutoShardPolicy::kData), {}));
        std::vector<Element> step;
        const auto deadline = Clock::now() + std::chrono::seconds(30);
        while (Clock::now() < deadline && it.next(step)) {
        }
        errors[static_cast<size_t>(w)] = "no error within 30 s";
      } catch (const Error& e) {
        errors[static_cast<size_t>(w)] = std::string(code_name(e.code())) + ": " + e.what();
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

TEST(AgreementSkip, PipelineErrorStillReachesEveryWorker) {
  auto counting = std::make_shared<CountingCollective>(make_in_process_collective(2, 20000));
  const auto errors = fail_one_infinite({counting, counting});
  EXPECT_EQ(errors[1].rfind("DATA_LOSS: corrupt record 37", 0), 0u) << errors[1];
  EXPECT_EQ(errors[0], errors[1]);
  EXPECT_EQ(counting->calls(0), 1);  // only the first step exchanged
}

TEST(AgreementSkip, CancelAfterTheFirstStepStopsOnlyItsWorker) {
  // Once no step is exchanged, no worker waits for another's steps: worker 1's cancel (or
  // freeing its iterator after the steps it wanted) must not fail worker 0, which may still
  // be steps behind.
  auto collective = make_in_process_collective(2, 20000);
  std::string error0;
  int steps0 = 0;
  std::atomic<bool> cancelled{false};
  std::thread worker0([&] {
    try {
      DistributedIterator it(distribute_dataset(make_strategy({"CPU:0"}, collective, 0),
                                                repeated(-1, AutoShardPolicy::kData), {}));
      std::vector<Element> step;
      while (steps0 < 100 && it.next(step)) {
        if (++steps0 == 2)
          while (!cancelled) std::this_thread::yield();
      }
    } catch (const Error& e) {
      error0 = code_name(e.code());
    }
  });
  DistributedIterator it(distribute_dataset(make_strategy({"CPU:0"}, collective, 1),
                                            repeated(-1, AutoShardPolicy::kData), {}));
  std::vector<Element> step;
  ASSERT_TRUE(it.next(step));  // the first step, exchanged
  it.cancel();
  cancelled = true;
  std::string error1;
  try {
    it.next(step);
  } catch (const Error& e) {
    error1 = code_name(e.code());
  }
  worker0.join();
  EXPECT_EQ(error1, "CANCELLED");
  EXPECT_EQ(error0, "");
  EXPECT_EQ(steps0, 100);
}

// W Gloo collectives on loopback over one memory store, built by threads at once (each
// constructor waits for the others); a failure to connect is left in *unavailable.
std::vector<std::shared_ptr<Collective>> gloo_workers(int W, const std::string& job,
                                                      std::string* unavailable) {
  auto store = make_memory_store();
  GlooOptions options;
  options.timeout = std::chrono::milliseconds(30000);
  options.address = "127.0.0.1";
  options.job_id = job;
  std::vector<std::shared_ptr<Collective>> on(static_cast<size_t>(W));
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w)
    threads.emplace_back([&, w] {
      try {
        on[static_cast<size_t>(w)] = make_gloo_collective(w, W, store, options);
      } catch (const Error& e) {
        std::lock_guard<std::mutex> lock(mu);
        *unavailable = e.what();
      }
    });
  for (auto& t : threads) t.join();
  return on;
}

TEST(AgreementSkip, PipelineErrorReachesEveryWorkerOverGloo) {
  // The same over Gloo, workers as threads each with its own connections: the abort travels
  // as a control message instead of through shared memory.
  std::string unavailable;
  auto on = gloo_workers(2, "skip", &unavailable);
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  const auto errors = fail_one_infinite(on);
  EXPECT_EQ(errors[1].rfind("DATA_LOSS: corrupt record 37", 0), 0u) << errors[1];
  EXPECT_EQ(errors[0], errors[1]);
}

TEST(AgreementSkip, WorkerThatFinishesEarlyDoesNotFailTheOthers) {
  // Without per-step exchanges the workers drift apart: worker 2 takes its 5 steps and closes
  // its connections (as a process of `dinput launch ... run --steps 5` exits) while the
  // others are still iterating. That is not a failure: they take their steps to the end.
  std::string unavailable;
  auto on = gloo_workers(3, "early", &unavailable);
  if (!unavailable.empty()) GTEST_SKIP() << unavailable;
  std::vector<std::thread> threads;
  std::atomic<bool> closed{false};
  std::vector<std::string> errors(3);
  std::vector<int> steps(3, 0);
  for (int w = 0; w < 3; ++w)
    threads.emplace_back([&, w] {
      std::shared_ptr<Collective> mine = std::move(on[static_cast<size_t>(w)]);
      const int want = w == 2 ? 5 : 200;
      try {
        auto it = std::make_unique<DistributedIterator>(distribute_dataset(
            make_strategy({"CPU:0"}, mine, w), repeated(-1, AutoShardPolicy::kData), {}));
        std::vector<Element> step;
        for (int& s = steps[static_cast<size_t>(w)]; s < want && it->next(step); ++s) {
          // The others go on only once worker 2 has gone, and then for long enough (~2 s) that
          // the liveness probe (every 0.5 s) finds its connection closed: a worker that said it
          // was leaving is no fault.
          if (w != 2 && s == 10)
            while (!closed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
          if (w != 2 && s > 10) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (w == 2) {
          it.reset();
          mine.reset();  // the last reference: its connections close
          closed = true;
        }
      } catch (const Error& e) {
        errors[static_cast<size_t>(w)] = std::string(code_name(e.code())) + ": " + e.what();
        closed = true;
      }
    });
  for (auto& t : threads) t.join();
  for (int w = 0; w < 3; ++w) {
    EXPECT_EQ(errors[static_cast<size_t>(w)], "") << "worker " << w;
    EXPECT_EQ(steps[static_cast<size_t>(w)], w == 2 ? 5 : 200) << "worker " << w;
  }
}

}  // namespace
}  // namespace dinput::testing
