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

namespace dinput {

class RecordWriter {
 public:
  // Creates (or truncates) `path`. level: zstd 1..19 (0: 3), gzip 1..9 (0: 6); ignored for
  // kNone. INVALID_ARGUMENT for a bad level, UNIMPLEMENTED for a compression this build
  // lacks (both checked before the file is touched); file errors name the file.
  RecordWriter(std::string path, Compression compression, int level);
  // Closes if still open; an error is then lost (call close() to see it).
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Appends one record. FAILED_PRECONDITION after close(). After a failed write or flush the
  // file is in an unknown state and every later call repeats that error.
  void write(const void* data, size_t size);
  // Hands buffered records to the operating system; a compressed stream is flushed so that
  // everything written so far can be decompressed, and stays open for more records.
  void flush();
  // Ends the compressed stream, writes what is buffered and closes the file, reporting any
  // error (including one from an earlier write). Closing again does nothing.
  void close();

  bool closed() const { return closed_; }
  const std::string& path() const { return path_; }

  class Encoder;  // the compression of the byte stream (defined in record_writer.cc)

 private:
  void check_usable(const char* op);
  template <typename Body>
  void guarded(Body&& body);

  std::string path_;
  int fd_ = -1;
  std::unique_ptr<Encoder> encoder_;
  bool closed_ = false;
  std::optional<Error> failed_;  // the first I/O error, repeated by later calls
};

}  // namespace dinput
