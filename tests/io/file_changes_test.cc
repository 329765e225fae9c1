// Files that change or are not what a reader expects: a file truncated or rewritten while
// it is read (no SIGBUS, no change to records already returned), FIFOs that would block,
// symbolic link loops, zstd streams with long windows, and garbage after a compressed
// stream reported at its compressed offset.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "data/nodes.h"
#include "io/file_sources.h"
#include "io/record_writer.h"
#include "io_test_util.h"

#if __has_include(<zstd.h>)
#include <zstd.h>
#define DINPUT_TEST_HAVE_ZSTD_API 1
#endif

namespace dinput {
namespace {

using namespace iotest;
using Strings = std::vector<std::string>;

class FileChanges : public IoTest {
 protected:
  std::string write_records(const std::string& name, const Strings& records,
                            Compression c = Compression::kNone) {
    std::string p = path(name);
    RecordWriter w(p, c, 0);
    for (const auto& r : records) w.write(r.data(), r.size());
    w.close();
    return p;
  }
  static Strings numbered(int n, size_t size) {
    Strings out;
    for (int i = 0; i < n; ++i) out.push_back(random_bytes(size, static_cast<uint64_t>(i) + 1));
    return out;
  }
};

// Reads the first element, calls `change`, then reads on to the end or the first error.
Outcome read_changing(const DatasetPtr& ds, const std::function<void()>& change,
                      const IteratorContext& ctx = IteratorContext{}) {
  Outcome o;
  try {
    auto it = ds->make_iterator(ctx);
    Element e;
    bool changed = false;
    while (o.records.size() < 1000000 && it->next(e)) {
      o.records.emplace_back(e[0].string(0));
      if (!changed) {
        change();
        changed = true;
      }
    }
  } catch (const Error& err) {
    o.code = err.code();
    o.message = err.what();
  }
  return o;
}

void expect_prefix(const Strings& got, const Strings& all) {
  ASSERT_LE(got.size(), all.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], all[i]) << "element " << i;
}

void truncate_to(const std::string& p, off_t size) {
  ASSERT_EQ(::truncate(p.c_str(), size), 0) << p;
}

// A record file cut short between two get_next calls: the records read before the cut are
// delivered unchanged, then DATA_LOSS names the file and the offset where it now ends
// (a memory-mapped reader dies of SIGBUS here).
TEST_F(FileChanges, RecordsFileTruncatedWhileReadIsDataLossNotSigbus) {
  auto records = numbered(200, 1000);
  auto p = write_records("t.rec", records);
  auto o =
      read_changing(make_records({p}, Compression::kNone, 4096), [&] { truncate_to(p, 50000); });
  EXPECT_EQ(o.code, Code::kDataLoss) << o.message;
  EXPECT_NE(o.message.find("'" + p + "' ends at byte offset 50000"), std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("truncated while it was being read"), std::string::npos) << o.message;
  EXPECT_GE(o.records.size(), 1u);
  expect_prefix(o.records, records);
}

TEST_F(FileChanges, TextFileTruncatedWhileReadIsDataLossNotSigbus) {
  Strings lines;
  std::string content;
  for (int i = 0; i < 80000; ++i) {
    lines.push_back(std::string(90, static_cast<char>('a' + i % 26)) + std::to_string(i));
    content += lines.back() + "\n";
  }
  // Past the first 2 MiB chunk, which is read before the cut.
  ASSERT_GT(content.size(), size_t{6} << 20);
  auto p = write("t.txt", content);
  auto o = read_changing(make_text_lines({p}), [&] { truncate_to(p, 3000000); });
  EXPECT_EQ(o.code, Code::kDataLoss) << o.message;
  EXPECT_NE(o.message.find("'" + p + "' ends at byte offset 3000000"), std::string::npos)
      << o.message;
  expect_prefix(o.records, lines);
}

TEST_F(FileChanges, GzipFileTruncatedWhileReadIsDataLossNotSigbus) {
  if (!compression_supported(Compression::kGzip)) GTEST_SKIP() << "zlib is not compiled in";
  // Random bytes: the stream is about as large (8 MB). Compressed files are decoded a few
  // MiB ahead of the reader (io/record_read_ahead.h), so the cut lies well beyond that.
  auto records = numbered(8000, 1000);
  auto p = write_records("t.rec.gz", records, Compression::kGzip);
  auto o =
      read_changing(make_records({p}, Compression::kGzip, 4096), [&] { truncate_to(p, 6000000); });
  EXPECT_EQ(o.code, Code::kDataLoss) << o.message;
  EXPECT_NE(o.message.find("'" + p + "' ends at byte offset 6000000"), std::string::npos)
      << o.message;
  expect_prefix(o.records, records);
}

// fixed_length_records reads its file in 2 MiB chunks too: a cut beyond the first chunk
// is DATA_LOSS naming the file and the offset, after all the records before it.
TEST_F(FileChanges, FixedLengthFileTruncatedWhileReadIsDataLossNotSigbus) {
  std::string content = random_bytes(16 + 6000 * 1000, 3);  // a 16-byte header, 6000 records
  auto p = write("f.bin", content);
  auto o =
      read_changing(make_fixed_length_records({p}, 1000, 16, 0), [&] { truncate_to(p, 3000016); });
  EXPECT_EQ(o.code, Code::kDataLoss) << o.message;
  EXPECT_NE(o.message.find("'" + p + "' ends at byte offset 3000016, before the " +
                           std::to_string(content.size()) + " bytes it had when it was opened"),
            std::string::npos)
      << o.message;
  ASSERT_EQ(o.records.size(), 3000u);  // every record before the cut
  for (size_t i = 0; i < o.records.size(); ++i)
    ASSERT_EQ(o.records[i], content.substr(16 + i * 1000, 1000)) << i;
}

// A record returned (and CRC-checked) keeps its bytes when the file is rewritten in place
// afterwards: records are copies in the library's buffers, not views of the page cache.
TEST_F(FileChanges, RewritingTheFileDoesNotChangeReturnedRecords) {
  auto records = numbered(10, 1000);
  auto p = write_records("m.rec", records);
  auto it = make_records({p}, Compression::kNone, 0)->make_iterator(IteratorContext{});
  Element first;
  ASSERT_TRUE(it->next(first));
  ASSERT_EQ(first[0].string(0), records[0]);
  int fd = ::open(p.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  std::string junk(1000, 'X');
  ASSERT_EQ(::pwrite(fd, junk.data(), junk.size(), 12), static_cast<ssize_t>(junk.size()));
  ::close(fd);
  EXPECT_EQ(first[0].string(0), records[0]);
  Element second;
  ASSERT_TRUE(it->next(second));
  EXPECT_EQ(first[0].string(0), records[0]);
}

TEST_F(FileChanges, RewritingATextFileDoesNotChangeReturnedLines) {
  auto p = write("m.txt", "first line\nsecond line\n");
  auto it = make_text_lines({p})->make_iterator(IteratorContext{});
  Element first;
  ASSERT_TRUE(it->next(first));
  int fd = ::open(p.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "FIRST", 5, 0), 5);
  ::close(fd);
  EXPECT_EQ(first[0].string(0), "first line");
}

// map_files opts back into memory mapping: the same records, and (the documented hazard
// that shows the file really is mapped) a rewrite in place shows through a record already
// returned.
TEST_F(FileChanges, MapFilesMapsTheFile) {
  auto records = numbered(10, 1000);
  auto p = write_records("mm.rec", records);
  IteratorContext mapped;
  mapped.options.map_files = true;
  EXPECT_EQ(read_all(make_records({p}, Compression::kNone, 0), mapped), records);
  auto lines = write("mm.txt", "one\ntwo\n");
  EXPECT_EQ(read_all(make_text_lines({lines}), mapped), (Strings{"one", "two"}));
  EXPECT_EQ(read_all(make_fixed_length_records({lines}, 4, 0, 0), mapped),
            (Strings{"one\n", "two\n"}));

  auto it = make_records({p}, Compression::kNone, 0)->make_iterator(mapped);
  Element first;
  ASSERT_TRUE(it->next(first));
  ASSERT_EQ(first[0].string(0), records[0]);
  int fd = ::open(p.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "XYZ", 3, 12), 3);
  ::close(fd);
  EXPECT_EQ(first[0].string(0).substr(0, 3), "XYZ");
}

// ---- files that are not regular ----

// Runs `read` with a deadline; a reader stuck opening the FIFO is released by opening the
// FIFO for writing (then closing it), and the test fails.
Outcome read_fifo_with_deadline(const std::string& fifo, const std::function<Outcome()>& read) {
  auto f = std::async(std::launch::async, read);
  if (f.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    Outcome o = f.get();
    ADD_FAILURE() << "reading the FIFO blocked";
    return o;
  }
  return f.get();
}

void expect_not_regular(const Outcome& o, const std::string& p, const std::string& kind) {
  EXPECT_EQ(o.code, Code::kFailedPrecondition) << o.message;
  EXPECT_NE(o.message.find("'" + p + "' is not a regular file (it is " + kind + ")"),
            std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("allow_nonregular_files"), std::string::npos) << o.message;
}

TEST_F(FileChanges, AFifoIsRefusedWithoutBlocking) {
  std::string fifo = path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string kind = "a FIFO (named pipe)";
  expect_not_regular(
      read_fifo_with_deadline(
          fifo, [&] { return read_until_error(make_records({fifo}, Compression::kNone, 0)); }),
      fifo, kind);
  expect_not_regular(
      read_fifo_with_deadline(fifo, [&] { return read_until_error(make_text_lines({fifo})); }),
      fifo, kind);
  expect_not_regular(
      read_fifo_with_deadline(
          fifo, [&] { return read_until_error(make_fixed_length_records({fifo}, 4, 0, 0)); }),
      fifo, kind);
  // list_files matches it like any name; the reader behind it refuses it.
  auto names = read_all(make_list_files({dir_ + "/*"}, false, 0));
  ASSERT_EQ(names, Strings{fifo});
  expect_not_regular(
      read_fifo_with_deadline(
          fifo, [&] { return read_until_error(make_records(names, Compression::kNone, 0)); }),
      fifo, kind);
}

TEST_F(FileChanges, DevZeroIsRefusedByDefault) {
  const std::string kind = "a character device";
  expect_not_regular(read_until_error(make_text_lines({"/dev/zero"})), "/dev/zero", kind);
  expect_not_regular(read_until_error(make_fixed_length_records({"/dev/zero"}, 4, 0, 0)),
                     "/dev/zero", kind);
  expect_not_regular(read_until_error(make_records({"/dev/zero"}, Compression::kNone, 0)),
                     "/dev/zero", kind);
}

// ---- error messages ----

// Running out of memory is RESOURCE_EXHAUSTED naming the reader, the file and the stage. A
// child process with its address space capped reads /dev/zero (allowed, with a limit far
// above the cap) with fixed_length_records, which reads a device whole before cutting it.
TEST_F(FileChanges, OutOfMemoryNamesTheFileAndTheStage) {
  if (kUnderSanitizer) GTEST_SKIP() << "sanitizers reserve address space of their own";
  const std::string p = "/dev/zero";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int rc = 10;
    long pages = 0, page = sysconf(_SC_PAGESIZE);
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
      if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
      std::fclose(f);
    }
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max =
        static_cast<rlim_t>(pages) * static_cast<rlim_t>(page) + (rlim_t{256} << 20);
    if (pages == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(13);
    try {
      IteratorContext ctx;
      ctx.options.allow_nonregular_files = true;
      ctx.options.max_record_bytes = int64_t{8} << 30;
      auto o = read_until_error(make_fixed_length_records({p}, 4, 0, 0), ctx);
      const std::string want = "fixed_length_records: out of memory opening '" + p + "'";
      rc = o.code == Code::kResourceExhausted && o.message == want ? 0 : 12;
      if (rc) std::fprintf(stderr, "got %d: %s\n", static_cast<int>(o.code), o.message.c_str());
    } catch (...) {
      rc = 11;
    }
    _exit(rc);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST_F(FileChanges, ASymlinkLoopIsFailedPreconditionNamingThePath) {
  std::string a = path("a"), b = path("b");
  ASSERT_EQ(::symlink(b.c_str(), a.c_str()), 0);
  ASSERT_EQ(::symlink(a.c_str(), b.c_str()), 0);
  const std::vector<Outcome> outcomes = {read_until_error(make_records({a}, Compression::kNone, 0)),
                                         read_until_error(make_text_lines({a})),
                                         read_until_error(make_fixed_length_records({a}, 4, 0, 0))};
  for (const Outcome& o : outcomes) {
    EXPECT_EQ(o.code, Code::kFailedPrecondition) << o.message;
    EXPECT_NE(o.message.find("'" + a + "'"), std::string::npos) << o.message;
    EXPECT_NE(o.message.find("symbolic links"), std::string::npos) << o.message;
  }
}

// Garbage after the last complete frame or member: the message gives the compressed offset
// where it starts (the size of the valid stream), besides the decompressed offset.
TEST_F(FileChanges, GarbageAfterACompressedStreamNamesItsCompressedOffset) {
  for (Compression c : {Compression::kZstd, Compression::kGzip}) {
    if (!compression_supported(c)) continue;
    std::string valid = read_file(write_records("v", {"one", random_bytes(3000, 7)}, c));
    auto p = write("g", valid + "garbage after the stream");
    auto o = read_until_error(make_records({p}, c, 0));
    EXPECT_EQ(o.code, Code::kDataLoss) << o.message;
    EXPECT_EQ(o.records.size(), 2u);
    EXPECT_NE(
        o.message.find("compressed byte offset " + std::to_string(valid.size()) + " of the file"),
        std::string::npos)
        << compression_name(c) << ": " << o.message;
  }
}

#ifdef DINPUT_TEST_HAVE_ZSTD_API

// A zstd stream whose frame declares 2^log bytes of window, written without a known size
// (as `zstd --long=N` writes from a pipe).
std::string zstd_long_window(const std::string& plain, int log) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  EXPECT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, log)));
  EXPECT_FALSE(ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1)));
  std::string out(ZSTD_compressBound(plain.size()) + 1024, '\0');
  ZSTD_inBuffer in{plain.data(), plain.size(), 0};
  ZSTD_outBuffer ob{out.data(), out.size(), 0};
  // The input first without ending the frame, so that its size is not known when the
  // frame header is written and the window is not shrunk to fit it.
  while (in.pos < in.size) {
    size_t r = ZSTD_compressStream2(cctx, &ob, &in, ZSTD_e_continue);
    EXPECT_FALSE(ZSTD_isError(r));
    if (ZSTD_isError(r)) break;
  }
  ZSTD_inBuffer none{nullptr, 0, 0};
  size_t r;
  do {
    r = ZSTD_compressStream2(cctx, &ob, &none, ZSTD_e_end);
    EXPECT_FALSE(ZSTD_isError(r));
  } while (r != 0 && !ZSTD_isError(r));
  ZSTD_freeCCtx(cctx);
  out.resize(ob.pos);
  return out;
}

TEST_F(FileChanges, ZstdStreamsWithALongWindowAreRead) {
  if (!compression_supported(Compression::kZstd)) GTEST_SKIP();
  Strings records = {"a", random_bytes(20000, 5), "c"};
  std::string packed = zstd_long_window(frame_all(records), 30);
  // The frame header: no single-segment flag, then a window descriptor of 2^(10 + 20)
  // bytes, beyond libzstd's default decoding limit of 2^27.
  ASSERT_GT(packed.size(), 6u);
  ASSERT_EQ(static_cast<unsigned char>(packed[4]) & 0x20, 0);
  ASSERT_EQ(static_cast<unsigned char>(packed[5]), 20 << 3);
  auto p = write("long.zst", packed);
  auto o = read_until_error(make_records({p}, Compression::kZstd, 0));
  EXPECT_EQ(o.code, Code::kOk) << o.message;
  EXPECT_EQ(o.records, records);
}

TEST_F(FileChanges, ZstdCommandLongWindowStreamsAreRead) {
  if (!compression_supported(Compression::kZstd)) GTEST_SKIP();
  if (!have_command("zstd")) GTEST_SKIP() << "no zstd command";
  Strings records = {"x", random_bytes(5000, 6)};
  auto plain = write("plain", frame_all(records));
  // From stdin the size is unknown, so the frame keeps the full 2^31 window.
  ASSERT_EQ(run("zstd -q --long=31 -c < '" + plain + "' > '" + path("l.zst") + "'"), 0);
  auto o = read_until_error(make_records({path("l.zst")}, Compression::kZstd, 0));
  EXPECT_EQ(o.code, Code::kOk) << o.message;
  EXPECT_EQ(o.records, records);
}

#endif  // DINPUT_TEST_HAVE_ZSTD_API

// A frame header declaring a 2^32-byte window (more than the reader accepts): not called
// corrupt, but a window too large, RESOURCE_EXHAUSTED naming the file and the offset.
TEST_F(FileChanges, AZstdWindowBeyondTheLimitIsNotCalledCorrupt) {
  if (!compression_supported(Compression::kZstd)) GTEST_SKIP();
  std::string valid = read_file(write_records("v", {"first"}, Compression::kZstd));
  // Magic, a descriptor with no content size, no checksum, no dictionary, then a window
  // descriptor with exponent 22 (window log 10 + 22 = 32) and an empty last raw block.
  std::string frame = le(0xFD2FB528u, 4) + std::string("\x00", 1) + std::string("\xB0", 1) +
                      std::string("\x01\x00\x00", 3);
  auto p = write("w.zst", valid + frame);
  auto o = read_until_error(make_records({p}, Compression::kZstd, 0));
  EXPECT_EQ(o.records, Strings{"first"});
  EXPECT_EQ(o.code, Code::kResourceExhausted) << o.message;
  EXPECT_NE(o.message.find("'" + p + "'"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("compressed byte offset " + std::to_string(valid.size())),
            std::string::npos)
      << o.message;
  EXPECT_NE(o.message.find("window larger than"), std::string::npos) << o.message;
  EXPECT_EQ(o.message.find("corrupt"), std::string::npos) << o.message;
}

}  // namespace
}  // namespace dinput
