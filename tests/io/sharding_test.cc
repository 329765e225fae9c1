// FILE auto-sharding over record files: with two files and two in-process workers, worker
// 0 reads file A only and worker 1 file B only.
#include <gtest/gtest.h>

#include "../distribute/harness.h"
#include "data/nodes.h"
#include "io/file_sources.h"
#include "io/record_writer.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using namespace iotest;
using dinput::testing::notation;
using dinput::testing::run_workers;
using dinput::testing::with_policy;

class RecordSharding : public IoTest {
 protected:
  std::string numbers(const std::string& name, int from, int to) {
    std::vector<std::string> records;
    for (int i = from; i < to; ++i) records.push_back(std::to_string(i));
    return write(name, frame_all(records));
  }
};

TEST_F(RecordSharding, FileAndAutoGiveEachWorkerItsFiles) {
  auto a = numbers("a.rec", 0, 6);
  auto b = numbers("b.rec", 6, 12);
  for (auto policy : {AutoShardPolicy::kFile, AutoShardPolicy::kAuto}) {
    auto runs = run_workers(2, 1, [&](auto s) {
      return distribute_dataset(
          s, with_policy(make_batch(make_records({a, b}, Compression::kNone, 0), 4, false), policy),
          {});
    });
    EXPECT_EQ(runs[0].error, "");
    EXPECT_EQ(runs[1].error, "");
    EXPECT_EQ(notation(runs[0]), "[0,1] ; [2,3] ; [4,5]");
    EXPECT_EQ(notation(runs[1]), "[6,7] ; [8,9] ; [10,11]");
  }
}

TEST_F(RecordSharding, FixedLengthRecordsAreShardedByFile) {
  auto a = write("a.bin", "0001020304");
  auto b = write("b.bin", "0506070809");
  auto runs = run_workers(2, 1, [&](auto s) {
    return distribute_dataset(
        s,
        with_policy(make_batch(make_fixed_length_records({a, b}, 2, 0, 0), 2, false),
                    AutoShardPolicy::kFile),
        {});
  });
  EXPECT_EQ(notation(runs[0]), "[0] ; [1] ; [2] ; [3] ; [4]");
  EXPECT_EQ(notation(runs[1]), "[5] ; [6] ; [7] ; [8] ; [9]");
}

TEST_F(RecordSharding, OneFileTwoWorkersUnderFileFails) {
  auto a = numbers("a.rec", 0, 4);
  auto runs = run_workers(2, 1, [&](auto s) {
    return distribute_dataset(
        s,
        with_policy(make_batch(make_records({a}, Compression::kNone, 0), 2, false),
                    AutoShardPolicy::kFile),
        {});
  });
  for (const auto& run : runs)
    EXPECT_NE(run.error.find("Could not apply FILE based sharding: the dataset only has 1 file(s)"),
              std::string::npos)
        << run.error;
}

}  // namespace
}  // namespace dinput
