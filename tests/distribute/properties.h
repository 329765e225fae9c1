// The random configurations of the distribution properties (properties_test.cc runs them on
// threads of one process, process_properties_test.cc on worker processes): drawing a
// configuration, building its pipeline, and checking a run of every worker against the
// properties. The configuration and its file contents are drawn without touching the disk,
// so a worker process can draw the same configuration again from the same seed.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "data/datasets.h"
#include "distribute/auto_shard.h"
#include "harness.h"
#include "io/cache.h"
#include "io/file_sources.h"

namespace dinput::testing {

enum class Shuffle { kNone, kElements, kFileList };
// What joins the batched pipeline: nothing, or one of the operations over several datasets
// (the pipeline with a second copy of itself), a memory cache, or ignore_errors.
enum class Combine { kNone, kZip, kConcatenate, kSample, kCache, kIgnoreErrors };

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
  Combine combine = Combine::kNone;
  // How many times each row of the pipeline comes out: concatenate and sample read two
  // copies of it.
  int copies() const {
    return combine == Combine::kConcatenate || combine == Combine::kSample ? 2 : 1;
  }
  // padded_batch instead of batch: each row x becomes [x, -1, ...] (1 + x % 3 long), padded
  // with -1 to the batch's longest; the -1s are not rows and are not counted.
  bool padded = false;
  // How the shuffled file list is read: 0 an interleave callback, 1 an interleave of the
  // text_lines reader value, 2 a flat_map of it. Unshuffled files with 2 are names given as
  // a tensor, read by an interleave of the reader value.
  int reader = 0;
  std::string describe() const {
    return str_cat("W=", W, " R=", R, " G=", G, " size=", size, " drop=", drop,
                   " source=", files ? "files" : "range", " num_files=", num_files,
                   " policy=", policy_name(policy), " shuffle=", static_cast<int>(shuffle),
                   " buffer=", buffer, " seed=", seed, " reshuffle=", reshuffle, " repeat=", repeat,
                   " combine=", static_cast<int>(combine), " padded=", padded, " reader=", reader);
  }
};

// Draws a configuration and the rows of its files (one list of all rows for a range
// source). W = 0 draws the number of workers too (1..4); otherwise it is W.
inline Case draw_case(std::mt19937& rng, std::vector<std::vector<int64_t>>& contents, int W = 0) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const AutoShardPolicy policies[] = {AutoShardPolicy::kOff, AutoShardPolicy::kData,
                                      AutoShardPolicy::kAuto, AutoShardPolicy::kFile};
  Case c{pick(1, 4),      pick(1, 3),      pick(1, 12), pick(0, 60),
         pick(0, 1) == 1, pick(0, 1) == 1, 0,           policies[pick(0, 3)]};
  if (W > 0) c.W = W;
  if (!c.files && c.policy == AutoShardPolicy::kFile) c.files = true;  // FILE needs files
  c.shuffle = static_cast<Shuffle>(pick(0, c.files ? 2 : 1));
  c.buffer = pick(1, 40);
  c.seed = pick(0, 255);
  c.reshuffle = pick(0, 1) == 1;
  c.repeat = pick(0, 3) == 0 ? pick(2, 3) : 1;
  c.padded = pick(0, 2) == 0;
  c.reader = pick(0, 2);
  contents.clear();
  if (c.files) {
    c.num_files = pick(c.policy == AutoShardPolicy::kFile ? c.W : 1, 6);
    int64_t next = 0;
    for (int f = 0; f < c.num_files; ++f) {
      int64_t n =
          f + 1 == c.num_files ? c.size - next : std::min<int64_t>(c.size - next, pick(0, 15));
      contents.push_back(iota(next, next + n));
      next += n;
    }
  } else {
    contents.push_back(iota(0, c.size));
  }
  const int combine = pick(0, 9);
  if (combine <= 5) c.combine = static_cast<Combine>(combine);
  // Several inputs have no one padding value list to give the balanced split, which then
  // cannot join rows of padded batches of different widths: kept apart here.
  if (c.padded && (c.combine == Combine::kZip || c.combine == Combine::kConcatenate ||
                   c.combine == Combine::kSample))
    c.combine = Combine::kNone;
  return c;
}

// The policy the workers apply: AUTO is FILE with at least W files, else DATA.
inline AutoShardPolicy applied_policy(const Case& c) {
  if (c.policy == AutoShardPolicy::kAuto)
    return c.files && c.num_files >= c.W ? AutoShardPolicy::kFile : AutoShardPolicy::kData;
  return c.policy;
}

// source -> [shuffle] -> batch -> [repeat] -> with_options(policy). The file-list shuffle
// is list_files(shuffle=True, seed) of dir/*.txt read in order through interleave.
inline DatasetPtr build_pipeline(const Case& c, const std::vector<std::string>& files,
                                 const std::string& dir) {
  DatasetPtr ds;
  if (c.shuffle == Shuffle::kFileList) {
    auto read = std::make_shared<const InterleaveFn>(
        [](const Element& e) { return make_text_lines({std::string(e.at(0).string(0))}); });
    DatasetPtr names = make_list_files({dir + "/*.txt"}, true, c.seed);
    ReaderSpec lines;
    lines.kind = ReaderSpec::Kind::kTextLines;
    if (c.reader == 0)
      ds = make_interleave(names, read, {{DType::kBytes, Shape()}}, 1, 1, 1, true);
    else
      ds = make_reader_interleave(names, lines, 1, 1, 1, true, c.reader == 2);
  } else if (c.files && c.reader == 2 && !files.empty()) {
    // The names as a tensor, read by a text_lines reader value: FILE shards the names.
    Tensor names = Tensor::allocate(DType::kBytes, Shape{static_cast<int64_t>(files.size())});
    for (size_t i = 0; i < files.size(); ++i) names.set_string(static_cast<int64_t>(i), files[i]);
    ReaderSpec lines;
    lines.kind = ReaderSpec::Kind::kTextLines;
    ds = make_reader_interleave(make_from_tensor_slices({names}), lines, 1, 1, 1, true, false);
  } else {
    ds = c.files ? make_text_lines(files) : make_range(0, c.size, 1);
  }
  if (c.shuffle == Shuffle::kElements) ds = make_shuffle(ds, c.buffer, c.seed, c.reshuffle);
  if (c.padded) {
    auto widen = std::make_shared<const MapFn>([](const Element& e) {
      const Tensor& t = e.at(0);
      const int64_t x = t.dtype() == DType::kBytes ? std::stoll(std::string(t.string(0)))
                                                   : t.data_as<int64_t>()[0];
      Tensor row = Tensor::allocate(DType::kInt64, Shape{1 + x % 3});
      for (int64_t i = 0; i < row.num_elements(); ++i)
        row.mutable_data_as<int64_t>()[i] = i == 0 ? x : -1;
      return Element{row};
    });
    Tensor pad = Tensor::allocate(DType::kInt64, Shape());
    *pad.mutable_data_as<int64_t>() = -1;
    ds = make_map(ds, widen, {{DType::kInt64, Shape{kUnknownDim}}}, 1, {});
    ds = make_padded_batch(ds, c.G, c.drop, {}, {pad});
  } else {
    ds = make_batch(ds, c.G, c.drop);
  }
  switch (c.combine) {
    case Combine::kNone:
      break;
    case Combine::kZip:  // values_of reads component 0: each row once
      ds = make_zip({ds, ds});
      break;
    case Combine::kConcatenate:
      ds = make_concatenate(ds, ds);
      break;
    case Combine::kSample:
      ds = make_sample_from_datasets({ds, ds}, {1, 2}, c.seed, false);
      break;
    case Combine::kCache:
      ds = make_cache(ds, "");
      break;
    case Combine::kIgnoreErrors:
      ds = make_ignore_errors(ds, false);
      break;
  }
  if (c.repeat > 1) ds = make_repeat(ds, c.repeat);
  return with_policy(ds, c.policy);
}

inline void count_rows(const DatasetPtr& ds, std::map<int64_t, int>& counts, int times) {
  auto it = ds->make_iterator({});
  Element e;
  while (it->next(e))
    for (int64_t v : values_of(e))
      if (v >= 0) counts[v] += times;  // padded_batch's -1s are no rows
}

// What a plain iterator of a fresh copy of the pipeline yields: the worker's sharded copy
// under FILE, the whole pipeline W times under OFF, once under DATA.
inline std::map<int64_t, int> reference_counts(const Case& c,
                                               const std::function<DatasetPtr()>& build,
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
inline std::map<int64_t, int> expected_counts(
    const Case& c, const std::vector<std::vector<int64_t>>& file_contents,
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

// Checks one run of every worker of configuration c against the properties: no errors, the
// same number of steps on every worker, R pieces of at most ceil(G / N) rows per step, and
// every row as often as the reference says (once under DATA and FILE, W times under OFF).
inline void check_properties(const Case& c, const std::vector<std::vector<int64_t>>& contents,
                             const std::function<DatasetPtr()>& build,
                             const std::vector<WorkerRun>& runs) {
  const AutoShardPolicy applied = applied_policy(c);
  const std::map<int64_t, int> expected = reference_counts(c, build, applied);
  // The reference itself: without a shuffle deciding which rows a dropped remainder
  // holds, it is the multiset the configuration implies.
  if (c.shuffle == Shuffle::kNone || !c.drop) {
    std::map<int64_t, int> implied = expected_counts(c, contents, applied);
    for (auto& entry : implied) entry.second *= static_cast<int>(c.repeat) * c.copies();
    ASSERT_EQ(expected, implied);
  }
  std::map<int64_t, int> got;
  const int64_t N = static_cast<int64_t>(c.W) * c.R;
  const int64_t share = (c.G + N - 1) / N;
  ASSERT_EQ(runs.size(), static_cast<size_t>(c.W));
  for (const auto& run : runs) {
    ASSERT_EQ(run.error, "");
    ASSERT_EQ(run.steps.size(), runs[0].steps.size()) << "workers took different numbers of steps";
    for (const auto& step : run.steps) {
      ASSERT_EQ(step.size(), static_cast<size_t>(c.R));
      for (const auto& piece : step) {
        int64_t rows = 0;
        for (int64_t v : piece) {
          if (v < 0) continue;  // padding
          got[v]++;
          ++rows;
        }
        ASSERT_LE(rows, share);
      }
    }
  }
  ASSERT_EQ(got, expected);
}

}  // namespace dinput::testing
