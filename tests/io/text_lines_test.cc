// text_lines on the chunk streams: line ends, empty files, long lines, lines spanning the
// chunks of a pipe, and the iterator statistics.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "data/nodes.h"
#include "io/file_sources.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using namespace iotest;
using Lines = std::vector<std::string>;

class TextLinesIo : public IoTest {
 protected:
  Lines lines_of(const std::string& content) {
    return read_all(make_text_lines({write("t.txt", content)}));
  }
};

TEST_F(TextLinesIo, LineEnds) {
  EXPECT_EQ(lines_of("a\r\nb\r\n"), (Lines{"a", "b"}));
  EXPECT_EQ(lines_of("a\nb"), (Lines{"a", "b"}));  // no final newline
  EXPECT_EQ(lines_of("a\r\nb"), (Lines{"a", "b"}));
  EXPECT_EQ(lines_of("a\rb\r\n"), (Lines{"a\rb"}));  // a lone CR is content
  EXPECT_EQ(lines_of("a\r"), (Lines{"a"}));          // ... except right before the end
  EXPECT_EQ(lines_of("\r\n\r\n"), (Lines{"", ""}));
  EXPECT_EQ(lines_of(std::string("x\0y\n", 4)), (Lines{std::string("x\0y", 3)}));
}

TEST_F(TextLinesIo, EmptyFilesAndNewlinesOnly) {
  EXPECT_EQ(lines_of(""), Lines{});
  EXPECT_EQ(lines_of("\n"), (Lines{""}));
  EXPECT_EQ(lines_of("\n\n"), (Lines{"", ""}));
  EXPECT_EQ(lines_of("\n\nz"), (Lines{"", "", "z"}));
}

TEST_F(TextLinesIo, AOneMebibyteLine) {
  std::string big(1 << 20, 'q');
  big[12345] = 'r';
  EXPECT_EQ(lines_of("s\n" + big + "\nt"), (Lines{"s", big, "t"}));
  EXPECT_EQ(lines_of(big), (Lines{big}));
}

TEST_F(TextLinesIo, StatisticsCountLines) {
  IteratorContext ctx;
  read_all(make_text_lines({write("s.txt", "ab\ncde\r\n\n")}), ctx);
  EXPECT_EQ(ctx.stats->records.load(), 3);
  EXPECT_EQ(ctx.stats->record_bytes.load(), 5);
}

TEST_F(TextLinesIo, LinesOutliveTheIterator) {
  Element e;
  {
    auto it = make_text_lines({write("k.txt", "kept\n")})->make_iterator(IteratorContext{});
    ASSERT_TRUE(it->next(e));
  }
  EXPECT_EQ(e[0].string(0), "kept");
}

// A pipe is read in 1 MiB chunks: lines that cross chunk boundaries are put together.
TEST_F(TextLinesIo, APipeWithLinesAcrossChunks) {
  Lines expected;
  std::string content;
  for (int i = 0; i < 30000; ++i) {
    expected.push_back(std::string(static_cast<size_t>(i % 97), 'a' + static_cast<char>(i % 26)) +
                       std::to_string(i));
    content += expected.back() + (i % 3 ? "\n" : "\r\n");
  }
  expected.push_back(std::string(3 << 20, 'L'));  // longer than a chunk, and last without "\n"
  content += expected.back();
  std::string fifo = path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] {
    int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    size_t off = 0;
    while (off < content.size()) {
      ssize_t r = ::write(fd, content.data() + off, std::min<size_t>(content.size() - off, 65536));
      if (r <= 0) break;
      off += static_cast<size_t>(r);
    }
    ::close(fd);
  });
  IteratorContext ctx;
  ctx.options.allow_nonregular_files = true;  // refused otherwise (file_changes_test.cc)
  Lines got = read_all(make_text_lines({fifo}), ctx);
  writer.join();
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected);
}

// max_record_bytes limits a line's content: a line of exactly the limit is read whatever
// ends it ("\n", "\r\n" or the end of the file), one byte more is RESOURCE_EXHAUSTED naming
// the file and the line's offset, also when the line spans chunks (1 MiB).
TEST_F(TextLinesIo, TheLineLimitCountsContentOnly) {
  IteratorContext ctx;
  ctx.options.max_record_bytes = 5;
  auto p = write("limit.txt", "abcde\nfghij\r\n12345");
  auto o = read_until_error(make_text_lines({p}), ctx);
  EXPECT_EQ(o.code, Code::kOk) << o.message;
  EXPECT_EQ(o.records, (Lines{"abcde", "fghij", "12345"}));
  for (const std::string& bad :
       {std::string("ab\nabcdef\nx"), std::string("ab\nabcde\r\r\n"), std::string("ab\nabcdef")}) {
    SCOPED_TRACE(bad);
    p = write("over.txt", bad);
    o = read_until_error(make_text_lines({p}), ctx);
    EXPECT_EQ(o.records, Lines{"ab"});
    EXPECT_EQ(o.code, Code::kResourceExhausted);
    EXPECT_EQ(o.message.rfind(
                  "text_lines: the line at byte offset 3 of '" + p + "' is longer than 5 bytes", 0),
              0u)
        << o.message;
  }
  // Across chunks: lines a little longer than a chunk, and a limit of exactly their size.
  const size_t n = (size_t{1} << 20) + 100;
  ctx.options.max_record_bytes = static_cast<int64_t>(n);
  const std::string line(n, 'z');
  p = write("long.txt", line + "\r\n" + line + "\n" + line + "z");
  o = read_until_error(make_text_lines({p}), ctx);
  EXPECT_TRUE(o.records == (Lines{line, line})) << o.records.size() << " lines";
  EXPECT_EQ(o.code, Code::kResourceExhausted) << o.message;
  EXPECT_NE(o.message.find("byte offset " + std::to_string(2 * n + 3) + " "), std::string::npos)
      << o.message;
}

TEST_F(TextLinesIo, ErrorsNameTheFile) {
  auto o = read_until_error(make_text_lines({path("missing.txt")}));
  EXPECT_EQ(o.code, Code::kNotFound);
  EXPECT_EQ(o.message.rfind("text_lines: cannot read '" + path("missing.txt") + "'", 0), 0u)
      << o.message;
  o = read_until_error(make_text_lines({dir_}));
  EXPECT_EQ(o.code, Code::kFailedPrecondition);
  if (geteuid() != 0) {
    auto p = write("locked.txt", "x\n");
    ASSERT_EQ(chmod(p.c_str(), 0), 0);
    EXPECT_EQ(read_until_error(make_text_lines({p})).code, Code::kPermissionDenied);
  }
}

}  // namespace
}  // namespace dinput
