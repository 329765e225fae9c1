// Helpers of the io tests: a temporary directory, files, a CRC32C and TFRecord framing
// written independently of the library (so that the reader and writer are checked against
// the format, not against themselves), and reading a dataset to the end.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/dataset.h"
#include "data/datasets.h"
#include "data/iterator.h"

namespace dinput::iotest {

// True in ThreadSanitizer and AddressSanitizer builds. Their shadow memory (and ASan's
// quarantine of freed blocks) makes RSS say little about what the code holds, and they
// reserve address space of their own, so memory bounds and address-space caps are checked
// only in plain builds.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr bool kUnderSanitizer = true;
#else
constexpr bool kUnderSanitizer = false;
#endif
#else
constexpr bool kUnderSanitizer = false;
#endif

// One bit at a time, straight from the definition (reflected polynomial 0x82F63B78).
inline uint32_t bitwise_crc32c(const void* data, size_t n) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

inline uint32_t masked(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

inline std::string le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

// One TFRecord: u64 length, masked CRC of the length, data, masked CRC of the data.
inline std::string frame(const std::string& data) {
  std::string len = le(data.size(), 8);
  return len + le(masked(bitwise_crc32c(len.data(), 8)), 4) + data +
         le(masked(bitwise_crc32c(data.data(), data.size())), 4);
}

inline std::string frame_all(const std::vector<std::string>& records) {
  std::string s;
  for (const auto& r : records) s += frame(r);
  return s;
}

inline std::string random_bytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(rng() & 0xff);
  return s;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool have_command(const char* name) {
  std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

inline int run(const std::string& cmd) { return std::system(cmd.c_str()); }

// A fresh directory per test, removed with everything in it.
class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "dinput_io_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) run("chmod -R u+rwx '" + dir_ + "' 2>/dev/null; rm -rf '" + dir_ + "'");
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string write(const std::string& name, const std::string& content) {
    std::string p = path(name);
    std::FILE* f = std::fopen(p.c_str(), "wb");
    EXPECT_NE(f, nullptr) << p;
    if (f) {
      if (!content.empty()) std::fwrite(content.data(), 1, content.size(), f);
      std::fclose(f);
    }
    return p;
  }
  std::string dir_;
};

inline IteratorContext context(bool skip_corrupt = false) {
  IteratorContext ctx;
  ctx.options.skip_corrupt_records = skip_corrupt;
  return ctx;
}

// Every element's only string, to the end (with a bound, so a bug cannot loop forever).
inline std::vector<std::string> read_all(const DatasetPtr& ds,
                                         const IteratorContext& ctx = IteratorContext{}) {
  auto it = ds->make_iterator(ctx);
  std::vector<std::string> out;
  Element e;
  while (out.size() < 1000000 && it->next(e)) {
    EXPECT_EQ(e.size(), 1u);
    EXPECT_EQ(e[0].dtype(), DType::kBytes);
    EXPECT_EQ(e[0].rank(), 0);
    out.emplace_back(e[0].string(0));
  }
  return out;
}

// The records delivered before the error, and the error ("" when none).
struct Outcome {
  std::vector<std::string> records;
  Code code = Code::kOk;
  std::string message;
};

inline Outcome read_until_error(const DatasetPtr& ds,
                                const IteratorContext& ctx = IteratorContext{}) {
  Outcome o;
  try {
    auto it = ds->make_iterator(ctx);
    Element e;
    while (o.records.size() < 1000000 && it->next(e)) o.records.emplace_back(e[0].string(0));
  } catch (const Error& err) {
    o.code = err.code();
    o.message = err.what();
  }
  return o;
}

}  // namespace dinput::iotest
