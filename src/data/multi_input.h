// The base of the operations that read several datasets (zip, concatenate,
// sample_from_datasets, choose_from_datasets): their inputs, options and depth.
#pragma once

#include <vector>

#include "data/dataset.h"

namespace dinput {

class MultiInputDataset : public Dataset {
 public:
  // INVALID_ARGUMENT naming `op` when an input is NULL or the pipeline grows deeper than
  // kMaxPipelineDepth.
  MultiInputDataset(const char* op, std::vector<DatasetPtr> inputs);
  // Frees the inputs only this node owns without recursing (release_inputs_iteratively).
  ~MultiInputDataset() override;
  std::vector<DatasetPtr> inputs() const override { return inputs_; }
  // The options of the inputs merged field by field; where two inputs set a field, the
  // earlier input's value is kept (the first input is the one the caller called the
  // method on).
  const Options& options() const override { return options_; }
  int64_t depth() const override { return depth_; }
  // The index of the first input whose elements the operation delivers; the inputs before
  // it steer it (choose_from_datasets' selector). Batch-size detection looks only at the
  // delivering ones.
  virtual size_t first_data_input() const { return 0; }

 protected:
  std::vector<DatasetPtr> take_inputs() override { return std::move(inputs_); }
  std::vector<DatasetPtr> inputs_;

 private:
  Options options_;
  int64_t depth_ = 1;
};

// The spec of elements that come from any of `inputs` (concatenate, sample and choose):
// each component's shape merged (merge_specs). INVALID_ARGUMENT naming `op` and the input
// when the number of components, a dtype or a rank differs.
ElementSpec merged_spec(const char* op, const std::vector<DatasetPtr>& inputs, size_t first = 0);

}  // namespace dinput
