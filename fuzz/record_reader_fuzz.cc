// Fuzz target of the record-file parser. Each input is read as a plain record file — as one
// chunk (the memory-mapped path) and cut into small chunks (the streamed path, where
// records span chunks) — and as a zstd and a gzip stream, each with and without
// skip_corrupt_records (zstd both with its content checksum verified and, as a record file
// reads it, without, where stored blocks are views of the input). Besides "no crash, no
// hang, no leak" (the sanitizers), it checks:
//   - every record returned has correct CRCs (a partly read record is never good);
//   - the only failure is DATA_LOSS naming the file and a byte offset;
//   - with skip_corrupt_records nothing fails;
//   - the plain file gives the same records, and the same error, however it is chunked.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/status.h"
#include "io/compression.h"
#include "io/crc32c.h"
#include "io/input_stream.h"
#include "io/record_reader.h"

namespace {

using namespace dinput;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "record_reader_fuzz: invariant violated: %s\n", what.c_str());
  std::abort();
}

struct Result {
  std::vector<std::string> records;
  std::string error;  // "" when the file was read to its end
  int64_t skipped = 0;
};

// Limits the work per input: a tiny zstd frame can expand to a great deal of data.
constexpr size_t kMaxRecordBytes = size_t{64} << 20;

uint64_t load_le(const char* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Reads to the end. Records that are views into [input, input + input_size) are checked
// against their framing there, with the table CRC (the parser may use the SSE4.2 one).
Result read(std::unique_ptr<ChunkSource> chunks, const char* stream, bool skip,
            const char* input = nullptr, size_t input_size = 0) {
  Result r;
  RecordParser parser("fuzz.rec", std::move(chunks), stream, skip);
  size_t total = 0;
  try {
    RecordView v;
    while (parser.next(v)) {
      if (!v.owner) fail("a record without an owner");
      if (input && !v.copied) {
        if (v.data < input + 12 || v.data + v.size + 4 > input + input_size)
          fail("a view outside the input");
        const char* header = v.data - 12;
        if (load_le(header, 8) != v.size) fail("a record whose length field differs");
        if (load_le(header + 8, 4) != crc32c::mask(crc32c::extend_software(0, header, 8)))
          fail("a record returned with a bad length CRC");
        if (load_le(v.data + v.size, 4) != crc32c::mask(crc32c::extend_software(0, v.data, v.size)))
          fail("a record returned with a bad data CRC");
      }
      std::string bytes(v.data, v.size);  // the bytes must be readable while the owner lives
      total += bytes.size();
      r.records.push_back(std::move(bytes));
      if (total > kMaxRecordBytes) break;
    }
    r.skipped = parser.take_skipped();
  } catch (const Error& e) {
    // A zstd frame declaring a window over the reader's limit is not damage: it is refused
    // with RESOURCE_EXHAUSTED, named as such, whether or not corrupt records are skipped.
    if (e.code() == Code::kResourceExhausted &&
        std::string(e.what()).find("window larger than") != std::string::npos) {
      if (std::string(e.what()).find("'fuzz.rec'") == std::string::npos)
        fail(std::string("no file in: ") + e.what());
      r.error = e.what();
      return r;
    }
    if (e.code() != Code::kDataLoss)
      fail(std::string("unexpected status ") + code_name(e.code()) + ": " + e.what());
    if (skip) fail(std::string("an error while skipping corrupt records: ") + e.what());
    r.error = e.what();
    if (r.error.find("byte offset") == std::string::npos ||
        r.error.find("'fuzz.rec'") == std::string::npos)
      fail("a DATA_LOSS message without file and offset: " + r.error);
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* bytes = reinterpret_cast<const char*>(data);
  // A chunk size that depends on the input, so that the fuzzer explores boundaries.
  const size_t chunk = 1 + (size ? data[size - 1] % 23 : 0);
  for (bool skip : {false, true}) {
    Result whole = read(memory_chunks(bytes, size, nullptr, 0), nullptr, skip, bytes, size);
    Result pieces = read(memory_chunks(bytes, size, nullptr, chunk), nullptr, skip);
    if (whole.records != pieces.records) fail("chunking changed the records");
    if (whole.error != pieces.error)
      fail("chunking changed the error: '" + whole.error + "' vs '" + pieces.error + "'");
    if (whole.skipped != pieces.skipped) fail("chunking changed the number of skipped records");
    // The decompressors take their chunk buffers from a pool, as for an iterator.
    auto pool = make_chunk_pool(kMinChunkBytes);
    for (Compression c : {Compression::kZstd, Compression::kGzip}) {
      if (!compression_supported(c)) continue;
      read(decompress(c, memory_chunks(bytes, size, nullptr, chunk * 7), kMinChunkBytes, pool),
           c == Compression::kZstd ? "zstd" : "gzip", skip);
    }
    // As a record file opens it: the zstd content checksum left to the record CRCs, so that
    // stored (raw) blocks are handed out as views of the input rather than decoded.
    if (compression_supported(Compression::kZstd))
      read(decompress(Compression::kZstd, memory_chunks(bytes, size, nullptr, chunk * 7),
                      kMinChunkBytes, pool, /*content_checksum=*/false),
           "zstd", skip);
  }
  return 0;
}
