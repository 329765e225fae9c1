// zip and concatenate: the operations that join whole datasets, side by side or one after
// the other.
#include "core/tensor_ops.h"
#include "data/multi_input.h"
#include "data/nodes.h"
#include "data/state.h"

namespace dinput {

namespace {

class ZipDataset final : public MultiInputDataset {
 public:
  explicit ZipDataset(std::vector<DatasetPtr> inputs)
      : MultiInputDataset("zip", std::move(inputs)) {
    for (const auto& in : inputs_)
      for (const auto& s : in->element_spec()) spec_.push_back(s);
  }
  const char* name() const override { return "zip"; }
  std::string arguments() const override { return str_cat("inputs=", inputs_.size()); }
  const ElementSpec& element_spec() const override { return spec_; }
  // The shortest input's: unknown when any input's is, infinite when all are.
  int64_t cardinality() const override {
    int64_t out = kInfiniteCardinality;
    for (const auto& in : inputs_) {
      int64_t n = in->cardinality();
      if (n == kUnknownCardinality) return n;
      if (n != kInfiniteCardinality && (out == kInfiniteCardinality || n < out)) out = n;
    }
    return out;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<ZipDataset>(std::move(in));
  }

  class Iter final : public Iterator {
   public:
    explicit Iter(std::vector<std::unique_ptr<Iterator>> inputs) : inputs_(std::move(inputs)) {}
    bool next(Element& out) override {
      if (ended_) return false;
      Element joined, part;
      for (auto& in : inputs_) {
        if (!in->next(part)) return end();
        for (auto& t : part) joined.push_back(std::move(t));
      }
      out = std::move(joined);
      return true;
    }
    // Each input fills up to n rows; a shorter one has ended, and so has the zip after the
    // rows all of them gave (the longer inputs' extra rows are dropped, as next() would).
    int64_t next_batch(int64_t n, Element& out) override {
      if (ended_) return 0;
      std::vector<Element> parts(inputs_.size());
      int64_t rows = n;
      for (size_t i = 0; i < inputs_.size() && rows > 0; ++i)
        rows = std::min(rows, inputs_[i]->next_batch(rows, parts[i]));
      if (rows < n) end();
      if (rows == 0) return 0;
      Element joined;
      for (auto& part : parts)
        for (auto& t : part) joined.push_back(t.dim(0) == rows ? std::move(t) : t.slice(0, rows));
      out = std::move(joined);
      return rows;
    }
    void save(StateWriter& w) const override {
      w.section("zip", [&](StateWriter& s) {
        s.flag(ended_);
        if (!ended_)
          for (const auto& in : inputs_) in->save(s);
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("zip");
      if (s.flag("ended")) {
        end();
      } else {
        for (auto& in : inputs_) in->restore(s);
      }
      s.finish();
    }

   private:
    bool end() {
      ended_ = true;
      inputs_.clear();  // release the inputs' files and threads now
      return false;
    }
    std::vector<std::unique_ptr<Iterator>> inputs_;
    bool ended_ = false;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    std::vector<std::unique_ptr<Iterator>> its;
    for (const auto& in : inputs_) its.push_back(in->make_iterator(ctx));
    return std::make_unique<Iter>(std::move(its));
  }

 private:
  ElementSpec spec_;
};

class ConcatenateDataset final : public MultiInputDataset {
 public:
  explicit ConcatenateDataset(std::vector<DatasetPtr> inputs)
      : MultiInputDataset("concatenate", std::move(inputs)),
        spec_(merged_spec("concatenate", inputs_)) {}
  const char* name() const override { return "concatenate"; }
  const ElementSpec& element_spec() const override { return spec_; }
  // Infinite when either input is (even after an unknown one, as tf.data counts), unknown
  // when one is, else the sum.
  int64_t cardinality() const override {
    int64_t sum = 0;
    bool unknown = false;
    for (const auto& in : inputs_) {
      int64_t n = in->cardinality();
      if (n == kInfiniteCardinality) return n;
      if (n == kUnknownCardinality) unknown = true;
      if (n > 0) sum = n > INT64_MAX - sum ? INT64_MAX : sum + n;
    }
    return unknown ? kUnknownCardinality : sum;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    return std::make_shared<ConcatenateDataset>(std::move(in));
  }

  class Iter final : public Iterator {
   public:
    Iter(std::vector<DatasetPtr> inputs, IteratorContext ctx)
        : inputs_(std::move(inputs)), ctx_(std::move(ctx)) {}
    bool next(Element& out) override {
      while (open()) {
        if (current_->next(out)) return true;
        close();
      }
      return false;
    }
    // A batch may span the inputs, as it does in tf.data.
    int64_t next_batch(int64_t n, Element& out) override {
      std::vector<Element> parts;
      int64_t got = 0;
      while (got < n && open()) {
        Element part;
        int64_t k = current_->next_batch(n - got, part);
        if (k > 0) {
          got += k;
          parts.push_back(std::move(part));
        }
        if (got < n) close();
      }
      if (!parts.empty()) out = concat_elements(parts);
      return got;
    }
    // The index of the input being read (inputs().size() once all have ended), whether its
    // iterator is open, and its state.
    void save(StateWriter& w) const override {
      w.section("concatenate", [&](StateWriter& s) {
        s.u64(index_);
        s.flag(current_ != nullptr);
        if (current_) current_->save(s);
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section("concatenate");
      index_ = static_cast<size_t>(s.u64_in("input index", 0, inputs_.size()));
      if (s.flag("input open")) {
        if (index_ == inputs_.size()) s.corrupt("an input is open after the last one ended");
        current_ = inputs_[index_]->make_iterator(ctx_);
        current_->restore(s);
      }
      s.finish();
      ctx_.restoring = false;
    }

   private:
    bool open() {
      if (current_) return true;
      if (index_ == inputs_.size()) return false;
      current_ = inputs_[index_]->make_iterator(ctx_);
      return true;
    }
    void close() {
      current_.reset();
      ++index_;
    }
    std::vector<DatasetPtr> inputs_;
    IteratorContext ctx_;
    size_t index_ = 0;
    std::unique_ptr<Iterator> current_;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(inputs_, ctx);
  }

 private:
  ElementSpec spec_;
};

}  // namespace

DatasetPtr make_zip(std::vector<DatasetPtr> inputs) {
  DINPUT_CHECK_ARG(!inputs.empty(), "zip: at least one input dataset is required");
  return std::make_shared<ZipDataset>(std::move(inputs));
}

DatasetPtr make_concatenate(DatasetPtr input, DatasetPtr other) {
  DINPUT_CHECK_ARG(input != nullptr, "concatenate: no input dataset");
  DINPUT_CHECK_ARG(other != nullptr, "concatenate: argument 'other' is NULL");
  return std::make_shared<ConcatenateDataset>(std::vector<DatasetPtr>{input, other});
}

}  // namespace dinput
