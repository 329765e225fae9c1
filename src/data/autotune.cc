#include "data/autotune.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <thread>

#include "data/dataset.h"

namespace dinput {

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

// A raise must cut the consumer's predicted wait by at least this share of the period.
constexpr double kMinGain = 0.01;
// The most raises of one step: the model is re-measured before it climbs further.
constexpr int kMaxRaisesPerStep = 16;
// A parallelism raise pays when the stage's rate then grows by this factor; one that does
// not makes the knob rest kFirstRest steps, twice as long after each further one that does
// not, up to kLongestRest.
constexpr double kPaidRaise = 1.10;
// What handing an element to a pool thread and back costs the consumer, about (a wake-up is
// avoided by the pool's spinning workers, a lock and a queue are not).
constexpr double kHandOffNs = 2000;
constexpr int64_t kFirstRest = 8;
constexpr int64_t kLongestRest = 512;
// A knob whose last unit bought nothing (per the model) this many steps in a row (1 s) is
// lowered.
constexpr int64_t kUnneededStepsToLower = 100;

int64_t cores() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 2 : static_cast<int64_t>(n);
}

// One knob's measurements over the last period, and the value the climb has reached.
struct Candidate {
  Knob* knob;
  int64_t value;
  double wait;      // the consumer's wait over the period, ns (lowered as the climb predicts)
  double period;    // ns
  double consumer;  // the consumer's own time per element, ns
  double work;      // wall-clock time per element of the background work, ns
  double cpu;       // CPU time per element of that work, ns
  double rate;      // elements per ns over the period
  double elements;  // taken over the period
};

// The consumer's expected wait per element with the knob at `value`: the stage delivers an
// element every `service` ns on average into a queue of `slots`; the consumer takes one every
// `consumer` ns and waits when it finds the queue empty (an M/M/1/K model, as for tf.data's
// buffered stages). Parallel work is limited by the cores it can use.
double predicted_wait(const Candidate& c, int64_t value, int64_t slots_per_unit) {
  double service = c.work;
  if (c.knob->kind() == KnobKind::kParallelism)
    service = std::max(c.work / static_cast<double>(value), c.cpu / static_cast<double>(cores()));
  if (service <= 0) return 0;
  const double rho = c.consumer / service;
  return empty_probability(rho, value * slots_per_unit) * service;
}

// The wait over the period's elements that lowering the knob from `value` to value - 1 is
// predicted to add: the model's, or, for a stage that then does its work on the consumer's
// thread, the work's time less the hand-offs it saves (the first raise's gain, reversed).
double lowering_cost(const Candidate& c, int64_t value) {
  const Knob& k = *c.knob;
  if (value - 1 == k.minimum() && k.inline_at_minimum()) return c.elements * (c.work - kHandOffNs);
  const int64_t slots = k.kind() == KnobKind::kParallelism ? 2 : 1;
  return c.elements * (predicted_wait(c, value - 1, slots) - predicted_wait(c, value, slots));
}

}  // namespace

// Whether an iterator holds the knob (the tuner holds it too): only those hold memory.
bool Autotuner::in_use(const Entry& e) { return e.knob.use_count() > 1; }

namespace {

int64_t slots_per_unit(const Knob& k) { return k.kind() == KnobKind::kParallelism ? 2 : 1; }

}  // namespace

Knob::Knob(std::string name, KnobKind kind, int64_t minimum, int64_t maximum, int64_t start,
           int64_t elements_per_unit, int stage)
    : name_(std::move(name)),
      kind_(kind),
      min_(minimum),
      max_(std::max(minimum, maximum)),
      elements_per_unit_(elements_per_unit),
      stage_(stage),
      start_(std::min(std::max(start, min_), max_)),
      value_(start_) {}

void Knob::add_consumer(int64_t elements, int64_t wait_ns) {
  if (elements) elements_.fetch_add(elements, kRelaxed);
  if (wait_ns) wait_ns_.fetch_add(wait_ns, kRelaxed);
}

void Knob::add_work(int64_t elements, int64_t ns, int64_t cpu_ns) {
  work_elements_.fetch_add(elements, kRelaxed);
  work_ns_.fetch_add(ns, kRelaxed);
  if (cpu_ns >= 0) {
    cpu_elements_.fetch_add(elements, kRelaxed);
    cpu_ns_.fetch_add(cpu_ns, kRelaxed);
  }
}

void Knob::add_bytes(int64_t bytes) {
  byte_samples_.fetch_add(1, kRelaxed);
  bytes_.fetch_add(bytes, kRelaxed);
}

int64_t Knob::bytes_at(int64_t value) const {
  const int64_t samples = byte_samples_.load(kRelaxed);
  if (samples == 0) return 0;
  const double per_element = static_cast<double>(bytes_.load(kRelaxed)) / samples;
  return static_cast<int64_t>(per_element * static_cast<double>(value * elements_per_unit_));
}

Autotuner::Autotuner(int64_t ram_budget)
    : ram_budget_(ram_budget > 0 ? ram_budget : default_ram_budget()) {}

std::shared_ptr<Knob> Autotuner::knob(const Dataset& node, const char* name, KnobKind kind,
                                      int64_t minimum, int64_t maximum, int64_t start,
                                      int64_t elements_per_unit, int stage) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& e : entries_) {
    if (e.address != &node || e.name != name) continue;
    if (!e.node.expired()) return e.knob;
    // A dead node's address, reused: start afresh.
    e.node = node.ptr();
    e.knob = std::make_shared<Knob>(name, kind, minimum, maximum, start, elements_per_unit, stage);
    e.knob->seen_at_ns_ = now_ns();
    return e.knob;
  }
  auto k = std::make_shared<Knob>(name, kind, minimum, maximum, start, elements_per_unit, stage);
  k->seen_at_ns_ = now_ns();  // its first period starts now: the next step may raise it
  entries_.push_back(Entry{node.ptr(), &node, name, k});
  return k;
}

void Autotuner::flush(Knob& k, KnobMeter& m) {
  k.add_consumer(m.elements, m.wait_ns);
  m = KnobMeter{};
  const int64_t now = now_ns();
  if (now < next_step_ns_.load(kRelaxed)) return;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || now < next_step_ns_.load(kRelaxed)) return;
  next_step_ns_.store(now + kPeriodNs, kRelaxed);
  step(now);
}

void Autotuner::step(int64_t now) {
  steps_.fetch_add(1, kRelaxed);
  // Knobs of nodes that are gone and have no iterator left (the datasets an interleave's
  // function made) leave; the others stay listed in the statistics after their iterators end.
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [](const Entry& e) { return e.node.expired() && !in_use(e); }),
                 entries_.end());
  std::vector<Candidate> candidates;      // to raise: their consumer waited
  std::vector<Candidate> unneeded_knobs;  // to lower: their last units bought nothing for long
  std::vector<Knob*> in_use_knobs;
  int64_t total = 0;
  for (auto& e : entries_) {
    Knob& k = *e.knob;
    if (!in_use(e)) continue;
    in_use_knobs.push_back(&k);
    const int64_t elements = k.elements_.load(kRelaxed), wait = k.wait_ns_.load(kRelaxed);
    const int64_t n = elements - k.seen_elements_, waited = wait - k.seen_wait_ns_;
    const int64_t period = k.seen_at_ns_ < 0 ? -1 : now - k.seen_at_ns_;
    k.seen_elements_ = elements;
    k.seen_wait_ns_ = wait;
    k.seen_at_ns_ = now;
    const int64_t work_elements = k.work_elements_.load(kRelaxed);
    const int64_t work_ns = k.work_ns_.load(kRelaxed);
    const int64_t cpu_elements = k.cpu_elements_.load(kRelaxed), cpu_ns = k.cpu_ns_.load(kRelaxed);
    const int64_t period_work_elements = work_elements - k.seen_work_elements_;
    const int64_t period_work_ns = work_ns - k.seen_work_ns_;
    const int64_t period_cpu_elements = cpu_elements - k.seen_cpu_elements_;
    const int64_t period_cpu_ns = cpu_ns - k.seen_cpu_ns_;
    k.seen_work_elements_ = work_elements;
    k.seen_work_ns_ = work_ns;
    k.seen_cpu_elements_ = cpu_elements;
    k.seen_cpu_ns_ = cpu_ns;
    const double rate = period > 0 ? static_cast<double>(n) / static_cast<double>(period) : 0;
    // The period right after a raise lets new threads start and the queue fill: the raise is
    // judged on the one after it (a further raise meanwhile is judged in its place), and the
    // knob is not lowered until then.
    const bool warming_up = k.judging_steps_ == 2;
    if (warming_up) {
      k.judging_steps_ = 1;
    } else if (k.judging_steps_ == 1) {
      k.judging_steps_ = 0;
      if (rate < k.rate_before_ * kPaidRaise) {
        // The raise bought nothing: back to where it was, and rest.
        k.backoff_steps_ = std::min(std::max(k.backoff_steps_ * 2, kFirstRest), kLongestRest);
        k.rest_steps_ = k.backoff_steps_;
        const int64_t back = k.value() - std::max(k.value_before_, k.minimum());
        if (back > 0) {
          k.value_.store(k.value() - back, kRelaxed);
          lowers_.fetch_add(back, kRelaxed);
        }
      } else {
        k.backoff_steps_ = 0;
      }
    }
    total += k.bytes_at(k.value());
    if (k.rest_steps_ > 0) {
      --k.rest_steps_;
      continue;
    }
    if (period <= 0 || n <= 0 || work_elements == 0) {
      k.unneeded_steps_ = 0;
      continue;
    }
    Candidate c{};
    c.knob = &k;
    c.rate = rate;
    c.elements = static_cast<double>(n);
    c.value = k.value();
    c.wait = static_cast<double>(waited);
    c.period = static_cast<double>(period);
    c.consumer = std::max(0.0, static_cast<double>(period - waited) / static_cast<double>(n));
    // The period's own averages where it timed some work, else all the work timed so far.
    c.work = period_work_elements > 0
                 ? static_cast<double>(period_work_ns) / static_cast<double>(period_work_elements)
                 : static_cast<double>(work_ns) / static_cast<double>(work_elements);
    if (period_cpu_elements > 0)
      c.cpu = static_cast<double>(period_cpu_ns) / static_cast<double>(period_cpu_elements);
    else if (cpu_elements > 0)
      c.cpu = static_cast<double>(cpu_ns) / static_cast<double>(cpu_elements);
    else
      c.cpu = c.work;
    // A stage whose consumer hardly waited has nothing to gain.
    if (waited >= kMinGain * static_cast<double>(period) && k.value() < k.maximum())
      candidates.push_back(c);
    // A knob whose last unit the model would not have raised it for, kUnneededStepsToLower
    // steps in a row, comes down.
    const bool unneeded =
        !warming_up && k.value() > k.floor() && lowering_cost(c, k.value()) < kMinGain * c.period;
    k.unneeded_steps_ = unneeded ? k.unneeded_steps_ + 1 : 0;
    if (k.unneeded_steps_ >= kUnneededStepsToLower) unneeded_knobs.push_back(c);
  }
  // Over the budget (the elements grew since the knobs rose): lower the knobs that free the
  // most memory per unit first, whatever the waits, until the estimate fits (or every knob is
  // back at its start: the budget only takes back what tuning added).
  while (total > ram_budget_) {
    Knob* best = nullptr;
    int64_t best_freed = 0;
    for (Knob* k : in_use_knobs) {
      if (k->value() <= k->floor()) continue;
      const int64_t freed = k->bytes_at(k->value()) - k->bytes_at(k->value() - 1);
      if (!best || freed > best_freed) best = k, best_freed = freed;
    }
    if (!best || best_freed <= 0) break;
    best->value_.store(best->value() - 1, kRelaxed);
    best->judging_steps_ = 0;
    lowers_.fetch_add(1, kRelaxed);
    total -= best_freed;
  }
  // Unneeded for long: down to the lowest value whose next unit the model would not raise
  // it for (the raise's threshold, so that a lowered knob is not raised straight back), at
  // most kMaxRaisesPerStep units per step.
  for (auto& c : unneeded_knobs) {
    Knob& k = *c.knob;
    int64_t value = k.value();
    for (int i = 0; i < kMaxRaisesPerStep && value > k.floor(); ++i) {
      if (lowering_cost(c, value) >= kMinGain * c.period) break;
      --value;
    }
    const int64_t lowered = k.value() - value;
    k.unneeded_steps_ = 0;
    if (lowered <= 0) continue;
    total -= k.bytes_at(k.value()) - k.bytes_at(value);
    k.value_.store(value, kRelaxed);
    k.judging_steps_ = 0;
    lowers_.fetch_add(lowered, kRelaxed);
  }
  for (auto& c : candidates) c.value = c.knob->value();  // after the budget's lowering
  // Hill climbing: raise the knob whose next step cuts the predicted wait most, while the
  // memory the raise adds fits the budget; stop when no raise is worth it.
  for (int raises = 0; raises < kMaxRaisesPerStep; ++raises) {
    Candidate* best = nullptr;
    double best_gain = 0;
    int64_t best_extra = 0;
    for (auto& c : candidates) {
      if (c.value >= c.knob->maximum()) continue;
      const int64_t slots = slots_per_unit(*c.knob);
      const double now_wait = predicted_wait(c, c.value, slots);
      if (now_wait <= 0) continue;
      const double next_wait = predicted_wait(c, c.value + 1, slots);
      // The model's cut, over the period's elements, and no more than that share of the wait
      // measured: waits the model does not explain (a thread hand-off per element, where the
      // work is cheaper than the hand-off) are not cut by more threads or slots.
      double gain =
          std::min(c.elements * (now_wait - next_wait), c.wait * (1 - next_wait / now_wait));
      // Work done on the consumer's thread moves to a pool: the consumer saves the work's
      // time, less a hand-off per element.
      if (c.value == c.knob->minimum() && c.knob->inline_at_minimum())
        gain = std::min(c.wait, c.elements * (c.work - kHandOffNs));
      if (gain < kMinGain * c.period) continue;
      const int64_t extra = c.knob->bytes_at(c.value + 1) - c.knob->bytes_at(c.value);
      if (total + extra > ram_budget_) continue;
      if (!best || gain > best_gain) best = &c, best_gain = gain, best_extra = extra;
    }
    if (!best) break;
    ++best->value;
    best->wait -= best_gain;
    total += best_extra;
  }
  for (auto& c : candidates) {
    const int64_t raised = c.value - c.knob->value();
    if (raised <= 0) continue;
    if (c.knob->kind() == KnobKind::kParallelism) {
      c.knob->rate_before_ = c.rate;
      c.knob->value_before_ = c.knob->value();
      c.knob->judging_steps_ = 2;
    }
    c.knob->value_.store(c.value, kRelaxed);
    raises_.fetch_add(raised, kRelaxed);
  }
}

std::vector<std::shared_ptr<Knob>> Autotuner::knobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<Knob>> out;
  for (const auto& e : entries_) out.push_back(e.knob);
  return out;
}

int64_t Autotuner::estimated_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t total = 0;
  for (const auto& e : entries_)
    if (in_use(e)) total += e.knob->bytes_at(e.knob->value());
  return total;
}

int64_t default_ram_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{1} << 30;
  return static_cast<int64_t>(pages) * page / 2;
}

int64_t autotune_max_parallelism() {
  return std::min<int64_t>(1024, std::max<int64_t>(16, 4 * cores()));
}

int64_t thread_cpu_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

int64_t payload_bytes(const Element& e) {
  int64_t n = 0;
  for (const auto& t : e)
    if (t.defined()) n += static_cast<int64_t>(t.byte_size());
  return n;
}

double empty_probability(double rho, int64_t capacity) {
  if (rho <= 0) return 1;
  const double k1 = static_cast<double>(capacity + 1);
  if (std::fabs(rho - 1) < 1e-9) return 1 / k1;
  const double power = std::pow(rho, k1);
  if (!std::isfinite(power)) return 0;
  return (1 - rho) / (1 - power);
}

}  // namespace dinput
