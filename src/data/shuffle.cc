// shuffle: a buffer of elements from which a seeded generator picks the next one.
//
// Its saved state holds no element (docs/checkpoint.md): the seed, the epoch, how many
// elements were drawn and read, and the input's state at a position no later than the
// oldest element still buffered. Which input element sits in which slot depends only on the
// generator, so a restore replays the draws on input indices, then reads the input again
// from that position, keeping the elements the buffer held.
#include <algorithm>
#include <random>

#include "core/seed.h"
#include "data/input_snapshots.h"
#include "data/nodes.h"
#include "data/stage_stats.h"
#include "data/state.h"

namespace dinput {

namespace {

class ShuffleIterator final : public Iterator, public BufferedIterator {
 public:
  int64_t buffered() const override { return static_cast<int64_t>(buffer_.size()); }
  int64_t buffer_capacity() const override { return static_cast<int64_t>(capacity_); }

  // input_size: the input's cardinality (negative: infinite or unknown), which bounds what a
  // restored state may claim to have read (the draws are replayed one by one).
  ShuffleIterator(std::unique_ptr<Iterator> input, int64_t buffer_size, uint64_t seed,
                  uint64_t epoch, int64_t input_size)
      : input_(std::move(input)),
        input_size_(input_size),
        capacity_(static_cast<size_t>(buffer_size)),
        snapshot_every_((buffer_size + 7) / 8),
        seed_(seed),
        epoch_(epoch),
        rng_(seed) {}

  bool next(Element& out) override {
    while (!input_done_ && buffer_.size() < capacity_) {
      Element e;
      if (!read(e)) break;
      if (index_.empty()) oldest_ = read_ - 1;  // later elements are younger
      buffer_.push_back(std::move(e));
      index_.push_back(read_ - 1);
    }
    if (buffer_.empty()) return false;
    size_t pick = std::uniform_int_distribution<size_t>(0, buffer_.size() - 1)(rng_);
    out = std::move(buffer_[pick]);
    ++drawn_;
    // Only drawing the oldest element (1 in buffer_size) changes which is oldest.
    const bool drew_oldest = index_[pick] == oldest_;
    // Refill the hole with a fresh input element when there is one, else close it.
    Element e;
    if (!input_done_ && read(e)) {
      buffer_[pick] = std::move(e);
      index_[pick] = read_ - 1;
    } else {
      buffer_[pick] = std::move(buffer_.back());
      buffer_.pop_back();
      index_[pick] = index_.back();
      index_.pop_back();
    }
    if (drew_oldest && !index_.empty()) oldest_ = *std::min_element(index_.begin(), index_.end());
    return true;
  }

  void save(StateWriter& w) const override {
    snapshots_.check();
    w.section("shuffle", [&](StateWriter& s) {
      s.u64(seed_);
      s.u64(epoch_);
      s.i64(drawn_);
      s.i64(read_);
      s.flag(input_done_);
      if (input_done_ && buffer_.empty()) return;  // nothing left to read again
      if (snapshots_.list().empty()) {  // nothing read yet: the input is where it started
        s.i64(read_);
        s.bytes(save_to_bytes(*input_));
        return;
      }
      const InputSnapshots::Snapshot& base = snapshots_.at_or_before(oldest_needed());
      s.i64(base.position);
      s.bytes(base.state);
    });
  }

  void restore(StateReader& r) override {
    StateReader s = r.section("shuffle");
    seed_ = s.u64("seed");
    epoch_ = s.u64("epoch");
    const int64_t drawn = s.i64_in("elements drawn", 0, INT64_MAX);
    const int64_t read =
        s.i64_in("elements read", drawn, input_size_ >= 0 ? input_size_ : INT64_MAX);
    const bool done = s.flag("input ended");
    if (read - drawn > static_cast<int64_t>(capacity_))
      s.corrupt(str_cat(read - drawn, " elements buffered but the buffer holds ", capacity_));
    rng_.seed(seed_);
    replay(s, drawn, read, done);
    if (done && index_.empty()) {
      input_done_ = true;
      s.finish();
      return;
    }
    const int64_t oldest = index_.empty() ? read : *std::min_element(index_.begin(), index_.end());
    oldest_ = oldest;
    const int64_t position = s.i64_in("position of the input's state", 0, oldest);
    InputSnapshots::Snapshot base{position, s.bytes("the input's state")};
    StateReader in(base.state, s.offset() - base.state.size(), "shuffle");
    input_->restore(in);
    in.finish();
    s.finish();
    // Read the input again from the snapshot up to where the saved shuffle had read,
    // keeping the elements that were in the buffer.
    std::vector<std::pair<int64_t, size_t>> wanted;  // (input index, slot), by index
    for (size_t slot = 0; slot < index_.size(); ++slot) wanted.emplace_back(index_[slot], slot);
    std::sort(wanted.begin(), wanted.end());
    buffer_.assign(index_.size(), Element());
    size_t next_wanted = 0;
    Element e;
    for (int64_t i = position; i < read; ++i) {
      if (!input_->next(e))
        raise(Code::kDataLoss, "shuffle: restoring the iterator state: the input ended after ", i,
              " elements but the saved shuffle had read ", read,
              " (did the input data change since the save?)");
      if (next_wanted < wanted.size() && wanted[next_wanted].first == i)
        buffer_[wanted[next_wanted++].second] = std::move(e);
    }
    if (next_wanted != wanted.size())
      s.corrupt("the input's saved position is after an element the buffer held");
    read_ = read;
    drawn_ = drawn;
    input_done_ = done;
    snapshots_.list().clear();
    snapshots_.list().push_back(std::move(base));
  }

 private:
  // Reads the next input element, first saving the input's state every snapshot_every_
  // elements so that a save can point the input back at the oldest buffered element.
  bool read(Element& e) {
    if (snapshots_.list().empty() || read_ % snapshot_every_ == 0) {
      snapshots_.take(*input_, read_);
      // Drop the snapshots that the oldest buffered element no longer needs.
      snapshots_.drop_before(oldest_needed());
    }
    if (!input_->next(e)) {
      input_done_ = true;
      return false;
    }
    ++read_;
    return true;
  }

  // The earliest input position the buffer still needs: its oldest element, or the next
  // element to read when it is empty.
  int64_t oldest_needed() const { return index_.empty() ? read_ : oldest_; }

  // The draws of next() on input indices alone: leaves index_ as the saved buffer's slots
  // and rng_ where the saved generator was.
  void replay(StateReader& s, int64_t drawn, int64_t read, bool done) {
    index_.clear();
    int64_t next_in = 0;
    bool ended = false;
    auto try_read = [&](int64_t& out) {
      if (next_in < read) {
        out = next_in++;
        return true;
      }
      if (!done) s.corrupt("the draws read past the saved position of the input");
      ended = true;
      return false;
    };
    for (int64_t d = 0; d < drawn; ++d) {
      int64_t in;
      while (!ended && index_.size() < capacity_ && try_read(in)) index_.push_back(in);
      if (index_.empty()) s.corrupt(str_cat("the buffer is empty at draw ", d, " of ", drawn));
      size_t pick = std::uniform_int_distribution<size_t>(0, index_.size() - 1)(rng_);
      if (!ended && try_read(in)) {
        index_[pick] = in;
      } else {
        index_[pick] = index_.back();
        index_.pop_back();
      }
    }
    if (next_in != read || (done && !ended && !(drawn == 0 && read == 0)))
      s.corrupt(str_cat("the draws read ", next_in, " elements but the state says ", read,
                        done ? " and that the input ended" : ""));
  }

  std::unique_ptr<Iterator> input_;
  int64_t input_size_;
  size_t capacity_;
  int64_t snapshot_every_;
  uint64_t seed_;   // of this epoch's order
  uint64_t epoch_;  // saved for reading; the order comes from seed_
  std::mt19937_64 rng_;
  std::vector<Element> buffer_;
  std::vector<int64_t> index_;  // the input index of each buffer slot's element
  int64_t oldest_ = 0;          // the smallest of index_ (when it is not empty)
  bool input_done_ = false;
  int64_t read_ = 0;   // input elements read
  int64_t drawn_ = 0;  // elements handed out
  InputSnapshots snapshots_;
};

}  // namespace

ShuffleDataset::ShuffleDataset(DatasetPtr input, int64_t buffer_size, uint64_t seed, bool reshuffle,
                               bool random_seed)
    : UnaryDataset(std::move(input)),
      buffer_size_(buffer_size),
      seed_(seed),
      reshuffle_(reshuffle),
      random_seed_(random_seed),
      epoch_(std::make_shared<std::atomic<uint64_t>>(0)) {}

std::string ShuffleDataset::arguments() const {
  return str_cat("buffer_size=", buffer_size_,
                 ", seed=", random_seed_ ? "random" : std::to_string(seed_),
                 ", reshuffle_each_iteration=", reshuffle_ ? 1 : 0);
}

DatasetPtr ShuffleDataset::with_inputs(std::vector<DatasetPtr> in) const {
  auto copy =
      std::make_shared<ShuffleDataset>(in.at(0), buffer_size_, seed_, reshuffle_, random_seed_);
  copy->epoch_ = epoch_;  // a rewritten pipeline continues the same sequence of orders
  return copy;
}

DatasetPtr ShuffleDataset::with_seed(uint64_t seed) const {
  auto copy = std::make_shared<ShuffleDataset>(input_, buffer_size_, seed, reshuffle_, false);
  copy->epoch_ = epoch_;
  return copy;
}

std::unique_ptr<Iterator> ShuffleDataset::make_iterator(const IteratorContext& ctx) const {
  uint64_t epoch = reshuffle_ ? next_epoch(ctx, epoch_) : 0;
  return std::make_unique<ShuffleIterator>(input_->make_iterator(ctx), buffer_size_,
                                           epoch_seed(seed_, epoch), epoch, input_->cardinality());
}

DatasetPtr make_shuffle(DatasetPtr input, int64_t buffer_size, int64_t seed,
                        bool reshuffle_each_iteration) {
  DINPUT_CHECK_ARG(input != nullptr, "shuffle: no input dataset");
  DINPUT_CHECK_ARG(buffer_size > 0, "shuffle: buffer_size must be greater than zero, got ",
                   buffer_size);
  return std::make_shared<ShuffleDataset>(std::move(input), buffer_size, seed_or_random(seed),
                                          reshuffle_each_iteration, seed < 0);
}

}  // namespace dinput
