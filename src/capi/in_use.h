// Detects two threads calling into one iterator handle at once. The header documents that
// calls on one iterator must not overlap, but a misuse must not corrupt the heap (the
// iterators underneath are not thread-safe): the second caller fails with FAILED_PRECONDITION
// instead, and the first call goes on undisturbed.
#pragma once

#include <atomic>

#include "core/status.h"

namespace dinput::capi {

// A flag held for the duration of one call on a handle.
class InUseFlag {
 public:
  InUseFlag() = default;
  // Handles are built by moving a temporary into place (capi::new_handle); the new home
  // starts idle, as no call can be running on an object that is still being built.
  InUseFlag(InUseFlag&&) noexcept {}
  InUseFlag& operator=(InUseFlag&&) = delete;
  bool try_acquire() { return !busy_.exchange(true, std::memory_order_acquire); }
  void release() { busy_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> busy_{false};
};

// Holds the flag for the scope; raises FAILED_PRECONDITION naming `fn` when another thread
// holds it.
class InUseScope {
 public:
  InUseScope(InUseFlag& flag, const char* fn) : flag_(flag) {
    if (!flag_.try_acquire())
      raise(Code::kFailedPrecondition, fn,
            ": the iterator is already in use by another thread (calls on one iterator must not "
            "overlap)");
  }
  ~InUseScope() { flag_.release(); }
  InUseScope(const InUseScope&) = delete;
  InUseScope& operator=(const InUseScope&) = delete;

 private:
  InUseFlag& flag_;
};

}  // namespace dinput::capi
