// window: sliding windows over the input, each stacked into one element.
//
// tf.data's window yields each window as a dataset of its own, which a C caller could only
// consume through a callback; here a window is one element whose components stack the
// window's elements along a new first dimension, i.e. tf.data's
// window(size, shift, stride, drop_remainder).flat_map(lambda *w: zip(w).batch(size)).
//
// Its saved state holds no element: the input's state before the first element of the next
// window (taken when that element is read), or, when the next window begins after what was
// read, the input's state and how many elements to skip.
#include <deque>

#include "data/input_snapshots.h"
#include "data/nodes.h"
#include "data/state.h"

namespace dinput {

namespace {

class WindowDataset final : public UnaryDataset {
 public:
  WindowDataset(DatasetPtr input, int64_t size, int64_t shift, int64_t stride, bool drop)
      : UnaryDataset(std::move(input)), size_(size), shift_(shift), stride_(stride), drop_(drop) {
    for (const auto& s : input_->element_spec())
      spec_.push_back({s.dtype, s.shape.prepend(drop ? size : kUnknownDim)});
  }
  const char* name() const override { return "window"; }
  std::string arguments() const override {
    return str_cat("size=", size_, ", shift=", shift_, ", stride=", stride_,
                   ", drop_remainder=", drop_ ? 1 : 0);
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override {
    const int64_t n = input_->cardinality();
    if (n < 0) return n;
    // Windows begin at 0, shift, 2*shift, ... below n; with drop_remainder only those whose
    // last element, start + (size-1)*stride, exists.
    const int64_t limit = drop_ ? n - (size_ - 1) * stride_ : n;
    if (limit <= 0) return 0;
    return (limit - 1) / shift_ + 1;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<WindowDataset>(in.at(0), size_, shift_, stride_, drop_);
  }

  class Iter final : public Iterator {
   public:
    Iter(std::unique_ptr<Iterator> input, const WindowDataset& ds)
        : input_(std::move(input)),
          size_(ds.size_),
          shift_(ds.shift_),
          stride_(ds.stride_),
          drop_(ds.drop_) {}

    bool next(Element& out) override {
      if (done_) return false;
      // Let go of what comes before this window; skip input elements it starts after.
      while (!buffer_.empty() && base_ < start_) {
        buffer_.pop_front();
        ++base_;
      }
      if (buffer_.empty()) {
        while (!input_done_ && read_ < start_) {
          Element skipped;
          read(skipped);
        }
        base_ = read_;
      }
      const int64_t last = start_ + (size_ - 1) * stride_;
      while (!input_done_ && read_ <= last) {
        Element e;
        if (read(e)) buffer_.push_back(std::move(e));
      }
      std::vector<Element> rows;
      for (int64_t i = start_; i <= last && i - base_ < static_cast<int64_t>(buffer_.size());
           i += stride_)
        rows.push_back(buffer_[static_cast<size_t>(i - base_)]);
      // Later windows begin later and can only be shorter.
      if (rows.empty() || (drop_ && static_cast<int64_t>(rows.size()) < size_)) {
        done_ = true;
        return false;
      }
      out = stack_rows(rows);
      start_ += shift_;
      auto& list = snapshots_.list();
      while (!list.empty() && list.front().position < start_) list.pop_front();
      return true;
    }

    void save(StateWriter& w) const override {
      snapshots_.check();
      w.section("window", [&](StateWriter& s) {
        s.flag(done_);
        if (done_) return;
        if (start_ >= read_) {
          s.i64(start_ - read_);
          input_->save(s);
          return;
        }
        const auto& list = snapshots_.list();
        if (list.empty() || list.front().position != start_)
          raise(Code::kInternal, "window: no saved input position for the next window");
        s.i64(0);
        s.raw(list.front().state);
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("window");
      done_ = s.flag("ended");
      if (!done_) {
        // The next window begins at most shift - 1 elements after what was read.
        start_ = s.i64_in("input elements to skip", 0, shift_ - 1);
        input_->restore(s);
      }
      s.finish();
    }

   private:
    // Reads the next input element; before one that begins a window, keeps the input's state
    // (a save made while that window is the next one points the input back there).
    bool read(Element& e) {
      if (read_ >= start_ && (read_ - start_) % shift_ == 0) snapshots_.take(*input_, read_);
      if (!input_->next(e)) {
        input_done_ = true;
        return false;
      }
      ++read_;
      return true;
    }

    std::unique_ptr<Iterator> input_;
    int64_t size_, shift_, stride_;
    bool drop_;
    std::deque<Element> buffer_;  // input elements base_, base_ + 1, ...
    int64_t base_ = 0;
    int64_t start_ = 0;  // where the next window begins
    int64_t read_ = 0;   // input elements read
    bool input_done_ = false;
    bool done_ = false;
    InputSnapshots snapshots_;
  };

  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(input_->make_iterator(ctx), *this);
  }

 private:
  int64_t size_, shift_, stride_;
  bool drop_;
  ElementSpec spec_;
};

}  // namespace

DatasetPtr make_window(DatasetPtr input, int64_t size, int64_t shift, int64_t stride,
                       bool drop_remainder) {
  DINPUT_CHECK_ARG(input != nullptr, "window: no input dataset");
  DINPUT_CHECK_ARG(size > 0, "window: size must be greater than zero, got ", size);
  DINPUT_CHECK_ARG(shift > 0, "window: shift must be greater than zero, got ", shift);
  DINPUT_CHECK_ARG(stride > 0, "window: stride must be greater than zero, got ", stride);
  DINPUT_CHECK_ARG((size - 1) <= INT64_MAX / stride, "window: size ", size, " times stride ",
                   stride, " is too large");
  return std::make_shared<WindowDataset>(std::move(input), size, shift, stride, drop_remainder);
}

}  // namespace dinput
