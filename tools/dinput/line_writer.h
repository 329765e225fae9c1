// Streams the lines of `run` to a file descriptor as the steps complete, in the order the
// output promises (step by step, worker 0 first), from any number of worker threads.
//
// A worker's line is written as soon as every line before it in that order has been; lines
// of a worker that is ahead wait in memory (workers step in lockstep through the collective,
// so that is about one step per worker). Writing happens on a thread of its own, which
// writes whatever is due in one go, at once when 64 KB are due and otherwise every 20 ms: a
// slow pipeline's lines appear as they come, and a fast one is written in large chunks. When more
// than a few MB are waiting to be written (a slow reader), the workers wait, so memory stays flat.
#ifndef DINPUT_TOOL_LINE_WRITER_H_
#define DINPUT_TOOL_LINE_WRITER_H_

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "status.h"

namespace dinput_tool {

class OrderedLineWriter {
 public:
  OrderedLineWriter(int fd, int workers);
  ~OrderedLineWriter();  // stops the writing thread as finish() does, without throwing
  OrderedLineWriter(const OrderedLineWriter&) = delete;
  OrderedLineWriter& operator=(const OrderedLineWriter&) = delete;

  // Worker `worker`'s next step line (without the newline). Returns false once the output
  // is closed by its reader or failed: the worker should stop stepping.
  bool step(int worker, std::string line);
  // Worker `worker` has no more step lines.
  void worker_done(int worker);
  // A line written after every step line (all workers must be done).
  void trailer(std::string line);
  // Writes what is due and stops the writing thread, then throws the write failure, if any;
  // a reader that closed the pipe (EPIPE) is not a failure: see closed_by_reader().
  void finish();
  bool closed_by_reader() const;

 private:
  void stop();
  void write_loop();
  // Moves the lines that are due from the workers' queues to ready_ (mu_ held).
  void collect_due();
  bool stopped() const { return closed_ || error_.has_value(); }

  const int fd_;
  mutable std::mutex mu_;
  std::condition_variable work_;                  // the writer: something is due, or finishing
  std::condition_variable space_;                 // the workers: ready_ has room again
  std::vector<std::deque<std::string>> pending_;  // per worker, in step order
  std::vector<bool> done_;
  int cursor_ = 0;     // the worker whose line is due next
  std::string ready_;  // due text not yet written
  bool finishing_ = false;
  bool closed_ = false;           // EPIPE
  std::optional<Failure> error_;  // a write failed (not EPIPE)
  bool joined_ = false;
  std::thread thread_;  // last: it starts in the constructor
};

}  // namespace dinput_tool

#endif  // DINPUT_TOOL_LINE_WRITER_H_
