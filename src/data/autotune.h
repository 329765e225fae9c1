// The autotuner of one pipeline instance (docs/autotune.md): the AUTOTUNE settings of its
// nodes (a parallel map's or batch's parallelism, a prefetch's buffer size) are knobs that
// start low and rise while a model of the measured rates says that one more would cut the
// time the stage's consumer waits, as long as the estimated memory of all knobs stays within
// the pipeline's RAM budget. They come down again when the estimate outgrows the budget (the
// elements grew), when a parallelism raise did not lift the stage's rate, and when the
// consumer has not waited for a long time and the model says a lower value would do.
//
// Hot path: a stage reads its knob with one relaxed load per element and counts locally; it
// hands its counts to the knob (a few relaxed read-modify-writes) every kFlushEvery elements
// and after each wait, and only then may it run a tuning step (at most one per kPeriodNs,
// on whichever thread gets there first). Knob values never change an element, its order or a
// saved state: they only decide how much work is in flight.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/element.h"

namespace dinput {

class Dataset;

enum class KnobKind {
  kParallelism,  // calls run at once; up to 2 per thread wait to be taken
  kBuffer,       // elements made ahead on another thread
};

// One AUTOTUNE setting of one node. The node's iterators share it (one after another when a
// repeat makes a new one each epoch, so a new epoch starts where the last one got to).
class Knob {
 public:
  Knob(std::string name, KnobKind kind, int64_t minimum, int64_t maximum, int64_t start,
       int64_t elements_per_unit, int stage);

  int64_t value() const { return value_.load(std::memory_order_relaxed); }
  const std::string& name() const { return name_; }
  KnobKind kind() const { return kind_; }
  int64_t minimum() const { return min_; }
  int64_t maximum() const { return max_; }
  // The lowest value the tuner lowers it to: its start (lowering takes back raises only).
  int64_t floor() const { return start_; }
  int stage() const { return stage_; }
  // The stage does the work on its consumer's thread while the knob is at its minimum (a map
  // at parallelism 1): the first raise then saves the work's time less a thread hand-off per
  // element, rather than what the queue model predicts. Called once, right after knob().
  void set_inline_at_minimum() { inline_at_min_.store(true, std::memory_order_relaxed); }
  bool inline_at_minimum() const { return inline_at_min_.load(std::memory_order_relaxed); }

  // The consumer side: `elements` handed out, of which the consumer spent `wait_ns` blocked
  // on this stage's background work.
  void add_consumer(int64_t elements, int64_t wait_ns);
  // One timed unit of the background work: `elements` made in `ns` wall-clock time, of which
  // `cpu_ns` on a CPU (-1: not measured).
  void add_work(int64_t elements, int64_t ns, int64_t cpu_ns);
  // The payload bytes of one element handed out (sampled).
  void add_bytes(int64_t bytes);

  // The estimated bytes the knob holds at `value` (0 until an element was measured).
  int64_t bytes_at(int64_t value) const;

 private:
  friend class Autotuner;
  const std::string name_;
  const KnobKind kind_;
  const int64_t min_, max_;
  const int64_t elements_per_unit_;
  const int stage_;
  const int64_t start_;
  std::atomic<int64_t> value_;
  std::atomic<bool> inline_at_min_{false};
  std::atomic<int64_t> elements_{0}, wait_ns_{0};
  std::atomic<int64_t> work_elements_{0}, work_ns_{0}, cpu_elements_{0}, cpu_ns_{0};
  std::atomic<int64_t> byte_samples_{0}, bytes_{0};
  // The tuner's view at its last step (under Autotuner::mu_).
  int64_t seen_elements_ = 0, seen_wait_ns_ = 0, seen_at_ns_ = -1;
  // A parallelism raise is judged by the rate of the second period after it (the model cannot
  // see the cores other processes take): the rate before it, the steps until it is judged (2:
  // the raise was the last step's), how many steps the knob then rests after a raise that did
  // not pay (doubling each time), and the value it goes back to then.
  double rate_before_ = 0;
  int judging_steps_ = 0;
  int64_t rest_steps_ = 0, backoff_steps_ = 0;
  int64_t value_before_ = 0;
  // Steps in a row in which the model would not have raised the knob to its value.
  int64_t unneeded_steps_ = 0;
  // The background work's counts at the last step: the model uses the period's own averages,
  // so that a stage whose cost changes is judged on its cost now.
  int64_t seen_work_elements_ = 0, seen_work_ns_ = 0, seen_cpu_elements_ = 0, seen_cpu_ns_ = 0;
};

// What a stage keeps between flushes to its knob; used on the consumer's thread only.
struct KnobMeter {
  static constexpr int64_t kFlushEvery = 16;
  int64_t elements = 0;
  int64_t wait_ns = 0;
};

// The knobs of one pipeline instance and the model that sets them.
class Autotuner {
 public:
  static constexpr int64_t kPeriodNs = 10'000'000;  // 10 ms between steps

  // ram_budget: the most bytes all knobs may hold (0: default_ram_budget()).
  explicit Autotuner(int64_t ram_budget);

  // The knob `name` of `node`, made with these settings the first time; later calls for the
  // same live node return the same knob. `stage`: the statistics' stage id (-1: none).
  std::shared_ptr<Knob> knob(const Dataset& node, const char* name, KnobKind kind, int64_t minimum,
                             int64_t maximum, int64_t start, int64_t elements_per_unit, int stage);

  // A stage's counts since its last flush: hands them to `k` and runs a step when one is
  // due. Resets `m`.
  void flush(Knob& k, KnobMeter& m);

  int64_t ram_budget() const { return ram_budget_; }
  // For the statistics: the knobs (those of iterators already gone too, with their last
  // values), the estimated bytes of those in use, and the steps so far.
  std::vector<std::shared_ptr<Knob>> knobs() const;
  int64_t estimated_bytes() const;
  int64_t steps() const { return steps_.load(std::memory_order_relaxed); }
  // The knobs raised so far, all steps together, and lowered.
  int64_t raises() const { return raises_.load(std::memory_order_relaxed); }
  int64_t lowers() const { return lowers_.load(std::memory_order_relaxed); }

  int64_t now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                start_)
        .count();
  }

 private:
  struct Entry {
    std::weak_ptr<const Dataset> node;
    const Dataset* address;
    std::string name;
    std::shared_ptr<Knob> knob;
  };
  void step(int64_t now);
  static bool in_use(const Entry& e);

  const int64_t ram_budget_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<int64_t> next_step_ns_{kPeriodNs};
  std::atomic<int64_t> steps_{0}, raises_{0}, lowers_{0};
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

// Half of the machine's physical memory (1 GiB where it cannot be read).
int64_t default_ram_budget();

// The largest parallelism AUTOTUNE may reach: 4 threads per core, at least 16. The model
// stops below it where the work is CPU-bound (it does not raise past the cores it measures
// the work can use).
int64_t autotune_max_parallelism();

// The CPU time of the calling thread, in nanoseconds (-1 where the clock is missing).
int64_t thread_cpu_ns();

// The payload bytes of an element (strings count their length).
int64_t payload_bytes(const Element& e);

// Probability that the consumer finds an M/M/1/K queue of `capacity` empty, where the
// producer makes `rho` elements in the time the consumer takes one.
double empty_probability(double rho, int64_t capacity);

}  // namespace dinput
