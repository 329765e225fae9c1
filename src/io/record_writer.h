// Writes TFRecord-framed files (see record_reader.h for the framing), plain or as one zstd
// or gzip stream, byte-compatible with what TensorFlow's TFRecordWriter produces for the
// same records (and, for zstd, with what `zstd` decompresses to a plain file).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "core/status.h"
#include "io/compression.h"
#include "io/output_file.h"

namespace dinput {

class RecordWriter {
 public:
  // Writes to a temporary file beside `path` (see output_file.h): a file already at `path`
  // keeps its contents until close() succeeds, and is never left half-written. level: zstd
  // 1..19 (0: 3), gzip 1..9 (0: 6); ignored for kNone. INVALID_ARGUMENT for a bad level,
  // UNIMPLEMENTED for a compression this build lacks (both checked before any file is
  // touched); file errors name the file. zstd_window_log (zstd only): 0 for the level's
  // window, else 10..31 with long-distance matching, as `zstd --long=N` writes
  // (INVALID_ARGUMENT outside; readers accept windows up to 2^31, 2^30 on 32-bit hosts).
  RecordWriter(std::string path, Compression compression, int level, int zstd_window_log = 0);
  // Closes if still open (an error is then lost: call close() to see it), so that what was
  // written replaces `path`; after a failed write the temporary file is removed instead.
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one record. FAILED_PRECONDITION after close(). After a failed write or flush the
  // file is in an unknown state and every later call repeats that error.
  void write(const void* data, size_t size);
  // Hands buffered records to the operating system; a compressed stream is flushed so that
  // everything written so far can be decompressed, and stays open for more records.
  void flush();
  // Ends the compressed stream, writes what is buffered, syncs and closes the file and
  // renames it over `path`, reporting any error (including one from an earlier write); on
  // an error the temporary file is removed and `path` is unchanged. Closing again does
  // nothing.
  void close();
  // Closes without keeping anything: the temporary file is removed and `path` keeps what
  // it held before (for a path written directly, such as a device, what was already handed
  // to it stays written). Never throws; later calls are FAILED_PRECONDITION.
  void discard() noexcept;

  bool closed() const { return closed_; }
  const std::string& path() const { return path_; }

  class Encoder;  // the compression of the byte stream (defined in record_writer.cc)

 private:
  void check_usable(const char* op);
  template <typename Body>
  void guarded(Body&& body);

  std::string path_;
  std::unique_ptr<OutputFile> file_;
  std::unique_ptr<Encoder> encoder_;
  bool closed_ = false;
  std::optional<Error> failed_;  // the first I/O error, repeated by later calls
};

}  // namespace dinput
