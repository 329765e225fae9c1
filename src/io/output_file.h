// An output file that replaces what is at its path only once it is complete. The bytes go
// to a temporary file beside the target (same directory, so the final rename is atomic);
// commit() syncs it and renames it over the target, discard() removes it. Until commit()
// succeeds, a file already at the path keeps its old contents, whatever happens to the
// process or to the data being written.
//
// Paths that are not regular files (/dev/null, a FIFO, a terminal) cannot be replaced by
// a rename and are written directly, as before. A symbolic link to a regular file is
// resolved, so the file it points to is replaced and the link stays.
#pragma once

#include <string>

namespace dinput {

class OutputFile {
 public:
  // Creates the temporary (or opens the non-regular path). Errors name `path`, with the
  // status of file_error_code: NOT_FOUND for a missing directory, PERMISSION_DENIED for a
  // directory that cannot be written to, FAILED_PRECONDITION when path is a directory.
  OutputFile(const char* what, std::string path);
  // Discards the temporary if it was neither committed nor discarded.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  // The temporary file being written; "" when the path is written directly.
  const std::string& temp_path() const { return temp_; }

  // Syncs and closes the file, then renames the temporary over the target. On failure the
  // temporary is removed and the error (naming path) is thrown; the target is unchanged.
  void commit();
  // Closes the file and removes the temporary; the target is unchanged. Never throws.
  void discard() noexcept;

 private:
  const char* what_;
  std::string path_;    // as given, for messages
  std::string target_;  // the file the temporary replaces (path_, or where its link points)
  std::string temp_;
  int fd_ = -1;
};

}  // namespace dinput
