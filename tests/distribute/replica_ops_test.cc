// distribute_values, run and reduce (docs/semantics.md,
// "Per-replica values, run and reduce"), on one and several workers.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "distribute/replica_ops.h"
#include "harness.h"

namespace dinput::testing {
namespace {

Tensor f32(std::vector<float> v, Shape shape) {
  Tensor t = Tensor::allocate(DType::kFloat32, shape);
  std::copy(v.begin(), v.end(), t.mutable_data_as<float>());
  return t;
}

TEST(ReplicaOps, ValuesFromFunctionSeeTheirContext) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  auto values = distribute_values(*s, [](const ReplicaContext& ctx) {
    Tensor t = Tensor::allocate(DType::kInt64, Shape());
    *t.mutable_data_as<int64_t>() = ctx.num_replicas_in_sync * 10 + ctx.replica_id_in_sync_group;
    return Element{t};
  });
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0][0].data_as<int64_t>()[0], 20);
  EXPECT_EQ(values[1][0].data_as<int64_t>()[0], 21);
}

TEST(ReplicaOps, RunCallsReplicasConcurrently) {
  auto s = make_strategy({"CPU:0", "CPU:1", "CPU:2"}, nullptr, 0);
  std::atomic<int> arrived{0};
  auto results = run_on_replicas(
      *s,
      [&](const ReplicaContext& ctx, const Element*) {
        // Each call waits (bounded) until all three are inside: only concurrent calls pass.
        arrived++;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (arrived.load() < 3 && std::chrono::steady_clock::now() < deadline)
          std::this_thread::yield();
        Tensor t = Tensor::allocate(DType::kInt64, Shape());
        *t.mutable_data_as<int64_t>() = arrived.load() == 3 ? ctx.replica_id_in_sync_group : -1;
        return Element{t};
      },
      nullptr);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(results[static_cast<size_t>(r)][0].data_as<int64_t>()[0], r);
}

TEST(ReplicaOps, RunReportsTheFirstFailingReplica) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  try {
    run_on_replicas(
        *s,
        [](const ReplicaContext& ctx, const Element*) -> Element {
          raise(Code::kAborted, "replica ", ctx.replica_id_in_sync_group, " failed");
        },
        nullptr);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "replica 0 failed");
  }
}

TEST(ReplicaOps, SumOfLossesPerStep) {
  // The tutorial: 2 replicas each returning loss 0.1, summed: 0.2.
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  std::vector<Element> losses = {{f32({0.1f}, Shape())}, {f32({0.1f}, Shape())}};
  Element sum = reduce(*s, ReduceOp::kSum, losses, kAxisNone);
  EXPECT_FLOAT_EQ(sum[0].data_as<float>()[0], 0.2f);
  EXPECT_EQ(sum[0].dtype(), DType::kFloat32);
}

TEST(ReplicaOps, MeanOverAxis0DividesByRows) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  std::vector<Element> v = {{f32({1, 2, 3, 4, 5, 6}, Shape{3, 2})}, {f32({7, 8}, Shape{1, 2})}};
  Element mean = reduce(*s, ReduceOp::kMean, v, 0);
  ASSERT_EQ(mean[0].shape(), Shape{2});
  EXPECT_FLOAT_EQ(mean[0].data_as<float>()[0], (1 + 3 + 5 + 7) / 4.0f);
  EXPECT_FLOAT_EQ(mean[0].data_as<float>()[1], (2 + 4 + 6 + 8) / 4.0f);
  Element elementwise =
      reduce(*s, ReduceOp::kMean, {{f32({1, 2}, Shape{2})}, {f32({3, 6}, Shape{2})}}, kAxisNone);
  EXPECT_FLOAT_EQ(elementwise[0].data_as<float>()[1], 4.0f);
}

TEST(ReplicaOps, IntegerSumIsExactAndMeanIsFloat64) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  auto i64 = [](int64_t v) {
    Tensor t = Tensor::allocate(DType::kInt64, Shape());
    *t.mutable_data_as<int64_t>() = v;
    return Element{t};
  };
  const int64_t big = (int64_t{1} << 60) + 1;
  Element sum = reduce(*s, ReduceOp::kSum, {i64(big), i64(1)}, kAxisNone);
  EXPECT_EQ(sum[0].data_as<int64_t>()[0], big + 1);
  Element mean = reduce(*s, ReduceOp::kMean, {i64(1), i64(2)}, kAxisNone);
  EXPECT_EQ(mean[0].dtype(), DType::kFloat64);
  EXPECT_DOUBLE_EQ(mean[0].data_as<double>()[0], 1.5);
}

template <typename T>
Element scalar_of(DType dtype, T v) {
  Tensor t = Tensor::allocate(dtype, Shape());
  *t.mutable_data_as<T>() = v;
  return Element{t};
}

// Issue 14 item 6: integer sums are exact or fail; MEAN is computed from the exact sum.
TEST(ReplicaOps, IntegerOverflowIsAnErrorNamingOpAndDtype) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  auto expect_overflow = [&](const std::vector<Element>& v, const std::string& dtype,
                             const std::string& sum) {
    try {
      reduce(*s, ReduceOp::kSum, v, kAxisNone);
      ADD_FAILURE() << "no error for a " << dtype << " sum of " << sum;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument);
      const std::string m = e.what();
      EXPECT_NE(m.find("SUM"), std::string::npos) << m;
      EXPECT_NE(m.find("overflows " + dtype), std::string::npos) << m;
      EXPECT_NE(m.find("exact sum is " + sum), std::string::npos) << m;
    }
  };
  expect_overflow({scalar_of<int8_t>(DType::kInt8, 127), scalar_of<int8_t>(DType::kInt8, 127)},
                  "int8", "254");
  expect_overflow(
      {scalar_of<int64_t>(DType::kInt64, INT64_MAX), scalar_of<int64_t>(DType::kInt64, 1)}, "int64",
      "9223372036854775808");
  expect_overflow(
      {scalar_of<int64_t>(DType::kInt64, INT64_MIN), scalar_of<int64_t>(DType::kInt64, -1)},
      "int64", "-9223372036854775809");
  expect_overflow(
      {scalar_of<uint64_t>(DType::kUInt64, UINT64_MAX), scalar_of<uint64_t>(DType::kUInt64, 1)},
      "uint64", "18446744073709551616");
  expect_overflow({scalar_of<uint8_t>(DType::kUInt8, 200), scalar_of<uint8_t>(DType::kUInt8, 100)},
                  "uint8", "300");

  // In range: exact, including uint64 values above INT64_MAX and sums through an
  // intermediate that would overflow pairwise.
  Element u = reduce(
      *s, ReduceOp::kSum,
      {scalar_of<uint64_t>(DType::kUInt64, UINT64_MAX - 5), scalar_of<uint64_t>(DType::kUInt64, 5)},
      kAxisNone);
  EXPECT_EQ(u[0].data_as<uint64_t>()[0], UINT64_MAX);
  Element i8 = reduce(*s, ReduceOp::kSum,
                      {scalar_of<int8_t>(DType::kInt8, 127), scalar_of<int8_t>(DType::kInt8, -128)},
                      kAxisNone);
  EXPECT_EQ(i8[0].data_as<int8_t>()[0], -1);
}

TEST(ReplicaOps, IntegerMeanUsesTheExactSum) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  Element mean = reduce(
      *s, ReduceOp::kMean,
      {scalar_of<int64_t>(DType::kInt64, INT64_MAX), scalar_of<int64_t>(DType::kInt64, INT64_MAX)},
      kAxisNone);
  ASSERT_EQ(mean[0].dtype(), DType::kFloat64);
  EXPECT_DOUBLE_EQ(mean[0].data_as<double>()[0], 9223372036854775807.0);
  Element umean = reduce(*s, ReduceOp::kMean,
                         {scalar_of<uint64_t>(DType::kUInt64, UINT64_MAX),
                          scalar_of<uint64_t>(DType::kUInt64, UINT64_MAX)},
                         kAxisNone);
  EXPECT_DOUBLE_EQ(umean[0].data_as<double>()[0], 18446744073709551615.0);
  Element i8 = reduce(*s, ReduceOp::kMean,
                      {scalar_of<int8_t>(DType::kInt8, 127), scalar_of<int8_t>(DType::kInt8, 127)},
                      kAxisNone);
  EXPECT_DOUBLE_EQ(i8[0].data_as<double>()[0], 127.0);
}

TEST(ReplicaOps, ExactIntegerSumAcrossWorkers) {
  // Two workers of two replicas; worker w's replicas both hold values[w]. Partial sums that
  // only fit in 128 bits are fine when the total is back in range; a total out of range
  // fails on every worker.
  auto run = [](int64_t w0, int64_t w1, std::vector<int64_t>& sums,
                std::vector<std::string>& errors) {
    const int W = 2;
    auto c = make_in_process_collective(W, 10000);
    sums.assign(W, 0);
    errors.assign(W, "");
    std::vector<std::thread> threads;
    for (int w = 0; w < W; ++w)
      threads.emplace_back([&, w] {
        auto s = make_strategy({"CPU:0", "CPU:1"}, c, w);
        const int64_t v = w == 0 ? w0 : w1;
        try {
          sums[static_cast<size_t>(w)] =
              reduce(*s, ReduceOp::kSum,
                     {scalar_of<int64_t>(DType::kInt64, v), scalar_of<int64_t>(DType::kInt64, v)},
                     kAxisNone)[0]
                  .data_as<int64_t>()[0];
        } catch (const Error& e) {
          errors[static_cast<size_t>(w)] = e.what();
        }
      });
    for (auto& t : threads) t.join();
  };
  std::vector<int64_t> sums;
  std::vector<std::string> errors;
  run(INT64_MAX, INT64_MIN, sums, errors);
  for (int w = 0; w < 2; ++w) {
    EXPECT_EQ(errors[static_cast<size_t>(w)], "");
    EXPECT_EQ(sums[static_cast<size_t>(w)], -2);  // 2 * INT64_MAX + 2 * INT64_MIN
  }
  run(INT64_MAX, 1, sums, errors);
  for (int w = 0; w < 2; ++w)
    EXPECT_NE(errors[static_cast<size_t>(w)].find("overflows int64"), std::string::npos)
        << "worker " << w;
}

TEST(ReplicaOps, MismatchedShapesAndBytesAreRejected) {
  auto s = make_strategy({"CPU:0", "CPU:1"}, nullptr, 0);
  EXPECT_THROW(
      reduce(*s, ReduceOp::kSum, {{f32({1, 2}, Shape{2})}, {f32({1}, Shape{1})}}, kAxisNone),
      Error);
  Tensor b = Tensor::allocate(DType::kBytes, Shape());
  EXPECT_THROW(reduce(*s, ReduceOp::kSum, {{b}, {b}}, kAxisNone), Error);
  EXPECT_THROW(reduce(*s, ReduceOp::kSum, {{f32({1}, Shape())}}, kAxisNone),
               Error);  // 1 value, 2 replicas
  EXPECT_THROW(reduce(*s, ReduceOp::kSum, {{f32({1}, Shape())}, {f32({1}, Shape())}}, 1), Error);
}

TEST(ReplicaOps, ReduceAcrossWorkersGivesEveryWorkerTheSameResult) {
  const int W = 3;
  auto c = make_in_process_collective(W, 10000);
  std::vector<double> sums(W), means(W);
  std::vector<std::thread> threads;
  for (int w = 0; w < W; ++w)
    threads.emplace_back([&, w] {
      auto s = make_strategy({"CPU:0", "CPU:1"}, c, w);
      // Replica r of worker w holds rows [w+r] (1 row) — total rows 6, values 0..? below.
      std::vector<Element> v;
      for (int r = 0; r < 2; ++r) v.push_back({f32({static_cast<float>(w * 2 + r)}, Shape{1})});
      sums[static_cast<size_t>(w)] = reduce(*s, ReduceOp::kSum, v, 0)[0].data_as<float>()[0];
      means[static_cast<size_t>(w)] =
          reduce(*s, ReduceOp::kMean, v, kAxisNone)[0].data_as<float>()[0];
    });
  for (auto& t : threads) t.join();
  for (int w = 0; w < W; ++w) {
    EXPECT_FLOAT_EQ(sums[static_cast<size_t>(w)], 15.0f);       // 0+1+...+5
    EXPECT_FLOAT_EQ(means[static_cast<size_t>(w)], 15.0f / 6);  // divided by N = 6
  }
}

// Two workers of one replica each: a CUDA build first agrees, per reduce, whether NCCL may
// sum a component across the workers (here, on CPUs, never). That extra exchange must keep
// both workers' channel in step over a run of reduces of different shapes and ops, and leave
// the host path's results as they were.
TEST(ReplicaOps, ReduceAcrossTwoWorkersOfOneReplicaStaysInStep) {
  auto c = make_in_process_collective(2, 10000);
  std::vector<std::vector<float>> got(2);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w)
    threads.emplace_back([&, w] {
      try {
        auto s = make_strategy({"CPU:0"}, c, w);
        for (int round = 0; round < 20; ++round) {
          const float x = static_cast<float>(w + round);
          const Element value = {f32({x, 2 * x}, Shape{2}), f32({x}, Shape())};
          const ReduceOp op = round % 2 ? ReduceOp::kMean : ReduceOp::kSum;
          const Element r = reduce(*s, op, {value}, kAxisNone);
          got[static_cast<size_t>(w)].push_back(r[0].data_as<float>()[1]);
          got[static_cast<size_t>(w)].push_back(r[1].data_as<float>()[0]);
        }
      } catch (const Error& e) {
        errors[static_cast<size_t>(w)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
  std::vector<float> expected;
  for (int round = 0; round < 20; ++round) {
    const float total = static_cast<float>(2 * round + 1);  // round + (1 + round)
    const float divisor = round % 2 ? 2.0f : 1.0f;
    expected.push_back(2 * total / divisor);
    expected.push_back(total / divisor);
  }
  EXPECT_EQ(got[0], expected);
  EXPECT_EQ(got[1], expected);
}

}  // namespace
}  // namespace dinput::testing
