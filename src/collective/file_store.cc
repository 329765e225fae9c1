#include "collective/file_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/status.h"

namespace dinput {

namespace {

using Clock = std::chrono::steady_clock;

// A file name for `key`: bytes other than [A-Za-z0-9_.-] (and a leading '.') become %XX, so
// keys with '/' stay in the directory and no key can be taken for a temporary or lock file
// (those start with '.').
std::string encode_key(const std::string& key) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || (c == '.' && i > 0);
    if (plain) {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  if (out.empty()) out = "%";  // the empty key
  return out;
}

std::string errno_text(int err) { return std::strerror(err); }

class FileStore final : public Store {
 public:
  explicit FileStore(std::string dir) : dir_(std::move(dir)), url_("file://" + dir_) {
    make_dirs(dir_);
  }

  void set(const std::string& key, const std::string& value) override {
    write_atomically(key, value);
  }

  std::vector<std::string> get(const std::vector<std::string>& keys,
                               std::chrono::milliseconds timeout) override {
    auto deadline = Clock::now() + std::min(timeout, std::chrono::milliseconds(int64_t{1} << 40));
    auto pause = std::chrono::milliseconds(1);
    std::vector<std::string> values(keys.size());
    std::vector<bool> have(keys.size(), false);
    for (;;) {
      bool all = true;
      for (size_t i = 0; i < keys.size(); ++i)
        if (!have[i]) all = (have[i] = read(keys[i], &values[i])) && all;
      if (all) return values;
      if (Clock::now() >= deadline) break;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
    std::string missing;
    for (size_t i = 0; i < keys.size(); ++i)
      if (!have[i]) missing += (missing.empty() ? "" : ", ") + keys[i];
    raise(Code::kDeadlineExceeded, "rendezvous store ", url_, ": keys not set within ",
          timeout.count(), " ms: ", missing);
  }

  int64_t add(const std::string& key, int64_t delta) override {
    // fcntl locks belong to the process, not the thread: the mutex orders this process's own
    // threads, the lock orders processes (on NFS through its lock manager).
    static std::mutex process_mu;
    std::lock_guard<std::mutex> guard(process_mu);
    std::string lock_path = dir_ + "/.lock-" + encode_key(key);
    int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) fail("cannot open " + lock_path, errno);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    while (fcntl(fd, F_SETLKW, &fl) != 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      fail("cannot lock " + lock_path, err);
    }
    int64_t now = 0;
    std::string value;
    try {
      if (read(key, &value)) {
        errno = 0;
        char* end = nullptr;
        long long v = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || errno != 0 || end != value.c_str() + value.size()) {
          raise(Code::kFailedPrecondition, "rendezvous store ", url_, ": add: the value of key '",
                key, "' is not an integer");
        }
        now = v;
      }
      now += delta;
      write_atomically(key, std::to_string(now));
    } catch (...) {
      close(fd);  // closing releases the lock
      throw;
    }
    close(fd);
    return now;
  }

  bool check(const std::vector<std::string>& keys) override {
    for (const auto& k : keys) {
      struct stat st {};
      if (stat(path(k).c_str(), &st) != 0) {
        if (errno != ENOENT) fail("cannot stat " + path(k), errno);
        return false;
      }
    }
    return true;
  }

 private:
  std::string path(const std::string& key) const { return dir_ + "/" + encode_key(key); }

  [[noreturn]] void fail(const std::string& what, int err) const {
    raise(Code::kUnavailable, "rendezvous store ", url_, ": ", what, ": ", errno_text(err));
  }

  void make_dirs(const std::string& dir) const {
    for (size_t pos = 1; pos <= dir.size(); ++pos) {
      if (pos != dir.size() && dir[pos] != '/') continue;
      std::string prefix = dir.substr(0, pos);
      if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
        fail("cannot create the directory " + prefix, errno);
    }
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0) fail("cannot reach the directory " + dir, errno);
    if (!S_ISDIR(st.st_mode))
      raise(Code::kUnavailable, "rendezvous store ", url_, ": ", dir, " is not a directory");
  }

  // The whole value of `key` into `value`; false when the key is not set.
  bool read(const std::string& key, std::string* value) const {
    std::string p = path(key);
    int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return false;
      fail("cannot open " + p, errno);
    }
    std::string out;
    char buf[65536];
    for (;;) {
      ssize_t r = ::read(fd, buf, sizeof(buf));
      if (r > 0) {
        out.append(buf, static_cast<size_t>(r));
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        int err = errno;
        close(fd);
        fail("cannot read " + p, err);
      }
      break;
    }
    close(fd);
    *value = std::move(out);
    return true;
  }

  void write_atomically(const std::string& key, const std::string& value) {
    static std::atomic<uint64_t> counter{0};
    std::string final_path = path(key);
    // Unique across processes, hosts and threads: the name of a file another writer renames
    // must never be ours.
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    std::string tmp =
        str_cat(dir_, "/.tmp-", encode_key(host), "-", getpid(), "-", counter.fetch_add(1));
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) fail("cannot create " + tmp, errno);
    size_t done = 0;
    while (done < value.size()) {
      ssize_t w = write(fd, value.data() + done, value.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        int err = errno;
        close(fd);
        unlink(tmp.c_str());
        fail("cannot write " + tmp, err);
      }
      done += static_cast<size_t>(w);
    }
    if (close(fd) != 0) {
      int err = errno;
      unlink(tmp.c_str());
      fail("cannot write " + tmp, err);
    }
    if (rename(tmp.c_str(), final_path.c_str()) != 0) {
      int err = errno;
      unlink(tmp.c_str());
      fail("cannot rename " + tmp + " to " + final_path, err);
    }
  }

  std::string dir_;
  std::string url_;
};

}  // namespace

std::shared_ptr<Store> make_file_store(const std::string& dir) {
  return std::make_shared<FileStore>(dir);
}

}  // namespace dinput
