#include "data/parallel_calls.h"

#include <chrono>
#include <thread>
#include <utility>

namespace dinput {

namespace {
constexpr int kYieldsBeforeSleep = 64;
}  // namespace

template <typename Result>
ParallelCallsOf<Result>::ParallelCallsOf(int threads, size_t max_in_flight,
                                         std::shared_ptr<Cancellation> cancellation)
    : max_in_flight_(max_in_flight),
      cancellation_(std::move(cancellation)),
      wake_on_cancel_(cancellation_,
                      [this] {
                        { std::lock_guard<std::mutex> lock(mu_); }
                        cv_.notify_all();
                      }),
      pool_(std::make_unique<ThreadPool>(threads)) {}

// The workers are joined before the slots and the lock they use go away.
template <typename Result>
ParallelCallsOf<Result>::~ParallelCallsOf() {
  pool_.reset();
}

template <typename Result>
void ParallelCallsOf<Result>::submit(std::function<Result()> work) {
  auto slot = std::make_shared<Slot>();
  in_flight_.push_back(slot);
  pool_->submit([this, slot, work = std::move(work)] {
    Result result;
    std::exception_ptr error;
    try {
      result = work();
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      slot->result = std::move(result);
      slot->error = std::move(error);  // the worker keeps no reference to the exception
      slot->done = true;
    }
    cv_.notify_all();
  });
}

template <typename Result>
void ParallelCallsOf<Result>::submit_error(std::exception_ptr error) {
  auto slot = std::make_shared<Slot>();
  slot->done = true;
  slot->error = std::move(error);
  in_flight_.push_back(std::move(slot));
}

template <typename Result>
Result ParallelCallsOf<Result>::take(bool in_order) {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = in_flight_.begin();
  // A cancel ends the wait; the calls in flight finish on their own (see dispose.h).
  auto can_take = [&] {
    if (cancellation_ && cancellation_->cancelled()) return true;
    if (in_order) return in_flight_.front()->done;
    for (ready = in_flight_.begin(); ready != in_flight_.end(); ++ready)
      if ((*ready)->done) return true;
    return false;
  };
  // A few yields before sleeping: with cheap calls (a trivial map function) the result is
  // usually moments away, while falling asleep and being woken costs microseconds per call.
  if (!can_take()) {
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < kYieldsBeforeSleep && !can_take(); ++i) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    }
    cv_.wait(lock, can_take);
    waited_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - begin)
                      .count();
  }
  if (cancellation_) cancellation_->raise_if_cancelled();
  if (in_order) ready = in_flight_.begin();
  std::shared_ptr<Slot> slot = *ready;
  in_flight_.erase(ready);
  lock.unlock();
  // The exception is taken out of the slot, which the worker may still hold: its last
  // reference is then always dropped on this thread, never on the worker's (whose release,
  // inside the C++ runtime, ThreadSanitizer cannot see as ordered after our reads).
  if (std::exception_ptr error = std::move(slot->error)) std::rethrow_exception(error);
  return std::move(slot->result);
}

template class ParallelCallsOf<Element>;
template class ParallelCallsOf<std::vector<Element>>;

}  // namespace dinput
