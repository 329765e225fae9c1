// CRC32C: the library's SSE4.2 code (three interleaved crc32 streams, src/io/crc32c.cc)
// against ISA-L's crc32_iscsi, in one run, over buffer sizes from a small record header to
// a large record. Prints one JSON line per size with both throughputs and their ratio
// (ISA-L over SSE4.2: above 1, ISA-L is faster), the median of several repetitions of each.
// The two alternate within each repetition, so that a busy machine slows both alike.
// White-box: it links the static library for the internal entry points.
//
// Usage: bench_crc32c [--quick]   (--quick: few repetitions, for the CTest smoke test)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "io/crc32c.h"

namespace {

using Clock = std::chrono::steady_clock;
using Fn = uint32_t (*)(uint32_t, const void*, size_t);

// Seconds for `rounds` CRCs of the buffer; the CRCs are folded into *sink so that no call
// can be dropped.
double time_rounds(Fn fn, const std::vector<unsigned char>& buffer, size_t rounds, uint32_t* sink) {
  const Clock::time_point start = Clock::now();
  uint32_t crc = 0;
  for (size_t r = 0; r < rounds; ++r) crc ^= fn(crc, buffer.data(), buffer.size());
  *sink ^= crc;
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  if (!dinput::crc32c::hardware_available() || !dinput::crc32c::isal_available()) {
    std::printf("{\"bench\":\"crc32c\",\"skipped\":\"%s\"}\n",
                !dinput::crc32c::hardware_available() ? "no SSE4.2 on this CPU"
                                                      : "the library was built without ISA-L");
    return 0;
  }
  const size_t sizes[] = {8, 16, 32, 64, 128, 192, 256, 1024, 4096, 16384, 65536, 1 << 20};
  const size_t bytes_per_sample = quick ? (size_t{1} << 16) : (size_t{64} << 20);
  const int repetitions = quick ? 3 : 9;
  std::mt19937 random(12);
  uint32_t sink = 0;
  for (size_t size : sizes) {
    std::vector<unsigned char> buffer(size);
    for (unsigned char& b : buffer) b = static_cast<unsigned char>(random());
    if (dinput::crc32c::extend_hardware(7, buffer.data(), size) !=
        dinput::crc32c::extend_isal(7, buffer.data(), size)) {
      std::fprintf(stderr, "bench_crc32c: the two CRCs differ for %zu bytes\n", size);
      return 1;
    }
    const size_t rounds = std::max<size_t>(1, bytes_per_sample / size);
    time_rounds(dinput::crc32c::extend_hardware, buffer, rounds, &sink);  // warm up
    time_rounds(dinput::crc32c::extend_isal, buffer, rounds, &sink);
    std::vector<double> sse42, isal;
    for (int r = 0; r < repetitions; ++r) {
      sse42.push_back(time_rounds(dinput::crc32c::extend_hardware, buffer, rounds, &sink));
      isal.push_back(time_rounds(dinput::crc32c::extend_isal, buffer, rounds, &sink));
    }
    const double total = static_cast<double>(rounds * size);
    const double sse42_gbps = total / median(sse42) / 1e9, isal_gbps = total / median(isal) / 1e9;
    std::printf(
        "{\"bench\":\"crc32c\",\"bytes\":%zu,\"sse42_gb_per_s\":%.3f,\"isal_gb_per_s\":%.3f,"
        "\"ratio_isal_over_sse42\":%.3f,\"faster\":\"%s\"}\n",
        size, sse42_gbps, isal_gbps, isal_gbps / sse42_gbps,
        isal_gbps > sse42_gbps ? "isal" : "sse42");
  }
  std::fprintf(stderr, "checksum %08x\n", sink);
  return 0;
}
