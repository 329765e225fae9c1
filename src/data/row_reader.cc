#include "data/row_reader.h"

#include <vector>

#include "core/tensor_ops.h"
#include "data/padding.h"
#include "data/state.h"

namespace dinput {

int64_t leading_rows(const Element& element, const char* what) {
  if (element.empty()) raise(Code::kInvalidArgument, what, ": elements have no components");
  for (size_t c = 0; c < element.size(); ++c) {
    if (element[c].rank() < 1)
      raise(Code::kInvalidArgument, what,
            ": Expected a dataset whose elements have rank >= 1 but found a dataset whose elements "
            "are "
            "scalars. Fix the issue by adding the `batch` transformation to the dataset.");
    if (element[c].dim(0) != element[0].dim(0))
      raise(Code::kInvalidArgument, what,
            ": all components of an element must have the same leading size, but component 0 has ",
            element[0].dim(0), " rows and component ", c, " has ", element[c].dim(0), " (element ",
            describe(element), ")");
  }
  return element[0].dim(0);
}

void RowReader::load(Element&& batch) {
  rows_ = leading_rows(batch, what_);
  current_ = std::move(batch);
  pos_ = 0;
}

bool RowReader::ensure_rows() {
  while (pos_ >= rows_) {
    if (done_) return false;
    if (checkpointable_ && !no_state_) {
      try {
        before_ = save_to_bytes(*input_);
      } catch (...) {
        no_state_ = std::current_exception();  // iteration goes on; only a save fails
      }
    }
    Element batch;
    if (!input_->next(batch)) {
      done_ = true;
      return false;
    }
    load(std::move(batch));
  }
  return true;
}

void RowReader::save(StateWriter& w) const {
  bool inside = pos_ < rows_;
  w.flag(inside);
  if (inside) {
    if (no_state_) std::rethrow_exception(no_state_);
    w.bytes(before_);
    w.i64(pos_);
  } else {
    w.flag(done_);
    if (!done_) input_->save(w);
  }
}

const std::string& RowReader::before() const {
  if (no_state_) std::rethrow_exception(no_state_);
  return before_;
}

void RowReader::restore_inside(int64_t pos, StateReader& r) {
  if (!ensure_rows()) r.corrupt("the input has no batch left to take rows from");
  if (pos < 0 || pos >= rows_)
    r.corrupt(str_cat("rows taken from the batch is ", pos, " but the batch has ", rows_));
  pos_ = pos;
}

void RowReader::restore(StateReader& r) {
  if (r.flag("inside a batch")) {
    restore_from_bytes(r, "the input's state before the batch", *input_);
    restore_inside(r.i64("rows taken from the batch"), r);
  } else {
    done_ = r.flag("input ended");
    if (!done_) input_->restore(r);
  }
}

bool RowReader::exhausted() { return !ensure_rows(); }

bool RowReader::take(int64_t n, Element& out) {
  if (!ensure_rows()) return false;
  const int64_t avail = rows_ - pos_;
  if (n <= avail) {  // the common case: no copy
    out.resize(current_.size());
    for (size_t c = 0; c < current_.size(); ++c) out[c] = current_[c].slice(pos_, pos_ + n);
    pos_ += n;
    return true;
  }
  std::vector<Element> parts;
  int64_t got = 0;
  while (got < n && ensure_rows()) {
    int64_t k = std::min(n - got, rows_ - pos_);
    Element part(current_.size());
    for (size_t c = 0; c < current_.size(); ++c) part[c] = current_[c].slice(pos_, pos_ + k);
    if (!parts.empty() && parts[0].size() != part.size())
      raise(Code::kInvalidArgument, what_, ": input batches have different numbers of components");
    parts.push_back(std::move(part));
    pos_ += k;
    got += k;
  }
  out.resize(parts[0].size());
  std::vector<Tensor> column(parts.size());
  for (size_t c = 0; c < out.size(); ++c) {
    for (size_t p = 0; p < parts.size(); ++p) column[p] = std::move(parts[p][c]);
    out[c] = padding_.empty() ? concat(column) : concat_padded(column, padding_.at(c));
  }
  return true;
}

bool RowReader::empty_piece(Element& out) {
  if (!ensure_rows()) return false;
  out.resize(current_.size());
  for (size_t c = 0; c < current_.size(); ++c) out[c] = current_[c].slice(pos_, pos_);
  return true;
}

}  // namespace dinput
