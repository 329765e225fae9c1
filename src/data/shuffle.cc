// shuffle: a buffer of elements from which a seeded generator picks the next one.
#include <random>

#include "core/seed.h"
#include "data/nodes.h"

namespace dinput {

namespace {

class ShuffleIterator final : public Iterator {
 public:
  ShuffleIterator(std::unique_ptr<Iterator> input, int64_t buffer_size, uint64_t seed)
      : input_(std::move(input)), capacity_(static_cast<size_t>(buffer_size)), rng_(seed) {}

  bool next(Element& out) override {
    while (!input_done_ && buffer_.size() < capacity_) {
      Element e;
      if (!input_->next(e)) {
        input_done_ = true;
        break;
      }
      buffer_.push_back(std::move(e));
    }
    if (buffer_.empty()) return false;
    size_t pick = std::uniform_int_distribution<size_t>(0, buffer_.size() - 1)(rng_);
    out = std::move(buffer_[pick]);
    // Refill the hole with a fresh input element when there is one, else close it.
    Element e;
    if (!input_done_ && input_->next(e)) {
      buffer_[pick] = std::move(e);
    } else {
      input_done_ = true;
      buffer_[pick] = std::move(buffer_.back());
      buffer_.pop_back();
    }
    return true;
  }

 private:
  std::unique_ptr<Iterator> input_;
  size_t capacity_;
  std::mt19937_64 rng_;
  std::vector<Element> buffer_;
  bool input_done_ = false;
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
                                           epoch_seed(seed_, epoch));
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
