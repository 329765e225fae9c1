// Properties of distribute_dataset over random configurations (workers, replicas, global
// batch size, dataset size, drop_remainder, policy, in-memory or file source, a seeded
// shuffle of the elements or of the file list, repeat), with one pipeline object shared by
// every worker, as the `dinput` tool and most programs build it:
//  - every element is delivered exactly once (DATA, FILE) or exactly W times (OFF), the
//    same multiset a plain iterator of a fresh copy of the pipeline gives (per worker's
//    file share under FILE) — which needs every worker to see the same shuffle order;
//  - all workers take the same number of steps;
//  - no replica gets more than its share, ceil(G / N) rows, in a step.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "distribute/auto_shard.h"
#include "harness.h"
#include "io/file_sources.h"

namespace dinput::testing {
namespace {

enum class Shuffle { kNone, kElements, kFileList };

struct Case {
  int W, R;
  int64_t G, size;
  bool drop, files;
  int num_files;
  AutoShardPolicy policy;
  Shuffle shuffle = Shuffle::kNone;
  int64_t buffer = 0, seed = 0;
  bool reshuffle = false;
  int64_t repeat = 1;
  std::string describe() const {
    return str_cat("W=", W, " R=", R, " G=", G, " size=", size, " drop=", drop,
                   " source=", files ? "files" : "range", " num_files=", num_files,
                   " policy=", policy_name(policy), " shuffle=", static_cast<int>(shuffle),
                   " buffer=", buffer, " seed=", seed, " reshuffle=", reshuffle,
                   " repeat=", repeat);
  }
};

// source -> [shuffle] -> batch -> [repeat] -> with_options(policy). The file-list shuffle
// is list_files(shuffle=True, seed) read in order through interleave.
DatasetPtr build_pipeline(const Case& c, const TempFiles& tmp, const std::string& dir) {
  DatasetPtr ds;
  if (c.shuffle == Shuffle::kFileList) {
    auto read = std::make_shared<const InterleaveFn>(
        [](const Element& e) { return make_text_lines({std::string(e.at(0).string(0))}); });
    ds = make_interleave(make_list_files({dir + "/*.txt"}, true, c.seed), read,
                         {{DType::kBytes, Shape()}}, 1, 1, 1, true);
  } else {
    ds = c.files ? make_text_lines(tmp.files()) : make_range(0, c.size, 1);
  }
  if (c.shuffle == Shuffle::kElements) ds = make_shuffle(ds, c.buffer, c.seed, c.reshuffle);
  ds = make_batch(ds, c.G, c.drop);
  if (c.repeat > 1) ds = make_repeat(ds, c.repeat);
  return with_policy(ds, c.policy);
}

void count_rows(const DatasetPtr& ds, std::map<int64_t, int>& counts, int times) {
  auto it = ds->make_iterator({});
  Element e;
  while (it->next(e))
    for (int64_t v : values_of(e)) counts[v] += times;
}

// What a plain iterator of a fresh copy of the pipeline yields: the worker's sharded copy
// under FILE, the whole pipeline W times under OFF, once under DATA.
std::map<int64_t, int> reference_counts(const Case& c, const std::function<DatasetPtr()>& build,
                                        AutoShardPolicy applied) {
  std::map<int64_t, int> counts;
  if (applied == AutoShardPolicy::kFile) {
    for (int w = 0; w < c.W; ++w) count_rows(auto_shard(build(), c.W, w).dataset, counts, 1);
  } else {
    count_rows(build(), counts, applied == AutoShardPolicy::kOff ? c.W : 1);
  }
  return counts;
}

// What the workers must receive in total, as value -> count.
std::map<int64_t, int> expected_counts(const Case& c,
                                       const std::vector<std::vector<int64_t>>& file_contents,
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
      for (size_t i = static_cast<size_t>(w); i < file_contents.size();
           i += static_cast<size_t>(c.W))
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
  const AutoShardPolicy policies[] = {AutoShardPolicy::kOff, AutoShardPolicy::kData,
                                      AutoShardPolicy::kAuto, AutoShardPolicy::kFile};
  int checked = 0;
  for (int iteration = 0; iteration < 250; ++iteration) {
    Case c{pick(1, 4),      pick(1, 3),      pick(1, 12), pick(0, 60),
           pick(0, 1) == 1, pick(0, 1) == 1, 0,           policies[pick(0, 3)]};
    if (!c.files && c.policy == AutoShardPolicy::kFile) c.files = true;  // FILE needs files
    c.shuffle = static_cast<Shuffle>(pick(0, c.files ? 2 : 1));
    c.buffer = pick(1, 40);
    c.seed = pick(0, 255);
    c.reshuffle = pick(0, 1) == 1;
    c.repeat = pick(0, 3) == 0 ? pick(2, 3) : 1;
    std::vector<std::vector<int64_t>> contents;
    TempFiles tmp;
    if (c.files) {
      c.num_files = pick(c.policy == AutoShardPolicy::kFile ? c.W : 1, 6);
      int64_t next = 0;
      for (int f = 0; f < c.num_files; ++f) {
        int64_t n =
            f + 1 == c.num_files ? c.size - next : std::min<int64_t>(c.size - next, pick(0, 15));
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
    if (c.policy == AutoShardPolicy::kFile || applied == AutoShardPolicy::kFile)
      applied = AutoShardPolicy::kFile;
    if (c.W == 1 && applied == AutoShardPolicy::kFile) applied = AutoShardPolicy::kFile;

    const std::string dir =
        tmp.files().empty() ? "" : tmp.files()[0].substr(0, tmp.files()[0].rfind('/'));
    auto build = [&] { return build_pipeline(c, tmp, dir); };
    const DatasetPtr shared = build();  // one object, distributed by every worker
    auto runs = run_workers(c.W, c.R, [&](auto s) { return distribute_dataset(s, shared, {}); });
    SCOPED_TRACE(c.describe());
    const std::map<int64_t, int> expected = reference_counts(c, build, applied);
    // The reference itself: without a shuffle deciding which rows a dropped remainder
    // holds, it is the multiset the configuration implies.
    if (c.shuffle == Shuffle::kNone || !c.drop) {
      std::map<int64_t, int> implied = expected_counts(c, contents, applied);
      for (auto& entry : implied) entry.second *= static_cast<int>(c.repeat);
      ASSERT_EQ(expected, implied);
    }
    std::map<int64_t, int> got;
    const int64_t N = static_cast<int64_t>(c.W) * c.R;
    const int64_t share = (c.G + N - 1) / N;
    for (const auto& run : runs) {
      ASSERT_EQ(run.error, "");
      ASSERT_EQ(run.steps.size(), runs[0].steps.size())
          << "workers took different numbers of steps";
      for (const auto& step : run.steps) {
        ASSERT_EQ(step.size(), static_cast<size_t>(c.R));
        for (const auto& piece : step) {
          ASSERT_LE(static_cast<int64_t>(piece.size()), share);
          for (int64_t v : piece) got[v]++;
        }
      }
    }
    ASSERT_EQ(got, expected);
    ++checked;
  }
  EXPECT_EQ(checked, 250);
}

}  // namespace
}  // namespace dinput::testing
