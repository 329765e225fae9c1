// White-box tests of the operations over several datasets (zip, concatenate,
// sample_from_datasets, choose_from_datasets), cache and ignore_errors: their elements,
// specs and cardinalities (with tf.data's documentation examples), their errors, the
// distribution's view of them (batch-size detection, FILE sharding), and their saved states.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/datasets.h"
#include "data/state.h"
#include "distribute/auto_shard.h"
#include "distribute/graph.h"
#include "io/cache.h"
#include "io/file_sources.h"
#include "io/record_writer.h"

#include "resume_check.h"
#include "temp_dir_test.h"
#include "test_text.h"

namespace dinput {
namespace {

using test::error_of;
using test::text;

// ---- helpers --------------------------------------------------------------------------

std::vector<std::string> drain(Iterator& it, size_t limit = 100000) {
  return test::drain_as(it, text, limit);
}
std::vector<std::string> all_of(const DatasetPtr& ds, size_t limit = 100000) {
  return test::all_as(ds, text, limit);
}

std::vector<std::string> texts(std::initializer_list<const char*> items) {
  return std::vector<std::string>(items.begin(), items.end());
}

Tensor bytes_scalar(const std::string& s) {
  Tensor t = Tensor::allocate(DType::kBytes, Shape());
  t.set_string(0, s);
  return t;
}

Tensor int64_vector(const std::vector<int64_t>& values) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape{static_cast<int64_t>(values.size())});
  if (!values.empty())
    std::memcpy(t.mutable_data(), values.data(), values.size() * sizeof(int64_t));
  return t;
}

DatasetPtr range(int64_t a, int64_t b) { return make_range(a, b, 1); }

// A map that counts its calls (how often the input of a cache is read).
DatasetPtr counted(DatasetPtr ds, std::shared_ptr<std::atomic<int>> calls) {
  return make_map(std::move(ds), std::make_shared<const MapFn>([calls](const Element& e) {
                    ++*calls;
                    return e;
                  }),
                  {}, 1, {});
}

// A map that fails with `code` on the elements divisible by `every`.
DatasetPtr failing(DatasetPtr ds, int64_t every, Code code) {
  return make_map(std::move(ds), std::make_shared<const MapFn>([every, code](const Element& e) {
                    int64_t v = *e[0].data_as<int64_t>();
                    if (v % every == 0) raise(code, "element ", v, " is bad");
                    return e;
                  }),
                  {}, 1, {});
}

std::vector<std::string> resumed(const DatasetPtr& ds, size_t k) {
  return test::resumed_as(ds, k, text);
}
void expect_resumes_everywhere(const DatasetPtr& ds) {
  test::expect_resumes_everywhere_as(ds, text);
}

// ---- zip ------------------------------------------------------------------------------

TEST(Zip, JoinsComponentsAndEndsWithTheShortestInput) {
  // tf.data: zip(range(1, 4), range(4, 7)) -> (1, 4), (2, 5), (3, 6); the components of
  // each input follow each other in one flat tuple.
  DatasetPtr a = range(1, 4), b = range(4, 7);
  EXPECT_EQ(all_of(make_zip({a, b})), texts({"(1)(4)", "(2)(5)", "(3)(6)"}));
  DatasetPtr c = make_zip({a, make_zip({b, range(7, 100)})});
  EXPECT_EQ(c->element_spec().size(), 3u);
  EXPECT_EQ(all_of(c)[2], "(3)(6)(9)");
  // The shortest input ends it: tf.data's zip((a, b, d)) with d = range(13, 15) has 2.
  EXPECT_EQ(all_of(make_zip({a, b, range(13, 15)})).size(), 2u);
  EXPECT_EQ(make_zip({a, range(13, 15)})->cardinality(), 2);
  EXPECT_EQ(make_zip({a, make_repeat(b, -1)})->cardinality(), 3);
  EXPECT_EQ(make_zip({make_repeat(a, -1), make_repeat(b, -1)})->cardinality(),
            kInfiniteCardinality);
  EXPECT_EQ(make_zip({a, make_ignore_errors(b, false)})->cardinality(), kUnknownCardinality);
  EXPECT_EQ(error_of([] { make_zip({}); }).code(), Code::kInvalidArgument);
  EXPECT_EQ(error_of([&] { make_zip({a, nullptr}); }).code(), Code::kInvalidArgument);
}

TEST(Zip, BatchesOfAZipAreTheZipOfBatches) {
  DatasetPtr z = make_zip({range(0, 5), make_from_tensor_slices({int64_vector({10, 11, 12})})});
  EXPECT_EQ(all_of(make_batch(z, 2, false)), texts({"(0,1)(10,11)", "(2)(12)"}));
  EXPECT_EQ(all_of(make_batch(z, 2, true)), texts({"(0,1)(10,11)"}));
}

// ---- concatenate ----------------------------------------------------------------------

TEST(Concatenate, OneAfterTheOther) {
  // tf.data: range(1, 4).concatenate(range(4, 8)) -> 1, 2, ..., 7.
  DatasetPtr c = make_concatenate(range(1, 4), range(4, 8));
  EXPECT_EQ(all_of(c), texts({"(1)", "(2)", "(3)", "(4)", "(5)", "(6)", "(7)"}));
  EXPECT_EQ(c->cardinality(), 7);
  // Batches span the inputs.
  EXPECT_EQ(all_of(make_batch(c, 3, false)), texts({"(1,2,3)", "(4,5,6)", "(7)"}));
  EXPECT_EQ(make_concatenate(range(0, 2), make_repeat(range(0, 1), -1))->cardinality(),
            kInfiniteCardinality);
  EXPECT_EQ(make_concatenate(make_ignore_errors(range(0, 2), false), range(0, 1))->cardinality(),
            kUnknownCardinality);
  // Shapes that differ become unknown; dtypes that differ are refused (tf.data's
  // "incompatible types" example: an int64 dataset and a string one).
  DatasetPtr mixed =
      make_concatenate(make_batch(range(0, 4), 2, true), make_batch(range(0, 3), 3, true));
  EXPECT_EQ(to_string(mixed->element_spec()), "(int64[None])");
  EXPECT_EQ(all_of(mixed), texts({"(0,1)", "(2,3)", "(0,1,2)"}));
  Error e = error_of([] { make_concatenate(range(0, 3), make_from_tensors({bytes_scalar("a")})); });
  EXPECT_EQ(e.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(e.what()).find("concatenate"), std::string::npos) << e.what();
}

// ---- sample_from_datasets -------------------------------------------------------------

DatasetPtr constant(int64_t v) { return make_repeat(make_from_tensors({int64_vector({v})}), -1); }

TEST(Sample, SeededWeightedAndReproducible) {
  // tf.data's example: two infinite datasets of 0s and 1s sampled with weights 0.9 / 0.1.
  DatasetPtr s = make_sample_from_datasets({constant(0), constant(1)}, {0.9, 0.1}, 7, false);
  EXPECT_EQ(s->cardinality(), kInfiniteCardinality);
  std::vector<std::string> first = all_of(s, 20000);
  EXPECT_EQ(first, all_of(s, 20000));  // the same seed, the same sequence
  size_t ones = 0;
  for (const auto& t : first) ones += t == "(1)";
  EXPECT_GT(ones, 1700u);
  EXPECT_LT(ones, 2300u);
  // Another seed gives another sequence; unnormalised weights are the same as normalised.
  EXPECT_NE(
      all_of(make_sample_from_datasets({constant(0), constant(1)}, {0.9, 0.1}, 8, false), 200),
      std::vector<std::string>(first.begin(), first.begin() + 200));
  EXPECT_EQ(all_of(make_sample_from_datasets({constant(0), constant(1)}, {9, 1}, 7, false), 200),
            std::vector<std::string>(first.begin(), first.begin() + 200));
  // Empty weights: equal.
  std::vector<std::string> even =
      all_of(make_sample_from_datasets({constant(0), constant(1)}, {}, 3, false), 10000);
  size_t even_ones = 0;
  for (const auto& t : even) even_ones += t == "(1)";
  EXPECT_GT(even_ones, 4700u);
  EXPECT_LT(even_ones, 5300u);
}

TEST(Sample, StopOnEmptyDataset) {
  DatasetPtr a = range(0, 10), b = range(100, 103);
  // Not stopping: every element of every input, each input in its order.
  std::vector<std::string> all = all_of(make_sample_from_datasets({a, b}, {0.5, 0.5}, 1, false));
  EXPECT_EQ(all.size(), 13u);
  std::vector<std::string> from_b;
  for (const auto& t : all)
    if (t[1] == '1' && t.size() == 5) from_b.push_back(t);
  EXPECT_EQ(from_b, texts({"(100)", "(101)", "(102)"}));
  // Stopping: the first draw of the exhausted b ends it, before a is done.
  DatasetPtr stopping = make_sample_from_datasets({a, b}, {0.5, 0.5}, 1, true);
  std::vector<std::string> some = all_of(stopping);
  EXPECT_LT(some.size(), 13u);
  EXPECT_GE(some.size(), 3u);
  EXPECT_EQ(stopping->cardinality(), kUnknownCardinality);
  // An input of weight 0 is never read (here, reading it would fail).
  DatasetPtr poison = failing(range(0, 5), 1, Code::kInternal);
  EXPECT_EQ(all_of(make_sample_from_datasets({a, poison}, {1, 0}, 1, false)).size(), 10u);
  EXPECT_EQ(make_sample_from_datasets({range(0, 0), range(0, 0)}, {}, 1, false)->cardinality(), 0);
}

TEST(Sample, BadWeightsAndSpecsAreInvalidArgument) {
  DatasetPtr a = range(0, 3);
  for (std::vector<double> w : std::vector<std::vector<double>>{{1}, {1, -1}, {0, 0}, {1, NAN}}) {
    Error e = error_of([&] { make_sample_from_datasets({a, a}, w, 1, false); });
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("weight"), std::string::npos) << e.what();
  }
  EXPECT_EQ(error_of([&] {
              make_sample_from_datasets({a, make_from_tensors({bytes_scalar("x")})}, {}, 1, false);
            }).code(),
            Code::kInvalidArgument);
  EXPECT_EQ(error_of([] { make_sample_from_datasets({}, {}, 1, false); }).code(),
            Code::kInvalidArgument);
}

// ---- choose_from_datasets -------------------------------------------------------------

TEST(Choose, TheSelectorPicksTheInputs) {
  // tf.data's example: "foo", "bar", "baz" repeated, chosen by range(3).repeat(3).
  std::vector<DatasetPtr> words;
  for (const char* w : {"foo", "bar", "baz"})
    words.push_back(make_repeat(make_from_tensors({bytes_scalar(w)}), -1));
  DatasetPtr chosen = make_choose_from_datasets(make_repeat(range(0, 3), 3), words, true);
  EXPECT_EQ(all_of(chosen), texts({"(foo)", "(bar)", "(baz)", "(foo)", "(bar)", "(baz)", "(foo)",
                                   "(bar)", "(baz)"}));
  EXPECT_EQ(chosen->cardinality(), kUnknownCardinality);
  EXPECT_EQ(make_choose_from_datasets(make_repeat(range(0, 3), -1), words, true)->cardinality(),
            kInfiniteCardinality);
}

TEST(Choose, StopOnEmptyAndErrors) {
  DatasetPtr selector = make_from_tensor_slices({int64_vector({0, 1, 1, 0, 1, 0})});
  std::vector<DatasetPtr> in = {range(0, 5), range(10, 11)};
  EXPECT_EQ(all_of(make_choose_from_datasets(selector, in, true)), texts({"(0)", "(10)"}));
  EXPECT_EQ(all_of(make_choose_from_datasets(selector, in, false)),
            texts({"(0)", "(10)", "(1)", "(2)"}));
  // An index outside the inputs fails at that element, naming it.
  DatasetPtr bad =
      make_choose_from_datasets(make_from_tensor_slices({int64_vector({1, 3})}), in, true);
  IteratorContext ctx;
  auto it = bad->make_iterator(ctx);
  Element e;
  ASSERT_TRUE(it->next(e));
  Error err = error_of([&] { it->next(e); });
  EXPECT_EQ(err.code(), Code::kInvalidArgument);
  EXPECT_NE(std::string(err.what()).find("index 3"), std::string::npos) << err.what();
  // The selector must be of int64 scalars.
  EXPECT_EQ(error_of([&] {
              make_choose_from_datasets(make_batch(range(0, 4), 2, false), in, true);
            }).code(),
            Code::kInvalidArgument);
}

// ---- ignore_errors --------------------------------------------------------------------

TEST(IgnoreErrors, SkipsDataErrorsAndCountsThem) {
  for (Code code : {Code::kInvalidArgument, Code::kDataLoss}) {
    DatasetPtr ds = make_ignore_errors(failing(range(0, 10), 3, code), false);
    IteratorContext ctx;
    auto it = ds->make_iterator(ctx);
    EXPECT_EQ(drain(*it), texts({"(1)", "(2)", "(4)", "(5)", "(7)", "(8)"}));
    EXPECT_EQ(read_statistic(*ctx.stats, "errors_ignored"), 4);  // 0, 3, 6, 9
  }
  EXPECT_EQ(make_ignore_errors(range(0, 3), false)->cardinality(), kUnknownCardinality);
}

TEST(IgnoreErrors, OtherErrorsPass) {
  for (Code code : {Code::kCancelled, Code::kNotFound, Code::kInternal, Code::kResourceExhausted}) {
    DatasetPtr ds = make_ignore_errors(failing(range(1, 10), 3, code), false);
    IteratorContext ctx;
    auto it = ds->make_iterator(ctx);
    Element e;
    ASSERT_TRUE(it->next(e));
    ASSERT_TRUE(it->next(e));
    EXPECT_EQ(error_of([&] { it->next(e); }).code(), code);
    EXPECT_EQ(read_statistic(*ctx.stats, "errors_ignored"), 0);
  }
}

// The usual pipeline: a parallel map (a parser, a decoder) whose failures are dropped; the
// order of the survivors is kept.
TEST(IgnoreErrors, AfterAParallelMap) {
  auto fn = std::make_shared<const MapFn>([](const Element& e) {
    int64_t v = *e[0].data_as<int64_t>();
    if (v % 3 == 0) raise(Code::kInvalidArgument, "element ", v, " is bad");
    return e;
  });
  std::vector<std::string> want;
  for (int v = 0; v < 30; ++v)
    if (v % 3 != 0) want.push_back("(" + std::to_string(v) + ")");
  for (int64_t parallel : {int64_t{2}, kAutotune}) {
    DatasetPtr mapped = make_map(range(0, 30), fn, {}, parallel, true);
    IteratorContext ctx;
    auto it = make_prefetch(make_ignore_errors(mapped, false), 4)->make_iterator(ctx);
    EXPECT_EQ(drain(*it), want) << "num_parallel_calls " << parallel;
    EXPECT_EQ(read_statistic(*ctx.stats, "errors_ignored"), 10);
  }
  // An error that crossed a prefetch is dropped like any other: the prefetch kept it in line
  // and read on (data/data_errors.h).
  IteratorContext ctx;
  auto it = make_ignore_errors(make_prefetch(make_map(range(0, 30), fn, {}, 2, true), 4), false)
                ->make_iterator(ctx);
  EXPECT_EQ(drain(*it), want);
  EXPECT_EQ(read_statistic(*ctx.stats, "errors_ignored"), 10);
}

// An input stuck on one error (the same message again and again) is reported, not looped on.
class Stuck final : public GeneratorSource {
  class Instance final : public GeneratorInstance {
    bool next(Element&) override { raise(Code::kDataLoss, "stuck at offset 42"); }
  };

 public:
  std::unique_ptr<GeneratorInstance> open() const override { return std::make_unique<Instance>(); }
};

TEST(IgnoreErrors, AStuckInputIsReported) {
  DatasetPtr ds = make_ignore_errors(
      make_from_generator({{DType::kInt64, Shape()}}, std::make_shared<Stuck>()), false);
  IteratorContext ctx;
  auto it = ds->make_iterator(ctx);
  Element e;
  Error err = error_of([&] { it->next(e); });
  EXPECT_EQ(err.code(), Code::kDataLoss);
  EXPECT_EQ(read_statistic(*ctx.stats, "errors_ignored"), 0);
}

// ---- cache ----------------------------------------------------------------------------

TEST(CacheMemory, TheFirstFullPassFillsItLaterPassesReadIt) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  DatasetPtr cached = make_cache(counted(range(0, 5), calls), "");
  EXPECT_EQ(all_of(make_repeat(cached, 3)).size(), 15u);
  EXPECT_EQ(*calls, 5);  // one pass over the input, the other two from memory
  EXPECT_EQ(all_of(cached), texts({"(0)", "(1)", "(2)", "(3)", "(4)"}));
  EXPECT_EQ(*calls, 5);
  EXPECT_EQ(cached->cardinality(), 5);
}

TEST(CacheMemory, APartialPassLeavesNothing) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  DatasetPtr cached = make_cache(counted(range(0, 5), calls), "");
  EXPECT_EQ(all_of(cached, 2).size(), 2u);  // stopped part-way: nothing cached
  EXPECT_EQ(*calls, 2);
  EXPECT_EQ(all_of(cached).size(), 5u);  // a full pass reads the input again
  EXPECT_EQ(*calls, 7);
  EXPECT_EQ(all_of(cached).size(), 5u);
  EXPECT_EQ(*calls, 7);
}

class CacheFile : public test::TempDirTest {
 protected:
  bool exists(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0;
  }
  size_t entries() {
    size_t n = 0;
    std::string cmd = "ls -A '" + dir_ + "' | wc -l";
    std::FILE* f = popen(cmd.c_str(), "r");
    if (f) {
      if (std::fscanf(f, "%zu", &n) != 1) n = 999;
      pclose(f);
    }
    return n;
  }
  // Mixed components: bytes, int64 vectors and float32 scalars.
  DatasetPtr pipeline(int64_t n, std::shared_ptr<std::atomic<int>> calls) {
    auto fn = std::make_shared<const MapFn>([calls](const Element& e) {
      ++*calls;
      int64_t v = *e[0].data_as<int64_t>();
      Tensor f = Tensor::allocate(DType::kFloat32, Shape());
      *f.mutable_data_as<float>() = static_cast<float>(v) / 4;
      return Element{bytes_scalar("item-" + std::to_string(v)), int64_vector({v, -v}), f};
    });
    ElementSpec spec = {
        {DType::kBytes, Shape()}, {DType::kInt64, Shape{2}}, {DType::kFloat32, Shape()}};
    return make_map(range(0, n), fn, spec, 1, {});
  }
};

TEST_F(CacheFile, ASecondRunReadsTheFileBack) {
  std::string file = dir_ + "/cache.bin";
  auto calls = std::make_shared<std::atomic<int>>(0);
  std::vector<std::string> expected = all_of(pipeline(6, calls));
  *calls = 0;
  // A pass stopped part-way leaves neither the file nor a temporary.
  EXPECT_EQ(all_of(make_cache(pipeline(6, calls), file), 3).size(), 3u);
  EXPECT_FALSE(exists(file));
  EXPECT_EQ(entries(), 0u);
  *calls = 0;
  EXPECT_EQ(all_of(make_cache(pipeline(6, calls), file)), expected);
  EXPECT_EQ(*calls, 6);
  EXPECT_TRUE(exists(file));
  // "A second run": a new pipeline (a new node) reads the file and never the input.
  *calls = 0;
  DatasetPtr again = make_cache(pipeline(6, calls), file);
  EXPECT_EQ(all_of(again), expected);
  EXPECT_EQ(all_of(make_repeat(again, 2)).size(), 12u);
  EXPECT_EQ(*calls, 0);
  expect_resumes_everywhere(again);
}

TEST_F(CacheFile, AnotherPipelinesFileIsRefusedNamingIt) {
  std::string file = dir_ + "/cache.bin";
  auto calls = std::make_shared<std::atomic<int>>(0);
  all_of(make_cache(pipeline(6, calls), file));
  Error e = error_of([&] { all_of(make_cache(pipeline(7, calls), file)); });
  EXPECT_EQ(e.code(), Code::kFailedPrecondition);
  EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  // Not a cache file at all: DATA_LOSS.
  std::string other = dir_ + "/records.bin";
  {
    RecordWriter w(other, Compression::kNone, 0);
    w.write("hello", 5);
    w.close();
  }
  e = error_of([&] { all_of(make_cache(pipeline(6, calls), other)); });
  EXPECT_EQ(e.code(), Code::kDataLoss);
  EXPECT_NE(std::string(e.what()).find(other), std::string::npos) << e.what();
}

TEST_F(CacheFile, DamageIsDataLossNamingTheFileAndOffset) {
  std::string file = dir_ + "/cache.bin";
  auto calls = std::make_shared<std::atomic<int>>(0);
  all_of(make_cache(pipeline(6, calls), file));
  std::string bytes;
  {
    std::FILE* f = std::fopen(file.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.append(buf, n);
    std::fclose(f);
  }
  auto write = [&](const std::string& content) {
    std::FILE* f = std::fopen(file.c_str(), "wb");
    std::fwrite(content.data(), 1, content.size(), f);
    std::fclose(f);
  };
  // A flipped byte in the middle, and every truncation past the header: DATA_LOSS naming
  // the file and an offset, never a crash or fewer elements.
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x20;
  write(flipped);
  Error e = error_of([&] { all_of(make_cache(pipeline(6, calls), file)); });
  EXPECT_EQ(e.code(), Code::kDataLoss);
  EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
  for (size_t cut = 1; cut < bytes.size(); cut += 7) {
    write(bytes.substr(0, cut));
    Error t = error_of([&] { all_of(make_cache(pipeline(6, calls), file)); });
    EXPECT_EQ(t.code(), Code::kDataLoss) << "cut at " << cut << ": " << t.what();
  }
}

// tf.data's ignore_errors example: 1 / x checked for infinities over [1, 2, 0, 4].
TEST(IgnoreErrors, TfDataExample) {
  Tensor x = Tensor::allocate(DType::kFloat32, Shape{4});
  const float values[] = {1, 2, 0, 4};
  std::memcpy(x.mutable_data(), values, sizeof values);
  auto reciprocal = std::make_shared<const MapFn>([](const Element& e) {
    float v = 1.0f / *e[0].data_as<float>();
    if (std::isinf(v)) raise(Code::kInvalidArgument, "error : Tensor had Inf values");
    Tensor t = Tensor::allocate(DType::kFloat32, Shape());
    *t.mutable_data_as<float>() = v;
    return Element{t};
  });
  DatasetPtr ds =
      make_ignore_errors(make_map(make_from_tensor_slices({x}), reciprocal, {}, 1, {}), false);
  EXPECT_EQ(all_of(ds), texts({"(1.000000)", "(0.500000)", "(0.250000)"}));
}

// Deep pipelines through several-input nodes are built, iterated and freed without
// exhausting the stack (the depth limit counts them as one operation each).
TEST(CombineGraph, DeepChainsOfConcatenate) {
  DatasetPtr ds = range(0, 1);
  for (int i = 1; i < kMaxPipelineDepth - 1; ++i) ds = make_concatenate(ds, range(i, i + 1));
  EXPECT_EQ(ds->depth(), kMaxPipelineDepth - 1);
  EXPECT_EQ(ds->cardinality(), kMaxPipelineDepth - 1);
  EXPECT_EQ(all_of(make_take(ds, 3)), texts({"(0)", "(1)", "(2)"}));
  EXPECT_EQ(error_of([&] { make_concatenate(make_concatenate(ds, ds), ds); }).code(),
            Code::kInvalidArgument);
  ds.reset();  // frees 10000 nodes
}

// ---- the distribution's view ----------------------------------------------------------

TEST(CombineGraph, BatchSizeDetection) {
  DatasetPtr b4 = make_batch(range(0, 20), 4, false), b2 = make_batch(range(0, 20), 2, false);
  EXPECT_EQ(detect_global_batch_size(make_zip({b4, make_prefetch(b4, 1)})), 4);
  EXPECT_EQ(detect_global_batch_size(make_zip({b4, b2})), -1);
  EXPECT_EQ(detect_global_batch_size(make_zip({b4, range(0, 3)})), -1);
  EXPECT_EQ(detect_global_batch_size(make_concatenate(b4, b4)), 4);
  EXPECT_EQ(detect_global_batch_size(make_concatenate(b4, b2)), -1);
  EXPECT_EQ(detect_global_batch_size(make_sample_from_datasets({b4, b4}, {}, 1, false)), 4);
  EXPECT_EQ(detect_global_batch_size(make_choose_from_datasets(range(0, 2), {b4, b4}, true)), 4);
  EXPECT_EQ(detect_global_batch_size(make_cache(make_ignore_errors(b4, false), "")), 4);
}

TEST_F(CacheFile, FileShardingSeesTheFilesOfEveryInput) {
  std::vector<std::string> a, b;
  for (int i = 0; i < 4; ++i) {
    for (auto* list : {&a, &b}) {
      std::string p = dir_ + "/f" + std::to_string(list == &a) + std::to_string(i);
      RecordWriter w(p, Compression::kNone, 0);
      w.write(p.data(), p.size());
      w.close();
      list->push_back(p);
    }
  }
  DatasetPtr z =
      make_zip({make_records(a, Compression::kNone, 0), make_records(b, Compression::kNone, 0)});
  ShardPlan plan = auto_shard(z, 2, 1);
  EXPECT_EQ(plan.applied, AutoShardPolicy::kFile);
  EXPECT_EQ(all_of(plan.dataset), (std::vector<std::string>{"(" + a[1] + ")(" + b[1] + ")",
                                                            "(" + a[3] + ")(" + b[3] + ")"}));
  // A source that reads no files (the selector here) leaves DATA sharding under AUTO.
  DatasetPtr c = make_choose_from_datasets(
      range(0, 2), {make_records(a, Compression::kNone, 0), make_records(b, Compression::kNone, 0)},
      true);
  EXPECT_EQ(auto_shard(c, 2, 1).applied, AutoShardPolicy::kData);
}

// ---- saved states ---------------------------------------------------------------------

TEST(CombineState, EachOperationResumesEverywhere) {
  expect_resumes_everywhere(make_zip({range(0, 7), make_shuffle(range(10, 20), 4, 3, false)}));
  expect_resumes_everywhere(make_batch(make_zip({range(0, 7), range(10, 20)}), 3, false));
  expect_resumes_everywhere(make_concatenate(range(0, 4), make_shuffle(range(10, 16), 3, 1, true)));
  expect_resumes_everywhere(make_batch(make_concatenate(range(0, 4), range(10, 15)), 3, false));
  for (bool stop : {false, true}) {
    expect_resumes_everywhere(
        make_sample_from_datasets({range(0, 8), range(10, 14), range(20, 21)}, {2, 1, 1}, 5, stop));
    expect_resumes_everywhere(
        make_choose_from_datasets(make_from_tensor_slices({int64_vector({0, 1, 1, 0, 1, 0, 0, 1})}),
                                  {range(0, 5), range(10, 12)}, stop));
  }
  expect_resumes_everywhere(
      make_ignore_errors(failing(range(0, 12), 4, Code::kInvalidArgument), false));
}

TEST(CombineState, SampleWithARandomSeedResumesItsSequence) {
  DatasetPtr s = make_sample_from_datasets({range(0, 30), range(100, 130)}, {}, -1, false);
  EXPECT_TRUE(s->has_random_seed());
  expect_resumes_everywhere(s);
}

TEST(CombineState, MemoryCacheResumesInEveryPass) {
  // Fresh nodes each time: a cache filled by an earlier run would hide the filling pass.
  auto make = [] { return make_repeat(make_cache(make_shuffle(range(0, 6), 4, 9, true), ""), 3); };
  std::vector<std::string> expected = all_of(make());
  // The cached pass repeats: every epoch the same order, although the shuffle reshuffles.
  ASSERT_EQ(expected.size(), 18u);
  EXPECT_EQ(std::vector<std::string>(expected.begin(), expected.begin() + 6),
            std::vector<std::string>(expected.begin() + 12, expected.end()));
  for (size_t k = 0; k <= expected.size() + 1; ++k)
    ASSERT_EQ(resumed(make(), k), expected) << "saved after " << k;
  // And within one node whose cache is already full.
  DatasetPtr shared = make();
  all_of(shared);
  for (size_t k = 0; k <= expected.size(); k += 5) ASSERT_EQ(resumed(shared, k), expected);
}

}  // namespace
}  // namespace dinput
