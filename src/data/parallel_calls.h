// Calls in flight on a thread pool, whose results are taken in the order they were submitted
// or, where order does not matter, as they finish. A call's result is one element (a batch)
// or a run of elements (the map, whose unit of work is a run). The parallel map and the parallel
// batch both read their input on the consumer's thread (input iterators are single-consumer) and
// hand the costly part to the pool through this one queue, so both stop waiting when the
// iterator is cancelled (data/cancellation.h) and both keep an input error in line behind
// the results before it.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "core/element.h"
#include "data/cancellation.h"
#include "data/thread_pool.h"

namespace dinput {

template <typename Result>
class ParallelCallsOf {
 public:
  // threads: the pool's size; max_in_flight: how many calls may wait to be taken.
  // cancellation may be null (an iterator nobody can cancel).
  ParallelCallsOf(int threads, size_t max_in_flight, std::shared_ptr<Cancellation> cancellation);
  ~ParallelCallsOf();
  ParallelCallsOf(const ParallelCallsOf&) = delete;
  ParallelCallsOf& operator=(const ParallelCallsOf&) = delete;

  bool full() const { return in_flight_.size() >= max_in_flight_; }
  bool empty() const { return in_flight_.empty(); }
  // Calls submitted and not yet taken, and the most there may be (the statistics' fill).
  size_t in_flight() const { return in_flight_.size(); }
  size_t max_in_flight() const { return max_in_flight_; }
  // Grows the pool to `threads` (it never shrinks) and lets `max_in_flight` calls wait
  // (autotuning raises and lowers them; lowered, the spare threads idle).
  void set_threads(int threads, size_t max_in_flight) {
    pool_->grow(threads);
    max_in_flight_ = max_in_flight;
  }
  // The time take() spent blocked since the last call, in nanoseconds (autotuning's measure
  // of the consumer's wait).
  int64_t take_waited_ns() {
    const int64_t w = waited_ns_;
    waited_ns_ = 0;
    return w;
  }

  // Runs `work` on the pool; take() hands out its result or raises its exception.
  void submit(std::function<Result()> work);
  // An error found by the consumer (reading input): take() raises it once the calls
  // submitted before it have been taken.
  void submit_error(std::exception_ptr error);

  // Waits for and removes the oldest call (in_order) or the first finished one, returning
  // its result or raising its exception; CANCELLED once the iterator is cancelled.
  // Must not be called when empty().
  Result take(bool in_order);

 private:
  struct Slot {
    bool done = false;
    Result result;
    std::exception_ptr error;
  };

  size_t max_in_flight_;
  int64_t waited_ns_ = 0;  // the consumer's, in take()
  std::deque<std::shared_ptr<Slot>> in_flight_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<Cancellation> cancellation_;
  Cancellation::Registration wake_on_cancel_;  // after what the waker touches
  std::unique_ptr<ThreadPool> pool_;           // last: its workers use the members above
};

// Instantiated in parallel_calls.cc for these two.
using ParallelCalls = ParallelCallsOf<Element>;
using ParallelRunCalls = ParallelCallsOf<std::vector<Element>>;

}  // namespace dinput
