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

namespace {

// From `node` towards the sources through the nodes that keep whole batches: the batch or
// padded_batch node that decides the global batch size, a node of several inputs (zip,
// concatenate, sample_from_datasets, choose_from_datasets), whose delivering inputs decide,
// or null when neither comes first.
const Dataset* walk_to_batch(const Dataset* node) {
  // The Example parses map a batch of records to a batch of their features, row for row.
  static const char* const kKeepsBatches[] = {
      "prefetch", "take",         "skip",          "repeat",
      "shuffle",  "with_options", "parse_example", "parse_sequence_example",
      "cache",    "ignore_errors"};
  for (;;) {
    // A padded batch is a batch: its pieces are cut along the first dimension the same way.
    if (dynamic_cast<const BatchDataset*>(node) || dynamic_cast<const PaddedBatchDataset*>(node) ||
        dynamic_cast<const MultiInputDataset*>(node))
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
  const Dataset* node = walk_to_batch(root.get());
  if (auto* batch = dynamic_cast<const BatchDataset*>(node)) return batch->batch_size();
  if (auto* padded = dynamic_cast<const PaddedBatchDataset*>(node)) return padded->batch_size();
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
  return -1;
}

std::vector<Tensor> detect_batch_padding(const DatasetPtr& root) {
  // Over several inputs there is no one padding: their batches are split as plain ones.
  auto* padded = dynamic_cast<const PaddedBatchDataset*>(walk_to_batch(root.get()));
  return padded ? padded->padding().values : std::vector<Tensor>{};
}

}  // namespace dinput
