// In-memory sources: range, from_tensors, from_tensor_slices.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/tensor_ops.h"
#include "data/datasets.h"
#include "data/state.h"

namespace dinput {

namespace {

Tensor int64_scalar(int64_t v) {
  Tensor t = Tensor::allocate(DType::kInt64, Shape());
  *t.mutable_data_as<int64_t>() = v;
  return t;
}

class RangeDataset final : public Dataset {
 public:
  RangeDataset(int64_t start, int64_t stop, int64_t step)
      : start_(start), stop_(stop), step_(step), spec_{{DType::kInt64, Shape()}} {}
  const char* name() const override { return "range"; }
  std::string arguments() const override {
    return str_cat("start=", start_, ", stop=", stop_, ", step=", step_);
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override {
    // 128-bit so that extreme bounds (INT64_MIN..INT64_MAX) cannot overflow.
    __int128 span = step_ > 0 ? (__int128)stop_ - start_ : (__int128)start_ - stop_;
    __int128 step = step_ > 0 ? (__int128)step_ : -(__int128)step_;
    if (span <= 0) return 0;
    __int128 n = (span + step - 1) / step;
    return n > INT64_MAX ? INT64_MAX : static_cast<int64_t>(n);
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }

  class Iter final : public Iterator {
   public:
    Iter(int64_t start, int64_t step, int64_t remaining)
        : next_(start), step_(step), remaining_(remaining) {}
    bool next(Element& out) override {
      if (remaining_ == 0) return false;
      out.assign(1, int64_scalar(next_));
      advance(1);
      return true;
    }
    int64_t next_batch(int64_t n, Element& out) override {
      int64_t rows = std::min(n, remaining_);
      if (rows == 0) return 0;
      Tensor t = Tensor::allocate(DType::kInt64, Shape{rows});
      int64_t* p = t.mutable_data_as<int64_t>();
      // Locals: the stores could alias the members, which the loop would then read again for
      // every value (and on some heap layouts wait for each store to retire).
      const auto first = static_cast<uint64_t>(next_), step = static_cast<uint64_t>(step_);
      for (int64_t i = 0; i < rows; ++i)
        p[i] = static_cast<int64_t>(first + step * static_cast<uint64_t>(i));
      advance(rows);
      out.assign(1, std::move(t));
      return rows;
    }
    void save(StateWriter& w) const override {
      w.section("range", [&](StateWriter& s) { s.i64(remaining_); });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("range");
      int64_t remaining = s.i64_in("remaining", 0, remaining_);
      s.finish();
      advance(remaining_ - remaining);
    }

   private:
    // Unsigned arithmetic: stepping past the last value may wrap, which is harmless
    // because that value is never produced (remaining_ is then 0).
    void advance(int64_t k) {
      next_ = static_cast<int64_t>(static_cast<uint64_t>(next_) +
                                   static_cast<uint64_t>(step_) * static_cast<uint64_t>(k));
      remaining_ -= k;
    }
    int64_t next_, step_, remaining_;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext&) const override {
    return std::make_unique<Iter>(start_, step_, cardinality());
  }

 private:
  int64_t start_, stop_, step_;
  ElementSpec spec_;
};

class TensorsDataset final : public Dataset {
 public:
  explicit TensorsDataset(Element element)
      : element_(std::move(element)), spec_(spec_of(element_)) {}
  const char* name() const override { return "from_tensors"; }
  std::string arguments() const override { return "spec=" + to_string(spec_); }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return 1; }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }

  class Iter final : public Iterator {
   public:
    // Holds its dataset so the element it reads in place outlives it.
    Iter(DatasetPtr owner, const Element* e) : owner_(std::move(owner)), element_(e) {}
    bool next(Element& out) override {
      if (done_) return false;
      out = *element_;
      done_ = true;
      return true;
    }
    void save(StateWriter& w) const override {
      w.section("from_tensors", [&](StateWriter& s) { s.flag(done_); });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("from_tensors");
      done_ = s.flag("delivered");
      s.finish();
    }

   private:
    DatasetPtr owner_;
    const Element* element_;
    bool done_ = false;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext&) const override {
    return std::make_unique<Iter>(ptr(), &element_);
  }

 private:
  Element element_;
  ElementSpec spec_;
};

class TensorSlicesDataset final : public Dataset {
 public:
  explicit TensorSlicesDataset(Element element) : element_(std::move(element)) {
    DINPUT_CHECK_ARG(!element_.empty(), "from_tensor_slices needs at least one component");
    for (size_t i = 0; i < element_.size(); ++i) {
      DINPUT_CHECK_ARG(element_[i].rank() >= 1, "from_tensor_slices: component ", i,
                       " is a scalar; every component needs rank >= 1 to be sliced");
      DINPUT_CHECK_ARG(element_[i].dim(0) == element_[0].dim(0), "from_tensor_slices: component ",
                       i, " has ", element_[i].dim(0), " rows but component 0 has ",
                       element_[0].dim(0), "; all components must have the same first dimension");
      spec_.push_back({element_[i].dtype(), element_[i].shape().drop_first()});
    }
  }
  const char* name() const override { return "from_tensor_slices"; }
  std::string arguments() const override {
    return str_cat("rows=", cardinality(), ", spec=", to_string(spec_));
  }
  const ElementSpec& element_spec() const override { return spec_; }
  int64_t cardinality() const override { return element_[0].dim(0); }
  DatasetPtr with_inputs(std::vector<DatasetPtr>) const override { return ptr(); }

  class Iter final : public Iterator {
   public:
    Iter(DatasetPtr owner, const Element* e)
        : owner_(std::move(owner)), element_(e), rows_((*e)[0].dim(0)) {}
    bool next(Element& out) override {
      if (pos_ >= rows_) return false;
      out.resize(element_->size());
      for (size_t c = 0; c < element_->size(); ++c) out[c] = (*element_)[c].row(pos_);
      ++pos_;
      return true;
    }
    // Consecutive slices are contiguous rows of the source: a batch is a zero-copy view.
    int64_t next_batch(int64_t n, Element& out) override {
      int64_t rows = std::min(n, rows_ - pos_);
      if (rows <= 0) return 0;
      out.resize(element_->size());
      for (size_t c = 0; c < element_->size(); ++c)
        out[c] = (*element_)[c].slice(pos_, pos_ + rows);
      pos_ += rows;
      return rows;
    }
    void save(StateWriter& w) const override {
      w.section("from_tensor_slices", [&](StateWriter& s) { s.i64(pos_); });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("from_tensor_slices");
      pos_ = s.i64_in("next row", 0, rows_);
      s.finish();
    }

   private:
    DatasetPtr owner_;
    const Element* element_;
    int64_t rows_;
    int64_t pos_ = 0;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext&) const override {
    return std::make_unique<Iter>(ptr(), &element_);
  }

 private:
  Element element_;
  ElementSpec spec_;
};

}  // namespace

DatasetPtr make_range(int64_t start, int64_t stop, int64_t step) {
  DINPUT_CHECK_ARG(step != 0, "range: step must not be 0");
  return std::make_shared<RangeDataset>(start, stop, step);
}

DatasetPtr make_from_tensors(Element element) {
  for (size_t i = 0; i < element.size(); ++i)
    DINPUT_CHECK_ARG(element[i].defined(), "from_tensors: component ", i, " is not a tensor");
  return std::make_shared<TensorsDataset>(std::move(element));
}

DatasetPtr make_from_tensor_slices(Element element) {
  for (size_t i = 0; i < element.size(); ++i)
    DINPUT_CHECK_ARG(element[i].defined(), "from_tensor_slices: component ", i, " is not a tensor");
  return std::make_shared<TensorSlicesDataset>(std::move(element));
}

}  // namespace dinput
