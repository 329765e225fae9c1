// Splitting each worker's batches into per-replica pieces (docs/semantics.md, "Rebatching").
// Both splitters are iterators whose elements are pieces; a step hands R consecutive pieces
// to the R local replicas. Pieces are zero-copy slices of the input batches whenever they lie
// within one.
#pragma once

#include <memory>
#include <vector>

#include "data/iterator.h"

namespace dinput {

// Even split ("legacy" rebatch): every input batch of b rows becomes num_pieces pieces of
// ceil(b / num_pieces) rows (the last ones shorter or empty). Only the pieces whose index is
// in `keep` (ascending, < num_pieces) are produced, in that order: DATA sharding keeps worker
// w's pieces w, w+W, ...; otherwise all of them.
std::unique_ptr<Iterator> make_even_split(std::unique_ptr<Iterator> input, int64_t num_pieces,
                                          std::vector<int64_t> keep);

// Balanced split ("V2" rebatch): the stream of rows regrouped into pieces whose sizes cycle
// through `sizes` (like unbatch().batch(k) with k cycling); a size of 0 is an empty piece.
// `padding`: the padding values of a padded_batch input, whose batches may differ in width
// (a piece joining rows of two of them is padded to the wider; empty for a plain batch).
std::unique_ptr<Iterator> make_balanced_split(std::unique_ptr<Iterator> input,
                                              std::vector<int64_t> sizes,
                                              std::vector<Tensor> padding = {});

// The size list of worker `worker` for global batch size G over W workers of R replicas:
// worker 0 gets [floor+1]*num_ceil + [floor]*(N-num_ceil), worker w that list rotated left
// by w*R.
std::vector<int64_t> balanced_sizes(int64_t global_batch_size, int num_workers,
                                    int replicas_per_worker, int worker);

}  // namespace dinput
