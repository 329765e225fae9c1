// Splitting each worker's batches into per-replica pieces (docs/semantics.md, "Rebatching").
// Both splitters are iterators whose elements are pieces; a step hands R consecutive pieces
// to the R local replicas. Pieces are zero-copy slices of the input batches whenever they lie
// within one.
#pragma once

#include <memory>
#include <vector>

#include "data/iterator.h"

namespace dinput {

class StateReader;
class StateWriter;

// A splitter's position between two steps, in two parts that a distributed state stores
// apart (docs/checkpoint.md, "Distributed iterators"): the input's state, and the
// splitter's own fields. Inside an input batch (part of it handed out, the rest held) the
// input's state is the one from before that batch, which is read again on restore.
class SplitIterator : public Iterator {
 public:
  explicit SplitIterator(std::unique_ptr<Iterator> input) : input_(std::move(input)) {}
  Iterator& input() const { return *input_; }
  // The input's section (data/state.h): from before the held batch, if any.
  virtual std::string input_state() const = 0;
  // The splitter's own fields: whether it holds a batch and which of its pieces went out.
  virtual void save_position(StateWriter& w) const = 0;
  // Reads what save_position wrote, the input having been restored from input_state(): reads
  // the held batch again and skips the pieces that went out.
  virtual void restore_position(StateReader& r) = 0;
  // Reads a position that a splitter of another shape (other workers or replicas) saved,
  // keeping only the rows of the held batch already taken: every worker of the new shape
  // continues from that row (elastic resume under OFF). FAILED_PRECONDITION when the
  // position cannot be expressed in rows (the even split inside a batch).
  virtual void restore_rows(StateReader& r) = 0;

 protected:
  std::unique_ptr<Iterator> input_;
};

// Even split ("legacy" rebatch): every input batch of b rows becomes num_pieces pieces of
// ceil(b / num_pieces) rows (the last ones shorter or empty). Only the pieces whose index is
// in `keep` (ascending, < num_pieces) are produced, in that order: DATA sharding keeps worker
// w's pieces w, w+W, ...; otherwise all of them.
// `snapshots`: keep the input's state before each batch (needed when a step can end inside
// a batch, that is when more pieces are kept per batch than a step takes).
// `lend`: all but the last kept piece of a batch are lent views (core/tensor.h) of the last
// one, which holds the batch's buffers: no reference per piece. Only for a consumer that
// keeps each batch's kept pieces together until it drops them all, or copies them.
std::unique_ptr<SplitIterator> make_even_split(std::unique_ptr<Iterator> input, int64_t num_pieces,
                                               std::vector<int64_t> keep, bool snapshots = false,
                                               bool lend = false);

// Balanced split ("V2" rebatch): the stream of rows regrouped into pieces whose sizes cycle
// through `sizes` (like unbatch().batch(k) with k cycling); a size of 0 is an empty piece.
// `padding`: the padding values of a padded_batch input, whose batches may differ in width
// (a piece joining rows of two of them is padded to the wider; empty for a plain batch).
std::unique_ptr<SplitIterator> make_balanced_split(std::unique_ptr<Iterator> input,
                                                   std::vector<int64_t> sizes,
                                                   std::vector<Tensor> padding = {});

// The size list of worker `worker` for global batch size G over W workers of R replicas:
// worker 0 gets [floor+1]*num_ceil + [floor]*(N-num_ceil), worker w that list rotated left
// by w*R.
std::vector<int64_t> balanced_sizes(int64_t global_batch_size, int num_workers,
                                    int replicas_per_worker, int worker);

}  // namespace dinput
