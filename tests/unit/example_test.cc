// White-box tests of the tf.train.Example decoder and parse stages (src/example/): the wire
// reader, every feature kind and dtype, protobuf's merging rules, the errors, the element
// spec, and saving and restoring through a parse.
#include <gtest/gtest.h>

#include <functional>

#include "data/datasets.h"
#include "data/state.h"
#include "example/parse.h"
#include "example/parser.h"
#include "example/wire.h"
#include "example_encoder.h"
#include "test_text.h"

namespace dinput::example {
namespace {

using test::error_of;

using test::entry;
using test::example;
using test::feature_list;
using test::floats;
using test::int64s;
using test::Proto;
using test::sequence_example;
using test::strings;

Tensor bytes_tensor(const std::vector<std::string>& v, bool scalar = false) {
  Tensor t = Tensor::allocate(DType::kBytes, scalar ? Shape() : Shape{int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.set_string(int64_t(i), v[i]);
  return t;
}
Tensor int64_tensor(const std::vector<int64_t>& v) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape{int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data_as<int64_t>()[i] = v[i];
  return t;
}
std::vector<int64_t> ints(const Tensor& t) {
  return {t.data_as<int64_t>(), t.data_as<int64_t>() + t.num_elements()};
}
std::vector<float> flts(const Tensor& t) {
  return {t.data_as<float>(), t.data_as<float>() + t.num_elements()};
}
std::vector<std::string> strs(const Tensor& t) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.emplace_back(t.string(i));
  return out;
}

FeatureSpec fixed(const std::string& key, DType dtype, Shape shape,
                  std::optional<Tensor> def = std::nullopt) {
  FeatureSpec f;
  f.key = key;
  f.kind = FeatureKind::kFixedLen;
  f.dtype = dtype;
  f.shape = shape;
  f.default_value = std::move(def);
  return f;
}
FeatureSpec varlen(const std::string& key, DType dtype) {
  FeatureSpec f;
  f.key = key;
  f.kind = FeatureKind::kVarLen;
  f.dtype = dtype;
  return f;
}
FeatureSpec fixed_seq(const std::string& key, DType dtype, Shape shape, bool allow_missing,
                      std::optional<Tensor> def = std::nullopt) {
  FeatureSpec f = fixed(key, dtype, shape, std::move(def));
  f.kind = FeatureKind::kFixedLenSequence;
  f.allow_missing = allow_missing;
  return f;
}

Element parse(const ParseSpec& spec, const std::vector<std::string>& records, bool batched = true,
              bool sequence = false) {
  ExampleParser p(spec, sequence, "parse_example");
  ParseScratch scratch;
  Element out;
  p.parse(bytes_tensor(records, !batched), batched, 0, scratch, out);
  EXPECT_TRUE(matches(p.output_spec(batched, batched ? int64_t(records.size()) : 0), out))
      << describe(out) << " vs " << to_string(p.output_spec(batched, int64_t(records.size())));
  return out;
}

TEST(ExampleWire, VarintsAndTags) {
  std::string s = Proto().varint(0).varint(300).varint(UINT64_MAX);
  WireReader r(s);
  uint64_t v;
  ASSERT_TRUE(r.varint(v));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(r.varint(v));
  EXPECT_EQ(v, 300u);
  ASSERT_TRUE(r.varint(v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_TRUE(r.done());
  // Cut, and longer than 10 bytes, are malformed.
  std::string cut = "\x80\x80";
  WireReader c(cut);
  EXPECT_FALSE(c.varint(v));
  std::string eleven(10, '\xff');
  eleven += '\x01';
  WireReader l(eleven);
  EXPECT_FALSE(l.varint(v));
  // Field 0 is not a field; groups are refused; a length past the end is refused.
  std::string zero = Proto().varint(0 << 3 | 2);
  uint32_t field, type;
  WireReader z(zero);
  EXPECT_FALSE(z.tag(field, type));
  const std::string group = Proto().tag(5, 3);  // the reader views it: it must outlive g
  WireReader g(group);
  ASSERT_TRUE(g.tag(field, type));
  EXPECT_FALSE(g.skip(type));
  std::string longer = Proto().tag(1, 2).varint(5).raw("ab");
  WireReader b(longer);
  std::string_view payload;
  ASSERT_TRUE(b.tag(field, type));
  EXPECT_FALSE(b.bytes(payload));
}

TEST(ExampleParse, EveryDtypeFixedAndVarLenBatched) {
  ParseSpec spec;
  spec.add(fixed("id", DType::kInt64, Shape()), false);
  spec.add(fixed("emb", DType::kFloat32, Shape{2}), false);
  spec.add(fixed("name", DType::kBytes, Shape()), false);
  spec.add(varlen("tags", DType::kBytes), false);
  spec.add(varlen("scores", DType::kInt64), false);
  std::vector<std::string> records = {
      example({{"id", int64s({7})},
               {"emb", floats({1.5f, -2})},
               {"name", strings({"a"})},
               {"tags", strings({"x", "y"})},
               {"scores", int64s({-1, 1LL << 40}, false)}}),
      example({{"scores", int64s({})},
               {"tags", strings({})},
               {"name", strings({std::string(100000, 'q')})},
               {"emb", floats({3, 4}, false)},
               {"id", int64s({-5}, false)}}),
  };
  Element out = parse(spec, records);
  // Sorted by key: emb, id, name, scores (values, splits), tags (values, splits).
  ASSERT_EQ(out.size(), 7u);
  EXPECT_EQ(flts(out[0]), (std::vector<float>{1.5f, -2, 3, 4}));
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(ints(out[1]), (std::vector<int64_t>{7, -5}));
  EXPECT_EQ(strs(out[2]), (std::vector<std::string>{"a", std::string(100000, 'q')}));
  EXPECT_EQ(ints(out[3]), (std::vector<int64_t>{-1, 1LL << 40}));
  EXPECT_EQ(ints(out[4]), (std::vector<int64_t>{0, 2, 2}));
  EXPECT_EQ(strs(out[5]), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(ints(out[6]), (std::vector<int64_t>{0, 2, 2}));
}

TEST(ExampleParse, SingleRecordShapes) {
  ParseSpec spec;
  spec.add(fixed("m", DType::kInt64, Shape{2, 2}), false);
  spec.add(varlen("v", DType::kFloat32), false);
  spec.add(fixed_seq("s", DType::kInt64, Shape{2}, true), false);
  Element out = parse(
      spec,
      {example(
          {{"m", int64s({1, 2, 3, 4})}, {"v", floats({0.5f})}, {"s", int64s({1, 2, 3, 4, 5, 6})}})},
      false);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(out[1].shape(), (Shape{3, 2}));
  EXPECT_EQ(ints(out[1]), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out[2].shape(), (Shape{1}));
}

TEST(ExampleParse, DefaultsAndPadding) {
  ParseSpec spec;
  spec.add(fixed("d", DType::kFloat32, Shape{3}, Tensor::zeros(DType::kFloat32, Shape())), false);
  Tensor pad = bytes_tensor({"-"}, true);
  spec.add(fixed_seq("s", DType::kBytes, Shape(), true, pad), false);
  Tensor def = bytes_tensor({"none"}, true);
  spec.add(fixed("b", DType::kBytes, Shape(), def), false);
  Element out = parse(spec, {example({{"s", strings({"p", "q"})}, {"d", floats({1, 2, 3})}}),
                             example({{"b", strings({"given"})}})});
  EXPECT_EQ(strs(out[0]), (std::vector<std::string>{"none", "given"}));
  EXPECT_EQ(flts(out[1]), (std::vector<float>{1, 2, 3, 0, 0, 0}));
  EXPECT_EQ(out[2].shape(), (Shape{2, 2}));
  EXPECT_EQ(strs(out[2]), (std::vector<std::string>{"p", "q", "-", "-"}));
}

TEST(ExampleParse, ProtobufMergeRules) {
  ParseSpec spec;
  spec.add(varlen("k", DType::kInt64), false);
  // A repeated key: the last entry wins, also across two `features` fields.
  std::string twice = Proto()
                          .bytes(1, test::feature_map({{"k", int64s({1})}}))
                          .bytes(1, test::feature_map({{"k", int64s({2, 3})}}));
  // A list in two pieces adds up; a list of another kind in between replaces it.
  std::string pieces = example({{"k", int64s({4}) + int64s({5}, false)}});
  std::string switched = example({{"k", int64s({6}) + floats({1}) + int64s({7})}});
  // Unknown fields at every level are skipped.
  std::string unknown =
      Proto()
          .uint(9, 1)
          .bytes(1, Proto().fixed32(7, 0).bytes(1, Proto().bytes(1, "k").uint(3, 5).bytes(
                                                       2, Proto().uint(8, 1).raw(int64s({8})))))
          .bytes(12, "zz");
  Element out = parse(spec, {twice, pieces, switched, unknown});
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{2, 3, 4, 5, 7, 8}));
  EXPECT_EQ(ints(out[1]), (std::vector<int64_t>{0, 2, 4, 5, 6}));
}

TEST(ExampleParse, SequenceExamples) {
  ParseSpec spec;
  spec.add(fixed("len", DType::kInt64, Shape()), false);
  spec.add(fixed_seq("frames", DType::kFloat32, Shape{2}, false), true);
  spec.add(varlen("words", DType::kBytes), true);
  std::vector<std::string> records = {
      sequence_example({{"len", int64s({2})}},
                       {{"frames", feature_list({floats({1, 2}), floats({3, 4})})},
                        {"words", feature_list({strings({"a", "b"}), strings({})})}}),
      sequence_example({{"len", int64s({1})}}, {{"frames", feature_list({floats({5, 6})})},
                                                {"words", feature_list({strings({"c"})})}}),
  };
  Element out = parse(spec, records, true, true);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(ints(out[0]), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(flts(out[1]), (std::vector<float>{1, 2, 3, 4, 5, 6, 0, 0}));
  EXPECT_EQ(strs(out[2]), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(ints(out[3]), (std::vector<int64_t>{0, 2, 3}));     // steps per record
  EXPECT_EQ(ints(out[4]), (std::vector<int64_t>{0, 2, 2, 3}));  // values per step
  Element one = parse(spec, {records[0]}, false, true);
  ASSERT_EQ(one.size(), 4u);
  EXPECT_EQ(one[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(ints(one[3]), (std::vector<int64_t>{0, 2, 2}));
}

TEST(ExampleParse, ErrorsNameTheRecordAndTheFeature) {
  ParseSpec spec;
  spec.add(fixed("id", DType::kInt64, Shape()), false);
  spec.add(fixed("v", DType::kFloat32, Shape{2}), false);
  const std::string good = example({{"id", int64s({1})}, {"v", floats({1, 2})}});
  auto message = [&](const std::string& bad) {
    Error e = error_of([&] { parse(spec, {good, bad}); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << e.what();
    return std::string(e.what());
  };
  std::string m = message(example({{"v", floats({1, 2})}}));
  EXPECT_NE(m.find("record 1 of the batch"), std::string::npos) << m;
  EXPECT_NE(m.find("'id'"), std::string::npos) << m;
  EXPECT_NE(m.find("missing"), std::string::npos) << m;
  m = message(example({{"id", floats({1})}, {"v", floats({1, 2})}}));
  EXPECT_NE(m.find("float_list"), std::string::npos) << m;
  EXPECT_NE(m.find("'id'"), std::string::npos) << m;
  m = message(example({{"id", int64s({1})}, {"v", floats({1, 2, 3})}}));
  EXPECT_NE(m.find("has 3 values"), std::string::npos) << m;
  EXPECT_NE(m.find("'v'"), std::string::npos) << m;
  // Every cut of a good record that is not itself a whole message is malformed.
  int malformed = 0;
  for (size_t n = 1; n < good.size(); ++n) {
    Error e = error_of([&] { parse(spec, {good.substr(0, n)}); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << n;
    malformed += std::string(e.what()).find("malformed") != std::string::npos;
  }
  EXPECT_GT(malformed, 0);
  // Packed varints with a cut last value, and floats not a multiple of 4 bytes.
  std::string cut_packed =
      example({{"id", Proto().bytes(3, Proto().bytes(1, "\x81"))}, {"v", floats({1, 2})}});
  EXPECT_NE(message(cut_packed).find("malformed"), std::string::npos);
  std::string odd_floats =
      example({{"id", int64s({1})}, {"v", Proto().bytes(2, Proto().bytes(1, "abcdefg"))}});
  EXPECT_NE(message(odd_floats).find("malformed"), std::string::npos);
}

TEST(ExampleSpec, RefusesBadSpecs) {
  ParseSpec spec;
  spec.add(fixed("a", DType::kInt64, Shape()), false);
  EXPECT_EQ(error_of([&] { spec.add(fixed("a", DType::kInt64, Shape()), false); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { spec.add(fixed("b", DType::kInt32, Shape()), false); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(
      error_of([&] { spec.add(fixed("c", DType::kInt64, Shape{kUnknownDim}), false); }).code(),
      Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { spec.add(fixed("d", DType::kInt64, Shape()), true); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] {
              spec.add(fixed("e", DType::kInt64, Shape{3}, int64_tensor({1, 2})), false);
            }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(spec.to_string(), "'a': FixedLenFeature([], int64)");
}

std::vector<std::string> drain(const DatasetPtr& ds, IteratorContext ctx = {}) {
  auto it = ds->make_iterator(ctx);
  std::vector<std::string> out;
  Element e;
  while (it->next(e)) out.push_back(describe(e) + ":" + std::to_string(ints(e[0])[0]));
  return out;
}

TEST(ExampleDataset, SpecComponentAndPassThrough) {
  std::vector<std::string> recs;
  for (int i = 0; i < 5; ++i) recs.push_back(example({{"x", int64s({i * 10})}}));
  ParseSpec spec;
  spec.add(fixed("x", DType::kInt64, Shape()), false);
  spec.add(varlen("y", DType::kFloat32), false);
  // (label, serialized): the parsed components replace component 1.
  DatasetPtr src = make_from_tensor_slices({int64_tensor({0, 1, 2, 3, 4}), bytes_tensor(recs)});
  DatasetPtr batched = make_batch(src, 2, false);
  DatasetPtr ds = make_parse(batched, ParseOp::kExample, spec, 1);
  EXPECT_EQ(to_string(ds->element_spec()),
            "(int64[None], int64[None], float32[None], int64[None])");
  EXPECT_EQ(
      to_string(make_parse(make_batch(src, 2, true), ParseOp::kExample, spec, 1)->element_spec()),
      "(int64[2], int64[2], float32[None], int64[3])");
  IteratorContext ctx;
  auto it = ds->make_iterator(ctx);
  Element e;
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(ints(e[0]), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ints(e[1]), (std::vector<int64_t>{0, 10}));
  EXPECT_EQ(to_string(make_parse(src, ParseOp::kSingleExample, spec, 1)->element_spec()),
            "(int64[], int64[], float32[None])");
  // Wrong component, dtype or rank: INVALID_ARGUMENT when built.
  EXPECT_EQ(error_of([&] { make_parse(batched, ParseOp::kExample, spec, 0); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_parse(src, ParseOp::kExample, spec, 1); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_parse(src, ParseOp::kExample, spec, 2); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_parse(src, ParseOp::kSingleExample, ParseSpec(), 1); }).code(),
            Code::kInvalidArgument);
}

TEST(ExampleDataset, SavesAndRestoresThroughAParse) {
  std::vector<std::string> recs;
  for (int i = 0; i < 9; ++i) recs.push_back(example({{"x", int64s({i})}}));
  ParseSpec spec;
  spec.add(fixed("x", DType::kInt64, Shape()), false);
  DatasetPtr ds = make_parse(make_batch(make_from_tensor_slices({bytes_tensor(recs)}), 2, false),
                             ParseOp::kExample, spec, 0);
  const std::vector<std::string> all = drain(ds);
  ASSERT_EQ(all.size(), 5u);
  for (size_t k = 0; k <= all.size(); ++k) {
    IteratorContext ctx;
    auto it = ds->make_iterator(ctx);
    Element e;
    std::vector<std::string> got;
    for (size_t i = 0; i < k && it->next(e); ++i)
      got.push_back(describe(e) + ":" + std::to_string(ints(e[0])[0]));
    std::string state = save_state(*ds, *ds, it.get(), false);
    IteratorContext fresh;
    RestoredIterator r = restore_state(ds, fresh, state);
    while (r.iterator->next(e)) got.push_back(describe(e) + ":" + std::to_string(ints(e[0])[0]));
    EXPECT_EQ(got, all) << "saved after " << k;
  }
  // The count of records parsed is restored: a failure after a restore names the record
  // by its place in the input.
  recs.push_back("\xff");
  DatasetPtr bad =
      make_parse(make_from_tensor_slices({bytes_tensor(recs)}), ParseOp::kSingleExample, spec, 0);
  IteratorContext ctx;
  auto it = bad->make_iterator(ctx);
  Element e;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(it->next(e));
  std::string state = save_state(*bad, *bad, it.get(), false);
  IteratorContext fresh;
  RestoredIterator r = restore_state(bad, fresh, state);
  Error err = error_of([&] {
    while (r.iterator->next(e)) {
    }
  });
  EXPECT_NE(std::string(err.what()).find("record 9 of the input"), std::string::npos) << err.what();
}

}  // namespace
}  // namespace dinput::example
