// parse_example in distributed pipelines: the batch before it is still the global batch,
// and every record reaches exactly one replica (W times under OFF) in random configurations.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "distribute/auto_shard.h"
#include "distribute/graph.h"
#include "example/parse.h"
#include "harness.h"

namespace dinput::testing {
namespace {

// A varint and a length-delimited field of the protobuf wire format.
void varint(std::string& out, uint64_t v) {
  for (; v >= 0x80; v >>= 7) out += static_cast<char>((v & 0x7F) | 0x80);
  out += static_cast<char>(v);
}
std::string field(int number, const std::string& payload) {
  std::string out;
  varint(out, static_cast<uint64_t>(number) << 3 | 2);
  varint(out, payload.size());
  return out + payload;
}

// Example {"id": int64_list [i], "pad": int64_list [i % 3 values]}.
std::string record(int64_t i) {
  std::string ids, pad;
  varint(ids, static_cast<uint64_t>(i));
  for (int64_t k = 0; k < i % 3; ++k) varint(pad, 1);
  auto entry = [](const std::string& key, const std::string& packed) {
    return field(1, field(1, key) + field(2, field(3, field(1, packed))));
  };
  return field(1, entry("id", ids) + entry("pad", pad));
}

DatasetPtr records(int64_t n) {
  Tensor t = Tensor::allocate(DType::kBytes, Shape{n});
  for (int64_t i = 0; i < n; ++i) t.set_string(i, record(i));
  return make_from_tensor_slices({t});
}

example::ParseSpec spec() {
  example::ParseSpec s;
  example::FeatureSpec id;
  id.key = "id";
  id.dtype = DType::kInt64;
  s.add(id, false);
  example::FeatureSpec pad;
  pad.key = "pad";
  pad.kind = example::FeatureKind::kFixedLenSequence;
  pad.dtype = DType::kInt64;
  pad.allow_missing = true;
  s.add(pad, false);
  return s;
}

TEST(ParseExample, KeepsTheGlobalBatchSize) {
  DatasetPtr ds =
      example::make_parse(make_batch(records(10), 4, false), example::ParseOp::kExample, spec(), 0);
  EXPECT_EQ(detect_global_batch_size(ds), 4);
}

// Ragged components do not share the batch's first dimension: cutting them per replica is
// refused with INVALID_ARGUMENT (docs/examples.md), never a wrong cut.
TEST(ParseExample, RaggedComponentsAcrossReplicasAreRefused) {
  example::ParseSpec s;
  example::FeatureSpec pad;
  pad.key = "pad";
  pad.kind = example::FeatureKind::kVarLen;
  pad.dtype = DType::kInt64;
  s.add(pad, false);
  DatasetPtr ds =
      example::make_parse(make_batch(records(8), 4, false), example::ParseOp::kExample, s, 0);
  auto runs = run_workers(1, 2, [&](auto st) { return distribute_dataset(st, ds, {}); });
  EXPECT_NE(runs[0].error.find("INVALID_ARGUMENT"), std::string::npos) << runs[0].error;
  EXPECT_NE(runs[0].error.find("same leading size"), std::string::npos) << runs[0].error;
  // One replica takes the batches whole.
  runs = run_workers(1, 1, [&](auto st) { return distribute_dataset(st, ds, {}); });
  EXPECT_EQ(runs[0].error, "");
}

TEST(ParseExample, ExactlyOnceInRandomConfigurations) {
  std::mt19937 rng(20261126);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iteration = 0; iteration < 60; ++iteration) {
    const int W = pick(1, 3), R = pick(1, 3);
    const int64_t G = pick(1, 9), size = pick(0, 40);
    const bool drop = pick(0, 1) == 1, shuffle = pick(0, 1) == 1;
    const AutoShardPolicy policy = pick(0, 1) ? AutoShardPolicy::kData : AutoShardPolicy::kOff;
    SCOPED_TRACE(str_cat("W=", W, " R=", R, " G=", G, " size=", size, " drop=", drop,
                         " shuffle=", shuffle, " policy=", policy_name(policy)));
    DatasetPtr ds = records(size);
    if (shuffle) ds = make_shuffle(ds, 7, 3, false);
    ds = make_batch(ds, G, drop);
    ds = with_policy(example::make_parse(ds, example::ParseOp::kExample, spec(), 0), policy);
    auto runs = run_workers(W, R, [&](auto s) { return distribute_dataset(s, ds, {}); });
    std::map<int64_t, int> got;
    for (const auto& run : runs) {
      ASSERT_EQ(run.error, "");
      for (const auto& step : run.steps)
        for (const auto& piece : step)
          for (int64_t v : piece) got[v]++;
    }
    // Which rows a dropped remainder holds depends on the shuffle: count the plain pipeline.
    std::map<int64_t, int> want;
    auto it = ds->make_iterator({});
    Element e;
    while (it->next(e))
      for (int64_t v : values_of(e)) want[v] += policy == AutoShardPolicy::kOff ? W : 1;
    ASSERT_EQ(got, want);
    if (!drop && policy == AutoShardPolicy::kData) {
      for (int64_t i = 0; i < size; ++i) ASSERT_EQ(want[i], 1) << i;
    }
  }
}

}  // namespace
}  // namespace dinput::testing
