// Where errors stop: the stages that read ahead (prefetch, the parallel map, batch and
// interleave) deliver the elements made before a failing one, then its error, in order, and
// read on after a data error exactly as the sequential pipeline does, so that ignore_errors()
// after them drops only the failing element. Compared item by item with the same pipeline
// without read-ahead, over failing maps and over a record file with a corrupt record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"
#include "data/data_errors.h"
#include "data/datasets.h"
#include "data/state.h"
#include "example/feature_spec.h"
#include "example/parse.h"
#include "image/image_ops.h"
#include "io/file_sources.h"
#include "io/record_writer.h"

#include "example_encoder.h"
#include "resume_check.h"
#include "temp_dir_test.h"
#include "test_text.h"

namespace dinput {
namespace {

using test::text;

// Everything an iterator gives, each error in its place as "!message". Reading goes on after
// a data error, as ignore_errors() reads on, and stops at the end, at any other error, or at
// the same error twice in a row (an input stuck on it, which ignore_errors() reports).
std::vector<std::string> items(Iterator& it, size_t limit = 10000) {
  std::vector<std::string> out;
  std::string last_error;
  Element e;
  while (out.size() < limit) {
    try {
      if (!it.next(e)) break;
      out.push_back(text(e));
      last_error.clear();
    } catch (const Error& err) {
      std::string item = std::string("!") + err.what();
      out.push_back(item);
      if (!is_data_error(err.code()) || item == last_error) break;
      last_error = item;
    }
  }
  return out;
}

std::vector<std::string> items_of(const DatasetPtr& ds) {
  IteratorContext ctx;
  auto it = ds->make_iterator(ctx);
  return items(*it);
}

// The elements a plain consumer gets before its first error, then that error.
std::vector<std::string> until_error(const DatasetPtr& ds) {
  std::vector<std::string> all = items_of(ds);
  auto bad = std::find_if(all.begin(), all.end(), [](const std::string& s) { return s[0] == '!'; });
  if (bad != all.end()) all.erase(bad + 1, all.end());
  return all;
}

DatasetPtr range(int64_t a, int64_t b) { return make_range(a, b, 1); }

// Fails (INVALID_ARGUMENT) on the elements v with v % 7 == 3.
std::shared_ptr<const MapFn> fails_on_3_mod_7() {
  return std::make_shared<const MapFn>([](const Element& e) {
    int64_t v = *e[0].data_as<int64_t>();
    if (v % 7 == 3) raise(Code::kInvalidArgument, "element ", v, " is bad");
    return e;
  });
}
std::shared_ptr<const MapFn> identity() {
  return std::make_shared<const MapFn>([](const Element& e) { return e; });
}
DatasetPtr failing(DatasetPtr ds) { return make_map(std::move(ds), fails_on_3_mod_7(), {}, 1, {}); }

// `read_ahead` gives the same items as `sequential`, the same elements before the first
// error, and the same elements under ignore_errors().
void expect_same_items(const DatasetPtr& sequential, const DatasetPtr& read_ahead,
                       const std::string& what) {
  std::vector<std::string> want = items_of(sequential);
  ASSERT_TRUE(std::any_of(want.begin(), want.end(), [](auto& s) { return s[0] == '!'; }))
      << what << ": the case has no error to test";
  EXPECT_EQ(items_of(read_ahead), want) << what;
  EXPECT_EQ(until_error(read_ahead), until_error(sequential)) << what;
  EXPECT_EQ(items_of(make_ignore_errors(read_ahead, false)),
            items_of(make_ignore_errors(sequential, false)))
      << what << " under ignore_errors";
}

TEST(ErrorOrder, Prefetch) {
  DatasetPtr in = failing(range(0, 40));
  for (int64_t size : {int64_t{1}, int64_t{4}, kAutotune})
    expect_same_items(in, make_prefetch(in, size), "prefetch(" + std::to_string(size) + ")");
  expect_same_items(in, make_read_ahead(in, 3, true), "the adaptive read-ahead");
  expect_same_items(in, make_read_ahead(in, 3, false), "the read-ahead on its thread");
  // Two prefetches, one behind the other.
  expect_same_items(in, make_prefetch(make_prefetch(in, 2), 3), "prefetch.prefetch");
}

TEST(ErrorOrder, IgnoreErrorsAfterPrefetchGoesOn) {
  IteratorContext ctx;
  auto it = make_ignore_errors(make_prefetch(failing(range(0, 40)), 4), false)->make_iterator(ctx);
  std::vector<std::string> want;
  for (int v = 0; v < 40; ++v)
    if (v % 7 != 3) want.push_back("(" + std::to_string(v) + ")");
  EXPECT_EQ(test::drain_as(*it, text), want);
  EXPECT_EQ(read_statistic(*ctx.stats, "errors_ignored"), 6);  // 3, 10, 17, 24, 31, 38
}

TEST(ErrorOrder, ParallelMap) {
  // The function fails.
  expect_same_items(make_map(range(0, 40), fails_on_3_mod_7(), {}, 1, {}),
                    make_map(range(0, 40), fails_on_3_mod_7(), {}, 3, true),
                    "a parallel map whose function fails");
  // The input fails: the error waits behind the calls in flight.
  DatasetPtr in = failing(range(0, 40));
  expect_same_items(make_map(in, identity(), {}, 1, {}), make_map(in, identity(), {}, 3, true),
                    "a parallel map over a failing input");
  expect_same_items(make_map(in, identity(), {}, 1, {}),
                    make_map(in, identity(), {}, kAutotune, true), "AUTOTUNE");
}

TEST(ErrorOrder, MapMany) {
  auto copy =
      std::make_shared<const MapManyFn>([](std::vector<Element>& outs, std::vector<Element>& ins) {
        for (auto& e : ins) outs.push_back(std::move(e));
      });
  DatasetPtr in = failing(range(0, 40));
  DatasetPtr sequential = make_map_many(in, copy, 4, {}, 1, {});
  // A run cut short by an error: its elements, the error, then the next run.
  std::vector<std::string> head = items_of(sequential);
  ASSERT_GE(head.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(head.begin(), head.begin() + 5),
            (std::vector<std::string>{"(0)", "(1)", "(2)", "!element 3 is bad", "(4)"}));
  expect_same_items(sequential, make_map_many(in, copy, 4, {}, 2, true), "map_many");
}

TEST(ErrorOrder, ParallelBatch) {
  DatasetPtr in = failing(range(0, 40));
  for (bool drop : {false, true})
    expect_same_items(make_batch(in, 4, drop, 1), make_batch(in, 4, drop, 3),
                      drop ? "batch, drop_remainder" : "batch");
}

TEST(ErrorOrder, ParallelInterleave) {
  auto fn = std::make_shared<const InterleaveFn>([](const Element& e) {
    int64_t v = *e[0].data_as<int64_t>();
    return failing(range(10 * v, 10 * v + 10));
  });
  ElementSpec spec{{DType::kInt64, Shape()}};
  DatasetPtr sequential = make_interleave(range(0, 5), fn, spec, 2, 2, 1, true);
  expect_same_items(sequential, make_interleave(range(0, 5), fn, spec, 2, 2, 2, true),
                    "a parallel interleave");
  expect_same_items(sequential, make_interleave(range(0, 5), fn, spec, 2, 2, kAutotune, true),
                    "an AUTOTUNE interleave");
  // Not deterministic: the same elements and errors, in some order.
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  DatasetPtr any_order = make_interleave(range(0, 5), fn, spec, 2, 2, 2, false);
  EXPECT_EQ(sorted(items_of(any_order)), sorted(items_of(sequential)));
  EXPECT_EQ(sorted(items_of(make_ignore_errors(any_order, false))),
            sorted(items_of(make_ignore_errors(sequential, false))));
}

// Saved states count an error as one item: a restore after dropped errors goes on with the
// element the saved iterator would have given next.
TEST(ErrorOrder, SavesAcrossDroppedErrors) {
  DatasetPtr in = failing(range(0, 30));
  for (const DatasetPtr& ds :
       {make_prefetch(in, 3), make_map(in, identity(), {}, 3, true),
        make_map(range(0, 30), fails_on_3_mod_7(), {}, 2, true), make_batch(in, 4, false, 2)}) {
    SCOPED_TRACE(ds->name());
    test::expect_resumes_everywhere_as(make_ignore_errors(ds, false), text);
  }
}

// ---- a record file with a corrupt record ----

class CorruptRecords : public test::TempDirTest {
 protected:
  // `count` records "<name>-NN"; the data of record `bad` (if >= 0) gets a flipped byte.
  std::string write(const std::string& name, int count, int bad) {
    std::string path = dir_ + "/" + name;
    {
      RecordWriter w(path, Compression::kNone, 0);
      for (int i = 0; i < count; ++i) {
        std::string r = name + "-" + (i < 10 ? "0" : "") + std::to_string(i);
        w.write(r.data(), r.size());
      }
      w.close();
    }
    if (bad >= 0) {
      const long record = static_cast<long>(12 + name.size() + 3 + 4);  // framing + "-NN"
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(bad * record + 12);
      f.put('#');
    }
    return path;
  }
};

TEST_F(CorruptRecords, ReadAheadStopsWhereTheSequentialReaderStops) {
  DatasetPtr records = make_records({write("a", 20, 7)}, Compression::kNone, 0);
  std::vector<std::string> want = items_of(records);
  ASSERT_EQ(want.size(), 9u);  // 7 records, the error, the same error again
  EXPECT_EQ(want[6], "(a-06)");
  EXPECT_NE(want[7].find("corrupt record"), std::string::npos) << want[7];
  expect_same_items(records, make_prefetch(records, 4), "prefetch over records");
  expect_same_items(records, make_map(records, identity(), {}, 3, true), "parallel map");
  expect_same_items(make_batch(records, 3, false, 1), make_batch(records, 3, false, 2),
                    "parallel batch");
}

TEST_F(CorruptRecords, ParallelInterleaveOfFiles) {
  std::string good = write("g", 10, -1), bad = write("b", 10, 4);
  Tensor names = Tensor::allocate(DType::kBytes, Shape{2});
  names.set_string(0, good);
  names.set_string(1, bad);
  DatasetPtr files = make_from_tensor_slices({names});
  ReaderSpec reader;
  DatasetPtr sequential = make_reader_interleave(files, reader, 2, 1, 1, true, false);
  std::vector<std::string> want = items_of(sequential);
  ASSERT_GE(want.size(), 10u);
  EXPECT_EQ(want[8], "(g-04)");
  EXPECT_EQ(want[9][0], '!');  // b's record 4
  for (int64_t parallel : {int64_t{2}, kAutotune})
    expect_same_items(sequential,
                      make_reader_interleave(files, reader, 2, 1, parallel, true, false),
                      "interleave of record files, num_parallel_calls " + std::to_string(parallel));
}

// ---- where a failing record came from ----

// Examples {"id": [i]}, except that every record i with i % 5 == 2 holds "id" as bytes (the
// wrong type); `pad` bytes of a "pad" feature make records span small chunks.
class Provenance : public CorruptRecords {
 protected:
  // Writes the file and returns each record's byte offset in its (decompressed) stream.
  std::vector<uint64_t> write_examples(const std::string& name, int count, Compression compression,
                                       size_t pad = 0) {
    std::vector<uint64_t> offsets;
    uint64_t at = 0;
    RecordWriter w(dir_ + "/" + name, compression, 0);
    for (int i = 0; i < count; ++i) {
      std::string id = i % 5 == 2 ? test::strings({"x"}) : test::int64s({i});
      std::string r = test::example({{"id", id}, {"pad", test::strings({std::string(pad, 'p')})}});
      w.write(r.data(), r.size());
      offsets.push_back(at);
      at += 16 + r.size();
    }
    w.close();
    return offsets;
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  static example::ParseSpec spec() {
    example::ParseSpec spec;
    spec.add({"id", example::FeatureKind::kFixedLen, DType::kInt64, Shape(), {}, false}, false);
    return spec;
  }
  static std::vector<std::string> errors_of(const DatasetPtr& ds) {
    std::vector<std::string> out;
    for (auto& item : items_of(ds))
      if (item[0] == '!') out.push_back(item.substr(1));
    return out;
  }
  static std::string origin(const std::string& file, uint64_t offset, const char* stream) {
    return " from '" + file + "' at byte offset " + std::to_string(offset) +
           (stream ? std::string(" of its decompressed ") + stream + " stream" : "");
  }
};

bool has(const std::string& message, const std::string& part) {
  return message.find(part) != std::string::npos;
}

TEST_F(Provenance, AParseErrorNamesTheFileAndTheRecordOffset) {
  struct Case {
    Compression compression;
    const char* stream;
    int64_t buffer_size;
    size_t pad;
  };
  for (const Case& c :
       {Case{Compression::kNone, nullptr, 0, 0}, Case{Compression::kZstd, "zstd", 0, 0},
        // Records larger than a chunk (copied) and chunks reused in place.
        Case{Compression::kNone, nullptr, 4096, 1500},
        Case{Compression::kZstd, "zstd", 4096, 1500}}) {
    SCOPED_TRACE(std::string(compression_name(c.compression)) + " pad " + std::to_string(c.pad));
    auto offsets = write_examples("data-00003.tfrecord", 23, c.compression, c.pad);
    DatasetPtr records = make_records({path("data-00003.tfrecord")}, c.compression, c.buffer_size);
    // One record at a time.
    auto errors =
        errors_of(example::make_parse(records, example::ParseOp::kSingleExample, spec(), 0));
    ASSERT_EQ(errors.size(), 5u);  // 2, 7, 12, 17, 22
    for (size_t k = 0; k < errors.size(); ++k) {
      const int i = 2 + 5 * static_cast<int>(k);
      EXPECT_TRUE(has(errors[k], "record " + std::to_string(i) + " of the input" +
                                     origin(path("data-00003.tfrecord"), offsets[i], c.stream) +
                                     ", feature 'id'"))
          << errors[k];
    }
    // Batched: the first bad record of each batch of 4, named in the batch and in the input.
    DatasetPtr batched = example::make_parse(make_prefetch(make_batch(records, 4, false, 2), 2),
                                             example::ParseOp::kExample, spec(), 0);
    errors = errors_of(batched);
    const int first_bad[] = {2, 7, 12, 17, 22};  // in batches 0, 1, 3, 4, 5
    ASSERT_EQ(errors.size(), 5u);
    for (size_t k = 0; k < errors.size(); ++k) {
      const int i = first_bad[k];
      EXPECT_TRUE(has(errors[k], "record " + std::to_string(i % 4) + " of the batch (record " +
                                     std::to_string(i) + " of the input)" +
                                     origin(path("data-00003.tfrecord"), offsets[i], c.stream)))
          << errors[k];
    }
  }
}

TEST_F(Provenance, ThroughAParallelInterleaveAndBatch) {
  auto a = write_examples("a.tfrecord", 10, Compression::kZstd, 300);
  auto b = write_examples("b.tfrecord", 10, Compression::kZstd, 300);
  Tensor names = Tensor::allocate(DType::kBytes, Shape{2});
  names.set_string(0, path("a.tfrecord"));
  names.set_string(1, path("b.tfrecord"));
  ReaderSpec reader;
  reader.compression = Compression::kZstd;
  reader.buffer_size = 4096;
  DatasetPtr records =
      make_reader_interleave(make_from_tensor_slices({names}), reader, 2, 1, 2, true, false);
  // a0 b0 a1 b1 ...: input record n is record n / 2 of file n % 2.
  auto expect_at = [&](const std::string& message, int n) {
    const std::string file = path(n % 2 == 0 ? "a.tfrecord" : "b.tfrecord");
    const auto& offsets = n % 2 == 0 ? a : b;
    EXPECT_TRUE(has(message, origin(file, offsets[n / 2], "zstd")))
        << message << " (record " << n << ")";
  };
  auto errors =
      errors_of(example::make_parse(records, example::ParseOp::kSingleExample, spec(), 0));
  const int bad[] = {4, 5, 14, 15};  // records 2 and 7 of each file
  ASSERT_EQ(errors.size(), 4u);
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_TRUE(has(errors[k], "record " + std::to_string(bad[k]) + " of the input")) << errors[k];
    expect_at(errors[k], bad[k]);
  }
  errors = errors_of(
      example::make_parse(make_batch(records, 3, false, 1), example::ParseOp::kExample, spec(), 0));
  const int first_bad[] = {4, 14};  // batches 1 (3..5) and 4 (12..14); 15 is in batch 5
  ASSERT_EQ(errors.size(), 3u);
  expect_at(errors[0], first_bad[0]);
  expect_at(errors[1], first_bad[1]);
  expect_at(errors[2], 15);
}

TEST_F(Provenance, ADecodeErrorNamesTheFileAndTheRecordOffset) {
  std::string file = write("not-images.tfrecord", 3, -1);  // "not-images.tfrecord-NN"
  auto errors =
      errors_of(make_decode_jpeg(make_records({file}, Compression::kNone, 0), 3, ImageOpOptions{}));
  ASSERT_EQ(errors.size(), 3u);
  const uint64_t record = 12 + std::string("not-images.tfrecord-00").size() + 4;
  for (size_t k = 0; k < 3; ++k)
    EXPECT_TRUE(has(errors[k], "element " + std::to_string(k) + origin(file, k * record, nullptr)))
        << errors[k];
}

// Elements that no reader made carry no origin, and their messages stay as they were.
TEST_F(Provenance, NoOriginWithoutAReader) {
  Tensor t = Tensor::allocate(DType::kBytes, Shape{});
  t.set_string(0, test::example({{"id", test::strings({"x"})}}));
  auto errors = errors_of(
      example::make_parse(make_from_tensors({t}), example::ParseOp::kSingleExample, spec(), 0));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_FALSE(has(errors[0], " from ")) << errors[0];
  EXPECT_TRUE(has(errors[0], "record 0 of the input, feature 'id'")) << errors[0];
}

}  // namespace
}  // namespace dinput
