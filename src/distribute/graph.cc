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

namespace {

// The batch or padded_batch node that decides the global batch size, or null.
const Dataset* find_global_batch(const DatasetPtr& root) {
  static const char* const kKeepsBatches[] = {"prefetch", "take",    "skip",
                                              "repeat",   "shuffle", "with_options"};
  const Dataset* node = root.get();
  for (;;) {
    // A padded batch is a batch: its pieces are cut along the first dimension the same way.
    if (dynamic_cast<const BatchDataset*>(node) || dynamic_cast<const PaddedBatchDataset*>(node))
      return node;
    bool passes = false;
    for (const char* name : kKeepsBatches) passes |= std::strcmp(node->name(), name) == 0;
    std::vector<DatasetPtr> inputs = node->inputs();
    if (!passes || inputs.size() != 1) return nullptr;
    node = inputs[0].get();
  }
}

}  // namespace

int64_t detect_global_batch_size(const DatasetPtr& root) {
  const Dataset* node = find_global_batch(root);
  if (auto* batch = dynamic_cast<const BatchDataset*>(node)) return batch->batch_size();
  if (auto* padded = dynamic_cast<const PaddedBatchDataset*>(node)) return padded->batch_size();
  return -1;
}

std::vector<Tensor> detect_batch_padding(const DatasetPtr& root) {
  auto* padded = dynamic_cast<const PaddedBatchDataset*>(find_global_batch(root));
  return padded ? padded->padding().values : std::vector<Tensor>{};
}

}  // namespace dinput
