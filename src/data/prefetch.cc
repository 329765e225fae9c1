// prefetch: a background thread keeps up to `buffer_size` elements ready. The adaptive form
// (distribute_dataset's read-ahead) makes cheap elements on the consumer's thread instead
// (data/background_producer.h, Placement::kAdaptive).
#include "data/background_producer.h"
#include "data/nodes.h"

namespace dinput {

namespace {

class PrefetchIterator final : public Iterator {
 public:
  using Producer = BackgroundProducer<Element>;
  PrefetchIterator(std::unique_ptr<Iterator> input, size_t capacity,
                   std::shared_ptr<Cancellation> cancellation, Producer::Placement placement)
      : input_(std::move(input)),
        producer_([this](Element& e) { return input_->next(e); }, capacity, std::move(cancellation),
                  placement) {}
  bool next(Element& out) override { return producer_.next(out); }

 private:
  std::unique_ptr<Iterator> input_;
  Producer producer_;  // after input_: its thread reads input_
};

class PrefetchDataset final : public UnaryDataset {
 public:
  PrefetchDataset(DatasetPtr input, int64_t buffer_size, bool adaptive)
      : UnaryDataset(std::move(input)), buffer_size_(buffer_size), adaptive_(adaptive) {}
  const char* name() const override { return "prefetch"; }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<PrefetchDataset>(in.at(0), buffer_size_, adaptive_);
  }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    auto input = input_->make_iterator(ctx);
    if (buffer_size_ == 0) return input;
    size_t capacity = buffer_size_ == kAutotune ? 2 : static_cast<size_t>(buffer_size_);
    return std::make_unique<PrefetchIterator>(std::move(input), capacity, ctx.cancellation,
                                              adaptive_
                                                  ? PrefetchIterator::Producer::Placement::kAdaptive
                                                  : PrefetchIterator::Producer::Placement::kThread);
  }

 private:
  int64_t buffer_size_;
  bool adaptive_;
};

}  // namespace

DatasetPtr make_prefetch(DatasetPtr input, int64_t buffer_size) {
  DINPUT_CHECK_ARG(input != nullptr, "prefetch: no input dataset");
  DINPUT_CHECK_ARG(buffer_size >= -1, "prefetch: buffer_size must be >= 0 or AUTOTUNE (-1), got ",
                   buffer_size);
  return std::make_shared<PrefetchDataset>(std::move(input), buffer_size, false);
}

DatasetPtr make_adaptive_prefetch(DatasetPtr input, int64_t buffer_size) {
  DINPUT_CHECK_ARG(input != nullptr, "prefetch: no input dataset");
  DINPUT_CHECK_ARG(buffer_size >= 0, "prefetch: buffer_size must be >= 0, got ", buffer_size);
  return std::make_shared<PrefetchDataset>(std::move(input), buffer_size, true);
}

}  // namespace dinput
