// The storage of the per-replica values a distributed iterator hands out, kept from one step
// to the next. A step over R replicas used to allocate a handle, its vector and a vector per
// replica, and free them all again in dinput_per_replica_free: with small pieces that was
// much of a step's cost. dinput_per_replica_free now releases the value's tensors as before
// (the batch buffers go at the same moment) and gives the emptied storage back here, where
// the iterator's next get_next takes it. What users hold is unchanged: a value not freed yet
// is never reused, and tensors or elements taken out of it (dinput_element_ref,
// dinput_per_replica_ref, ...) are copies that share only the buffers.
//
// Pools live as long as the process, and an iterator leases one (StepPoolLease) that goes
// back to a list of idle pools when the iterator is freed. So a value holds a plain pointer
// to its pool, and a value freed after its iterator still has a pool to give its storage to
// (perhaps leased again by then: the storage suits any iterator, or freed at once if the pool
// is idle). A counted reference from each value instead cost two atomic operations per step.
// The pools are at most as many as iterators that existed at once; idle ones keep nothing.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "capi/handles.h"
#include "core/immortal.h"

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
  ~StepPool() { drop(spare_.exchange(nullptr, std::memory_order_acq_rel)); }  // never runs
  StepPool(const StepPool&) = delete;
  StepPool& operator=(const StepPool&) = delete;

  // A value given back, its tensors released, or null: the caller makes a new one.
  std::unique_ptr<dinput_per_replica> take() {
    dinput_per_replica* v = spare_.exchange(nullptr, std::memory_order_acq_rel);
    if (v) poison(v, false);
    return std::unique_ptr<dinput_per_replica>(v);
  }

  // Releases the tensors of `value` now, on the calling thread (any thread), and keeps its
  // storage for take(). One value is kept; one given while another is kept is freed, and so
  // is one given to a pool that no iterator leases (its iterator was freed): idle pools keep
  // nothing. The order of the exchange and the lease check here, and of the lease's end and
  // its exchange (~StepPoolLease), means that whichever runs second finds the value and
  // frees it.
  void give(std::unique_ptr<dinput_per_replica> value) noexcept {
    value->pool = nullptr;
    for (auto& e : value->replicas) e.clear();
    poison(value.get(), true);
    drop(spare_.exchange(value.release(), std::memory_order_seq_cst));
    if (!leased_.load(std::memory_order_seq_cst))
      drop(spare_.exchange(nullptr, std::memory_order_seq_cst));
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
    if (!on) mark(v->replicas.data(), v->replicas.capacity() * sizeof(Element));
    for (auto& e : v->replicas) mark(e.data(), e.capacity() * sizeof(Tensor));
    if (on) mark(v->replicas.data(), v->replicas.capacity() * sizeof(Element));
    if (on) mark(v, sizeof *v);
#else
    (void)v;
    (void)on;
#endif
  }

  std::atomic<dinput_per_replica*> spare_{nullptr};
  std::atomic<bool> leased_{false};

  friend class StepPoolLease;
  struct Pools {
    std::mutex mu;
    std::vector<std::unique_ptr<StepPool>> all;  // never destroyed (Immortal)
    std::vector<StepPool*> idle;
  };
  static Pools& pools() {
    static Immortal<Pools> pools;
    return *pools;
  }
};

// An iterator's pool: an idle one, or a new one; back to the idle ones (its spare freed)
// when the lease ends.
class StepPoolLease {
 public:
  StepPoolLease() {
    StepPool::Pools& p = StepPool::pools();
    std::lock_guard<std::mutex> lock(p.mu);
    if (!p.idle.empty()) {
      pool_ = p.idle.back();
      p.idle.pop_back();
    } else {
      p.all.push_back(std::make_unique<StepPool>());
      pool_ = p.all.back().get();
    }
    pool_->leased_.store(true, std::memory_order_seq_cst);
  }
  ~StepPoolLease() {
    if (!pool_) return;
    pool_->leased_.store(false, std::memory_order_seq_cst);
    StepPool::drop(pool_->spare_.exchange(nullptr, std::memory_order_seq_cst));
    StepPool::Pools& p = StepPool::pools();
    std::lock_guard<std::mutex> lock(p.mu);
    p.idle.push_back(pool_);
  }
  StepPoolLease(StepPoolLease&& other) noexcept : pool_(std::exchange(other.pool_, nullptr)) {}
  StepPoolLease& operator=(StepPoolLease&&) = delete;
  StepPoolLease(const StepPoolLease&) = delete;

  StepPool* get() const { return pool_; }
  StepPool* operator->() const { return pool_; }

 private:
  StepPool* pool_ = nullptr;
};

}  // namespace dinput::capi
