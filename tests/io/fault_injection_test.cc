// Faults injected through the file layer (src/io/file_ops.h): read errors (EIO), short
// reads, a file that ends early at a chosen offset, and a full disk (ENOSPC) under the
// record writer. Each fault gives its documented status (docs/records.md), and what was
// delivered before it is exactly a prefix of what a clean run delivers.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>

#include "data/nodes.h"
#include "io/file_ops.h"
#include "io/file_sources.h"
#include "io/record_writer.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using namespace iotest;
using Strings = std::vector<std::string>;

enum class Fault { kNone, kEio, kShortReads, kEndsAt, kEnospc };

// The injector: faults apply to file descriptors opened for paths containing `match`.
struct Injector {
  std::mutex mu;
  std::string match;
  std::set<int> fds;
  Fault fault = Fault::kNone;
  uint64_t at = 0;       // offset of the fault (bytes written, for ENOSPC)
  uint64_t written = 0;  // bytes written to matching files so far
  int64_t reads = 0;     // read calls on matching files

  bool target(int fd) {
    std::lock_guard<std::mutex> lock(mu);
    return fds.count(fd) != 0;
  }
};

Injector* g_inject = nullptr;

int hook_open(const char* path, int flags, mode_t mode) {
  int fd = fileops::system_ops().open(path, flags, mode);
  if (fd >= 0) {
    std::lock_guard<std::mutex> lock(g_inject->mu);
    if (std::strstr(path, g_inject->match.c_str()))
      g_inject->fds.insert(fd);
    else
      g_inject->fds.erase(fd);  // a number reused after a close
  }
  return fd;
}

// Applies the read faults to a read of n bytes at `offset`: the bytes to ask the system for,
// or -1 with errno set, or 0 (the end of the file).
ssize_t limit_read(uint64_t offset, size_t* n) {
  switch (g_inject->fault) {
    case Fault::kEio:
      if (offset >= g_inject->at) {
        errno = EIO;
        return -1;
      }
      *n = static_cast<size_t>(std::min<uint64_t>(*n, g_inject->at - offset));
      return 1;
    case Fault::kShortReads:
      *n = std::min<size_t>(*n, 1 + static_cast<size_t>(g_inject->reads % 7));
      return 1;
    case Fault::kEndsAt:
      if (offset >= g_inject->at) return 0;
      *n = static_cast<size_t>(std::min<uint64_t>(*n, g_inject->at - offset));
      return 1;
    default:
      return 1;
  }
}

ssize_t hook_pread(int fd, void* buf, size_t n, off_t offset) {
  if (g_inject->target(fd)) {
    ++g_inject->reads;
    ssize_t r = limit_read(static_cast<uint64_t>(offset), &n);
    if (r <= 0) return r;
  }
  return fileops::system_ops().pread(fd, buf, n, offset);
}

ssize_t hook_read(int fd, void* buf, size_t n) {
  if (g_inject->target(fd)) {
    ++g_inject->reads;
    off_t pos = ::lseek(fd, 0, SEEK_CUR);
    ssize_t r = limit_read(pos < 0 ? 0 : static_cast<uint64_t>(pos), &n);
    if (r <= 0) return r;
  }
  return fileops::system_ops().read(fd, buf, n);
}

ssize_t hook_write(int fd, const void* buf, size_t n) {
  if (g_inject->fault == Fault::kEnospc && g_inject->target(fd)) {
    if (g_inject->written >= g_inject->at) {
      errno = ENOSPC;
      return -1;
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, g_inject->at - g_inject->written));
  }
  ssize_t r = fileops::system_ops().write(fd, buf, n);
  if (r > 0 && g_inject->target(fd)) g_inject->written += static_cast<uint64_t>(r);
  return r;
}

const fileops::Ops kHooks{hook_open,
                          hook_read,
                          hook_pread,
                          hook_write,
                          fileops::system_ops().fstat,
                          fileops::system_ops().stat};

// The readers under test, each over a file of about 200 KB.
enum class Reader { kRecords, kZstd, kGzip, kTextLines, kFixedLength };

const char* reader_name(Reader r) {
  switch (r) {
    case Reader::kRecords:
      return "Records";
    case Reader::kZstd:
      return "RecordsZstd";
    case Reader::kGzip:
      return "RecordsGzip";
    case Reader::kTextLines:
      return "TextLines";
    case Reader::kFixedLength:
      return "FixedLength";
  }
  return "?";
}

class FaultInjection : public IoTest, public ::testing::WithParamInterface<Reader> {
 protected:
  void SetUp() override {
    IoTest::SetUp();
    g_inject = &inject_;
    inject_.match = "/data";
    fileops::install(&kHooks);
  }
  void TearDown() override {
    fileops::install(nullptr);
    g_inject = nullptr;
    IoTest::TearDown();
  }

  // Writes the reader's file (without faults); false when the build lacks its compression.
  bool make_file() {
    const Fault saved = inject_.fault;
    inject_.fault = Fault::kNone;
    Strings records;
    for (int i = 0; i < 200; ++i)
      records.push_back(random_bytes(1000, static_cast<uint64_t>(i) + 11));
    Compression c = Compression::kNone;
    switch (GetParam()) {
      case Reader::kZstd:
        c = Compression::kZstd;
        break;
      case Reader::kGzip:
        c = Compression::kGzip;
        break;
      default:
        break;
    }
    if (!compression_supported(c)) return false;
    file_ = path("data");
    if (GetParam() == Reader::kTextLines) {
      std::string text;
      for (int i = 0; i < 2000; ++i)
        text += std::string(100, static_cast<char>('a' + i % 26)) + "\n";
      write("data", text);
    } else if (GetParam() == Reader::kFixedLength) {
      write("data", random_bytes(200 * 1000, 5));
    } else {
      RecordWriter w(file_, c, 0);
      for (const auto& r : records) w.write(r.data(), r.size());
      w.close();
    }
    compression_ = c;
    inject_.fault = saved;
    return true;
  }

  DatasetPtr dataset() const {
    switch (GetParam()) {
      case Reader::kTextLines:
        return make_text_lines({file_});
      case Reader::kFixedLength:
        return make_fixed_length_records({file_}, 1000, 0, 0);
      default:
        return make_records({file_}, compression_, 4096);
    }
  }
  IteratorContext ctx() const { return IteratorContext{}; }
  // How many elements of an uncompressed file lie wholly before byte `at` (all of them
  // must be delivered before the error); -1 for compressed files, whose elements are not
  // at fixed places.
  int64_t whole_before(uint64_t at) const {
    switch (GetParam()) {
      case Reader::kRecords:
        return static_cast<int64_t>(at / (1000 + 16));  // framing: 12 + 4 bytes
      case Reader::kTextLines:
        return static_cast<int64_t>(at / 101);
      case Reader::kFixedLength:
        return static_cast<int64_t>(at / 1000);
      default:
        return -1;
    }
  }
  Outcome run_with(Fault fault, uint64_t at) {
    inject_.fault = fault;
    inject_.at = at;
    inject_.reads = 0;
    Outcome o = read_until_error(dataset(), ctx());
    inject_.fault = Fault::kNone;
    return o;
  }
  uint64_t file_size() const {
    struct stat st;
    EXPECT_EQ(::stat(file_.c_str(), &st), 0);
    return static_cast<uint64_t>(st.st_size);
  }

  Injector inject_;
  std::string file_;
  Compression compression_ = Compression::kNone;
};

void expect_prefix(const Strings& got, const Strings& all) {
  ASSERT_LE(got.size(), all.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], all[i]) << "element " << i;
}

// Short reads (1 to 7 bytes per call) are retried: the same elements, no error.
TEST_P(FaultInjection, ShortReadsGiveIdenticalOutput) {
  if (!make_file()) GTEST_SKIP() << "compression not compiled in";
  Outcome clean = run_with(Fault::kNone, 0);
  ASSERT_EQ(clean.code, Code::kOk) << clean.message;
  ASSERT_GT(clean.records.size(), 100u);
  Outcome shorted = run_with(Fault::kShortReads, 0);
  EXPECT_EQ(shorted.code, Code::kOk) << shorted.message;
  EXPECT_EQ(shorted.records, clean.records);
  EXPECT_GT(inject_.reads, 1000);  // the fault was in effect
}

// EIO at an offset: DATA_LOSS naming the file and the offset; the elements before it are a
// prefix of the clean run's, unchanged, and every element wholly before the offset is
// delivered first (also when it shares a read chunk with the failing bytes).
TEST_P(FaultInjection, EioIsDataLossNamingFileAndOffset) {
  if (!make_file()) GTEST_SKIP() << "compression not compiled in";
  Outcome clean = run_with(Fault::kNone, 0);
  ASSERT_EQ(clean.code, Code::kOk) << clean.message;
  const uint64_t at = file_size() / 2;
  Outcome o = run_with(Fault::kEio, at);
  EXPECT_EQ(o.code, Code::kDataLoss) << o.message;
  EXPECT_NE(o.message.find("cannot read '" + file_ + "' at byte offset " + std::to_string(at) +
                           ": " + std::strerror(EIO)),
            std::string::npos)
      << o.message;
  expect_prefix(o.records, clean.records);
  EXPECT_LT(o.records.size(), clean.records.size());
  if (whole_before(at) >= 0) {
    EXPECT_EQ(static_cast<int64_t>(o.records.size()), whole_before(at));
  } else {
    EXPECT_GT(o.records.size(), 0u);  // the first half is delivered
  }
}

// A file that ends at offset N although it was longer when opened: DATA_LOSS naming the
// file and N; the elements before are a prefix of the clean run's, all of those wholly
// before N.
TEST_P(FaultInjection, EndingEarlyIsDataLossNamingFileAndOffset) {
  if (!make_file()) GTEST_SKIP() << "compression not compiled in";
  Outcome clean = run_with(Fault::kNone, 0);
  ASSERT_EQ(clean.code, Code::kOk) << clean.message;
  for (uint64_t at : {uint64_t{0}, uint64_t{4095}, file_size() / 3, file_size() - 1}) {
    Outcome o = run_with(Fault::kEndsAt, at);
    EXPECT_EQ(o.code, Code::kDataLoss) << o.message;
    EXPECT_NE(o.message.find("'" + file_ + "' ends at byte offset " + std::to_string(at) +
                             ", before the " + std::to_string(file_size()) +
                             " bytes it had when it was opened"),
              std::string::npos)
        << o.message;
    expect_prefix(o.records,
                  clean.records);  // a compressed file cut in its last frame may give all
    if (whole_before(at) >= 0) {
      EXPECT_EQ(static_cast<int64_t>(o.records.size()), whole_before(at)) << "at " << at;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Readers, FaultInjection,
                         ::testing::Values(Reader::kRecords, Reader::kZstd, Reader::kGzip,
                                           Reader::kTextLines, Reader::kFixedLength),
                         [](const auto& info) { return std::string(reader_name(info.param)); });

// ---- the writer ----

class WriterFaults : public IoTest, public ::testing::WithParamInterface<Compression> {
 protected:
  void SetUp() override {
    IoTest::SetUp();
    g_inject = &inject_;
    inject_.match = "/.out.rec.tmp";  // the writer's temporary file beside out.rec
    fileops::install(&kHooks);
  }
  void TearDown() override {
    fileops::install(nullptr);
    g_inject = nullptr;
    IoTest::TearDown();
  }
  Strings entries() const {
    Strings out;
    if (DIR* d = opendir(dir_.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.' || (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")))
          out.push_back(e->d_name);
      closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  Injector inject_;
};

// ENOSPC while writing: RESOURCE_EXHAUSTED naming the output, reported by write() or at the
// latest by close(); the file that was at the path keeps its contents and no temporary file
// is left behind.
TEST_P(WriterFaults, EnospcIsResourceExhaustedAndKeepsThePreviousFile) {
  Compression c = GetParam();
  if (!compression_supported(c)) GTEST_SKIP();
  const std::string out = write("out.rec", frame_all({"the previous", "contents"}));
  const std::string before = read_file(out);
  for (uint64_t at : {uint64_t{0}, uint64_t{1000}, uint64_t{300000}}) {
    inject_.fault = Fault::kEnospc;
    inject_.at = at;
    inject_.written = 0;
    Code code = Code::kOk;
    std::string message;
    try {
      RecordWriter w(out, c, 0);
      for (int i = 0; i < 1000; ++i) {
        std::string r = random_bytes(1000, static_cast<uint64_t>(i));
        w.write(r.data(), r.size());
      }
      w.close();
    } catch (const Error& e) {
      code = e.code();
      message = e.what();
    }
    EXPECT_EQ(code, Code::kResourceExhausted) << at << ": " << message;
    EXPECT_NE(message.find("cannot write '" + out + "': " + std::strerror(ENOSPC)),
              std::string::npos)
        << message;
    EXPECT_EQ(read_file(out), before) << at;
    EXPECT_EQ(entries(), Strings{"out.rec"}) << at;
  }
  // Without the fault the same writer replaces the file.
  inject_.fault = Fault::kNone;
  {
    RecordWriter w(out, c, 0);
    w.write("new", 3);
    w.close();
  }
  EXPECT_GT(inject_.written, 0u);  // the hook saw the temporary file
  EXPECT_EQ(read_all(make_records({out}, c, 0)), Strings{"new"});
}

INSTANTIATE_TEST_SUITE_P(Compressions, WriterFaults,
                         ::testing::Values(Compression::kNone, Compression::kZstd,
                                           Compression::kGzip),
                         [](const auto& info) {
                           return std::string(compression_name(info.param));
                         });

}  // namespace
}  // namespace dinput
