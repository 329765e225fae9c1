#include "io/input_stream.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <new>
#include <vector>

#include "core/quote.h"
#include "core/status.h"
#include "io/file_error.h"
#include "io/file_ops.h"
#include "io/huge_pages.h"
#include "io/zstd_frame.h"

#ifdef DINPUT_HAVE_ZSTD
// For ZSTD_d_forceIgnoreChecksum, a parameter of libzstd's advanced API (only the enum
// value is used: the shared library accepts it at run time since 1.4.7).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#include <zstd_errors.h>
#endif
#ifdef DINPUT_HAVE_ZLIB
#include <zlib.h>
#endif

namespace dinput {

namespace {

// Mapped files are not populated up front (MAP_POPULATE): their pages fault in as the
// reader gets to them, 16 at a time (the kernel's fault-around), and a fault holds only the
// mapping's own lock (Linux 6.4 and later; before, the mmap lock for reading, briefly).
// MAP_POPULATE held the process's mmap lock while it faulted in the whole file (1-3 ms for
// 8 MiB), and every mmap, munmap or mprotect of other threads waited behind it: the batching
// thread of W1 on mapped ZSTD files, growing its malloc heap, was stalled 6-11 ms an epoch,
// and the epoch took 10% longer (bench/README.md). A mapping read front to back is marked so
// (MADV_SEQUENTIAL): on a cold page cache its faults then read ahead in growing windows.
// (POSIX_FADV_WILLNEED for the whole file cost about 0.2 ms a call on a warm cache, 5% of a
// W1 epoch's CPU.)

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void raise_not_regular(const char* what, const std::string& path, mode_t mode) {
  raise(Code::kFailedPrecondition, what, ": ", quoted(path), " is not a regular file (it is ",
        file_kind(mode),
        "); pipes and devices are only read with the option allow_nonregular_files "
        "(dinput_options_set_allow_nonregular_files)");
}

// Opens a file for reading. The type is checked with stat() before the open: opening a
// FIFO waits for a writer, so a FIFO that is not allowed must not be opened at all. A path
// that stat() calls regular is opened with O_NONBLOCK (cleared afterwards), so that a FIFO
// put in its place in between cannot block either; fstat() then checks what was opened.
std::unique_ptr<FileDescriptor> open_for_reading(const char* what, const std::string& path,
                                                 bool allow_nonregular, struct stat* st) {
  struct stat before;
  if (fileops::stat(path.c_str(), &before) != 0) raise_file_error(what, path, errno);
  // open() succeeds on a directory; reading it would fail later with a vaguer error.
  if (S_ISDIR(before.st_mode)) raise_file_error(what, path, EISDIR);
  if (!S_ISREG(before.st_mode) && !allow_nonregular) raise_not_regular(what, path, before.st_mode);
  int flags = O_RDONLY | O_CLOEXEC;
  if (S_ISREG(before.st_mode)) flags |= O_NONBLOCK;
  int fd;
  do {
    fd = fileops::open(path.c_str(), flags);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) raise_file_error(what, path, errno);
  std::unique_ptr<FileDescriptor> file;
  try {
    file = std::make_unique<FileDescriptor>(fd);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (fileops::fstat(fd, st) != 0) raise_file_error(what, path, errno);
  if (S_ISDIR(st->st_mode)) raise_file_error(what, path, EISDIR);
  if (!S_ISREG(st->st_mode) && !allow_nonregular) raise_not_regular(what, path, st->st_mode);
  if (flags & O_NONBLOCK) {
    int fl = ::fcntl(fd, F_GETFL);
    if (fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) raise_file_error(what, path, errno);
  }
  return file;
}

[[noreturn]] void raise_read_error(const char* what, const std::string& path, uint64_t offset,
                                   int err) {
  raise(file_error_code(err), what, ": cannot read ", quoted(path), " at byte offset ", offset,
        ": ", std::strerror(err));
}

// A regular file that ends before the size it had when it was opened: someone truncated
// it while it was being read.
std::exception_ptr ended_early_error(const char* what, const std::string& path, uint64_t offset,
                                     uint64_t size) {
  return std::make_exception_ptr(Error(
      Code::kDataLoss,
      str_cat(what, ": ", quoted(path), " ends at byte offset ", offset, ", before the ", size,
              " bytes it had when it was opened: the file was truncated while it was being read")));
}

// A read-only mapping of a whole file; unmapped when the last record viewing it is gone.
class MappedFile final : public Buffer {
 public:
  MappedFile(void* addr, size_t size) : Buffer(addr, size, MemoryKind::kHost, -1) {}
  ~MappedFile() override { ::munmap(data_, size_); }
  bool maps_file() const override { return true; }
};

// Bytes read into memory (files that cannot be mapped).
class VectorBuffer final : public Buffer {
 public:
  explicit VectorBuffer(std::vector<char> bytes)
      : Buffer(nullptr, 0, MemoryKind::kHost, -1), bytes_(std::move(bytes)) {
    data_ = bytes_.data();
    size_ = bytes_.size();
  }

 private:
  std::vector<char> bytes_;
};

// nullptr when the file cannot be mapped (some file systems); callers then read it.
// `front_to_back`: the caller reads the whole file in order (the page cache is told so).
std::shared_ptr<const Buffer> try_map(int fd, size_t size, bool front_to_back) {
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  if (front_to_back) ::madvise(p, size, MADV_SEQUENTIAL);
  try {
    return std::make_shared<MappedFile>(p, size);
  } catch (...) {
    ::munmap(p, size);
    throw;
  }
}

// read() (offset < 0: a pipe or device) or pread() at `offset`, retrying interrupted
// calls; 0 at the end of the file. Errors name the file and the offset (`at`: the bytes
// before this call).
size_t read_some(const char* what, const std::string& path, int fd, char* dst, size_t n,
                 int64_t offset, uint64_t at) {
  for (;;) {
    ssize_t r = offset < 0 ? fileops::read(fd, dst, n)
                           : fileops::pread(fd, dst, n, static_cast<off_t>(offset));
    if (r >= 0) return static_cast<size_t>(r);
    if (errno != EINTR) raise_read_error(what, path, at, errno);
  }
}

// A file that is not regular, read to its end (at most `limit` bytes).
std::shared_ptr<const Buffer> read_all(const char* what, const std::string& path, int fd,
                                       uint64_t limit) {
  std::vector<char> bytes;
  size_t used = 0;
  for (;;) {
    if (bytes.size() - used < 65536) {
      size_t grown = std::max<size_t>(bytes.size() * 2, 1 << 20);
      if (grown > limit + 1) grown = static_cast<size_t>(std::max<uint64_t>(limit + 1, used + 1));
      bytes.resize(grown);
    }
    size_t got = read_some(what, path, fd, bytes.data() + used, bytes.size() - used, -1, used);
    if (got == 0) break;
    used += got;
    if (used > limit)
      raise(Code::kResourceExhausted, what, ": ", quoted(path),
            " is not a regular file, so it is read whole before "
            "it is cut into records, and it holds more than ",
            limit,
            " bytes (the limit is max_record_bytes, "
            "dinput_options_set_max_record_bytes)");
  }
  bytes.resize(used);
  bytes.shrink_to_fit();
  return std::make_shared<VectorBuffer>(std::move(bytes));
}

bool mappable(const struct stat& st) {
  return S_ISREG(st.st_mode) && st.st_size > 0 &&
         static_cast<unsigned long long>(st.st_size) <= static_cast<unsigned long long>(SIZE_MAX);
}

class MemoryChunks final : public ChunkSource {
 public:
  MemoryChunks(const char* data, size_t size, std::shared_ptr<const Buffer> owner, size_t chunk)
      : data_(data), size_(size), owner_(std::move(owner)), chunk_(chunk ? chunk : size) {}
  bool next(Chunk& out) override {
    if (pos_ >= size_) {
      owner_.reset();
      return false;
    }
    size_t n = std::min(chunk_, size_ - pos_);
    out = Chunk{data_ + pos_, n, owner_};
    pos_ += n;
    return true;
  }

 private:
  const char* data_;
  size_t size_;
  std::shared_ptr<const Buffer> owner_;
  size_t chunk_;
  size_t pos_ = 0;
};

// Chunk memory. Large chunks are mapped with MAP_POPULATE: the kernel then provides all
// pages in one call, where first writes to malloc'ed memory would fault page by page (on
// the virtual machines measured, 1 MiB chunks came out about 4.5x cheaper this way).
constexpr size_t kMapChunkAbove = size_t{64} << 10;

// Chunks that are whole multiples of a transparent huge page (the default chunk is one)
// are mapped at a huge-page boundary and asked for huge pages (MADV_HUGEPAGE: this works
// where the system's THP setting is "madvise", the usual default, as well as "always").
// A record shuffle keeps tens of chunks alive at once (a few survivors of each), so many
// chunks are fresh memory: with 4 KiB pages the kernel's page allocator and the page
// tables cost more than the zeroing, and the consumer, which reads records scattered over
// all of them, misses the TLB on most records. Where the kernel has no huge page at hand
// it falls back to small pages by itself.
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL
#endif

void* huge_chunk_alloc(size_t size) {
  // A buffer of one huge page that an earlier iterator used is faulted in already.
  if (size == kHugePageBytes)
    if (void* kept = take_kept_huge_page()) return kept;
  void* p = map_huge_page_aligned(size);
  if (!p) throw std::bad_alloc();
  // Fault everything in now, in one call, as MAP_POPULATE does for the other chunks (after
  // the advice: pages faulted in before it would be small ones). Without
  // MADV_POPULATE_WRITE, one write per page does it.
  if (::madvise(p, size, MADV_POPULATE_WRITE) != 0) {
    if (errno == ENOMEM) {  // out of memory, said now rather than by a fault later
      ::munmap(p, size);
      throw std::bad_alloc();
    }
    // EINVAL from kernels before 5.14, or a sandbox that refuses the call.
    for (size_t i = 0; i < size; i += 4096) static_cast<volatile char*>(p)[i] = 0;
  }
  return p;
}

void* chunk_alloc(size_t size) {
  if (size % kHugePageBytes == 0) return huge_chunk_alloc(size);
  if (size >= kMapChunkAbove) {
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_POPULATE
    flags |= MAP_POPULATE;
#endif
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
  void* p = std::aligned_alloc(64, (size + 63) / 64 * 64);
  if (!p) throw std::bad_alloc();
  return p;
}

void chunk_free(void* p, size_t size) {
  if (size == kHugePageBytes) {
    keep_huge_page(p);  // for the next iterator's buffers, or unmapped
  } else if (size >= kMapChunkAbove) {
    ::munmap(p, size);
  } else {
    std::free(p);
  }
}

// A buffer of a pool: its memory goes back to the pool, if the pool is still there.
class PooledBuffer final : public Buffer {
 public:
  PooledBuffer(void* data, size_t size, std::weak_ptr<ChunkPool> pool)
      : Buffer(data, size, MemoryKind::kHost, -1), pool_(std::move(pool)) {}
  ~PooledBuffer() override {
    if (auto pool = pool_.lock()) {
      pool->put(data_, size_);
    } else {
      chunk_free(data_, size_);
    }
  }

 private:
  std::weak_ptr<ChunkPool> pool_;
};

// The buffer of a stream's current chunk. It is written again in place when nobody else
// holds it any more (no record of the previous chunk is alive), else replaced by one from
// the pool (or a new one).
class ChunkBuffer {
 public:
  ChunkBuffer(size_t size, std::shared_ptr<ChunkPool> pool) : size_(size), pool_(std::move(pool)) {}
  char* acquire() {
    if (!buf_ || buf_.use_count() > 1) {
      buf_.reset();  // back to the pool first, if ours was the last hold on it
      buf_ = pool_ ? pool_->get(size_) : allocate_host(size_);
    } else {
      // The last other holder may have read the old bytes on another thread just before
      // dropping its reference (an acq_rel decrement); this fence orders our writes after
      // those reads.
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    return static_cast<char*>(buf_->data());
  }
  const std::shared_ptr<Buffer>& owner() const { return buf_; }
  size_t size() const { return size_; }
  void release() { buf_.reset(); }

  // The first `used` bytes of the buffer as a chunk. The stream's last chunk is usually
  // partly filled: when it is at most half full it is copied into a buffer of its size, so
  // that a small file does not pin a whole (populated) chunk for as long as its records
  // live, and the chunk goes back to the pool at once.
  Chunk take(size_t used, bool last) {
    if (last && used <= size_ / 2) {
      auto copy = allocate_host(used);
      std::memcpy(copy->data(), buf_->data(), used);
      release();
      return Chunk{static_cast<const char*>(copy->data()), used, std::move(copy)};
    }
    return Chunk{static_cast<const char*>(buf_->data()), used, buf_};
  }

 private:
  size_t size_;
  std::shared_ptr<ChunkPool> pool_;
  std::shared_ptr<Buffer> buf_;
};

// A file read in chunks: pread() at the stream's offset for a regular file (whose size at
// open is known: ending before it is an error), read() for pipes and devices.
class FdChunks final : public ChunkSource {
 public:
  // start: where a regular file's stream begins.
  FdChunks(const char* what, std::string path, std::unique_ptr<FileDescriptor> fd, size_t chunk,
           std::shared_ptr<ChunkPool> pool, bool regular, uint64_t size, uint64_t start = 0)
      : what_(what),
        path_(std::move(path)),
        fd_(std::move(fd)),
        buf_(chunk, std::move(pool)),
        regular_(regular),
        size_(size),
        offset_(start) {}
  bool next(Chunk& out) override {
    if (pending_) {
      buf_.release();
      std::rethrow_exception(pending_);
    }
    if (!fd_) return false;
    if (regular_ && offset_ >= size_) {
      fd_.reset();
      buf_.release();
      return false;
    }
    char* p = buf_.acquire();
    // Fill the whole chunk: fewer chunk boundaries means fewer records copied across them.
    // Short reads are retried until the chunk is full or the file ends. A regular file is
    // read up to its size when opened, so that the stream is what the file held then.
    const size_t want = regular_
                            ? static_cast<size_t>(std::min<uint64_t>(buf_.size(), size_ - offset_))
                            : buf_.size();
    // A read error or an early end is kept in pending_: the bytes read before it are handed
    // out first (the records in them are whole and checked) and the error at the next call,
    // so that every record before the point where the data stops is delivered.
    size_t got = 0;
    while (got < want) {
      size_t r = 0;
      try {
        r = read_some(what_, path_, fd_->get(), p + got, want - got,
                      regular_ ? static_cast<int64_t>(offset_ + got) : -1, offset_ + got);
      } catch (const Error&) {
        pending_ = std::current_exception();
        break;
      }
      if (r == 0) {  // the end of the file: early, for a regular one
        if (regular_) pending_ = ended_early_error(what_, path_, offset_ + got, size_);
        break;
      }
      got += r;
    }
    offset_ += got;
    // Close as soon as the data is in.
    if (got < want || pending_ || (regular_ && offset_ >= size_)) fd_.reset();
    if (got == 0) {
      buf_.release();
      if (pending_) std::rethrow_exception(pending_);
      return false;
    }
    out = buf_.take(got, /*last=*/!fd_);
    return true;
  }

 private:
  const char* what_;
  std::string path_;
  std::unique_ptr<FileDescriptor> fd_;
  ChunkBuffer buf_;
  bool regular_;
  uint64_t size_;  // of a regular file when it was opened
  uint64_t offset_;
  std::exception_ptr pending_;  // found after the bytes of the last chunk: raised at the next call
};

class SkipChunks final : public ChunkSource {
 public:
  SkipChunks(const char* what, std::string path, std::unique_ptr<ChunkSource> input, uint64_t skip)
      : what_(what), path_(std::move(path)), input_(std::move(input)), skip_(skip), left_(skip) {}
  bool next(Chunk& out) override {
    Chunk c;
    while (left_ > 0) {
      if (!input_->next(c))
        raise(Code::kDataLoss, what_, ": ", quoted(path_), " has ", skip_ - left_,
              " bytes but a saved iterator state is at byte ", skip_,
              " (did the file change since the save?)");
      if (c.size <= left_) {
        left_ -= c.size;
        continue;
      }
      out = Chunk{c.data + left_, c.size - static_cast<size_t>(left_), std::move(c.owner)};
      left_ = 0;
      return true;
    }
    return input_->next(out);
  }

 private:
  const char* what_;
  std::string path_;
  std::unique_ptr<ChunkSource> input_;
  uint64_t skip_, left_;
};

// Input side shared by the decompressors: the compressed chunks, fed in pieces no larger
// than `limit` (zlib counts in 32-bit integers; a mapped file may be larger).
class CompressedInput {
 public:
  CompressedInput(std::unique_ptr<ChunkSource> in, size_t limit)
      : in_(std::move(in)), limit_(limit) {}
  // The next piece of compressed bytes; false at the end of the file.
  bool fetch(const char** data, size_t* size) {
    while (rest_ == 0) {
      chunk_ = Chunk{};
      if (!in_ || !in_->next(chunk_)) {
        in_.reset();
        return false;
      }
      next_ = chunk_.data;
      rest_ = chunk_.size;
    }
    size_t n = std::min(rest_, limit_);
    *data = next_;
    *size = n;
    next_ += n;
    rest_ -= n;
    piece_start_ = handed_;
    handed_ += n;
    return true;
  }
  // Offset in the compressed file of the piece fetch() returned last.
  uint64_t piece_start() const { return piece_start_; }
  // What keeps that piece's bytes alive.
  const std::shared_ptr<const Buffer>& owner() const { return chunk_.owner; }
  void release() {
    in_.reset();
    chunk_ = Chunk{};
    rest_ = 0;
  }

 private:
  std::unique_ptr<ChunkSource> in_;
  size_t limit_;
  Chunk chunk_;
  const char* next_ = nullptr;
  size_t rest_ = 0;
  uint64_t piece_start_ = 0;
  uint64_t handed_ = 0;  // compressed bytes handed out so far
};

// What the decompressors share: compressed input, pooled output chunks, and the rule that
// bytes decoded before a stream error are delivered first (the records in them carry their
// own CRCs) and the error at the next call.
class DecodedChunks : public ChunkSource {
 protected:
  DecodedChunks(std::unique_ptr<ChunkSource> in, size_t input_limit, size_t chunk,
                std::shared_ptr<ChunkPool> pool)
      : in_(std::move(in), input_limit), out_(chunk, std::move(pool)) {}

  // Raises a deferred error, or says whether there may be more output.
  bool more() {
    if (io_error_) rethrow_io_error();
    if (error_) throw_error();
    return !done_;
  }
  // The next piece of compressed input (false at its end). An I/O error of the input after
  // `produced` bytes of this call's output is kept for the next call (io_failed() is then
  // true), so that those bytes are delivered first.
  bool fetch_input(const char** data, size_t* size, size_t produced) {
    try {
      return in_.fetch(data, size);
    } catch (const Error&) {
      if (produced == 0) throw;
      io_error_ = std::current_exception();
      done_ = true;
      in_.release();
      return false;
    }
  }
  bool io_failed() const { return io_error_ != nullptr; }
  // Hands out the `produced` bytes of the current output chunk, or ends the stream.
  bool deliver(Chunk& out, size_t produced, bool input_ended) {
    if (produced > 0) {
      out = out_.take(produced, input_ended || error_ || io_error_);
      return true;
    }
    done_ = true;
    out_.release();
    if (io_error_) rethrow_io_error();
    if (error_) throw_error();
    return false;
  }
  void fail(StreamCorrupt error) {
    error_ = std::make_unique<StreamCorrupt>(std::move(error));
    done_ = true;
    in_.release();
  }

  CompressedInput in_;
  ChunkBuffer out_;
  bool maybe_pending_ = false;  // the last call filled the output: the decoder may hold more

 private:
  [[noreturn]] void rethrow_io_error() {
    out_.release();
    std::rethrow_exception(io_error_);
  }
  [[noreturn]] void throw_error() {
    out_.release();
    StreamCorrupt e = *error_;
    error_.reset();
    throw e;
  }

  bool done_ = false;
  std::unique_ptr<StreamCorrupt> error_;  // found after some output: raised at the next call
  std::exception_ptr io_error_;           // the same for an I/O error of the compressed input
};

#ifdef DINPUT_HAVE_ZSTD

// The whole file is one zstd stream of one or more frames (as `zstd` writes, or `cat` of
// several .zst files). Skippable frames are passed over by libzstd.
//
// Stored blocks: zstd writes a block it cannot shrink as a raw block, its bytes as they are.
// A frame whose first block is raw is read here rather than by libzstd, and its raw blocks
// are handed out as views of the compressed file's chunks, which saves libzstd's two copies
// of every byte. At the first block that is not raw, libzstd takes over the rest of the
// frame (zstd_resume_header), with the frame's last window of bytes as its history. The
// frame's structure is checked as libzstd checks it (block sizes, content size, a frame
// cut short); the content checksum is skipped, which is why only callers that do not ask
// for it get stored blocks (docs/records.md).
class ZstdChunks final : public DecodedChunks {
 public:
  ZstdChunks(std::unique_ptr<ChunkSource> in, size_t chunk, std::shared_ptr<ChunkPool> pool,
             bool content_checksum)
      : DecodedChunks(std::move(in), SIZE_MAX, chunk, pool),
        pool_(std::move(pool)),
        ignore_checksum_(!content_checksum && zstd_can_skip_content_checksum()) {
    // A context of the iterator's previous file, whose window buffer is faulted in already;
    // reset to a fresh context's parameters (its buffers stay).
    if (pool_) dctx_ = static_cast<ZSTD_DCtx*>(pool_->take_decoder());
    if (dctx_ && ZSTD_isError(ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_and_parameters))) {
      ZSTD_freeDCtx(dctx_);
      dctx_ = nullptr;
    }
    if (!dctx_) {
      dctx_ = ZSTD_createDCtx();
      if (!dctx_) throw std::bad_alloc();
    }
    // Streams written with a long window (`zstd --long=31`) declare windows beyond libzstd's
    // default decoding limit of 2^27 bytes; they are accepted up to kZstdWindowLogMax.
    size_t rc = ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kZstdWindowLogMax);
    if (ZSTD_isError(rc)) {
      ZSTD_freeDCtx(dctx_);
      raise(Code::kInternal, "zstd: cannot set the window limit: ", ZSTD_getErrorName(rc));
    }
#ifdef ZSTD_d_forceIgnoreChecksum
    // The caller checks every byte itself (the record CRCs): hashing the whole stream once
    // more with XXH64 finds nothing new. A library that refuses the parameter checks.
    if (!content_checksum)
      ZSTD_DCtx_setParameter(dctx_, ZSTD_d_forceIgnoreChecksum, ZSTD_d_ignoreChecksum);
#endif
  }
  ~ZstdChunks() override {
    if (pool_) {
      pool_->keep_decoder(dctx_, [](void* d) { ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(d)); });
    } else {
      ZSTD_freeDCtx(dctx_);
    }
  }

  bool next(Chunk& out) override {
    if (!more()) return false;
    for (;;) {
      if (stored_) {
        switch (stored_step(out)) {
          case Step::kView:
            return true;
          case Step::kAgain:
            continue;
          case Step::kFailed:
            return deliver(out, 0, false);  // raises the error
        }
      }
      bool stored_next = false;
      const bool got = decode(out, &stored_next);
      if (!stored_next) return got;
    }
  }

 private:
  enum class Step { kView, kAgain, kFailed };

  [[noreturn]] static void raise_context_error(size_t rc) {
    raise(Code::kInternal,
          "zstd: cannot give the decoder a frame's history: ", ZSTD_getErrorName(rc));
  }
  StreamCorrupt corrupt(const char* why) const {
    return StreamCorrupt(
        str_cat("zstd: ", ZSTD_getErrorString(ZSTD_error_corruption_detected), " (", why, ")"),
        false, frame_start_);
  }

  // libzstd decodes into the current output chunk until it is full or the stream ends.
  // When a stored frame begins before anything was decoded into the chunk, *stored_next is
  // set and nothing is delivered; one that begins after some is left for the next call.
  bool decode(Chunk& out, bool* stored_next) {
    // A frame that starts here is looked at before an output chunk is taken for it.
    if (at_frame_start_ && !maybe_pending_ && prelude_in_.pos == prelude_in_.size) {
      if (ib_.pos == ib_.size && !refill(0)) return deliver(out, 0, true);  // ends between frames
      if (begin_stored_frame()) {
        *stored_next = true;
        return false;
      }
    }
    ZSTD_outBuffer ob{out_.acquire(), out_.size(), 0};
    bool input_ended = false;
    while (ob.pos < ob.size) {
      const bool prelude = prelude_in_.pos < prelude_in_.size;
      // Call again without new input while the last call filled the output: libzstd may
      // hold decoded bytes that it could not flush yet.
      if (!prelude && ib_.pos == ib_.size && !maybe_pending_ && !refill(ob.pos)) {
        if (io_failed()) break;
        if (in_frame_) fail(StreamCorrupt("the file ends inside a zstd frame", true, frame_start_));
        input_ended = true;
        break;
      }
      if (at_frame_start_ && !prelude && begin_stored_frame()) {
        if (ob.pos == 0) {
          *stored_next = true;
          return false;
        }
        break;
      }
      ZSTD_inBuffer& in = prelude ? prelude_in_ : ib_;
      const size_t in_before = in.pos, out_before = ob.pos;
      size_t r = ZSTD_decompressStream(dctx_, &ob, &in);
      if (ZSTD_isError(r)) {
        if (ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge) {
          fail(StreamCorrupt(
              str_cat("zstd: the frame declares a window larger than the ",
                      size_t{1} << kZstdWindowLogMax, " bytes (2^", kZstdWindowLogMax,
                      ") this reader accepts; the stream may "
                      "well be intact, but decoding it would take more memory than that limit"),
              false, frame_start_, /*window_too_large=*/true));
        } else {
          fail(StreamCorrupt(std::string("zstd: ") + ZSTD_getErrorName(r), false, frame_start_));
        }
        break;
      }
      // 0: a frame ended and everything it held was flushed. A call that moved nothing
      // (draining after a frame's end) answers with the next frame's header size instead,
      // which says nothing about whether a frame is open.
      const bool moved = in.pos != in_before || ob.pos != out_before;
      if (moved) {
        in_frame_ = r != 0;
        at_frame_start_ = r == 0;
        if (r == 0) {
          frame_start_ = in_.piece_start() + ib_.pos;
          std::vector<char>().swap(prefix_);  // the history of a resumed frame
        }
      }
      maybe_pending_ = ob.pos == ob.size && !(moved && r == 0);
    }
    return deliver(out, ob.pos, input_ended);
  }

  // The next piece of compressed input in ib_; false at its end (or at an I/O error once
  // `produced` bytes are waiting to be handed out, see fetch_input).
  bool refill(size_t produced) {
    const char* data;
    size_t size;
    if (!fetch_input(&data, &size, produced)) return false;
    ib_ = ZSTD_inBuffer{data, size, 0};
    return true;
  }

  // Starts the frame at ib_.pos as a stored one when zstd_stored_frame_at says so for the
  // bytes of this piece; otherwise leaves it to libzstd, which also reports what is wrong
  // with a bad header.
  bool begin_stored_frame() {
    ZstdFrameHeader h;
    if (!zstd_stored_frame_at(static_cast<const unsigned char*>(ib_.src) + ib_.pos,
                              ib_.size - ib_.pos, ignore_checksum_, &h))
      return false;
    frame_ = h;
    ib_.pos += h.header_bytes;
    stored_ = true;
    at_frame_start_ = false;
    decoded_ = 0;
    block_left_ = 0;
    last_block_ = false;
    checksum_left_ = 0;
    header_have_ = 0;
    return true;
  }

  // One step through a stored frame: a view of (part of) a raw block, or a block header
  // read, a checksum passed over, the frame handed to libzstd at a block that is not raw.
  Step stored_step(Chunk& out) {
    // An I/O error is raised now: this call has handed out nothing.
    if (ib_.pos == ib_.size && !refill(0)) {
      fail(StreamCorrupt("the file ends inside a zstd frame", true, frame_start_));
      return Step::kFailed;
    }
    const auto* p = static_cast<const unsigned char*>(ib_.src) + ib_.pos;
    const size_t avail = ib_.size - ib_.pos;
    if (block_left_ > 0) {
      const auto n = static_cast<size_t>(std::min<uint64_t>(block_left_, avail));
      const auto* data = reinterpret_cast<const char*>(p);
      out = Chunk{data, n, std::make_shared<BufferPart>(data, n, in_.owner())};
      ib_.pos += n;
      block_left_ -= n;
      decoded_ += n;
      remember(out);
      if (block_left_ == 0 && last_block_) end_blocks();
      return Step::kView;
    }
    if (checksum_left_ > 0) {
      const size_t n = std::min(checksum_left_, avail);
      ib_.pos += n;
      checksum_left_ -= n;
      if (checksum_left_ == 0) end_stored_frame();
      return Step::kAgain;
    }
    // A block header, which may straddle two pieces of input.
    const size_t n = std::min(kZstdBlockHeaderBytes - header_have_, avail);
    std::memcpy(header_ + header_have_, p, n);
    header_have_ += n;
    ib_.pos += n;
    if (header_have_ < kZstdBlockHeaderBytes) return Step::kAgain;
    header_have_ = 0;
    const ZstdBlockHeader block = read_zstd_block_header(header_);
    if (block.type != ZstdBlockType::kRle && block.size > frame_.block_size_max()) {
      fail(corrupt("a block larger than the frame allows"));
      return Step::kFailed;
    }
    if (block.type != ZstdBlockType::kRaw) {
      resume_in_libzstd();
      return Step::kAgain;
    }
    if (frame_.has_content_size && decoded_ + block.size > frame_.content_size) {
      fail(corrupt("more bytes than the frame's declared content size"));
      return Step::kFailed;
    }
    block_left_ = block.size;
    last_block_ = block.last;
    if (block.size == 0 && block.last) end_blocks();
    return Step::kAgain;
  }

  // Keeps the views handed out as long as they may be needed as the history of blocks that
  // libzstd decodes (the frame's window).
  void remember(const Chunk& view) {
    history_.push_back(view);
    history_bytes_ += view.size;
    while (!history_.empty() && history_bytes_ - history_.front().size >= frame_.window) {
      history_bytes_ -= history_.front().size;
      history_.pop_front();
    }
  }

  void end_blocks() {
    if (frame_.has_content_size && decoded_ != frame_.content_size) {
      fail(corrupt("fewer bytes than the frame's declared content size"));
      return;
    }
    checksum_left_ = frame_.has_checksum ? 4 : 0;
    if (checksum_left_ == 0) end_stored_frame();
  }

  void end_stored_frame() {
    stored_ = false;
    at_frame_start_ = true;
    frame_start_ = in_.piece_start() + ib_.pos;
    history_.clear();
    history_bytes_ = 0;
  }

  // Hands the rest of the stored frame to libzstd: a frame header standing for it, then the
  // block header just read, then the blocks; the frame's last window of bytes is its prefix.
  void resume_in_libzstd() {
    const auto keep = static_cast<size_t>(std::min<uint64_t>(frame_.window, decoded_));
    prefix_.resize(keep);
    size_t skip = static_cast<size_t>(history_bytes_) - keep, at = 0;
    for (const Chunk& c : history_) {
      const size_t from = std::min(skip, c.size);
      skip -= from;
      std::memcpy(prefix_.data() + at, c.data + from, c.size - from);
      at += c.size - from;
    }
    history_.clear();
    history_bytes_ = 0;
    if (keep > 0) {
      const size_t rc = ZSTD_DCtx_refPrefix(dctx_, prefix_.data(), keep);
      if (ZSTD_isError(rc)) raise_context_error(rc);
    }
    prelude_ = zstd_resume_header(frame_, decoded_);
    prelude_.append(reinterpret_cast<const char*>(header_), kZstdBlockHeaderBytes);
    prelude_in_ = ZSTD_inBuffer{prelude_.data(), prelude_.size(), 0};
    stored_ = false;
    in_frame_ = true;
    maybe_pending_ = false;
  }

  std::shared_ptr<ChunkPool> pool_;  // where the context goes when the stream does
  ZSTD_DCtx* dctx_ = nullptr;
  const bool ignore_checksum_;  // frames with a content checksum may be stored ones
  ZSTD_inBuffer ib_{nullptr, 0, 0};
  bool in_frame_ = false;
  bool at_frame_start_ = true;  // ib_.pos is where a frame begins (or the input ends)
  uint64_t frame_start_ = 0;    // compressed offset where the current frame began

  // The stored frame being read.
  bool stored_ = false;
  ZstdFrameHeader frame_;
  uint64_t decoded_ = 0;     // its bytes handed out
  uint64_t block_left_ = 0;  // of the raw block being handed out
  bool last_block_ = false;
  size_t checksum_left_ = 0;
  unsigned char header_[kZstdBlockHeaderBytes] = {};
  size_t header_have_ = 0;
  std::deque<Chunk> history_;  // the views handed out last, a window's worth
  uint64_t history_bytes_ = 0;

  // A stored frame that libzstd goes on with: what it reads first, and its history.
  std::string prelude_;
  ZSTD_inBuffer prelude_in_{nullptr, 0, 0};
  std::vector<char> prefix_;
};

#endif  // DINPUT_HAVE_ZSTD

#ifdef DINPUT_HAVE_ZLIB

// One gzip member, or several concatenated (as `cat a.gz b.gz` and gzip itself accept).
// Bytes after a member that do not start another member are corrupt data.
class GzipChunks final : public DecodedChunks {
 public:
  GzipChunks(std::unique_ptr<ChunkSource> in, size_t chunk, std::shared_ptr<ChunkPool> pool)
      : DecodedChunks(std::move(in), size_t{1} << 30, std::min<size_t>(chunk, size_t{1} << 30),
                      std::move(pool)) {
    // 15 + 16: a 32 KiB window and a gzip header and trailer (not raw deflate or zlib).
    int rc = inflateInit2(&zs_, 15 + 16);
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK)
      raise(Code::kInternal, "zlib inflateInit2 failed: ", zs_.msg ? zs_.msg : "unknown error");
  }
  ~GzipChunks() override { inflateEnd(&zs_); }

  bool next(Chunk& out) override {
    if (!more()) return false;
    char* dst = out_.acquire();
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    zs_.avail_out = static_cast<uInt>(out_.size());
    bool input_ended = false;
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && !maybe_pending_) {
        const char* data;
        size_t size;
        if (!fetch_input(&data, &size, out_.size() - zs_.avail_out)) {
          if (io_failed()) break;
          if (in_member_)
            fail(StreamCorrupt("the file ends inside a gzip member", true, member_start_));
          input_ended = true;
          break;
        }
        zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
        zs_.avail_in = static_cast<uInt>(size);
        piece_size_ = size;
      }
      bool had_input = zs_.avail_in > 0;
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // The member's trailer (CRC-32 and size) checked out; another member may follow.
        in_member_ = false;
        maybe_pending_ = false;
        member_start_ = in_.piece_start() + (piece_size_ - zs_.avail_in);
        inflateReset(&zs_);
      } else if (rc == Z_OK) {
        in_member_ = true;
        maybe_pending_ = zs_.avail_out == 0;
      } else if (rc == Z_BUF_ERROR && !had_input) {
        maybe_pending_ = false;  // nothing was held back; fetch more input
      } else {
        std::string detail = zs_.msg ? zs_.msg
                                     : (rc == Z_BUF_ERROR ? "no progress possible"
                                                          : "error code " + std::to_string(rc));
        fail(StreamCorrupt("gzip: " + detail, false, member_start_));
        break;
      }
    }
    return deliver(out, out_.size() - zs_.avail_out, input_ended);
  }

 private:
  z_stream zs_{};
  bool in_member_ = false;
  size_t piece_size_ = 0;      // of the compressed piece being inflated
  uint64_t member_start_ = 0;  // compressed offset where the current member began
};

#endif  // DINPUT_HAVE_ZLIB

}  // namespace

std::shared_ptr<const Buffer> map_file(int fd, size_t size) {
  return try_map(fd, size, /*front_to_back=*/false);
}

ChunkPool::~ChunkPool() {
  for (auto& f : free_) chunk_free(f.first, f.second);
  for (auto& d : decoders_) d.second(d.first);
}

void* ChunkPool::take_decoder() {
  std::lock_guard<std::mutex> lock(mu_);
  if (decoders_.empty()) return nullptr;
  void* d = decoders_.back().first;
  decoders_.pop_back();
  return d;
}

void ChunkPool::keep_decoder(void* decoder, DestroyDecoder destroy) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (decoders_.size() < kKeptDecoders) {
      // Runs in a stream's destructor: when the list cannot grow, the decoder is destroyed.
      try {
        decoders_.emplace_back(decoder, destroy);
        return;
      } catch (const std::bad_alloc&) {
      }
    }
  }
  destroy(decoder);
}

std::shared_ptr<Buffer> ChunkPool::get(size_t size) {
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = free_.size(); i-- > 0;) {
      if (free_[i].second != size) continue;
      p = free_[i].first;
      free_bytes_ -= size;
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (!p) p = chunk_alloc(size ? size : 1);
  try {
    return std::make_shared<PooledBuffer>(p, size, weak_from_this());
  } catch (...) {
    chunk_free(p, size ? size : 1);
    throw;
  }
}

void ChunkPool::put(void* data, size_t size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_bytes_ + size <= max_free_bytes_) {
      // Runs in a buffer's destructor: when the list cannot grow (out of memory), the
      // memory is freed instead of kept.
      try {
        free_.emplace_back(data, size);
        free_bytes_ += size;
        return;
      } catch (const std::bad_alloc&) {
      }
    }
  }
  chunk_free(data, size);
}

size_t ChunkPool::free_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return free_bytes_;
}

std::shared_ptr<ChunkPool> make_chunk_pool(size_t chunk_size) {
  // Steady state needs a few; the cap bounds what an idle iterator keeps.
  return std::make_shared<ChunkPool>(
      std::max<size_t>(size_t{32} << 20, 2 * chunk_bytes(chunk_size)));
}

namespace {

// The chunks of a regular file opened as `fd` with status `st`.
std::unique_ptr<ChunkSource> regular_file_chunks(const char* what, const std::string& path,
                                                 std::unique_ptr<FileDescriptor> fd,
                                                 const struct stat& st, size_t chunk_size,
                                                 std::shared_ptr<ChunkPool> pool,
                                                 const FileReadOptions& opts, uint64_t start = 0) {
  const auto size = static_cast<uint64_t>(st.st_size);
  if (start > size)
    raise(Code::kDataLoss, what, ": ", quoted(path), " has ", size,
          " bytes but a saved iterator state is at byte ", start,
          " (did the file change since the save?)");
  if (size == start) return memory_chunks(nullptr, 0, nullptr, 0);
  if (opts.map && mappable(st)) {
    if (auto mapped = try_map(fd->get(), static_cast<size_t>(st.st_size), /*front_to_back=*/true))
      return memory_chunks(static_cast<const char*>(mapped->data()) + start,
                           mapped->size() - static_cast<size_t>(start), mapped, 0);
  }
  return std::make_unique<FdChunks>(what, path, std::move(fd), chunk_size, std::move(pool), true,
                                    size, start);
}

}  // namespace

std::unique_ptr<ChunkSource> open_file_chunks(const char* what, const std::string& path,
                                              size_t chunk_size, std::shared_ptr<ChunkPool> pool,
                                              const FileReadOptions& opts, uint64_t start) {
  chunk_size = chunk_bytes(chunk_size);
  struct stat st;
  auto fd = open_for_reading(what, path, opts.allow_nonregular, &st);
  if (S_ISREG(st.st_mode))
    return regular_file_chunks(what, path, std::move(fd), st, chunk_size, std::move(pool), opts,
                               start);
  std::unique_ptr<ChunkSource> all =
      std::make_unique<FdChunks>(what, path, std::move(fd), chunk_size, std::move(pool), false, 0);
  return start ? skip_chunks(what, path, std::move(all), start) : std::move(all);
}

std::unique_ptr<ChunkSource> skip_chunks(const char* what, const std::string& path,
                                         std::unique_ptr<ChunkSource> input, uint64_t skip) {
  return std::make_unique<SkipChunks>(what, path, std::move(input), skip);
}

std::unique_ptr<ChunkSource> open_sized_chunks(const char* what, const std::string& path,
                                               size_t chunk_size, std::shared_ptr<ChunkPool> pool,
                                               const FileReadOptions& opts, uint64_t* size) {
  chunk_size = chunk_bytes(chunk_size);
  struct stat st;
  auto fd = open_for_reading(what, path, opts.allow_nonregular, &st);
  if (S_ISREG(st.st_mode)) {
    *size = static_cast<uint64_t>(st.st_size);
    return regular_file_chunks(what, path, std::move(fd), st, chunk_size, std::move(pool), opts);
  }
  auto whole = read_all(what, path, fd->get(), opts.whole_file_limit);
  *size = whole->size();
  return memory_chunks(static_cast<const char*>(whole->data()), whole->size(), whole, 0);
}

std::unique_ptr<ChunkSource> memory_chunks(const char* data, size_t size,
                                           std::shared_ptr<const Buffer> owner, size_t chunk_size) {
  return std::make_unique<MemoryChunks>(data, size, std::move(owner), chunk_size);
}

std::unique_ptr<ChunkSource> decompress(Compression compression,
                                        std::unique_ptr<ChunkSource> compressed, size_t chunk_size,
                                        std::shared_ptr<ChunkPool> pool, bool content_checksum) {
  chunk_size = chunk_bytes(chunk_size);
  check_compression("records", compression);
  switch (compression) {
    case Compression::kNone:
      return compressed;
#ifdef DINPUT_HAVE_ZSTD
    case Compression::kZstd:
      return std::make_unique<ZstdChunks>(std::move(compressed), chunk_size, std::move(pool),
                                          content_checksum);
#endif
#ifdef DINPUT_HAVE_ZLIB
    case Compression::kGzip:
      return std::make_unique<GzipChunks>(std::move(compressed), chunk_size, std::move(pool));
#endif
    default:
      break;
  }
  raise(Code::kInternal, "records: unhandled compression ", static_cast<int>(compression));
}

}  // namespace dinput
