// Seeded shuffles under DATA sharding (issue 14 item 1): every worker's copy of a pipeline
// shared by all workers draws the same order for the same epoch, so each element is
// delivered once; reshuffle_each_iteration still gives each epoch its own order, the one a
// plain iterator of the dataset gives for that epoch (tf.data's semantics).
#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"
#include "io/file_sources.h"

namespace dinput::testing {
namespace {

// Per epoch, the rows of every step in order: worker 0's piece, then worker 1's, ... — for
// DATA with one replica per worker, the rows of the global batch in the pipeline's order.
using Epochs = std::vector<std::vector<int64_t>>;

Epochs run_epochs(int W, const DatasetPtr& shared, int epochs) {
  std::shared_ptr<Collective> collective = make_in_process_collective(W, 20000);
  std::vector<std::vector<std::vector<std::vector<int64_t>>>> seen(
      static_cast<size_t>(W));  // w, epoch, step
  std::vector<std::string> errors(static_cast<size_t>(W));
  auto work = [&](int w) {
    try {
      auto dist = distribute_dataset(make_strategy({"CPU:0"}, collective, w), shared, {});
      for (int e = 0; e < epochs; ++e) {
        DistributedIterator it(dist);  // a new iterator of the distributed dataset: a new epoch
        std::vector<std::vector<int64_t>> steps;
        std::vector<Element> step;
        while (it.next(step)) steps.push_back(values_of(step.at(0)));
        seen[static_cast<size_t>(w)].push_back(std::move(steps));
      }
    } catch (const Error& e) {
      errors[static_cast<size_t>(w)] = e.what();
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w) threads.emplace_back(work, w);
  for (auto& t : threads) t.join();
  Epochs out(static_cast<size_t>(epochs));
  for (int w = 0; w < W; ++w) {
    EXPECT_EQ(errors[static_cast<size_t>(w)], "") << "worker " << w;
    if (!errors[static_cast<size_t>(w)].empty()) return {};
  }
  for (size_t e = 0; e < out.size(); ++e)
    for (size_t s = 0; s < seen[0][e].size(); ++s)
      for (int w = 0; w < W; ++w) {
        const auto& piece = seen[static_cast<size_t>(w)][e].at(s);
        out[e].insert(out[e].end(), piece.begin(), piece.end());
      }
  return out;
}

std::vector<int64_t> plain_rows(std::unique_ptr<Iterator> it) {
  std::vector<int64_t> rows;
  Element e;
  while (it->next(e))
    for (int64_t v : values_of(e)) rows.push_back(v);
  return rows;
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(ShuffleEpochs, IssueReproDeliversEachElementOnce) {
  // dinput run --workers 2 --replicas 2 'range(12).shuffle(12, seed=3).batch(4)'
  DatasetPtr shared = make_batch(make_shuffle(make_range(0, 12, 1), 12, 3, true), 4, false);
  Epochs epochs = run_epochs(2, shared, 1);
  ASSERT_EQ(epochs.size(), 1u);
  EXPECT_EQ(sorted(epochs[0]), iota(0, 12));
}

TEST(ShuffleEpochs, EachEpochItsOwnOrderTheSameOnEveryWorker) {
  for (bool reshuffle : {true, false}) {
    SCOPED_TRACE(reshuffle ? "reshuffle_each_iteration" : "one order");
    DatasetPtr shared = make_batch(make_shuffle(make_range(0, 40, 1), 40, 7, reshuffle), 8, true);
    Epochs epochs = run_epochs(4, shared, 3);
    ASSERT_EQ(epochs.size(), 3u);
    // A fresh copy iterated plainly: epoch e's order is its e-th iterator's.
    DatasetPtr fresh = make_batch(make_shuffle(make_range(0, 40, 1), 40, 7, reshuffle), 8, true);
    for (size_t e = 0; e < epochs.size(); ++e) {
      EXPECT_EQ(epochs[e], plain_rows(fresh->make_iterator({}))) << "epoch " << e;
      EXPECT_EQ(sorted(epochs[e]), iota(0, 40)) << "epoch " << e;
    }
    if (reshuffle)
      EXPECT_NE(epochs[0], epochs[1]);
    else
      EXPECT_EQ(epochs[0], epochs[1]);
  }
}

TEST(ShuffleEpochs, RepeatInsideThePipelineReshufflesEveryRepetition) {
  DatasetPtr shared =
      make_batch(make_repeat(make_shuffle(make_range(0, 10, 1), 10, 5, true), 2), 5, false);
  Epochs epochs = run_epochs(5, shared, 2);
  ASSERT_EQ(epochs.size(), 2u);
  DatasetPtr fresh =
      make_batch(make_repeat(make_shuffle(make_range(0, 10, 1), 10, 5, true), 2), 5, false);
  std::vector<int64_t> first = plain_rows(fresh->make_iterator({}));
  EXPECT_EQ(epochs[0], first);
  EXPECT_EQ(epochs[1], plain_rows(fresh->make_iterator({})));
  EXPECT_NE(std::vector<int64_t>(first.begin(), first.begin() + 10),
            std::vector<int64_t>(first.begin() + 10, first.end()));
}

TEST(ShuffleEpochs, ShuffledFileListUnderData) {
  // list_files(shuffle=True, seed=1) over 5 files of 25 rows, read in list order, DATA.
  TempFiles tmp;
  for (int f = 0; f < 5; ++f) tmp.add(iota(f * 25, f * 25 + 25));
  const std::string dir = tmp.files()[0].substr(0, tmp.files()[0].rfind('/'));
  auto build = [&] {
    auto read = std::make_shared<const InterleaveFn>(
        [](const Element& e) { return make_text_lines({std::string(e.at(0).string(0))}); });
    DatasetPtr files = make_list_files({dir + "/*.txt"}, true, 1);
    Options data;
    data.auto_shard_policy = AutoShardPolicy::kData;
    return make_with_options(
        make_batch(make_interleave(files, read, {{DType::kBytes, Shape()}}, 1, 1, 1, true), 6,
                   false),
        data);
  };
  Epochs epochs = run_epochs(2, build(), 2);
  ASSERT_EQ(epochs.size(), 2u);
  DatasetPtr fresh = build();
  for (size_t e = 0; e < epochs.size(); ++e) {
    EXPECT_EQ(sorted(epochs[e]), iota(0, 125)) << "epoch " << e;
    EXPECT_EQ(epochs[e], plain_rows(fresh->make_iterator({}))) << "epoch " << e;
  }
}

}  // namespace
}  // namespace dinput::testing
