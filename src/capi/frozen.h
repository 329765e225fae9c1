// Specs and options are plain values the caller fills in with setters, then hands to the
// functions that build datasets and distributions. Those functions copy them, so a later
// setter could never reach what was built; rather than let a caller believe it had changed
// a pipeline, the first use freezes the object and every later setter fails with
// FAILED_PRECONDITION naming the function that used it. Frozen objects are only read, so
// they may then be shared by threads.
#pragma once

#include <atomic>

#include "capi/firewall.h"
#include "core/status.h"

namespace dinput::capi {

class FreezeMark {
 public:
  FreezeMark() = default;
  // Handles are built by moving a temporary into place (capi::new_handle); a new object is
  // never in use yet.
  FreezeMark(FreezeMark&&) noexcept {}
  FreezeMark& operator=(FreezeMark&&) = delete;

  // Records the first function that kept the object's values. Called on objects passed as
  // const (using one does not change its values), hence the mutable member.
  void freeze(const char* by) const {
    const char* none = nullptr;
    by_.compare_exchange_strong(none, by, std::memory_order_acq_rel);
  }
  const char* frozen_by() const { return by_.load(std::memory_order_acquire); }

  // Raises FAILED_PRECONDITION when frozen, naming the setter being called (the exported
  // function running) and `what` the object is.
  void check_mutable(const char* what) const {
    if (const char* by = frozen_by())
      raise(Code::kFailedPrecondition, current_function(), ": ", what, " already used by ", by,
            "; values are copied when used, so a change now would reach nothing; make a new one");
  }

 private:
  mutable std::atomic<const char*> by_{nullptr};
};

}  // namespace dinput::capi
