// Record files: framing against hand-built bytes, the writer's bytes, round trips through
// every compression, interoperability with the zstd and gzip commands, every kind of
// corruption with its exact message, skipping corrupt records, and file errors.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "core/tensor_ops.h"
#include "data/nodes.h"
#include "io/file_sources.h"
#include "io/input_stream.h"
#include "io/record_reader.h"
#include "io/record_writer.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using namespace iotest;

class Records : public IoTest {
 protected:
  std::string write_records(const std::string& name, const std::vector<std::string>& records,
                            Compression c = Compression::kNone, int level = 0) {
    std::string p = path(name);
    RecordWriter w(p, c, level);
    for (const auto& r : records) w.write(r.data(), r.size());
    w.close();
    return p;
  }
  static bool supported(Compression c) { return compression_supported(c); }
  // Names in the test's directory that contain `part`.
  std::vector<std::string> files_matching(const std::string& part) const {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d))
        if (std::string(e->d_name).find(part) != std::string::npos) out.push_back(e->d_name);
      closedir(d);
    }
    return out;
  }
};

const std::vector<std::string> kSmall = {"", "a", "hello world", std::string(1000, 'x'),
                                         std::string("\0\1\2", 3)};

// ---- framing ----

TEST_F(Records, ReadsAHandBuiltFile) {
  auto p = write("hand.rec", frame_all(kSmall));
  EXPECT_EQ(read_all(make_records({p}, Compression::kNone, 0)), kSmall);
}

TEST_F(Records, TheFramingOfOneRecordByteForByte) {
  // "abc": length 3, then the masked CRCs (computed by this test's own bitwise CRC32C).
  std::string expected("\x03\0\0\0\0\0\0\0", 8);
  expected += le(masked(bitwise_crc32c(expected.data(), 8)), 4);
  expected += "abc";
  expected += le(masked(bitwise_crc32c("abc", 3)), 4);
  EXPECT_EQ(frame("abc"), expected);
  auto p = write_records("abc.rec", {"abc"});
  EXPECT_EQ(read_file(p), expected);
}

TEST_F(Records, WriterBytesEqualHandBuiltBytes) {
  std::vector<std::string> records = kSmall;
  records.push_back(random_bytes(300000, 5));  // larger than the writer's staging buffer
  records.push_back("tail");
  auto p = write_records("w.rec", records);
  EXPECT_EQ(read_file(p), frame_all(records));
}

TEST_F(Records, EmptyFileAndEmptyListHaveNoRecords) {
  auto p = write("empty.rec", "");
  EXPECT_TRUE(read_all(make_records({p}, Compression::kNone, 0)).empty());
  EXPECT_TRUE(read_all(make_records({}, Compression::kNone, 0)).empty());
  EXPECT_EQ(make_records({}, Compression::kNone, 0)->cardinality(), 0);
}

TEST_F(Records, NameSpecCardinalityAndFileSource) {
  auto a = write("a.rec", frame_all({"a"}));
  auto b = write("b.rec", frame_all({"b"}));
  auto ds = make_records({a, b}, Compression::kNone, 0);
  EXPECT_STREQ(ds->name(), "records");
  EXPECT_EQ(ds->element_spec(), (ElementSpec{{DType::kBytes, Shape()}}));
  EXPECT_EQ(ds->cardinality(), kUnknownCardinality);
  auto source = std::dynamic_pointer_cast<const FileSource>(ds);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->files(), (std::vector<std::string>{a, b}));
  EXPECT_EQ(read_all(source->with_files({b})), (std::vector<std::string>{"b"}));
  EXPECT_EQ(read_all(ds), (std::vector<std::string>{"a", "b"}));
}

// Files are read in order, across empty files, and the same file twice.
TEST_F(Records, FilesInOrder) {
  auto a = write("a.rec", frame_all({"a1", "a2"}));
  auto e = write("e.rec", "");
  auto b = write("b.rec", frame_all({"b1"}));
  EXPECT_EQ(read_all(make_records({a, e, b, a}, Compression::kNone, 0)),
            (std::vector<std::string>{"a1", "a2", "b1", "a1", "a2"}));
}

// Records are handed out in groups; many records and a batch straight from the source.
TEST_F(Records, ManyRecordsAndBatches) {
  std::vector<std::string> records;
  for (int i = 0; i < 1000; ++i) records.push_back(std::to_string(i));
  auto p = write("many.rec", frame_all(records));
  EXPECT_EQ(read_all(make_records({p, p}, Compression::kNone, 0)).size(), 2000u);
  auto it = make_batch(make_records({p}, Compression::kNone, 0), 300, false)
                ->make_iterator(IteratorContext{});
  Element e;
  std::vector<std::string> seen;
  std::vector<int64_t> sizes;
  while (it->next(e)) {
    sizes.push_back(e[0].dim(0));
    for (int64_t i = 0; i < e[0].dim(0); ++i) seen.emplace_back(e[0].string(i));
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{300, 300, 300, 100}));
  EXPECT_EQ(seen, records);
}

// The views keep the file mapping alive after the iterator and the dataset are gone.
TEST_F(Records, RecordsOutliveTheIterator) {
  auto p = write("keep.rec", frame_all({"first", "second"}));
  Element e;
  {
    auto ds = make_records({p}, Compression::kNone, 0);
    auto it = ds->make_iterator(IteratorContext{});
    ASSERT_TRUE(it->next(e));
  }
  std::remove(p.c_str());
  EXPECT_EQ(e[0].string(0), "first");
}

TEST_F(Records, StatisticsCountRecordsAndBytes) {
  auto p = write("s.rec", frame_all(kSmall));
  IteratorContext ctx;
  auto all = read_all(make_records({p}, Compression::kNone, 0), ctx);
  EXPECT_EQ(ctx.stats->records.load(), 5);
  EXPECT_EQ(ctx.stats->record_bytes.load(), 0 + 1 + 11 + 1000 + 3);
  EXPECT_EQ(ctx.stats->corrupt_records_skipped.load(), 0);
}

// ---- the parser over chunk streams: every chunking gives the same records and errors ----

std::vector<std::string> parse(const std::string& bytes, size_t chunk, bool skip,
                               std::string* error, int64_t* skipped = nullptr,
                               int64_t* skipped_bytes = nullptr,
                               uint64_t max_record_bytes = kDefaultMaxRecordBytes) {
  auto holder = std::make_shared<std::string>(bytes);
  RecordParser parser("mem", memory_chunks(holder->data(), holder->size(), nullptr, chunk), nullptr,
                      skip, max_record_bytes);
  std::vector<std::string> out;
  try {
    RecordView v;
    while (parser.next(v)) out.emplace_back(v.data, v.size);
  } catch (const Error& e) {
    *error = e.what();
  }
  if (skipped) *skipped = parser.take_skipped();
  if (skipped_bytes) *skipped_bytes = parser.take_skipped_bytes();
  return out;
}

TEST(RecordParser, EveryChunkSizeGivesTheSameRecords) {
  std::vector<std::string> records = kSmall;
  records.push_back(random_bytes(5000, 3));
  std::string bytes = frame_all(records);
  for (size_t chunk : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{11}, size_t{12},
                       size_t{13}, size_t{16}, size_t{17}, size_t{100}, size_t{4096}}) {
    std::string error;
    EXPECT_EQ(parse(bytes, chunk, false, &error), records) << chunk;
    EXPECT_EQ(error, "") << chunk;
  }
}

TEST(RecordParser, EveryTruncationIsReportedAtTheSameOffsetForEveryChunking) {
  std::string bytes = frame_all({"abcdef", "0123456789"});  // 22 + 26 bytes
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    if (cut == 22) continue;  // a record boundary: a clean end
    std::string expected_error;
    std::vector<std::string> expected = parse(bytes.substr(0, cut), 0, false, &expected_error);
    EXPECT_NE(
        expected_error.find(cut < 22 ? "at byte offset 0 of 'mem'" : "at byte offset 22 of 'mem'"),
        std::string::npos)
        << cut << ": " << expected_error;
    EXPECT_NE(expected_error.find("truncated record"), std::string::npos) << expected_error;
    EXPECT_EQ(expected.size(), cut < 22 ? 0u : 1u);
    for (size_t chunk : {1, 5, 12, 13}) {
      std::string error;
      EXPECT_EQ(parse(bytes.substr(0, cut), chunk, false, &error), expected);
      EXPECT_EQ(error, expected_error) << "cut " << cut << " chunk " << chunk;
      int64_t skipped = 0;
      EXPECT_EQ(parse(bytes.substr(0, cut), chunk, true, &error, &skipped), expected);
      EXPECT_EQ(skipped, 1);
    }
  }
}

// ---- corruption: DATA_LOSS naming the file and the record's offset ----

TEST_F(Records, BadLengthCrc) {
  std::string bytes = frame_all({"abc", "defg", "hi"});  // records at 0, 19, 39
  bytes[19 + 8] ^= 0x01;                                 // the length CRC of the second record
  auto p = write("len.rec", bytes);
  auto o = read_until_error(make_records({p}, Compression::kNone, 0));
  EXPECT_EQ(o.records, (std::vector<std::string>{"abc"}));
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_NE(o.message.find("records: corrupt record at byte offset 19 of '" + p +
                           "': the CRC of its length field does not match"),
            std::string::npos)
      << o.message;
}

// A compressed record file read without its compression fails on its first header; the
// message names the compression its magic bytes show and how to set it.
TEST_F(Records, CompressedFileReadUncompressedNamesTheCompression) {
  for (Compression c : {Compression::kGzip, Compression::kZstd}) {
    if (!supported(c)) continue;
    const char* name = c == Compression::kGzip ? "GZIP" : "ZSTD";
    const char* format = c == Compression::kGzip ? "gzip" : "zstd";
    auto p = write_records(std::string("x.") + format, {"abc", "defg"}, c);
    auto o = read_until_error(make_records({p}, Compression::kNone, 0));
    EXPECT_EQ(o.code, Code::kDataLoss);
    EXPECT_EQ(
        o.message,
        str_cat("records: '", p, "' starts with the ", format,
                " magic bytes where the record at byte offset 0 belongs, so it is most likely a ",
                format,
                "-compressed record file, but it is read without compression: set the "
                "compression to ",
                name, " (DINPUT_COMPRESSION_", name,
                " with dinput_records_options_set_compression; compression=\"", name,
                "\" in the dinput tool's records())"));
  }
}

// A text file is not a TFRecord file, and the message says so instead of naming a CRC.
TEST_F(Records, TextFileIsNotATFRecordFile) {
  auto p = write("notes.txt", "hello world\nsecond line\n");
  auto o = read_until_error(make_records({p}, Compression::kNone, 0));
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_EQ(o.message, "records: '" + p +
                           "' is not a TFRecord file: it starts with text ('hello world\\n') "
                           "where the header of the record at byte offset 0 belongs (text files "
                           "are read with text_lines)");
  // A text file shorter than one header is named as text too, not as a truncated record.
  auto short_text = write("short.txt", "hi\n");
  o = read_until_error(make_records({short_text}, Compression::kNone, 0));
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_EQ(o.message, "records: '" + short_text +
                           "' is not a TFRecord file: it starts with text ('hi\\n') "
                           "where the header of the record at byte offset 0 belongs (text files "
                           "are read with text_lines)");
  // Other bytes that fail as the first header: the CRC message, with the hint.
  auto q =
      write("binary.bin", std::string("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d", 13));
  o = read_until_error(make_records({q}, Compression::kNone, 0));
  EXPECT_NE(o.message.find("records: corrupt record at byte offset 0 of '" + q +
                           "': the CRC of its length field does not match"),
            std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("most likely not a TFRecord file"), std::string::npos) << o.message;
}

TEST_F(Records, BadLengthCrcBecauseTheLengthIsDamaged) {
  std::string bytes = frame_all({"abc", "defg"});
  bytes[19] = 100;  // the length itself: its CRC no longer matches
  auto p = write("len2.rec", bytes);
  auto o = read_until_error(make_records({p}, Compression::kNone, 0));
  EXPECT_EQ(o.records.size(), 1u);
  EXPECT_NE(o.message.find("at byte offset 19 of '" + p + "'"), std::string::npos) << o.message;
}

TEST_F(Records, BadDataCrc) {
  std::string bytes = frame_all({"abc", "defg", "hi"});
  bytes[19 + 12 + 2] ^= 0x20;  // a data byte of the second record
  auto p = write("data.rec", bytes);
  auto o = read_until_error(make_records({p}, Compression::kNone, 0));
  EXPECT_EQ(o.records, (std::vector<std::string>{"abc"}));
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_NE(o.message.find("records: corrupt record at byte offset 19 of '" + p +
                           "': the CRC of its 4 data bytes does not match (stored 0x"),
            std::string::npos)
      << o.message;
  // A damaged stored CRC is the same error.
  bytes = frame_all({"abc", "defg"});
  bytes[19 + 12 + 4] ^= 0x01;
  auto p2 = write("data2.rec", bytes);
  o = read_until_error(make_records({p2}, Compression::kNone, 0));
  EXPECT_NE(o.message.find("corrupt record at byte offset 19 of '" + p2 + "'"), std::string::npos)
      << o.message;
}

TEST_F(Records, TruncatedInTheHeaderTheDataAndTheFooter) {
  std::string bytes = frame_all({"abc", "defghij"});  // second record at 19, 23 bytes long
  struct Case {
    size_t cut;
    std::string detail;
  } cases[] = {
      {19 + 5, "the file ends 5 bytes into the record's 12-byte header"},
      {19 + 12 + 3,
       "the file ends 15 bytes into a record of 7 data bytes (23 bytes with its framing)"},
      {19 + 12 + 7 + 2,
       "the file ends 21 bytes into a record of 7 data bytes (23 bytes with its framing)"},
  };
  for (const auto& c : cases) {
    auto p = write("t" + std::to_string(c.cut) + ".rec", bytes.substr(0, c.cut));
    auto o = read_until_error(make_records({p}, Compression::kNone, 0));
    EXPECT_EQ(o.records, (std::vector<std::string>{"abc"}));
    EXPECT_EQ(o.code, Code::kDataLoss);
    EXPECT_EQ(o.message, "records: truncated record at byte offset 19 of '" + p + "': " + c.detail);
  }
}

// A length field that claims more than max_record_bytes is DATA_LOSS naming the file, the
// offset and the claim, before anything is read or allocated for it.
TEST_F(Records, AHugeClaimedLengthIsOverTheLimit) {
  std::string len = le(uint64_t{1} << 62, 8);
  std::string bytes = len + le(masked(bitwise_crc32c(len.data(), 8)), 4) + "short";
  auto p = write("huge.rec", bytes);
  auto o = read_until_error(make_records({p}, Compression::kNone, 64));
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_EQ(
      o.message,
      "records: record at byte offset 0 of '" + p +
          "' claims 4611686018427387904 data bytes, more than the limit of 268435456 "
          "(max_record_bytes; raise it with dinput_options_set_max_record_bytes if records this "
          "large are expected)");
}

// Below the limit, a claim that the file does not hold is a truncation; the message gives
// the claim and its framing without wrapping around.
TEST_F(Records, AClaimBeyondTheDataIsATruncation) {
  std::string len = le(1000, 8);
  auto p = write("short.rec", len + le(masked(bitwise_crc32c(len.data(), 8)), 4) + "short");
  auto o = read_until_error(make_records({p}, Compression::kNone, 0));
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_EQ(o.message, "records: truncated record at byte offset 0 of '" + p +
                           "': the file ends 17 bytes into a record of 1000 data bytes (1016 bytes "
                           "with its framing)");
}

// A length of 2^64 - 1 (a -1 written as unsigned) is shown as what it is, not wrapped.
TEST_F(Records, AnAllOnesLengthIsShownAsTheFileStatesIt) {
  std::string len = le(UINT64_MAX, 8);
  auto p = write("ones.rec",
                 frame_all({"ok"}) + len + le(masked(bitwise_crc32c(len.data(), 8)), 4) + "x");
  IteratorContext ctx;
  ctx.options.max_record_bytes = kMaxMaxRecordBytes;  // the largest limit there is
  auto o = read_until_error(make_records({p}, Compression::kNone, 0), ctx);
  EXPECT_EQ(o.records, (std::vector<std::string>{"ok"}));
  EXPECT_NE(o.message.find("at byte offset 18 of '" + p +
                           "' claims 18446744073709551615 (0xffffffffffffffff) data "
                           "bytes, more than the limit of 72057594037927936"),
            std::string::npos)
      << o.message;
}

// The limit is an option: a record just over it fails, at it reads; skipping passes over
// an oversized record (its framing is intact) and counts it with all its bytes.
TEST_F(Records, MaxRecordBytesOption) {
  auto p = write("sizes.rec", frame_all({"a", std::string(100, 'b'), "c"}));
  IteratorContext at100;
  at100.options.max_record_bytes = 100;
  EXPECT_EQ(read_all(make_records({p}, Compression::kNone, 0), at100).size(), 3u);
  IteratorContext at99;
  at99.options.max_record_bytes = 99;
  auto o = read_until_error(make_records({p}, Compression::kNone, 0), at99);
  EXPECT_EQ(o.records, (std::vector<std::string>{"a"}));
  EXPECT_NE(o.message.find("at byte offset 17 of '" + p +
                           "' claims 100 data bytes, more than the limit of 99"),
            std::string::npos)
      << o.message;
  IteratorContext skip = context(true);
  skip.options.max_record_bytes = 99;
  EXPECT_EQ(read_all(make_records({p}, Compression::kNone, 0), skip),
            (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(skip.stats->corrupt_records_skipped.load(), 1);
  EXPECT_EQ(skip.stats->corrupt_bytes_skipped.load(), 116);
}

// ---- skipping corrupt records ----

TEST_F(Records, SkipCorruptRecords) {
  std::vector<std::string> records;
  for (int i = 0; i < 10; ++i) records.push_back("record-" + std::to_string(i));
  std::string good = frame_all(records);
  const size_t rec = frame("record-0").size();  // all records have the same size

  std::string data_crc = good;  // records 3 and 6 have bad data CRCs: skipped, reading goes on
  data_crc[3 * rec + 12] ^= 1;
  data_crc[6 * rec + 12] ^= 1;
  std::string len_crc = good;  // record 5 has a bad length CRC: the reader finds record 6
  len_crc[5 * rec + 9] ^= 1;
  std::string truncated = good.substr(0, 7 * rec + 3);  // ends inside record 7

  auto a = write("a.rec", data_crc);
  auto b = write("b.rec", len_crc);
  auto c = write("c.rec", truncated);
  auto d = write("d.rec", frame_all({"last"}));
  IteratorContext ctx = context(/*skip_corrupt=*/true);
  auto got = read_all(make_records({a, b, c, d}, Compression::kNone, 0), ctx);

  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i)
    if (i != 3 && i != 6) expected.push_back(records[i]);
  for (int i = 0; i < 10; ++i)
    if (i != 5) expected.push_back(records[i]);
  for (int i = 0; i < 7; ++i) expected.push_back(records[i]);
  expected.push_back("last");
  EXPECT_EQ(got, expected);
  EXPECT_EQ(ctx.stats->corrupt_records_skipped.load(), 2 + 1 + 1);
  // a: two whole records; b: record 5 up to record 6; c: the 3 header bytes of record 7.
  EXPECT_EQ(ctx.stats->corrupt_bytes_skipped.load(), static_cast<int64_t>(2 * rec + rec + 3));
  EXPECT_EQ(read_statistic(*ctx.stats, "corrupt_bytes_skipped"), static_cast<int64_t>(3 * rec + 3));
  EXPECT_EQ(ctx.stats->records.load(), static_cast<int64_t>(expected.size()));

  // Without the option the first corrupt record fails the iteration.
  auto o = read_until_error(make_records({a, b, c, d}, Compression::kNone, 0));
  EXPECT_EQ(o.records.size(), 3u);
  EXPECT_EQ(o.code, Code::kDataLoss);
}

// One flipped bit in a length field loses exactly that record: the reader scans forward to
// the next valid header (for every chunking, also with the header split across chunks) and
// counts one record and its bytes. It used to end the file there and count 1 for 2 lost.
TEST(RecordParser, AFlippedLengthBitLosesOnlyThatRecord) {
  std::vector<std::string> records = {"first", std::string(40, 'x'), "third", "", "fifth"};
  const std::string good = frame_all(records);
  const size_t second = frame("first").size();
  for (int bit : {0, 5, 63}) {
    std::string bytes = good;
    bytes[second + bit / 8] ^= static_cast<char>(1 << (bit % 8));
    std::vector<std::string> expected = {"first", "third", "", "fifth"};
    for (size_t chunk :
         {size_t{0}, size_t{1}, size_t{5}, size_t{11}, size_t{12}, size_t{13}, size_t{64}}) {
      std::string error;
      int64_t skipped = -1, skipped_bytes = -1;
      EXPECT_EQ(parse(bytes, chunk, true, &error, &skipped, &skipped_bytes), expected)
          << bit << " " << chunk;
      EXPECT_EQ(error, "");
      EXPECT_EQ(skipped, 1) << chunk;
      EXPECT_EQ(skipped_bytes, static_cast<int64_t>(frame(records[1]).size())) << chunk;
    }
  }
}

// Garbage between records: one resynchronization, every garbage byte counted; garbage at
// the end that holds no header: one record, all its bytes.
TEST(RecordParser, GarbageIsSkippedAndCountedByTheByte) {
  const std::string garbage = random_bytes(1000, 7);
  std::string bytes = frame_all({"a"});
  std::string damaged = frame_all({"zz"});
  damaged[0] ^= 1;  // a bad length CRC starts the garbage
  bytes += damaged + garbage + frame_all({"b"}) + damaged + garbage;
  for (size_t chunk : {size_t{0}, size_t{3}, size_t{100}}) {
    std::string error;
    int64_t skipped = -1, skipped_bytes = -1;
    EXPECT_EQ(parse(bytes, chunk, true, &error, &skipped, &skipped_bytes),
              (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(skipped, 2);
    EXPECT_EQ(skipped_bytes, static_cast<int64_t>(2 * (damaged.size() + garbage.size())));
  }
}

// Skipped records are counted when the reader gets to them, not when parsed ahead.
TEST_F(Records, SkipsAreCountedInOrder) {
  std::vector<std::string> records = {"a", "b", "c", "d"};
  std::string bytes = frame_all(records);
  bytes[frame("a").size() * 2 + 12] ^= 1;  // "c"
  auto p = write("order.rec", bytes);
  IteratorContext ctx = context(true);
  auto it = make_records({p}, Compression::kNone, 0)->make_iterator(ctx);
  Element e;
  ASSERT_TRUE(it->next(e));
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(ctx.stats->corrupt_records_skipped.load(), 0);
  EXPECT_EQ(ctx.stats->records.load(), 2);
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(e[0].string(0), "d");
  EXPECT_EQ(ctx.stats->corrupt_records_skipped.load(), 1);
  EXPECT_FALSE(it->next(e));
}

// ---- file errors ----

TEST_F(Records, MissingFileIsNotFoundAfterTheRecordsBeforeIt) {
  auto good = write("good.rec", frame_all({"g"}));
  std::string missing = path("missing.rec");
  for (bool skip : {false, true}) {  // a missing file is not a corrupt record
    auto o = read_until_error(make_records({good, missing}, Compression::kNone, 0), context(skip));
    EXPECT_EQ(o.records, (std::vector<std::string>{"g"}));
    EXPECT_EQ(o.code, Code::kNotFound);
    EXPECT_NE(o.message.find("'" + missing + "'"), std::string::npos) << o.message;
  }
}

TEST_F(Records, UnreadableFileIsPermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: permission checks are bypassed";
  auto p = write("locked.rec", frame_all({"x"}));
  ASSERT_EQ(chmod(p.c_str(), 0), 0);
  auto o = read_until_error(make_records({p}, Compression::kNone, 0));
  EXPECT_EQ(o.code, Code::kPermissionDenied);
  EXPECT_NE(o.message.find(p), std::string::npos) << o.message;
}

TEST_F(Records, ADirectoryIsFailedPrecondition) {
  auto o = read_until_error(make_records({dir_}, Compression::kNone, 0));
  EXPECT_EQ(o.code, Code::kFailedPrecondition);
  EXPECT_NE(o.message.find(dir_), std::string::npos) << o.message;
}

// A pipe, when allowed, is read in chunks of buffer_size, records spanning them.
TEST_F(Records, ReadsAPipeInChunks) {
  std::vector<std::string> records = kSmall;
  records.push_back(random_bytes(100000, 9));
  std::string bytes = frame_all(records);
  std::string fifo = path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t r = ::write(fd, bytes.data() + off, std::min<size_t>(bytes.size() - off, 777));
      if (r <= 0) break;
      off += static_cast<size_t>(r);
    }
    ::close(fd);
  });
  IteratorContext ctx;
  ctx.options.allow_nonregular_files = true;  // refused otherwise (file_changes_test.cc)
  auto got = read_all(make_records({fifo}, Compression::kNone, 1000), ctx);
  writer.join();
  EXPECT_EQ(got, records);
}

TEST_F(Records, InvalidArguments) {
  EXPECT_THROW(make_records({}, static_cast<Compression>(7), 0), Error);
  try {
    make_records({}, Compression::kNone, -1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("buffer_size"), std::string::npos);
  }
}

// ---- round trips through every compression ----

class RoundTrip : public Records, public ::testing::WithParamInterface<Compression> {};

TEST_P(RoundTrip, SizesZeroOneKibAndFiveMib) {
  Compression c = GetParam();
  if (!supported(c)) GTEST_SKIP() << compression_name(c) << " is not compiled in";
  std::vector<std::string> records = {"", "x",  random_bytes(1024, 1), random_bytes(5 << 20, 2),
                                      "", "end"};
  for (int i = 0; i < 300; ++i)
    records.push_back(random_bytes(static_cast<size_t>(i * 7), static_cast<uint64_t>(i)));
  auto p = write_records("rt.rec", records, c);
  // Default chunks, and tiny ones so that most records span chunk boundaries.
  for (int64_t buffer : {0, 1, 1000, 65536}) {
    IteratorContext ctx;
    auto got = read_all(make_records({p}, c, buffer), ctx);
    ASSERT_EQ(got.size(), records.size()) << buffer;
    EXPECT_TRUE(got == records) << compression_name(c) << " buffer " << buffer;
    EXPECT_EQ(ctx.stats->records.load(), static_cast<int64_t>(records.size()));
  }
}

TEST_P(RoundTrip, LevelsAndFlush) {
  Compression c = GetParam();
  if (!supported(c)) GTEST_SKIP();
  for (int level : {0, 1, 9}) {
    std::string p = path("lvl" + std::to_string(level));
    RecordWriter w(p, c, level);
    w.write("one", 3);
    w.flush();
    w.write("two", 3);
    w.flush();  // flushing twice in a row, and between records, keeps the stream valid
    w.flush();
    w.close();
    EXPECT_EQ(read_all(make_records({p}, c, 0)), (std::vector<std::string>{"one", "two"}));
  }
}

INSTANTIATE_TEST_SUITE_P(Compressions, RoundTrip,
                         ::testing::Values(Compression::kNone, Compression::kZstd,
                                           Compression::kGzip),
                         [](const auto& info) {
                           return std::string(compression_name(info.param));
                         });

// The records go to a temporary file beside the output, which replaces the output only when
// close() succeeds: until then a file already there keeps its contents.
TEST_F(Records, TheOutputIsReplacedOnlyAtClose) {
  std::string p = write("out.rec", "old contents");
  RecordWriter w(p, Compression::kNone, 0);
  w.write("a", 1);
  w.flush();
  EXPECT_EQ(read_file(p), "old contents");
  std::vector<std::string> temps = files_matching(".out.rec.tmp-");
  ASSERT_EQ(temps.size(), 1u);
  EXPECT_EQ(read_file(path(temps[0])), frame_all({"a"}));  // flushed: in the temporary file
  w.close();
  EXPECT_EQ(read_file(p), frame_all({"a"}));
  EXPECT_TRUE(files_matching(".tmp-").empty());
}

TEST_F(Records, DiscardLeavesTheOutputAsItWas) {
  for (Compression c : {Compression::kNone, Compression::kZstd, Compression::kGzip}) {
    if (!supported(c)) continue;
    std::string p = write("keep.rec", frame_all({"precious"}));
    {
      RecordWriter w(p, c, 0);
      w.write("partial", 7);
      w.discard();
      EXPECT_TRUE(w.closed());
      EXPECT_THROW(w.write("x", 1), Error);
      EXPECT_NO_THROW(w.close());  // nothing left to close
      w.discard();                 // twice is fine
    }
    EXPECT_EQ(read_file(p), frame_all({"precious"}));
    // A new file that is discarded never appears.
    {
      RecordWriter w(path("new.rec"), c, 0);
      w.write("x", 1);
      w.discard();
    }
    EXPECT_NE(access(path("new.rec").c_str(), F_OK), 0);
    EXPECT_TRUE(files_matching(".tmp-").empty());
  }
}

// A write that fails (here: the temporary's directory is gone, so the rename cannot
// happen) leaves the output as it was and reports the error naming it.
TEST_F(Records, AFailedCloseLeavesTheOutputAsItWas) {
  ASSERT_EQ(mkdir(path("sub").c_str(), 0755), 0);
  std::string p = path("sub/out.rec");
  RecordWriter w(p, Compression::kNone, 0);
  w.write("a", 1);
  ASSERT_EQ(run("rm -rf '" + path("sub") + "'"), 0);
  try {
    w.close();
    FAIL() << "close succeeded without its directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound) << e.what();
    EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(w.close());  // closing again does nothing
}

// A write that fails part-way (the file size limit: EFBIG, as a full disk would give
// ENOSPC) leaves the output as it was, removes the temporary file, and names the output.
// In a child process, so that the limit and the ignored SIGXFSZ stay there.
TEST_F(Records, AWriteFailingPartWayLeavesTheOutputAsItWas) {
  const std::string p = write("keep.rec", frame_all({"precious"}));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{1 << 20, 1 << 20};
    setrlimit(RLIMIT_FSIZE, &limit);
    int rc = 10;
    try {
      RecordWriter w(p, Compression::kNone, 0);
      std::string big(4 << 20, 'b');
      w.write(big.data(), big.size());
      w.close();
      rc = 11;  // the limit did not bite
    } catch (const Error& e) {
      const bool named = std::string(e.what()).find(p) != std::string::npos;
      rc = e.code() == Code::kResourceExhausted && named ? 0 : 12;
    }
    _exit(rc);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(read_file(p), frame_all({"precious"}));
  EXPECT_TRUE(files_matching(".tmp-").empty());
}

// The destructor closes (as dinput_record_writer_free does): what was written replaces the
// output. A symbolic link is followed, and the replaced file's permission bits are kept.
TEST_F(Records, ReplacesTheTargetOfALinkAndKeepsItsMode) {
  std::string target = write("target.rec", "old");
  ASSERT_EQ(chmod(target.c_str(), 0604), 0);
  ASSERT_EQ(symlink("target.rec", path("link.rec").c_str()), 0);
  {
    RecordWriter w(path("link.rec"), Compression::kNone, 0);
    w.write("new", 3);
  }
  struct stat st;
  ASSERT_EQ(lstat(path("link.rec").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read_file(target), frame_all({"new"}));
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0604u);
  EXPECT_TRUE(files_matching(".tmp-").empty());
}

// ---- the writer's errors ----

TEST_F(Records, WriterErrors) {
  try {
    RecordWriter w(path("no/such/dir/x.rec"), Compression::kNone, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
    EXPECT_NE(std::string(e.what()).find(path("no/such/dir/x.rec")), std::string::npos) << e.what();
  }
  try {
    RecordWriter w(dir_, Compression::kNone, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFailedPrecondition) << e.what();
  }
  if (supported(Compression::kZstd)) {
    EXPECT_THROW(RecordWriter(path("z"), Compression::kZstd, 20), Error);
    EXPECT_THROW(RecordWriter(path("z"), Compression::kZstd, -1), Error);
  }
  if (supported(Compression::kGzip)) {
    EXPECT_THROW(RecordWriter(path("g"), Compression::kGzip, 10), Error);
  }
  try {
    RecordWriter w("", Compression::kNone, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound) << e.what();
  }
  // A rejected level does not create (or truncate) the file.
  EXPECT_NE(access(path("z").c_str(), F_OK), 0);
  RecordWriter ok(path("n"), Compression::kNone, 12345);  // the level is ignored for NONE
  ok.close();
}

// /dev/full fails every write with ENOSPC: RESOURCE_EXHAUSTED naming the file, repeated by
// every later call, and reported by close.
TEST_F(Records, WriterOutOfSpaceIsResourceExhausted) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  {
    RecordWriter w("/dev/full", Compression::kNone, 0);
    w.write("small", 5);  // staged, not yet written
    try {
      w.close();
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kResourceExhausted);
      EXPECT_NE(std::string(e.what()).find("'/dev/full'"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(w.close());  // closing twice is fine
  }
  {
    RecordWriter w("/dev/full", Compression::kNone, 0);
    std::string big(1 << 20, 'b');
    EXPECT_THROW(w.write(big.data(), big.size()), Error);
    try {
      w.write("x", 1);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kResourceExhausted);
    }
    EXPECT_THROW(w.flush(), Error);
    EXPECT_THROW(w.close(), Error);
  }
}

TEST_F(Records, WriteAfterCloseIsFailedPrecondition) {
  RecordWriter w(path("c.rec"), Compression::kNone, 0);
  w.close();
  w.close();
  try {
    w.write("x", 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kFailedPrecondition);
    EXPECT_NE(std::string(e.what()).find(path("c.rec")), std::string::npos);
  }
  EXPECT_THROW(w.flush(), Error);
}

// ---- compressed streams: interop and corruption ----

TEST_F(Records, ZstdInteropWithTheZstdCommand) {
  if (!supported(Compression::kZstd)) GTEST_SKIP() << "zstd is not compiled in";
  if (!have_command("zstd")) GTEST_SKIP() << "the zstd command is not installed";
  std::vector<std::string> records = kSmall;
  records.push_back(random_bytes(200000, 4));
  auto plain = write_records("p.rec", records);
  auto packed = write_records("z.rec.zst", records, Compression::kZstd, 5);
  // zstd -d of our ZSTD file is the plain record file.
  ASSERT_EQ(run("zstd -q -d -c '" + packed + "' > '" + path("unpacked.rec") + "'"), 0);
  EXPECT_EQ(read_file(path("unpacked.rec")), read_file(plain));
  // A plain file compressed by zstd reads as ZSTD, also as two concatenated frames.
  ASSERT_EQ(run("zstd -q -c -19 '" + plain + "' > '" + path("cli.zst") + "'"), 0);
  EXPECT_EQ(read_all(make_records({path("cli.zst")}, Compression::kZstd, 0)), records);
  ASSERT_EQ(run("cat '" + path("cli.zst") + "' '" + packed + "' > '" + path("two.zst") + "'"), 0);
  auto twice = records;
  twice.insert(twice.end(), records.begin(), records.end());
  EXPECT_EQ(read_all(make_records({path("two.zst")}, Compression::kZstd, 4096)), twice);
}

TEST_F(Records, GzipInteropWithTheGzipCommand) {
  if (!supported(Compression::kGzip)) GTEST_SKIP() << "zlib is not compiled in";
  if (!have_command("gzip")) GTEST_SKIP() << "the gzip command is not installed";
  std::vector<std::string> records = kSmall;
  records.push_back(random_bytes(200000, 4));
  auto plain = write_records("p.rec", records);
  auto packed = write_records("g.rec.gz", records, Compression::kGzip, 0);
  ASSERT_EQ(run("gzip -d -c '" + packed + "' > '" + path("unpacked.rec") + "'"), 0);
  EXPECT_EQ(read_file(path("unpacked.rec")), read_file(plain));
  ASSERT_EQ(run("gzip -c -9 '" + plain + "' > '" + path("cli.gz") + "'"), 0);
  EXPECT_EQ(read_all(make_records({path("cli.gz")}, Compression::kGzip, 0)), records);
  // Concatenated members are one stream, as for gzip itself.
  ASSERT_EQ(run("cat '" + path("cli.gz") + "' '" + packed + "' > '" + path("two.gz") + "'"), 0);
  auto twice = records;
  twice.insert(twice.end(), records.begin(), records.end());
  EXPECT_EQ(read_all(make_records({path("two.gz")}, Compression::kGzip, 1000)), twice);
}

// Two streams concatenated, the second damaged at its start: the records of the first are
// delivered, then DATA_LOSS names the file and the offset of the next record in the
// decompressed stream (the size of the first stream's records).
class CompressedCorruption : public Records, public ::testing::WithParamInterface<Compression> {
 protected:
  void expect(const std::string& bytes, const std::string& kind,
              const std::vector<std::string>& first, const std::string& detail) {
    Compression c = GetParam();
    auto p = write("bad", bytes);
    const std::string name = c == Compression::kZstd ? "zstd" : "gzip";
    for (int64_t buffer : {0, 7}) {
      auto o = read_until_error(make_records({p}, c, buffer));
      EXPECT_EQ(o.records, first);
      EXPECT_EQ(o.code, Code::kDataLoss);
      std::string prefix = "records: " + kind + " " + name + " stream in '" + p +
                           "', in the record at byte offset " +
                           std::to_string(frame_all(first).size()) +
                           " of the decompressed stream: ";
      EXPECT_EQ(o.message.substr(0, prefix.size()), prefix) << o.message;
      EXPECT_NE(o.message.find(detail), std::string::npos) << o.message;
      // Skipping: the stream's end is lost and counted once; the next file is read.
      auto next = write("next", read_file(write_records("next.src", {"after"}, c)));
      IteratorContext ctx = context(true);
      auto got = read_all(make_records({p, next}, c, buffer), ctx);
      auto expected = first;
      expected.push_back("after");
      EXPECT_EQ(got, expected);
      EXPECT_EQ(ctx.stats->corrupt_records_skipped.load(), 1);
    }
  }
};

TEST_P(CompressedCorruption, TruncatedSecondStream) {
  Compression c = GetParam();
  if (!supported(c)) GTEST_SKIP();
  std::vector<std::string> first = {"one", random_bytes(5000, 1), "three"};
  std::string a = read_file(write_records("a", first, c));
  std::string b = read_file(write_records("b", {"lost"}, c));
  // Cut inside the second stream's header, before any of its data can be decoded.
  expect(a + b.substr(0, 5), "truncated", first,
         c == Compression::kZstd ? "ends inside a zstd frame" : "ends inside a gzip member");
}

TEST_P(CompressedCorruption, CorruptSecondStream) {
  Compression c = GetParam();
  if (!supported(c)) GTEST_SKIP();
  std::vector<std::string> first = {"one", random_bytes(5000, 1)};
  std::string a = read_file(write_records("a", first, c));
  std::string b = read_file(write_records("b", {"lost"}, c));
  b[0] ^= 0x55;  // the magic number
  expect(a + b, "corrupt", first, c == Compression::kZstd ? "zstd: " : "gzip: ");
}

TEST_P(CompressedCorruption, GarbageAfterTheStream) {
  Compression c = GetParam();
  if (!supported(c)) GTEST_SKIP();
  std::vector<std::string> first = {"only"};
  std::string a = read_file(write_records("a", first, c));
  expect(a + "garbage!", "corrupt", first, c == Compression::kZstd ? "zstd: " : "gzip: ");
}

INSTANTIATE_TEST_SUITE_P(Compressions, CompressedCorruption,
                         ::testing::Values(Compression::kZstd, Compression::kGzip),
                         [](const auto& info) {
                           return std::string(compression_name(info.param));
                         });

// A compressed stream that decodes fine but holds a bad record: the offset is the record's
// offset in the decompressed stream, and the message says so.
TEST_F(Records, BadRecordInsideACompressedStream) {
  if (!supported(Compression::kZstd)) GTEST_SKIP();
  std::string plain = frame_all({"abc", "defg"});
  plain[19 + 12] ^= 1;
  auto src = write("plain", plain);
  // Compress the damaged plain bytes as they are: the stream is valid, the record is not.
  if (!have_command("zstd")) GTEST_SKIP() << "needs the zstd command to compress raw bytes";
  ASSERT_EQ(run("zstd -q -c '" + src + "' > '" + path("bad.zst") + "'"), 0);
  auto o = read_until_error(make_records({path("bad.zst")}, Compression::kZstd, 0));
  EXPECT_EQ(o.records, (std::vector<std::string>{"abc"}));
  EXPECT_EQ(o.message,
            "records: corrupt record at byte offset 19 of the decompressed zstd stream of '" +
                path("bad.zst") + "': the CRC of its 4 data bytes does not match (stored 0x" +
                o.message.substr(o.message.find("stored 0x") + 9, 8) + ", computed 0x" +
                o.message.substr(o.message.find("computed 0x") + 11, 8) + ")");
}

// The record reader leaves zstd's content checksum (XXH64 of the whole stream) unchecked,
// since the record CRCs cover every byte it delivers: a stream whose only damage is that
// checksum reads whole. Without the skip, the same file is DATA_LOSS at the frame's end.
TEST_F(Records, ZstdContentChecksumIsLeftToTheRecordCRCs) {
  if (!supported(Compression::kZstd)) GTEST_SKIP();
  if (!zstd_can_skip_content_checksum()) GTEST_SKIP() << "libzstd cannot skip the checksum";
  std::vector<std::string> records = {"abc", random_bytes(5000, 7), "defg"};
  std::string bytes = read_file(write_records("c.src", records, Compression::kZstd));
  bytes[bytes.size() - 1] ^= 0x40;  // the last byte of the frame's 4-byte checksum
  auto p = write("c.zst", bytes);
  for (int64_t buffer : {0, 7}) {
    EXPECT_EQ(read_all(make_records({p}, Compression::kZstd, buffer)), records);
  }
}

// With the content checksum skipped, a damaged byte of the compressed data is still found:
// in an incompressible payload (stored as raw blocks, where any byte decodes) by the data CRC
// of the record it lands in, DATA_LOSS naming the file and the record's offset.
TEST_F(Records, ZstdDamagedDataByteIsCaughtWithoutTheContentChecksum) {
  if (!supported(Compression::kZstd)) GTEST_SKIP();
  std::vector<std::string> records;
  for (int i = 0; i < 64; ++i) records.push_back(random_bytes(1000, 100 + i));
  std::string bytes = read_file(write_records("d.src", records, Compression::kZstd));
  bytes[bytes.size() / 2] ^= 0x01;
  auto p = write("d.zst", bytes);
  for (int64_t buffer : {0, 4096}) {
    auto o = read_until_error(make_records({p}, Compression::kZstd, buffer));
    EXPECT_EQ(o.code, Code::kDataLoss);
    ASSERT_LT(o.records.size(), records.size());
    EXPECT_EQ(o.records,
              std::vector<std::string>(records.begin(), records.begin() + o.records.size()));
    const std::string offset = std::to_string(o.records.size() * (1000 + 16));
    EXPECT_EQ(o.message.substr(0, o.message.find(" (stored")),
              "records: corrupt record at byte offset " + offset +
                  " of the decompressed zstd stream of '" + p +
                  "': the CRC of its 1000 data bytes does not match")
        << o.message;
  }
}

// The files of one iterator hand their zstd decoding context on to the next file (it keeps
// its window buffer), reset to a fresh one's state: a file after one that ended inside a
// frame decodes from its start, its damaged content checksum is still left to the record
// CRCs, and everything reads as each file does alone.
TEST_F(Records, ZstdFilesAfterATruncatedOneReadAsTheyDoAlone) {
  if (!supported(Compression::kZstd)) GTEST_SKIP();
  auto some = [](int n, uint64_t seed) {
    std::vector<std::string> r;
    for (int i = 0; i < n; ++i) r.push_back(random_bytes(700 + 13 * i, seed + i));
    return r;
  };
  const auto a = some(40, 1), b = some(60, 100), c = some(30, 200), d = some(50, 300);
  auto pa = write_records("a.zst", a, Compression::kZstd);
  std::string cut = read_file(write_records("b.src", b, Compression::kZstd));
  auto pb = write("b.zst", cut.substr(0, cut.size() / 2));  // ends inside its frame
  std::string damaged = read_file(write_records("c.src", c, Compression::kZstd));
  if (zstd_can_skip_content_checksum()) damaged[damaged.size() - 1] ^= 0x40;
  auto pc = write("c.zst", damaged);
  auto pd = write_records("d.zst", d, Compression::kZstd);
  for (int64_t buffer : {0, 4096}) {
    std::vector<std::string> expected;
    for (const auto& p : {pa, pb, pc, pd}) {
      auto alone = read_all(make_records({p}, Compression::kZstd, buffer), context(true));
      expected.insert(expected.end(), alone.begin(), alone.end());
    }
    ASSERT_GT(expected.size(), a.size() + c.size() + d.size());
    ASSERT_LT(expected.size(), a.size() + b.size() + c.size() + d.size());
    EXPECT_EQ(read_all(make_records({pa, pb, pc, pd}, Compression::kZstd, buffer), context(true)),
              expected);
  }
}

TEST_F(Records, UnsupportedCompressionIsUnimplemented) {
  for (Compression c : {Compression::kZstd, Compression::kGzip}) {
    if (supported(c)) continue;
    try {
      make_records({}, c, 0);
      FAIL();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::kUnimplemented);
      EXPECT_NE(std::string(e.what()).find("this build of dinput has no"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace dinput
