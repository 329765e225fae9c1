// The in-process collective with a deliberately slow worker (issue 14 item 2): once a worker
// gives up on a round, the round fails on every worker, late arrivals included, and it is
// freed when every worker has passed it; the workers stay in step for later rounds.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "harness.h"

namespace dinput::testing {
namespace {

using std::chrono::milliseconds;

Code code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return Code::kOk;
}

TEST(Collective, LateArrivalFailsTheAbandonedRound) {
  auto collective = std::make_shared<InProcessCollective>(2, milliseconds(100));
  Code early = Code::kOk, late = Code::kOk;
  std::vector<std::string> late_result;
  std::thread slow([&] {
    std::this_thread::sleep_for(milliseconds(400));  // arrives after worker 0 gave up
    late = code_of([&] { late_result = collective->all_gather(1, 7, "b"); });
  });
  early = code_of([&] { collective->all_gather(0, 7, "a"); });
  slow.join();
  EXPECT_EQ(early, Code::kDeadlineExceeded);
  EXPECT_EQ(late, Code::kDeadlineExceeded) << "the late worker completed the round alone";
  EXPECT_TRUE(late_result.empty());
  EXPECT_EQ(collective->pending_rounds(), 0u) << "the abandoned round was not freed";

  // Both passed step 0; step 1 meets normally.
  std::vector<std::string> r0, r1;
  std::thread t([&] { r1 = collective->all_gather(1, 7, "d"); });
  r0 = collective->all_gather(0, 7, "c");
  t.join();
  EXPECT_EQ(r0, (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(r1, r0);
  EXPECT_EQ(collective->pending_rounds(), 0u);
}

TEST(Collective, EveryWaiterFailsWhenOneGivesUp) {
  // Workers 0 and 1 wait for worker 2, which never comes; both fail, the round is freed
  // once worker 2 finally passes it.
  auto collective = std::make_shared<InProcessCollective>(3, milliseconds(150));
  Code c0 = Code::kOk, c1 = Code::kOk;
  std::thread t1([&] {
    std::this_thread::sleep_for(milliseconds(50));
    c1 = code_of([&] { collective->all_gather(1, 3, "b"); });
  });
  c0 = code_of([&] { collective->all_gather(0, 3, "a"); });
  t1.join();
  EXPECT_EQ(c0, Code::kDeadlineExceeded);
  EXPECT_EQ(c1, Code::kDeadlineExceeded);
  EXPECT_EQ(collective->pending_rounds(), 1u);  // worker 2 has not passed it yet
  EXPECT_EQ(code_of([&] { collective->all_gather(2, 3, "c"); }), Code::kDeadlineExceeded);
  EXPECT_EQ(collective->pending_rounds(), 0u);
}

TEST(Collective, SlowWorkerNeverReceivesRowsAlone) {
  // range(8).batch(2) under DATA on 2 workers; worker 1 takes 400 ms over its second batch,
  // worker 0 waits 100 ms. Step 1 must fail on both workers: no rows of it are delivered.
  auto slow_on = [](int64_t value) {
    return std::make_shared<const MapFn>([value](const Element& e) {
      if (e.at(0).data_as<int64_t>()[0] == value) std::this_thread::sleep_for(milliseconds(400));
      return e;
    });
  };
  auto runs = run_workers(
      2, 1,
      [&](auto s) {
        DatasetPtr ds = make_range(0, 8, 1);
        if (s->worker_index() == 1) ds = make_map(ds, slow_on(2), {}, 1, true);
        return distribute_dataset(s, with_policy(make_batch(ds, 2, false), AutoShardPolicy::kData),
                                  {});
      },
      100);
  for (int w = 0; w < 2; ++w) {
    SCOPED_TRACE("worker " + std::to_string(w));
    EXPECT_EQ(runs[w].steps.size(), 1u) << notation(runs[w]);
    EXPECT_EQ(runs[w].error.rfind("DEADLINE_EXCEEDED", 0), 0u) << runs[w].error;
  }
}

// Issue 14 item 15: a timeout past what the clock can hold (about 9.2e12 ms) overflowed into
// an immediate DEADLINE_EXCEEDED; such timeouts now wait without a deadline.
TEST(Collective, HugeTimeoutsWaitInsteadOfFailingAtOnce) {
  for (int64_t timeout_ms : {int64_t{9300000000000}, INT64_MAX, kNoDeadlineMs + 1}) {
    SCOPED_TRACE(timeout_ms);
    auto collective = make_in_process_collective(2, timeout_ms);
    std::vector<std::string> r0, r1;
    Code c0 = Code::kOk, c1 = Code::kOk;
    std::thread late([&] {
      std::this_thread::sleep_for(milliseconds(100));
      c1 = code_of([&] { r1 = collective->all_gather(1, 1, "b"); });
    });
    c0 = code_of([&] { r0 = collective->all_gather(0, 1, "a"); });
    late.join();
    EXPECT_EQ(c0, Code::kOk);
    EXPECT_EQ(c1, Code::kOk);
    EXPECT_EQ(r0, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(r1, r0);
  }
  // The largest timeout with a deadline still works as one.
  auto bounded = std::make_shared<InProcessCollective>(2, milliseconds(kNoDeadlineMs));
  std::thread t([&] { bounded->all_gather(1, 1, "b"); });
  EXPECT_EQ(bounded->all_gather(0, 1, "a").size(), 2u);
  t.join();
}

// Issue 14 item 18: the list of missing workers is capped, and the message says a missing
// worker may only be slow.
TEST(Collective, DeadlineMessageNamesAtMostTenMissingWorkers) {
  auto collective = make_in_process_collective(200, 50);
  try {
    collective->all_gather(0, 1, "a");
    FAIL() << "no timeout";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.code(), Code::kDeadlineExceeded);
    EXPECT_NE(m.find("for workers 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 189 more at step 0"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("may only be slow"), std::string::npos) << m;
    EXPECT_LT(m.size(), 400u) << m;
  }
}

TEST(Collective, SlowWorkerThatFailsReportsItsOwnError) {
  // Worker 1 takes 400 ms to fail with DATA_LOSS on its second batch; worker 0 waits 100 ms.
  // Worker 1's error is its DATA_LOSS, not the others' DEADLINE_EXCEEDED; worker 0's says
  // worker 1 may only be slow.
  auto failing = std::make_shared<const MapFn>([](const Element& e) -> Element {
    if (e.at(0).data_as<int64_t>()[0] == 2) {
      std::this_thread::sleep_for(milliseconds(400));
      raise(Code::kDataLoss, "corrupt record at offset 1234 in 'b.rec'");
    }
    return e;
  });
  auto runs = run_workers(
      2, 1,
      [&](auto s) {
        DatasetPtr ds = make_range(0, 8, 1);
        if (s->worker_index() == 1) ds = make_map(ds, failing, {}, 1, true);
        return distribute_dataset(s, with_policy(make_batch(ds, 2, false), AutoShardPolicy::kData),
                                  {});
      },
      100);
  EXPECT_EQ(runs[0].error.rfind("DEADLINE_EXCEEDED", 0), 0u) << runs[0].error;
  EXPECT_NE(runs[0].error.find("for worker 1 at step 1"), std::string::npos) << runs[0].error;
  EXPECT_EQ(runs[1].error.rfind("DATA_LOSS: corrupt record at offset 1234 in 'b.rec'", 0), 0u)
      << runs[1].error;
  EXPECT_NE(runs[1].error.find("DEADLINE_EXCEEDED"), std::string::npos) << runs[1].error;
  EXPECT_EQ(runs[0].steps.size(), 1u);
  EXPECT_EQ(runs[1].steps.size(), 1u);
}

// share_from_worker0 (how NCCL's unique id reaches the workers): worker 0's value arrives
// everywhere, and its failure is every worker's failure, not a wait for a value that never
// comes.
TEST(Collective, ShareFromWorkerZero) {
  auto c = make_in_process_collective(3, 10000);
  std::vector<std::string> values(3), errors(3);
  std::vector<std::thread> threads;
  std::atomic<int> made{0};
  for (int w = 0; w < 3; ++w)
    threads.emplace_back([&, w] {
      values[static_cast<size_t>(w)] = c->share_from_worker0(w, 7, [&] {
        ++made;
        return std::string("id\0bytes", 8);
      });
      try {
        c->share_from_worker0(
            w, 7, []() -> std::string { raise(Code::kUnavailable, "no unique id here"); });
      } catch (const Error& e) {
        errors[static_cast<size_t>(w)] = std::string(code_name(e.code())) + ": " + e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(made.load(), 1);
  for (int w = 0; w < 3; ++w) {
    EXPECT_EQ(values[static_cast<size_t>(w)], std::string("id\0bytes", 8)) << "worker " << w;
    EXPECT_EQ(errors[static_cast<size_t>(w)], "UNAVAILABLE: no unique id here") << "worker " << w;
  }
}

}  // namespace
}  // namespace dinput::testing
