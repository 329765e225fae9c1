#include "io/record_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "core/quote.h"
#include "core/status.h"
#include "io/crc32c.h"
#include "io/file_error.h"
#include "io/file_ops.h"

namespace dinput {

namespace {

// Byte-wise so that the format stays little-endian on any host. Written out rather than as a
// loop: compilers turn this form into a single load on little-endian machines at -O2 too,
// where the loop stayed a loop (57 instructions per record under RelWithDebInfo).
uint64_t load_le64(const char* p) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint64_t>(u[0]) | static_cast<uint64_t>(u[1]) << 8 |
         static_cast<uint64_t>(u[2]) << 16 | static_cast<uint64_t>(u[3]) << 24 |
         static_cast<uint64_t>(u[4]) << 32 | static_cast<uint64_t>(u[5]) << 40 |
         static_cast<uint64_t>(u[6]) << 48 | static_cast<uint64_t>(u[7]) << 56;
}

uint32_t load_le32(const char* p) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | static_cast<uint32_t>(u[1]) << 8 |
         static_cast<uint32_t>(u[2]) << 16 | static_cast<uint32_t>(u[3]) << 24;
}

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

// A length as the file states it; a claim of 2^63 or more is most likely a negative number
// written as unsigned, and the hex form shows that.
std::string claim(uint64_t len) {
  if (len < (uint64_t{1} << 63)) return str_cat(len);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(len));
  return str_cat(len, " (", buf, ")");
}

// Copies (dst not null) or passes over up to n bytes of a chunk stream from `cur` at `pos`
// on, calling `advance` (which replaces cur and resets pos) when a chunk is used up; fewer
// than n only at the end of the stream. The readers' one way across chunk boundaries.
template <typename Advance>
uint64_t consume_bytes(const Chunk& cur, size_t& pos, char* dst, uint64_t n, Advance advance) {
  uint64_t done = 0;
  for (;;) {
    const size_t take = static_cast<size_t>(std::min<uint64_t>(cur.size - pos, n - done));
    if (dst && take) std::memcpy(dst + done, cur.data + pos, take);
    pos += take;
    done += take;
    if (done == n || !advance()) return done;
  }
}

// The first header of a plain file failed its CRC, or the file ended inside it (`n` bytes
// of it read, 1 to 12). A file that is no record file at all fails exactly there, so the
// message says what the file looks like when its first bytes tell: a compressed file read
// without its compression (gzip's magic 1f 8b, zstd's 28 b5 2f fd), or text. Otherwise it
// is "": the bytes tell nothing.
std::string not_a_record_file(const std::string& path, const char* header, size_t n) {
  const unsigned char* u = reinterpret_cast<const unsigned char*>(header);
  const char* format = nullptr;
  const char* name = nullptr;
  if (n >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
    format = "gzip";
    name = "GZIP";
  } else if (n >= 4 && u[0] == 0x28 && u[1] == 0xb5 && u[2] == 0x2f && u[3] == 0xfd) {
    format = "zstd";
    name = "ZSTD";
  }
  if (format) {
    return str_cat(
        "records: ", quoted(path), " starts with the ", format,
        " magic bytes where the record at byte offset 0 belongs, so it is most likely a ", format,
        "-compressed record file, but it is read without compression: set the compression to ",
        name, " (DINPUT_COMPRESSION_", name, " with dinput_records_options_set_compression; ",
        "compression=\"", name, "\" in the dinput tool's records())");
  }
  bool text = true;
  for (size_t i = 0; i < n; ++i) {
    text = text && ((u[i] >= 0x20 && u[i] < 0x7f) || u[i] == '\t' || u[i] == '\n' || u[i] == '\r');
  }
  if (text) {
    return str_cat("records: ", quoted(path), " is not a TFRecord file: it starts with text (",
                   quoted(std::string_view(header, n)),
                   ") where the header of the record at byte offset 0 belongs (text files are read "
                   "with text_lines)");
  }
  return "";
}

// A header whose length field matches its CRC and is within the limit.
bool plausible_header(const char* header, uint64_t max_record_bytes) {
  return load_le64(header) <= max_record_bytes &&
         load_le32(header + 8) == crc32c::mask(crc32c::value8(header));
}

}  // namespace

RecordParser::RecordParser(std::string path, std::unique_ptr<ChunkSource> input, const char* stream,
                           bool skip_corrupt, uint64_t max_record_bytes, uint64_t start)
    : path_(std::move(path)),
      input_(std::move(input)),
      stream_(stream),
      skip_corrupt_(skip_corrupt),
      max_record_bytes_(
          std::min<uint64_t>(max_record_bytes, static_cast<uint64_t>(kMaxMaxRecordBytes))),
      base_(start) {}

bool RecordParser::next(RecordView& out) {
  spill_.reset();  // the previous copied record now lives on in its tensor only
  while (!done_) {
    uint64_t start = offset();
    const char* pending = nullptr;
    if (have_pending_) {
      have_pending_ = false;
      start = pending_start_;
      pending = pending_;
    }
    Step s;
    try {
      s = step(start, pending, out);
    } catch (const StreamCorrupt& e) {
      const char* unit = stream_ && std::strcmp(stream_, "gzip") == 0 ? "member" : "frame";
      if (e.window_too_large()) {
        close();
        raise(Code::kResourceExhausted, "records: cannot decode the ", stream_ ? stream_ : "",
              " stream of ", quoted(path_), " from the ", unit, " at compressed byte offset ",
              e.compressed_offset(), " (the record at byte offset ", start,
              " of the decompressed stream): ", e.what());
      }
      // What was read of the stream from this record on is lost with it.
      const uint64_t lost = offset() > start ? offset() - start : 0;
      s = fail(
          true, lost,
          str_cat("records: ", e.truncated() ? "truncated " : "corrupt ", stream_ ? stream_ : "",
                  " stream in ", quoted(path_), ", in the record at byte offset ", start,
                  " of the decompressed stream: ", e.what(), " (in the ", unit,
                  " or trailing bytes starting at compressed byte offset ", e.compressed_offset(),
                  " of the file)"));
    } catch (const std::bad_alloc&) {
      close();
      raise(Code::kResourceExhausted, "records: out of memory for the record ", where(start));
    }
    if (s == Step::kRecord) return true;
  }
  return false;
}

bool RecordParser::skip() {
  if (skip_corrupt_) return RecordSource::skip();
  passing_ = true;
  RecordView view;
  bool got;
  try {
    got = next(view);
  } catch (...) {
    passing_ = false;
    throw;
  }
  passing_ = false;
  return got;
}

bool RecordParser::plausible(const char* header) const {
  return plausible_header(header, max_record_bytes_);
}

RecordParser::Step RecordParser::step(uint64_t start, const char* pending, RecordView& out) {
  char header_copy[kRecordHeaderBytes];
  const char* header;
  if (pending) {
    header = pending;
  } else if (avail() >= kRecordHeaderBytes) {  // the common case: no copy
    header = cur_.data + pos_;
    pos_ += kRecordHeaderBytes;
  } else {
    const uint64_t got = consume(header_copy, kRecordHeaderBytes);
    if (got == 0) {
      close();
      return Step::kEnd;
    }
    if (got < kRecordHeaderBytes) {
      std::string message = str_cat("records: truncated record ", where(start), ": the ", medium(),
                                    " ends ", got, " bytes into the record's 12-byte header");
      // A file shorter than one header: a short text or compressed file is named as such.
      if (start == 0 && !stream_) {
        const std::string kind = not_a_record_file(path_, header_copy, static_cast<size_t>(got));
        if (!kind.empty()) message = kind;
      }
      return fail(true, got, message);
    }
    header = header_copy;
  }

  const uint64_t len = load_le64(header);
  const uint32_t stored_len_crc = load_le32(header + 8);
  const uint32_t len_crc = crc32c::mask(crc32c::value8(header));
  if (stored_len_crc != len_crc) {
    std::string message = str_cat("records: corrupt record ", where(start),
                                  ": the CRC of its length field does not match (stored ",
                                  hex32(stored_len_crc), ", computed ", hex32(len_crc),
                                  "), so the rest of the ", medium(), " cannot be framed");
    if (start == 0 && !stream_) {
      const std::string kind = not_a_record_file(path_, header, kRecordHeaderBytes);
      message =
          kind.empty()
              ? message + " (a file whose first header is wrong is most likely not a TFRecord file)"
              : kind;
    }
    if (!skip_corrupt_) return fail(true, 0, message);
    if (resync(header)) return Step::kSkipped;  // counted by resync
    close();
    return Step::kEnd;
  }
  if (len > max_record_bytes_) {
    // Checked before anything is allocated or read: the length may be a lie.
    const std::string message =
        str_cat("records: record ", where(start), " claims ", claim(len),
                " data bytes, more than the limit of ", max_record_bytes_,
                " (max_record_bytes; raise it with dinput_options_set_max_record_bytes if "
                "records this large are expected)");
    if (!skip_corrupt_) return fail(true, 0, message);
    // The framing is intact: pass over the record without keeping it.
    const uint64_t want = len + kRecordFooterBytes;
    const uint64_t passed = consume(nullptr, want);
    return fail(passed < want, kRecordHeaderBytes + passed, message);
  }

  auto truncated = [&](uint64_t have) {
    return str_cat("records: truncated record ", where(start), ": the ", medium(), " ends ",
                   have + kRecordHeaderBytes, " bytes into a record of ", len, " data bytes (",
                   len + kRecordHeaderBytes + kRecordFooterBytes, " bytes with its framing)");
  };
  if (passing_) {  // skip(): the framing is checked, the data passed over unread
    const uint64_t want = len + kRecordFooterBytes;
    const uint64_t passed = consume(nullptr, want);
    if (passed < want) return fail(true, kRecordHeaderBytes + passed, truncated(passed));
    out = RecordView{};
    return Step::kRecord;
  }

  uint32_t stored_crc, crc;
  if (len <= avail() &&
      avail() - len >= kRecordFooterBytes) {  // the record lies in this chunk: a view
    const char* data = cur_.data + pos_;
    prefetch_ahead(data + len);
    // The CRC first: it streams through the data, so the footer right after it is in the
    // cache by the time it is read (read first, it is a miss ahead of the stream).
    crc = crc32c::mask(crc32c::value(data, static_cast<size_t>(len)));
    stored_crc = load_le32(data + len);
    pos_ += static_cast<size_t>(len) + kRecordFooterBytes;
    out.data = data;
    out.size = static_cast<size_t>(len);
    out.owner = &cur_.owner;
    out.copied = false;
  } else {
    // One buffer of the record's size (at most max_record_bytes), filled as the chunks
    // arrive, each chunk released once copied: the record is in memory once. The memory
    // is only touched as data arrives, so a short stream behind a large claim costs little.
    auto copy = allocate_host(static_cast<size_t>(len));
    char footer[kRecordFooterBytes];
    uint64_t have = consume(static_cast<char*>(copy->data()), len);
    if (have == len) have += consume(footer, kRecordFooterBytes);
    if (have < len + kRecordFooterBytes)
      return fail(true, kRecordHeaderBytes + have, truncated(have));
    stored_crc = load_le32(footer);
    spill_ = std::move(copy);
    out.data = static_cast<const char*>(spill_->data());
    out.size = static_cast<size_t>(len);
    out.owner = &spill_;
    out.copied = true;
    crc = crc32c::mask(crc32c::value(out.data, out.size));
  }

  if (crc != stored_crc) {
    spill_.reset();
    return fail(false, len + kRecordHeaderBytes + kRecordFooterBytes,
                str_cat("records: corrupt record ", where(start), ": the CRC of its ", len,
                        " data bytes does not match (stored ", hex32(stored_crc), ", computed ",
                        hex32(crc), ")"));
  }
  return Step::kRecord;
}

RecordParser::Step RecordParser::fail(bool ends_file, uint64_t bytes, const std::string& message) {
  if (!skip_corrupt_) {
    close();
    throw Error(Code::kDataLoss, message);
  }
  if (!ends_file) {
    count_skip(1, bytes);
    return Step::kSkipped;
  }
  close();
  count_skip(1, bytes);
  return Step::kEnd;
}

bool RecordParser::resync(const char* header) {
  // The candidates are the offsets start + 1, start + 2, ...; `carry` holds the bytes from
  // the next candidate on that came from chunks already left (fewer than a header), so
  // that a header split across chunks (of any size) is still found.
  char carry[kRecordHeaderBytes];
  size_t k = kRecordHeaderBytes - 1;
  std::memcpy(carry, header + 1, k);
  uint64_t skipped = 1;
  for (;;) {
    while (k > 0) {  // candidates starting in the carry
      const size_t need = kRecordHeaderBytes - k;
      if (avail() < need) {
        std::memcpy(carry + k, cur_.data + pos_, avail());
        k += avail();
        pos_ = cur_.size;
        if (!advance()) {
          count_skip(1, skipped + k);  // the stream ends in bytes too few for a header
          return false;
        }
        continue;
      }
      char h[kRecordHeaderBytes];
      std::memcpy(h, carry, k);
      std::memcpy(h + k, cur_.data + pos_, need);
      if (plausible(h)) return hold_header(h, offset() - k, need, skipped);
      std::memmove(carry, carry + 1, --k);
      ++skipped;
    }
    while (avail() >= kRecordHeaderBytes) {  // candidates inside the chunk
      const char* h = cur_.data + pos_;
      if (plausible(h)) return hold_header(h, offset(), kRecordHeaderBytes, skipped);
      ++pos_;
      ++skipped;
    }
    k = avail();
    std::memcpy(carry, cur_.data + pos_, k);
    pos_ = cur_.size;
    if (!advance()) {
      count_skip(1, skipped + k);
      return false;
    }
  }
}

bool RecordParser::hold_header(const char* header, uint64_t start, size_t in_chunk,
                               uint64_t skipped) {
  std::memcpy(pending_, header, kRecordHeaderBytes);
  pending_start_ = start;
  pos_ += in_chunk;
  have_pending_ = true;
  count_skip(1, skipped);
  return true;
}

void RecordParser::prefetch_ahead(const char* end) {
  // Parsing a large chunk (or a mapped file) is bound by memory latency more than by the CRC
  // instruction: asking for the lines a little ahead of the record being checked keeps several
  // misses in flight (measured: about 15% less time for a pass over 1 KiB records). Each line is
  // requested once; prefetches never fault, but stay inside the chunk anyway.
  constexpr size_t kAhead = 2048;
  const char* limit = cur_.data + cur_.size;
  const char* want = end + std::min<size_t>(kAhead, static_cast<size_t>(limit - end));
  const char* p = prefetched_ > end ? prefetched_ : end;
  for (; p < want; p += 64) __builtin_prefetch(p);
  if (p > prefetched_) prefetched_ = p;
}

bool RecordParser::advance() {
  base_ += cur_.size;
  prefetched_ = nullptr;
  pos_ = 0;
  // Drop our hold on the chunk first, so that the source can reuse its buffer when no
  // record views it any more.
  cur_ = Chunk{};
  if (!input_) return false;
  if (!input_->next(cur_)) {
    input_.reset();
    return false;
  }
  return true;
}

uint64_t RecordParser::consume(char* dst, uint64_t n) {
  return consume_bytes(cur_, pos_, dst, n, [this] { return advance(); });
}

std::string RecordParser::where(uint64_t offset) const {
  if (stream_)
    return str_cat("at byte offset ", offset, " of the decompressed ", stream_, " stream of ",
                   quoted(path_));
  return str_cat("at byte offset ", offset, " of ", quoted(path_));
}

const char* RecordParser::medium() const { return stream_ ? "decompressed stream" : "file"; }

void RecordParser::close() {
  done_ = true;
  prefetched_ = nullptr;
  input_.reset();
  cur_ = Chunk{};
  pos_ = 0;
  have_pending_ = false;
}

std::unique_ptr<RecordSource> open_record_file(const std::string& path, Compression compression,
                                               size_t buffer_size, bool skip_corrupt,
                                               std::shared_ptr<ChunkPool> pool,
                                               uint64_t max_record_bytes,
                                               const FileReadOptions& file_options,
                                               uint64_t start) {
  check_compression("records", compression);
  const bool plain = compression == Compression::kNone;
  auto chunks =
      open_file_chunks("records", path, buffer_size, pool, file_options, plain ? start : 0);
  const char* stream = nullptr;
  if (!plain) {
    // Every delivered byte is covered by its record's length or data CRC, so zstd's own
    // content checksum would only hash the stream a second time (docs/records.md).
    chunks = decompress(compression, std::move(chunks), buffer_size, std::move(pool),
                        /*content_checksum=*/false);
    stream = compression == Compression::kZstd ? "zstd" : "gzip";
    if (start) chunks = skip_chunks("records", path, std::move(chunks), start);
  }
  return std::make_unique<RecordParser>(path, std::move(chunks), stream, skip_corrupt,
                                        max_record_bytes, start);
}

RecordsAtOffsets::RecordsAtOffsets(uint64_t max_record_bytes, bool map)
    : max_record_bytes_(
          std::min<uint64_t>(max_record_bytes, static_cast<uint64_t>(kMaxMaxRecordBytes))),
      map_(map) {}

RecordsAtOffsets::~RecordsAtOffsets() {
  if (fd_ >= 0) ::close(fd_);
}

size_t RecordsAtOffsets::read_bytes(char* dst, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = fileops::pread(fd_, dst + done, n - done, static_cast<off_t>(offset + done));
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      raise(file_error_code(errno), "records: cannot read ", quoted(path_), " at byte offset ",
            offset + done, ": ", std::strerror(errno));
    }
    done += static_cast<size_t>(r);
  }
  return done;
}

void RecordsAtOffsets::open(const std::string& path) {
  if (fd_ < 0 || path != path_) {
    window_used_ = 0;
    mapping_.reset();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    // O_NONBLOCK: a FIFO put in the file's place must not block the open; it is refused.
    int fd;
    do {
      fd = fileops::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) raise_file_error("records", path, errno);
    struct stat st;
    if (fileops::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      raise(Code::kDataLoss, "records: ", quoted(path),
            " is no longer a regular file (did it change since the iterator state was saved?)");
    }
    fd_ = fd;
    path_ = path;
    auto origin = std::make_shared<ByteOrigin>();
    origin->path = std::make_shared<const std::string>(path);
    origin->header_bytes = kRecordHeaderBytes;
    origin_ = origin;
    if (map_ && st.st_size > 0 &&
        static_cast<unsigned long long>(st.st_size) <= static_cast<unsigned long long>(SIZE_MAX))
      mapping_ = map_file(fd_, static_cast<size_t>(st.st_size));  // (or read, when it cannot)
    // The mapping's first byte is the file's: its views find their offsets from there.
    if (mapping_) mapping_->set_origin(origin_from(mapping_->data(), 0));
  }
}

bool RecordsAtOffsets::from_window(uint64_t offset, Tensor& out) {
  if (offset < window_at_ || offset - window_at_ + kRecordHeaderBytes > window_used_) return false;
  const char* header = window_bytes() + (offset - window_at_);
  if (!plausible_header(header, max_record_bytes_)) return false;
  const uint64_t len = load_le64(header);
  if (len + kRecordHeaderBytes + kRecordFooterBytes > window_used_ - (offset - window_at_))
    return false;
  const char* data = header + kRecordHeaderBytes;
  if (load_le32(data + len) != crc32c::mask(crc32c::value(data, static_cast<size_t>(len))))
    return false;
  out = keep(data, static_cast<size_t>(len), offset + kRecordHeaderBytes);
  return true;
}

std::shared_ptr<const ByteOrigin> RecordsAtOffsets::origin_from(const void* anchor,
                                                                uint64_t offset) const {
  auto origin = std::make_shared<ByteOrigin>(*origin_);
  origin->anchor = static_cast<const char*>(anchor);
  origin->offset = offset;
  return origin;
}

Tensor RecordsAtOffsets::keep(const char* data, size_t size, uint64_t data_at) {
  // A view of the mapping, or a copy in the current arena.
  const char* dst = mapping_ ? data : arena_.copy(data, size, /*huge=*/true, &origin_, data_at);
  const std::shared_ptr<const Buffer> owner = mapping_ ? mapping_ : arena_.buffer();
  if (!storage_ || storage_used_ == kRecordsPerStorage) {
    storage_ = std::make_shared<BytesStorage>(kRecordsPerStorage);
    storage_used_ = 0;
  }
  storage_->set_view(storage_used_, dst, size, owner);
  return Tensor(DType::kBytes, Shape(), storage_, storage_used_++);
}

void RecordsAtOffsets::read(const std::string& path, const uint64_t* offsets, size_t n,
                            Tensor* out) {
  // A gap of up to kGap bytes is read rather than paying another pread; the window stops
  // growing at kWindow (it is reused, and records longer than its tail are read alone, by
  // the slower path that also says what is wrong with a record that is not intact).
  constexpr uint64_t kGap = uint64_t{8} << 10, kTail = 4096, kWindow = uint64_t{1} << 20;
  storage_.reset();  // what an earlier call that failed left
  open(path);
  if (mapping_) {
    window_at_ = 0;
    window_used_ = mapping_->size();
    for (size_t i = 0; i < n; ++i)
      if (!from_window(offsets[i], out[i])) out[i] = read(path, offsets[i]);
    storage_.reset();
    return;
  }
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && offsets[j] >= offsets[j - 1] && offsets[j] - offsets[j - 1] <= kGap &&
           offsets[j] - offsets[i] + kTail <= kWindow)
      ++j;
    const auto span = static_cast<size_t>(offsets[j - 1] - offsets[i] + kTail);
    if (window_.size() < span) window_.resize(std::max(span, window_.size() * 2));
    window_at_ = offsets[i];
    window_used_ = read_bytes(window_.data(), span, window_at_);
    for (; i < j; ++i)
      if (!from_window(offsets[i], out[i])) out[i] = read(path, offsets[i]);
  }
  storage_.reset();  // complete: the caller hands its records out
}

Tensor RecordsAtOffsets::read(const std::string& path, uint64_t offset) {
  open(path);
  // A few KiB first, which hold most records whole; a longer record's rest after its header
  // says how long it is (the parser checks the header itself).
  constexpr size_t kFirst = 4096;
  std::shared_ptr<Buffer> bytes = allocate_host(kFirst);
  size_t have = read_bytes(static_cast<char*>(bytes->data()), kFirst, offset);
  const char* header = static_cast<const char*>(bytes->data());
  if (have == kFirst && plausible_header(header, max_record_bytes_)) {
    const uint64_t whole = load_le64(header) + kRecordHeaderBytes + kRecordFooterBytes;
    if (whole > have) {
      std::shared_ptr<Buffer> larger = allocate_host(static_cast<size_t>(whole));
      std::memcpy(larger->data(), bytes->data(), have);
      have += read_bytes(static_cast<char*>(larger->data()) + have,
                         static_cast<size_t>(whole) - have, offset + have);
      bytes = std::move(larger);
    }
  }
  RecordParser parser(path, memory_chunks(static_cast<const char*>(bytes->data()), have, bytes, 0),
                      nullptr, false, max_record_bytes_, offset);
  RecordView view;
  if (!parser.next(view))
    raise(Code::kDataLoss, "records: no record at byte offset ", offset, " of ", quoted(path),
          ": the file ends there (did it change since the iterator state was saved?)");
  // A view of the bytes read, which say where they came from.
  bytes->set_origin(origin_from(bytes->data(), offset));
  Tensor out = Tensor::allocate(DType::kBytes, Shape());
  out.set_string_view(0, view.data, view.size, view.copied ? *view.owner : bytes);
  return out;
}

// ---- fixed-length records ----

namespace {

// Reads the file's chunks in order (views for records inside a chunk, a copy for one that
// spans two), knowing from the file's size where the records end.
class FixedLengthReader final : public RecordSource {
 public:
  FixedLengthReader(const std::string& path, uint64_t record_bytes, uint64_t header_bytes,
                    uint64_t footer_bytes, bool skip_corrupt, const FileReadOptions& file_options,
                    std::shared_ptr<ChunkPool> pool)
      : path_(path), record_bytes_(record_bytes), header_bytes_(header_bytes) {
    uint64_t size = 0;
    input_ = open_sized_chunks("fixed_length_records", path, kDefaultChunkBytes, std::move(pool),
                               file_options, &size);
    std::string problem;
    uint64_t lost = size;  // the bytes a problem makes unreadable
    if (header_bytes > size || footer_bytes > size - header_bytes) {
      problem = str_cat("fixed_length_records: the size of '", path, "' (", size,
                        " bytes) is smaller than header_bytes (", header_bytes,
                        ") plus footer_bytes (", footer_bytes, ")");
    } else {
      const uint64_t body = size - header_bytes - footer_bytes;
      count_ = body / record_bytes;
      lost = body % record_bytes;
      if (body % record_bytes != 0)
        problem = str_cat(
            "fixed_length_records: the size of '", path, "' (", size,
            " bytes) minus header_bytes (", header_bytes, ") and footer_bytes (", footer_bytes,
            ") is not a multiple of record_bytes (", record_bytes, "): ", body % record_bytes,
            " bytes of a truncated record at byte offset ", header_bytes + count_ * record_bytes);
      to_skip_ = header_bytes;
    }
    if (!problem.empty()) {
      if (!skip_corrupt) throw Error(Code::kDataLoss, problem);
      // Counted when the reader gets there, after the whole records: the incomplete tail,
      // or the whole file when it cannot hold its header and footer.
      tail_skipped_ = 1;
      tail_bytes_ = lost;
    }
    if (count_ == 0) input_.reset();
  }

  bool next(RecordView& out) override {
    spill_.reset();
    if (index_ < count_) {
      if (to_skip_ > 0) {  // the header
        if (consume(nullptr, to_skip_) < to_skip_) ended_early();
        to_skip_ = 0;
      }
      if (avail() == 0 && !advance()) ended_early();
      if (avail() >= record_bytes_) {  // the common case: a view of the chunk
        out.data = cur_.data + pos_;
        out.size = static_cast<size_t>(record_bytes_);
        out.owner = &cur_.owner;
        out.copied = false;
        pos_ += static_cast<size_t>(record_bytes_);
      } else {
        auto copy = allocate_host(static_cast<size_t>(record_bytes_));
        if (consume(static_cast<char*>(copy->data()), record_bytes_) < record_bytes_) ended_early();
        spill_ = std::move(copy);
        out.data = static_cast<const char*>(spill_->data());
        out.size = static_cast<size_t>(record_bytes_);
        out.owner = &spill_;
        out.copied = true;
      }
      if (++index_ == count_) {  // the footer and any tail are not read
        input_.reset();
      }
      return true;
    }
    cur_ = Chunk{};
    input_.reset();
    count_skip(tail_skipped_, tail_bytes_);
    tail_skipped_ = 0;
    tail_bytes_ = 0;
    return false;
  }

  uint64_t offset() const override {
    return index_ == 0 ? 0 : header_bytes_ + index_ * record_bytes_;
  }

 private:
  size_t avail() const { return cur_.size - pos_; }
  bool advance() {
    cur_ = Chunk{};  // let the source reuse its buffer when no record views it
    pos_ = 0;
    return input_ && input_->next(cur_);
  }
  uint64_t consume(char* dst, uint64_t n) {
    return consume_bytes(cur_, pos_, dst, n, [this] { return advance(); });
  }
  // A stream shorter than the size it announced (a regular file's source raises DATA_LOSS
  // itself when the file shrinks; this is the backstop).
  [[noreturn]] void ended_early() {
    input_.reset();
    raise(Code::kDataLoss, "fixed_length_records: ", quoted(path_), " ended before record ", index_,
          " of ", count_);
  }

  std::string path_;
  uint64_t record_bytes_;
  uint64_t header_bytes_;
  std::unique_ptr<ChunkSource> input_;
  Chunk cur_;
  size_t pos_ = 0;
  uint64_t to_skip_ = 0;                 // header bytes still to pass
  std::shared_ptr<const Buffer> spill_;  // the last record copied out of two chunks
  uint64_t count_ = 0;
  uint64_t index_ = 0;
  int64_t tail_skipped_ = 0;
  uint64_t tail_bytes_ = 0;
};

}  // namespace

std::unique_ptr<RecordSource> open_fixed_length_file(const std::string& path, uint64_t record_bytes,
                                                     uint64_t header_bytes, uint64_t footer_bytes,
                                                     bool skip_corrupt,
                                                     const FileReadOptions& file_options,
                                                     std::shared_ptr<ChunkPool> pool) {
  if (record_bytes == 0)
    raise(Code::kInvalidArgument, "fixed_length_records: record_bytes must be greater than zero");
  return std::make_unique<FixedLengthReader>(path, record_bytes, header_bytes, footer_bytes,
                                             skip_corrupt, file_options, std::move(pool));
}

}  // namespace dinput
