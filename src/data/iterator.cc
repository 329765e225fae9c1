#include "data/iterator.h"

#include <algorithm>
#include <vector>

#include "core/tensor_ops.h"

namespace dinput {

void Iterator::save(StateWriter&) const { state_unsupported("an operation of this pipeline"); }

void Iterator::restore(StateReader&) { state_unsupported("an operation of this pipeline"); }

int64_t Iterator::skip(int64_t n) {
  Element e;
  int64_t done = 0;
  while (done < n && next(e)) ++done;
  return done;
}

int64_t Iterator::select(int64_t n, const std::vector<int64_t>& keep, const Take& take) {
  Element e;
  int64_t done = 0;
  for (size_t k = 0; k < keep.size() && keep[k] < n; ++k) {
    if (keep[k] > done) {
      done += skip(keep[k] - done);
      if (done < keep[k]) return done;
    }
    if (!next(e)) return done;
    ++done;
    take(k, e);
  }
  return done < n ? done + skip(n - done) : done;
}

int64_t Iterator::select_split(int64_t n, const std::vector<int64_t>& keep, const Take& take,
                               int64_t /*at*/, const std::string& /*state*/) {
  return select(n, keep, take);
}

Iterator::Address Iterator::last_address() const {
  raise(Code::kInternal, "last_address: this iterator gives no addresses");
}

void Iterator::read_at(const Address&, Element&) {
  raise(Code::kInternal, "read_at: this iterator gives no addresses");
}

void Iterator::read_at(const std::vector<Address>& at, const Take& take) {
  Element e;
  for (size_t k = 0; k < at.size(); ++k) {
    read_at(at[k], e);
    take(k, e);
  }
}

void Iterator::state_unsupported(const char* op, const char* why) {
  raise(Code::kUnimplemented, op, ": saving and restoring the iterator state is not supported",
        why ? " (" : "", why ? why : "", why ? ")" : "",
        "; see docs/checkpoint.md for the operations that support it");
}

Element stack_rows(std::vector<Element>& rows) {
  const size_t components = rows[0].size();
  for (size_t r = 1; r < rows.size(); ++r)
    if (rows[r].size() != components)
      raise(Code::kInvalidArgument,
            "Cannot batch elements with different numbers of components: ", describe(rows[0]),
            " and ", describe(rows[r]));
  Element out;
  out.reserve(components);
  std::vector<Tensor> column(rows.size());
  for (size_t c = 0; c < components; ++c) {
    for (size_t r = 0; r < rows.size(); ++r) column[r] = std::move(rows[r][c]);
    out.push_back(stack(column, c));
  }
  return out;
}

namespace {

// The row arrays of next_batch, kept per thread for the next batch. A fresh one per batch is
// an allocation of kilobytes, and each such request made glibc's malloc consolidate its free
// lists of small blocks (the records' own): 3% of W1's time. A stack, since a row's next()
// may batch again (nested batches) on the same thread.
thread_local std::vector<std::vector<Element>> spare_rows;

}  // namespace

int64_t Iterator::next_batch(int64_t n, Element& out) {
  std::vector<Element> rows;
  if (!spare_rows.empty()) {
    rows = std::move(spare_rows.back());
    spare_rows.pop_back();
  }
  rows.reserve(
      static_cast<size_t>(std::min<int64_t>(n, 1024)));  // n may be huge; rows arrive one by one
  Element e;
  while (static_cast<int64_t>(rows.size()) < n && next(e)) rows.push_back(std::move(e));
  const auto got = static_cast<int64_t>(rows.size());
  if (got > 0) out = stack_rows(rows);
  rows.clear();  // the rows' buffers go now, not with a later batch
  if (spare_rows.size() < 4 && rows.capacity() <= 4096) spare_rows.push_back(std::move(rows));
  return got;
}

}  // namespace dinput
