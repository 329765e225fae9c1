// Properties of distribute_dataset over random configurations (workers, replicas, global
// batch size, dataset size, drop_remainder, policy, in-memory or file source):
//  - every element is delivered exactly once (DATA, FILE) or exactly W times (OFF);
//  - all workers take the same number of steps;
//  - no replica gets more than its share, ceil(G / N) rows, in a step.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "harness.h"
#include "io/file_sources.h"

namespace dinput::testing {
namespace {

struct Case {
  int W, R;
  int64_t G, size;
  bool drop, files;
  int num_files;
  AutoShardPolicy policy;
  std::string describe() const {
    return str_cat("W=", W, " R=", R, " G=", G, " size=", size, " drop=", drop, " source=", files ? "files" : "range",
                   " num_files=", num_files, " policy=", policy_name(policy));
  }
};

// What the workers must receive in total, as value -> count.
std::map<int64_t, int> expected_counts(const Case& c, const std::vector<std::vector<int64_t>>& file_contents,
                                       AutoShardPolicy applied) {
  std::map<int64_t, int> counts;
  auto add_batched = [&](const std::vector<int64_t>& rows, int times) {
    int64_t kept = c.drop ? rows.size() / c.G * c.G : static_cast<int64_t>(rows.size());
    for (int64_t i = 0; i < kept; ++i) counts[rows[static_cast<size_t>(i)]] += times;
  };
  std::vector<int64_t> all;
  for (const auto& f : file_contents) all.insert(all.end(), f.begin(), f.end());
  if (applied == AutoShardPolicy::kFile) {
    for (int w = 0; w < c.W; ++w) {
      std::vector<int64_t> mine;
      for (size_t i = static_cast<size_t>(w); i < file_contents.size(); i += static_cast<size_t>(c.W))
        mine.insert(mine.end(), file_contents[i].begin(), file_contents[i].end());
      add_batched(mine, 1);
    }
  } else {
    add_batched(all, applied == AutoShardPolicy::kOff ? c.W : 1);
  }
  return counts;
}

TEST(Properties, RandomConfigurations) {
  std::mt19937 rng(20261122);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const AutoShardPolicy policies[] = {AutoShardPolicy::kOff, AutoShardPolicy::kData, AutoShardPolicy::kAuto,
                                      AutoShardPolicy::kFile};
  int checked = 0;
  for (int iteration = 0; iteration < 250; ++iteration) {
    Case c{pick(1, 4), pick(1, 3), pick(1, 12), pick(0, 60), pick(0, 1) == 1, pick(0, 1) == 1, 0,
           policies[pick(0, 3)]};
    if (!c.files && c.policy == AutoShardPolicy::kFile) c.files = true;  // FILE needs files
    std::vector<std::vector<int64_t>> contents;
    TempFiles tmp;
    if (c.files) {
      c.num_files = pick(c.policy == AutoShardPolicy::kFile ? c.W : 1, 6);
      int64_t next = 0;
      for (int f = 0; f < c.num_files; ++f) {
        int64_t n = f + 1 == c.num_files ? c.size - next : std::min<int64_t>(c.size - next, pick(0, 15));
        contents.push_back(iota(next, next + n));
        next += n;
        tmp.add(contents.back());
      }
    } else {
      contents.push_back(iota(0, c.size));
    }
    AutoShardPolicy applied = c.policy;
    if (c.policy == AutoShardPolicy::kAuto)
      applied = c.files && c.num_files >= c.W ? AutoShardPolicy::kFile : AutoShardPolicy::kData;
    if (c.policy == AutoShardPolicy::kFile || applied == AutoShardPolicy::kFile) applied = AutoShardPolicy::kFile;
    if (c.W == 1 && applied == AutoShardPolicy::kFile) applied = AutoShardPolicy::kFile;

    auto runs = run_workers(c.W, c.R, [&](auto s) {
      DatasetPtr source = c.files ? make_text_lines(tmp.files()) : make_range(0, c.size, 1);
      return distribute_dataset(s, with_policy(make_batch(source, c.G, c.drop), c.policy), {});
    });
    SCOPED_TRACE(c.describe());
    std::map<int64_t, int> got;
    const int64_t N = static_cast<int64_t>(c.W) * c.R;
    const int64_t share = (c.G + N - 1) / N;
    for (const auto& run : runs) {
      ASSERT_EQ(run.error, "");
      ASSERT_EQ(run.steps.size(), runs[0].steps.size()) << "workers took different numbers of steps";
      for (const auto& step : run.steps) {
        ASSERT_EQ(step.size(), static_cast<size_t>(c.R));
        for (const auto& piece : step) {
          ASSERT_LE(static_cast<int64_t>(piece.size()), share);
          for (int64_t v : piece) got[v]++;
        }
      }
    }
    ASSERT_EQ(got, expected_counts(c, contents, applied));
    ++checked;
  }
  EXPECT_EQ(checked, 250);
}

}  // namespace
}  // namespace dinput::testing
