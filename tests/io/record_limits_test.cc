// Bounded memory when reading record files: a length claim over max_record_bytes fails
// before anything is allocated for it (a zstd "decompression bomb" of a few KB claiming a
// GiB), and a record that spans many decompressed chunks is held in memory once, not twice.
// Memory is checked loosely through the growth of the process's peak RSS (each test runs in
// a process of its own under ctest).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "io/file_sources.h"
#include "io/record_writer.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using namespace iotest;

constexpr int64_t kMiB = int64_t{1} << 20;

int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // KiB on Linux
}

class RecordLimits : public IoTest {
 protected:
  // A zstd file whose decompressed stream is a record header claiming `claim` data bytes
  // (with a valid length CRC) followed by `zeros` zero bytes: a few KB on disk.
  std::string bomb(uint64_t claim, int64_t zeros) {
    if (!compression_supported(Compression::kZstd) || !have_command("zstd")) return "";
    std::string len = le(claim, 8);
    write("bomb.raw", len + le(masked(bitwise_crc32c(len.data(), 8)), 4));
    std::string p = path("bomb.zst");
    if (run("head -c " + std::to_string(zeros) + " /dev/zero >> '" + path("bomb.raw") +
            "' && zstd -q -c '" + path("bomb.raw") + "' > '" + p + "' && rm '" + path("bomb.raw") +
            "'") != 0)
      return "";
    return p;
  }
};

TEST_F(RecordLimits, AZstdBombClaimingOneGibFailsFastBeforeAllocating) {
  std::string p = bomb(uint64_t{1} << 30, 64 * kMiB);
  if (p.empty()) GTEST_SKIP() << "needs zstd support and the zstd command";
  const int64_t before = peak_rss_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  auto o = read_until_error(make_records({p}, Compression::kZstd, 0));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_EQ(
      o.message,
      "records: record at byte offset 0 of the decompressed zstd stream of '" + p +
          "' claims 1073741824 data bytes, more than the limit of 268435456 (max_record_bytes; "
          "raise it with dinput_options_set_max_record_bytes if records this large are expected)");
  EXPECT_LT(seconds, 5.0);
  if (!kUnderSanitizer) {  // see kUnderSanitizer
    EXPECT_LT(peak_rss_bytes() - before, 16 * kMiB);
  }
}

// With a limit above the claim, the claim that the stream does not back is a truncation,
// and the memory taken is what the stream held, not what the header claimed.
TEST_F(RecordLimits, AnUnbackedClaimUnderTheLimitCostsOnlyTheBytesThere) {
  std::string p = bomb(uint64_t{1} << 30, 32 * kMiB);
  if (p.empty()) GTEST_SKIP() << "needs zstd support and the zstd command";
  IteratorContext ctx;
  ctx.options.max_record_bytes = int64_t{2} << 30;
  const int64_t before = peak_rss_bytes();
  auto o = read_until_error(make_records({p}, Compression::kZstd, 0), ctx);
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_NE(o.message.find("truncated record at byte offset 0 of the decompressed zstd stream"),
            std::string::npos)
      << o.message;
  if (!kUnderSanitizer) {  // see kUnderSanitizer
    EXPECT_LT(peak_rss_bytes() - before, 128 * kMiB);
  }
}

// A 96 MiB record in a zstd file decompressed in 2 MiB chunks: the chunks are copied into
// the record's buffer as they arrive and released, so the peak is about one record (it was
// two: every chunk kept until the record was complete, then a copy of all of them).
TEST_F(RecordLimits, ALargeRecordIsHeldInMemoryOnce) {
  if (!compression_supported(Compression::kZstd)) GTEST_SKIP() << "zstd is not compiled in";
  const int64_t size = 96 * kMiB;
  const std::string p = path("large.zst");
  // Written by a child process, so that the record's bytes never count in this one's RSS.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int rc = 0;
    try {
      std::string record(static_cast<size_t>(size), '\0');
      for (size_t i = 0; i < record.size(); i += 4096) record[i] = static_cast<char>(i / 4096);
      RecordWriter w(p, Compression::kZstd, 1);
      w.write(record.data(), record.size());
      w.write("tail", 4);
      w.close();
    } catch (...) {
      rc = 1;
    }
    _exit(rc);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  const int64_t before = peak_rss_bytes();
  auto it = make_records({p}, Compression::kZstd, 0)->make_iterator(IteratorContext{});
  Element e;
  ASSERT_TRUE(it->next(e));
  const std::string_view got = e[0].string(0);
  ASSERT_EQ(static_cast<int64_t>(got.size()), size);
  EXPECT_EQ(got[4096 * 5], 5);
  const int64_t grew = peak_rss_bytes() - before;
  if (!kUnderSanitizer) {            // see kUnderSanitizer
    EXPECT_GE(grew, size * 9 / 10);  // the record itself is there (the check can see memory)
    EXPECT_LT(grew, size * 3 / 2) << "peak RSS grew by " << grew / kMiB << " MiB for a "
                                  << size / kMiB << " MiB record";
  }
  ASSERT_TRUE(it->next(e));
  EXPECT_EQ(e[0].string(0), "tail");
}

}  // namespace
}  // namespace dinput
