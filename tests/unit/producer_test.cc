// White-box tests of data/background_producer.h: where items are made (the background thread,
// or the consumer's own thread for the adaptive placement), and that the items, their order,
// errors, the end and cancellation are the same wherever they are made.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/status.h"
#include "data/background_producer.h"
#include "data/cancellation.h"

namespace dinput {
namespace {

using Producer = BackgroundProducer<int64_t>;
using Placement = Producer::Placement;

// Items 0, 1, ... up to `count`; item i costs cost(i) (a sleep) and records the thread that
// made it; `fail_at` throws DATA_LOSS instead of making that item.
struct Source {
  int64_t count = 0;
  std::function<std::chrono::microseconds(int64_t)> cost = [](int64_t) {
    return std::chrono::microseconds(0);
  };
  int64_t fail_at = -1;
  std::mutex mu;
  std::vector<std::thread::id> made_on;
  int64_t next = 0;

  std::function<bool(int64_t&)> fn() {
    return [this](int64_t& out) {
      int64_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        i = next;
        if (i == count) return false;
        ++next;
        made_on.push_back(std::this_thread::get_id());
      }
      if (i == fail_at) raise(Code::kDataLoss, "item ", i, " is corrupt");
      auto c = cost(i);
      if (c.count() > 0) std::this_thread::sleep_for(c);
      out = i;
      return true;
    };
  }
  std::vector<std::thread::id> threads() {
    std::lock_guard<std::mutex> lock(mu);
    return made_on;
  }
};

std::vector<int64_t> drain(Producer& p) {
  std::vector<int64_t> got;
  int64_t v;
  while (p.next(v)) got.push_back(v);
  return got;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

TEST(BackgroundProducer, ThreadPlacementMakesItemsOnItsThread) {
  Source src;
  src.count = 100;
  Producer p(src.fn(), 2);
  EXPECT_EQ(drain(p), iota(100));
  for (auto id : src.threads()) EXPECT_NE(id, std::this_thread::get_id());
}

// A full queue is refilled in one go once it is down to half: the thread is not woken for
// every item taken (a futex round trip per item made parallel readers slower than one).
TEST(BackgroundProducer, AFullQueueRefillsFromHalfNotPerItem) {
  Source src;
  src.count = 100;
  Producer p(src.fn(), 8);
  auto made = [&] {
    std::lock_guard<std::mutex> lock(src.mu);
    return src.next;
  };
  auto wait_for = [&](int64_t n) {
    for (int i = 0; i < 2000 && made() < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return made();
  };
  ASSERT_EQ(wait_for(8), 8);  // the queue is full
  int64_t v;
  ASSERT_TRUE(p.next(v));
  ASSERT_TRUE(p.next(v));
  ASSERT_TRUE(p.next(v));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(made(), 8) << "the thread made items while the queue was over half full";
  ASSERT_TRUE(p.next(v));  // 4 left: half
  EXPECT_EQ(wait_for(12), 12);
  std::vector<int64_t> got = {0, 1, 2, 3};
  for (int64_t x : drain(p)) got.push_back(x);
  EXPECT_EQ(got, iota(100));
}

// Cheap items are made on the consumer's thread: no hand-off per item.
TEST(BackgroundProducer, AdaptiveMakesCheapItemsOnTheConsumersThread) {
  Source src;
  src.count = 1000;
  Producer p(src.fn(), 1, nullptr, Placement::kAdaptive);
  EXPECT_EQ(drain(p), iota(1000));
  int64_t here = 0;
  for (auto id : src.threads()) here += id == std::this_thread::get_id();
  // Every item, unless the machine stalled the consumer inside a timed call for over 20 us
  // on average; most of them in any case.
  EXPECT_GT(here, 900);
  int64_t v;
  EXPECT_FALSE(p.next(v));  // the end is sticky
  EXPECT_FALSE(p.next(v));
}

// Costly items move to the thread (which then makes them ahead of the consumer), and back to
// the consumer once they are cheap again; the order never changes.
TEST(BackgroundProducer, AdaptiveMovesCostlyItemsToTheThreadAndBack) {
  Source src;
  src.count = 3000;
  src.cost = [](int64_t i) { return std::chrono::microseconds(i >= 10 && i < 210 ? 300 : 0); };
  Producer p(src.fn(), 2, nullptr, Placement::kAdaptive);
  EXPECT_EQ(drain(p), iota(3000));
  auto threads = src.threads();
  ASSERT_EQ(threads.size(), 3000u);
  const auto me = std::this_thread::get_id();
  EXPECT_EQ(threads[0], me);
  int64_t slow_on_thread = 0, tail_here = 0;
  for (size_t i = 10; i < 210; ++i) slow_on_thread += threads[i] != me;
  for (size_t i = 2000; i < 3000; ++i) tail_here += threads[i] == me;
  // All but the first few dozen: the consumer moves them after 4 timed calls in a row.
  EXPECT_GT(slow_on_thread, 120);
  EXPECT_GT(tail_here, 500);
}

// make_here() makes cheap items in the caller's own storage, in order with next(); once the
// items are costly the thread takes over and make_here() declines (-1), leaving them to
// next(). At the end, and after it, it declines too, and next() says the end.
TEST(BackgroundProducer, AdaptiveMakeHereMakesInPlaceUntilTheThreadTakesOver) {
  Source src;
  src.count = 400;
  src.cost = [](int64_t i) { return std::chrono::microseconds(i >= 100 ? 300 : 0); };
  auto fn = src.fn();
  Producer p(fn, 2, nullptr, Placement::kAdaptive);
  std::vector<int64_t> got;
  int64_t here = 0, declined = 0;
  for (;;) {
    int64_t v = -1;
    const int made = p.make_here([&] { return fn(v); });
    if (made == 1) {
      ++here;
      got.push_back(v);
      continue;
    }
    ASSERT_EQ(made, -1) << "make_here reached the end: the thread never took over";
    ++declined;
    if (!p.next(v)) break;
    got.push_back(v);
  }
  EXPECT_EQ(got, iota(400));
  // Every cheap item (and a few costly ones before the move), unless the machine stalled the
  // consumer in its timed calls; most of them in any case.
  EXPECT_GT(here, 60);
  EXPECT_TRUE(p.threaded());
  EXPECT_GT(declined, 100);
  int64_t v;
  EXPECT_EQ(p.make_here([&] { return fn(v); }), -1);
  EXPECT_FALSE(p.next(v));
}

// Without costly items make_here() makes every item, then reports the end once (0), after
// which the end is next()'s to say.
TEST(BackgroundProducer, AdaptiveMakeHereReportsTheEndOnce) {
  Source src;
  src.count = 50;
  auto fn = src.fn();
  Producer p(fn, 2, nullptr, Placement::kAdaptive);
  std::vector<int64_t> got;
  int64_t v = -1;
  int made;
  while ((made = p.make_here([&] { return fn(v); })) == 1) got.push_back(v);
  EXPECT_EQ(made, 0);
  EXPECT_EQ(got, iota(50));
  EXPECT_FALSE(p.threaded());
  EXPECT_EQ(p.make_here([&] { return fn(v); }), -1);
  EXPECT_FALSE(p.next(v));
}

TEST(BackgroundProducer, AdaptiveErrorsFollowTheEarlierItemsAndStay) {
  for (bool costly : {false, true}) {
    Source src;
    src.count = 200;
    src.fail_at = 120;
    if (costly) src.cost = [](int64_t) { return std::chrono::microseconds(100); };
    Producer p(src.fn(), 2, nullptr, Placement::kAdaptive);
    std::vector<int64_t> got;
    int64_t v;
    try {
      while (p.next(v)) got.push_back(v);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kDataLoss);
      EXPECT_STREQ(e.what(), "item 120 is corrupt");
    }
    EXPECT_EQ(got, iota(120)) << costly;
    try {
      p.next(v);
      ADD_FAILURE() << "the error is not sticky";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kDataLoss);
    }
  }
}

TEST(BackgroundProducer, AdaptiveCancelEndsAWaitPromptly) {
  auto cancellation = std::make_shared<Cancellation>();
  Source src;
  src.count = 1000000;
  // Costly items: production moves to the thread, and the consumer waits for it.
  src.cost = [](int64_t i) { return std::chrono::microseconds(i < 60 ? 100 : 200000); };
  Producer p(src.fn(), 1, cancellation, Placement::kAdaptive);
  int64_t v;
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(p.next(v));
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cancellation->cancel();
  });
  auto start = std::chrono::steady_clock::now();
  try {
    while (p.next(v)) {
    }
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kCancelled);
  }
  // The wait ended at the cancel, not when the 200 ms item was made.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  canceller.join();
  EXPECT_THROW(p.next(v), Error);
}

TEST(BackgroundProducer, AdaptiveCancelledBeforeTheCallIsCancelled) {
  auto cancellation = std::make_shared<Cancellation>();
  Source src;
  src.count = 100;
  Producer p(src.fn(), 1, cancellation, Placement::kAdaptive);
  int64_t v;
  ASSERT_TRUE(p.next(v));
  cancellation->cancel();
  try {
    p.next(v);
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kCancelled);
  }
}

TEST(BackgroundProducer, AdaptiveDestroyedMidStreamIsPrompt) {
  for (int costly : {0, 1}) {
    Source src;
    src.count = 1000000;
    if (costly) src.cost = [](int64_t) { return std::chrono::microseconds(1000); };
    auto p = std::make_unique<Producer>(src.fn(), 4, nullptr, Placement::kAdaptive);
    int64_t v;
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(p->next(v));
    auto start = std::chrono::steady_clock::now();
    p.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1)) << costly;
  }
}

}  // namespace
}  // namespace dinput
