// Shuffles with a random seed (seed < 0) under multi-worker distribution: each worker builds
// its own copy of the pipeline, so each draws its own seed; the workers must still shard one
// order between them, or elements are lost and repeated. They agree on one seed through the
// collective when the dataset is distributed.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness.h"
#include "io/file_sources.h"

namespace dinput::testing {
namespace {

// Every value any replica of any worker received, sorted.
std::vector<int64_t> all_values(const std::vector<WorkerRun>& runs) {
  std::vector<int64_t> out;
  for (size_t w = 0; w < runs.size(); ++w) {
    EXPECT_EQ(runs[w].error, "") << "worker " << w;
    for (const auto& step : runs[w].steps)
      for (const auto& piece : step) out.insert(out.end(), piece.begin(), piece.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RandomSeed, EveryElementOnceWhenEachWorkerShufflesWithARandomSeed) {
  for (int W : {2, 3, 4}) {
    for (bool reshuffle : {true, false}) {
      SCOPED_TRACE(str_cat("W=", W, " reshuffle=", reshuffle));
      // Built inside each worker's thread: W pipelines, W random seeds.
      auto runs = run_workers(W, 1, [&](std::shared_ptr<const Strategy> strategy) {
        DatasetPtr ds =
            make_batch(make_shuffle(make_range(0, 240, 1), 64, -1, reshuffle), 4, false);
        return distribute_dataset(std::move(strategy), with_policy(ds, AutoShardPolicy::kData), {});
      });
      EXPECT_EQ(all_values(runs), iota(0, 240));
    }
  }
}

TEST(RandomSeed, EveryElementOnceWithARandomlyShuffledFileList) {
  TempFiles tmp;
  for (int f = 0; f < 6; ++f) tmp.add(iota(f * 20, f * 20 + 20));
  const std::string dir = tmp.files()[0].substr(0, tmp.files()[0].rfind('/'));
  auto runs = run_workers(3, 1, [&](std::shared_ptr<const Strategy> strategy) {
    auto read = std::make_shared<const InterleaveFn>(
        [](const Element& e) { return make_text_lines({std::string(e.at(0).string(0))}); });
    DatasetPtr files = make_list_files({dir + "/*.txt"}, true, -1);
    DatasetPtr ds = make_batch(
        make_interleave(files, read, {{DType::kBytes, Shape()}}, 2, 1, 1, true), 5, false);
    return distribute_dataset(std::move(strategy), with_policy(ds, AutoShardPolicy::kData), {});
  });
  EXPECT_EQ(all_values(runs), iota(0, 120));
}

TEST(RandomSeed, EveryElementOnceWhenDatasetFnShardsARandomShuffle) {
  auto runs = run_workers(3, 1, [&](std::shared_ptr<const Strategy> strategy) {
    return distribute_datasets_from_function(
        std::move(strategy),
        [](const InputContext& ctx) {
          DatasetPtr ds = make_shuffle(make_range(0, 90, 1), 90, -1, true);
          return make_batch(make_shard(ds, ctx.num_input_pipelines, ctx.input_pipeline_id), 3,
                            false);
        },
        {});
  });
  EXPECT_EQ(all_values(runs), iota(0, 90));
}

TEST(RandomSeed, OneWorkerKeepsItsOwnRandomSeeds) {
  // Without workers to agree with, nothing is exchanged, and each new dataset still shuffles
  // in its own order.
  auto order = [] {
    auto runs = run_workers(1, 1, [](std::shared_ptr<const Strategy> strategy) {
      return distribute_dataset(
          std::move(strategy),
          make_batch(make_shuffle(make_range(0, 64, 1), 64, -1, true), 64, false), {});
    });
    return runs.at(0).steps.at(0).at(0);
  };
  EXPECT_NE(order(), order());
}

}  // namespace
}  // namespace dinput::testing
