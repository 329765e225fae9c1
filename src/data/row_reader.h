// Reads the rows of a stream of batches as one continuous stream, handing out groups of
// rows as zero-copy slices when a group lies within one input batch (and a concatenation
// when it spans several). unbatch, rebatch and the distributed balanced split use it.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "data/iterator.h"

namespace dinput {

class RowReader {
 public:
  // `what` names the consumer in error messages ("rebatch", "unbatch", ...).
  // `checkpointable`: keep the input's state from before each batch it loads, so that
  // save() can record a position inside that batch (unbatch, rebatch).
  RowReader(Iterator* input, const char* what, bool checkpointable = false)
      : input_(input), what_(what), checkpointable_(checkpointable) {}

  // Rows of padded batches: where rows of batches of different widths are joined, they
  // are padded to the widest with values[c] for component c (see concat_padded).
  void set_padding(std::vector<Tensor> values) { padding_ = std::move(values); }

  // Up to n rows (fewer only at the end of the input). Returns false when no row is left.
  bool take(int64_t n, Element& out);
  // An element with zero rows shaped like the current input batch; false if the input has
  // no more data (so the shape of an empty piece is never guessed).
  bool empty_piece(Element& out);
  bool exhausted();

  // The position of the next row: the input's state before the current batch and the rows
  // of it already taken (the batch is read again on restore), or the input's own state
  // between batches. Needs `checkpointable`.
  void save(StateWriter& w) const;
  void restore(StateReader& r);
  // The same position in parts, for a caller that stores the input's state apart (the
  // distributed split): whether a batch is partly taken; then the input's state before it
  // (raising why it could not be saved) and the rows taken; restore_inside reads that batch
  // again from an input already restored to before it and skips `pos` rows.
  bool inside() const { return pos_ < rows_; }
  const std::string& before() const;
  int64_t taken() const { return pos_; }
  bool input_done() const { return done_; }
  void restore_inside(int64_t pos, StateReader& r);

 private:
  bool ensure_rows();  // loads the next non-empty batch if the current one is used up
  void load(Element&& batch);

  Iterator* input_;
  const char* what_;
  Element current_;
  int64_t rows_ = 0;
  int64_t pos_ = 0;
  bool done_ = false;
  bool checkpointable_;
  std::string before_;           // the input's state before current_ was read
  std::exception_ptr no_state_;  // why the input could not save (raised by save())
  std::vector<Tensor> padding_;  // empty: rows are joined only where their shapes agree
};

// The number of rows of a batched element: its components' common first dimension.
// INVALID_ARGUMENT for scalars or components with different first dimensions.
int64_t leading_rows(const Element& element, const char* what);

}  // namespace dinput
