#include "distribute/graph.h"

#include <cstring>

#include "data/multi_input.h"
#include "data/nodes.h"

namespace dinput {

void for_each_node(const DatasetPtr& root, const std::function<void(const Dataset&)>& visit) {
  for (const auto& in : root->inputs()) for_each_node(in, visit);
  visit(*root);
}

DatasetPtr rewrite_graph(const DatasetPtr& root,
                         const std::function<DatasetPtr(const DatasetPtr&)>& replace) {
  std::vector<DatasetPtr> inputs = root->inputs();
  bool changed = false;
  for (auto& in : inputs) {
    DatasetPtr rewritten = rewrite_graph(in, replace);
    changed |= rewritten != in;
    in = std::move(rewritten);
  }
  return replace(changed ? root->with_inputs(std::move(inputs)) : root);
}

int64_t detect_global_batch_size(const DatasetPtr& root) {
  // The Example parses map a batch of records to a batch of their features, row for row.
  static const char* const kKeepsBatches[] = {
      "prefetch", "take",         "skip",          "repeat",
      "shuffle",  "with_options", "parse_example", "parse_sequence_example",
      "cache",    "ignore_errors"};
  const Dataset* node = root.get();
  for (;;) {
    if (auto* batch = dynamic_cast<const BatchDataset*>(node)) return batch->batch_size();
    // zip, concatenate, sample and choose deliver their inputs' elements whole (zip side by
    // side): batched when every delivering input is batched alike, else unknown.
    if (auto* multi = dynamic_cast<const MultiInputDataset*>(node)) {
      std::vector<DatasetPtr> inputs = multi->inputs();
      int64_t size = -1;
      for (size_t i = multi->first_data_input(); i < inputs.size(); ++i) {
        int64_t b = detect_global_batch_size(inputs[i]);
        if (b < 0 || (size >= 0 && b != size)) return -1;
        size = b;
      }
      return size;
    }
    bool passes = false;
    for (const char* name : kKeepsBatches) passes |= std::strcmp(node->name(), name) == 0;
    std::vector<DatasetPtr> inputs = node->inputs();
    if (!passes || inputs.size() != 1) return -1;
    node = inputs[0].get();
  }
}

}  // namespace dinput
