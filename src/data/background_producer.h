// Runs a producer function on a background thread and keeps up to `capacity` of its results
// queued for the consumer. Used by prefetch (elements) and by distributed iterators (steps).
// Errors thrown by the producer are handed to the consumer after the items produced before
// them; destroying the producer cancels it and joins the thread. A cancelled Cancellation
// (dinput_iterator_cancel) wakes the consumer's wait with CANCELLED at once and stops the
// thread at its next wait; a thread inside produce() finishes that call first.
//
// Placement::kAdaptive (the read-ahead that distribute_dataset inserts) runs produce() on the
// consumer's own thread while an item costs less to make than a thread hand-off (waking a
// parked thread costs microseconds, tens of them on an idle VM), and on the background
// thread, started only then, while items cost more, so that making them overlaps the
// consumer's work. It is for producers that run no user code: a consumer inside produce()
// cannot be woken by a cancel, and only library code is sure to return promptly. The items,
// their order, the errors and the end are the same in both placements.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "core/thread.h"
#include "data/cancellation.h"

namespace dinput {

template <typename T>
class BackgroundProducer {
  using Clock = std::chrono::steady_clock;

 public:
  enum class Placement { kThread, kAdaptive };

  // produce(out) returns false at the end of data.
  BackgroundProducer(std::function<bool(T&)> produce, size_t capacity,
                     std::shared_ptr<Cancellation> cancellation = nullptr,
                     Placement placement = Placement::kThread)
      : produce_(std::move(produce)),
        capacity_(capacity == 0 ? 1 : capacity),
        adaptive_(placement == Placement::kAdaptive),
        on_consumer_(adaptive_),
        cancellation_(std::move(cancellation)),
        wake_on_cancel_(cancellation_, [this] {
          {
            std::lock_guard<std::mutex> lock(mu_);
          }  // a waiter is either asleep or will see the flag
          ready_.notify_all();
          space_.notify_all();
        }) {
    if (!adaptive_) start_thread();
  }

  ~BackgroundProducer() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    space_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  BackgroundProducer(const BackgroundProducer&) = delete;
  BackgroundProducer& operator=(const BackgroundProducer&) = delete;

  // The number of items that may wait now. Any thread.
  size_t capacity() {
    std::lock_guard<std::mutex> lock(mu_);
    return capacity_;
  }
  // Lets up to `capacity` items wait (autotuning raises it). Any thread.
  void set_capacity(size_t capacity) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      capacity_ = capacity == 0 ? 1 : capacity;
    }
    space_.notify_all();
  }
  // The time next() spent blocked on an empty queue since the last call, in nanoseconds
  // (autotuning's measure of the consumer's wait). The consumer's thread only.
  int64_t take_waited_ns() {
    const int64_t w = waited_ns_;
    waited_ns_ = 0;
    return w;
  }

  // Adaptive: `fn` runs on the consumer's thread right before the thread starts, while every
  // item so far was made in the consumer's next() calls and taken. Set before the first next().
  void before_thread(std::function<void()> fn) { before_thread_ = std::move(fn); }
  // Whether the thread was started (always, but for an adaptive producer that has made every
  // item on the consumer's thread so far). The consumer's thread only.
  bool threaded() const { return thread_.joinable(); }

  // Items made ahead and not yet taken (the statistics' buffer fill).
  size_t queued() {
    std::lock_guard<std::mutex> lock(mu_);
    return queue_.size();
  }

  // Adaptive, before the thread exists and while items are cheap: runs make() (false at the
  // end of data) on the consumer's thread, timed like every item made there, its end or error
  // kept for later calls, and returns 1 (an item made) or 0 (the end). -1: the item must come
  // from next()'s other paths (not adaptive, the thread exists, items turned costly, or the
  // end or an error came already). next() makes its cheap items this way; a consumer may also
  // call it to make the item in place of its own, with no T in between.
  template <typename Make>
  int make_here(Make&& make) {
    if (!adaptive_ || thread_.joinable() || finished_ ||
        cost_ns_.load(std::memory_order_relaxed) > kThreadAboveNs)
      return -1;
    if (cancellation_) cancellation_->raise_if_cancelled();
    return run_here(make, nullptr) ? 1 : 0;
  }

  enum class Poll { kItem, kEmpty, kEnd };
  // The next item if one is ready, without waiting; kEnd at the end (errors are rethrown).
  // Placement::kThread only: an adaptive producer may have nothing made ahead to poll.
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
    bool wake = producer_waiting_ && queue_.size() <= low_water();
    lock.unlock();
    if (wake) space_.notify_one();
    return Poll::kItem;
  }

  bool next(T& out) {
    // Cheap items are made here until the thread exists (make_here).
    const int made = make_here([&] { return produce_(out); });
    if (made >= 0) return made == 1;
    if (cancellation_) cancellation_->raise_if_cancelled();
    if (adaptive_) {
      // Until the thread exists, everything here belongs to the consumer's thread alone.
      if (!thread_.joinable()) {
        if (finished_) return end_of_items();
        if (before_thread_) before_thread_();
        start_thread();  // on_consumer_ becomes false under the lock
      }
      std::unique_lock<std::mutex> lock(mu_);
      if (adapt_placement() && on_consumer_) return next_on_consumer(out, lock);
      lock.unlock();
    }
    // A fast producer usually has the next item ready or nearly so: a short spin is much
    // cheaper than sleeping on the condition variable and being woken (a futex round trip).
    for (int i = 0; i < kSpins && available_.load(std::memory_order_acquire) == 0; ++i) relax();
    std::unique_lock<std::mutex> lock(mu_);
    if (queue_.empty() && !finished_) {
      consumer_waiting_ = true;
      const auto begin = Clock::now();
      ready_.wait(lock, [this] { return !queue_.empty() || finished_ || cancelled_by_user(); });
      waited_ns_ +=
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - begin).count();
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
    bool wake = producer_waiting_ && queue_.size() <= low_water();
    lock.unlock();
    if (wake) space_.notify_one();
    return true;
  }

 private:
  void start_thread() {
    std::lock_guard<std::mutex> lock(mu_);
    on_consumer_ = false;
    thread_ = Thread([this] { run(); });
  }

  // Adaptive, thread started, under mu_: moves production to where the items' recent cost
  // says it belongs. Returns true (for use in a condition).
  bool adapt_placement() {
    const int64_t cost = cost_ns_.load(std::memory_order_relaxed);
    if (on_consumer_ && cost > kThreadAboveNs) {
      on_consumer_ = false;
      space_.notify_one();  // the thread parks while the consumer produces
    } else if (!on_consumer_ && cost < kConsumerBelowNs) {
      on_consumer_ = true;  // the thread parks before its next item
    }
    return true;
  }

  // Adaptive, production on the consumer's thread: first what the thread made before it
  // parked, in order, then items made here once it is out of produce().
  bool next_on_consumer(T& out, std::unique_lock<std::mutex>& lock) {
    if (queue_.empty() && producing_ && !finished_) {
      consumer_waiting_ = true;
      ready_.wait(lock, [this] {
        return !queue_.empty() || !producing_ || finished_ || cancelled_by_user();
      });
      consumer_waiting_ = false;
      // Woken with nothing to take: a cancel, or the thread left produce() without an item.
      if (queue_.empty() && !finished_ && cancelled_by_user()) cancellation_->raise_if_cancelled();
    }
    if (!queue_.empty()) {
      out = std::move(queue_.front());
      queue_.pop_front();
      available_.fetch_sub(1, std::memory_order_release);
      return true;
    }
    if (finished_) return end_of_items();
    // The thread is parked and cannot start an item while on_consumer_ holds (it checks under
    // mu_), so this item is the next one in order.
    lock.unlock();
    return produce_here(out, &lock);
  }

  // One item made on the consumer's thread. `lock` (unlocked) is mu_'s once the thread
  // exists: the end and errors are then published under it, for the thread to see.
  bool produce_here(T& out, std::unique_lock<std::mutex>* lock) {
    return run_here([&] { return produce_(out); }, lock);
  }
  template <typename Make>
  bool run_here(Make&& make, std::unique_lock<std::mutex>* lock) {
    const bool timed = (calls_++ % kSampleEvery) == 0;
    const auto t0 = timed ? Clock::now() : Clock::time_point();
    bool more;
    try {
      more = make();
    } catch (...) {
      finish(lock, std::current_exception());
      throw;
    }
    if (timed) record_cost(Clock::now() - t0);
    if (!more) finish(lock, nullptr);
    return more;
  }

  void finish(std::unique_lock<std::mutex>* lock, std::exception_ptr error) {
    if (lock) lock->lock();
    finished_ = true;
    error_ = std::move(error);
    if (lock) {
      lock->unlock();
      space_.notify_all();  // the parked thread exits
    }
  }

  bool end_of_items() {
    if (error_) std::rethrow_exception(error_);
    return false;
  }

  // The cost of an item is the lowest of the last kWindow timed calls: a call during which
  // the thread lost its core (a loaded machine) reads as slow, and one such call must not
  // move production. Only the side making the items calls this, and the sides take turns
  // through mu_.
  void record_cost(Clock::duration d) {
    samples_[next_sample_++ % kWindow] =
        std::chrono::duration_cast<std::chrono::nanoseconds>(d).count();
    int64_t lowest = samples_[0];
    for (int64_t v : samples_) lowest = v < lowest ? v : lowest;
    cost_ns_.store(lowest, std::memory_order_relaxed);
  }

  void run() {
    try {
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mu_);
          auto may_produce = [this] { return !on_consumer_ && queue_.size() < capacity_; };
          if (!cancelled_ && !finished_ && !may_produce()) {
            producer_waiting_ = true;
            // Once full, wait until the queue is down to low_water(): one wake-up then makes
            // several items instead of one per item taken.
            space_.wait(lock, [&] {
              return cancelled_ || finished_ || cancelled_by_user() ||
                     (may_produce() && queue_.size() <= low_water());
            });
            producer_waiting_ = false;
          }
          // finished_: the consumer, producing itself, reached the end or an error.
          if (cancelled_ || finished_) break;
          // The consumer must not take this for the end of the data.
          if (cancelled_by_user()) raise(Code::kCancelled, "the iterator was cancelled");
          producing_ = true;
        }
        T item;
        const auto t0 = adaptive_ ? Clock::now() : Clock::time_point();
        const bool more = produce_(item);
        if (adaptive_) record_cost(Clock::now() - t0);
        if (!more) break;
        bool wake;
        {
          std::lock_guard<std::mutex> lock(mu_);
          queue_.push_back(std::move(item));
          available_.fetch_add(1, std::memory_order_release);
          producing_ = false;
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
      producing_ = false;
      available_.fetch_add(1, std::memory_order_release);  // ends the consumer's spin
    }
    ready_.notify_all();
  }

  bool cancelled_by_user() const { return cancellation_ && cancellation_->cancelled(); }
  size_t low_water() const { return capacity_ >= 4 ? capacity_ / 2 : capacity_ - 1; }

  static void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    std::this_thread::yield();
#endif
  }
  static constexpr int kSpins = 64;  // about 1-2 us: longer spins only steal the producer's core

  // Adaptive placement. An item that takes longer than kThreadAboveNs to make is worth a
  // hand-off; below kConsumerBelowNs the hand-off would cost more than the item. The gap
  // keeps a pipeline near the boundary from moving at every item. The consumer times one
  // call in kSampleEvery (a clock read costs 25-35 ns on a VM, a cheap item a few hundred:
  // timing one in 8 was 2-3% of a distributed step), so a pipeline that turns slow moves to
  // the thread after about kSampleEvery * kWindow items; the thread times every call.
  static constexpr int64_t kThreadAboveNs = 20000;
  static constexpr int64_t kConsumerBelowNs = 5000;
  static constexpr uint32_t kSampleEvery = 16;
  static constexpr size_t kWindow = 4;

  std::function<bool(T&)> produce_;
  std::function<void()> before_thread_;
  size_t capacity_;
  int64_t waited_ns_ = 0;  // the consumer's
  const bool adaptive_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<T> queue_;
  bool finished_ = false;
  bool cancelled_ = false;
  bool consumer_waiting_ = false;  // notify only a side that sleeps: a futex wake is costly
  bool producer_waiting_ = false;
  bool on_consumer_;               // adaptive: the consumer makes the items; the thread parks
  bool producing_ = false;         // the thread is inside produce()
  uint32_t calls_ = 0;             // the consumer's own produce() calls
  int64_t samples_[kWindow] = {};  // the last timed calls, in ns
  size_t next_sample_ = 0;
  std::atomic<int64_t> cost_ns_{0};  // the lowest of samples_: read by the consumer
  std::atomic<size_t> available_{0};
  std::exception_ptr error_;
  std::shared_ptr<Cancellation> cancellation_;
  Cancellation::Registration wake_on_cancel_;  // after what the waker touches, before the thread
  Thread thread_;  // last: it uses everything above; started once they all exist
};

}  // namespace dinput
