// Runs a producer function on a background thread and keeps up to `capacity` of its results
// queued for the consumer. Used by prefetch (elements) and by distributed iterators (steps).
// Errors thrown by the producer are handed to the consumer after the items produced before
// them; destroying the producer cancels it and joins the thread. A cancelled Cancellation
// (dinput_iterator_cancel) wakes the consumer's wait with CANCELLED at once and stops the
// thread at its next wait; a thread inside produce() finishes that call first.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "data/cancellation.h"

namespace dinput {

template <typename T>
class BackgroundProducer {
 public:
  // produce(out) returns false at the end of data.
  BackgroundProducer(std::function<bool(T&)> produce, size_t capacity,
                     std::shared_ptr<Cancellation> cancellation = nullptr)
      : produce_(std::move(produce)),
        capacity_(capacity == 0 ? 1 : capacity),
        cancellation_(std::move(cancellation)),
        wake_on_cancel_(cancellation_,
                        [this] {
                          {
                            std::lock_guard<std::mutex> lock(mu_);
                          }  // a waiter is either asleep or will see the flag
                          ready_.notify_all();
                          space_.notify_all();
                        }),
        thread_([this] { run(); }) {}

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

  enum class Poll { kItem, kEmpty, kEnd };
  // The next item if one is ready, without waiting; kEnd at the end (errors are rethrown).
  Poll try_next(T& out) {
    if (cancellation_) cancellation_->raise_if_cancelled();
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.empty()) {
      if (!finished_) return Poll::kEmpty;
      if (error_) std::rethrow_exception(error_);
      return Poll::kEnd;
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    available_.fetch_sub(1, std::memory_order_release);
    bool wake = producer_waiting_;
    lock.unlock();
    if (wake) space_.notify_one();
    return Poll::kItem;
  }

  bool next(T& out) {
    if (cancellation_) cancellation_->raise_if_cancelled();
    // A fast producer usually has the next item ready or nearly so: a short spin is much
    // cheaper than sleeping on the condition variable and being woken (a futex round trip).
    for (int i = 0; i < kSpins && available_.load(std::memory_order_acquire) == 0; ++i) relax();
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.empty() && !finished_) {
      consumer_waiting_ = true;
      ready_.wait(lock, [this] { return !queue_.empty() || finished_ || cancelled_by_user(); });
      consumer_waiting_ = false;
      if (queue_.empty() && !finished_) cancellation_->raise_if_cancelled();
    }
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    available_.fetch_sub(1, std::memory_order_release);
    bool wake = producer_waiting_;
    lock.unlock();
    if (wake) space_.notify_one();
    return true;
  }

 private:
  void run() {
    try {
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cancelled_ && queue_.size() >= capacity_) {
            producer_waiting_ = true;
            space_.wait(lock, [this] {
              return cancelled_ || cancelled_by_user() || queue_.size() < capacity_;
            });
            producer_waiting_ = false;
          }
          if (cancelled_) break;
          // The consumer must not take this for the end of the data.
          if (cancelled_by_user()) raise(Code::kCancelled, "the iterator was cancelled");
        }
        T item;
        if (!produce_(item)) break;
        bool wake;
        {
          std::lock_guard<std::mutex> lock(mu_);
          queue_.push_back(std::move(item));
          available_.fetch_add(1, std::memory_order_release);
          wake = consumer_waiting_;
        }
        if (wake) ready_.notify_one();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
      available_.fetch_add(1, std::memory_order_release);  // ends the consumer's spin
    }
    ready_.notify_all();
  }

  bool cancelled_by_user() const { return cancellation_ && cancellation_->cancelled(); }

  static void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  static constexpr int kSpins = 64;  // about 1-2 us: longer spins only steal the producer's core

  std::function<bool(T&)> produce_;
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<T> queue_;
  bool finished_ = false;
  bool cancelled_ = false;
  bool consumer_waiting_ = false;  // notify only a side that sleeps: a futex wake is costly
  bool producer_waiting_ = false;
  std::atomic<size_t> available_{0};
  std::exception_ptr error_;
  std::shared_ptr<Cancellation> cancellation_;
  Cancellation::Registration wake_on_cancel_;  // after what the waker touches, before the thread
  std::thread thread_;  // last: it starts in the constructor and uses everything above
};

}  // namespace dinput
