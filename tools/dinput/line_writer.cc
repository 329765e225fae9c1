#include "line_writer.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <chrono>
#include <utility>

namespace dinput_tool {

namespace {

// Due text beyond which the workers wait for the writer.
constexpr size_t kMaxReadyBytes = size_t{4} << 20;
// Due text that is worth waking the writer for at once. Below it the writer writes what is
// due every kFlushInterval: waking a thread per line (a futex round trip) would cost more
// than making the line, and a line appears at most that long after its step.
constexpr size_t kFlushBytes = size_t{64} << 10;
constexpr std::chrono::milliseconds kFlushInterval{20};

}  // namespace

OrderedLineWriter::OrderedLineWriter(int fd, int workers)
    : fd_(fd),
      pending_(static_cast<size_t>(workers)),
      done_(static_cast<size_t>(workers), false),
      thread_([this] { write_loop(); }) {}

OrderedLineWriter::~OrderedLineWriter() { stop(); }

bool OrderedLineWriter::step(int worker, std::string line) {
  line.push_back('\n');
  std::unique_lock<std::mutex> lock(mu_);
  space_.wait(lock, [this] { return stopped() || ready_.size() < kMaxReadyBytes; });
  if (stopped()) return false;
  pending_[static_cast<size_t>(worker)].push_back(std::move(line));
  const size_t before = ready_.size();
  collect_due();
  if (before < kFlushBytes && ready_.size() >= kFlushBytes) work_.notify_one();
  return true;
}

void OrderedLineWriter::worker_done(int worker) {
  std::lock_guard<std::mutex> lock(mu_);
  done_[static_cast<size_t>(worker)] = true;
  collect_due();
  work_.notify_one();
}

void OrderedLineWriter::trailer(std::string line) {
  line.push_back('\n');
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped()) return;
  ready_ += line;
  work_.notify_one();
}

void OrderedLineWriter::collect_due() {
  const int workers = static_cast<int>(pending_.size());
  // Each round over the workers either moves a line, skips a finished worker, or stops at a
  // worker whose next line has not come yet; `skipped` ends the loop once all are finished.
  int skipped = 0;
  while (skipped < workers) {
    auto& queue = pending_[static_cast<size_t>(cursor_)];
    if (!queue.empty()) {
      ready_ += queue.front();
      queue.pop_front();
      skipped = 0;
    } else if (done_[static_cast<size_t>(cursor_)]) {
      ++skipped;
    } else {
      return;
    }
    cursor_ = (cursor_ + 1) % workers;
  }
}

void OrderedLineWriter::write_loop() {
  std::string chunk;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait_for(lock, kFlushInterval,
                   [this] { return ready_.size() >= kFlushBytes || finishing_; });
    if (ready_.empty()) {
      if (finishing_) return;  // everything due is written
      continue;
    }
    chunk.clear();
    chunk.swap(ready_);
    space_.notify_all();
    lock.unlock();
    // One write call for everything that was due: cheap when lines come fast.
    const char* p = chunk.data();
    size_t left = chunk.size();
    int write_errno = 0;
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        write_errno = errno;
        break;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    lock.lock();
    if (write_errno != 0) {
      if (write_errno == EPIPE) {
        closed_ = true;
      } else {
        error_ = Failure(DINPUT_UNAVAILABLE, std::string("could not write the output to stdout: ") +
                                                 strerror(write_errno));
      }
      ready_.clear();
      space_.notify_all();
      return;
    }
  }
}

void OrderedLineWriter::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (joined_) return;
    joined_ = true;
    finishing_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void OrderedLineWriter::finish() {
  stop();
  std::lock_guard<std::mutex> lock(mu_);
  if (error_) throw *error_;
}

bool OrderedLineWriter::closed_by_reader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

}  // namespace dinput_tool
