#include "io/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <random>

#include "core/quote.h"
#include "core/status.h"
#include "io/file_error.h"
#include "io/file_ops.h"

namespace dinput {

namespace {

int open_retrying(const char* path, int flags, mode_t mode) {
  int fd;
  do {
    fd = fileops::open(path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// ".NAME.tmp-PID-N-R" in DIR: hidden, so that globs such as "*.rec" in a directory being
// written to never pick up a file that is still growing.
std::string temp_name(const std::string& target, int attempt) {
  static std::atomic<unsigned> counter{0};
  static thread_local std::minstd_rand rng(std::random_device{}());
  const size_t slash = target.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string() : target.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
  return str_cat(dir, ".", base, ".tmp-", ::getpid(), "-", counter.fetch_add(1), "-", attempt, "-",
                 rng() % 1000000);
}

}  // namespace

OutputFile::OutputFile(const char* what, std::string path) : what_(what), path_(std::move(path)) {
  if (path_.empty()) raise_file_error(what_, "create", path_, ENOENT);  // as open("") would say
  struct stat st;
  const bool exists = fileops::stat(path_.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, a FIFO or a directory: no rename can replace it. Opening a directory fails
    // with EISDIR, reported as FAILED_PRECONDITION.
    fd_ = open_retrying(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) raise_file_error(what_, "create", path_, errno);
    return;
  }
  target_ = path_;
  struct stat lst;
  if (exists && ::lstat(path_.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    // Replace the file the link points to, not the link.
    char resolved[PATH_MAX];
    if (::realpath(path_.c_str(), resolved)) target_ = resolved;
  }
  for (int attempt = 0;; ++attempt) {
    temp_ = temp_name(target_, attempt);
    // 0666 less the umask, as a file created in place would get.
    fd_ = open_retrying(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0) break;
    if (errno != EEXIST || attempt >= 100) {
      int err = errno;
      temp_.clear();
      raise_file_error(what_, "create", path_, err);
    }
  }
  // The replacement keeps the permissions of the file it replaces (best effort: a file of
  // another owner cannot be chmod-ed, and then gets the default ones).
  if (exists) (void)::fchmod(fd_, st.st_mode & 07777);
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::commit() {
  if (fd_ < 0) raise(Code::kFailedPrecondition, what_, ": ", quoted(path_), " is already closed");
  int fd = fd_;
  fd_ = -1;
  int err = 0;
  const char* verb = "write";
  // Synced before the rename: otherwise a crash soon after could leave the new name on a
  // file whose blocks were never written. A device or pipe cannot be synced (EINVAL).
  if (!temp_.empty() && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    err = errno;
  }
  // close() can report a deferred write error (NFS, quotas); EINTR still closes on Linux.
  if (::close(fd) != 0 && errno != EINTR && err == 0) {
    err = errno;
    verb = "close";
  }
  if (err == 0 && !temp_.empty() && ::rename(temp_.c_str(), target_.c_str()) != 0) {
    err = errno;
    verb = "replace";
  }
  if (err != 0) {
    discard();
    raise_file_error(what_, verb, path_, err);
  }
  temp_.clear();
}

void OutputFile::discard() noexcept {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!temp_.empty()) {
    ::unlink(temp_.c_str());
    temp_.clear();
  }
}

}  // namespace dinput
