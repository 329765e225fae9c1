// distribute_datasets_from_function under PER_REPLICA (issue 14 item 3): an exhausted
// replica of scalar data is never given an invented value, and replicas whose dtypes or
// ranks differ are rejected, naming the replica.
#include <gtest/gtest.h>

#include "harness.h"

namespace dinput::testing {
namespace {

InputOptions per_replica() {
  InputOptions o;
  o.replication_mode = ReplicationMode::kPerReplica;
  o.fetch_to_device = false;
  return o;
}

// Replica i reads range(10 * i, 10 * i + 1 + i): replica 0 runs out first.
DatasetPtr uneven_scalars(const InputContext& ctx) {
  return make_range(ctx.input_pipeline_id * 10, ctx.input_pipeline_id * 11 + 1, 1);
}

TEST(FromFunction, ExhaustedScalarReplicaFailsInsteadOfAnInventedZero) {
  auto runs = run_workers(1, 2, [](auto s) {
    return distribute_datasets_from_function(s, uneven_scalars, per_replica());
  });
  EXPECT_EQ(notation(runs[0]), "[0] | [10]");
  EXPECT_EQ(runs[0].error.rfind("FAILED_PRECONDITION", 0), 0u) << runs[0].error;
  EXPECT_NE(runs[0].error.find("replica 0 has no more data"), std::string::npos) << runs[0].error;
}

TEST(FromFunction, ExhaustedScalarReplicaFailsOnEveryWorker) {
  auto runs = run_workers(2, 1, [](auto s) {
    return distribute_datasets_from_function(s, uneven_scalars, per_replica());
  });
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(notation(runs[0]), "[0]");
  EXPECT_EQ(notation(runs[1]), "[10]");
  EXPECT_EQ(runs[0].error, runs[1].error);
  EXPECT_NE(runs[1].error.find("replica 0 has no more data"), std::string::npos) << runs[1].error;
}

TEST(FromFunction, ExhaustedBatchedReplicaGetsZeroRows) {
  auto runs = run_workers(1, 2, [](auto s) {
    return distribute_datasets_from_function(
        s, [](const InputContext& ctx) { return make_batch(uneven_scalars(ctx), 1, false); },
        per_replica());
  });
  EXPECT_EQ(runs[0].error, "");
  EXPECT_EQ(notation(runs[0]), "[0] | [10] ; [] | [11]");
}

TEST(FromFunction, ReplicasWithDifferentDtypesOrRanksAreRejected) {
  Tensor word = Tensor::allocate(DType::kBytes, Shape());
  word.set_string(0, "x");
  auto bytes_on_1 = [&](const InputContext& ctx) {
    return ctx.input_pipeline_id == 1 ? make_from_tensors({word}) : make_range(0, 3, 1);
  };
  auto batched_on_2 = [](const InputContext& ctx) {
    return ctx.input_pipeline_id == 2 ? make_batch(make_range(0, 3, 1), 2, false)
                                      : make_range(0, 3, 1);
  };
  auto strategy = make_strategy({"CPU:0", "CPU:1", "CPU:2"}, nullptr, 0);
  for (const auto& [fn, replica] : {std::make_pair(DatasetFn(bytes_on_1), "for replica 1 "),
                                    std::make_pair(DatasetFn(batched_on_2), "for replica 2 ")}) {
    try {
      distribute_datasets_from_function(strategy, fn, per_replica());
      ADD_FAILURE() << "accepted replicas with different element specs";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(replica), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace dinput::testing
