// White-box tests of src/data: every dataset node of dinput.h's §Datasets, its iterator,
// cardinality and element spec, and the sticky end/error behaviour of iterators.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/origin.h"
#include "core/quote.h"
#include "core/tensor.h"
#include "data/datasets.h"
#include "data/iterator.h"
#include "data/nodes.h"
#include "data/stage_stats.h"
#include "data/thread_pool.h"

namespace dinput {
namespace {

// ---- helpers --------------------------------------------------------------------------

Tensor int64_scalar(int64_t v) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape());
  *t.mutable_data_as<int64_t>() = v;
  return t;
}

Tensor int64_vector(const std::vector<int64_t>& values) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape{static_cast<int64_t>(values.size())});
  if (!values.empty())
    std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

Tensor bytes_scalar(const std::string& s) {
  Tensor t = Tensor::allocate(DType::kBytes, Shape());
  t.set_string(0, s);
  return t;
}

std::vector<int64_t> values_of(const Tensor& t) {
  EXPECT_EQ(t.dtype(), DType::kInt64);
  const int64_t* p = t.data_as<int64_t>();
  return std::vector<int64_t>(p, p + t.num_elements());
}

std::vector<std::string> strings_of(const Tensor& t) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.emplace_back(t.string(i));
  return out;
}

std::unique_ptr<Iterator> iterate(const DatasetPtr& ds) {
  return ds->make_iterator(IteratorContext{});
}

// At most `limit` elements, so that a broken end-of-data check cannot hang a test.
std::vector<Element> collect(const DatasetPtr& ds, size_t limit = 100000) {
  auto it = iterate(ds);
  std::vector<Element> out;
  Element e;
  while (out.size() < limit && it->next(e)) out.push_back(std::move(e));
  return out;
}

// Component 0 of every element, flattened: scalars give one value per element.
std::vector<int64_t> flat(const DatasetPtr& ds, size_t limit = 100000) {
  std::vector<int64_t> out;
  for (const auto& e : collect(ds, limit)) {
    auto v = values_of(e.at(0));
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

// Component 0 of every element as its own list (for batches).
std::vector<std::vector<int64_t>> batches(const DatasetPtr& ds, size_t limit = 100000) {
  std::vector<std::vector<int64_t>> out;
  for (const auto& e : collect(ds, limit)) out.push_back(values_of(e.at(0)));
  return out;
}

std::vector<int64_t> iota(int64_t begin, int64_t end) {
  std::vector<int64_t> v(static_cast<size_t>(end - begin));
  std::iota(v.begin(), v.end(), begin);
  return v;
}

template <typename Fn>
Error error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected a dinput::Error";
  return Error(Code::kOk, "");
}

// The first error an iterator raises, after having produced `*produced` elements.
Error iteration_error(const DatasetPtr& ds, int* produced = nullptr) {
  auto it = iterate(ds);
  Element e;
  int n = 0;
  try {
    while (n < 100000 && it->next(e)) ++n;
  } catch (const Error& err) {
    if (produced) *produced = n;
    return err;
  }
  ADD_FAILURE() << "iteration ended without an error after " << n << " elements";
  return Error(Code::kOk, "");
}

// A generator over a fixed list of elements; it fails once, at `fail_at`, and would
// continue afterwards, so that a test can tell a sticky iterator from one that resumes.
class ListGenerator final : public GeneratorSource {
 public:
  explicit ListGenerator(std::vector<Element> elements, int64_t fail_at = -1)
      : elements_(std::move(elements)), fail_at_(fail_at) {}
  std::unique_ptr<GeneratorInstance> open() const override {
    ++opens;
    return std::make_unique<Instance>(this);
  }
  mutable std::atomic<int> opens{0};

 private:
  class Instance final : public GeneratorInstance {
   public:
    explicit Instance(const ListGenerator* g) : g_(g) {}
    bool next(Element& out) override {
      if (static_cast<int64_t>(pos_) == g_->fail_at_ && !failed_) {
        failed_ = true;
        raise(Code::kDataLoss, "the list generator broke at element ", pos_);
      }
      if (pos_ >= g_->elements_.size()) return false;
      out = g_->elements_[pos_++];
      return true;
    }

   private:
    const ListGenerator* g_;
    size_t pos_ = 0;
    bool failed_ = false;
  };
  std::vector<Element> elements_;
  int64_t fail_at_;
};

std::vector<Element> scalar_elements(int64_t n) {
  std::vector<Element> out;
  for (int64_t i = 0; i < n; ++i) out.push_back({int64_scalar(i)});
  return out;
}

DatasetPtr generator(std::vector<Element> elements, ElementSpec spec, int64_t fail_at = -1) {
  return make_from_generator(std::move(spec),
                             std::make_shared<ListGenerator>(std::move(elements), fail_at));
}

const ElementSpec kScalarInt64{{DType::kInt64, Shape()}};

DatasetPtr map_fn(DatasetPtr in, std::function<Element(const Element&)> fn, ElementSpec spec = {},
                  int64_t parallel = 1, bool deterministic = true) {
  return make_map(std::move(in), std::make_shared<const MapFn>(std::move(fn)), std::move(spec),
                  parallel, deterministic);
}

Element times(const Element& in, int64_t k) {
  return {int64_scalar(*in[0].data_as<int64_t>() * k)};
}

// ---- range ----------------------------------------------------------------------------

TEST(Range, CountsUpAndDown) {
  EXPECT_EQ(flat(make_range(0, 5, 1)), iota(0, 5));
  EXPECT_EQ(flat(make_range(2, 11, 3)), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(flat(make_range(10, 0, -3)), (std::vector<int64_t>{10, 7, 4, 1}));
  EXPECT_EQ(flat(make_range(-2, -6, -1)), (std::vector<int64_t>{-2, -3, -4, -5}));
  EXPECT_EQ(make_range(10, 0, -3)->cardinality(), 4);
  EXPECT_EQ(make_range(2, 11, 3)->cardinality(), 3);
}

TEST(Range, EmptyWhenTheStepPointsAway) {
  EXPECT_TRUE(flat(make_range(5, 5, 1)).empty());
  EXPECT_TRUE(flat(make_range(5, 0, 1)).empty());
  EXPECT_TRUE(flat(make_range(0, 5, -1)).empty());
  EXPECT_EQ(make_range(5, 0, 1)->cardinality(), 0);
  EXPECT_EQ(make_range(0, 5, -1)->cardinality(), 0);
}

TEST(Range, ZeroStepIsRejected) {
  Error e = error_of([] { make_range(0, 10, 0); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("step"), std::string::npos) << e.what();
}

// Bounds at the edges of int64 must neither overflow nor stop early.
TEST(Range, ExtremeBounds) {
  const int64_t kMax = INT64_MAX, kMin = INT64_MIN;
  EXPECT_EQ(flat(make_range(kMax - 3, kMax, 1)),
            (std::vector<int64_t>{kMax - 3, kMax - 2, kMax - 1}));
  EXPECT_EQ(flat(make_range(kMin + 2, kMin, -1)), (std::vector<int64_t>{kMin + 2, kMin + 1}));
  auto wide = make_range(kMin, kMax, kMax);  // kMin, -1, kMax - 1
  EXPECT_EQ(wide->cardinality(), 3);
  EXPECT_EQ(flat(wide), (std::vector<int64_t>{kMin, -1, kMax - 1}));
  auto down = make_range(kMax, kMin, kMin);  // a step of INT64_MIN: kMax, -1
  EXPECT_EQ(down->cardinality(), 2);
  EXPECT_EQ(flat(down), (std::vector<int64_t>{kMax, -1}));
  EXPECT_EQ(make_range(0, kMax, 1)->cardinality(), kMax);
  // The batched fast path computes values itself; it must agree at the edges too.
  EXPECT_EQ(batches(make_batch(make_range(kMax - 5, kMax, 2), 2, false)),
            (std::vector<std::vector<int64_t>>{{kMax - 5, kMax - 3}, {kMax - 1}}));
  EXPECT_EQ(batches(make_batch(make_range(kMin, kMax, kMax), 8, false)),
            (std::vector<std::vector<int64_t>>{{kMin, -1, kMax - 1}}));
}

TEST(Range, SpecAndName) {
  auto r = make_range(0, 3, 1);
  EXPECT_STREQ(r->name(), "range");
  EXPECT_EQ(r->element_spec(), kScalarInt64);
  EXPECT_TRUE(r->inputs().empty());
}

// ---- from_tensors / from_tensor_slices --------------------------------------------------

TEST(FromTensors, OneElementWithAllComponents) {
  Tensor a = int64_vector({1, 2});
  Tensor b = Tensor::zeros(DType::kFloat32, Shape{1});
  auto ds = make_from_tensors({a, b});
  EXPECT_STREQ(ds->name(), "from_tensors");
  EXPECT_EQ(ds->cardinality(), 1);
  EXPECT_EQ(ds->element_spec(),
            (ElementSpec{{DType::kInt64, Shape{2}}, {DType::kFloat32, Shape{1}}}));
  auto all = collect(ds);
  ASSERT_EQ(all.size(), 1u);
  ASSERT_EQ(all[0].size(), 2u);
  EXPECT_EQ(values_of(all[0][0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(all[0][0].data(), a.data());  // handed out without a copy
  // Every iterator starts over.
  EXPECT_EQ(collect(ds).size(), 1u);
}

TEST(FromTensorSlices, ScalarsFromAVector) {
  auto ds = make_from_tensor_slices({int64_vector({1, 2, 3, 4})});
  EXPECT_STREQ(ds->name(), "from_tensor_slices");
  EXPECT_EQ(ds->cardinality(), 4);
  EXPECT_EQ(ds->element_spec(), kScalarInt64);
  EXPECT_EQ(flat(ds), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(FromTensorSlices, RowsOfSeveralComponentsShareTheSource) {
  Tensor m = Tensor::allocate(DType::kInt64, Shape{3, 2});
  for (int i = 0; i < 6; ++i) m.mutable_data_as<int64_t>()[i] = i;
  Tensor names = Tensor::allocate(DType::kBytes, Shape{3});
  names.set_string(0, "a");
  names.set_string(1, "bb");
  names.set_string(2, "");
  auto ds = make_from_tensor_slices({m, names});
  EXPECT_EQ(ds->element_spec(), (ElementSpec{{DType::kInt64, Shape{2}}, {DType::kBytes, Shape{}}}));
  auto all = collect(ds);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(values_of(all[1][0]), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(all[1][0].data(), static_cast<const char*>(m.data()) + 2 * sizeof(int64_t));
  EXPECT_EQ(strings_of(all[1][1]), (std::vector<std::string>{"bb"}));
  EXPECT_EQ(all[2][1].string(0), "");
}

TEST(FromTensorSlices, BatchesAreViewsOfTheSource) {
  Tensor v = int64_vector(iota(0, 10));
  auto all = collect(make_batch(make_from_tensor_slices({v}), 4, false));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[1][0].data(), static_cast<const char*>(v.data()) + 4 * sizeof(int64_t));
  EXPECT_EQ(all[1][0].buffer(), v.buffer());
  EXPECT_EQ(values_of(all[2][0]), (std::vector<int64_t>{8, 9}));
}

TEST(FromTensorSlices, RejectsScalarsMismatchedRowsAndNoComponents) {
  Error scalar = error_of([] { make_from_tensor_slices({int64_scalar(1)}); });
  EXPECT_EQ(scalar.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(scalar.what()).find("scalar"), std::string::npos) << scalar.what();
  Error rows = error_of([] {
    make_from_tensor_slices({int64_vector({1, 2}), int64_vector({1, 2, 3})});
  });
  EXPECT_EQ(rows.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(rows.what()).find("3 rows"), std::string::npos) << rows.what();
  EXPECT_EQ(error_of([] { make_from_tensor_slices({}); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of([] { make_from_tensors({Tensor()}); }).code(), Code::kInvalidArgument);
}

TEST(FromTensorSlices, ZeroRowsGiveNoElements) {
  auto ds = make_from_tensor_slices({int64_vector({})});
  EXPECT_EQ(ds->cardinality(), 0);
  EXPECT_TRUE(collect(ds).empty());
}

// ---- from_generator -----------------------------------------------------------------

TEST(FromGenerator, YieldsElementsAndOpensOncePerIterator) {
  auto source = std::make_shared<ListGenerator>(scalar_elements(3));
  auto ds = make_from_generator(kScalarInt64, source);
  EXPECT_STREQ(ds->name(), "from_generator");
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  EXPECT_EQ(ds->element_spec(), kScalarInt64);
  EXPECT_EQ(source->opens.load(), 0);  // building a dataset does no work
  EXPECT_EQ(flat(ds), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(flat(ds), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(source->opens.load(), 2);
}

TEST(FromGenerator, ElementsMustMatchTheSpec) {
  auto ds = generator({{int64_scalar(1)}, {int64_vector({1, 2})}}, kScalarInt64);
  int produced = -1;
  Error e = iteration_error(ds, &produced);
  EXPECT_EQ(produced, 1);
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  std::string msg = e.what();
  EXPECT_NE(msg.find("generator"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int64[2]"), std::string::npos) << msg;
  // An unknown dimension in the spec accepts any size there.
  auto flexible = generator({{int64_vector({1})}, {int64_vector({1, 2, 3})}},
                            {{DType::kInt64, Shape{kUnknownDim}}});
  EXPECT_EQ(collect(flexible).size(), 2u);
}

TEST(FromGenerator, InvalidSpecOrSourceIsRejected) {
  EXPECT_EQ(error_of([] {
              make_from_generator({{DType::kInvalid, Shape()}},
                                  std::make_shared<ListGenerator>(std::vector<Element>{}));
            }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([] { make_from_generator(kScalarInt64, nullptr); }).code(),
            Code::kInvalidArgument);
}

// ---- batch ----------------------------------------------------------------------------

TEST(Batch, FinalBatchIsShortUnlessDropped) {
  auto keep = make_batch(make_range(0, 10, 1), 4, false);
  EXPECT_STREQ(keep->name(), "batch");
  EXPECT_EQ(batches(keep), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  EXPECT_EQ(keep->cardinality(), 3);
  EXPECT_EQ(keep->element_spec(), (ElementSpec{{DType::kInt64, Shape{kUnknownDim}}}));

  auto drop = make_batch(make_range(0, 10, 1), 4, true);
  EXPECT_EQ(batches(drop), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(drop->cardinality(), 2);
  EXPECT_EQ(drop->element_spec(), (ElementSpec{{DType::kInt64, Shape{4}}}));

  auto exact = make_batch(make_range(0, 8, 1), 4, true);
  EXPECT_EQ(batches(exact).size(), 2u);
  EXPECT_TRUE(collect(make_batch(make_range(0, 3, 1), 4, true)).empty());
  EXPECT_TRUE(collect(make_batch(make_range(0, 0, 1), 4, false)).empty());
}

TEST(Batch, BatchesOfVectorsAndSeveralComponents) {
  auto ds = make_batch(make_from_tensor_slices(
                           {Tensor::zeros(DType::kFloat32, Shape{5, 3}), int64_vector(iota(0, 5))}),
                       2, false);
  EXPECT_EQ(ds->element_spec(), (ElementSpec{{DType::kFloat32, Shape{kUnknownDim, 3}},
                                             {DType::kInt64, Shape{kUnknownDim}}}));
  auto all = collect(ds);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0][0].shape(), (Shape{2, 3}));
  EXPECT_EQ(all[2][0].shape(), (Shape{1, 3}));
  EXPECT_EQ(values_of(all[2][1]), (std::vector<int64_t>{4}));
}

// Elements that are produced one by one (here by a map) are stacked by copying, which
// must handle variable-length strings.
TEST(Batch, StacksBytes) {
  auto strings = map_fn(make_range(0, 5, 1),
                        [](const Element& in) {
                          return Element{bytes_scalar(
                              std::string(static_cast<size_t>(*in[0].data_as<int64_t>()), 'x'))};
                        },
                        {{DType::kBytes, Shape()}});
  auto all = collect(make_batch(strings, 2, false));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0][0].dtype(), DType::kBytes);
  EXPECT_EQ(strings_of(all[0][0]), (std::vector<std::string>{"", "x"}));
  EXPECT_EQ(strings_of(all[1][0]), (std::vector<std::string>{"xx", "xxx"}));
  EXPECT_EQ(strings_of(all[2][0]), (std::vector<std::string>{"xxxx"}));
  EXPECT_EQ(collect(make_batch(strings, 2, true)).size(), 2u);
}

TEST(Batch, ShapeMismatchNamesBothShapes) {
  auto ds = make_batch(generator({{int64_vector({1, 2})}, {int64_vector({1, 2, 3})}},
                                 {{DType::kInt64, Shape{kUnknownDim}}}),
                       2, false);
  Error e = iteration_error(ds);
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  std::string msg = e.what();
  EXPECT_NE(msg.find("int64[2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int64[3]"), std::string::npos) << msg;
}

// Rows that each own their buffer (a map's results) are copied into the batch as they
// arrive; the batches are those of stacking them all at the end, a short last batch included,
// and a row that does not fit in the middle of a batch is still named with its index.
TEST(Batch, RowsAreCopiedInAsTheyArrive) {
  auto rows = map_fn(make_range(0, 7, 1),
                     [](const Element& in) {
                       const int64_t i = *in[0].data_as<int64_t>();
                       return Element{int64_vector({i, 10 * i}), int64_scalar(-i)};
                     },
                     {{DType::kInt64, Shape{2}}, {DType::kInt64, Shape()}});
  auto all = collect(make_batch(rows, 3, false));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0][0].shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(all[1][0]), (std::vector<int64_t>{3, 30, 4, 40, 5, 50}));
  EXPECT_EQ(values_of(all[1][1]), (std::vector<int64_t>{-3, -4, -5}));
  EXPECT_EQ(all[2][0].shape(), (Shape{1, 2}));
  EXPECT_EQ(values_of(all[2][0]), (std::vector<int64_t>{6, 60}));
  EXPECT_EQ(values_of(all[2][1]), (std::vector<int64_t>{-6}));

  // Each row is released once copied, before the next is made: a batch never holds its rows.
  auto released = std::make_shared<std::vector<std::weak_ptr<Buffer>>>();
  auto watched = map_fn(make_range(0, 8, 1),
                        [released](const Element& in) {
                          const auto i = static_cast<size_t>(*in[0].data_as<int64_t>());
                          if (i % 4 != 0 && !released->at(i - 1).expired())
                            raise(Code::kInternal, "row ", i - 1, " is still held by its batch");
                          Element out{int64_vector({static_cast<int64_t>(i)})};
                          released->push_back(out[0].buffer());
                          return out;
                        },
                        {{DType::kInt64, Shape{1}}});
  EXPECT_EQ(collect(make_batch(watched, 4, false)).size(), 2u);

  auto ragged = make_batch(generator({{int64_vector({1, 2})},
                                      {int64_vector({3, 4})},
                                      {int64_vector({5, 6})},
                                      {int64_vector({7, 8, 9})}},
                                     {{DType::kInt64, Shape{kUnknownDim}}}),
                           4, false);
  Error e = iteration_error(ragged);
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  std::string msg = e.what();
  EXPECT_NE(msg.find("First element had shape int64[2] and element 3 had shape int64[3]"),
            std::string::npos)
      << msg;
}

// Rows that are consecutive slices of one buffer are batched as a view of it, not copied.
TEST(Batch, RowsThatAreSlicesOfOneBufferStayAView) {
  Tensor source = int64_vector(iota(0, 8));
  auto slices = map_fn(
      make_range(0, 8, 1),
      [source](const Element& in) {
        return Element{
            source.slice(*in[0].data_as<int64_t>(), *in[0].data_as<int64_t>() + 1).row(0)};
      },
      kScalarInt64);
  auto all = collect(make_batch(slices, 4, false));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1][0].buffer(), source.buffer());
  EXPECT_EQ(values_of(all[1][0]), (std::vector<int64_t>{4, 5, 6, 7}));
}

// num_parallel_calls > 1 stacks batches on a pool; the batches, their order, the last short
// batch, drop_remainder and the errors are those of the sequential batch.
TEST(Batch, ParallelAssemblyGivesTheSameBatches) {
  auto slices = make_from_tensor_slices(
      {Tensor::zeros(DType::kFloat32, Shape{23, 3}), int64_vector(iota(0, 23))});
  for (bool drop : {false, true}) {
    auto sequential = collect(make_batch(slices, 4, drop));
    for (int64_t parallel : {int64_t{2}, int64_t{8}, kAutotune}) {
      auto ds = make_batch(slices, 4, drop, parallel);
      EXPECT_EQ(ds->cardinality(), drop ? 5 : 6);
      auto got = collect(ds);
      ASSERT_EQ(got.size(), sequential.size()) << parallel;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i][0].shape(), sequential[i][0].shape());
        EXPECT_EQ(values_of(got[i][1]), values_of(sequential[i][1]))
            << "batch " << i << ", " << parallel;
      }
    }
  }
  // A shape mismatch found on a pool thread reaches get_next after the good batches.
  auto mixed = generator({{int64_vector({1, 2})},
                          {int64_vector({3, 4})},
                          {int64_vector({1, 2})},
                          {int64_vector({1, 2, 3})}},
                         {{DType::kInt64, Shape{kUnknownDim}}});
  int produced = 0;
  Error e = iteration_error(make_batch(mixed, 2, false, 4), &produced);
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_EQ(produced, 1);
  EXPECT_NE(std::string(e.what()).find("int64[3]"), std::string::npos) << e.what();
  // An input error comes after the batches before it, as in the sequential batch.
  for (int64_t parallel : {int64_t{1}, int64_t{4}}) {
    int before = 0;
    Error failed = iteration_error(
        make_batch(generator(scalar_elements(10), kScalarInt64, 5), 2, false, parallel), &before);
    EXPECT_EQ(failed.code(), Code::kDataLoss);
    EXPECT_EQ(before, 2) << parallel;
  }
  // with_inputs (used by distribution's rewrites) keeps the parallelism.
  auto rebuilt = make_batch(make_range(0, 10, 1), 3, false, 4)->with_inputs({make_range(0, 7, 1)});
  EXPECT_EQ(batches(rebuilt), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6}}));
  EXPECT_EQ(error_of([&] { make_batch(make_range(0, 3, 1), 2, false, -2); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_batch(make_range(0, 3, 1), 2, false, 1025); }).code(),
            Code::kInvalidArgument);
}

TEST(Batch, InvalidSizeIsRejected) {
  for (int64_t n : {int64_t{0}, int64_t{-1}, INT64_MIN}) {
    Error e = error_of([&] { make_batch(make_range(0, 3, 1), n, false); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << n;
    EXPECT_NE(std::string(e.what()).find("batch_size"), std::string::npos) << e.what();
  }
}

TEST(Batch, OfAnInfiniteInputIsInfinite) {
  auto ds = make_batch(make_repeat(make_range(0, 3, 1), -1), 2, false);
  EXPECT_EQ(ds->cardinality(), kInfiniteCardinality);
  EXPECT_EQ(batches(ds, 4), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 0}, {1, 2}, {0, 1}}));
}

// A batch size larger than the data is how "everything in one batch" is written; the
// cardinality must not overflow.
TEST(Batch, HugeBatchSizeCardinality) {
  EXPECT_EQ(make_batch(make_range(0, 10, 1), INT64_MAX, false)->cardinality(), 1);
  EXPECT_EQ(make_batch(make_range(0, 10, 1), INT64_MAX, true)->cardinality(), 0);
}

// Same, through the element-by-element path (enumerate has no batched fast path): the
// batch must be sized by the data, not by the requested size.
TEST(Batch, HugeBatchSizeOverElementByElementInput) {
  auto ds = make_batch(make_enumerate(make_range(0, 5, 1), 0), int64_t{1} << 40, false);
  std::vector<Element> all;
  try {
    all = collect(ds);
  } catch (const Error& e) {
    FAIL() << code_name(e.code()) << ": " << e.what();
  } catch (const std::exception& e) {
    FAIL() << "non-dinput exception: " << e.what();
  }
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(values_of(all[0][1]), iota(0, 5));
}

// ---- unbatch ----------------------------------------------------------------------------

TEST(Unbatch, SplitsBatchesIntoRows) {
  auto ds = make_unbatch(make_batch(make_range(0, 10, 1), 4, false));
  EXPECT_STREQ(ds->name(), "unbatch");
  EXPECT_EQ(ds->element_spec(), kScalarInt64);
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  EXPECT_EQ(flat(ds), iota(0, 10));
  auto all = collect(ds);
  for (const auto& e : all) EXPECT_EQ(e[0].rank(), 0);
}

TEST(Unbatch, RowsAreViewsAndComponentsStayAligned) {
  Tensor v = int64_vector(iota(100, 106));
  Tensor m = Tensor::zeros(DType::kFloat64, Shape{6, 2});
  auto ds = make_unbatch(make_from_tensors({v, m}));
  EXPECT_EQ(ds->element_spec(),
            (ElementSpec{{DType::kInt64, Shape()}, {DType::kFloat64, Shape{2}}}));
  auto all = collect(ds);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[3][0].data(), static_cast<const char*>(v.data()) + 3 * sizeof(int64_t));
  EXPECT_EQ(*all[3][0].data_as<int64_t>(), 103);
  EXPECT_EQ(all[3][1].shape(), (Shape{2}));
}

TEST(Unbatch, SkipsEmptyBatchesAndRejectsScalars) {
  auto with_empty = make_unbatch(generator(
      {{int64_vector({})}, {int64_vector({1, 2})}, {int64_vector({})}, {int64_vector({3})}},
      {{DType::kInt64, Shape{kUnknownDim}}}));
  EXPECT_EQ(flat(with_empty), (std::vector<int64_t>{1, 2, 3}));
  Error e = error_of([] { make_unbatch(make_range(0, 3, 1)); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("scalar"), std::string::npos) << e.what();
  EXPECT_EQ(make_unbatch(make_repeat(make_batch(make_range(0, 3, 1), 2, false), -1))->cardinality(),
            kInfiniteCardinality);
}

TEST(Unbatch, ComponentsWithDifferentRowCountsFail) {
  auto ds = make_unbatch(make_from_tensors({int64_vector({1, 2}), int64_vector({1, 2, 3})}));
  Error e = iteration_error(ds);
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("leading size"), std::string::npos) << e.what();
}

// ---- repeat -----------------------------------------------------------------------------

TEST(Repeat, CountsForeverAndZero) {
  auto twice = make_repeat(make_range(0, 3, 1), 2);
  EXPECT_STREQ(twice->name(), "repeat");
  EXPECT_EQ(flat(twice), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(twice->cardinality(), 6);
  auto none = make_repeat(make_range(0, 3, 1), 0);
  EXPECT_TRUE(flat(none).empty());
  EXPECT_EQ(none->cardinality(), 0);
  auto forever = make_repeat(make_range(0, 3, 1), -1);
  EXPECT_EQ(forever->cardinality(), kInfiniteCardinality);
  EXPECT_EQ(flat(forever, 8), (std::vector<int64_t>{0, 1, 2, 0, 1, 2, 0, 1}));
  EXPECT_EQ(make_repeat(make_range(0, 0, 1), -1)->cardinality(), 0);
  EXPECT_EQ(make_repeat(make_range(0, INT64_MAX, 1), 3)->cardinality(), kInfiniteCardinality);
}

TEST(Repeat, BatchesSpanEpochs) {
  EXPECT_EQ(batches(make_batch(make_repeat(make_range(0, 3, 1), 2), 4, false)),
            (std::vector<std::vector<int64_t>>{{0, 1, 2, 0}, {1, 2}}));
  // docs/semantics.md, "Datasets": from_tensor_slices([1,2,3,4]).repeat().batch(4) is
  // [1,2,3,4] forever, and with 3 the batches wrap around the epochs.
  auto slices = make_from_tensor_slices({int64_vector({1, 2, 3, 4})});
  EXPECT_EQ(batches(make_batch(make_repeat(slices, -1), 3, false), 3),
            (std::vector<std::vector<int64_t>>{{1, 2, 3}, {4, 1, 2}, {3, 4, 1}}));
  // 100 = 6*16 + 4 elements of from_tensors(([1.],[1.])).repeat(100).batch(16).
  Tensor one = Tensor::zeros(DType::kFloat32, Shape{1});
  auto pairs = collect(make_batch(make_repeat(make_from_tensors({one, one}), 100), 16, false));
  ASSERT_EQ(pairs.size(), 7u);
  EXPECT_EQ(pairs[5][1].shape(), (Shape{16, 1}));
  EXPECT_EQ(pairs[6][0].shape(), (Shape{4, 1}));
}

TEST(Repeat, BytesBatchesSpanEpochs) {
  Tensor words = Tensor::allocate(DType::kBytes, Shape{2});
  words.set_string(0, "a");
  words.set_string(1, "bc");
  auto all = collect(make_batch(make_repeat(make_from_tensor_slices({words}), 3), 4, false));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(strings_of(all[0][0]), (std::vector<std::string>{"a", "bc", "a", "bc"}));
  EXPECT_EQ(strings_of(all[1][0]), (std::vector<std::string>{"a", "bc"}));
}

// An input that yields nothing must end a repeat-forever instead of spinning on it; a
// filter that drops everything has an unknown cardinality, so only the iterator can tell.
TEST(Repeat, ForeverOverAnEmptyInputTerminates) {
  EXPECT_TRUE(collect(make_repeat(make_range(0, 0, 1), -1), 10).empty());
  auto nothing =
      make_filter(make_range(0, 5, 1),
                  std::make_shared<const PredicateFn>([](const Element&) { return false; }));
  EXPECT_TRUE(collect(make_repeat(nothing, -1), 10).empty());
  EXPECT_TRUE(collect(make_batch(make_repeat(nothing, -1), 4, false), 10).empty());
}

// tf.data's rule: repeat() of an input that may be non-empty is INFINITE, also when the
// input's size is UNKNOWN; a finite count keeps UNKNOWN unknown.
TEST(Repeat, ForeverOfAnUnknownInputIsInfinite) {
  auto unknown =
      make_filter(make_range(0, 5, 1),
                  std::make_shared<const PredicateFn>([](const Element&) { return true; }));
  ASSERT_EQ(unknown->cardinality(), kUnknownCardinality);
  EXPECT_EQ(make_repeat(unknown, -1)->cardinality(), kInfiniteCardinality);
  EXPECT_EQ(make_batch(make_repeat(unknown, -1), 4, false)->cardinality(), kInfiniteCardinality);
  EXPECT_EQ(make_repeat(unknown, 3)->cardinality(), kUnknownCardinality);
  EXPECT_EQ(make_repeat(unknown, 0)->cardinality(), 0);
  EXPECT_EQ(make_repeat(make_repeat(make_range(0, 2, 1), -1), -1)->cardinality(),
            kInfiniteCardinality);
  EXPECT_EQ(make_repeat(make_repeat(make_range(0, 2, 1), -1), 2)->cardinality(),
            kInfiniteCardinality);
  EXPECT_EQ(make_repeat(make_take(unknown, 0), -1)->cardinality(), 0);
}

TEST(Repeat, NegativeCountBelowForeverIsRejected) {
  Error e = error_of([] { make_repeat(make_range(0, 3, 1), -2); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("-2"), std::string::npos) << e.what();
}

// Each epoch is a new iterator of the input: a reshuffling shuffle gives a new order.
TEST(Repeat, EachEpochReshuffles) {
  auto v = flat(make_repeat(make_shuffle(make_range(0, 20, 1), 20, 7, true), 2));
  ASSERT_EQ(v.size(), 40u);
  std::vector<int64_t> first(v.begin(), v.begin() + 20), second(v.begin() + 20, v.end());
  EXPECT_NE(first, second);
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(first, iota(0, 20));
  EXPECT_EQ(second, iota(0, 20));
}

// ---- take / skip ------------------------------------------------------------------------

TEST(Take, CountsAllAndBeyond) {
  auto r = make_range(0, 10, 1);
  EXPECT_STREQ(make_take(r, 3)->name(), "take");
  EXPECT_EQ(flat(make_take(r, 3)), iota(0, 3));
  EXPECT_TRUE(flat(make_take(r, 0)).empty());
  EXPECT_EQ(flat(make_take(r, -1)), iota(0, 10));
  EXPECT_EQ(flat(make_take(r, 20)), iota(0, 10));
  EXPECT_EQ(make_take(r, 3)->cardinality(), 3);
  EXPECT_EQ(make_take(r, 0)->cardinality(), 0);
  EXPECT_EQ(make_take(r, -1)->cardinality(), 10);
  EXPECT_EQ(make_take(r, 20)->cardinality(), 10);
  auto forever = make_repeat(r, -1);
  EXPECT_EQ(make_take(forever, 25)->cardinality(), 25);
  EXPECT_EQ(flat(make_take(forever, 12)).size(), 12u);
  EXPECT_EQ(make_take(forever, -1)->cardinality(), kInfiniteCardinality);
  auto unknown =
      make_filter(r, std::make_shared<const PredicateFn>([](const Element&) { return true; }));
  EXPECT_EQ(make_take(unknown, 3)->cardinality(), kUnknownCardinality);
}

TEST(Take, BatchedThroughTake) {
  EXPECT_EQ(batches(make_batch(make_take(make_range(0, 10, 1), 5), 2, false)),
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4}}));
  EXPECT_EQ(batches(make_batch(make_take(make_repeat(make_range(0, 3, 1), -1), 5), 4, false)),
            (std::vector<std::vector<int64_t>>{{0, 1, 2, 0}, {1}}));
}

TEST(Skip, CountsAllAndBeyond) {
  auto r = make_range(0, 10, 1);
  EXPECT_STREQ(make_skip(r, 3)->name(), "skip");
  EXPECT_EQ(flat(make_skip(r, 3)), iota(3, 10));
  EXPECT_EQ(flat(make_skip(r, 0)), iota(0, 10));
  EXPECT_TRUE(flat(make_skip(r, -1)).empty());
  EXPECT_TRUE(flat(make_skip(r, 20)).empty());
  EXPECT_EQ(make_skip(r, 3)->cardinality(), 7);
  EXPECT_EQ(make_skip(r, -1)->cardinality(), 0);
  EXPECT_EQ(make_skip(r, 20)->cardinality(), 0);
  EXPECT_EQ(make_skip(make_repeat(r, -1), 3)->cardinality(), kInfiniteCardinality);
  EXPECT_EQ(flat(make_take(make_skip(make_repeat(r, -1), 8), 4)),
            (std::vector<int64_t>{8, 9, 0, 1}));
  EXPECT_EQ(batches(make_batch(make_skip(r, 7), 2, false)),
            (std::vector<std::vector<int64_t>>{{7, 8}, {9}}));
}

TEST(TakeSkip, CountsBelowMinusOneAreRejected) {
  EXPECT_EQ(error_of([] { make_take(make_range(0, 3, 1), -2); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of([] { make_skip(make_range(0, 3, 1), -2); }).code(), Code::kInvalidArgument);
}

// ---- shard ------------------------------------------------------------------------------

TEST(Shard, KeepsEveryNthElement) {
  auto r = make_range(0, 10, 1);
  auto s = make_shard(r, 3, 1);
  EXPECT_STREQ(s->name(), "shard");
  EXPECT_EQ(flat(s), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(s->cardinality(), 3);
  EXPECT_EQ(flat(make_shard(r, 3, 0)), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(make_shard(r, 3, 0)->cardinality(), 4);
  EXPECT_EQ(flat(make_shard(r, 3, 2)), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(flat(make_shard(r, 1, 0)), iota(0, 10));
  EXPECT_EQ(flat(make_shard(r, 20, 15)), std::vector<int64_t>{});
  EXPECT_EQ(make_shard(r, 20, 15)->cardinality(), 0);
  EXPECT_EQ(make_shard(make_repeat(r, -1), 2, 1)->cardinality(), kInfiniteCardinality);
  EXPECT_EQ(flat(make_shard(make_repeat(r, -1), 4, 3), 5), (std::vector<int64_t>{3, 7, 1, 5, 9}));
}

TEST(Shard, ArgumentsAreValidated) {
  auto r = make_range(0, 10, 1);
  for (auto [num, index] :
       std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {-2, 0}, {3, 3}, {3, -2}, {3, 7}}) {
    const int64_t shards = num,
                  shard = index;  // C++17 lambdas cannot capture structured bindings (clang)
    Error e = error_of([&] { make_shard(r, shards, shard); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument) << num << "," << index;
  }
  Error only_one = error_of([&] { make_shard(r, kShardHint, 0); });
  EXPECT_EQ(only_one.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(only_one.what()).find("SHARD_HINT"), std::string::npos) << only_one.what();
}

// A SHARD_HINT placeholder is resolved by distribution; iterated directly it must fail.
TEST(Shard, HintPlaceholderCannotBeIterated) {
  auto hint = make_shard(make_range(0, 10, 1), kShardHint, kShardHint);
  auto node = std::dynamic_pointer_cast<const ShardDataset>(hint);
  ASSERT_NE(node, nullptr);
  EXPECT_TRUE(node->is_hint());
  EXPECT_EQ(hint->cardinality(), kUnknownCardinality);
  Error e = error_of([&] { iterate(hint); });
  EXPECT_EQ(e.code(), Code::kFailedPrecondition);
  EXPECT_NE(std::string(e.what()).find("SHARD_HINT"), std::string::npos) << e.what();
}

// ---- shuffle ----------------------------------------------------------------------------

TEST(Shuffle, IsASeededPermutation) {
  auto ds = make_shuffle(make_range(0, 100, 1), 100, 42, false);
  EXPECT_STREQ(ds->name(), "shuffle");
  EXPECT_EQ(ds->cardinality(), 100);
  EXPECT_EQ(ds->element_spec(), kScalarInt64);
  auto order = flat(ds);
  EXPECT_NE(order, iota(0, 100));
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(0, 100));
  // The same seed in another dataset gives the same order; another seed another one.
  EXPECT_EQ(flat(make_shuffle(make_range(0, 100, 1), 100, 42, false)), order);
  EXPECT_NE(flat(make_shuffle(make_range(0, 100, 1), 100, 43, false)), order);
}

TEST(Shuffle, SmallBufferIsStillAPermutationAndBufferOneKeepsOrder) {
  auto order = flat(make_shuffle(make_range(0, 50, 1), 5, 1, false));
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(0, 50));
  EXPECT_NE(order, iota(0, 50));
  // A buffer of 5 only moves an element forward by at most 4 places.
  for (size_t i = 0; i < order.size(); ++i) EXPECT_LE(order[i], static_cast<int64_t>(i) + 4) << i;
  EXPECT_EQ(flat(make_shuffle(make_range(0, 50, 1), 1, 1, false)), iota(0, 50));
}

TEST(Shuffle, WithoutReshuffleEveryIteratorHasTheSameOrder) {
  auto ds = make_shuffle(make_range(0, 30, 1), 30, 5, false);
  auto first = flat(ds);
  EXPECT_EQ(flat(ds), first);
  EXPECT_EQ(flat(ds), first);
}

// reshuffle_each_iteration: a new order per iterator, yet the sequence of orders is the
// same in every run (a new, identically built dataset starts the same sequence).
TEST(Shuffle, ReshuffleEachIterationIsReproducible) {
  auto build = [] { return make_shuffle(make_range(0, 30, 1), 30, 5, true); };
  auto a = build();
  auto a1 = flat(a), a2 = flat(a), a3 = flat(a);
  EXPECT_NE(a1, a2);
  EXPECT_NE(a2, a3);
  auto b = build();
  EXPECT_EQ(flat(b), a1);
  EXPECT_EQ(flat(b), a2);
  EXPECT_EQ(flat(b), a3);
}

// A graph rewrite (distribution) rebuilds nodes; a rewritten shuffle continues the order
// sequence of the original instead of restarting it.
TEST(Shuffle, RewrittenNodeContinuesTheSequenceOfOrders) {
  auto a = make_shuffle(make_range(0, 30, 1), 30, 9, true);
  auto first = flat(a);
  auto rewritten = a->with_inputs({make_range(0, 30, 1)});
  auto fresh = make_shuffle(make_range(0, 30, 1), 30, 9, true);
  flat(fresh);
  EXPECT_EQ(flat(rewritten), flat(fresh));
  EXPECT_NE(flat(rewritten), first);
}

TEST(Shuffle, RandomSeedStillGivesAPermutation) {
  auto order = flat(make_shuffle(make_range(0, 40, 1), 40, -1, false));
  std::sort(order.begin(), order.end());
  EXPECT_EQ(order, iota(0, 40));
}

// Records as a file reader makes them: views of buffers of `per_chunk` records each, which
// say where in a file they were read from. Every buffer made is watched, so that a test can
// count those still alive.
class ChunkedRecords final : public GeneratorSource {
 public:
  ChunkedRecords(int64_t records, int64_t per_chunk, size_t record_bytes)
      : records_(records), per_chunk_(per_chunk), record_bytes_(record_bytes) {}
  // Record i: "r", its index in 7 digits, then 'x's.
  static std::string record(int64_t i, size_t bytes) {
    std::string s = "r" + std::string(7 - std::to_string(i).size(), '0') + std::to_string(i);
    s.resize(bytes, 'x');
    return s;
  }
  std::unique_ptr<GeneratorInstance> open() const override {
    return std::make_unique<Instance>(this);
  }
  size_t alive() const {
    size_t n = 0;
    for (const auto& c : chunks_) n += !c.expired();
    return n;
  }

 private:
  class Instance final : public GeneratorInstance {
   public:
    explicit Instance(const ChunkedRecords* g) : g_(g) {}
    bool next(Element& out) override {
      if (pos_ >= g_->records_) return false;
      const size_t bytes = g_->record_bytes_;
      if (pos_ % g_->per_chunk_ == 0) {
        chunk_ = allocate_host(static_cast<size_t>(g_->per_chunk_) * bytes);
        for (int64_t k = 0; k < g_->per_chunk_; ++k)
          std::memcpy(static_cast<char*>(chunk_->data()) + k * bytes,
                      record(pos_ + k, bytes).data(), bytes);
        auto origin = std::make_shared<ByteOrigin>();
        origin->path = std::make_shared<const std::string>("chunked.tfrecord");
        origin->anchor = static_cast<const char*>(chunk_->data());
        origin->offset = static_cast<uint64_t>(pos_) * bytes;
        chunk_->set_origin(std::move(origin));
        g_->chunks_.push_back(chunk_);
      }
      const size_t at = static_cast<size_t>(pos_ % g_->per_chunk_) * bytes;
      Tensor t = Tensor::allocate(DType::kBytes, Shape());
      t.set_string_view(0, static_cast<const char*>(chunk_->data()) + at, bytes, chunk_);
      out = {std::move(t)};
      ++pos_;
      return true;
    }

   private:
    const ChunkedRecords* g_;
    int64_t pos_ = 0;
    std::shared_ptr<Buffer> chunk_;
  };
  int64_t records_;
  int64_t per_chunk_;
  size_t record_bytes_;
  mutable std::vector<std::weak_ptr<Buffer>> chunks_;
};

TEST(Shuffle, CopiesLongHeldRecordsSoThatTheirReadBuffersCanGo) {
  constexpr int64_t kRecords = 20000;
  constexpr int64_t kPerChunk = 256;
  constexpr int64_t kBuffer = 2000;
  constexpr size_t kBytes = 64;
  auto source = std::make_shared<ChunkedRecords>(kRecords, kPerChunk, kBytes);
  auto it = iterate(make_shuffle(make_from_generator({TensorSpec{DType::kBytes, Shape()}}, source),
                                 kBuffer, 7, false));
  std::vector<bool> seen(kRecords, false);
  size_t most_alive = 0;
  int64_t n = 0;
  Element e;
  while (it->next(e)) {
    const std::string s(e.at(0).string(0));
    const int64_t i = std::stoll(s.substr(1, 7));
    ASSERT_TRUE(i >= 0 && i < kRecords && !seen[static_cast<size_t>(i)]) << s;
    seen[static_cast<size_t>(i)] = true;
    ASSERT_EQ(s, ChunkedRecords::record(i, kBytes));
    // Copied or not, a record still says where it was read from.
    ASSERT_EQ(describe_origin(e.at(0), 0), str_cat(" from 'chunked.tfrecord' at byte offset ",
                                                   i * static_cast<int64_t>(kBytes)));
    e.clear();
    most_alive = std::max(most_alive, source->alive());
    ++n;
  }
  EXPECT_EQ(n, kRecords);
  // The last of a chunk's 256 records to leave the buffer would keep it for about H(256) =
  // 6.1 buffers' worth of reads: about 55 chunks alive at once. Copied out after 2 buffers
  // (swept every half buffer), a chunk goes about 2.5 buffers after its last record was read:
  // 21 chunks, the generator's own included.
  EXPECT_LE(most_alive, 26u);
}

TEST(Shuffle, BufferSizeMustBePositive) {
  EXPECT_EQ(error_of([] { make_shuffle(make_range(0, 3, 1), 0, 1, false); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([] { make_shuffle(make_range(0, 3, 1), -1, 1, false); }).code(),
            Code::kInvalidArgument);
}

// ---- map --------------------------------------------------------------------------------

TEST(Map, SequentialAppliesTheFunctionInOrder) {
  auto ds = map_fn(make_range(0, 6, 1), [](const Element& in) { return times(in, 10); });
  EXPECT_STREQ(ds->name(), "map");
  EXPECT_EQ(ds->cardinality(), 6);
  EXPECT_EQ(ds->element_spec(), kScalarInt64);
  EXPECT_EQ(flat(ds), (std::vector<int64_t>{0, 10, 20, 30, 40, 50}));
}

TEST(Map, OutSpecDescribesTheResults) {
  ElementSpec out{{DType::kBytes, Shape()}, {DType::kInt64, Shape()}};
  auto ds = map_fn(
      make_range(0, 3, 1),
      [](const Element& in) {
        return Element{bytes_scalar(std::to_string(*in[0].data_as<int64_t>())), in[0]};
      },
      out);
  EXPECT_EQ(ds->element_spec(), out);
  auto all = collect(ds);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2][0].string(0), "2");
  EXPECT_EQ(*all[2][1].data_as<int64_t>(), 2);
}

TEST(Map, ResultNotMatchingTheSpecFails) {
  auto ds = map_fn(make_range(0, 3, 1),
                   [](const Element&) { return Element{Tensor::zeros(DType::kFloat32, Shape())}; });
  Error e = iteration_error(ds);
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  std::string msg = e.what();
  EXPECT_NE(msg.find("map function"), std::string::npos) << msg;
  EXPECT_NE(msg.find("float32[]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int64[]"), std::string::npos) << msg;
}

TEST(Map, ErrorsArriveAfterTheEarlierResults) {
  auto failing = [](const Element& in) {
    if (*in[0].data_as<int64_t>() == 5) raise(Code::kUnavailable, "map broke on 5");
    return times(in, 1);
  };
  for (int64_t parallel : {int64_t{1}, int64_t{4}}) {
    int produced = -1;
    Error e = iteration_error(map_fn(make_range(0, 20, 1), failing, {}, parallel, true), &produced);
    EXPECT_EQ(produced, 5) << parallel;
    EXPECT_EQ(e.code(), Code::kUnavailable) << parallel;
    EXPECT_STREQ(e.what(), "map broke on 5");
  }
}

// Element 0 cannot finish before element 1 has: a deterministic parallel map must still
// deliver 0 first (the wait is bounded so that a broken pool cannot hang the test).
TEST(Map, ParallelDeterministicKeepsInputOrder) {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    int finished = 0;
  };
  auto state = std::make_shared<State>();
  auto fn = [state](const Element& in) {
    int64_t x = *in[0].data_as<int64_t>();
    if (x == 0) {
      std::unique_lock<std::mutex> lock(state->mu);
      state->cv.wait_for(lock, std::chrono::seconds(5), [&] { return state->finished > 0; });
    }
    Element out = times(in, 3);
    {
      std::lock_guard<std::mutex> lock(state->mu);
      if (x != 0) ++state->finished;
    }
    state->cv.notify_all();
    return out;
  };
  auto ds = map_fn(make_range(0, 40, 1), fn, {}, 4, true);
  std::vector<int64_t> expected;
  for (int64_t i = 0; i < 40; ++i) expected.push_back(3 * i);
  EXPECT_EQ(flat(ds), expected);
}

TEST(Map, ParallelCallsOverlap) {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    int active = 0, max_active = 0;
  };
  auto state = std::make_shared<State>();
  auto fn = [state](const Element& in) {
    std::unique_lock<std::mutex> lock(state->mu);
    state->max_active = std::max(state->max_active, ++state->active);
    state->cv.notify_all();
    // Wait (bounded) until some call has seen a second one running at the same time.
    state->cv.wait_for(lock, std::chrono::milliseconds(500),
                       [&] { return state->max_active >= 2; });
    --state->active;
    return times(in, 1);
  };
  EXPECT_EQ(flat(map_fn(make_range(0, 8, 1), fn, {}, 4, true)), iota(0, 8));
  EXPECT_GE(state->max_active, 2);
}

TEST(Map, NonDeterministicDeliversEveryElementExactlyOnce) {
  auto fn = [](const Element& in) {
    int64_t x = *in[0].data_as<int64_t>();
    volatile int64_t spin = 0;  // uneven work so that calls finish out of order
    for (int64_t i = 0; i < (x % 7) * 2000; ++i) spin = spin + i;
    return times(in, 1);
  };
  for (int64_t parallel : {int64_t{3}, int64_t{kAutotune}}) {
    auto v = flat(map_fn(make_range(0, 300, 1), fn, {}, parallel, false));
    ASSERT_EQ(v.size(), 300u) << parallel;
    std::sort(v.begin(), v.end());
    EXPECT_EQ(v, iota(0, 300)) << parallel;
  }
}

TEST(Map, ArgumentsAreValidated) {
  auto r = make_range(0, 3, 1);
  auto ok = std::make_shared<const MapFn>([](const Element& in) { return in; });
  EXPECT_EQ(error_of([&] { make_map(r, ok, {}, -2, true); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_map(r, ok, {}, 1025, true); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_map(r, nullptr, {}, 1, true); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_map(r, std::make_shared<const MapFn>(), {}, 1, true); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(flat(make_map(r, ok, {}, 0, true)), iota(0, 3));  // 0 means sequential
}

// Destroying a parallel map mid-stream joins its pool without waiting for the rest.
TEST(Map, DestroyingAParallelIteratorMidStreamIsPrompt) {
  auto ds = map_fn(
      make_repeat(make_range(0, 10, 1), -1), [](const Element& in) { return times(in, 2); }, {}, 4,
      true);
  auto it = iterate(ds);
  Element e;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(it->next(e));
  auto start = std::chrono::steady_clock::now();
  it.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// map_many: runs of up to max_count (the last one shorter), the same results as map, and
// the arguments checked.
TEST(MapMany, RunsGiveTheResultsOfMap) {
  for (int64_t parallel : {1, 3}) {
    std::mutex mu;
    std::multiset<size_t> runs;
    auto fn = std::make_shared<const MapManyFn>(
        [&](std::vector<Element>& outs, std::vector<Element>& ins) {
          {
            std::lock_guard<std::mutex> lock(mu);
            runs.insert(ins.size());
          }
          for (const Element& in : ins) outs.push_back(times(in, 3));
        });
    auto ds = make_map_many(make_range(0, 23, 1), fn, 5, {}, parallel, true);
    EXPECT_EQ(flat(ds),
              flat(map_fn(make_range(0, 23, 1), [](const Element& in) { return times(in, 3); })))
        << parallel;
    EXPECT_EQ(runs, (std::multiset<size_t>{3, 5, 5, 5, 5})) << parallel;
  }
  auto ok = std::make_shared<const MapManyFn>(
      [](std::vector<Element>& outs, std::vector<Element>& ins) { outs = ins; });
  auto r = make_range(0, 3, 1);
  EXPECT_EQ(error_of([&] { make_map_many(r, ok, 0, {}, 1, true); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_map_many(r, nullptr, 2, {}, 1, true); }).code(),
            Code::kInvalidArgument);
  // A function that gives a result count other than its inputs' is a bug of the caller's
  // adapter, reported rather than read past.
  auto short_fn = std::make_shared<const MapManyFn>(
      [](std::vector<Element>& outs, std::vector<Element>& ins) { outs.push_back(ins[0]); });
  auto it = make_map_many(r, short_fn, 2, {}, 1, true)->make_iterator(IteratorContext{});
  Element e;
  EXPECT_EQ(error_of([&] { it->next(e); }).code(), Code::kInternal);
}

// Tasks submitted after the workers have gone to sleep (past their yields) run, as do bursts
// while they are awake: submit wakes a worker only when one sleeps.
TEST(ThreadPool, RunsTasksSubmittedAfterTheWorkersSleep) {
  ThreadPool pool(2);
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  auto task = [&] {
    std::lock_guard<std::mutex> lock(mu);
    ++done;
    cv.notify_all();
  };
  int expected = 0;
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the workers fall asleep
    for (int i = 0; i < 1 + round * 7; ++i) pool.submit(task);
    expected += 1 + round * 7;
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return done == expected; }))
        << "round " << round << ": " << done << " of " << expected << " tasks ran";
  }
}

// ---- filter -----------------------------------------------------------------------------

TEST(Filter, KeepsMatchingElements) {
  auto even = std::make_shared<const PredicateFn>(
      [](const Element& e) { return *e[0].data_as<int64_t>() % 2 == 0; });
  auto ds = make_filter(make_range(0, 10, 1), even);
  EXPECT_STREQ(ds->name(), "filter");
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  EXPECT_EQ(ds->element_spec(), kScalarInt64);
  EXPECT_EQ(flat(ds), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(make_filter(make_range(0, 0, 1), even)->cardinality(), 0);
  EXPECT_EQ(batches(make_batch(ds, 2, false)),
            (std::vector<std::vector<int64_t>>{{0, 2}, {4, 6}, {8}}));
  EXPECT_EQ(error_of([] { make_filter(make_range(0, 1, 1), nullptr); }).code(),
            Code::kInvalidArgument);
}

TEST(Filter, PredicateErrorsPropagate) {
  auto bad = std::make_shared<const PredicateFn>([](const Element& e) -> bool {
    if (*e[0].data_as<int64_t>() == 3) raise(Code::kInternal, "predicate broke");
    return true;
  });
  int produced = -1;
  Error e = iteration_error(make_filter(make_range(0, 10, 1), bad), &produced);
  EXPECT_EQ(produced, 3);
  EXPECT_EQ(e.code(), Code::kInternal);
}

// ---- enumerate --------------------------------------------------------------------------

// Indexes end at INT64_MAX: the element after it fails instead of getting INT64_MIN (UB).
TEST(Enumerate, IndexOverflowIsAnError) {
  auto last = collect(make_enumerate(make_range(0, 1, 1), INT64_MAX));
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(*last[0][0].data_as<int64_t>(), INT64_MAX);
  auto ds = make_enumerate(make_range(0, 5, 1), INT64_MAX - 1);
  auto it = iterate(ds);
  Element e;
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(*e[0].data_as<int64_t>(), INT64_MAX - 1);
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(*e[0].data_as<int64_t>(), INT64_MAX);
  Error err = error_of([&] { it->next(e); });
  EXPECT_EQ(err.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(err.what()).find("overflows int64"), std::string::npos) << err.what();
  EXPECT_NE(std::string(err.what()).find("element 2 "), std::string::npos) << err.what();
}

TEST(Enumerate, PrependsAnInt64Index) {
  auto ds = make_enumerate(make_from_tensor_slices({int64_vector({10, 20, 30})}), 5);
  EXPECT_STREQ(ds->name(), "enumerate");
  EXPECT_EQ(ds->cardinality(), 3);
  EXPECT_EQ(ds->element_spec(), (ElementSpec{{DType::kInt64, Shape()}, {DType::kInt64, Shape()}}));
  auto all = collect(ds);
  ASSERT_EQ(all.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(all[i].size(), 2u);
    EXPECT_EQ(*all[i][0].data_as<int64_t>(), 5 + i);
    EXPECT_EQ(*all[i][1].data_as<int64_t>(), 10 * (i + 1));
  }
  // docs/semantics.md, "Order across workers": range(24).enumerate().batch(6).
  auto b = collect(make_batch(make_enumerate(make_range(0, 24, 1), 0), 6, false));
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(values_of(b[3][0]), iota(18, 24));
  EXPECT_EQ(values_of(b[3][1]), iota(18, 24));
}

// ---- prefetch ---------------------------------------------------------------------------

TEST(Prefetch, SameElementsAllBufferSizes) {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{kAutotune}, int64_t{1000}}) {
    auto ds = make_prefetch(make_range(0, 50, 1), n);
    EXPECT_STREQ(ds->name(), "prefetch");
    EXPECT_EQ(ds->cardinality(), 50);
    EXPECT_EQ(flat(ds), iota(0, 50)) << n;
  }
  EXPECT_EQ(error_of([] { make_prefetch(make_range(0, 3, 1), -2); }).code(),
            Code::kInvalidArgument);
}

TEST(Prefetch, ErrorsArriveAfterTheEarlierElements) {
  int produced = -1;
  Error e =
      iteration_error(make_prefetch(generator(scalar_elements(10), kScalarInt64, 4), 8), &produced);
  EXPECT_EQ(produced, 4);
  EXPECT_EQ(e.code(), Code::kDataLoss);
  EXPECT_NE(std::string(e.what()).find("element 4"), std::string::npos) << e.what();
}

// docs/semantics.md, "Read-ahead": once distribute_dataset's adaptive read-ahead runs on its
// thread, it keeps as many elements ahead as fit in 8 MiB by the largest element so far, at
// least the R it was asked for and at most 64. The read-ahead of a pipeline with user
// functions, and a prefetch(n) of the user's, keep what they were given.
TEST(Prefetch, ReadAheadKeepsMoreSmallElementsAhead) {
  enum Kind { kAdaptive, kThread, kUsersPrefetch };
  struct Case {
    Kind kind;
    int64_t bytes;       // component 1's bytes, from element `grows_at` on (0 before it)
    int64_t grows_at;    // 0: every element has `bytes`
    int64_t want_depth;  // once the thread has made element 160
  };
  constexpr int64_t kMiB = int64_t{1} << 20;
  const Case cases[] = {
      {kAdaptive, 0, 0, 64},          // 8 bytes an element: the most, 64
      {kAdaptive, kMiB, 0, 7},        // 8 MiB / (1 MiB + 8 bytes), rounded down
      {kAdaptive, 3 * kMiB, 0, 2},    // fewer than R fit: R
      {kAdaptive, 2 * kMiB, 150, 3},  // small, then large: the depth comes down
      {kThread, 0, 0, 2},
      {kUsersPrefetch, 0, 0, 2},
  };
  constexpr int64_t kElements = 300;  // 140 left after element 160: more than 64
  for (const Case& c : cases) {
    // Each element costs 100 us to make (above the 20 us that starts the adaptive thread):
    // its index, and c.bytes uninitialised bytes.
    auto slow = map_fn(
        make_range(0, kElements, 1),
        [c](const Element& in) {
          std::this_thread::sleep_for(std::chrono::microseconds(100));
          const int64_t i = *in[0].data_as<int64_t>();
          const int64_t n = i >= c.grows_at ? c.bytes : 0;
          return Element{in[0], Tensor::allocate(DType::kUInt8, Shape({n}))};
        },
        ElementSpec{{DType::kInt64, Shape()}, {DType::kUInt8, Shape({kUnknownDim})}});
    auto it = iterate(c.kind == kUsersPrefetch ? make_prefetch(slow, 2)
                                               : make_read_ahead(slow, 2, c.kind == kAdaptive));
    auto* buffer = dynamic_cast<BufferedIterator*>(it.get());
    ASSERT_NE(buffer, nullptr);
    const std::string what = str_cat("kind ", c.kind, ", ", c.bytes, " bytes from ", c.grows_at);
    // The adaptive form makes the first elements on the consumer's thread (until four timed
    // calls, one in 16, say they are costly); by element 160 its thread has made elements
    // past 150.
    Element e;
    int64_t taken = 0;
    for (; taken < 160; ++taken) {
      ASSERT_TRUE(it->next(e)) << what;
      ASSERT_EQ(*e[0].data_as<int64_t>(), taken) << what;
    }
    EXPECT_EQ(buffer->buffer_capacity(), c.want_depth) << what;
    // Given time, the thread fills the queue to its depth.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (buffer->buffered() < c.want_depth && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(buffer->buffered(), c.want_depth) << what;
    for (; taken < kElements; ++taken) {
      ASSERT_TRUE(it->next(e)) << what;
      ASSERT_EQ(*e[0].data_as<int64_t>(), taken) << what;
    }
    EXPECT_FALSE(it->next(e)) << what;
  }
}

// docs/architecture.md, "Threads": destroying an iterator cancels its background threads
// promptly.
TEST(Prefetch, DestroyingAnIteratorMidStreamIsPrompt) {
  auto endless = make_repeat(make_range(0, 1000, 1), -1);
  for (auto ds :
       {make_prefetch(endless, 16), make_prefetch(make_prefetch(endless, 4), 4),
        make_prefetch(map_fn(
                          endless, [](const Element& in) { return times(in, 1); }, {}, 3, true),
                      8)}) {
    auto it = iterate(ds);
    Element e;
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(it->next(e));
    auto start = std::chrono::steady_clock::now();
    it.reset();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  }
  // Destroyed before anything was read.
  auto start = std::chrono::steady_clock::now();
  iterate(make_prefetch(endless, 2)).reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// ---- rebatch ----------------------------------------------------------------------------

TEST(Rebatch, RegroupsRowsAcrossInputBatches) {
  auto ds = make_rebatch(make_batch(make_range(0, 10, 1), 4, false), {3}, false);
  EXPECT_STREQ(ds->name(), "rebatch");
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  EXPECT_EQ(ds->element_spec(), (ElementSpec{{DType::kInt64, Shape{kUnknownDim}}}));
  EXPECT_EQ(batches(ds), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9}}));

  auto dropped = make_rebatch(make_batch(make_range(0, 10, 1), 4, false), {3}, true);
  EXPECT_EQ(dropped->element_spec(), (ElementSpec{{DType::kInt64, Shape{3}}}));
  EXPECT_EQ(batches(dropped), (std::vector<std::vector<int64_t>>{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}));
}

TEST(Rebatch, SizesCycleAndZeroGivesAnEmptyPiece) {
  auto ds = make_rebatch(make_batch(make_range(0, 10, 1), 4, false), {2, 0, 3}, false);
  EXPECT_EQ(batches(ds),
            (std::vector<std::vector<int64_t>>{{0, 1}, {}, {2, 3, 4}, {5, 6}, {}, {7, 8, 9}}));
  // Different sizes: the batch dimension is unknown even with drop_remainder.
  auto mixed = make_rebatch(make_batch(make_range(0, 10, 1), 4, false), {2, 1}, true);
  EXPECT_EQ(mixed->element_spec(), (ElementSpec{{DType::kInt64, Shape{kUnknownDim}}}));
  EXPECT_EQ(batches(mixed),
            (std::vector<std::vector<int64_t>>{{0, 1}, {2}, {3, 4}, {5}, {6, 7}, {8}}));
  // A leading 0 is an empty piece without reading, also before the first row.
  auto leading = make_rebatch(make_batch(make_range(0, 4, 1), 4, false), {0, 2}, false);
  EXPECT_EQ(batches(leading), (std::vector<std::vector<int64_t>>{{}, {0, 1}, {}, {2, 3}}));
}

TEST(Rebatch, EmptyPiecesKeepTheInnerShape) {
  Tensor m = Tensor::zeros(DType::kFloat32, Shape{4, 3});
  auto all = collect(make_rebatch(make_from_tensors({m}), {0, 4}, false));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0][0].shape(), (Shape{0, 3}));
  EXPECT_EQ(all[0][0].dtype(), DType::kFloat32);
  EXPECT_EQ(all[1][0].shape(), (Shape{4, 3}));
}

TEST(Rebatch, PiecesWithinOneInputBatchAreViews) {
  Tensor v = int64_vector(iota(0, 8));
  auto all = collect(make_rebatch(make_from_tensors({v}), {3}, false));
  ASSERT_EQ(all.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(all[i][0].buffer(), v.buffer()) << i;
    EXPECT_EQ(all[i][0].data(), static_cast<const char*>(v.data()) + 3 * i * sizeof(int64_t)) << i;
  }
  EXPECT_EQ(values_of(all[2][0]), (std::vector<int64_t>{6, 7}));
}

TEST(Rebatch, SpansBytesBatches) {
  Tensor words = Tensor::allocate(DType::kBytes, Shape{3});
  words.set_string(0, "x");
  words.set_string(1, "yy");
  words.set_string(2, "zzz");
  auto all = collect(make_rebatch(make_repeat(make_from_tensors({words}), 2), {4}, false));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(strings_of(all[0][0]), (std::vector<std::string>{"x", "yy", "zzz", "x"}));
  EXPECT_EQ(strings_of(all[1][0]), (std::vector<std::string>{"yy", "zzz"}));
}

TEST(Rebatch, ArgumentsAreValidated) {
  auto b = make_batch(make_range(0, 10, 1), 4, false);
  EXPECT_EQ(error_of([&] { make_rebatch(b, {}, false); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_rebatch(b, {0, 0}, false); }).code(), Code::kInvalidArgument);
  Error neg = error_of([&] { make_rebatch(b, {2, -1}, false); });
  EXPECT_EQ(neg.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(neg.what()).find("-1"), std::string::npos) << neg.what();
  EXPECT_EQ(error_of([] { make_rebatch(make_range(0, 3, 1), {2}, false); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(make_rebatch(make_repeat(b, -1), {3}, false)->cardinality(), kInfiniteCardinality);
}

// ---- interleave ---------------------------------------------------------------------------

// x -> range(10x, 10x + len), the usual way to check interleave's order.
DatasetPtr interleave_tens(DatasetPtr input, int64_t cycle, int64_t block, int64_t parallel = 1,
                           bool deterministic = true, int64_t len = 3) {
  auto fn = std::make_shared<const InterleaveFn>([len](const Element& in) {
    int64_t x = *in[0].data_as<int64_t>();
    return make_range(10 * x, 10 * x + len, 1);
  });
  return make_interleave(std::move(input), fn, kScalarInt64, cycle, block, parallel, deterministic);
}

TEST(Interleave, CyclesThroughOpenDatasetsLikeTfData) {
  auto ds = interleave_tens(make_range(0, 3, 1), 2, 1);
  EXPECT_STREQ(ds->name(), "interleave");
  EXPECT_EQ(ds->element_spec(), kScalarInt64);
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  // tf.data: range(3).interleave(lambda x: range(10x, 10x+3), cycle_length=2, block_length=1)
  EXPECT_EQ(flat(ds), (std::vector<int64_t>{0, 10, 1, 11, 2, 12, 20, 21, 22}));
  EXPECT_EQ(flat(interleave_tens(make_range(0, 2, 1), 2, 2)),
            (std::vector<int64_t>{0, 1, 10, 11, 2, 12}));
  EXPECT_EQ(flat(interleave_tens(make_range(0, 3, 1), 1, 1)),
            (std::vector<int64_t>{0, 1, 2, 10, 11, 12, 20, 21, 22}));
  EXPECT_EQ(flat(interleave_tens(make_range(0, 3, 1), 5, 2)),
            (std::vector<int64_t>{0, 1, 10, 11, 20, 21, 2, 12, 22}));
  EXPECT_EQ(interleave_tens(make_range(0, 0, 1), 2, 1)->cardinality(), 0);
  EXPECT_TRUE(flat(interleave_tens(make_range(0, 0, 1), 2, 1)).empty());
}

// Reading ahead on library threads must not change the order when deterministic, and must
// deliver every element exactly once when not.
TEST(Interleave, ParallelReadingKeepsOrderOrDeliversAll) {
  auto sequential = flat(interleave_tens(make_range(0, 12, 1), 4, 2, 1, true, 7));
  ASSERT_EQ(sequential.size(), 84u);
  EXPECT_EQ(flat(interleave_tens(make_range(0, 12, 1), 4, 2, 3, true, 7)), sequential);
  EXPECT_EQ(flat(interleave_tens(make_range(0, 12, 1), 4, 2, kAutotune, true, 7)), sequential);
  auto any_order = flat(interleave_tens(make_range(0, 12, 1), 4, 2, 3, false, 7));
  std::sort(any_order.begin(), any_order.end());
  std::sort(sequential.begin(), sequential.end());
  EXPECT_EQ(any_order, sequential);
}

TEST(Interleave, DatasetsNotMatchingTheSpecAndFunctionErrorsFail) {
  auto wrong = std::make_shared<const InterleaveFn>(
      [](const Element&) { return make_batch(make_range(0, 3, 1), 2, false); });
  Error e =
      iteration_error(make_interleave(make_range(0, 2, 1), wrong, kScalarInt64, 2, 1, 1, true));
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("int64[2]"), std::string::npos) << e.what();

  auto failing = std::make_shared<const InterleaveFn>([](const Element& in) -> DatasetPtr {
    if (*in[0].data_as<int64_t>() == 1) raise(Code::kNotFound, "no dataset for 1");
    return make_range(0, 2, 1);
  });
  int produced = -1;
  Error f = iteration_error(
      make_interleave(make_range(0, 3, 1), failing, kScalarInt64, 1, 1, 1, true), &produced);
  EXPECT_EQ(produced, 2);
  EXPECT_EQ(f.code(), Code::kNotFound);
}

TEST(Interleave, ArgumentsAreValidated) {
  auto fn =
      std::make_shared<const InterleaveFn>([](const Element&) { return make_range(0, 1, 1); });
  auto r = make_range(0, 3, 1);
  EXPECT_EQ(error_of([&] { make_interleave(r, fn, {}, 2, 1, 1, true); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_interleave(r, fn, kScalarInt64, 0, 1, 1, true); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_interleave(r, fn, kScalarInt64, 2, 0, 1, true); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_interleave(r, fn, kScalarInt64, 2, 1, -2, true); }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_interleave(r, nullptr, kScalarInt64, 2, 1, 1, true); }).code(),
            Code::kInvalidArgument);
}

TEST(Interleave, DestroyingAParallelIteratorMidStreamIsPrompt) {
  auto fn = std::make_shared<const InterleaveFn>(
      [](const Element&) { return make_repeat(make_range(0, 5, 1), -1); });
  auto ds = make_interleave(make_range(0, 4, 1), fn, kScalarInt64, 4, 1, 4, false);
  auto it = iterate(ds);
  Element e;
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(it->next(e));
  auto start = std::chrono::steady_clock::now();
  it.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

// ---- with_options -------------------------------------------------------------------------

TEST(WithOptions, OptionsReachDownstreamNodes) {
  Options opts;
  opts.auto_shard_policy = AutoShardPolicy::kData;
  auto ds = make_with_options(make_range(0, 4, 1), opts);
  EXPECT_STREQ(ds->name(), "with_options");
  EXPECT_EQ(ds->cardinality(), 4);
  EXPECT_EQ(flat(ds), iota(0, 4));
  EXPECT_FALSE(make_range(0, 4, 1)->options().auto_shard_policy.has_value());
  EXPECT_EQ(make_range(0, 4, 1)->options().policy(), AutoShardPolicy::kAuto);  // the default
  EXPECT_EQ(make_batch(make_prefetch(ds, 1), 2, false)->options().policy(), AutoShardPolicy::kData);
  // The nearest with_options wins.
  Options off;
  off.auto_shard_policy = AutoShardPolicy::kOff;
  EXPECT_EQ(make_take(make_with_options(ds, off), 1)->options().policy(), AutoShardPolicy::kOff);
  // Options merge field by field: a later with_options that does not set the policy keeps it.
  Options skip;
  skip.skip_corrupt_records = true;
  auto merged = make_with_options(make_batch(ds, 2, false), skip);
  EXPECT_EQ(merged->options().policy(), AutoShardPolicy::kData);
  EXPECT_TRUE(merged->options().skip_corrupt());
  EXPECT_FALSE(ds->options().skip_corrupt());
  Options bad;
  bad.auto_shard_policy = static_cast<AutoShardPolicy>(7);
  EXPECT_EQ(error_of([&] { make_with_options(ds, bad); }).code(), Code::kInvalidArgument);
  EXPECT_STREQ(policy_name(AutoShardPolicy::kHint), "HINT");
}

// ---- graph rewriting ----------------------------------------------------------------------

// Distribution rebuilds nodes over other inputs; every transform must keep its own
// parameters when it is rebuilt.
TEST(Graph, WithInputsKeepsEachNodesParameters) {
  auto small = make_range(0, 10, 1);
  auto big = make_range(100, 120, 1);
  auto keep = std::make_shared<const PredicateFn>(
      [](const Element& e) { return *e[0].data_as<int64_t>() % 2 == 0; });
  std::vector<DatasetPtr> nodes = {
      make_batch(small, 3, true), make_repeat(small, 2),
      make_take(small, 3),        make_skip(small, 7),
      make_shard(small, 4, 1),    make_shuffle(small, 1, 3, false),
      make_filter(small, keep),   make_enumerate(small, 50),
      make_prefetch(small, 2),    map_fn(small, [](const Element& in) { return times(in, -1); })};
  std::vector<std::vector<int64_t>> expected = {
      {100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117},
      {},  // repeat: computed below
      {100, 101, 102},
      iota(107, 120),
      {101, 105, 109, 113, 117},
      iota(100, 120),
      {100, 102, 104, 106, 108, 110, 112, 114, 116, 118},
      iota(50, 70),
      iota(100, 120),
      {}};
  for (int i = 0; i < 20; ++i) expected[1].push_back(100 + i);
  for (int i = 0; i < 20; ++i) expected[1].push_back(100 + i);
  for (int i = 0; i < 20; ++i) expected[9].push_back(-(100 + i));
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSERT_EQ(nodes[i]->inputs().size(), 1u) << nodes[i]->name();
    EXPECT_EQ(nodes[i]->inputs()[0], small) << nodes[i]->name();
    auto rebuilt = nodes[i]->with_inputs({big});
    EXPECT_STREQ(rebuilt->name(), nodes[i]->name());
    EXPECT_EQ(rebuilt->inputs()[0], big) << nodes[i]->name();
    EXPECT_EQ(flat(rebuilt), expected[i]) << nodes[i]->name();
  }
  auto batch = std::dynamic_pointer_cast<const BatchDataset>(nodes[0]->with_inputs({big}));
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(batch->batch_size(), 3);
  EXPECT_TRUE(batch->drop_remainder());
  // Sources have no inputs and rebuild as themselves.
  EXPECT_EQ(small->with_inputs({}), small);
}

// ---- sticky end and errors (what the C API gives users) ------------------------------------

TEST(Sticky, EndStaysEnded) {
  StickyIterator it(iterate(make_range(0, 2, 1)));
  Element e;
  EXPECT_TRUE(it.next(e));
  EXPECT_TRUE(it.next(e));
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(it.next(e));
}

// The generator would go on after its one failure; the iterator must not resume and
// silently lose the element.
TEST(Sticky, AnErrorRepeatsOnEveryLaterCall) {
  StickyIterator it(iterate(generator(scalar_elements(6), kScalarInt64, 2)));
  Element e;
  EXPECT_TRUE(it.next(e));
  EXPECT_TRUE(it.next(e));
  for (int i = 0; i < 3; ++i) {
    Error err = error_of([&] { it.next(e); });
    EXPECT_EQ(err.code(), Code::kDataLoss);
    EXPECT_STREQ(err.what(), "the list generator broke at element 2");
  }
}

// "After any other error the iterator is finished: later calls repeat the error" (dinput.h)
// holds for every failure, not only dinput::Error: an allocation failure in the middle of a
// pipeline (mapped to RESOURCE_EXHAUSTED by the C API) must not let the next call resume
// past the lost element.
TEST(Sticky, NonDinputExceptionsAlsoFinishTheIterator) {
  auto failed = std::make_shared<std::atomic<bool>>(false);
  auto ds = map_fn(make_range(0, 10, 1), [failed](const Element& in) {
    if (*in[0].data_as<int64_t>() == 2 && !failed->exchange(true)) throw std::bad_alloc();
    return in;
  });
  StickyIterator it(iterate(ds));
  Element e;
  EXPECT_TRUE(it.next(e));
  EXPECT_TRUE(it.next(e));
  EXPECT_THROW(it.next(e), std::bad_alloc);
  bool resumed = false;
  try {
    resumed = it.next(e);
  } catch (...) {
  }
  EXPECT_FALSE(resumed) << "the iterator resumed after a failure and returned "
                        << (resumed ? *e[0].data_as<int64_t>() : -1);
}

// The raw transforms themselves also stay ended once their input has ended.
TEST(Sticky, TransformsStayEnded) {
  auto endless_after = [](const DatasetPtr& ds) {
    auto it = iterate(ds);
    Element e;
    int n = 0;
    while (n < 1000 && it->next(e)) ++n;
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(it->next(e)) << ds->name();
    return n;
  };
  auto r = make_range(0, 10, 1);
  EXPECT_EQ(endless_after(make_batch(r, 4, false)), 3);
  EXPECT_EQ(endless_after(make_take(r, 4)), 4);
  EXPECT_EQ(endless_after(make_skip(r, 4)), 6);
  EXPECT_EQ(endless_after(make_repeat(r, 2)), 20);
  EXPECT_EQ(endless_after(make_shuffle(r, 4, 1, false)), 10);
  EXPECT_EQ(endless_after(make_prefetch(r, 2)), 10);
  EXPECT_EQ(endless_after(make_rebatch(make_batch(r, 4, false), {3, 0}, false)), 7);
  EXPECT_EQ(endless_after(make_unbatch(make_batch(r, 4, false))), 10);
  EXPECT_EQ(endless_after(map_fn(
                r, [](const Element& in) { return in; }, {}, 3, false)),
            10);
}

// ---- deep pipelines ---------------------------------------------------------------------

// A chain of a million take()s used to overflow the stack when freed and when iterated.
// Building stops with a clear error at the depth limit; the deepest allowed pipeline
// iterates, and the whole chain frees without recursing.
TEST(DeepPipeline, AMillionTakesStopAtTheLimitAndFree) {
  DatasetPtr ds = make_range(0, 5, 1);
  std::string message;
  Code code = Code::kOk;
  for (int i = 0; i < 1000000; ++i) {
    try {
      ds = make_take(ds, 3);
    } catch (const Error& e) {
      code = e.code();
      message = e.what();
      break;
    }
  }
  EXPECT_EQ(code, Code::kInvalidArgument);
  EXPECT_NE(message.find("pipeline is 10001 operations deep; the limit is 10000"),
            std::string::npos)
      << message;
  EXPECT_EQ(ds->depth(), kMaxPipelineDepth);
  EXPECT_EQ(ds->cardinality(), 3);
  EXPECT_EQ(flat(ds), (std::vector<int64_t>{0, 1, 2}));
  ds.reset();
}

// Nodes still owned elsewhere survive the iterative free of a chain that shares them.
TEST(DeepPipeline, FreeingAChainKeepsSharedNodes) {
  DatasetPtr base = make_take(make_range(0, 5, 1), 4);
  DatasetPtr chain = base;
  for (int i = 0; i < 5000; ++i) chain = make_skip(chain, 0);
  chain.reset();
  EXPECT_EQ(flat(base), (std::vector<int64_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace dinput
