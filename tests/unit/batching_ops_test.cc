// padded_batch, bucket_by_sequence_length, window and flat_map: tf.data's documented examples,
// argument checks, errors, and exact resume from every save point.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/datasets.h"
#include "data/nodes.h"
#include "data/padding.h"
#include "data/state.h"
#include "distribute/graph.h"

#include "resume_check.h"
#include "test_text.h"

namespace dinput {
namespace {

using test::error_of;

Tensor int64_scalar(int64_t v) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape());
  *t.mutable_data_as<int64_t>() = v;
  return t;
}

Tensor int64_tensor(const std::vector<int64_t>& values, Shape shape) {
  Tensor t = Tensor::allocate(DType::kInt64, shape);
  if (!values.empty())
    std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Tensor int64_vector(const std::vector<int64_t>& values) {
  return int64_tensor(values, Shape{static_cast<int64_t>(values.size())});
}

// "[2,2]{1,0,2,2}" per component, joined by "|".
std::string text(const Element& e) {
  std::string out;
  for (const Tensor& t : e) {
    if (!out.empty()) out += "|";
    out += t.shape().to_string() + "{";
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      if (i) out += ",";
      if (t.dtype() == DType::kBytes)
        out += std::string(t.string(i));
      else
        out += std::to_string(t.data_as<int64_t>()[i]);
    }
    out += "}";
  }
  return out;
}

std::vector<std::string> all_of(const DatasetPtr& ds) { return test::all_as(ds, text); }

// tf.fill([x], x) for each int64 scalar x: a variable-length vector.
DatasetPtr fills(DatasetPtr ds) {
  auto fn = std::make_shared<const MapFn>([](const Element& in) {
    int64_t x = in[0].data_as<int64_t>()[0];
    return Element{int64_vector(std::vector<int64_t>(static_cast<size_t>(x), x))};
  });
  return make_map(std::move(ds), fn, {{DType::kInt64, Shape{kUnknownDim}}}, 1, {});
}

// A generator-free source of the given int64 vectors (of any lengths): slices of a padded
// matrix cut back to each row's length by a map.
DatasetPtr vectors(const std::vector<std::vector<int64_t>>& rows) {
  auto fn = std::make_shared<const MapFn>([rows](const Element& in) {
    return Element{int64_vector(rows.at(static_cast<size_t>(in[0].data_as<int64_t>()[0])))};
  });
  return make_map(make_range(0, static_cast<int64_t>(rows.size()), 1), fn,
                  {{DType::kInt64, Shape{kUnknownDim}}}, 1, {});
}

std::vector<std::string> resumed(const DatasetPtr& ds, size_t k) {
  return test::resumed_as(ds, k, text);
}
void expect_resumes_everywhere(const DatasetPtr& ds) {
  test::expect_resumes_everywhere_as(ds, text);
}

using Strings = std::vector<std::string>;

// ---- padded_batch ----

TEST(PaddedBatch, TfDataExamples) {
  DatasetPtr a = fills(make_range(1, 5, 1));
  EXPECT_EQ(all_of(make_padded_batch(a, 2, false, {}, {})),
            (Strings{"[2,2]{1,0,2,2}", "[2,4]{3,3,3,0,4,4,4,4}"}));
  EXPECT_EQ(all_of(make_padded_batch(a, 2, false, {Shape{5}}, {})),
            (Strings{"[2,5]{1,0,0,0,0,2,2,0,0,0}", "[2,5]{3,3,3,0,0,4,4,4,4,0}"}));
  EXPECT_EQ(all_of(make_padded_batch(a, 2, false, {Shape{5}}, {int64_scalar(-1)})),
            (Strings{"[2,5]{1,-1,-1,-1,-1,2,2,-1,-1,-1}", "[2,5]{3,3,3,-1,-1,4,4,4,4,-1}"}));
  // Components padded independently: the first to 4, the second to the batch's longest.
  DatasetPtr pairs =
      make_map(make_range(0, 2, 1), std::make_shared<const MapFn>([](const Element& in) {
                 return in[0].data_as<int64_t>()[0] == 0
                            ? Element{int64_vector({1, 2, 3}), int64_vector({10})}
                            : Element{int64_vector({4, 5}), int64_vector({11, 12})};
               }),
               {{DType::kInt64, Shape{kUnknownDim}}, {DType::kInt64, Shape{kUnknownDim}}}, 1, {});
  EXPECT_EQ(all_of(make_padded_batch(pairs, 2, false, {Shape{4}, Shape{kUnknownDim}},
                                     {int64_scalar(-1), int64_scalar(100)})),
            (Strings{"[2,4]{1,2,3,-1,4,5,-1,-1}|[2,2]{10,100,11,12}"}));
}

TEST(PaddedBatch, SpecCardinalityDropRemainderAndRank2) {
  DatasetPtr a = fills(make_range(1, 6, 1));
  DatasetPtr b = make_padded_batch(a, 2, true, {Shape{7}}, {});
  EXPECT_EQ(to_string(b->element_spec()), "(int64[2,7])");
  EXPECT_EQ(all_of(b).size(), 2u);
  EXPECT_EQ(to_string(make_padded_batch(a, 2, false, {}, {})->element_spec()),
            "(int64[None,None])");
  EXPECT_EQ(make_padded_batch(make_range(0, 5, 1), 2, false, {}, {})->cardinality(), 3);
  // Rank 2: each row padded in both dimensions, row-major.
  DatasetPtr m = make_map(make_range(1, 3, 1), std::make_shared<const MapFn>([](const Element& in) {
                            int64_t x = in[0].data_as<int64_t>()[0];
                            return Element{int64_tensor(
                                std::vector<int64_t>(static_cast<size_t>(x * x), x), Shape{x, x})};
                          }),
                          {{DType::kInt64, Shape{kUnknownDim, kUnknownDim}}}, 1, {});
  EXPECT_EQ(all_of(make_padded_batch(m, 2, false, {Shape{kUnknownDim, 3}}, {})),
            (Strings{"[2,2,3]{1,0,0,0,0,0,2,2,0,2,2,0}"}));
  // Scalars and bytes: no padding needed, bytes padding value.
  Tensor dash = Tensor::allocate(DType::kBytes, Shape());
  dash.set_string(0, "-");
  DatasetPtr words =
      make_map(make_range(0, 3, 1), std::make_shared<const MapFn>([](const Element& in) {
                 int64_t x = in[0].data_as<int64_t>()[0];
                 Tensor t = Tensor::allocate(DType::kBytes, Shape{x});
                 for (int64_t i = 0; i < x; ++i) t.set_string(i, "w" + std::to_string(i));
                 return Element{t, in[0]};
               }),
               {{DType::kBytes, Shape{kUnknownDim}}, {DType::kInt64, Shape()}}, 1, {});
  EXPECT_EQ(all_of(make_padded_batch(words, 3, false, {}, {dash, int64_scalar(9)})),
            (Strings{"[3,2]{-,-,w0,-,w0,w1}|[3]{0,1,2}"}));
}

TEST(PaddedBatch, ArgumentsAndTooLargeElements) {
  DatasetPtr a = fills(make_range(1, 6, 1));
  EXPECT_EQ(error_of([&] { make_padded_batch(a, 0, false, {}, {}); }).code(),
            Code::kInvalidArgument);
  Error rank = error_of([&] { make_padded_batch(a, 2, false, {Shape{2, 2}}, {}); });
  EXPECT_EQ(rank.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(rank.what()).find("component 0"), std::string::npos) << rank.what();
  EXPECT_EQ(
      error_of([&] {
        make_padded_batch(make_from_tensors({int64_vector({1, 2, 3})}), 2, false, {Shape{2}}, {});
      }).code(),
      Code::kInvalidArgument);  // smaller than the spec's known dimension
  Tensor wrong = Tensor::allocate(DType::kFloat32, Shape());
  EXPECT_EQ(error_of([&] { make_padded_batch(a, 2, false, {}, {wrong}); }).code(),
            Code::kInvalidArgument);
  // An element longer than its padded shape: named by component and input element.
  DatasetPtr b = make_padded_batch(a, 2, false, {Shape{3}}, {});
  Error big = error_of([&] { all_of(b); });
  EXPECT_EQ(big.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(big.what()).find("component 0 of input element 3"), std::string::npos)
      << big.what();
}

TEST(PaddedBatch, IsABatchForDistribution) {
  DatasetPtr b = make_prefetch(make_padded_batch(fills(make_range(1, 9, 1)), 4, false, {}, {}), 2);
  EXPECT_EQ(detect_global_batch_size(b), 4);
}

TEST(PaddedBatch, DistributionJoinsRowsOfBatchesOfDifferentWidths) {
  DatasetPtr b = make_padded_batch(fills(make_range(1, 6, 1)), 2, false, {}, {int64_scalar(-1)});
  EXPECT_EQ(detect_batch_padding(b).size(), 1u);
  EXPECT_TRUE(detect_batch_padding(make_batch(make_range(0, 4, 1), 2, false)).empty());
  // [[1,-1],[2,2]] and [[3,3,3,-1],[4,4,4,4]]: a piece of 3 rows joins them, padded with -1.
  Tensor joined = concat_padded({int64_tensor({1, -1, 2, 2}, Shape{2, 2}).slice(1, 2),
                                 int64_tensor({3, 3, 3, -1, 4, 4, 4, 4}, Shape{2, 4})},
                                int64_scalar(-1));
  EXPECT_EQ(text({joined}), "[3,4]{2,2,-1,-1,3,3,3,-1,4,4,4,4}");
}

TEST(PaddedBatch, Resumes) {
  DatasetPtr a = fills(make_range(1, 8, 1));
  expect_resumes_everywhere(make_padded_batch(a, 3, false, {}, {int64_scalar(-1)}));
  expect_resumes_everywhere(make_padded_batch(make_repeat(a, 2), 4, true, {Shape{9}}, {}));
}

// ---- bucket_by_sequence_length ----

const std::vector<std::vector<int64_t>> kSequences = {
    {0}, {1, 2, 3, 4}, {5, 6, 7}, {7, 8, 9, 10, 11}, {13, 14, 15, 16, 19, 20}, {21, 22}};

TEST(BucketBySequenceLength, TfDataExamples) {
  EXPECT_EQ(all_of(make_bucket_by_sequence_length(vectors(kSequences), 0, {3, 5}, {2, 2, 2}, {}, {},
                                                  false, false)),
            (Strings{"[2,4]{1,2,3,4,5,6,7,0}", "[2,6]{7,8,9,10,11,0,13,14,15,16,19,20}",
                     "[2,2]{0,0,21,22}"}));
  std::vector<std::vector<int64_t>> seqs = kSequences;
  seqs[0] = {0, 0};
  // Padded to each bucket's boundary - 1; the partly filled buckets come out at the end, in
  // bucket order.
  EXPECT_EQ(all_of(make_bucket_by_sequence_length(vectors(seqs), 0, {4, 7}, {2, 2, 2}, {},
                                                  {int64_scalar(-1)}, true, false)),
            (Strings{"[2,3]{0,0,-1,5,6,7}", "[2,6]{1,2,3,4,-1,-1,7,8,9,10,11,-1}",
                     "[1,3]{21,22,-1}", "[1,6]{13,14,15,16,19,20}"}));
  EXPECT_EQ(all_of(make_bucket_by_sequence_length(vectors(seqs), 0, {4, 7}, {2, 2, 2}, {},
                                                  {int64_scalar(-1)}, true, true)),
            (Strings{"[2,3]{0,0,-1,5,6,7}", "[2,6]{1,2,3,4,-1,-1,7,8,9,10,11,-1}"}));
}

TEST(BucketBySequenceLength, ArgumentsAndErrors) {
  DatasetPtr v = vectors(kSequences);
  auto code = [&](std::vector<int64_t> bounds, std::vector<int64_t> sizes, int64_t comp) {
    return error_of([&] {
             make_bucket_by_sequence_length(v, comp, bounds, sizes, {}, {}, false, false);
           })
        .code();
  };
  EXPECT_EQ(code({3, 5}, {2, 2}, 0), Code::kInvalidArgument);     // one size per bucket
  EXPECT_EQ(code({5, 3}, {2, 2, 2}, 0), Code::kInvalidArgument);  // increasing
  EXPECT_EQ(code({3, 5}, {2, 0, 2}, 0), Code::kInvalidArgument);
  EXPECT_EQ(code({3, 5}, {2, 2, 2}, 1), Code::kInvalidArgument);  // no such component
  EXPECT_EQ(
      error_of([&] {
        make_bucket_by_sequence_length(make_range(0, 3, 1), 0, {2}, {1, 1}, {}, {}, false, false);
      }).code(),
      Code::kInvalidArgument);  // a scalar has no length
  // With pad_to_bucket_boundary, a length at or past the largest boundary fails at that
  // element.
  Error past = error_of([&] {
    all_of(make_bucket_by_sequence_length(v, 0, {3, 5}, {2, 2, 2}, {}, {}, true, false));
  });
  EXPECT_EQ(past.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(past.what()).find("input element 3"), std::string::npos) << past.what();
}

TEST(BucketBySequenceLength, Resumes) {
  std::vector<std::vector<int64_t>> seqs;
  for (int64_t i = 0; i < 40; ++i)
    seqs.push_back(std::vector<int64_t>(static_cast<size_t>((i * 7) % 9 + 1), i));
  expect_resumes_everywhere(
      make_bucket_by_sequence_length(vectors(seqs), 0, {3, 6}, {3, 2, 5}, {}, {}, false, false));
  expect_resumes_everywhere(make_bucket_by_sequence_length(make_repeat(vectors(seqs), 2), 0, {5},
                                                           {4, 3}, {}, {}, false, true));
  // A bucket that rarely fills holds an old element while many snapshots are thinned out.
  std::vector<std::vector<int64_t>> rare;
  for (int64_t i = 0; i < 400; ++i) rare.push_back(std::vector<int64_t>(i % 97 == 0 ? 9 : 1, i));
  DatasetPtr ds =
      make_bucket_by_sequence_length(vectors(rare), 0, {2}, {1, 3}, {}, {}, false, false);
  std::vector<std::string> expected = all_of(ds);
  for (size_t k : {0u, 1u, 50u, 150u, 300u, 397u, 399u, 400u})
    ASSERT_EQ(resumed(ds, k), expected) << "saved after " << k;
}

// tf.data's element_length_func: the length from a function, here the first value of each
// sequence modulo 4, so that elements of one length go to different buckets by value.
TEST(BucketBySequenceLength, LengthFunction) {
  auto first_mod_4 = std::make_shared<const LengthFn>(
      [](const Element& e) { return e[0].data_as<int64_t>()[0] % 4; });
  // kSequences' first values 0, 1, 5, 7, 13, 21: lengths 0, 1, 1, 3, 1, 1.
  DatasetPtr ds = make_bucket_by_sequence_length(vectors(kSequences), first_mod_4, {1, 2},
                                                 {2, 2, 2}, {}, {}, false, false);
  EXPECT_EQ(all_of(ds), (Strings{"[2,4]{1,2,3,4,5,6,7,0}", "[2,6]{13,14,15,16,19,20,21,22,0,0,0,0}",
                                 "[1,1]{0}", "[1,5]{7,8,9,10,11}"}));
  EXPECT_NE(ds->arguments().find("element_length_func"), std::string::npos);
  std::vector<std::vector<int64_t>> seqs;
  for (int64_t i = 0; i < 40; ++i)
    seqs.push_back(std::vector<int64_t>(static_cast<size_t>((i * 7) % 9 + 1), i));
  expect_resumes_everywhere(make_bucket_by_sequence_length(vectors(seqs), first_mod_4, {1, 3},
                                                           {3, 2, 5}, {}, {}, false, false));
  // A negative length, and a failing function, fail at the element, naming it.
  auto bad = std::make_shared<const LengthFn>([](const Element& e) -> int64_t {
    const int64_t v = e[0].data_as<int64_t>()[0];
    if (v == 7) raise(Code::kInvalidArgument, "seven has no length");
    return v == 5 ? -2 : 1;
  });
  Error e = error_of([&] {
    all_of(make_bucket_by_sequence_length(vectors(kSequences), bad, {1}, {9, 9}, {}, {}, false,
                                          false));
  });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("gave -2 for input element 2"), std::string::npos)
      << e.what();
  auto fails = std::make_shared<const LengthFn>(
      [&](const Element& x) -> int64_t { return x[0].data_as<int64_t>()[0] == 5 ? 0 : (*bad)(x); });
  e = error_of([&] {
    all_of(make_bucket_by_sequence_length(vectors(kSequences), fails, {1}, {9, 9}, {}, {}, false,
                                          false));
  });
  EXPECT_NE(std::string(e.what()).find("the length of input element 3: seven has no length"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(error_of([&] {
              make_bucket_by_sequence_length(vectors(kSequences), std::shared_ptr<const LengthFn>(),
                                             {1}, {1, 1}, {}, {}, false, false);
            }).code(),
            Code::kInvalidArgument);
}

// ---- window ----

std::vector<std::string> windows(int64_t n, int64_t size, int64_t shift, int64_t stride,
                                 bool drop) {
  return all_of(make_window(make_range(0, n, 1), size, shift, stride, drop));
}

TEST(Window, TfDataExamples) {
  EXPECT_EQ(windows(7, 3, 3, 1, false), (Strings{"[3]{0,1,2}", "[3]{3,4,5}", "[1]{6}"}));
  EXPECT_EQ(windows(7, 3, 3, 1, true), (Strings{"[3]{0,1,2}", "[3]{3,4,5}"}));
  EXPECT_EQ(windows(7, 3, 2, 1, false),
            (Strings{"[3]{0,1,2}", "[3]{2,3,4}", "[3]{4,5,6}", "[1]{6}"}));
  EXPECT_EQ(windows(7, 3, 1, 1, true),
            (Strings{"[3]{0,1,2}", "[3]{1,2,3}", "[3]{2,3,4}", "[3]{3,4,5}", "[3]{4,5,6}"}));
  EXPECT_EQ(windows(7, 3, 3, 2, false), (Strings{"[3]{0,2,4}", "[2]{3,5}", "[1]{6}"}));
  // A shift past the window skips input elements.
  EXPECT_EQ(windows(10, 2, 4, 1, false), (Strings{"[2]{0,1}", "[2]{4,5}", "[2]{8,9}"}));
  EXPECT_TRUE(windows(2, 3, 1, 1, true).empty());
}

TEST(Window, SpecCardinalityAndArguments) {
  for (int64_t n : {0, 1, 6, 7, 10})
    for (int64_t size : {1, 3})
      for (int64_t shift : {1, 2, 5})
        for (int64_t stride : {1, 2})
          for (bool drop : {false, true}) {
            DatasetPtr w = make_window(make_range(0, n, 1), size, shift, stride, drop);
            EXPECT_EQ(w->cardinality(), static_cast<int64_t>(all_of(w).size()))
                << n << " " << size << " " << shift << " " << stride << " " << drop;
          }
  EXPECT_EQ(to_string(make_window(make_range(0, 3, 1), 2, 1, 1, true)->element_spec()),
            "(int64[2])");
  EXPECT_EQ(to_string(make_window(make_range(0, 3, 1), 2, 1, 1, false)->element_spec()),
            "(int64[None])");
  for (auto args : std::vector<std::vector<int64_t>>{{0, 1, 1}, {1, 0, 1}, {1, 1, 0}})
    EXPECT_EQ(error_of([&] {
                make_window(make_range(0, 3, 1), args[0], args[1], args[2], false);
              }).code(),
              Code::kInvalidArgument);
}

TEST(Window, Resumes) {
  for (int64_t shift : {1, 2, 3, 7})
    for (int64_t stride : {1, 2}) {
      expect_resumes_everywhere(make_window(make_range(0, 13, 1), 3, shift, stride, false));
      expect_resumes_everywhere(make_window(make_range(0, 13, 1), 3, shift, stride, true));
    }
  expect_resumes_everywhere(
      make_window(make_shuffle(make_range(0, 20, 1), 5, 3, true), 4, 2, 1, false));
}

// ---- flat_map ----

TEST(FlatMap, TfDataExampleAndState) {
  DatasetPtr rows =
      make_from_tensor_slices({int64_tensor({1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{3, 3})});
  auto fn = std::make_shared<const InterleaveFn>(
      [](const Element& e) { return make_from_tensor_slices({e[0]}); });
  DatasetPtr flat = make_flat_map(rows, fn, {{DType::kInt64, Shape()}});
  EXPECT_STREQ(flat->name(), "flat_map");
  EXPECT_EQ(all_of(flat), (Strings{"[]{1}", "[]{2}", "[]{3}", "[]{4}", "[]{5}", "[]{6}", "[]{7}",
                                   "[]{8}", "[]{9}"}));
  expect_resumes_everywhere(flat);
  EXPECT_EQ(error_of([&] {
              make_flat_map(rows, nullptr, {{DType::kInt64, Shape()}});
            }).code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace dinput
