#include "io/record_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <vector>

#include "core/quote.h"
#include "io/crc32c.h"
#include "io/file_error.h"
#include "io/file_ops.h"
#include "io/record_reader.h"

#ifdef DINPUT_HAVE_ZSTD
#include <zstd.h>
#endif
#ifdef DINPUT_HAVE_ZLIB
#include <zlib.h>
#endif

namespace dinput {

namespace {

constexpr const char* kWhat = "record writer";

void write_all(int fd, const std::string& path, const char* p, size_t n) {
  while (n) {
    ssize_t r = fileops::write(fd, p, std::min<size_t>(n, size_t{1} << 30));
    if (r < 0) {
      if (errno == EINTR) continue;
      raise_file_error(kWhat, "write", path, errno);
    }
    if (r == 0)
      raise(Code::kDataLoss, kWhat, ": cannot write '", path, "': the file accepts no more bytes");
    p += r;
    n -= static_cast<size_t>(r);
  }
}

void store_le64(char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void store_le32(char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

}  // namespace

// Collects the framed bytes in a staging buffer and hands them on in large blocks: small
// records then cost one memcpy, not a system call or a compressor call each.
class RecordWriter::Encoder {
 public:
  static constexpr size_t kStageBytes = size_t{256} << 10;

  Encoder(int fd, const std::string& path) : fd_(fd), path_(path) { stage_.reserve(kStageBytes); }
  virtual ~Encoder() = default;

  void put(const char* p, size_t n) {
    if (stage_.size() + n > kStageBytes) drain();
    if (n >= kStageBytes) {
      consume(p, n);  // a big record goes on directly, without the copy
      return;
    }
    stage_.insert(stage_.end(), p, p + n);
  }
  void flush() {
    drain();
    end_block(/*final=*/false);
  }
  void finish() {
    drain();
    end_block(/*final=*/true);
  }

 protected:
  // Takes n more bytes of the record stream.
  virtual void consume(const char* p, size_t n) = 0;
  // Pushes out everything consumed so far; final also ends the compressed stream.
  virtual void end_block(bool final) = 0;
  void emit(const char* p, size_t n) { write_all(fd_, path_, p, n); }

  int fd_;
  const std::string& path_;

 private:
  void drain() {
    if (stage_.empty()) return;
    consume(stage_.data(), stage_.size());
    stage_.clear();
  }
  std::vector<char> stage_;
};

namespace {

class PlainEncoder final : public RecordWriter::Encoder {
 public:
  using Encoder::Encoder;

 protected:
  void consume(const char* p, size_t n) override { emit(p, n); }
  void end_block(bool) override {}
};

#ifdef DINPUT_HAVE_ZSTD

class ZstdEncoder final : public RecordWriter::Encoder {
 public:
  ZstdEncoder(int fd, const std::string& path, int level, int window_log)
      : Encoder(fd, path), cctx_(ZSTD_createCCtx()), out_(ZSTD_CStreamOutSize()) {
    if (!cctx_) throw std::bad_alloc();
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level));
    if (window_log != 0) {
      // A larger window finds repeats further back (records that share long content far
      // apart); long-distance matching is what makes such a window pay off.
      check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, window_log));
      check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_enableLongDistanceMatching, 1));
    }
    // Frame checksums, as the zstd command writes by default, so that `zstd -d` and
    // `zstd -t` verify the stream too.
    check(ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1));
  }
  ~ZstdEncoder() override { ZSTD_freeCCtx(cctx_); }

 protected:
  void consume(const char* p, size_t n) override {
    ZSTD_inBuffer in{p, n, 0};
    while (in.pos < in.size) {
      ZSTD_outBuffer out{out_.data(), out_.size(), 0};
      check(ZSTD_compressStream2(cctx_, &out, &in, ZSTD_e_continue));
      emit(out_.data(), out.pos);
    }
  }
  void end_block(bool final) override {
    ZSTD_inBuffer in{nullptr, 0, 0};
    for (;;) {
      ZSTD_outBuffer out{out_.data(), out_.size(), 0};
      size_t left =
          check(ZSTD_compressStream2(cctx_, &out, &in, final ? ZSTD_e_end : ZSTD_e_flush));
      emit(out_.data(), out.pos);
      if (left == 0) return;
    }
  }

 private:
  size_t check(size_t rc) {
    if (ZSTD_isError(rc))
      raise(Code::kInternal, kWhat, ": zstd compression of '", path_,
            "' failed: ", ZSTD_getErrorName(rc));
    return rc;
  }
  ZSTD_CCtx* cctx_;
  std::vector<char> out_;
};

#endif  // DINPUT_HAVE_ZSTD

#ifdef DINPUT_HAVE_ZLIB

class GzipEncoder final : public RecordWriter::Encoder {
 public:
  GzipEncoder(int fd, const std::string& path, int level)
      : Encoder(fd, path), out_(size_t{256} << 10) {
    // 15 + 16: a 32 KiB window with a gzip header and trailer; memLevel 8 is zlib's default.
    int rc = deflateInit2(&zs_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK)
      raise(Code::kInternal, kWhat, ": zlib deflateInit2 failed for '", path_, "' (code ", rc, ")");
  }
  ~GzipEncoder() override { deflateEnd(&zs_); }

 protected:
  void consume(const char* p, size_t n) override {
    while (n) {
      size_t piece = std::min<size_t>(n, size_t{1} << 30);  // zlib counts in 32-bit integers
      zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(p));
      zs_.avail_in = static_cast<uInt>(piece);
      run(Z_NO_FLUSH);
      p += piece;
      n -= piece;
    }
  }
  void end_block(bool final) override {
    zs_.next_in = nullptr;
    zs_.avail_in = 0;
    run(final ? Z_FINISH : Z_SYNC_FLUSH);
  }

 private:
  // Deflates until the input is consumed and, for a flush, everything is out.
  void run(int mode) {
    for (;;) {
      zs_.next_out = reinterpret_cast<Bytef*>(out_.data());
      zs_.avail_out = static_cast<uInt>(out_.size());
      int rc = deflate(&zs_, mode);
      if (rc == Z_STREAM_ERROR)
        raise(Code::kInternal, kWhat, ": zlib compression of '", path_,
              "' failed: ", zs_.msg ? zs_.msg : "stream error");
      emit(out_.data(), out_.size() - zs_.avail_out);
      if (mode == Z_FINISH ? rc == Z_STREAM_END : (zs_.avail_in == 0 && zs_.avail_out != 0)) return;
    }
  }
  z_stream zs_{};
  std::vector<char> out_;
};

#endif  // DINPUT_HAVE_ZLIB

}  // namespace

RecordWriter::RecordWriter(std::string path, Compression compression, int level,
                           int zstd_window_log)
    : path_(std::move(path)) {
  check_compression(kWhat, compression);
  // The readers accept windows up to 2^31 (2^30 where size_t is 32 bits).
  const int max_window_log = sizeof(size_t) >= 8 ? 31 : 30;
  DINPUT_CHECK_ARG(
      zstd_window_log == 0 || (zstd_window_log >= 10 && zstd_window_log <= max_window_log), kWhat,
      " ", quoted(path_), ": the zstd window log must be 10..", max_window_log,
      " (0: the level's), got ", zstd_window_log);
  if (compression == Compression::kZstd) {
    DINPUT_CHECK_ARG(level >= 0 && level <= 19, kWhat, " ", quoted(path_),
                     ": the zstd level must be 1..19 (0: the default 3), got ", level);
    if (level == 0) level = 3;
  } else if (compression == Compression::kGzip) {
    DINPUT_CHECK_ARG(level >= 0 && level <= 9, kWhat, " ", quoted(path_),
                     ": the gzip level must be 1..9 (0: the default 6), got ", level);
    if (level == 0) level = 6;
  }
  file_ = std::make_unique<OutputFile>(kWhat, path_);
  const int fd = file_->fd();
  switch (compression) {
#ifdef DINPUT_HAVE_ZSTD
    case Compression::kZstd:
      encoder_ = std::make_unique<ZstdEncoder>(fd, path_, level, zstd_window_log);
      break;
#endif
#ifdef DINPUT_HAVE_ZLIB
    case Compression::kGzip:
      encoder_ = std::make_unique<GzipEncoder>(fd, path_, level);
      break;
#endif
    default:
      encoder_ = std::make_unique<PlainEncoder>(fd, path_);
      break;
  }
}

RecordWriter::~RecordWriter() {
  try {
    close();
  } catch (...) {
    // Documented: an error at this point is lost; close() reports it.
  }
}

void RecordWriter::check_usable(const char* op) {
  if (closed_)
    raise(Code::kFailedPrecondition, kWhat, ": cannot ", op, " '", path_,
          "': the writer is closed");
  if (failed_) throw *failed_;
}

template <typename Body>
void RecordWriter::guarded(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    failed_ = e;
    throw;
  } catch (const std::bad_alloc&) {
    failed_ =
        Error(Code::kResourceExhausted, str_cat(kWhat, ": out of memory writing '", path_, "'"));
    throw *failed_;
  }
}

void RecordWriter::write(const void* data, size_t size) {
  check_usable("write to");
  char header[kRecordHeaderBytes];
  store_le64(header, size);
  store_le32(header + 8, crc32c::mask(crc32c::value8(header)));
  char footer[kRecordFooterBytes];
  store_le32(footer, crc32c::mask(crc32c::value(data, size)));
  guarded([&] {
    encoder_->put(header, sizeof header);
    if (size) encoder_->put(static_cast<const char*>(data), size);
    encoder_->put(footer, sizeof footer);
  });
}

void RecordWriter::flush() {
  check_usable("flush");
  guarded([&] { encoder_->flush(); });
}

void RecordWriter::close() {
  if (closed_) return;
  closed_ = true;
  if (!failed_) {
    try {
      guarded([&] { encoder_->finish(); });
    } catch (...) {
      // kept in failed_, reported below after the file is closed
    }
  }
  encoder_.reset();
  if (failed_) {
    file_->discard();  // a file with a failed write would only fail later, far from here
    throw *failed_;
  }
  try {
    file_->commit();
  } catch (const Error& e) {
    failed_ = e;
    throw;
  }
}

void RecordWriter::discard() noexcept {
  if (closed_) return;
  closed_ = true;
  encoder_.reset();
  file_->discard();
}

}  // namespace dinput
