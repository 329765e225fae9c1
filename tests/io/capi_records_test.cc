// The record-file functions of the C ABI: the writer's life cycle and errors, the sources'
// argument checks, and skipping corrupt records counted by the iterator statistic.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dinput.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using namespace iotest;

// dinput_record_writer_open with a compression and level set in an options handle; a
// refused setting is returned like a refused open.
dinput_status_t open_writer(dinput_record_writer_t** out, const char* path, dinput_compression_t c,
                            int level) {
  dinput_record_writer_options_t* o = nullptr;
  dinput_status_t st = dinput_record_writer_options_new(&o);
  if (st == DINPUT_OK) st = dinput_record_writer_options_set_compression(o, c);
  if (st == DINPUT_OK) st = dinput_record_writer_options_set_level(o, level);
  if (st == DINPUT_OK) st = dinput_record_writer_open(out, path, o);
  dinput_record_writer_options_free(o);
  return st;
}

// dinput_dataset_records with a compression and buffer size set in an options handle.
dinput_status_t open_records(dinput_dataset_t** out, const char* const* files, size_t n,
                             dinput_compression_t c, int64_t buffer_size) {
  dinput_records_options_t* o = nullptr;
  dinput_status_t st = dinput_records_options_new(&o);
  if (st == DINPUT_OK) st = dinput_records_options_set_compression(o, c);
  if (st == DINPUT_OK) st = dinput_records_options_set_buffer_size(o, buffer_size);
  if (st == DINPUT_OK) st = dinput_dataset_records(out, files, n, o);
  dinput_records_options_free(o);
  return st;
}

class CApiRecords : public IoTest {
 protected:
  std::string last_error() const { return dinput_last_error_message(); }

  // Reads every record through the C API; statistics after the end in *stats.
  std::vector<std::string> read(dinput_dataset_t* ds, dinput_status_t* end, int64_t stats[4]) {
    std::vector<std::string> out;
    dinput_iterator_t* it = nullptr;
    EXPECT_EQ(dinput_dataset_iterator(&it, ds), DINPUT_OK);
    dinput_element_t* e = nullptr;
    dinput_status_t st;
    while ((st = dinput_iterator_get_next(&e, it)) == DINPUT_OK) {
      const char* s = nullptr;
      size_t n = 0;
      EXPECT_EQ(dinput_tensor_string_view(&s, &n, dinput_element_get(e, 0), 0), DINPUT_OK);
      out.emplace_back(s, n);
      dinput_element_free(e);
    }
    *end = st;
    const char* names[4] = {"records", "record_bytes", "corrupt_records_skipped",
                            "corrupt_bytes_skipped"};
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(dinput_iterator_statistic(&stats[i], it, names[i]), DINPUT_OK);
    dinput_iterator_free(it);
    return out;
  }
};

TEST_F(CApiRecords, WriteThenRead) {
  std::string p = path("c.rec");
  dinput_record_writer_t* w = nullptr;
  ASSERT_EQ(dinput_record_writer_open(&w, p.c_str(), nullptr), DINPUT_OK);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(dinput_record_writer_write(w, "hello", 5), DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_write(w, nullptr, 0), DINPUT_OK);  // an empty record
  EXPECT_EQ(dinput_record_writer_flush(w), DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_close(w), DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_close(w), DINPUT_OK);  // twice is fine
  EXPECT_EQ(dinput_record_writer_write(w, "x", 1), DINPUT_FAILED_PRECONDITION);
  EXPECT_NE(last_error().find(p), std::string::npos) << last_error();
  EXPECT_EQ(dinput_record_writer_flush(w), DINPUT_FAILED_PRECONDITION);
  dinput_record_writer_free(w);
  dinput_record_writer_free(nullptr);
  EXPECT_EQ(read_file(p), frame_all({"hello", ""}));

  const char* files[] = {p.c_str()};
  dinput_dataset_t* ds = nullptr;
  ASSERT_EQ(dinput_dataset_records(&ds, files, 1, nullptr), DINPUT_OK);
  EXPECT_STREQ(dinput_dataset_name(ds), "records");
  dinput_status_t end;
  int64_t stats[4];
  EXPECT_EQ(read(ds, &end, stats), (std::vector<std::string>{"hello", ""}));
  EXPECT_EQ(end, DINPUT_OUT_OF_RANGE);
  EXPECT_EQ(stats[0], 2);
  EXPECT_EQ(stats[1], 5);
  EXPECT_EQ(stats[2], 0);
  dinput_dataset_free(ds);
}

// A gzip record file read as uncompressed: DATA_LOSS that says it is gzip and names the
// compression argument, not a bare "corrupt record at byte offset 0".
TEST_F(CApiRecords, CompressedFileReadWithoutCompressionSaysSo) {
  std::string p = path("x.gz");
  dinput_record_writer_t* w = nullptr;
  dinput_status_t st = open_writer(&w, p.c_str(), DINPUT_COMPRESSION_GZIP, 0);
  if (st == DINPUT_UNIMPLEMENTED) GTEST_SKIP() << "no zlib in this build";
  ASSERT_EQ(st, DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_write(w, "hello", 5), DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_close(w), DINPUT_OK);
  dinput_record_writer_free(w);
  const char* files[] = {p.c_str()};
  dinput_dataset_t* ds = nullptr;
  ASSERT_EQ(dinput_dataset_records(&ds, files, 1, nullptr), DINPUT_OK);
  dinput_status_t end;
  int64_t stats[4];
  EXPECT_TRUE(read(ds, &end, stats).empty());
  EXPECT_EQ(end, DINPUT_DATA_LOSS);
  EXPECT_NE(last_error().find("starts with the gzip magic bytes"), std::string::npos)
      << last_error();
  EXPECT_NE(
      last_error().find("DINPUT_COMPRESSION_GZIP with dinput_records_options_set_compression"),
      std::string::npos)
      << last_error();
  EXPECT_EQ(last_error().find("corrupt record"), std::string::npos) << last_error();
  dinput_dataset_free(ds);
}

// free() closes a writer that is still open: what was written is in the file.
TEST_F(CApiRecords, FreeClosesAnOpenWriter) {
  for (dinput_compression_t c :
       {DINPUT_COMPRESSION_NONE, DINPUT_COMPRESSION_ZSTD, DINPUT_COMPRESSION_GZIP}) {
    std::string p = path("free" + std::to_string(static_cast<int>(c)));
    dinput_record_writer_t* w = nullptr;
    dinput_status_t st = open_writer(&w, p.c_str(), c, 0);
    if (st == DINPUT_UNIMPLEMENTED) {
      EXPECT_NE(last_error().find("this build of dinput has no"), std::string::npos);
      continue;
    }
    ASSERT_EQ(st, DINPUT_OK) << last_error();
    EXPECT_EQ(dinput_record_writer_write(w, "kept", 4), DINPUT_OK);
    dinput_record_writer_free(w);
    const char* files[] = {p.c_str()};
    dinput_dataset_t* ds = nullptr;
    ASSERT_EQ(open_records(&ds, files, 1, c, 0), DINPUT_OK);
    dinput_status_t end;
    int64_t stats[4];
    EXPECT_EQ(read(ds, &end, stats), (std::vector<std::string>{"kept"}));
    dinput_dataset_free(ds);
  }
}

// discard() abandons the file: an existing output keeps its bytes, a new one never appears.
TEST_F(CApiRecords, DiscardKeepsTheExistingOutput) {
  std::string p = path("keep.rec");
  {
    std::FILE* f = std::fopen(p.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("precious", f);
    std::fclose(f);
  }
  dinput_record_writer_t* w = nullptr;
  ASSERT_EQ(dinput_record_writer_open(&w, p.c_str(), nullptr), DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_write(w, "partial", 7), DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_discard(w), DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_write(w, "x", 1), DINPUT_FAILED_PRECONDITION);
  EXPECT_EQ(dinput_record_writer_close(w), DINPUT_OK);
  dinput_record_writer_free(w);
  EXPECT_EQ(read_file(p), "precious");
  EXPECT_EQ(dinput_record_writer_discard(nullptr), DINPUT_INVALID_ARGUMENT);
}

TEST_F(CApiRecords, WriterArgumentErrors) {
  dinput_record_writer_t* w = reinterpret_cast<dinput_record_writer_t*>(1);
  EXPECT_EQ(dinput_record_writer_open(&w, nullptr, nullptr), DINPUT_INVALID_ARGUMENT);
  EXPECT_EQ(w, nullptr);
  EXPECT_NE(last_error().find("'path'"), std::string::npos);
  EXPECT_EQ(dinput_record_writer_open(nullptr, "x", nullptr), DINPUT_INVALID_ARGUMENT);
  EXPECT_EQ(open_writer(&w, path("x").c_str(), static_cast<dinput_compression_t>(9), 0),
            DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("compression"), std::string::npos);
  EXPECT_EQ(dinput_record_writer_open(&w, path("none/x").c_str(), nullptr), DINPUT_NOT_FOUND);
  EXPECT_NE(last_error().find(path("none/x")), std::string::npos);
  EXPECT_EQ(dinput_record_writer_write(nullptr, "x", 1), DINPUT_INVALID_ARGUMENT);
  EXPECT_EQ(dinput_record_writer_flush(nullptr), DINPUT_INVALID_ARGUMENT);
  EXPECT_EQ(dinput_record_writer_close(nullptr), DINPUT_INVALID_ARGUMENT);
  ASSERT_EQ(dinput_record_writer_open(&w, path("y").c_str(), nullptr), DINPUT_OK);
  EXPECT_EQ(dinput_record_writer_write(w, nullptr, 3), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("'data'"), std::string::npos);
  dinput_record_writer_t* z = nullptr;
  if (open_writer(&z, path("z").c_str(), DINPUT_COMPRESSION_ZSTD, 0) == DINPUT_OK) {
    dinput_record_writer_free(z);
    EXPECT_EQ(open_writer(&z, path("z").c_str(), DINPUT_COMPRESSION_ZSTD, 22),
              DINPUT_INVALID_ARGUMENT);
    EXPECT_NE(last_error().find("level"), std::string::npos);
  }
  dinput_record_writer_free(w);
}

TEST_F(CApiRecords, SourceArgumentErrors) {
  dinput_dataset_t* ds = nullptr;
  const char* files[] = {"a", nullptr};
  EXPECT_EQ(dinput_dataset_records(nullptr, files, 1, nullptr), DINPUT_INVALID_ARGUMENT);
  EXPECT_EQ(dinput_dataset_records(&ds, nullptr, 1, nullptr), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("'files'"), std::string::npos);
  EXPECT_EQ(dinput_dataset_records(&ds, files, 2, nullptr), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("files[1]"), std::string::npos);
  EXPECT_EQ(open_records(&ds, files, 1, static_cast<dinput_compression_t>(-1), 0),
            DINPUT_INVALID_ARGUMENT);
  EXPECT_EQ(open_records(&ds, files, 1, DINPUT_COMPRESSION_NONE, -5), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("buffer_size"), std::string::npos);
  EXPECT_EQ(ds, nullptr);
  EXPECT_EQ(dinput_dataset_records(&ds, nullptr, 0, nullptr), DINPUT_OK);  // no files
  EXPECT_EQ(dinput_dataset_cardinality(ds), 0);
  dinput_dataset_free(ds);

  EXPECT_EQ(dinput_dataset_fixed_length_records(&ds, files, 1, 0, 0, 0), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("record_bytes"), std::string::npos);
  EXPECT_EQ(dinput_dataset_fixed_length_records(&ds, files, 1, 4, -1, 0), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("header_bytes"), std::string::npos);
  EXPECT_EQ(dinput_dataset_fixed_length_records(&ds, files, 1, 4, 0, -1), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("footer_bytes"), std::string::npos);
  EXPECT_EQ(dinput_dataset_fixed_length_records(&ds, files, 2, 4, 0, 0), DINPUT_INVALID_ARGUMENT);
  ASSERT_EQ(dinput_dataset_fixed_length_records(&ds, files, 1, 4, 0, 0), DINPUT_OK);
  EXPECT_STREQ(dinput_dataset_name(ds), "fixed_length_records");
  dinput_dataset_free(ds);
}

TEST_F(CApiRecords, MissingFileIsNotFound) {
  std::string missing = path("nope.rec");
  const char* files[] = {missing.c_str()};
  dinput_dataset_t* ds = nullptr;
  ASSERT_EQ(dinput_dataset_records(&ds, files, 1, nullptr), DINPUT_OK);  // lazily opened
  dinput_iterator_t* it = nullptr;
  ASSERT_EQ(dinput_dataset_iterator(&it, ds), DINPUT_OK);
  dinput_element_t* e = nullptr;
  EXPECT_EQ(dinput_iterator_get_next(&e, it), DINPUT_NOT_FOUND);
  EXPECT_NE(last_error().find(missing), std::string::npos) << last_error();
  EXPECT_EQ(dinput_iterator_get_next(&e, it), DINPUT_NOT_FOUND);  // sticky
  dinput_iterator_free(it);
  dinput_dataset_free(ds);
}

// skip_corrupt_records set with with_options reaches the reader; the statistic counts.
TEST_F(CApiRecords, SkipCorruptRecordsThroughOptions) {
  std::string bytes = frame_all({"r0", "r1", "r2", "r3"});
  const size_t rec = frame("r0").size();
  bytes[1 * rec + 12] ^= 1;  // r1: bad data CRC
  auto bad = write("bad.rec", bytes);
  auto cut = write("cut.rec", frame_all({"c0", "c1"}).substr(0, rec + 5));  // c1 truncated
  auto good = write("good.rec", frame_all({"g0"}));
  const char* files[] = {bad.c_str(), cut.c_str(), good.c_str()};
  dinput_dataset_t* ds = nullptr;
  ASSERT_EQ(dinput_dataset_records(&ds, files, 3, nullptr), DINPUT_OK);

  dinput_status_t end;
  int64_t stats[4];
  auto strict = read(ds, &end, stats);
  EXPECT_EQ(strict, (std::vector<std::string>{"r0"}));
  EXPECT_EQ(end, DINPUT_DATA_LOSS);
  EXPECT_EQ(stats[0], 1);

  dinput_options_t* opts = nullptr;
  ASSERT_EQ(dinput_options_new(&opts), DINPUT_OK);
  ASSERT_EQ(dinput_options_set_skip_corrupt_records(opts, 1), DINPUT_OK);
  dinput_dataset_t* skipping = nullptr;
  ASSERT_EQ(dinput_dataset_with_options(&skipping, ds, opts), DINPUT_OK);
  auto got = read(skipping, &end, stats);
  EXPECT_EQ(got, (std::vector<std::string>{"r0", "r2", "r3", "c0", "g0"}));
  EXPECT_EQ(end, DINPUT_OUT_OF_RANGE);
  EXPECT_EQ(stats[0], 5);
  EXPECT_EQ(stats[1], 10);
  EXPECT_EQ(stats[2], 2);
  EXPECT_EQ(stats[3],
            static_cast<int64_t>(rec + 5));  // r1 whole, and the 5 bytes of c1 that are there
  dinput_options_free(opts);
  dinput_dataset_free(skipping);
  dinput_dataset_free(ds);
}

TEST_F(CApiRecords, MaxRecordBytesOption) {
  dinput_options_t* opts = nullptr;
  ASSERT_EQ(dinput_options_new(&opts), DINPUT_OK);
  EXPECT_EQ(dinput_options_max_record_bytes(opts), int64_t{256} << 20);
  EXPECT_EQ(dinput_options_max_record_bytes(nullptr), int64_t{256} << 20);
  EXPECT_EQ(dinput_options_set_max_record_bytes(opts, 0), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("max_bytes"), std::string::npos) << last_error();
  EXPECT_EQ(dinput_options_set_max_record_bytes(opts, (int64_t{1} << 56) + 1),
            DINPUT_INVALID_ARGUMENT);
  EXPECT_EQ(dinput_options_set_max_record_bytes(nullptr, 5), DINPUT_INVALID_ARGUMENT);
  ASSERT_EQ(dinput_options_set_max_record_bytes(opts, 3), DINPUT_OK);
  EXPECT_EQ(dinput_options_max_record_bytes(opts), 3);

  auto p = write("sizes.rec", frame_all({"abc", "defg"}));
  const char* files[] = {p.c_str()};
  dinput_dataset_t* ds = nullptr;
  ASSERT_EQ(dinput_dataset_records(&ds, files, 1, nullptr), DINPUT_OK);
  dinput_dataset_t* limited = nullptr;
  ASSERT_EQ(dinput_dataset_with_options(&limited, ds, opts), DINPUT_OK);
  dinput_status_t end;
  int64_t stats[4];
  EXPECT_EQ(read(limited, &end, stats), (std::vector<std::string>{"abc"}));
  EXPECT_EQ(end, DINPUT_DATA_LOSS);
  dinput_options_free(opts);
  dinput_dataset_free(limited);
  dinput_dataset_free(ds);
}

TEST_F(CApiRecords, FileOptionsMapFilesAndAllowNonregularFiles) {
  dinput_options_t* opts = nullptr;
  ASSERT_EQ(dinput_options_new(&opts), DINPUT_OK);
  EXPECT_EQ(dinput_options_map_files(opts), 0);
  EXPECT_EQ(dinput_options_map_files(nullptr), 0);
  EXPECT_EQ(dinput_options_allow_nonregular_files(opts), 0);
  EXPECT_EQ(dinput_options_allow_nonregular_files(nullptr), 0);
  EXPECT_EQ(dinput_options_set_map_files(nullptr, 1), DINPUT_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("dinput_options_set_map_files"), std::string::npos) << last_error();
  EXPECT_EQ(dinput_options_set_allow_nonregular_files(nullptr, 1), DINPUT_INVALID_ARGUMENT);
  ASSERT_EQ(dinput_options_set_map_files(opts, 7), DINPUT_OK);
  EXPECT_EQ(dinput_options_map_files(opts), 1);
  ASSERT_EQ(dinput_options_set_map_files(opts, 0), DINPUT_OK);
  EXPECT_EQ(dinput_options_map_files(opts), 0);
  ASSERT_EQ(dinput_options_set_map_files(opts, 1), DINPUT_OK);

  // Mapped or read, the same records.
  auto p = write("m.rec", frame_all({"abc", "", "defg"}));
  const char* files[] = {p.c_str()};
  dinput_dataset_t* ds = nullptr;
  ASSERT_EQ(dinput_dataset_records(&ds, files, 1, nullptr), DINPUT_OK);
  dinput_dataset_t* mapped = nullptr;
  ASSERT_EQ(dinput_dataset_with_options(&mapped, ds, opts), DINPUT_OK);
  dinput_status_t end;
  int64_t stats[4];
  EXPECT_EQ(read(mapped, &end, stats), (std::vector<std::string>{"abc", "", "defg"}));
  EXPECT_EQ(end, DINPUT_OUT_OF_RANGE);
  EXPECT_EQ(read(ds, &end, stats), (std::vector<std::string>{"abc", "", "defg"}));
  EXPECT_EQ(end, DINPUT_OUT_OF_RANGE);
  dinput_dataset_free(mapped);
  dinput_dataset_free(ds);

  // /dev/zero: refused by default; allowed, it meets the line or file limit instead of
  // growing memory, with an error naming it.
  const char* zero[] = {"/dev/zero"};
  // Options freeze once used (by with_options above): the second configuration is a new one.
  EXPECT_EQ(dinput_options_set_allow_nonregular_files(opts, 1), DINPUT_FAILED_PRECONDITION);
  dinput_options_free(opts);
  ASSERT_EQ(dinput_options_new(&opts), DINPUT_OK);
  ASSERT_EQ(dinput_options_set_map_files(opts, 1), DINPUT_OK);
  ASSERT_EQ(dinput_options_set_allow_nonregular_files(opts, 1), DINPUT_OK);
  EXPECT_EQ(dinput_options_allow_nonregular_files(opts), 1);
  ASSERT_EQ(dinput_options_set_max_record_bytes(opts, 1 << 20), DINPUT_OK);
  dinput_dataset_t* lines = nullptr;
  dinput_dataset_t* fixed = nullptr;
  ASSERT_EQ(dinput_dataset_text_lines(&lines, zero, 1), DINPUT_OK);
  ASSERT_EQ(dinput_dataset_fixed_length_records(&fixed, zero, 1, 4, 0, 0), DINPUT_OK);
  for (dinput_dataset_t* plain : {lines, fixed}) {
    EXPECT_TRUE(read(plain, &end, stats).empty());
    EXPECT_EQ(end, DINPUT_FAILED_PRECONDITION);
    EXPECT_NE(last_error().find("'/dev/zero' is not a regular file (it is a character device)"),
              std::string::npos)
        << last_error();
    EXPECT_NE(last_error().find("dinput_options_set_allow_nonregular_files"), std::string::npos)
        << last_error();
    dinput_dataset_t* allowed = nullptr;
    ASSERT_EQ(dinput_dataset_with_options(&allowed, plain, opts), DINPUT_OK);
    EXPECT_TRUE(read(allowed, &end, stats).empty());
    EXPECT_EQ(end, DINPUT_RESOURCE_EXHAUSTED);
    EXPECT_NE(last_error().find("'/dev/zero'"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("1048576"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find("max_record_bytes"), std::string::npos) << last_error();
    dinput_dataset_free(allowed);
  }
  EXPECT_NE(last_error().find(
                "fixed_length_records: '/dev/zero' is not a regular file, so it is read whole"),
            std::string::npos)
      << last_error();
  // text_lines names the offset of the line that is too long.
  dinput_dataset_t* allowed = nullptr;
  ASSERT_EQ(dinput_dataset_with_options(&allowed, lines, opts), DINPUT_OK);
  read(allowed, &end, stats);
  EXPECT_NE(
      last_error().find(
          "text_lines: the line at byte offset 0 of '/dev/zero' is longer than 1048576 bytes"),
      std::string::npos)
      << last_error();
  dinput_dataset_free(allowed);
  dinput_dataset_free(lines);
  dinput_dataset_free(fixed);
  dinput_options_free(opts);
}

TEST_F(CApiRecords, BuildInfoReportsCompression) {
  std::string info = dinput_build_info();
  EXPECT_NE(info.find("\"zstd\":{\"compiled\":"), std::string::npos) << info;
  EXPECT_NE(info.find("\"zlib\":{\"compiled\":"), std::string::npos) << info;
}

}  // namespace
}  // namespace dinput
