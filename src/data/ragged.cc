#include "data/ragged.h"

#include <cstring>

#include "core/status.h"
#include "core/tensor_ops.h"

namespace dinput {

namespace {

// Nodes whose elements are their input's, some dropped, reordered or repeated.
bool passes_elements_through(const Dataset& d) {
  static const char* const kNames[] = {"cache",  "filter",      "ignore_errors", "prefetch",
                                       "repeat", "shard",       "shuffle",       "skip",
                                       "take",   "with_options"};
  bool named = false;
  for (const char* n : kNames) named = named || std::strcmp(d.name(), n) == 0;
  const auto inputs = d.inputs();
  return named && inputs.size() == 1 && inputs[0]->element_spec() == d.element_spec();
}

// The rows of a splits component, or the length of a values one.
int64_t length_of(const Tensor& t, bool splits) { return splits ? t.dim(0) - 1 : t.dim(0); }

// What splits component c of `row` indexes: the next (inner) splits, or the values.
int64_t below(const Element& row, size_t c, size_t first, size_t last) {
  return c < last ? length_of(row[c + 1], true) : length_of(row[first], false);
}

}  // namespace

std::vector<bool> find_row_splits(const Dataset& input) {
  const Dataset* d = &input;
  for (;;) {
    std::vector<bool> splits = d->row_splits_components();
    if (!splits.empty() || !passes_elements_through(*d)) return splits;
    d = d->inputs()[0].get();
  }
}

void batch_ragged(const char* op, const std::vector<Element>& rows, size_t first, size_t splits,
                  const std::vector<int64_t>& index, Element& out) {
  const size_t last = first + splits;  // the innermost splits, or the values when none
  for (size_t r = 0; r < rows.size(); ++r) {
    const Tensor& values = rows[r].at(first);
    if (values.rank() < 1)
      raise(Code::kInvalidArgument, op, ": component ", first, " of input element ", index[r],
            " holds the values of a ragged value and must have rank >= 1, got ", values.describe());
    if (!values.on_host()) values.require_host(str_cat(op, ": component ", first));
    for (size_t c = last; c > first; --c) {  // inner first: each checks what it indexes
      const Tensor& s = rows[r].at(c);
      if (s.dtype() != DType::kInt64 || s.rank() != 1 || s.dim(0) < 1)
        raise(Code::kInvalidArgument, op, ": component ", c, " of input element ", index[r],
              " holds row splits and must be an int64 vector of at least one entry, got ",
              s.describe());
      if (!s.on_host()) s.require_host(str_cat(op, ": component ", c));
      const int64_t* v = s.data_as<int64_t>();
      const int64_t n = below(rows[r], c, first, last);
      bool ok = v[0] == 0 && v[s.dim(0) - 1] == n;
      for (int64_t i = 1; ok && i < s.dim(0); ++i) ok = v[i] >= v[i - 1];
      if (!ok)
        raise(Code::kInvalidArgument, op, ": component ", c, " of input element ", index[r],
              " is not valid row splits over the ", n, " rows of component ",
              c < last ? c + 1 : first, " (they must start at 0, never decrease and end at ", n,
              ")");
    }
  }
  // The values, one row after another.
  std::vector<Tensor> parts;
  parts.reserve(rows.size());
  for (const auto& row : rows) parts.push_back(row[first]);
  try {
    out.push_back(concat(parts));
  } catch (const Error& e) {
    raise(Code::kInvalidArgument, op, ": the ragged values of component ", first,
          " cannot be joined: ", e.what());
  }
  // The new outermost splits: where each row's top-level rows begin.
  Tensor outer = Tensor::allocate(DType::kInt64, Shape{static_cast<int64_t>(rows.size()) + 1});
  int64_t* o = outer.mutable_data_as<int64_t>();
  o[0] = 0;
  for (size_t r = 0; r < rows.size(); ++r)
    o[r + 1] = o[r] + (splits > 0 ? length_of(rows[r][first + 1], true)
                                  : length_of(rows[r][first], false));
  out.push_back(std::move(outer));
  // Each row's splits after the rows before it, outermost first.
  for (size_t c = first + 1; c <= last; ++c) {
    int64_t total = 1;
    for (const auto& row : rows) total += row[c].dim(0) - 1;
    Tensor merged = Tensor::allocate(DType::kInt64, Shape{total});
    int64_t* m = merged.mutable_data_as<int64_t>();
    m[0] = 0;
    int64_t at = 1, offset = 0;
    for (const auto& row : rows) {
      const int64_t* v = row[c].data_as<int64_t>();
      for (int64_t i = 1; i < row[c].dim(0); ++i) m[at++] = offset + v[i];
      offset += below(row, c, first, last);
    }
    out.push_back(std::move(merged));
  }
}

}  // namespace dinput
