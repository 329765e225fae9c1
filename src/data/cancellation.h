// Cancelling an iterator from another thread (dinput_iterator_cancel): a flag every wait of
// the pipeline checks, and a list of the waits in progress to wake when it is set. A wait
// on a condition variable cannot see a flag that changes without a notification, so each
// place that sleeps registers a waker for as long as it may sleep.
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>

#include "core/status.h"

namespace dinput {

class Cancellation {
 public:
  using Waker = std::function<void()>;

  // Sets the flag and wakes every registered wait. Idempotent; any thread.
  void cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_.exchange(true, std::memory_order_acq_rel)) return;
    for (auto& wake : wakers_) wake();
  }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // CANCELLED, the error of every wait that the flag ended.
  void raise_if_cancelled() const {
    if (cancelled()) raise(Code::kCancelled, "the iterator was cancelled");
  }

  // Keeps `wake` registered for its lifetime. wake runs under the cancellation's lock, so
  // once the registration is destroyed it never runs again; it must not call back into
  // this object and may take only locks that are never held while a registration is made
  // or destroyed.
  class Registration {
   public:
    Registration() = default;
    Registration(std::shared_ptr<Cancellation> c, Waker wake) : c_(std::move(c)) {
      if (!c_) return;
      std::lock_guard<std::mutex> lock(c_->mu_);
      it_ = c_->wakers_.insert(c_->wakers_.end(), std::move(wake));
    }
    ~Registration() {
      if (!c_) return;
      std::lock_guard<std::mutex> lock(c_->mu_);
      c_->wakers_.erase(it_);
    }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;

   private:
    std::shared_ptr<Cancellation> c_;
    std::list<Waker>::iterator it_;
  };

 private:
  std::mutex mu_;
  std::atomic<bool> cancelled_{false};
  std::list<Waker> wakers_;
};

}  // namespace dinput
