// White-box tests of reading record files ahead on background threads (io/record_read_ahead.h):
// the same records, offsets and skipped counts as reading directly, errors raised at the
// record where they occur (not earlier), skip() over a record that failed ahead, and freeing
// an iterator whose files are being decoded ahead.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/iterator.h"
#include "data/nodes.h"
#include "io/file_sources.h"
#include "io/record_read_ahead.h"
#include "io/record_reader.h"
#include "io/record_writer.h"
#include "temp_dir_test.h"

namespace dinput {
namespace {

// Random payloads do not compress, so zstd stores them as raw blocks and a payload byte can
// be found (and damaged) in the compressed file.
std::string payload(int file, int record, size_t size) {
  std::mt19937 gen(static_cast<unsigned>(file * 100003 + record));
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(gen());
  return out;
}

class ReadAhead : public test::TempDirTest {
 protected:
  // Records of 700..1300 bytes (some span the 4 KiB chunks of the small-buffer cases).
  std::string write(const std::string& name, int file, int count,
                    Compression compression = Compression::kZstd) {
    const std::string path = dir_ + "/" + name;
    RecordWriter w(path, compression, 1);
    for (int i = 0; i < count; ++i) {
      std::string p = payload(file, i, 700 + static_cast<size_t>(i * 37 % 600));
      w.write(p.data(), p.size());
    }
    w.close();
    return path;
  }

  // Flips a byte in the middle of record `record`'s data, in the compressed file: its data
  // CRC no longer matches.
  void damage(const std::string& path, int file, int record) {
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::vector<char> bytes(1 << 22);
    bytes.resize(std::fread(bytes.data(), 1, bytes.size(), f));
    const std::string p = payload(file, record, 64);
    auto at = std::search(bytes.begin(), bytes.end(), p.begin(), p.end());
    ASSERT_NE(at, bytes.end()) << "record " << record << " not found in " << path;
    const long offset = static_cast<long>(at - bytes.begin()) + 40;
    std::fseek(f, offset, SEEK_SET);
    std::fputc(bytes[static_cast<size_t>(offset)] ^ 0x5a, f);
    std::fclose(f);
  }

  static OpenRecordFileAt opener(const std::string& path, size_t buffer_size, bool skip_corrupt) {
    return [=](uint64_t start) {
      return open_record_file(path, Compression::kZstd, buffer_size, skip_corrupt, nullptr,
                              kDefaultMaxRecordBytes, FileReadOptions{}, start);
    };
  }

  // What a source delivers: each record's bytes, the offset after it, and the skipped
  // records and bytes counted by then; at the end, the counts after the last record.
  static std::vector<std::string> trace(RecordSource& s) {
    std::vector<std::string> out;
    RecordView v;
    for (;;) {
      const bool got = s.next(v);
      const int64_t skipped = s.take_skipped(), skipped_bytes = s.take_skipped_bytes();
      std::string line = std::to_string(skipped) + "/" + std::to_string(skipped_bytes);
      if (!got) {
        out.push_back("end " + line);
        return out;
      }
      out.push_back(std::string(v.data, v.size) + " @" + std::to_string(s.offset()) + " " + line +
                    (v.copied ? " copied" : ""));
    }
  }
};

TEST_F(ReadAhead, SameRecordsOffsetsAndCountsAsReadingDirectly) {
  const std::string path = write("a.tfrecord.zst", 1, 300);
  for (size_t buffer : {size_t{0}, size_t{4096}}) {
    for (size_t block : {size_t{1}, size_t{5000}, FileListReadAhead::kBlockBytes}) {
      SCOPED_TRACE("buffer " + std::to_string(buffer) + " block " + std::to_string(block));
      auto direct = opener(path, buffer, false)(0);
      auto ahead = read_ahead(opener(path, buffer, false), nullptr, block, 2);
      auto expected = trace(*direct);
      ASSERT_EQ(expected.size(), 301u);
      EXPECT_EQ(trace(*ahead), expected);
      RecordView v;
      EXPECT_FALSE(ahead->next(v));  // stays at the end
    }
  }
}

TEST_F(ReadAhead, SkippedCorruptRecordsAreCountedWhereTheyWere) {
  const std::string path = write("a.tfrecord.zst", 1, 120);
  damage(path, 1, 7);
  damage(path, 1, 119);  // the last record: counted at the end
  auto direct = opener(path, 4096, true)(0);
  auto ahead = read_ahead(opener(path, 4096, true), nullptr, 3000, 2);
  auto expected = trace(*direct);
  ASSERT_EQ(expected.size(), 119u);
  EXPECT_NE(expected.back().find("end 1/"), std::string::npos) << expected.back();
  EXPECT_EQ(trace(*ahead), expected);
}

TEST_F(ReadAhead, AnErrorIsRaisedAtItsRecordAfterTheRecordsBefore) {
  const std::string path = write("a.tfrecord.zst", 1, 60);
  damage(path, 1, 41);
  auto ahead = read_ahead(opener(path, 0, false), nullptr, 1 << 20, 4);
  RecordView v;
  for (int i = 0; i < 41; ++i) {
    ASSERT_TRUE(ahead->next(v)) << i;
    EXPECT_EQ(std::string(v.data, v.size), payload(1, i, v.size));
  }
  const uint64_t at = ahead->offset();
  try {
    ahead->next(v);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kDataLoss);
    EXPECT_NE(std::string(e.what()).find("at byte offset " + std::to_string(at) +
                                         " of the decompressed zstd stream of '" + path + "'"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(ahead->next(v));
}

TEST_F(ReadAhead, SkipPassesOverARecordThatFailedAheadAsReadingDirectlyDoes) {
  const std::string path = write("a.tfrecord.zst", 1, 30);
  damage(path, 1, 3);
  auto run = [&](RecordSource& s) {
    std::vector<std::string> out;
    RecordView v;
    for (int i = 0; i < 3; ++i) {
      EXPECT_TRUE(s.next(v));
      out.push_back(std::string(v.data, v.size));
    }
    EXPECT_TRUE(s.skip());  // the damaged record: only its framing is checked
    out.push_back("skipped @" + std::to_string(s.offset()));
    EXPECT_TRUE(s.next(v));
    out.push_back(std::string(v.data, v.size) + " @" + std::to_string(s.offset()));
    EXPECT_TRUE(s.skip());
    out.push_back("skipped @" + std::to_string(s.offset()));
    return out;
  };
  auto direct = opener(path, 0, false)(0);
  auto ahead = read_ahead(opener(path, 0, false), opener(path, 0, false), 2000, 2);
  auto expected = run(*direct);
  EXPECT_EQ(expected[4].substr(0, 700), payload(1, 4, 700));
  EXPECT_EQ(run(*ahead), expected);
  // Without a way to reopen, the error stands.
  auto strict = read_ahead(opener(path, 0, false), nullptr, 2000, 2);
  RecordView v;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(strict->next(v));
  EXPECT_THROW(strict->skip(), Error);
}

std::vector<std::string> records_of(const DatasetPtr& ds, std::string* error) {
  auto it = ds->make_iterator(IteratorContext{});
  std::vector<std::string> out;
  Element e;
  try {
    while (it->next(e)) out.emplace_back(e[0].string(0));
  } catch (const Error& err) {
    *error = std::string(code_name(err.code())) + ": " + err.what();
  }
  return out;
}

TEST_F(ReadAhead, ErrorsInALaterFileSurfaceAtTheirRecordNotEarlier) {
  const std::string a = write("a.tfrecord.zst", 1, 50);
  const std::string b = write("b.tfrecord.zst", 2, 50);
  const std::string c = write("c.tfrecord.zst", 3, 50);
  damage(b, 2, 5);
  std::string error;
  auto got = records_of(make_records({a, b, c}, Compression::kZstd, 0), &error);
  ASSERT_EQ(got.size(), 55u);  // all of a, then b's records before the damaged one
  for (int i = 0; i < 50; ++i) EXPECT_EQ(got[i], payload(1, i, got[i].size()));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got[50 + i], payload(2, i, got[50 + i].size()));
  EXPECT_NE(error.find("DATA_LOSS"), std::string::npos) << error;
  EXPECT_NE(error.find("zstd stream of '" + b + "'"), std::string::npos) << error;

  // A file that cannot be opened: its error comes after the records of the files before it,
  // although it was opened ahead.
  error.clear();
  got = records_of(make_records({a, dir_ + "/missing.zst", c}, Compression::kZstd, 0), &error);
  EXPECT_EQ(got.size(), 50u);
  EXPECT_NE(error.find("NOT_FOUND"), std::string::npos) << error;
  EXPECT_NE(error.find(dir_ + "/missing.zst"), std::string::npos) << error;
}

TEST_F(ReadAhead, AFileThatFailsToOpenOnTheThreadRaisesAtItsFirstRecord) {
  auto ahead = read_ahead(
      [](uint64_t) -> std::unique_ptr<RecordSource> {
        throw Error(Code::kNotFound, "records: cannot open 'x'");
      },
      nullptr, 1000, 2);
  RecordView v;
  try {
    ahead->next(v);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::kNotFound);
    EXPECT_STREQ(e.what(), "records: cannot open 'x'");
  }
  EXPECT_FALSE(ahead->next(v));
}

// A FIFO in the list (allowed) is not opened ahead: opening it waits for a writer, and
// freeing the iterator would then wait for the thread.
TEST_F(ReadAhead, APipeIsNotOpenedAhead) {
  const std::string a = write("a.zst", 1, 200);
  const std::string fifo = dir_ + "/pipe";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  IteratorContext ctx;
  ctx.options.allow_nonregular_files = true;
  auto it = make_records({a, fifo}, Compression::kZstd, 0)->make_iterator(ctx);
  Element e;
  // The first records only: the reader itself opens the FIFO (and waits) at a's end.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(it->next(e));
    EXPECT_EQ(e[0].string(0), payload(1, i, e[0].string(0).size()));
  }
  it.reset();  // returns at once: nothing waits on the FIFO
}

TEST_F(ReadAhead, AListReadAheadDeliversTheRecordsOfEveryFileInOrder) {
  std::vector<std::string> files;
  std::vector<std::string> expected;
  for (int f = 0; f < 6; ++f) {
    files.push_back(write("f" + std::to_string(f) + ".zst", f, 40 + f));
    for (int i = 0; i < 40 + f; ++i)
      expected.push_back(payload(f, i, 700 + static_cast<size_t>(i * 37 % 600)));
  }
  files.push_back(files[2]);  // a file twice
  for (int i = 0; i < 42; ++i)
    expected.push_back(payload(2, i, 700 + static_cast<size_t>(i * 37 % 600)));
  std::string error;
  EXPECT_EQ(records_of(make_records(files, Compression::kZstd, 4096), &error), expected);
  EXPECT_EQ(error, "");
}

TEST_F(ReadAhead, FreeingAnIteratorWhileFilesAreDecodedAheadDoesNotWait) {
  std::vector<std::string> files;
  for (int f = 0; f < 4; ++f) files.push_back(write("f" + std::to_string(f) + ".zst", f, 2000));
  DatasetPtr ds = make_records(files, Compression::kZstd, 0);
  for (int taken : {0, 1, 1000, 2500}) {
    const auto t0 = std::chrono::steady_clock::now();
    {
      auto it = ds->make_iterator(IteratorContext{});
      Element e;
      for (int i = 0; i < taken; ++i) ASSERT_TRUE(it->next(e));
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << taken;
  }
}

}  // namespace
}  // namespace dinput
