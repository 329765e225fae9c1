// Runs a producer function on a background thread and keeps up to `capacity` of its results
// queued for the consumer. Used by prefetch (elements) and by distributed iterators (steps).
// Errors thrown by the producer are handed to the consumer after the items produced before
// them; destroying the producer cancels it and joins the thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace dinput {

template <typename T>
class BackgroundProducer {
 public:
  // produce(out) returns false at the end of data.
  BackgroundProducer(std::function<bool(T&)> produce, size_t capacity)
      : produce_(std::move(produce)), capacity_(capacity == 0 ? 1 : capacity), thread_([this] { run(); }) {}

  ~BackgroundProducer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    space_.notify_all();
    thread_.join();
  }

  BackgroundProducer(const BackgroundProducer&) = delete;
  BackgroundProducer& operator=(const BackgroundProducer&) = delete;

  bool next(T& out) {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [this] { return !queue_.empty() || finished_; });
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    space_.notify_one();
    return true;
  }

 private:
  void run() {
    try {
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mu_);
          space_.wait(lock, [this] { return cancelled_ || queue_.size() < capacity_; });
          if (cancelled_) break;
        }
        T item;
        if (!produce_(item)) break;
        {
          std::lock_guard<std::mutex> lock(mu_);
          queue_.push_back(std::move(item));
        }
        ready_.notify_one();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
    }
    ready_.notify_all();
  }

  std::function<bool(T&)> produce_;
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<T> queue_;
  bool finished_ = false;
  bool cancelled_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: it starts in the constructor and uses everything above
};

}  // namespace dinput
