// A fixed set of worker threads draining a task queue. Destruction drops tasks that have
// not started and joins the threads, so an iterator that owns a pool stops promptly.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "core/thread.h"

namespace dinput {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(std::function<void()> task);
  // Adds workers until there are `num_threads` (never removes any). Called by the thread
  // that owns the pool, as size() and the destructor are.
  void grow(int num_threads);
  int size() const { return static_cast<int>(threads_.size()); }

 private:
  void worker();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  int sleeping_ = 0;  // workers waiting on cv_ (submit wakes one only then)
  std::vector<Thread> threads_;
};

}  // namespace dinput
