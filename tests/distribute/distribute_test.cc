// docs/semantics.md's examples, auto-sharding policies, options and error propagation.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "data/nodes.h"
#include "device/gpu.h"
#include "distribute/graph.h"
#include "distribute/split.h"
#include "harness.h"
#include "io/cache.h"
#include "io/file_sources.h"

namespace dinput::testing {
namespace {

DatasetPtr range_batch(int64_t n, int64_t b, bool drop = false) {
  return make_batch(make_range(0, n, 1), b, drop);
}

std::string single(DatasetPtr ds, int N, InputOptions opts = {}) {
  auto runs = run_workers(1, N, [&](auto s) { return distribute_dataset(s, ds, opts); });
  EXPECT_EQ(runs[0].error, "");
  return notation(runs[0]);
}

// ---- docs/semantics.md, "The even split": single worker, AUTO -> DATA ----

TEST(SpecExamples, EvenSplit) {
  EXPECT_EQ(single(range_batch(6, 4), 2), "[0,1] | [2,3] ; [4] | [5]");
  EXPECT_EQ(single(range_batch(4, 4), 5), "[0] | [1] | [2] | [3] | []");
  EXPECT_EQ(single(range_batch(8, 4), 3), "[0,1] | [2,3] | [] ; [4,5] | [6,7] | []");
  EXPECT_EQ(single(range_batch(9, 4), 2), "[0,1] | [2,3] ; [4,5] | [6,7] ; [8] | []");
  EXPECT_EQ(single(range_batch(9, 4), 4),
            "[0] | [1] | [2] | [3] ; [4] | [5] | [6] | [7] ; [8] | [] | [] | []");
}

// The pieces a step cuts from one batch share the one reference that its last piece holds:
// the others are lent views of it (core/tensor.h), and what is copied out of a step owns its
// buffer, so it outlives the step and the iterator.
TEST(SpecExamples, EvenSplitPiecesOfAStepShareTheBatchReference) {
  std::vector<Element> kept;
  {
    DistributedIterator it(distribute_dataset(
        make_strategy({"CPU:0", "CPU:1", "CPU:2", "CPU:3"}, nullptr, 0), range_batch(16, 8), {}));
    std::vector<Element> step;
    for (int64_t s = 0; s < 2; ++s) {
      ASSERT_TRUE(it.next(step));
      ASSERT_EQ(step.size(), 4u);
      const std::shared_ptr<Buffer>& batch = step[3][0].buffer();
      EXPECT_FALSE(step[3][0].lent());
      for (size_t r = 0; r < 3; ++r) {
        EXPECT_TRUE(step[r][0].lent()) << r;
        EXPECT_EQ(step[r][0].buffer(), batch) << r;
      }
      EXPECT_EQ(batch.use_count(), 1);  // the last piece's reference alone
      for (size_t r = 0; r < 4; ++r) {
        const int64_t first = s * 8 + static_cast<int64_t>(r) * 2;
        EXPECT_EQ(values_of(step[r]), (std::vector<int64_t>{first, first + 1})) << s << r;
      }
      kept.push_back(step[s == 0 ? 1 : 2]);  // a copy owns a reference
      EXPECT_FALSE(kept.back()[0].lent());
      EXPECT_EQ(batch.use_count(), 2);
    }
    EXPECT_FALSE(it.next(step));
  }
  EXPECT_EQ(values_of(kept[0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values_of(kept[1]), (std::vector<int64_t>{12, 13}));
}

// A step takes its pieces with one next_many call: it must cut exactly what as many next()
// calls would, also where a call spans batches (more or fewer kept pieces per batch than it
// asks for), at the short last batch, and at the end, with 2 components and lent views.
TEST(EvenSplit, NextManyCutsWhatNextWould) {
  const int64_t rows = 23;  // batches of 6: the last has 5 rows
  Tensor a = Tensor::allocate(DType::kInt64, Shape{rows});
  Tensor b = Tensor::allocate(DType::kInt32, Shape{rows, 3});
  for (int64_t i = 0; i < rows; ++i) {
    a.mutable_data_as<int64_t>()[i] = i;
    for (int j = 0; j < 3; ++j)
      b.mutable_data_as<int32_t>()[i * 3 + j] = static_cast<int32_t>(100 * i + j);
  }
  const DatasetPtr batches = make_batch(make_from_tensor_slices({a, b}), 6, false);
  // A piece as text: its shapes and values, read at once (a lent view lives with its step).
  auto describe = [](const Element& piece) {
    std::string out;
    for (const Tensor& t : piece) {
      out += t.shape().to_string() + ":";
      for (int64_t i = 0; i < t.num_elements(); ++i)
        out += std::to_string(t.dtype() == DType::kInt64 ? t.data_as<int64_t>()[i]
                                                         : t.data_as<int32_t>()[i]) +
               ",";
    }
    return out;
  };
  struct Case {
    int64_t pieces;
    std::vector<int64_t> keep;
  };
  for (const Case& c : {Case{4, {0, 1, 2, 3}}, Case{4, {1, 3}}, Case{3, {0, 1, 2}}, Case{1, {0}}}) {
    for (bool lend : {false, true}) {
      // What the pieces hold, from the definition: piece i of a batch of r rows has rows
      // [min(i p, r), min(i p + p, r)) with p = ceil(r / pieces).
      std::vector<std::string> expected;
      for (int64_t first = 0; first < rows; first += 6) {
        const int64_t r = std::min<int64_t>(6, rows - first), p = (r + c.pieces - 1) / c.pieces;
        for (int64_t i : c.keep) {
          const int64_t begin = std::min(i * p, r), end = std::min(begin + p, r);
          expected.push_back(
              describe({a.slice(first + begin, first + end), b.slice(first + begin, first + end)}));
        }
      }
      std::vector<std::string> one_by_one;
      {
        auto split = make_even_split(batches->make_iterator({}), c.pieces, c.keep, false, lend);
        Element piece;
        while (split->next(piece)) one_by_one.push_back(describe(piece));
      }
      EXPECT_EQ(one_by_one, expected) << c.pieces << " pieces, keep " << c.keep.size();
      for (size_t n : {1u, 2u, 3u, 4u, 5u}) {
        auto split = make_even_split(batches->make_iterator({}), c.pieces, c.keep, false, lend);
        std::vector<Element> step(n);
        std::vector<std::string> many;
        for (;;) {
          const size_t got = split->next_many(step.data(), n);
          ASSERT_LE(got, n);
          for (size_t k = 0; k < got; ++k) many.push_back(describe(step[k]));
          for (size_t k = got; k < n; ++k) EXPECT_TRUE(step[k].empty()) << k;  // no piece
          if (got < n) break;
        }
        EXPECT_EQ(many, one_by_one)
            << c.pieces << " pieces, keep " << c.keep.size() << ", n " << n << ", lend " << lend;
        EXPECT_EQ(split->next_many(step.data(), n), 0u);  // and it stays at the end
      }
    }
  }
}

TEST(SpecExamples, FromTensorsRepeat100Batch16On4Replicas) {
  Tensor one = Tensor::allocate(DType::kFloat32, Shape{1});
  *one.mutable_data_as<float>() = 1.0f;
  DatasetPtr ds = make_batch(make_repeat(make_from_tensors({one, one}), 100), 16, false);
  auto strategy = make_strategy({"CPU:0", "CPU:1", "CPU:2", "CPU:3"}, nullptr, 0);
  DistributedIterator it(distribute_dataset(strategy, ds, {}));
  std::vector<Element> step;
  int steps = 0;
  while (it.next(step)) {
    const int64_t rows = steps < 6 ? 4 : 1;
    for (const auto& piece : step) {
      ASSERT_EQ(piece.size(), 2u);
      EXPECT_EQ(piece[0].shape(), (Shape{rows, 1}));
      EXPECT_EQ(piece[1].shape(), (Shape{rows, 1}));
    }
    ++steps;
  }
  EXPECT_EQ(steps, 7);
}

TEST(SpecExamples, RepeatForeverOn2Replicas) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape{4});
  for (int i = 0; i < 4; ++i) t.mutable_data_as<int64_t>()[i] = i + 1;
  DatasetPtr ds = make_batch(make_repeat(make_from_tensor_slices({t}), -1), 4, false);
  auto strategy = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  DistributedIterator it(distribute_dataset(strategy, ds, {}));
  std::vector<Element> step;
  for (int s = 0; s < 50; ++s) {
    ASSERT_TRUE(it.next(step));
    EXPECT_EQ(values_of(step[0]), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(values_of(step[1]), (std::vector<int64_t>{3, 4}));
  }
}

// ---- docs/semantics.md, "The balanced split": under OFF ----

TEST(SpecExamples, BalancedSplit) {
  auto off = [](DatasetPtr d) { return with_policy(std::move(d), AutoShardPolicy::kOff); };
  EXPECT_EQ(single(off(range_batch(8, 4)), 2), "[0,1] | [2,3] ; [4,5] | [6,7]");
  EXPECT_EQ(single(off(range_batch(5, 4)), 2), "[0,1] | [2,3] ; [4] | []");
  EXPECT_EQ(single(off(range_batch(8, 4)), 3), "[0,1] | [2] | [3] ; [4,5] | [6] | [7]");
}

TEST(SpecExamples, OffTwoWorkersSeeEverything) {
  auto runs = run_workers(2, 1, [](auto s) {
    return distribute_dataset(s, with_policy(range_batch(12, 8), AutoShardPolicy::kOff), {});
  });
  for (const auto& run : runs) {
    EXPECT_EQ(run.error, "");
    EXPECT_EQ(notation(run), "[0,1,2,3] ; [4,5,6,7] ; [8,9,10,11]");
  }
}

TEST(SpecExamples, BalancedSizesRotatePerWorker) {
  EXPECT_EQ(balanced_sizes(10, 1, 4, 0), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(balanced_sizes(10, 2, 2, 1), (std::vector<int64_t>{2, 2, 3, 3}));
  EXPECT_EQ(balanced_sizes(1, 1, 2, 0), (std::vector<int64_t>{1, 0}));
}

// ---- docs/semantics.md, "Sharding policies" ----

TEST(AutoShard, DataTwoWorkers) {
  TempFiles files;
  files.add(iota(0, 12));
  auto runs = run_workers(2, 1, [&](auto s) {
    return distribute_dataset(
        s,
        with_policy(make_batch(make_text_lines(files.files()), 4, false), AutoShardPolicy::kData),
        {});
  });
  EXPECT_EQ(notation(runs[0]), "[0,1] ; [4,5] ; [8,9]");
  EXPECT_EQ(notation(runs[1]), "[2,3] ; [6,7] ; [10,11]");
}

TEST(AutoShard, OffOneFileTwoWorkers) {
  TempFiles files;
  files.add(iota(0, 12));
  auto runs = run_workers(2, 1, [&](auto s) {
    return distribute_dataset(
        s, with_policy(make_batch(make_text_lines(files.files()), 4, false), AutoShardPolicy::kOff),
        {});
  });
  for (const auto& run : runs)
    EXPECT_EQ(notation(run), "[0,1] ; [2,3] ; [4,5] ; [6,7] ; [8,9] ; [10,11]");
}

TEST(AutoShard, FileTwoFilesTwoWorkers) {
  TempFiles files;
  files.add(iota(0, 6));
  files.add(iota(6, 12));
  for (auto policy : {AutoShardPolicy::kFile, AutoShardPolicy::kAuto}) {
    auto runs = run_workers(2, 1, [&](auto s) {
      return distribute_dataset(
          s, with_policy(make_batch(make_text_lines(files.files()), 4, false), policy), {});
    });
    EXPECT_EQ(notation(runs[0]), "[0,1] ; [2,3] ; [4,5]");
    EXPECT_EQ(notation(runs[1]), "[6,7] ; [8,9] ; [10,11]");
  }
}

TEST(AutoShard, FileWithTooFewFilesFailsAtIteration) {
  TempFiles files;
  files.add(iota(0, 12));
  auto runs = run_workers(2, 1, [&](auto s) {
    return distribute_dataset(
        s,
        with_policy(make_batch(make_text_lines(files.files()), 4, false), AutoShardPolicy::kFile),
        {});
  });
  for (const auto& run : runs) {
    EXPECT_NE(run.error.find("INVALID_ARGUMENT: Could not apply FILE based sharding: the dataset "
                             "only has 1 file(s), "
                             "which is not enough for the required 2 shards/workers."),
              std::string::npos)
        << run.error;
    EXPECT_NE(run.error.find("DATA or OFF"), std::string::npos);
  }
}

TEST(AutoShard, AutoWithTooFewFilesFallsBackToData) {
  TempFiles files;
  files.add(iota(0, 12));
  auto runs = run_workers(2, 1, [&](auto s) {
    return distribute_dataset(s, make_batch(make_text_lines(files.files()), 4, false), {});
  });
  EXPECT_EQ(notation(runs[0]), "[0,1] ; [4,5] ; [8,9]");
  EXPECT_EQ(notation(runs[1]), "[2,3] ; [6,7] ; [10,11]");
}

TEST(AutoShard, FileWithoutFileSourceIsNotFound) {
  auto runs = run_workers(2, 1, [](auto s) {
    return distribute_dataset(s, with_policy(range_batch(8, 4), AutoShardPolicy::kFile), {});
  });
  for (const auto& run : runs)
    EXPECT_EQ(run.error, "NOT_FOUND: Found an unshardable source dataset: range");
}

TEST(AutoShard, FileOnOneWorkerIsANoOp) {
  EXPECT_EQ(single(with_policy(range_batch(4, 2), AutoShardPolicy::kFile), 2),
            "[0] | [1] ; [2] | [3]");
}

TEST(AutoShard, PlanNamesTheAppliedPolicyAndSplit) {
  auto strategy = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  EXPECT_EQ(
      distribute_dataset(strategy, range_batch(8, 4), {})->plan().description,
      "{\"policy\":\"DATA\",\"split\":\"even\",\"global_batch_size\":4,\"num_replicas_in_sync\":2,"
      "\"num_workers\":1,\"worker_index\":0}");
  EXPECT_NE(distribute_dataset(strategy, with_policy(range_batch(8, 4), AutoShardPolicy::kOff), {})
                ->plan()
                .description.find("\"split\":\"balanced\""),
            std::string::npos);
}

TEST(AutoShard, HintReplacesPlaceholders) {
  auto runs = run_workers(2, 1, [](auto s) {
    DatasetPtr ds = make_batch(make_shard(make_range(0, 8, 1), kShardHint, kShardHint), 2, false);
    return distribute_dataset(s, with_policy(ds, AutoShardPolicy::kHint), {});
  });
  // Each worker batches its shard by G = 2 and the balanced split gives each replica G/N = 1 row.
  EXPECT_EQ(notation(runs[0]), "[0] ; [2] ; [4] ; [6]");
  EXPECT_EQ(notation(runs[1]), "[1] ; [3] ; [5] ; [7]");
}

TEST(AutoShard, HintOutsideDistributionFails) {
  DatasetPtr ds = make_shard(make_range(0, 8, 1), kShardHint, kShardHint);
  try {
    ds->make_iterator({});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFailedPrecondition);
  }
}

TEST(BatchSize, DetectedThroughBatchKeepingNodes) {
  EXPECT_EQ(detect_global_batch_size(make_prefetch(make_repeat(range_batch(8, 4), 2), 1)), 4);
  EXPECT_EQ(
      detect_global_batch_size(make_shuffle(make_take(range_batch(8, 4, true), 1), 3, 1, true)), 4);
  EXPECT_EQ(detect_global_batch_size(make_unbatch(range_batch(8, 4))), -1);
  EXPECT_EQ(detect_global_batch_size(make_rebatch(range_batch(8, 4), {2}, false)), -1);
  EXPECT_EQ(detect_global_batch_size(make_range(0, 3, 1)), -1);
}

// ---- docs/semantics.md, "Partial batches and the end of data": across workers ----

TEST(PartialBatches, TwoWorkersData) {
  auto runs =
      run_workers(2, 1, [](auto s) { return distribute_dataset(s, range_batch(9, 2), {}); });
  EXPECT_EQ(notation(runs[0]), "[0] ; [2] ; [4] ; [6] ; [8]");
  EXPECT_EQ(notation(runs[1]), "[1] ; [3] ; [5] ; [7] ; []");
}

TEST(PartialBatches, DummyKeepsKnownInnerDimensions) {
  Tensor t = Tensor::zeros(DType::kFloat32, Shape{5, 3});
  DatasetPtr ds = make_batch(make_from_tensor_slices({t}), 4, false);  // (None, 3)
  auto strategy = make_strategy({"CPU:0", "CPU:1", "CPU:2", "CPU:3"}, nullptr, 0);
  DistributedIterator it(distribute_dataset(strategy, ds, {}));
  std::vector<Element> step;
  ASSERT_TRUE(it.next(step));
  ASSERT_TRUE(it.next(step));  // the batch of 1 row
  EXPECT_EQ(step[0][0].shape(), (Shape{1, 3}));
  for (int r = 1; r < 4; ++r) {
    EXPECT_EQ(step[r][0].shape(), (Shape{0, 3}));
    EXPECT_EQ(step[r][0].dtype(), DType::kFloat32);
  }
  EXPECT_FALSE(it.next(step));
  EXPECT_FALSE(it.next(step));  // stays ended
}

TEST(ElementSpec, UnknownBatchDimensionPerReplica) {
  auto strategy = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  auto dist = distribute_dataset(strategy, range_batch(10, 2), {});
  EXPECT_EQ(to_string(dist->element_spec()), "(int64[None])");
  auto exact = distribute_dataset(strategy, range_batch(10, 2, true), {});
  EXPECT_EQ(to_string(exact->element_spec()), "(int64[1])");
}

// ---- errors ----

void expect_error(Code code, const std::string& fragment, const std::function<void()>& fn) {
  try {
    fn();
    FAIL() << "expected " << code_name(code) << " containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Errors, ScalarsCannotBeRebatched) {
  auto strategy = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  expect_error(Code::kInvalidArgument, "Fix the issue by adding the `batch` transformation",
               [&] { distribute_dataset(strategy, make_range(0, 5, 1), {}); });
}

TEST(Errors, ComponentsWithDifferentLeadingSizes) {
  Tensor a = Tensor::zeros(DType::kInt64, Shape{4});
  Tensor b = Tensor::zeros(DType::kInt64, Shape{3});
  auto strategy = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  DistributedIterator it(distribute_dataset(strategy, make_from_tensors({a, b}), {}));
  std::vector<Element> step;
  expect_error(Code::kInvalidArgument, "same leading size", [&] { it.next(step); });
  expect_error(Code::kInvalidArgument, "same leading size", [&] { it.next(step); });  // sticky
}

TEST(Errors, PerReplicaBatchSizeNotDivisible) {
  InputContext ctx{1, 0, 3};
  EXPECT_EQ(ctx.per_replica_batch_size(9), 3);
  expect_error(Code::kInvalidArgument,
               "The `global_batch_size` 10 is not divisible by `num_replicas_in_sync` 3",
               [&] { ctx.per_replica_batch_size(10); });
}

TEST(Errors, InputOptionCombinations) {
  auto strategy = make_strategy({"CPU:0"}, nullptr, 0);
  auto fn = [](const InputContext&) { return range_batch(4, 2); };
  InputOptions per_replica;
  per_replica.replication_mode = ReplicationMode::kPerReplica;
  expect_error(Code::kUnimplemented, "only supported by distribute_datasets_from_function",
               [&] { distribute_dataset(strategy, range_batch(4, 2), per_replica); });
  InputOptions place;
  place.place_dataset_on_device = true;
  expect_error(Code::kInvalidArgument, "requires replication_mode PER_REPLICA",
               [&] { distribute_datasets_from_function(strategy, fn, place); });
  InputOptions both = per_replica;
  both.place_dataset_on_device = true;
  expect_error(Code::kInvalidArgument, "cannot both be set",
               [&] { distribute_datasets_from_function(strategy, fn, both); });
  both.fetch_to_device = false;
  EXPECT_NO_THROW(distribute_datasets_from_function(strategy, fn, both));
}

// Without a usable GPU (a build without CUDA, no driver, no device), asking GPU:0 to hold
// data is FAILED_PRECONDITION naming the device. Where a GPU is usable that is not an
// error: Errors.GpuWhereUsableHoldsTheData checks the converse there.
TEST(Errors, GpuWithoutCudaIsAClearError) {
  if (gpu::availability().usable)
    GTEST_SKIP() << "a GPU is usable here (see Errors.GpuWhereUsableHoldsTheData)";
  auto strategy = make_strategy({"GPU:0", "CPU:0"}, nullptr, 0);
  expect_error(Code::kFailedPrecondition, "GPU:0",
               [&] { distribute_dataset(strategy, range_batch(9, 4), {}); });
  InputOptions host;
  host.fetch_to_device = false;
  auto runs = run_workers(
      1, 2, [&](auto) { return distribute_dataset(strategy, range_batch(9, 4), host); });
  EXPECT_EQ(notation(runs[0]), "[0,1] | [2,3] ; [4,5] | [6,7] ; [8] | []");
}

// Where a GPU is usable, the pipeline the test above refuses runs: the GPU replica's pieces
// arrive in that device's memory, the CPU replica's on the host, with the same values as on
// CPU replicas.
TEST(Errors, GpuWhereUsableHoldsTheData) {
  if (!gpu::availability().usable) GTEST_SKIP() << "no usable GPU: " << gpu::availability().reason;
  auto strategy = make_strategy({"GPU:0", "CPU:0"}, nullptr, 0);
  DistributedIterator it(distribute_dataset(strategy, range_batch(9, 4), {}));
  WorkerRun run;
  std::vector<Element> step;
  while (it.next(step)) {
    ASSERT_EQ(step.size(), 2u);
    const Tensor& on_gpu = step[0].at(0);
    EXPECT_EQ(on_gpu.buffer()->kind(), MemoryKind::kDevice);
    EXPECT_EQ(on_gpu.buffer()->device(), 0);
    const auto& host_buffer = step[1].at(0).buffer();
    EXPECT_TRUE(host_buffer == nullptr || host_buffer->kind() != MemoryKind::kDevice);
    run.steps.push_back({values_of(Element{gpu::copy_to_host(on_gpu)}), values_of(step[1])});
  }
  EXPECT_EQ(notation(run), "[0,1] | [2,3] ; [4,5] | [6,7] ; [8] | []");
}

TEST(Errors, DevicesAreValidated) {
  expect_error(Code::kInvalidArgument, "invalid device name 'TPU:0'",
               [] { make_strategy({"TPU:0"}, nullptr, 0); });
  expect_error(Code::kInvalidArgument, "listed twice", [] {
    make_strategy({"CPU:0", "/cpu:0"}, nullptr, 0);
  });
  auto s = make_strategy({"/job:worker/replica:0/task:0/device:GPU:1", "cpu:3"}, nullptr, 0);
  EXPECT_EQ(s->device_names(), (std::vector<std::string>{"GPU:1", "CPU:3"}));
}

TEST(Errors, WorkerIndexClaimedOnce) {
  auto c = make_in_process_collective(2, 1000);
  auto s = make_strategy({}, c, 0);
  expect_error(Code::kAlreadyExists, "worker 0", [&] { make_strategy({}, c, 0); });
  s.reset();
  EXPECT_NO_THROW(make_strategy({}, c, 0));
  expect_error(Code::kInvalidArgument, "worker_index", [&] { make_strategy({}, c, 2); });
}

// A map that fails on worker 1's third element must stop every worker with that error.
TEST(Errors, CallbackFailureInOneWorkerReachesAll) {
  auto started = std::chrono::steady_clock::now();
  auto runs = run_workers(3, 2, [](std::shared_ptr<const Strategy> s) {
    int worker = s->worker_index();
    auto fn = std::make_shared<const MapFn>([worker](const Element& e) -> Element {
      if (worker == 1 && e[0].data_as<int64_t>()[0] >= 2)
        raise(Code::kAborted, "map failed on worker 1");
      return e;
    });
    DatasetPtr ds = make_batch(make_map(make_range(0, 1000, 1), fn, {}, 1, true), 6, false);
    return distribute_dataset(s, with_policy(ds, AutoShardPolicy::kOff), {});
  });
  for (const auto& run : runs) EXPECT_EQ(run.error, "ABORTED: map failed on worker 1");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST(Errors, AbsentWorkerTimesOut) {
  auto c = make_in_process_collective(2, 200);
  auto s = make_strategy({}, c, 0);
  DistributedIterator it(distribute_dataset(s, range_batch(4, 2), {}));
  std::vector<Element> step;
  expect_error(Code::kDeadlineExceeded, "for worker 1 at step 0", [&] { it.next(step); });
}

TEST(Errors, AbortReleasesWaitingWorkersAtOnce) {
  auto c = make_in_process_collective(2, 60000);
  auto s = make_strategy({}, c, 0);
  DistributedIterator it(distribute_dataset(s, range_batch(4, 2), {}));
  auto started = std::chrono::steady_clock::now();
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    c->abort(Error(Code::kCancelled, "worker 1 could not build its dataset"));
  });
  std::vector<Element> step;
  expect_error(Code::kCancelled, "worker 1 could not build its dataset", [&] { it.next(step); });
  aborter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
}

TEST(Lifetime, IteratorOutlivesDatasetAndStrategy) {
  auto strategy = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  auto dist = distribute_dataset(strategy, range_batch(4, 4), {});
  DistributedIterator it(dist);
  dist.reset();
  strategy.reset();
  std::vector<Element> step;
  ASSERT_TRUE(it.next(step));
  EXPECT_EQ(values_of(step[1]), (std::vector<int64_t>{2, 3}));
}

// ---- docs/semantics.md, "distribute_datasets_from_function" ----

TEST(FromFunction, PerWorkerContextsAndDequeueOrder) {
  std::vector<std::string> contexts(2);
  auto runs = run_workers(2, 2, [&](auto s) {
    return distribute_datasets_from_function(
        s,
        [&](const InputContext& ctx) {
          contexts[static_cast<size_t>(ctx.input_pipeline_id)] =
              str_cat(ctx.num_input_pipelines, "/", ctx.input_pipeline_id, "/",
                      ctx.num_replicas_in_sync, "/", ctx.per_replica_batch_size(8));
          return make_batch(
              make_shard(make_range(0, 10, 1), ctx.num_input_pipelines, ctx.input_pipeline_id),
              ctx.per_replica_batch_size(8), false);
        },
        {});
  });
  EXPECT_EQ(contexts[0], "2/0/4/2");
  EXPECT_EQ(contexts[1], "2/1/4/2");
  EXPECT_EQ(notation(runs[0]), "[0,2] | [4,6] ; [8] | []");
  EXPECT_EQ(notation(runs[1]), "[1,3] | [5,7] ; [9] | []");
}

TEST(FromFunction, PerReplicaPipelines) {
  InputOptions o;
  o.replication_mode = ReplicationMode::kPerReplica;
  o.fetch_to_device = false;
  std::vector<int> ids;
  auto runs = run_workers(1, 3, [&](auto s) {
    return distribute_datasets_from_function(
        s,
        [&](const InputContext& ctx) {
          ids.push_back(ctx.input_pipeline_id);
          EXPECT_EQ(ctx.num_input_pipelines, 3);
          return make_batch(make_range(ctx.input_pipeline_id * 10,
                                       ctx.input_pipeline_id * 10 + 1 + ctx.input_pipeline_id, 1),
                            1, false);
        },
        o);
  });
  EXPECT_EQ(ids, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(notation(runs[0]), "[0] | [10] | [20] ; [] | [11] | [21] ; [] | [] | [22]");
}

// docs/semantics.md, "Read-ahead": cheap elements of a pipeline without user code are made on
// the caller's thread, but a user function (here a map) always runs on the read-ahead thread,
// where a cancel can leave it and end the caller's wait.
TEST(ReadAhead, UserFunctionsRunOnTheReadAheadThread) {
  const auto caller = std::this_thread::get_id();
  std::mutex mu;
  std::vector<std::thread::id> ran_on;
  auto fn = std::make_shared<const MapFn>([&](const Element& in) {
    std::lock_guard<std::mutex> lock(mu);
    ran_on.push_back(std::this_thread::get_id());
    return in;
  });
  for (int R : {1, 2}) {
    ran_on.clear();
    DatasetPtr ds = make_batch(make_map(make_range(0, 40, 1), fn, {}, 1, true), 4, false);
    auto strategy = make_strategy(
        R == 1 ? std::vector<std::string>{"CPU:0"} : std::vector<std::string>{"CPU:0", "CPU:1"},
        nullptr, 0);
    DistributedIterator it(distribute_dataset(strategy, ds, {}));
    std::vector<Element> step;
    int64_t rows = 0;
    while (it.next(step))
      for (const auto& piece : step) rows += piece.at(0).shape()[0];
    EXPECT_EQ(rows, 40);
    ASSERT_EQ(ran_on.size(), 40u);
    for (auto id : ran_on) EXPECT_NE(id, caller) << R;
  }
}

// zip, concatenate, sample/choose_from_datasets, cache and ignore_errors run no user code of
// their own, but a user function in any of their inputs still keeps the read-ahead on its
// thread: the walk looks into every input.
TEST(ReadAhead, UserFunctionsInAnyInputOfSeveralInputNodes) {
  const auto caller = std::this_thread::get_id();
  std::mutex mu;
  std::vector<std::thread::id> ran_on;
  auto fn = std::make_shared<const MapFn>([&](const Element& in) {
    std::lock_guard<std::mutex> lock(mu);
    ran_on.push_back(std::this_thread::get_id());
    return in;
  });
  auto mapped = [&] { return make_map(make_range(0, 8, 1), fn, {}, 1, true); };
  const std::vector<DatasetPtr> pipelines = {
      make_zip({make_range(0, 8, 1), mapped()}), make_concatenate(make_range(0, 8, 1), mapped()),
      make_sample_from_datasets({make_range(0, 8, 1), mapped()}, {}, 3, false),
      make_choose_from_datasets(make_repeat(make_range(0, 2, 1), 8),
                                {make_range(0, 8, 1), mapped()}, true),
      make_ignore_errors(make_cache(mapped(), ""), false)};
  for (const DatasetPtr& ds : pipelines) {
    ran_on.clear();
    auto strategy = make_strategy({"CPU:0"}, nullptr, 0);
    DistributedIterator it(distribute_dataset(strategy, make_batch(ds, 4, false), {}));
    std::vector<Element> step;
    while (it.next(step)) {
    }
    ASSERT_EQ(ran_on.size(), 8u) << ds->name();
    for (auto id : ran_on) EXPECT_NE(id, caller) << ds->name();
  }
}

}  // namespace
}  // namespace dinput::testing
