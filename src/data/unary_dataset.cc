// The depth limit of single-input nodes, and the non-recursive destruction of every node.
#include <utility>
#include <vector>

#include "core/status.h"
#include "data/dataset.h"

namespace dinput {

UnaryDataset::UnaryDataset(DatasetPtr input) : input_(std::move(input)), depth_(0) {
  if (!input_) raise(Code::kInvalidArgument, "the input dataset is NULL");
  depth_ = input_->depth() + 1;
  if (depth_ > kMaxPipelineDepth)
    raise(Code::kInvalidArgument, "pipeline is ", depth_, " operations deep; the limit is ",
          kMaxPipelineDepth,
          " (build shallower pipelines, e.g. one take(n) instead of a chain of them)");
}

// Destroying a node destroys its input when it held the last reference, which would recurse
// once per node of a long chain. Instead, each node whose last owner is this worklist gives
// up its own inputs to the worklist before it dies, so the chain unwinds in a loop.
void release_inputs_iteratively(std::vector<DatasetPtr> pending) {
  while (!pending.empty()) {
    DatasetPtr node = std::move(pending.back());
    pending.pop_back();
    // use_count() == 1: no other owner exists, so nobody can be looking at the node now.
    if (node && node.use_count() == 1) {
      // Datasets are created non-const (make_shared), so taking the inputs is defined.
      for (auto& in : const_cast<Dataset*>(node.get())->take_inputs())
        pending.push_back(std::move(in));
    }
    // `node` goes here; its inputs, if it had some that we took, are already in `pending`.
  }
}

UnaryDataset::~UnaryDataset() { release_inputs_iteratively({std::move(input_)}); }

}  // namespace dinput
