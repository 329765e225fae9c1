#include "data/multi_input.h"

#include "core/status.h"

namespace dinput {

MultiInputDataset::MultiInputDataset(const char* op, std::vector<DatasetPtr> inputs)
    : inputs_(std::move(inputs)) {
  int64_t deepest = 0;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!inputs_[i]) raise(Code::kInvalidArgument, op, ": input dataset ", i, " is NULL");
    deepest = std::max(deepest, inputs_[i]->depth());
  }
  depth_ = deepest + 1;
  if (depth_ > kMaxPipelineDepth)
    raise(Code::kInvalidArgument, op, ": pipeline is ", depth_, " operations deep; the limit is ",
          kMaxPipelineDepth);
  for (auto it = inputs_.rbegin(); it != inputs_.rend(); ++it)
    options_ = (*it)->options().over(options_);
}

MultiInputDataset::~MultiInputDataset() { release_inputs_iteratively(std::move(inputs_)); }

ElementSpec merged_spec(const char* op, const std::vector<DatasetPtr>& inputs, size_t first) {
  ElementSpec out = inputs.at(first)->element_spec();
  for (size_t i = first + 1; i < inputs.size(); ++i) {
    const ElementSpec& other = inputs[i]->element_spec();
    bool same = other.size() == out.size();
    for (size_t c = 0; same && c < out.size(); ++c)
      same = other[c].dtype == out[c].dtype && other[c].shape.rank() == out[c].shape.rank();
    if (!same)
      raise(Code::kInvalidArgument, op, ": the elements of input ", i - first, " ",
            to_string(other), " are not compatible with those of input 0 ",
            to_string(inputs[first]->element_spec()),
            " (the same number of components, dtypes and ranks are required)");
    out = merge_specs(out, other);
  }
  return out;
}

}  // namespace dinput
