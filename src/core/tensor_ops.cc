#include "core/tensor_ops.h"

#include <cstring>

#include "core/status.h"

namespace dinput {

Tensor stack(const std::vector<Tensor>& rows, size_t component) {
  if (rows.empty()) raise(Code::kInternal, "stack of no tensors");
  const Tensor& first = rows[0];
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].dtype() != first.dtype() || rows[i].shape() != first.shape())
      raise(Code::kInvalidArgument, "Cannot batch tensors with different shapes in component ",
            component, ". First element had shape ", first.describe(), " and element ", i,
            " had shape ", rows[i].describe(), ".");
  }
  // The message is built only on failure: this runs for every row of every batch.
  for (const auto& r : rows)
    if (!r.on_host()) r.require_host(str_cat("batching component ", component));
  // Rows that are consecutive slices of one buffer (an image pipeline writes each element
  // where its batch holds it, see Dataset::with_batch_rows) are already the batch: a view of
  // them, nothing copied. Not where a scoped allocator (pinned memory bound for a GPU)
  // wants the batch in its own memory.
  if (first.dtype() != DType::kBytes && first.defined() && !scoped_host_allocator_active()) {
    const size_t bytes = first.byte_size();
    bool adjacent = bytes > 0 && rows.size() > 1;
    for (size_t i = 1; adjacent && i < rows.size(); ++i)
      adjacent =
          rows[i].buffer() == first.buffer() && rows[i].offset() == first.offset() + i * bytes;
    if (adjacent)
      return Tensor(first.dtype(), first.shape().prepend(static_cast<int64_t>(rows.size())),
                    first.buffer(), first.offset());
  }
  Tensor out =
      Tensor::allocate(first.dtype(), first.shape().prepend(static_cast<int64_t>(rows.size())));
  if (first.dtype() == DType::kBytes) {
    int64_t per_row = first.num_elements();
    int64_t k = 0;
    // Rows that a shuffle drew keep their strings in storages all over the heap: asking for
    // a later row's while this one is set hides most of those cache misses.
    constexpr size_t kAhead = 4;
    for (size_t r = 0; r < rows.size(); ++r) {
      if (per_row > 0 && r + kAhead < rows.size()) rows[r + kAhead].prefetch_string(0);
      for (int64_t j = 0; j < per_row; ++j) out.set_string_from(k++, rows[r], j);
    }
    return out;
  }
  size_t bytes = first.byte_size();
  char* dst = out.mutable_data_as<char>();
  for (const auto& r : rows) {
    std::memcpy(dst, r.data(), bytes);
    dst += bytes;
  }
  return out;
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
