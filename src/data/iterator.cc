#include "data/iterator.h"

#include <algorithm>
#include <cstring>
#include <new>
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

Element stack_rows(const std::vector<Element>& rows) {
  const size_t components = rows[0].size();
  for (size_t r = 1; r < rows.size(); ++r)
    if (rows[r].size() != components)
      raise(Code::kInvalidArgument,
            "Cannot batch elements with different numbers of components: ", describe(rows[0]),
            " and ", describe(rows[r]));
  Element out;
  out.reserve(components);
  for (size_t c = 0; c < components; ++c) out.push_back(stack_component(rows, c));
  return out;
}

namespace {

// The row arrays of next_batch, kept per thread for the next batch. A fresh one per batch is
// an allocation of kilobytes, and each such request made glibc's malloc consolidate its free
// lists of small blocks (the records' own): 3% of W1's time. A stack, since a row's next()
// may batch again (nested batches) on the same thread.
thread_local std::vector<std::vector<Element>> spare_rows;

// The rows' own arrays, emptied, kept per thread for the next batch's rows. An input that
// fills the element it is given in place (a record source; the shuffle, which hands over
// the given element's array in exchange) then reuses them. A fresh array per row cost an
// allocation and a free per row: operator new and delete were 11.5% of the instructions of
// W1's plain iteration.
thread_local std::vector<Element> spare_elements;
constexpr size_t kMaxSpareElements = 4096;

// spare_elements, looked up once per batch: a thread_local of a shared library costs a call
// to find, which the compiler repeats wherever it sees the variable itself (even through a
// reference taken once), so the helpers below are given its address from here.
[[gnu::noinline]] std::vector<Element>& this_threads_spare_elements() { return spare_elements; }

[[gnu::always_inline]] inline Element take_spare_element(std::vector<Element>& spares) {
  if (spares.empty()) return Element();
  Element e = std::move(spares.back());
  spares.pop_back();
  return e;
}

[[gnu::always_inline]] inline void give_spare_element(std::vector<Element>& spares, Element& e) {
  e.clear();
  if (e.capacity() == 0 || spares.size() >= kMaxSpareElements) return;
  try {
    spares.push_back(std::move(e));
  } catch (const std::bad_alloc&) {  // not kept: freed with `e`
  }
}

// Reads rows after those already in `rows` until there are n, and stacks them into out.
int64_t gather_batch(int64_t n, std::vector<Element>& rows, Iterator& input, Element& out) {
  std::vector<Element>& spares = this_threads_spare_elements();
  Element e = take_spare_element(spares);
  while (static_cast<int64_t>(rows.size()) < n && input.next(e)) {
    rows.push_back(std::move(e));
    e = take_spare_element(spares);
  }
  give_spare_element(spares, e);
  const auto got = static_cast<int64_t>(rows.size());
  if (got > 0) out = stack_rows(rows);
  return got;
}

std::vector<Element> take_spare_rows(int64_t n) {
  std::vector<Element> rows;
  if (!spare_rows.empty()) {
    rows = std::move(spare_rows.back());
    spare_rows.pop_back();
  }
  rows.reserve(
      static_cast<size_t>(std::min<int64_t>(n, 1024)));  // n may be huge; rows arrive one by one
  return rows;
}

void give_spare_rows(std::vector<Element>& rows) {
  // The rows' buffers go now, not with a later batch; their arrays are kept.
  std::vector<Element>& spares = this_threads_spare_elements();
  for (Element& row : rows) give_spare_element(spares, row);
  rows.clear();
  if (spare_rows.size() < 4 && rows.capacity() <= 4096) spare_rows.push_back(std::move(rows));
}

// A batch of at most this many bytes is filled row by row as its rows arrive.
constexpr size_t kStreamedBatchBytes = size_t{16} << 20;

// Whether a batch of n rows like `row` is filled as the rows arrive: fixed-size dtypes in host
// memory, each tensor the whole of its buffer. A row that is part of a larger buffer may be a
// slice of a batch already, whose rows stack() hands out as a view without copying anything.
bool streamable(const Element& row, int64_t n) {
  if (row.empty() || n < 2) return false;
  size_t bytes = 0;
  for (const Tensor& t : row) {
    if (!t.defined() || t.dtype() == DType::kBytes || !t.on_host() || t.offset() != 0 ||
        t.buffer()->size() != t.byte_size())
      return false;
    bytes += t.byte_size();
  }
  return bytes > 0 && static_cast<uint64_t>(n) <= kStreamedBatchBytes / bytes;
}

// Whether `row` fits the rows of `batch`; where it does not, stack() says why.
bool fits(const Element& batch, const Element& row) {
  if (row.size() != batch.size()) return false;
  for (size_t c = 0; c < row.size(); ++c) {
    const Tensor& t = row[c];
    const Shape& s = batch[c].shape();
    if (t.dtype() != batch[c].dtype() || !t.on_host() || t.rank() + 1 != s.rank()) return false;
    for (int i = 0; i < t.rank(); ++i)
      if (t.dim(i) != s[i + 1]) return false;
  }
  return true;
}

void copy_row(Element& batch, const Element& row, int64_t i) {
  for (size_t c = 0; c < row.size(); ++c) {
    const size_t bytes = row[c].byte_size();
    std::memcpy(batch[c].mutable_data_as<char>() + static_cast<size_t>(i) * bytes, row[c].data(),
                bytes);
  }
}

}  // namespace

// Rows are copied into the batch as they arrive and released at once, where the tensors allow
// (streamable): holding n rows until the batch was stacked made a map's per-element
// allocations overflow glibc's per-thread cache, so that each went through its locked bins
// (docs/semantics.md, batch). Other rows are gathered and stacked.
int64_t Iterator::next_batch(int64_t n, Element& out) {
  Element row;
  if (n <= 0 || !next(row)) return 0;
  if (!streamable(row, n)) {
    std::vector<Element> rows = take_spare_rows(n);
    rows.push_back(std::move(row));
    const int64_t got = gather_batch(n, rows, *this, out);
    give_spare_rows(rows);
    return got;
  }
  Element batch;
  batch.reserve(row.size());
  for (const Tensor& t : row) batch.push_back(Tensor::allocate(t.dtype(), t.shape().prepend(n)));
  copy_row(batch, row, 0);
  row.clear();
  int64_t got = 1;
  while (got < n && next(row)) {
    if (!fits(batch, row)) {
      // The rows so far become views of the batch, and stack() reports the mismatch as it
      // would have (or, for a row in another memory, the same).
      std::vector<Element> rows = take_spare_rows(n);
      for (int64_t i = 0; i < got; ++i) {
        Element r;
        r.reserve(batch.size());
        for (const Tensor& t : batch) r.push_back(t.row(i));
        rows.push_back(std::move(r));
      }
      rows.push_back(std::move(row));
      const int64_t all = gather_batch(n, rows, *this, out);
      give_spare_rows(rows);
      return all;
    }
    copy_row(batch, row, got++);
    row.clear();
  }
  if (got < n)
    for (Tensor& t : batch) t.keep_rows(0, got);
  out = std::move(batch);
  return got;
}

}  // namespace dinput
