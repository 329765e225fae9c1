// Walking and rewriting dataset graphs. Rewrites rebuild only the nodes on the path to a
// change, so the untouched parts of a graph (and their shuffle epoch counters) are shared.
#pragma once

#include <functional>

#include "data/dataset.h"

namespace dinput {

// Calls visit on every node, inputs before the node that reads them.
void for_each_node(const DatasetPtr& root, const std::function<void(const Dataset&)>& visit);

// Replaces each node by replace(node-with-rewritten-inputs); replace returns its argument
// to keep a node.
DatasetPtr rewrite_graph(const DatasetPtr& root,
                         const std::function<DatasetPtr(const DatasetPtr&)>& replace);

// The global batch size: the batch_size of the last batch() or padded_batch() on the way from
// the output to the sources, walking only through nodes that keep whole batches (prefetch,
// take, skip, repeat, shuffle, with_options, the Example parses, cache, ignore_errors). zip,
// concatenate, sample_from_datasets and choose_from_datasets (its data inputs) give their
// inputs' size when every input has the same one. -1 when unknown.
int64_t detect_global_batch_size(const DatasetPtr& root);

// The padding values of that batch when it is a padded_batch (empty otherwise): rows of its
// batches have different widths, and a split that joins rows of two batches pads them.
std::vector<Tensor> detect_batch_padding(const DatasetPtr& root);

}  // namespace dinput
