// Properties of distribute_dataset over random configurations (workers, replicas, global
// batch size, dataset size, drop_remainder, policy, in-memory or file source, a seeded
// shuffle of the elements or of the file list, repeat, and zip, concatenate,
// sample_from_datasets, a memory cache or ignore_errors), with one pipeline object shared by
// every worker, as the `dinput` tool and most programs build it:
//  - every element is delivered exactly once (DATA, FILE) or exactly W times (OFF), the
//    same multiset a plain iterator of a fresh copy of the pipeline gives (per worker's
//    file share under FILE) — which needs every worker to see the same shuffle order;
//  - all workers take the same number of steps;
//  - no replica gets more than its share, ceil(G / N) rows, in a step.
// The configurations and the checks are in properties.h (process_properties_test.cc runs
// them on worker processes).
#include "properties.h"

namespace dinput::testing {
namespace {

TEST(Properties, RandomConfigurations) {
  std::mt19937 rng(20261122);
  int checked = 0;
  for (int iteration = 0; iteration < 250; ++iteration) {
    std::vector<std::vector<int64_t>> contents;
    const Case c = draw_case(rng, contents);
    TempFiles tmp;
    if (c.files)
      for (const auto& rows : contents) tmp.add(rows);
    const std::string dir =
        tmp.files().empty() ? "" : tmp.files()[0].substr(0, tmp.files()[0].rfind('/'));
    auto build = [&] { return build_pipeline(c, tmp.files(), dir); };
    const DatasetPtr shared = build();  // one object, distributed by every worker
    auto runs = run_workers(c.W, c.R, [&](auto s) { return distribute_dataset(s, shared, {}); });
    SCOPED_TRACE(c.describe());
    check_properties(c, contents, build, runs);
    if (::testing::Test::HasFatalFailure()) return;
    ++checked;
  }
  EXPECT_EQ(checked, 250);
}

}  // namespace
}  // namespace dinput::testing
