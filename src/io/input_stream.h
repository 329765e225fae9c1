// Byte streams that record readers parse: a file's bytes (mapped whole, or read in chunks)
// and the decompressed bytes of a zstd or gzip file. A stream comes as a sequence of
// chunks, each a run of bytes kept alive by a Buffer, so that a reader can hand out records
// as views into the chunks (no copy) and only copies a record that spans two chunks.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/buffer.h"
#include "io/compression.h"

namespace dinput {

// Default chunk size of streams that read or decompress (TFRecord's buffer_size 0).
constexpr size_t kDefaultChunkBytes = size_t{1} << 20;
// Smaller requested chunks are raised to this: buffer_size is a performance hint, and
// chunks of a few bytes would only make every record a copy gathered from many pieces.
constexpr size_t kMinChunkBytes = 4096;

// Larger requested chunks are lowered to this: a chunk is allocated whole.
constexpr size_t kMaxChunkBytes = size_t{1} << 30;

// The chunk size used for a requested buffer_size (0: the default).
inline size_t chunk_bytes(size_t requested) {
  if (requested == 0) return kDefaultChunkBytes;
  return requested < kMinChunkBytes ? kMinChunkBytes : (requested > kMaxChunkBytes ? kMaxChunkBytes : requested);
}

// Recycles the chunk buffers of one iterator's streams. A chunk lives as long as any record
// viewing it (behind a shuffle buffer that is a while); when it goes, its memory returns
// here rather than to malloc, and the next chunk reuses it. Fresh memory costs a page fault
// per 4 KiB on first write, which on virtual machines made up most of the time of reading
// a zstd file. The pool keeps at most max_free_bytes of unused buffers, and frees them when
// it goes itself (with the iterator that made it); buffers still in use outlive it.
class ChunkPool : public std::enable_shared_from_this<ChunkPool> {
 public:
  explicit ChunkPool(size_t max_free_bytes) : max_free_bytes_(max_free_bytes) {}
  ~ChunkPool();
  ChunkPool(const ChunkPool&) = delete;
  ChunkPool& operator=(const ChunkPool&) = delete;

  // A host buffer of `size` bytes (64-byte aligned), recycled when possible.
  std::shared_ptr<Buffer> get(size_t size);
  // Memory of a finished buffer (taken over: kept for reuse or freed).
  void put(void* data, size_t size);
  size_t free_bytes() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<void*, size_t>> free_;  // most recently returned last (still warm in cache)
  size_t free_bytes_ = 0;
  size_t max_free_bytes_;
};

// The pool an iterator gives its streams: enough for the steady state, where chunks come
// and go at the same rate.
std::shared_ptr<ChunkPool> make_chunk_pool(size_t chunk_size);

struct Chunk {
  const char* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const Buffer> owner;  // keeps data alive
};

// A corrupt or truncated compressed stream: a property of the file's contents, not an I/O
// failure. The record reader adds the file name and the record offset to the message, and
// with skip_corrupt_records ends that file instead of failing.
class StreamCorrupt : public std::runtime_error {
 public:
  StreamCorrupt(const std::string& detail, bool truncated) : std::runtime_error(detail), truncated_(truncated) {}
  bool truncated() const { return truncated_; }

 private:
  bool truncated_;
};

class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // The next non-empty chunk, or false at the end of the stream. Throws StreamCorrupt for
  // bad compressed data and dinput::Error for I/O errors. A source never writes into the
  // buffer of a chunk it has handed out while anyone else holds that chunk's owner.
  virtual bool next(Chunk& out) = 0;
};

// The whole file as one buffer: a read-only memory mapping for regular files (records are
// then views of the page cache), the bytes read into memory for other files (pipes,
// devices). nullptr-data buffer of size 0 for an empty file. Opening errors name `what`
// and the file: NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION for a directory.
// A mapped file that another process truncates while it is being read raises SIGBUS on
// access, as with any mmap reader; files are expected to be complete when read.
std::shared_ptr<const Buffer> read_whole_file(const char* what, const std::string& path);

// The file's bytes as chunks: the whole mapping as one chunk for regular files, read() in
// chunks of chunk_bytes(chunk_size) for other files (so a pipe is never held in memory
// whole).
// Chunk buffers come from `pool` when given.
std::unique_ptr<ChunkSource> open_file_chunks(const char* what, const std::string& path, size_t chunk_size,
                                              std::shared_ptr<ChunkPool> pool = nullptr);

// Bytes already in memory, cut into chunks of chunk_size (0: a single chunk). Tests and
// the fuzzers feed parsers through it to exercise records spanning chunk boundaries.
std::unique_ptr<ChunkSource> memory_chunks(const char* data, size_t size, std::shared_ptr<const Buffer> owner,
                                           size_t chunk_size);

// The decompressed bytes of `compressed`, in chunks of chunk_bytes(chunk_size). kNone
// returns the input itself. UNIMPLEMENTED when this build lacks the compression.
std::unique_ptr<ChunkSource> decompress(Compression compression, std::unique_ptr<ChunkSource> compressed,
                                        size_t chunk_size, std::shared_ptr<ChunkPool> pool = nullptr);

}  // namespace dinput
