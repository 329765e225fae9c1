// The depth limit and the non-recursive destruction of single-input nodes.
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
// up its own input to the worklist before it dies, so the chain unwinds in a loop.
UnaryDataset::~UnaryDataset() {
  std::vector<DatasetPtr> pending;
  pending.push_back(std::move(input_));
  while (!pending.empty()) {
    DatasetPtr node = std::move(pending.back());
    pending.pop_back();
    // use_count() == 1: no other owner exists, so nobody can be looking at the node now.
    if (node && node.use_count() == 1) {
      if (const auto* unary = dynamic_cast<const UnaryDataset*>(node.get())) {
        // Datasets are created non-const (make_shared), so taking the input is defined.
        pending.push_back(std::move(const_cast<UnaryDataset*>(unary)->input_));
      }
    }
    // `node` goes here; its input, if it had one that we took, is already in `pending`.
  }
}

}  // namespace dinput
