#include "core/tensor_ops.h"

#include <cstring>

#include "core/status.h"

namespace dinput {

namespace {

// The rows of a stack: tensors of a vector, in place.
struct TensorRows {
  const std::vector<Tensor>& rows;
  size_t size() const { return rows.size(); }
  const Tensor& operator[](size_t r) const { return rows[r]; }
  void ahead(size_t) const {}
};

// Component c of each element, in place. Each element's tensors are an array of their own,
// cold when a shuffle drew the element: ahead(r) asks for a later row's while this one is
// read.
struct ComponentRows {
  const std::vector<Element>& rows;
  size_t c;
  size_t size() const { return rows.size(); }
  const Tensor& operator[](size_t r) const { return rows[r][c]; }
  void ahead(size_t r) const {
    const char* t = reinterpret_cast<const char*>(rows[r].data() + c);
    __builtin_prefetch(t);
    __builtin_prefetch(t + sizeof(Tensor) - 1);  // a tensor spans two cache lines
  }
};

template <typename Rows>
Tensor stack_rows_of(const Rows& rows, size_t component) {
  const size_t n = rows.size();
  if (n == 0) raise(Code::kInternal, "stack of no tensors");
  const Tensor& first = rows[0];
  // Each row's tensor is read three times below; the first pass brings it in, asking for
  // the one kRowAhead rows on.
  constexpr size_t kRowAhead = 16;
  for (size_t i = 1; i < n; ++i) {
    if (i + kRowAhead < n) rows.ahead(i + kRowAhead);
    const Tensor& row = rows[i];
    if (row.dtype() != first.dtype() || row.shape() != first.shape())
      raise(Code::kInvalidArgument, "Cannot batch tensors with different shapes in component ",
            component, ". First element had shape ", first.describe(), " and element ", i,
            " had shape ", row.describe(), ".");
  }
  // The message is built only on failure: this runs for every row of every batch.
  for (size_t i = 0; i < n; ++i)
    if (!rows[i].on_host()) rows[i].require_host(str_cat("batching component ", component));
  // Rows that are consecutive slices of one buffer (an image pipeline writes each element
  // where its batch holds it, see Dataset::with_batch_rows) are already the batch: a view of
  // them, nothing copied. Not where a scoped allocator (pinned memory bound for a GPU)
  // wants the batch in its own memory.
  if (first.dtype() != DType::kBytes && first.defined() && !scoped_host_allocator_active()) {
    const size_t bytes = first.byte_size();
    bool adjacent = bytes > 0 && n > 1;
    for (size_t i = 1; adjacent && i < n; ++i)
      adjacent =
          rows[i].buffer() == first.buffer() && rows[i].offset() == first.offset() + i * bytes;
    if (adjacent)
      return Tensor(first.dtype(), first.shape().prepend(static_cast<int64_t>(n)), first.buffer(),
                    first.offset());
  }
  Tensor out = Tensor::allocate(first.dtype(), first.shape().prepend(static_cast<int64_t>(n)));
  if (first.dtype() == DType::kBytes) {
    int64_t per_row = first.num_elements();
    int64_t k = 0;
    // Rows that a shuffle drew keep their strings in storages all over the heap: asking for
    // a later row's while this one is set hides most of those cache misses.
    constexpr size_t kAhead = 4;
    for (size_t r = 0; r < n; ++r) {
      if (per_row > 0 && r + kAhead < n) rows[r + kAhead].prefetch_string(0);
      for (int64_t j = 0; j < per_row; ++j) out.set_string_from(k++, rows[r], j);
    }
    return out;
  }
  size_t bytes = first.byte_size();
  char* dst = out.mutable_data_as<char>();
  for (size_t r = 0; r < n; ++r) {
    std::memcpy(dst, rows[r].data(), bytes);
    dst += bytes;
  }
  return out;
}

}  // namespace

Tensor stack(const std::vector<Tensor>& rows, size_t component) {
  return stack_rows_of(TensorRows{rows}, component);
}

Tensor stack_component(const std::vector<Element>& rows, size_t component) {
  return stack_rows_of(ComponentRows{rows, component}, component);
}

Tensor concat(const std::vector<Tensor>& parts) {
  if (parts.empty()) raise(Code::kInternal, "concat of no tensors");
  if (parts.size() == 1) return parts[0];
  const Tensor& first = parts[0];
  Shape inner = first.shape().drop_first();
  int64_t rows = 0;
  for (const auto& p : parts) {
    if (p.dtype() != first.dtype() || p.rank() != first.rank() || p.shape().drop_first() != inner)
      raise(Code::kInvalidArgument, "Cannot concatenate ", first.describe(), " and ", p.describe());
    if (!p.on_host()) p.require_host("concatenating rows");
    rows += p.dim(0);
  }
  Tensor out = Tensor::allocate(first.dtype(), first.shape().with_first(rows));
  if (first.dtype() == DType::kBytes) {
    int64_t k = 0;
    for (const auto& p : parts)
      for (int64_t j = 0; j < p.num_elements(); ++j) out.set_string_from(k++, p, j);
    return out;
  }
  char* dst = out.mutable_data_as<char>();
  for (const auto& p : parts) {
    size_t b = p.byte_size();
    if (b) std::memcpy(dst, p.data(), b);
    dst += b;
  }
  return out;
}

Element concat_elements(std::vector<Element>& parts) {
  if (parts.size() <= 1) return parts.empty() ? Element() : std::move(parts[0]);
  Element out(parts[0].size());
  std::vector<Tensor> column(parts.size());
  for (size_t c = 0; c < out.size(); ++c) {
    for (size_t p = 0; p < parts.size(); ++p) column[p] = std::move(parts[p].at(c));
    out[c] = concat(column);
  }
  return out;
}

Tensor empty_rows(DType dtype, const Shape& like) {
  Shape s = like;
  for (int i = 0; i < s.rank(); ++i)
    if (i == 0 || s[i] < 0) s[i] = 0;
  return Tensor::zeros(dtype, s);
}

}  // namespace dinput
