// White-box tests of autotuning (src/data/autotune.h, docs/autotune.md): AUTOTUNE knobs rise
// where a stage keeps its consumer waiting, stay within the RAM budget, and change neither
// the elements, their order nor the saved states. Timing assertions only compare directions
// and generous ratios, so that a loaded 2-core machine passes them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/tensor.h"
#include "data/autotune.h"
#include "data/datasets.h"
#include "data/epoch_counters.h"
#include "data/stage_stats.h"
#include "data/state.h"
#include "image/image_ops.h"

namespace dinput {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// A map whose function sleeps `cost` for every element whose value is a multiple of `every`.
DatasetPtr sleepy_map(DatasetPtr in, int64_t parallel, std::chrono::microseconds cost,
                      int64_t every = 1) {
  auto fn = std::make_shared<const MapFn>([cost, every](const Element& e) {
    if (e[0].data_as<int64_t>()[0] % every == 0) std::this_thread::sleep_for(cost);
    return e;
  });
  return make_map(std::move(in), std::move(fn), {}, parallel, std::nullopt);
}

DatasetPtr with_budget(DatasetPtr in, int64_t bytes) {
  Options o;
  o.ram_budget = bytes;
  return make_with_options(std::move(in), o);
}

struct Outcome {
  std::vector<int64_t> values;
  double seconds = 0;
  json stats;
};

// Iterates `ds` as the C API does (instrumented, autotuned); `consumer` is slept per element.
Outcome run(const DatasetPtr& ds, std::chrono::microseconds consumer = {}) {
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = make_pipeline_iterator(ds, ctx);
  Outcome out;
  const auto begin = Clock::now();
  Element e;
  while (it->next(e)) {
    out.values.push_back(e[0].data_as<int64_t>()[0]);
    if (consumer.count()) std::this_thread::sleep_for(consumer);
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  out.stats = json::parse(ctx.pipeline_stats->to_json());
  return out;
}

std::vector<int64_t> range_values(int64_t n) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(i);
  return v;
}

// The knob of the stage named `stage` (null when it has none).
json knob(const json& stats, const std::string& stage) {
  for (const auto& s : stats["stages"])
    if (s["name"] == stage && !s["autotune"].is_null()) return s["autotune"][0];
  return nullptr;
}

TEST(Autotune, EmptyProbabilityFollowsTheQueueModel) {
  EXPECT_DOUBLE_EQ(empty_probability(0, 4), 1.0);
  EXPECT_NEAR(empty_probability(1, 4), 0.2, 1e-12);
  // A producer slower than the consumer: the queue is empty about 1 - rho of the time,
  // whatever its size.
  EXPECT_NEAR(empty_probability(0.5, 100), 0.5, 1e-9);
  // A faster one: each slot more cuts the chance.
  EXPECT_GT(empty_probability(2, 1), empty_probability(2, 2));
  EXPECT_GT(empty_probability(2, 2), empty_probability(2, 8));
  EXPECT_EQ(empty_probability(1e6, 1000), 0.0);
}

TEST(Autotune, SlowMapGainsParallelismAndThroughput) {
  const int64_t n = 200;
  const auto cost = std::chrono::microseconds(2000);
  const Outcome fixed = run(sleepy_map(make_range(0, n, 1), 1, cost));
  const Outcome tuned = run(sleepy_map(make_range(0, n, 1), kAutotune, cost));
  // Same elements, same order (the map is deterministic).
  EXPECT_EQ(fixed.values, range_values(n));
  EXPECT_EQ(tuned.values, range_values(n));
  const json k = knob(tuned.stats, "map");
  ASSERT_FALSE(k.is_null()) << tuned.stats.dump();
  EXPECT_EQ(k["knob"], "parallelism");
  EXPECT_GT(k["value"].get<int64_t>(), 1) << tuned.stats.dump();
  EXPECT_LE(k["value"].get<int64_t>(), k["max"].get<int64_t>());
  EXPECT_GT(tuned.stats["autotune"]["raises"].get<int64_t>(), 0);
  // The fixed map sleeps 400 ms in a row; the tuned one overlaps its sleeps.
  EXPECT_LT(tuned.seconds, 0.75 * fixed.seconds)
      << "tuned " << tuned.seconds << " s, fixed " << fixed.seconds << " s";
  // A map with a fixed parallelism has no knob.
  EXPECT_TRUE(knob(fixed.stats, "map").is_null());
}

TEST(Autotune, TrivialMapStaysOnTheConsumersThread) {
  // A function far cheaper than a thread hand-off: moving it to a pool would only add a
  // hand-off per element, so the knob stays at 1 (the function runs on the consumer's thread).
  // The run must outlast a few of the autotuner's 10 ms periods for it to step at all: 10^5
  // elements took 10 ms on a fast machine, so there are 10^6.
  const int64_t n = 1000000;
  const Outcome tuned = run(sleepy_map(make_range(0, n, 1), kAutotune, {}, n + 1));
  EXPECT_EQ(tuned.values, range_values(n));
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // Under a sanitizer the instrumented function is no longer far cheaper than a hand-off, so
  // the premise of this test does not hold and a raise may be right: only the knob's bounds
  // are checked there.
  EXPECT_GE(knob(tuned.stats, "map")["value"].get<int64_t>(), 1) << tuned.stats.dump();
#else
  EXPECT_EQ(knob(tuned.stats, "map")["value"], 1) << tuned.stats.dump();
#endif
  EXPECT_GT(tuned.stats["autotune"]["steps"].get<int64_t>(), 0);
}

TEST(Autotune, PrefetchAfterABurstyStageGrowsItsBuffer) {
  // Every 40th element takes 30 ms, the others nothing: on average the producer is faster
  // than the consumer (1 ms per element), but 2 elements of buffer cannot hide a burst.
  auto ds = make_prefetch(
      sleepy_map(make_range(0, 400, 1), 1, std::chrono::microseconds(30000), 40), kAutotune);
  const Outcome tuned = run(ds, std::chrono::microseconds(1000));
  EXPECT_EQ(tuned.values, range_values(400));
  const json k = knob(tuned.stats, "prefetch");
  ASSERT_FALSE(k.is_null()) << tuned.stats.dump();
  EXPECT_EQ(k["knob"], "buffer_size");
  EXPECT_GT(k["value"].get<int64_t>(), 2) << tuned.stats.dump();
}

TEST(Autotune, TinyRamBudgetHoldsTheKnobsAndDeliversEverything) {
  auto map = sleepy_map(make_range(0, 150, 1), kAutotune, std::chrono::microseconds(2000));
  const Outcome tuned = run(with_budget(make_prefetch(map, kAutotune), 1));
  EXPECT_EQ(tuned.values, range_values(150));
  EXPECT_EQ(tuned.stats["autotune"]["ram_budget"], 1);
  EXPECT_EQ(tuned.stats["autotune"]["raises"], 0);
  EXPECT_EQ(knob(tuned.stats, "map")["value"], 1) << tuned.stats.dump();
  EXPECT_EQ(knob(tuned.stats, "prefetch")["value"], 2) << tuned.stats.dump();
}

// Iterates k elements of `ds` (instrumented, autotuned, the consumer sleeping `consumer`
// each), and returns the saved state.
std::string state_after(const DatasetPtr& ds, size_t k, std::chrono::microseconds consumer,
                        std::vector<int64_t>* taken) {
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = make_pipeline_iterator(ds, ctx);
  Element e;
  for (size_t i = 0; i < k && it->next(e); ++i) {
    taken->push_back(e[0].data_as<int64_t>()[0]);
    std::this_thread::sleep_for(consumer);
  }
  return save_state(*ds, *ds, it.get(), false);
}

TEST(Autotune, SavedStatesDoNotDependOnKnobsAndResumeExactly) {
  const int64_t n = 120;
  // Two epochs: the second one's iterators start with the knobs the first one raised.
  auto pipeline = [&](int64_t budget) {
    auto map = sleepy_map(make_range(0, n, 1), kAutotune, std::chrono::microseconds(1000));
    return with_budget(make_repeat(make_prefetch(map, kAutotune), 2), budget);
  };
  for (size_t k : {size_t{70}, size_t{190}}) {
    // Raised knobs (a roomy budget), and knobs held at their start (a budget of one byte).
    std::vector<int64_t> raised_taken, held_taken;
    const std::string raised = state_after(pipeline(int64_t{1} << 30), k, {}, &raised_taken);
    const std::string held = state_after(pipeline(1), k, {}, &held_taken);
    EXPECT_EQ(raised_taken, held_taken);
    // The fingerprint names the budget's with_options node alike; the positions are the same.
    EXPECT_EQ(raised, held) << "saved after " << k;
    // A restore goes on exactly where the save stopped, knobs raised again or not.
    IteratorContext fresh;
    auto ds = pipeline(int64_t{1} << 30);
    RestoredIterator restored = restore_state(ds, fresh, raised);
    Element e;
    std::vector<int64_t> all = raised_taken;
    while (restored.iterator->next(e)) all.push_back(e[0].data_as<int64_t>()[0]);
    std::vector<int64_t> expected = range_values(n);
    const std::vector<int64_t> again = range_values(n);
    expected.insert(expected.end(), again.begin(), again.end());
    EXPECT_EQ(all, expected) << "saved after " << k;
  }
}

TEST(Autotune, AtParallelismOneTheFunctionRunsNoFurtherThanTheConsumer) {
  // With its knob held at 1 the autotuned map is the sequential map: the function is called on
  // the consumer's thread for the element asked for, never ahead of it.
  auto calls = std::make_shared<std::atomic<int64_t>>(0);
  const auto consumer = std::this_thread::get_id();
  auto fn = std::make_shared<const MapFn>([calls, consumer](const Element& e) {
    if (std::this_thread::get_id() != consumer) raise(Code::kInternal, "called on a pool thread");
    calls->fetch_add(1);
    return e;
  });
  auto ds = with_budget(make_map(make_range(0, 500, 1), fn, {}, kAutotune, std::nullopt), 1);
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = make_pipeline_iterator(ds, ctx);
  Element e;
  int64_t taken = 0;
  while (it->next(e)) {
    ASSERT_EQ(e[0].data_as<int64_t>()[0], taken);
    ++taken;
    ASSERT_EQ(calls->load(), taken);
  }
  EXPECT_EQ(taken, 500);
  EXPECT_EQ(knob(json::parse(ctx.pipeline_stats->to_json()), "map")["value"], 1);
}

// The items of `ds` (values, and -1 for an error) up to `k` of them, and the state saved after.
std::string items_and_state(const DatasetPtr& ds, size_t k, std::vector<int64_t>* items) {
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = make_pipeline_iterator(ds, ctx);
  Element e;
  while (items->size() < k) {
    try {
      if (!it->next(e)) break;
      items->push_back(e[0].data_as<int64_t>()[0]);
    } catch (const Error& error) {
      EXPECT_EQ(error.code(), Code::kInvalidArgument) << error.what();
      items->push_back(-1);
    }
  }
  return save_state(*ds, *ds, it.get(), false);
}

TEST(Autotune, InputErrorsAndTheSwitchToThePoolKeepTheSequentialOrderAndStates) {
  // The input fails on every 7th element (a data error: the map reads on). The autotuned map
  // starts on the consumer's thread and moves to its pool when its knob rises; the items, the
  // errors among them and the saved states are those of the sequential map wherever the
  // switch falls.
  const int64_t n = 90;
  auto pipeline = [&](int64_t parallel, int64_t budget) {
    auto failing = std::make_shared<const MapFn>([](const Element& e) {
      if (e[0].data_as<int64_t>()[0] % 7 == 3) raise(Code::kInvalidArgument, "bad element");
      return e;
    });
    auto input = make_map(make_range(0, n, 1), failing, {}, 1, std::nullopt);
    return with_budget(sleepy_map(input, parallel, std::chrono::microseconds(1000)), budget);
  };
  std::vector<int64_t> all;
  items_and_state(pipeline(1, 0), SIZE_MAX, &all);
  ASSERT_EQ(all.size(), static_cast<size_t>(n));
  EXPECT_EQ(all[3], -1);
  for (size_t k : {size_t{2}, size_t{4}, size_t{40}, size_t{75}}) {
    std::vector<int64_t> raised_items, held_items;
    const std::string raised =
        items_and_state(pipeline(kAutotune, int64_t{1} << 30), k, &raised_items);
    const std::string held = items_and_state(pipeline(kAutotune, 1), k, &held_items);
    EXPECT_EQ(raised_items, std::vector<int64_t>(all.begin(), all.begin() + k));
    EXPECT_EQ(held_items, raised_items);
    EXPECT_EQ(raised, held) << "saved after " << k;
    // Restored, the rest follows, errors included.
    IteratorContext fresh;
    RestoredIterator restored = restore_state(pipeline(kAutotune, int64_t{1} << 30), fresh, raised);
    std::vector<int64_t> rest = raised_items;
    Element e;
    for (;;) {
      try {
        if (!restored.iterator->next(e)) break;
        rest.push_back(e[0].data_as<int64_t>()[0]);
      } catch (const Error&) {
        rest.push_back(-1);
      }
    }
    EXPECT_EQ(rest, all) << "saved after " << k;
  }
}

TEST(Autotune, KnobsCarryOverToTheNextEpoch) {
  auto ds =
      make_repeat(sleepy_map(make_range(0, 60, 1), kAutotune, std::chrono::microseconds(2000)), 3);
  const Outcome tuned = run(ds);
  ASSERT_EQ(tuned.values.size(), 180u);
  for (size_t i = 0; i < tuned.values.size(); ++i) ASSERT_EQ(tuned.values[i], int64_t(i % 60));
  EXPECT_GT(knob(tuned.stats, "map")["value"].get<int64_t>(), 1) << tuned.stats.dump();
}

TEST(Autotune, AnImageChainStartsEachEpochAtTheLastOnesParallelism) {
  // A costly image operation (a 64x64 -> 192x192 resize) with num_parallel_calls AUTOTUNE,
  // repeated: the chain makes a new map for each epoch's iterator, which uses the knob the
  // first epoch tuned (the same one, at the value it reached) rather than a new one at 1.
  const int64_t per_epoch = 100;
  Element image{Tensor::zeros(DType::kUInt8, Shape({64, 64, 3}))};
  ImageOpOptions options;
  options.num_parallel_calls = kAutotune;
  auto chain = make_resize(make_repeat(make_from_tensors(image), per_epoch), 192, 192, options);
  auto ds = make_repeat(chain, 2);
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = make_pipeline_iterator(ds, ctx);
  // The knobs of the resize stage.
  auto resize_knobs = [&] {
    int id = -1;
    const json stats = json::parse(ctx.pipeline_stats->to_json());
    for (const auto& s : stats["stages"])
      if (s["name"] == "resize") id = s["id"].get<int>();
    std::vector<std::shared_ptr<Knob>> out;
    for (const auto& k : ctx.autotuner->knobs())
      if (k->stage() == id) out.push_back(k);
    return out;
  };
  Element e;
  for (int64_t i = 0; i < per_epoch; ++i) ASSERT_TRUE(it->next(e));
  const auto first = resize_knobs();
  ASSERT_EQ(first.size(), 1u);
  const int64_t reached = first[0]->value();
  ASSERT_TRUE(it->next(e));  // the second epoch's first element
  const auto second = resize_knobs();
  ASSERT_EQ(second.size(), 1u) << "one knob for the chain, not one per epoch";
  // The same knob: the new map was made at the value the first epoch reached (a raise or a
  // lowering since is the tuner's, not a restart).
  EXPECT_EQ(second[0], first[0]) << "epoch 1 reached " << reached;
  int64_t rest = 1;
  while (it->next(e)) ++rest;
  EXPECT_EQ(rest, per_epoch);
}

// The value of the map stage's knob and the pipeline's autotune object now.
std::pair<int64_t, json> map_knob_now(const IteratorContext& ctx) {
  const json stats = json::parse(ctx.pipeline_stats->to_json());
  return {knob(stats, "map")["value"].get<int64_t>(), stats["autotune"]};
}

// Reads `it` (elements numbered from `*count`) until `done()` or for at most `limit`.
template <typename Done>
void read_until(Iterator& it, int64_t* count, Done done, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  Element e;
  while (!done() && Clock::now() < deadline) {
    for (int i = 0; i < 16; ++i, ++*count) {
      ASSERT_TRUE(it.next(e));
      ASSERT_EQ(e[0].data_as<int64_t>()[0], *count);
    }
  }
}

TEST(Autotune, ElementsThatGrowPastTheBudgetLowerTheKnob) {
  // A slow map whose elements are 8 bytes until its knob has climbed (the estimate stays tiny)
  // and 64 KiB from then on: with about 40 KiB or more per element measured on average, 2
  // calls in flight per thread hold 80 KiB or more at parallelism 1 and twice that at 2, so
  // the 128 KiB budget brings the knob back down, wherever it climbed.
  const int64_t budget = 128 << 10;
  auto big = std::make_shared<std::atomic<bool>>(false);
  auto fn = std::make_shared<const MapFn>([big](const Element& e) {
    std::this_thread::sleep_for(std::chrono::microseconds(2000));
    return Element{e[0], Tensor::zeros(DType::kUInt8, Shape({big->load() ? 64 << 10 : 8}))};
  });
  ElementSpec spec{{DType::kInt64, Shape({})}, {DType::kUInt8, Shape({kUnknownDim})}};
  auto ds = with_budget(
      make_map(make_range(0, int64_t{1} << 40, 1), fn, spec, kAutotune, std::nullopt), budget);
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = make_pipeline_iterator(ds, ctx);
  int64_t count = 0;
  read_until(
      *it, &count, [&] { return map_knob_now(ctx).first > 1; }, std::chrono::seconds(10));
  const int64_t climbed = map_knob_now(ctx).first;
  ASSERT_GT(climbed, 1) << "the knob did not climb while the elements were small";
  big->store(true);
  const int64_t small = count;
  read_until(
      *it, &count, [&] { return count >= small + 300; }, std::chrono::seconds(30));
  const auto [value, tuner] = map_knob_now(ctx);
  EXPECT_LT(value, climbed) << tuner.dump();
  EXPECT_GT(tuner["lowers"].get<int64_t>(), 0) << tuner.dump();
  EXPECT_LE(tuner["estimated_bytes"].get<int64_t>(), budget) << tuner.dump();
}

TEST(Autotune, AStageThatBecomesCheapIsLoweredAgain) {
  // The function sleeps 2 ms until the knob has climbed past 2, then costs nothing: the threads
  // are no longer needed, and after a second of that the knob comes down. Lowering from 2 to 1
  // (where the function runs on the consumer's thread again) weighs the work against a
  // hand-off; lowering from above 2 weighs only the model's waits. So the knob must first
  // climb past 2, for the check that it comes down not to hang on that comparison alone.
  auto cheap = std::make_shared<std::atomic<bool>>(false);
  auto fn = std::make_shared<const MapFn>([cheap](const Element& e) {
    if (!cheap->load()) std::this_thread::sleep_for(std::chrono::microseconds(2000));
    return e;
  });
  auto ds = make_map(make_range(0, int64_t{1} << 40, 1), fn, {}, kAutotune, std::nullopt);
  IteratorContext ctx;
  ctx.epochs = std::make_shared<EpochCounters>();
  auto it = make_pipeline_iterator(ds, ctx);
  int64_t count = 0;
  read_until(
      *it, &count, [&] { return map_knob_now(ctx).first > 2; }, std::chrono::seconds(10));
  const int64_t climbed = map_knob_now(ctx).first;
  ASSERT_GT(climbed, 2) << "the knob did not climb while the function was slow";
  cheap->store(true);
  // Cheap from here on: read until the knob has come down, for up to 20 s.
  read_until(
      *it, &count, [&] { return map_knob_now(ctx).first < climbed; }, std::chrono::seconds(20));
  EXPECT_LT(map_knob_now(ctx).first, climbed) << map_knob_now(ctx).second.dump();
  EXPECT_GT(map_knob_now(ctx).second["lowers"].get<int64_t>(), 0);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // And on down to 1: the function is far cheaper than a hand-off. (Under a sanitizer the
  // instrumented work is not, so a knob of 2 may be right there.)
  read_until(
      *it, &count, [&] { return map_knob_now(ctx).first == 1; }, std::chrono::seconds(20));
  EXPECT_EQ(map_knob_now(ctx).first, 1) << map_knob_now(ctx).second.dump();
#endif
}

TEST(Autotune, EarlyDestructionStopsPromptly) {
  for (int round = 0; round < 5; ++round) {
    auto ds = make_prefetch(
        sleepy_map(make_range(0, 100000, 1), kAutotune, std::chrono::microseconds(500)), kAutotune);
    IteratorContext ctx;
    auto it = make_pipeline_iterator(ds, ctx);
    Element e;
    for (int i = 0; i < 20 * round; ++i) ASSERT_TRUE(it->next(e));
    const auto begin = Clock::now();
    it.reset();
    EXPECT_LT(std::chrono::duration<double>(Clock::now() - begin).count(), 5.0);
  }
}

TEST(Autotune, WithoutStatisticsTheKnobsStillRise) {
  Options off;
  off.statistics = false;
  const int64_t n = 200;
  const auto cost = std::chrono::microseconds(2000);
  auto timed = [&](int64_t parallel) {
    auto ds = make_with_options(sleepy_map(make_range(0, n, 1), parallel, cost), off);
    IteratorContext ctx;
    auto it = make_pipeline_iterator(ds, ctx);
    EXPECT_EQ(ctx.pipeline_stats, nullptr);
    const auto begin = Clock::now();
    Element e;
    int64_t count = 0;
    while (it->next(e)) EXPECT_EQ(e[0].data_as<int64_t>()[0], count++);
    EXPECT_EQ(count, n);
    return std::make_pair(std::chrono::duration<double>(Clock::now() - begin).count(),
                          ctx.autotuner->raises());
  };
  const auto fixed = timed(1);
  const auto tuned = timed(kAutotune);
  EXPECT_EQ(fixed.second, 0);
  EXPECT_GT(tuned.second, 0);
  EXPECT_LT(tuned.first, 0.75 * fixed.first);
}

}  // namespace
}  // namespace dinput
