// Strategy and collective sizes (issue 14 item 13): the duplicate-device check is one pass,
// and counts past the documented bounds fail at once with INVALID_ARGUMENT instead of
// running for minutes or exhausting memory.
#include <gtest/gtest.h>

#include <dinput.h>

#include <chrono>

#include "harness.h"

namespace dinput::testing {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(StrategySize, HugeCpuReplicaCountFailsFast) {
  dinput_collective_t* c = nullptr;
  ASSERT_EQ(dinput_collective_new_in_process(&c, 1, 0), DINPUT_OK);
  dinput_strategy_t* s = nullptr;
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(dinput_strategy_new_multi_worker_cpu(&s, c, 0, 1 << 30), DINPUT_INVALID_ARGUMENT);
  EXPECT_LT(seconds_since(start), 1.0);
  EXPECT_NE(std::string(dinput_last_error_message()).find("at most 4096 replicas per worker"),
            std::string::npos)
      << dinput_last_error_message();
  EXPECT_EQ(s, nullptr);
  dinput_collective_free(c);
}

TEST(StrategySize, TooManyDeviceNamesAreRejected) {
  std::vector<std::string> names;
  for (int i = 0; i < 262144; ++i) names.push_back("CPU:" + std::to_string(i));
  auto start = std::chrono::steady_clock::now();
  try {
    make_strategy(names, nullptr, 0);
    ADD_FAILURE() << "262144 replicas accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("got 262144"), std::string::npos) << e.what();
  }
  EXPECT_LT(seconds_since(start), 1.0);
}

TEST(StrategySize, DuplicateFoundAmongTheMostDevicesAllowed) {
  std::vector<std::string> names;
  for (int i = 0; i < kMaxLocalReplicas - 1; ++i) names.push_back("CPU:" + std::to_string(i));
  EXPECT_EQ(make_strategy(names, nullptr, 0)->num_local_replicas(), kMaxLocalReplicas - 1);
  names.push_back("/job:worker/device:cpu:17");
  try {
    make_strategy(names, nullptr, 0);
    ADD_FAILURE() << "duplicate CPU:17 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device CPU:17 is listed twice"), std::string::npos)
        << e.what();
  }
  // GPU:3 and CPU:3 are different devices.
  EXPECT_EQ(make_strategy({"CPU:3", "GPU:3"}, nullptr, 0)->num_local_replicas(), 2);
}

TEST(StrategySize, WorkerAndReplicasInSyncBounds) {
  dinput_collective_t* c = nullptr;
  EXPECT_EQ(dinput_collective_new_in_process(&c, 1 << 30, 0), DINPUT_INVALID_ARGUMENT);
  EXPECT_EQ(c, nullptr);
  ASSERT_EQ(dinput_collective_new_in_process(&c, kMaxWorkers, 0), DINPUT_OK);
  dinput_strategy_t* s = nullptr;
  EXPECT_EQ(dinput_strategy_new_multi_worker_cpu(&s, c, 0, kMaxWorkers * 32),
            DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(dinput_last_error_message()).find("replicas in sync"), std::string::npos)
      << dinput_last_error_message();
  ASSERT_EQ(dinput_strategy_new_multi_worker_cpu(&s, c, 0, kMaxWorkers * 16), DINPUT_OK);
  EXPECT_EQ(dinput_strategy_num_replicas_in_sync(s), kMaxWorkers * 16);
  dinput_strategy_free(s);
  dinput_collective_free(c);
}

}  // namespace
}  // namespace dinput::testing
