// Byte streams that record readers parse: a file's bytes (read in chunks, or mapped whole)
// and the decompressed bytes of a zstd or gzip file. A stream comes as a sequence of
// chunks, each a run of bytes kept alive by a Buffer, so that a reader can hand out records
// as views into the chunks (no copy) and only copies a record that spans two chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/buffer.h"
#include "data/options.h"
#include "io/compression.h"

namespace dinput {

// The largest zstd window a reader decodes: 2^31 bytes on 64-bit hosts (the largest that
// `zstd --long=31` writes), 2^30 on 32-bit ones. libzstd's own default is 2^27, which
// refuses long-window streams. A frame declaring more is RESOURCE_EXHAUSTED, not DATA_LOSS.
constexpr int kZstdWindowLogMax = sizeof(size_t) >= 8 ? 31 : 30;

// Default chunk size of streams that read or decompress (TFRecord's buffer_size 0): one
// transparent huge page, which chunk memory is asked to be (input_stream.cc, chunk_alloc).
constexpr size_t kDefaultChunkBytes = size_t{2} << 20;
// Smaller requested chunks are raised to this: buffer_size is a performance hint, and
// chunks of a few bytes would only make every record a copy gathered from many pieces.
constexpr size_t kMinChunkBytes = 4096;

// Larger requested chunks are lowered to this: a chunk is allocated whole.
constexpr size_t kMaxChunkBytes = size_t{1} << 30;

// The chunk size used for a requested buffer_size (0: the default).
inline size_t chunk_bytes(size_t requested) {
  if (requested == 0) return kDefaultChunkBytes;
  return requested < kMinChunkBytes ? kMinChunkBytes
                                    : (requested > kMaxChunkBytes ? kMaxChunkBytes : requested);
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

  // Decoder state of streams that ended, for the iterator's next streams: a zstd context
  // holds a window buffer of up to a few MiB, which a fresh context per file faults in page
  // by page again (opaque here: the decompressor owns its type). take_decoder gives one
  // back (nullptr: none kept); keep_decoder takes one over, keeping at most kKeptDecoders
  // (a file read and the next one read ahead) and destroying the others, and the rest when
  // the pool goes.
  static constexpr size_t kKeptDecoders = 2;
  using DestroyDecoder = void (*)(void*);
  void* take_decoder();
  void keep_decoder(void* decoder, DestroyDecoder destroy);

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<void*, size_t>> free_;  // most recently returned last (still warm in cache)
  size_t free_bytes_ = 0;
  size_t max_free_bytes_;
  std::vector<std::pair<void*, DestroyDecoder>> decoders_;
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
  StreamCorrupt(const std::string& detail, bool truncated, uint64_t compressed_offset = 0,
                bool window_too_large = false)
      : std::runtime_error(detail),
        truncated_(truncated),
        compressed_offset_(compressed_offset),
        window_too_large_(window_too_large) {}
  bool truncated() const { return truncated_; }
  // Not damage: a zstd frame needs a larger window than kZstdWindowLogMax allows. Reported
  // as RESOURCE_EXHAUSTED, and never skipped as a corrupt record.
  bool window_too_large() const { return window_too_large_; }
  // Where in the compressed file the frame (zstd) or member (gzip) that failed begins: the
  // end of the last one that decoded completely, 0 when none did.
  uint64_t compressed_offset() const { return compressed_offset_; }

 private:
  bool truncated_;
  uint64_t compressed_offset_;
  bool window_too_large_;
};

class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // The next non-empty chunk, or false at the end of the stream. Throws StreamCorrupt for
  // bad compressed data and dinput::Error for I/O errors. A source never writes into the
  // buffer of a chunk it has handed out while anyone else holds that chunk's owner.
  virtual bool next(Chunk& out) = 0;
};

// How the readers open files (from the dataset options).
struct FileReadOptions {
  // Memory-map regular files (Options::map_files) instead of reading them with pread()
  // into the library's buffers. A mapped file that is truncated while it is read raises
  // SIGBUS in the process, and one rewritten in place changes records already returned;
  // read files keep neither risk: a file that ends before the size it had when opened is
  // DATA_LOSS naming the file and the offset, and records are copies the file cannot change.
  bool map = false;
  // Read FIFOs, character devices, sockets (Options::allow_nonregular_files). Otherwise
  // they are FAILED_PRECONDITION before they are opened (opening a FIFO waits for a writer).
  bool allow_nonregular = false;
  // open_sized_chunks of a file that is not regular (read whole, since its size is only
  // known at its end): more bytes than this is RESOURCE_EXHAUSTED naming the file, rather
  // than memory without bound (/dev/zero).
  uint64_t whole_file_limit = static_cast<uint64_t>(kDefaultMaxRecordBytes);
};

// A read-only mapping of the first `size` bytes of the regular file open as `fd`, as
// map_files maps a file (its pages fault in as they are read), for reading records here and
// there (no read-ahead hint); nullptr when the file system cannot map it.
std::shared_ptr<const Buffer> map_file(int fd, size_t size);

// The file options in `options`: map_files, allow_nonregular_files, and max_record_bytes as
// the whole-file limit.
inline FileReadOptions file_read_options(const Options& options) {
  FileReadOptions out;
  out.map = options.map();
  out.allow_nonregular = options.allow_nonregular();
  out.whole_file_limit = options.record_limit();
  return out;
}

// The file's bytes as chunks of chunk_bytes(chunk_size), read with pread() (regular files)
// or read() (pipes and devices, when allowed) into buffers from `pool` when given; with
// opts.map a regular file is instead mapped whole and handed out as one chunk. A regular
// file that ends before the size it had when opened (truncated while read) is DATA_LOSS
// naming the file and the offset where it ended; read errors name the file and the offset.
//
// start: the stream begins at this byte of the file (a position saved in an iterator state):
// a regular file is read from there, mapped or not; a pipe or device is read from its start
// and the first `start` bytes dropped. A file shorter than `start` is DATA_LOSS naming the
// file (it changed since the position was saved).
std::unique_ptr<ChunkSource> open_file_chunks(const char* what, const std::string& path,
                                              size_t chunk_size,
                                              std::shared_ptr<ChunkPool> pool = nullptr,
                                              const FileReadOptions& opts = FileReadOptions{},
                                              uint64_t start = 0);

// The bytes of `input` after its first `skip` (which are read and dropped); DATA_LOSS naming
// `what` and `path` when it has fewer. A decompressed stream resumes this way at a saved
// offset: decompressing again is needed, parsing the records before the offset is not.
std::unique_ptr<ChunkSource> skip_chunks(const char* what, const std::string& path,
                                         std::unique_ptr<ChunkSource> input, uint64_t skip);

// As open_file_chunks, and *size the number of bytes the stream will hold, for readers that
// must know where the data ends before they read it (fixed_length_records): a regular
// file's size when it was opened (ending earlier is DATA_LOSS as above); a pipe or device
// (when allowed) is read whole first, at most opts.whole_file_limit bytes, else
// RESOURCE_EXHAUSTED naming the file.
std::unique_ptr<ChunkSource> open_sized_chunks(const char* what, const std::string& path,
                                               size_t chunk_size, std::shared_ptr<ChunkPool> pool,
                                               const FileReadOptions& opts, uint64_t* size);

// Bytes already in memory, cut into chunks of chunk_size (0: a single chunk). Tests and
// the fuzzers feed parsers through it to exercise records spanning chunk boundaries.
std::unique_ptr<ChunkSource> memory_chunks(const char* data, size_t size,
                                           std::shared_ptr<const Buffer> owner, size_t chunk_size);

// The decompressed bytes of `compressed`, in chunks of chunk_bytes(chunk_size). kNone
// returns the input itself. UNIMPLEMENTED when this build lacks the compression.
// content_checksum false: a zstd frame's content checksum (XXH64 of its decompressed bytes)
// is not verified, for callers that verify every byte they use themselves (the record
// CRCs); the frame structure is still checked. Where libzstd cannot skip it, it is checked.
std::unique_ptr<ChunkSource> decompress(Compression compression,
                                        std::unique_ptr<ChunkSource> compressed, size_t chunk_size,
                                        std::shared_ptr<ChunkPool> pool = nullptr,
                                        bool content_checksum = true);

}  // namespace dinput
