// The storage of the per-replica values a distributed iterator hands out, kept from one step
// to the next. A step over R replicas used to allocate a handle, its vector and a vector per
// replica, and free them all again in dinput_per_replica_free: with small pieces that was
// much of a step's cost. dinput_per_replica_free now releases the value's tensors as before
// (the batch buffers go at the same moment) and gives the emptied storage back here, where
// the iterator's next get_next takes it. What users hold is unchanged: a value not freed yet
// is never reused, and tensors or elements taken out of it (dinput_element_ref,
// dinput_per_replica_ref, ...) are copies that share only the buffers.
#pragma once

#include <atomic>
#include <memory>

#include "capi/handles.h"

#if defined(__SANITIZE_ADDRESS__)
#define DINPUT_STEP_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DINPUT_STEP_POOL_ASAN 1
#endif
#endif
#ifdef DINPUT_STEP_POOL_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace dinput::capi {

class StepPool {
 public:
  StepPool() = default;
  ~StepPool() { drop(spare_.exchange(nullptr, std::memory_order_acq_rel)); }
  StepPool(const StepPool&) = delete;
  StepPool& operator=(const StepPool&) = delete;

  // A value given back, its tensors released, or null: the caller makes a new one.
  std::unique_ptr<dinput_per_replica> take() {
    dinput_per_replica* v = spare_.exchange(nullptr, std::memory_order_acq_rel);
    if (v) poison(v, false);
    return std::unique_ptr<dinput_per_replica>(v);
  }

  // Releases the tensors of `value` now, on the calling thread (any thread), and keeps its
  // storage for take(). One value is kept; one given while another is kept is freed.
  void give(std::unique_ptr<dinput_per_replica> value) noexcept {
    value->pool.reset();  // the pool does not keep itself alive through its spare
    for (auto& e : value->replicas) e.parts.clear();
    poison(value.get(), true);
    drop(spare_.exchange(value.release(), std::memory_order_acq_rel));
  }

 private:
  static void drop(dinput_per_replica* v) noexcept {
    if (!v) return;
    poison(v, false);
    std::unique_ptr<dinput_per_replica> owned(v);
  }

  // In AddressSanitizer builds a kept value (the handle, its replicas' elements and their
  // tensors) is poisoned until taken again, so that a borrowed pointer (dinput_per_replica_get,
  // dinput_element_get, dinput_tensor_data's tensor) used after its value was freed is still
  // reported, as it was when the value was deleted.
  static void poison(dinput_per_replica* v, bool on) noexcept {
#ifdef DINPUT_STEP_POOL_ASAN
    auto mark = [on](const void* p, size_t bytes) {
      if (on)
        ASAN_POISON_MEMORY_REGION(p, bytes);
      else
        ASAN_UNPOISON_MEMORY_REGION(p, bytes);
    };
    if (!on) mark(v, sizeof *v);
    if (!on) mark(v->replicas.data(), v->replicas.capacity() * sizeof(dinput_element));
    for (auto& e : v->replicas) mark(e.parts.data(), e.parts.capacity() * sizeof(Tensor));
    if (on) mark(v->replicas.data(), v->replicas.capacity() * sizeof(dinput_element));
    if (on) mark(v, sizeof *v);
#else
    (void)v;
    (void)on;
#endif
  }

  std::atomic<dinput_per_replica*> spare_{nullptr};
};

}  // namespace dinput::capi
