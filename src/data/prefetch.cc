// prefetch: a background thread keeps up to `buffer_size` elements ready.
//
// Its saved state counts what the consumer took, not what the thread read
// (docs/checkpoint.md): every `buffer_size` elements the thread saves its input's state before
// reading the next one and sends the snapshot along with that element. The consumer keeps
// the last snapshot it passed; a save is that snapshot and the number of elements taken
// since. A restore restores the input from the snapshot and reads past those elements.
//
// A data error (data/data_errors.h) is one item in line: the consumer gets the elements read
// before it, then the error, and the thread reads on, so that ignore_errors() after a prefetch
// drops just that element, as it does without the prefetch. Items, errors included, are what
// the saved state counts.
//
// The adaptive form (distribute_dataset's read-ahead) makes cheap elements on the consumer's
// thread instead (data/background_producer.h, Placement::kAdaptive), and keeps more elements
// ahead than `buffer_size` while they are small (kDeepBytes below).
#include <algorithm>
#include <chrono>

#include "data/autotune.h"
#include "data/background_producer.h"
#include "data/data_errors.h"
#include "data/nodes.h"
#include "data/stage_stats.h"
#include "data/state.h"

namespace dinput {

namespace {

// prefetch(AUTOTUNE): the buffer size it starts with, and the most the autotuner gives it.
constexpr size_t kAutotunePrefetchStart = 2;
constexpr int64_t kAutotunePrefetchMax = 4096;

// distribute_dataset's adaptive read-ahead keeps at least the elements it was asked for, and
// as many more as fit in kDeepBytes, by the largest element made so far, up to kDeepMax
// (docs/semantics.md, "Read-ahead"). With two elements ahead, a producer and a consumer of
// about the same speed took turns waiting for each other: whenever one lost its core for a
// moment (a time slice, a file unmapped), the other soon waited too. W1 on ZSTD files spent
// 19 ms of an epoch's 100 with its batching thread parked on the full queue, and 32 ms with
// the consumer waiting on the empty one.
constexpr int64_t kDeepBytes = int64_t{8} << 20;
constexpr size_t kDeepMax = 64;

class PrefetchIterator final : public Iterator, public BufferedIterator {
 public:
  int64_t buffered() const override {
    return producer_ ? static_cast<int64_t>(producer_->queued()) : 0;
  }
  int64_t buffer_capacity() const override {
    return static_cast<int64_t>(deep_ && producer_ ? producer_->capacity() : capacity_);
  }

  // The producer's placement, by name (BackgroundProducer<Item>'s enum needs Item complete).
  enum class Placement { kThread, kAdaptive, kCaller };  // kCaller: no thread at all
  // start: begin reading at once (not when the iterator is made to be restored).
  // tuner, knob: the autotuned buffer size (capacity is then its value now), or null.
  PrefetchIterator(std::unique_ptr<Iterator> input, size_t capacity,
                   std::shared_ptr<Cancellation> cancellation, Placement placement, bool start,
                   std::shared_ptr<Autotuner> tuner = nullptr, std::shared_ptr<Knob> knob = nullptr,
                   bool deep = false)
      : input_(std::move(input)),
        capacity_(capacity),
        // Autotuned: a snapshot every as many elements as the starting buffer size, whatever
        // the knob's value now, so that saved states do not depend on it.
        every_(static_cast<int64_t>(knob ? kAutotunePrefetchStart : capacity)),
        cancellation_(std::move(cancellation)),
        placement_(placement),
        tuner_(std::move(tuner)),
        knob_(std::move(knob)),
        deep_(deep) {
    base_ = snapshot();  // the input's start, before the thread touches it
    if (start) start_producer();
  }

  bool next(Element& out) override {
    if (placement_ == Placement::kAdaptive && producer_) {
      const int made = next_here(out);
      if (made >= 0) return made == 1;
    }
    Item item;
    // The element is made in `out`'s storage where it is made here (on the caller's thread):
    // no vector allocated and freed per element.
    item.element.swap(out);
    item.element.clear();
    if (placement_ == Placement::kCaller) {
      if (!produce(item, start_)) return false;
    } else {
      if (!producer_) start_producer();
      if (knob_) follow_knob();
      if (!producer_->next(item)) return false;
    }
    if (item.snapshot) {
      base_ = std::move(item.snapshot);
      base_index_ = item.index;
    }
    taken_ = item.index + 1;
    if (item.error) std::rethrow_exception(item.error);
    out = std::move(item.element);
    if (knob_ && producer_) measure(out);
    return true;
  }

  void save(StateWriter& w) const override {
    if (placement_ == Placement::kAdaptive && producer_ && !producer_->threaded()) {
      // Every element so far was made on the consumer's thread when asked for: the input
      // stands where the consumer does, and is saved as it is, with nothing to read again.
      const std::string here = save_to_bytes(*input_);
      w.section("prefetch", [&](StateWriter& s) {
        s.bytes(here);
        s.i64(0);
      });
      return;
    }
    if (!base_->state) std::rethrow_exception(base_->error);
    w.section("prefetch", [&](StateWriter& s) {
      s.bytes(*base_->state);
      s.i64(taken_ - base_index_);
    });
  }

  void restore(StateReader& r) override {
    if (producer_) raise(Code::kInternal, "prefetch: restore after the iterator started reading");
    StateReader s = r.section("prefetch");
    auto base = std::make_shared<Snapshot>();
    base->state = std::make_shared<const std::string>(s.bytes("the input's state"));
    StateReader in(*base->state, s.offset() - base->state->size(), "prefetch");
    const int64_t skip = s.i64_in("elements taken since", 0, INT64_MAX);
    s.finish();
    input_->restore(in);
    in.finish();
    const int64_t passed = skip_items(*input_, skip);
    if (passed < skip)
      raise(Code::kDataLoss, "prefetch: restoring the iterator state: the input ended after ",
            passed, " of the ", skip, " elements taken before the save");
    base_ = std::move(base);
    base_index_ = 0;
    taken_ = skip;
    produced_ = skip;
    start_ = skip;
    if (placement_ != Placement::kCaller) start_producer();
  }

 private:
  // The input's state before element `index`, or why it could not save.
  struct Snapshot {
    std::shared_ptr<const std::string> state;
    std::exception_ptr error;
  };
  struct Item {
    Element element;
    int64_t index = 0;
    std::shared_ptr<const Snapshot> snapshot;  // set every every_ elements
    std::exception_ptr error;                  // a data error in place of the element
  };

  std::shared_ptr<const Snapshot> snapshot() {
    auto snap = std::make_shared<Snapshot>();
    try {
      snap->state = std::make_shared<const std::string>(save_to_bytes(*input_));
    } catch (...) {
      snap->error = std::current_exception();  // raised by save(); iteration goes on
      can_save_ = false;
    }
    return snap;
  }

  // deep_, on the side that makes the element (produce()'s callers take turns): keeps the
  // producer's depth at what fits in kDeepBytes by the largest element so far, never below
  // capacity_ nor above kDeepMax. It is set before the element is queued, so a larger element
  // lowers it before any more are made; the queue then drains to the new depth. The
  // snapshots keep their cadence (every_), so saved states do not depend on it. Elements made
  // in next_here (cheap ones, while no thread exists) are not measured: they are not queued.
  void size_depth(const Element& e) {
    const int64_t bytes = std::max<int64_t>(payload_bytes(e), 1);
    if (bytes <= largest_) return;
    largest_ = bytes;
    const int64_t fit = std::min<int64_t>(kDeepBytes / bytes, kDeepMax);
    producer_->set_capacity(std::max(capacity_, static_cast<size_t>(fit)));
  }

  // Autotuned: applies the knob's buffer size, on the consumer's thread.
  void follow_knob() {
    const auto want = static_cast<size_t>(knob_->value());
    if (want == capacity_) return;
    capacity_ = want;
    producer_->set_capacity(want);
  }
  // Autotuned: counts the element taken and the wait for it, and hands the counts on now and
  // then (data/autotune.h).
  void measure(const Element& out) {
    meter_.wait_ns += producer_->take_waited_ns();
    if (meter_.elements == 0) knob_->add_bytes(payload_bytes(out));
    if (++meter_.elements >= KnobMeter::kFlushEvery || meter_.wait_ns > 1'000'000)
      tuner_->flush(*knob_, meter_);
  }
  // Autotuned: whether this input read is timed (about one in 8, at random, so that a stage
  // slow at regular intervals is not missed or over-counted).
  bool time_this() {
    sample_ ^= sample_ << 13;
    sample_ ^= sample_ >> 17;
    sample_ ^= sample_ << 5;
    return (sample_ & 7) == 0;
  }

  // Adaptive, while the consumer's thread makes every element: the element is read straight
  // into `out`, with what produce() and next() do for it and nothing else (no snapshot is
  // taken before the thread starts; the knob is for kThread only). 1: an element, 0: the
  // end, -1: it comes from the producer's next() instead.
  int next_here(Element& out) {
    std::exception_ptr data_error;
    const int made = producer_->make_here([&] {
      out.clear();
      return read_input(out, data_error);
    });
    if (made == 1) {
      taken_ = produced_;
      if (data_error) std::rethrow_exception(data_error);
    }
    return made;
  }

  // Reads the input's next element into `e`: false at the end. A data error is kept in
  // `data_error` in place of the element, and counts as one; any other failure ends the
  // reading (rethrown).
  bool read_input(Element& e, std::exception_ptr& data_error) {
    try {
      if (!input_->next(e)) return false;
    } catch (...) {
      data_error = std::current_exception();
      if (!is_data_error(data_error)) throw;
    }
    ++produced_;
    return true;
  }

  // Makes the next item; `start` is the index at which base_ is the input's state.
  bool produce(Item& item, int64_t start) {
    item.index = produced_;
    // Once the input failed to save, the consumer holds that failure for good.
    // Adaptive: no snapshots while elements are made on the consumer's thread (a save then
    // reads the input's state itself); from where the thread started, one every every_.
    if (placement_ == Placement::kAdaptive) start = thread_from_;
    if (can_save_ && start >= 0 && produced_ > start && (produced_ - start) % every_ == 0)
      item.snapshot = snapshot();
    // A read that failed is not timed.
    const bool timed = knob_ && time_this();
    const auto begin =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    const bool got = read_input(item.element, item.error);
    if (deep_ && got && !item.error) size_depth(item.element);
    if (timed && !item.error)
      knob_->add_work(1,
                      std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - begin)
                          .count(),
                      -1);
    return got;
  }

  void start_producer() {
    const int64_t start = produced_;  // base_ is the input's state here
    thread_from_ = -1;
    producer_ = std::make_unique<BackgroundProducer<Item>>(
        [this, start](Item& item) { return produce(item, start); }, capacity_, cancellation_,
        placement_ == Placement::kAdaptive ? BackgroundProducer<Item>::Placement::kAdaptive
                                           : BackgroundProducer<Item>::Placement::kThread);
    if (placement_ == Placement::kAdaptive)
      producer_->before_thread([this] {
        // Everything made so far was taken: the snapshot the thread's elements count from.
        base_ = snapshot();
        base_index_ = produced_;
        thread_from_ = produced_;
      });
  }

  std::unique_ptr<Iterator> input_;
  size_t capacity_;
  int64_t every_;
  std::shared_ptr<Cancellation> cancellation_;
  Placement placement_;
  std::shared_ptr<Autotuner> tuner_;
  std::shared_ptr<Knob> knob_;
  KnobMeter meter_;  // consumer side
  // Producer side (the consumer's before the thread starts):
  uint32_t sample_ = 2463534242u;
  int64_t produced_ = 0;
  int64_t start_ = 0;  // kCaller: where base_ was taken
  // kAdaptive: the element the thread started at (base_ is the input's state there), or -1
  // while every element was made on the consumer's thread. Written before the thread starts.
  int64_t thread_from_ = -1;
  bool can_save_ = true;
  const bool deep_;
  int64_t largest_ = 0;  // deep_: the bytes of the largest element made so far
  // Consumer side:
  std::shared_ptr<const Snapshot> base_;
  int64_t base_index_ = 0;
  int64_t taken_ = 0;
  std::unique_ptr<BackgroundProducer<Item>> producer_;  // last: its thread reads input_
};

class PrefetchDataset final : public UnaryDataset {
 public:
  // adaptive: distribute_dataset's read-ahead of a pipeline without user functions, which
  // also keeps more small elements ahead (kDeepBytes).
  PrefetchDataset(DatasetPtr input, int64_t buffer_size, bool adaptive)
      : UnaryDataset(std::move(input)), buffer_size_(buffer_size), adaptive_(adaptive) {}
  const char* name() const override { return "prefetch"; }
  // The buffer's size changes no element, but prefetch(0) is no iterator of its own.
  std::string arguments() const override { return buffer_size_ == 0 ? "off" : ""; }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<PrefetchDataset>(in.at(0), buffer_size_, adaptive_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    auto input = input_->make_iterator(ctx);
    if (buffer_size_ == 0) return input;
    size_t capacity =
        buffer_size_ == kAutotune ? kAutotunePrefetchStart : static_cast<size_t>(buffer_size_);
    const auto placement = ctx.synchronous ? PrefetchIterator::Placement::kCaller
                           : adaptive_     ? PrefetchIterator::Placement::kAdaptive
                                           : PrefetchIterator::Placement::kThread;
    std::shared_ptr<Knob> knob;
    if (buffer_size_ == kAutotune && ctx.autotuner &&
        placement == PrefetchIterator::Placement::kThread) {
      knob = ctx.autotuner->knob(*this, "buffer_size", KnobKind::kBuffer, 1, kAutotunePrefetchMax,
                                 kAutotunePrefetchStart, 1, ctx.stage);
      capacity = static_cast<size_t>(knob->value());
    }
    return std::make_unique<PrefetchIterator>(
        std::move(input), capacity, ctx.cancellation, placement,
        /*start=*/!ctx.restoring && !ctx.synchronous, ctx.autotuner, std::move(knob),
        /*deep=*/placement == PrefetchIterator::Placement::kAdaptive);
  }

 private:
  int64_t buffer_size_;
  bool adaptive_;
};

}  // namespace

std::unique_ptr<Iterator> make_prefetch_iterator(std::unique_ptr<Iterator> input, size_t capacity,
                                                 std::shared_ptr<Cancellation> cancellation,
                                                 bool start) {
  return std::make_unique<PrefetchIterator>(std::move(input), capacity, std::move(cancellation),
                                            PrefetchIterator::Placement::kThread, start);
}

DatasetPtr make_prefetch(DatasetPtr input, int64_t buffer_size) {
  DINPUT_CHECK_ARG(input != nullptr, "prefetch: no input dataset");
  DINPUT_CHECK_ARG(buffer_size >= -1, "prefetch: buffer_size must be >= 0 or AUTOTUNE (-1), got ",
                   buffer_size);
  return std::make_shared<PrefetchDataset>(std::move(input), buffer_size, false);
}

DatasetPtr make_read_ahead(DatasetPtr input, int64_t elements, bool adaptive) {
  DINPUT_CHECK_ARG(input != nullptr, "read-ahead: no input dataset");
  DINPUT_CHECK_ARG(elements >= 0, "read-ahead: the number of elements must be >= 0, got ",
                   elements);
  return std::make_shared<PrefetchDataset>(std::move(input), elements, adaptive);
}

}  // namespace dinput
