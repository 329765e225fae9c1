// padded_batch over ragged values (data/ragged.h): a SequenceExample's VarLenFeature feature
// list, parsed one record at a time, is values plus row splits; padded_batch batches it as a
// ragged value (values joined, new outer row splits, merged inner splits), which is what the
// batched parse gives for the same records. Checked against hand-computed batches.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/datasets.h"
#include "data/ragged.h"
#include "data/state.h"
#include "example/feature_spec.h"
#include "example/parse.h"

#include "example_encoder.h"
#include "resume_check.h"
#include "test_text.h"

namespace dinput {
namespace {

using test::error_of;
using test::text;

// Records: context "id" = i; feature list "s" (VarLen int64) with the steps below; context
// "t" (VarLen bytes) with i words.
const std::vector<std::vector<std::vector<int64_t>>> kSteps = {
    {{1, 2}, {3}}, {{4}}, {}, {{5, 6, 7}, {}, {8}}, {{9}}};

DatasetPtr records() {
  Tensor t = Tensor::allocate(DType::kBytes, Shape{static_cast<int64_t>(kSteps.size())});
  for (size_t i = 0; i < kSteps.size(); ++i) {
    std::vector<std::string> steps, words;
    for (const auto& s : kSteps[i]) steps.push_back(test::int64s(s));
    for (size_t w = 0; w < i; ++w) words.push_back("w" + std::to_string(w));
    t.set_string(static_cast<int64_t>(i),
                 test::sequence_example(
                     {{"id", test::int64s({static_cast<int64_t>(i)})}, {"t", test::strings(words)}},
                     {{"s", test::feature_list(steps)}}));
  }
  return make_from_tensor_slices({t});
}

example::ParseSpec spec() {
  example::ParseSpec spec;
  spec.add({"id", example::FeatureKind::kFixedLen, DType::kInt64, Shape(), {}, false}, false);
  spec.add({"t", example::FeatureKind::kVarLen, DType::kBytes, Shape(), {}, false}, false);
  spec.add({"s", example::FeatureKind::kVarLen, DType::kInt64, Shape(), {}, false}, true);
  return spec;
}

// One record at a time: id [], t values [N], s values [N], s row splits [T + 1].
DatasetPtr parsed() {
  return example::make_parse(records(), example::ParseOp::kSequenceExample, spec(), 0);
}

TEST(RaggedPaddedBatch, BatchesRowSplitsAsARaggedValue) {
  DatasetPtr ds = make_padded_batch(parsed(), 3, false, {}, {});
  // id padded (stacked); t's values padded to the longest; s joined with new outer splits
  // over the steps and merged inner splits over the values.
  ElementSpec want_spec{{DType::kInt64, Shape{kUnknownDim}},
                        {DType::kBytes, Shape{kUnknownDim, kUnknownDim}},
                        {DType::kInt64, Shape{kUnknownDim}},
                        {DType::kInt64, Shape{kUnknownDim}},
                        {DType::kInt64, Shape{kUnknownDim}}};
  EXPECT_EQ(ds->element_spec(), want_spec);
  EXPECT_EQ(
      test::all_as(ds, text),
      (std::vector<std::string>{// records 0, 1, 2: steps [[1,2],[3]], [[4]], []
                                "(0,1,2)(,,w0,,w0,w1)(1,2,3,4)(0,2,3,3)(0,2,3,4)",
                                // records 3, 4: steps [[5,6,7],[],[8]], [[9]]
                                "(3,4)(w0,w1,w2,,w0,w1,w2,w3)(5,6,7,8,9)(0,3,4)(0,3,3,4,5)"}));
  // drop_remainder: the batch size is known, and so the outer splits' length.
  DatasetPtr dropped = make_padded_batch(parsed(), 2, true, {}, {});
  EXPECT_EQ(dropped->element_spec()[3], (TensorSpec{DType::kInt64, Shape{3}}));
  EXPECT_EQ(test::all_as(dropped, text).size(), 2u);
}

// The same layout as parsing the batch at once, through nodes that pass elements on.
TEST(RaggedPaddedBatch, MatchesTheBatchedParse) {
  DatasetPtr batched = example::make_parse(make_batch(records(), 2, false),
                                           example::ParseOp::kSequenceExample, spec(), 0);
  DatasetPtr padded =
      make_padded_batch(make_prefetch(make_take(parsed(), 100), 2), 2, false,
                        {Shape{}, Shape{kUnknownDim}, Shape{kUnknownDim}, Shape{kUnknownDim}}, {});
  auto a = test::all_as(batched, text), b = test::all_as(padded, text);
  ASSERT_EQ(a.size(), b.size());
  // The context VarLen differs (padded here, ragged there): compare id and s.
  for (size_t i = 0; i < a.size(); ++i) {
    auto parts = [](const std::string& s) {
      std::vector<std::string> out;
      size_t at = 0;
      while (at < s.size()) {
        size_t end = s.find(')', at);
        out.push_back(s.substr(at, end + 1 - at));
        at = end + 1;
      }
      return out;
    };
    auto pa = parts(a[i]), pb = parts(b[i]);
    ASSERT_EQ(pa.size(), 6u);  // id, t values, t splits, s values, s outer, s inner
    ASSERT_EQ(pb.size(), 5u);
    EXPECT_EQ(pa[0], pb[0]);
    EXPECT_EQ(pa[3] + pa[4] + pa[5], pb[2] + pb[3] + pb[4]);
  }
}

TEST(RaggedPaddedBatch, APaddedShapeForARaggedValueIsRefused) {
  Error e = error_of([] {
    make_padded_batch(parsed(), 2, false,
                      {Shape{}, Shape{kUnknownDim}, Shape{4}, Shape{kUnknownDim}}, {});
  });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("component 2 is part of a ragged value"), std::string::npos)
      << e.what();
}

Tensor ints(std::vector<int64_t> v) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data_as<int64_t>()[i] = v[i];
  return t;
}

// Row splits that do not index their values are refused, naming the component and element.
TEST(RaggedPaddedBatch, BadSplitsAreRefused) {
  for (auto splits : {std::vector<int64_t>{0, 2}, std::vector<int64_t>{1, 3},
                      std::vector<int64_t>{0, 3, 2, 3}, std::vector<int64_t>{}}) {
    std::vector<Element> rows{{ints({1, 2, 3}), ints({0, 3})}, {ints({1, 2, 3}), ints(splits)}};
    Element out;
    Error e = error_of([&] { batch_ragged("padded_batch", rows, 0, 1, {7, 8}, out); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("component 1 of input element 8"), std::string::npos)
        << e.what();
  }
  // Two levels of splits, outermost first: [[[1, 2], [3]], [[4]]] and [[[5]]].
  std::vector<Element> rows{{ints({1, 2, 3, 4}), ints({0, 2, 3}), ints({0, 2, 3, 4})},
                            {ints({5}), ints({0, 1}), ints({0, 1})}};
  Element out;
  batch_ragged("padded_batch", rows, 0, 2, {0, 1}, out);
  EXPECT_EQ(text(out), "(1,2,3,4,5)(0,2,3)(0,2,3,4)(0,2,3,4,5)");
  // A map may change anything: the layout is not looked for through one, so its output is
  // padded like any other.
  DatasetPtr mapped = make_map(
      parsed(), std::make_shared<const MapFn>([](const Element& e) { return e; }), {}, 1, {});
  EXPECT_EQ(make_padded_batch(mapped, 2, false, {}, {})->element_spec().size(), 4u);
}

TEST(RaggedPaddedBatch, SavesAndRestores) {
  test::expect_resumes_everywhere_as(make_padded_batch(parsed(), 2, false, {}, {}), text);
}

}  // namespace
}  // namespace dinput
