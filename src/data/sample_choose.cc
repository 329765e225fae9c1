// sample_from_datasets and choose_from_datasets: each element comes from one of several
// inputs, picked by a seeded random draw or by a selector dataset of indices.
#include <cmath>
#include <cstdio>

#include "core/seed.h"
#include "data/multi_input.h"
#include "data/state.h"

namespace dinput {

namespace {

class SelectDataset final : public MultiInputDataset {
 public:
  // Sampling: `inputs` are the data inputs, weights normalised (one per input).
  SelectDataset(std::vector<DatasetPtr> inputs, std::vector<double> weights, uint64_t seed,
                bool random_seed, bool stop_on_empty)
      : MultiInputDataset("sample_from_datasets", std::move(inputs)),
        weights_(std::move(weights)),
        seed_(seed),
        random_seed_(random_seed),
        stop_on_empty_(stop_on_empty),
        first_(0),
        spec_(merged_spec("sample_from_datasets", inputs_)) {}
  // Choosing: inputs[0] is the selector.
  SelectDataset(std::vector<DatasetPtr> inputs, bool stop_on_empty)
      : MultiInputDataset("choose_from_datasets", std::move(inputs)),
        stop_on_empty_(stop_on_empty),
        first_(1),
        spec_(merged_spec("choose_from_datasets", inputs_, 1)) {
    const ElementSpec& sel = inputs_[0]->element_spec();
    if (sel.size() != 1 || sel[0].dtype != DType::kInt64 || sel[0].shape.rank() != 0)
      raise(Code::kInvalidArgument,
            "choose_from_datasets: the selector's elements must be int64 scalars, got ",
            to_string(sel));
  }
  bool sampling() const { return first_ == 0; }
  const char* name() const override {
    return sampling() ? "sample_from_datasets" : "choose_from_datasets";
  }
  std::string arguments() const override {
    std::string out;
    if (sampling()) {
      out = "weights=[";
      for (size_t i = 0; i < weights_.size(); ++i) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", weights_[i]);
        out += (i ? "," : "") + std::string(buf);
      }
      out += str_cat("], seed=", random_seed_ ? "random" : std::to_string(seed_), ", ");
    }
    return out + str_cat("stop_on_empty_dataset=", stop_on_empty_ ? 1 : 0);
  }
  const ElementSpec& element_spec() const override { return spec_; }
  size_t first_data_input() const override { return first_; }
  // Infinite only where no end can come: the pickable inputs are all infinite (stopping at
  // the first empty one), or one is (not stopping), and for choose the selector is infinite.
  // Unknown otherwise, unless nothing can be delivered at all. [dinput] tf.data calls the
  // result infinite as soon as any input is; a distribution that takes a finite pipeline for
  // an infinite one stops checking whether the workers have run out, so this is stricter.
  int64_t cardinality() const override {
    if (!sampling() && inputs_[0]->cardinality() == 0) return 0;
    bool any_infinite = false, all_infinite = true, all_empty = true;
    for (size_t i = first_; i < inputs_.size(); ++i) {
      if (sampling() && weights_[i] == 0) continue;
      int64_t n = inputs_[i]->cardinality();
      any_infinite |= n == kInfiniteCardinality;
      all_infinite &= n == kInfiniteCardinality;
      all_empty &= n == 0;
    }
    if (all_empty) return 0;
    bool selector_infinite = sampling() || inputs_[0]->cardinality() == kInfiniteCardinality;
    if (selector_infinite && (stop_on_empty_ ? all_infinite : any_infinite))
      return kInfiniteCardinality;
    return kUnknownCardinality;
  }
  DatasetPtr with_inputs(std::vector<DatasetPtr> in) const override {
    if (sampling())
      return std::make_shared<SelectDataset>(std::move(in), weights_, seed_, random_seed_,
                                             stop_on_empty_);
    return std::make_shared<SelectDataset>(std::move(in), stop_on_empty_);
  }
  bool has_random_seed() const override { return random_seed_; }
  DatasetPtr with_seed(uint64_t seed) const override {
    if (!sampling()) return ptr();
    return std::make_shared<SelectDataset>(inputs_, weights_, seed, false, stop_on_empty_);
  }
  uint64_t seed() const override { return seed_; }

  class Iter final : public Iterator {
   public:
    Iter(const SelectDataset& ds, IteratorContext ctx)
        : ds_(ds.ptr()),
          node_(ds),
          ctx_(std::move(ctx)),
          data_(ds.inputs_.size() - ds.first_),
          exhausted_(data_.size(), false) {
      if (!node_.sampling()) selector_ = node_.inputs_[0]->make_iterator(ctx_);
      for (size_t i = 0; i < data_.size(); ++i) {
        bool pickable = !node_.sampling() || node_.weights_[i] > 0;
        if (pickable)
          ++pickable_;
        else
          exhausted_[i] = true;  // never drawn: it never counts as a live input
      }
    }
    bool next(Element& out) override {
      while (!ended_ && pickable_ > 0) {
        size_t pick = 0;
        if (!choose(pick)) break;
        if (exhausted_[pick]) {
          if (node_.stop_on_empty_) break;
          continue;
        }
        if (!data_[pick]) data_[pick] = node_.inputs_[node_.first_ + pick]->make_iterator(ctx_);
        if (data_[pick]->next(out)) return true;
        data_[pick].reset();
        exhausted_[pick] = true;
        --pickable_;
        if (node_.stop_on_empty_) break;
      }
      return end();
    }
    // The number of draws made (sampling) or the selector's state (choosing), then per
    // data input whether it is exhausted, open, and its state when open.
    void save(StateWriter& w) const override {
      w.section(node_.name(), [&](StateWriter& s) {
        s.flag(ended_);
        if (ended_) return;
        if (node_.sampling())
          s.u64(draws_);
        else
          selector_->save(s);
        for (size_t i = 0; i < data_.size(); ++i) {
          s.flag(exhausted_[i]);
          s.flag(data_[i] != nullptr);
          if (data_[i]) data_[i]->save(s);
        }
      });
    }
    void restore(StateReader& r) override {
      StateReader s = r.section(node_.name());
      if (s.flag("ended")) {
        end();
        s.finish();
        return;
      }
      if (node_.sampling())
        draws_ = s.u64("draws made");
      else
        selector_->restore(s);
      pickable_ = 0;
      for (size_t i = 0; i < data_.size(); ++i) {
        bool was_pickable = !node_.sampling() || node_.weights_[i] > 0;
        exhausted_[i] = s.flag("input exhausted");
        if (!was_pickable && !exhausted_[i]) s.corrupt(str_cat("input ", i, " has weight 0"));
        if (!exhausted_[i]) ++pickable_;
        if (s.flag("input open")) {
          if (exhausted_[i]) s.corrupt(str_cat("input ", i, " is open and exhausted"));
          data_[i] = node_.inputs_[node_.first_ + i]->make_iterator(ctx_);
          data_[i]->restore(s);
        }
      }
      s.finish();
      ctx_.restoring = false;
    }

   private:
    bool choose(size_t& pick) {
      if (node_.sampling()) {
        pick = node_.draw(draws_++);
        return true;
      }
      Element sel;
      if (!selector_->next(sel)) return false;
      int64_t v = *sel.at(0).data_as<int64_t>();
      if (v < 0 || v >= static_cast<int64_t>(data_.size()))
        raise(Code::kInvalidArgument, "choose_from_datasets: the selector gave index ", v,
              ", outside [0, ", data_.size(), ") (there are ", data_.size(), " datasets)");
      pick = static_cast<size_t>(v);
      return true;
    }
    bool end() {
      ended_ = true;
      selector_.reset();
      for (auto& d : data_) d.reset();
      return false;
    }
    DatasetPtr ds_;  // keeps node_ alive
    const SelectDataset& node_;
    IteratorContext ctx_;
    std::unique_ptr<Iterator> selector_;
    std::vector<std::unique_ptr<Iterator>> data_;  // opened when first picked
    std::vector<bool> exhausted_;
    size_t pickable_ = 0;
    uint64_t draws_ = 0;
    bool ended_ = false;
  };
  std::unique_ptr<Iterator> make_iterator(const IteratorContext& ctx) const override {
    return std::make_unique<Iter>(*this, ctx);
  }

 private:
  // The input of draw number k: a uniform number in [0, 1) made from (seed, k) alone, so
  // that the sequence of picks is the seed's and a saved count of draws resumes it.
  size_t draw(uint64_t k) const {
    double u = static_cast<double>(epoch_seed(seed_, k) >> 11) * 0x1p-53;
    double cumulative = 0;
    size_t last = 0;
    for (size_t i = 0; i < weights_.size(); ++i) {
      if (weights_[i] == 0) continue;
      cumulative += weights_[i];
      last = i;
      if (u < cumulative) return i;
    }
    return last;  // rounding left the sum just below 1
  }

  std::vector<double> weights_;
  uint64_t seed_ = 0;
  bool random_seed_ = false;
  bool stop_on_empty_;
  size_t first_;
  ElementSpec spec_;
};

}  // namespace

DatasetPtr make_sample_from_datasets(std::vector<DatasetPtr> inputs, std::vector<double> weights,
                                     int64_t seed, bool stop_on_empty_dataset) {
  DINPUT_CHECK_ARG(!inputs.empty(), "sample_from_datasets: at least one dataset is required");
  if (weights.empty()) weights.assign(inputs.size(), 1.0);
  DINPUT_CHECK_ARG(weights.size() == inputs.size(), "sample_from_datasets: ", weights.size(),
                   " weights for ", inputs.size(), " datasets (one weight per dataset)");
  double sum = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    DINPUT_CHECK_ARG(std::isfinite(weights[i]) && weights[i] >= 0, "sample_from_datasets: weight ",
                     i, " is ", weights[i], "; weights must be finite and >= 0");
    sum += weights[i];
  }
  DINPUT_CHECK_ARG(sum > 0 && std::isfinite(sum), "sample_from_datasets: the weights sum to ", sum,
                   "; at least one must be > 0");
  for (double& w : weights) w /= sum;
  return std::make_shared<SelectDataset>(std::move(inputs), std::move(weights),
                                         seed_or_random(seed), seed < 0, stop_on_empty_dataset);
}

DatasetPtr make_choose_from_datasets(DatasetPtr selector, std::vector<DatasetPtr> inputs,
                                     bool stop_on_empty_dataset) {
  DINPUT_CHECK_ARG(selector != nullptr, "choose_from_datasets: the selector dataset is NULL");
  DINPUT_CHECK_ARG(!inputs.empty(), "choose_from_datasets: at least one dataset is required");
  inputs.insert(inputs.begin(), std::move(selector));
  return std::make_shared<SelectDataset>(std::move(inputs), stop_on_empty_dataset);
}

}  // namespace dinput
