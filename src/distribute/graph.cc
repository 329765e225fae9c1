#include "distribute/graph.h"

#include <cstring>

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
  static const char* const kKeepsBatches[] = {"prefetch", "take",    "skip",
                                              "repeat",   "shuffle", "with_options"};
  const Dataset* node = root.get();
  for (;;) {
    if (auto* batch = dynamic_cast<const BatchDataset*>(node)) return batch->batch_size();
    // A padded batch is a batch: its pieces are cut along the first dimension the same way.
    if (auto* padded = dynamic_cast<const PaddedBatchDataset*>(node)) return padded->batch_size();
    bool passes = false;
    for (const char* name : kKeepsBatches) passes |= std::strcmp(node->name(), name) == 0;
    std::vector<DatasetPtr> inputs = node->inputs();
    if (!passes || inputs.size() != 1) return -1;
    node = inputs[0].get();
  }
}

}  // namespace dinput
