// fixed_length_records: header and footer, the size check, skipping the incomplete tail.
#include <gtest/gtest.h>

#include "data/nodes.h"
#include "io/file_sources.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using namespace iotest;

class FixedLength : public IoTest {};

TEST_F(FixedLength, RecordsBetweenHeaderAndFooter) {
  auto p = write("f.bin",
                 "HDR"
                 "aaaa"
                 "bbbb"
                 "cccc"
                 "FT");
  EXPECT_EQ(read_all(make_fixed_length_records({p}, 4, 3, 2)),
            (std::vector<std::string>{"aaaa", "bbbb", "cccc"}));
  EXPECT_EQ(read_all(make_fixed_length_records({p}, 1, 13, 2)),
            (std::vector<std::string>{"c", "c"}));
  EXPECT_EQ(read_all(make_fixed_length_records({p}, 17, 0, 0)),
            (std::vector<std::string>{"HDRaaaabbbbccccFT"}));
  EXPECT_TRUE(read_all(make_fixed_length_records({p}, 4, 15, 2)).empty());  // an empty body
}

TEST_F(FixedLength, ManyFilesAndStatistics) {
  auto a = write("a.bin", "0123456789");
  auto b = write("b.bin", "");
  auto c = write("c.bin", "abcde");
  IteratorContext ctx;
  EXPECT_EQ(read_all(make_fixed_length_records({a, b, c}, 5, 0, 0), ctx),
            (std::vector<std::string>{"01234", "56789", "abcde"}));
  EXPECT_EQ(ctx.stats->records.load(), 3);
  EXPECT_EQ(ctx.stats->record_bytes.load(), 15);
  auto ds = make_fixed_length_records({a, c}, 5, 0, 0);
  EXPECT_STREQ(ds->name(), "fixed_length_records");
  EXPECT_EQ(ds->element_spec(), (ElementSpec{{DType::kBytes, Shape()}}));
  auto source = std::dynamic_pointer_cast<const FileSource>(ds);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(read_all(source->with_files({c})), (std::vector<std::string>{"abcde"}));
}

// The file is read in 2 MiB chunks: records that span two chunks (1000 does not divide
// 2 MiB), a header longer than a chunk, and the records after it are all whole; the same
// with map_files.
TEST_F(FixedLength, RecordsAcrossChunksAndAHeaderLongerThanAChunk) {
  const size_t header = (2 << 20) + 123, footer = 7, n = 5000;
  const std::string content = random_bytes(header + n * 1000 + footer, 21);
  auto p = write("big.bin", content);
  std::vector<std::string> expected;
  for (size_t i = 0; i < n; ++i) expected.push_back(content.substr(header + i * 1000, 1000));
  EXPECT_EQ(read_all(make_fixed_length_records({p}, 1000, static_cast<int64_t>(header), footer)),
            expected);
  IteratorContext mapped;
  mapped.options.map_files = true;
  EXPECT_EQ(
      read_all(make_fixed_length_records({p}, 1000, static_cast<int64_t>(header), footer), mapped),
      expected);
}

TEST_F(FixedLength, BadSizeIsDataLossNamingFileAndSize) {
  auto p = write("odd.bin",
                 "HH"
                 "abcd"
                 "ef"
                 "F");  // 9 bytes: 6 after header 2 and footer 1
  auto o = read_until_error(make_fixed_length_records({p}, 4, 2, 1));
  EXPECT_TRUE(o.records.empty());
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_EQ(o.message,
            "fixed_length_records: the size of '" + p +
                "' (9 bytes) minus header_bytes (2) and footer_bytes (1) is not a multiple of "
                "record_bytes (4): 2 bytes of a truncated record at byte offset 6");
  // Smaller than header + footer.
  auto tiny = write("tiny.bin", "abc");
  o = read_until_error(make_fixed_length_records({tiny}, 1, 2, 2));
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_EQ(o.message, "fixed_length_records: the size of '" + tiny +
                           "' (3 bytes) is smaller than header_bytes (2) plus footer_bytes (2)");
  // With skip_corrupt_records the whole records are read and the tail counts once.
  auto small = write("small.bin", "ab");  // smaller than header 2 + footer 1
  IteratorContext ctx = context(true);
  EXPECT_EQ(read_all(make_fixed_length_records({p, small, p}, 4, 2, 1), ctx),
            (std::vector<std::string>{"abcd", "abcd"}));
  EXPECT_EQ(ctx.stats->corrupt_records_skipped.load(), 3);
  EXPECT_EQ(ctx.stats->corrupt_bytes_skipped.load(), 2 + 2 + 2);  // p's tail twice, all of small
}

TEST_F(FixedLength, ArgumentsAndMissingFiles) {
  EXPECT_THROW(make_fixed_length_records({}, 0, 0, 0), Error);
  EXPECT_THROW(make_fixed_length_records({}, -3, 0, 0), Error);
  EXPECT_THROW(make_fixed_length_records({}, 1, -1, 0), Error);
  EXPECT_THROW(make_fixed_length_records({}, 1, 0, -1), Error);
  auto o = read_until_error(make_fixed_length_records({path("missing")}, 4, 0, 0));
  EXPECT_EQ(o.code, Code::kNotFound);
  EXPECT_NE(o.message.find(path("missing")), std::string::npos);
  // Huge header and footer values do not overflow.
  auto p = write("x", "abcd");
  o = read_until_error(make_fixed_length_records({p}, 1, INT64_MAX, INT64_MAX));
  EXPECT_EQ(o.code, Code::kDataLoss);
  EXPECT_EQ(read_until_error(make_fixed_length_records({p}, INT64_MAX, 0, 0)).code,
            Code::kDataLoss);
}

}  // namespace
}  // namespace dinput
