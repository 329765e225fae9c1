// CRC32C: published check values on both paths, the SSE4.2 path against the table path on
// random data of many lengths and alignments, and the TFRecord mask.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "io/crc32c.h"
#include "io_test_util.h"

namespace dinput {
namespace {

using iotest::bitwise_crc32c;
using iotest::random_bytes;

TEST(Crc32c, CheckValueOnEveryPath) {
  const char* s = "123456789";
  EXPECT_EQ(crc32c::extend_software(0, s, 9), 0xE3069283u);
  EXPECT_EQ(crc32c::value(s, 9), 0xE3069283u);
  EXPECT_EQ(bitwise_crc32c(s, 9), 0xE3069283u);  // the test's own reference agrees
  if (!crc32c::hardware_available())
    GTEST_SKIP() << "no SSE4.2 on this CPU: the hardware path is not testable";
  EXPECT_EQ(crc32c::extend_hardware(0, s, 9), 0xE3069283u);
}

// The iSCSI test vectors of RFC 3720, appendix B.4.
TEST(Crc32c, Rfc3720Vectors) {
  unsigned char zeros[32], ones[32], up[32], down[32];
  for (int i = 0; i < 32; ++i) {
    zeros[i] = 0;
    ones[i] = 0xff;
    up[i] = static_cast<unsigned char>(i);
    down[i] = static_cast<unsigned char>(31 - i);
  }
  for (auto fn : {&crc32c::extend_software, &crc32c::extend}) {
    EXPECT_EQ(fn(0, zeros, 32), 0x8A9136AAu);
    EXPECT_EQ(fn(0, ones, 32), 0x62A8AB43u);
    EXPECT_EQ(fn(0, up, 32), 0x46DD794Eu);
    EXPECT_EQ(fn(0, down, 32), 0x113FDB5Cu);
  }
  EXPECT_EQ(crc32c::value("", 0), 0u);
  EXPECT_EQ(crc32c::value(nullptr, 0), 0u);
}

// ISA-L's crc32_iscsi (when the library is built with it) against the published vectors
// and against the library's own code on random data of many lengths, offsets and seeds.
TEST(Crc32c, IsalAgreesWithTheLibrarysOwnCode) {
  if (!crc32c::isal_available()) GTEST_SKIP() << "the library is built without ISA-L";
  EXPECT_EQ(crc32c::extend_isal(0, "123456789", 9), 0xE3069283u);
  unsigned char zeros[32] = {}, up[32];
  for (int i = 0; i < 32; ++i) up[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(crc32c::extend_isal(0, zeros, 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c::extend_isal(0, up, 32), 0x46DD794Eu);
  EXPECT_EQ(crc32c::extend_isal(0, nullptr, 0), 0u);
  std::string data = random_bytes((1 << 20) + 64, 21);
  for (size_t n :
       {1, 7, 8, 15, 16, 31, 32, 63, 64, 255, 256, 257, 1000, 4096, 12345, 65536, 1 << 20}) {
    for (size_t offset : {0, 1, 3, 8}) {
      const char* p = data.data() + offset;
      EXPECT_EQ(crc32c::extend_isal(0, p, n), crc32c::extend_software(0, p, n))
          << n << " " << offset;
      EXPECT_EQ(crc32c::extend(0, p, n), crc32c::extend_software(0, p, n))
          << n;  // either side of 256
      EXPECT_EQ(crc32c::extend_isal(0x12345678u, p, n), crc32c::extend_software(0x12345678u, p, n))
          << n;
      // Extending in two pieces equals one piece.
      EXPECT_EQ(crc32c::extend_isal(crc32c::extend_isal(0, p, n / 2), p + n / 2, n - n / 2),
                crc32c::extend_software(0, p, n))
          << n;
    }
  }
}

TEST(Crc32c, SoftwareMatchesTheBitwiseDefinition) {
  std::string data = random_bytes(3000, 11);
  for (size_t n : {0, 1, 7, 8, 9, 63, 64, 65, 1000, 3000})
    EXPECT_EQ(crc32c::extend_software(0, data.data(), n), bitwise_crc32c(data.data(), n)) << n;
}

// Lengths around every threshold of the hardware path (8-byte words, three 256-byte and
// three 4096-byte blocks) at every alignment.
TEST(Crc32c, HardwareEqualsSoftwareOnManyLengthsAndAlignments) {
  if (!crc32c::hardware_available()) GTEST_SKIP() << "no SSE4.2 on this CPU";
  std::string data = random_bytes((1 << 20) + 64, 12);
  std::vector<size_t> lengths;
  for (size_t n = 0; n <= 100; ++n) lengths.push_back(n);
  for (size_t base : {256, 768, 1024, 4096, 3 * 4096, 3 * 4096 + 768, 65536, 1 << 20})
    for (int d = -9; d <= 9; ++d)
      if (static_cast<long>(base) + d >= 0) lengths.push_back(base + d);
  for (size_t align = 0; align < 16; ++align) {
    for (size_t n : lengths) {
      if (align + n > data.size()) continue;
      const char* p = data.data() + align;
      ASSERT_EQ(crc32c::extend_hardware(0, p, n), crc32c::extend_software(0, p, n))
          << "n=" << n << " align=" << align;
    }
  }
  // A running CRC continues the same way on both paths.
  uint32_t hw = 0, sw = 0;
  size_t pos = 0;
  for (size_t step : {3, 700, 1, 9000, 13, 5000}) {
    hw = crc32c::extend_hardware(hw, data.data() + pos, step);
    sw = crc32c::extend_software(sw, data.data() + pos, step);
    pos += step;
  }
  EXPECT_EQ(hw, sw);
  EXPECT_EQ(hw, crc32c::value(data.data(), pos));
}

// The length field's shortcut (one crc32 instruction) gives value(p, 8) for any 8 bytes at
// any alignment.
TEST(Crc32c, Value8EqualsValueOfEightBytes) {
  std::vector<unsigned char> buf(8 + 64);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int round = 0; round < 2000; ++round) {
    for (auto& b : buf) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b = static_cast<unsigned char>(x);
    }
    const size_t at = static_cast<size_t>(round) % 64;
    ASSERT_EQ(dinput::crc32c::value8(buf.data() + at), dinput::crc32c::value(buf.data() + at, 8))
        << "round " << round;
    ASSERT_EQ(dinput::crc32c::value8(buf.data() + at),
              dinput::crc32c::extend_software(0, buf.data() + at, 8));
  }
  const unsigned char zeros[8] = {};
  EXPECT_EQ(dinput::crc32c::value8(zeros), dinput::crc32c::extend_software(0, zeros, 8));
}

TEST(Crc32c, ExtendIsConcatenation) {
  std::string a = random_bytes(1234, 1), b = random_bytes(4321, 2);
  std::string ab = a + b;
  EXPECT_EQ(crc32c::extend(crc32c::value(a.data(), a.size()), b.data(), b.size()),
            crc32c::value(ab.data(), ab.size()));
  EXPECT_EQ(crc32c::value(ab.data(), ab.size()), bitwise_crc32c(ab.data(), ab.size()));
}

TEST(Crc32c, TfRecordMask) {
  for (uint32_t crc : {0u, 1u, 0xE3069283u, 0xffffffffu, 0x80000000u, 0x12345678u}) {
    EXPECT_EQ(crc32c::mask(crc), ((crc >> 15) | (crc << 17)) + 0xa282ead8u);
    EXPECT_EQ(crc32c::unmask(crc32c::mask(crc)), crc);
  }
  EXPECT_EQ(crc32c::mask(0), 0xa282ead8u);
}

}  // namespace
}  // namespace dinput
