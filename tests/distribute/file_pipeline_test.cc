// list_files and interleave, and FILE auto-sharding through them (docs/semantics.md, "FILE":
// the file list is sharded, a reader reached through interleave reads only the worker's
// files).
#include <gtest/gtest.h>

#include "data/nodes.h"
#include "distribute/auto_shard.h"
#include "harness.h"
#include "io/file_sources.h"

namespace dinput::testing {
namespace {

std::vector<int64_t> drain(const DatasetPtr& ds) {
  std::vector<int64_t> out;
  auto it = ds->make_iterator({});
  Element e;
  while (it->next(e)) out.push_back(values_of(e).at(0));
  return out;
}

Tensor scalar(int64_t v) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape());
  *t.mutable_data_as<int64_t>() = v;
  return t;
}

const ElementSpec kInt64Scalar{{DType::kInt64, Shape()}};

// range(1, 6).interleave(lambda x: from_tensors(x).repeat(6), cycle_length=2, block_length=4)
DatasetPtr documented_example(int64_t parallel, bool deterministic) {
  auto fn = std::make_shared<const InterleaveFn>(
      [](const Element& e) { return make_repeat(make_from_tensors({e[0]}), 6); });
  return make_interleave(make_range(1, 6, 1), fn, kInt64Scalar, 2, 4, parallel, deterministic);
}

TEST(Interleave, MatchesTfDataOrder) {
  const std::vector<int64_t> expected = {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3,
                                         3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5};
  EXPECT_EQ(drain(documented_example(1, true)), expected);
  EXPECT_EQ(drain(documented_example(4, true)), expected);  // reading ahead keeps the order
}

TEST(Interleave, NonDeterministicDeliversEverythingOnce) {
  auto got = drain(documented_example(kAutotune, false));
  std::sort(got.begin(), got.end());
  std::vector<int64_t> expected;
  for (int64_t v = 1; v <= 5; ++v) expected.insert(expected.end(), 6, v);
  EXPECT_EQ(got, expected);
}

TEST(Interleave, ErrorsFromTheFunctionAndMismatchedSpecs) {
  auto failing = std::make_shared<const InterleaveFn>(
      [](const Element&) -> DatasetPtr { raise(Code::kAborted, "cannot open"); });
  auto it =
      make_interleave(make_range(0, 3, 1), failing, kInt64Scalar, 2, 1, 1, true)->make_iterator({});
  Element e;
  EXPECT_THROW(it->next(e), Error);
  auto wrong =
      std::make_shared<const InterleaveFn>([](const Element&) { return make_range(0, 2, 1); });
  ElementSpec floats{{DType::kFloat32, Shape()}};
  auto it2 = make_interleave(make_range(0, 3, 1), wrong, floats, 2, 1, 1, true)->make_iterator({});
  try {
    it2->next(e);
    FAIL();
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("does not match the declared spec"), std::string::npos);
  }
  EXPECT_THROW(make_interleave(make_range(0, 3, 1), wrong, kInt64Scalar, 0, 1, 1, true), Error);
  EXPECT_THROW(make_interleave(make_range(0, 3, 1), wrong, kInt64Scalar, 2, 0, 1, true), Error);
}

TEST(Interleave, DestroyedMidStreamStopsReaders) {
  auto fn = std::make_shared<const InterleaveFn>(
      [](const Element& e) { return make_repeat(make_from_tensors({e[0]}), -1); });
  auto it =
      make_interleave(make_range(0, 4, 1), fn, kInt64Scalar, 4, 1, 4, true)->make_iterator({});
  Element e;
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(it->next(e));
  it.reset();  // must join the four reader threads without hanging
  SUCCEED();
}

TEST(ListFiles, SortedMatchesAndNotFound) {
  TempFiles files;
  files.add({1});
  files.add({2});
  files.add({3});
  std::string dir = files.files()[0].substr(0, files.files()[0].rfind('/'));
  auto names = make_list_files({dir + "/f*.txt"}, false, 0);
  EXPECT_EQ(names->cardinality(), 3);
  auto it = names->make_iterator({});
  Element e;
  std::vector<std::string> got;
  while (it->next(e)) got.emplace_back(e[0].string(0));
  EXPECT_EQ(got, files.files());
  try {
    make_list_files({dir + "/nothing*"}, false, 0);
    FAIL();
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), Code::kNotFound);
    EXPECT_NE(std::string(err.what()).find("No files matched pattern"), std::string::npos);
  }
}

TEST(ListFiles, ShuffleIsSeededAndChangesPerEpoch) {
  TempFiles files;
  for (int i = 0; i < 8; ++i) files.add({i});
  std::string dir = files.files()[0].substr(0, files.files()[0].rfind('/'));
  auto order = [](const DatasetPtr& ds) {
    std::vector<std::string> v;
    auto it = ds->make_iterator({});
    Element e;
    while (it->next(e)) v.emplace_back(e[0].string(0));
    return v;
  };
  auto a = make_list_files({dir + "/*.txt"}, true, 7),
       b = make_list_files({dir + "/*.txt"}, true, 7);
  auto a1 = order(a), a2 = order(a);
  EXPECT_EQ(a1, order(b));  // same seed, same first epoch
  EXPECT_NE(a1, a2);        // a new order for the next epoch
  std::sort(a1.begin(), a1.end());
  EXPECT_EQ(a1, files.files());
}

// list_files(...).interleave(text_lines) batched by 4 on 2 workers under FILE: each worker
// reads exactly its own files.
TEST(FileSharding, ThroughListFilesAndInterleave) {
  TempFiles files;
  files.add(iota(0, 4));
  files.add(iota(4, 8));
  files.add(iota(8, 12));
  files.add(iota(12, 16));
  std::string dir = files.files()[0].substr(0, files.files()[0].rfind('/'));
  auto reader = std::make_shared<const InterleaveFn>(
      [](const Element& e) { return make_text_lines({std::string(e[0].string(0))}); });
  ElementSpec line{{DType::kBytes, Shape()}};
  for (auto policy : {AutoShardPolicy::kFile, AutoShardPolicy::kAuto}) {
    auto runs = run_workers(2, 1, [&](auto s) {
      DatasetPtr ds =
          make_interleave(make_list_files({dir + "/*.txt"}, false, 0), reader, line, 1, 1, 1, true);
      return distribute_dataset(s, with_policy(make_batch(ds, 4, false), policy), {});
    });
    // Worker 0 has files 0 and 2, worker 1 files 1 and 3. G = 4 over N = 2 replicas (one per
    // worker) gives balanced pieces of 2 rows, so each worker's batch of 4 takes 2 steps.
    EXPECT_EQ(notation(runs[0]), "[0,1] ; [2,3] ; [8,9] ; [10,11]");
    EXPECT_EQ(notation(runs[1]), "[4,5] ; [6,7] ; [12,13] ; [14,15]");
  }
}

// The file names given as tensors (no file source lists them) and read by a reader value:
// FILE sharding shards the names, as tf.data shards the input of an interleaved reader.
TEST(FileSharding, ThroughNamesReadByAReaderValue) {
  TempFiles files;
  files.add(iota(0, 4));
  files.add(iota(4, 8));
  files.add(iota(8, 12));
  files.add(iota(12, 16));
  Tensor names = Tensor::allocate(DType::kBytes, Shape{4});
  for (int64_t i = 0; i < 4; ++i) names.set_string(i, files.files()[static_cast<size_t>(i)]);
  ReaderSpec lines;
  lines.kind = ReaderSpec::Kind::kTextLines;
  for (auto policy : {AutoShardPolicy::kFile, AutoShardPolicy::kAuto}) {
    for (bool flat_map : {false, true}) {
      auto runs = run_workers(2, 1, [&](auto s) {
        DatasetPtr ds = make_reader_interleave(make_from_tensor_slices({names}), lines, 1, 1, 1,
                                               true, flat_map);
        return distribute_dataset(s, with_policy(make_batch(ds, 4, false), policy), {});
      });
      EXPECT_EQ(notation(runs[0]), "[0,1] ; [2,3] ; [8,9] ; [10,11]");
      EXPECT_EQ(notation(runs[1]), "[4,5] ; [6,7] ; [12,13] ; [14,15]");
    }
  }
  // Fewer names than workers: FILE fails (when iterated), AUTO falls back to DATA.
  Tensor one = Tensor::allocate(DType::kBytes, Shape{1});
  one.set_string(0, files.files()[0]);
  DatasetPtr ds = make_batch(
      make_reader_interleave(make_from_tensor_slices({one}), lines, 1, 1, 1, true, false), 2,
      false);
  EXPECT_TRUE(auto_shard(with_policy(ds, AutoShardPolicy::kFile), 2, 0).deferred.has_value());
  EXPECT_EQ(auto_shard(with_policy(ds, AutoShardPolicy::kAuto), 2, 0).applied,
            AutoShardPolicy::kData);
  // A callback interleave over the same names gives no files to shard: DATA under AUTO.
  auto reader = std::make_shared<const InterleaveFn>(
      [](const Element& e) { return make_text_lines({std::string(e[0].string(0))}); });
  DatasetPtr callback = make_batch(make_interleave(make_from_tensor_slices({names}), reader,
                                                   {{DType::kBytes, Shape()}}, 1, 1, 1, true),
                                   4, false);
  EXPECT_EQ(auto_shard(with_policy(callback, AutoShardPolicy::kAuto), 2, 0).applied,
            AutoShardPolicy::kData);
}

}  // namespace
}  // namespace dinput::testing
