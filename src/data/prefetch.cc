// prefetch: a background thread keeps up to `buffer_size` elements ready.
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "data/nodes.h"

namespace dinput {

namespace {

class PrefetchIterator final : public Iterator {
 public:
  PrefetchIterator(std::unique_ptr<Iterator> input, size_t capacity)
      : input_(std::move(input)), capacity_(capacity), thread_([this] { produce(); }) {}

  ~PrefetchIterator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
    }
    space_.notify_all();
    thread_.join();
  }

  bool next(Element& out) override {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [this] { return !queue_.empty() || finished_; });
    if (queue_.empty()) {
      if (error_) std::rethrow_exception(error_);
      return false;
    }
    out = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    space_.notify_one();
    return true;
  }

 private:
  void produce() {
    try {
      for (;;) {
        {
          std::unique_lock<std::mutex> lock(mu_);
          space_.wait(lock, [this] { return cancelled_ || queue_.size() < capacity_; });
          if (cancelled_) break;
        }
        Element e;
        if (!input_->next(e)) break;
        {
          std::lock_guard<std::mutex> lock(mu_);
          queue_.push_back(std::move(e));
        }
        ready_.notify_one();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      finished_ = true;
    }
    ready_.notify_all();
  }

  std::unique_ptr<Iterator> input_;
  size_t capacity_;
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<Element> queue_;
  bool finished_ = false;
  bool cancelled_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: it starts in the constructor and uses everything above
};

class PrefetchDataset final : public UnaryDataset {
 public:
  PrefetchDataset(DatasetPtr input, int64_t buffer_size) : UnaryDataset(std::move(input)), buffer_size_(buffer_size) {}
  const char* name() const override { return "prefetch"; }
  const ElementSpec& element_spec() const override { return input_->element_spec(); }
  int64_t cardinality() const override { return input_->cardinality(); }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override { return std::make_shared<PrefetchDataset>(in.at(0), buffer_size_); }
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    auto input = input_->make_iterator(ctx);
    if (buffer_size_ == 0) return input;
    size_t capacity = buffer_size_ == kAutotune ? 2 : static_cast<size_t>(buffer_size_);
    return std::make_unique<PrefetchIterator>(std::move(input), capacity);
  }

 private:
  int64_t buffer_size_;
};

}  // namespace

DatasetPtr make_prefetch(DatasetPtr input, int64_t buffer_size) {
  DINPUT_CHECK_ARG(input != nullptr, "prefetch: no input dataset");
  DINPUT_CHECK_ARG(buffer_size >= -1, "prefetch: buffer_size must be >= 0 or AUTOTUNE (-1), got ", buffer_size);
  return std::make_shared<PrefetchDataset>(std::move(input), buffer_size);
}

}  // namespace dinput
