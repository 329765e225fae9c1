#include "data/padding.h"

#include <cstring>

#include "core/quote.h"
#include "core/status.h"
#include "core/tensor_ops.h"

namespace dinput {

Padding make_padding(const char* op, const ElementSpec& spec, std::vector<Shape> shapes,
                     std::vector<Tensor> values) {
  Padding p;
  if (shapes.empty()) {
    for (const auto& s : spec) p.shapes.push_back(s.shape);
  } else {
    DINPUT_CHECK_ARG(shapes.size() == spec.size(), op, ": padded_shapes has ", shapes.size(),
                     " shapes but the input's elements have ", spec.size(), " components");
    for (size_t c = 0; c < spec.size(); ++c) {
      const Shape& want = shapes[c];
      const Shape& have = spec[c].shape;
      DINPUT_CHECK_ARG(want.rank() == have.rank(), op, ": the padded shape ", want.to_string(),
                       " of component ", c, " has rank ", want.rank(), " but the component (",
                       to_string(spec[c]), ") has rank ", have.rank());
      for (int d = 0; d < want.rank(); ++d) {
        DINPUT_CHECK_ARG(want[d] >= kUnknownDim, op, ": the padded shape ", want.to_string(),
                         " of component ", c, " has a negative dimension");
        DINPUT_CHECK_ARG(want[d] == kUnknownDim || have[d] == kUnknownDim || want[d] >= have[d], op,
                         ": the padded shape ", want.to_string(), " of component ", c,
                         " is smaller than the component's shape (", to_string(spec[c]), ")");
      }
    }
    p.shapes = std::move(shapes);
  }
  if (values.empty()) {
    for (const auto& s : spec) p.values.push_back(Tensor::zeros(s.dtype, Shape()));
  } else {
    DINPUT_CHECK_ARG(values.size() == spec.size(), op, ": padding_values has ", values.size(),
                     " values but the input's elements have ", spec.size(), " components");
    for (size_t c = 0; c < spec.size(); ++c) {
      const Tensor& v = values[c];
      DINPUT_CHECK_ARG(v.rank() == 0 && v.dtype() == spec[c].dtype, op,
                       ": the padding value of component ", c, " must be a ",
                       dtype_name(spec[c].dtype), " scalar, got ", v.describe());
      v.require_host(str_cat(op, ": the padding value of component ", c));
    }
    p.values = std::move(values);
  }
  return p;
}

ElementSpec padded_spec(const ElementSpec& spec, const Padding& padding, int64_t batch) {
  ElementSpec out;
  for (size_t c = 0; c < spec.size(); ++c) {
    Shape s = padding.shapes[c];
    // A known dimension of the spec that the padding leaves to the batch stays known: every
    // row has it, so the longest row has it too.
    for (int d = 0; d < s.rank(); ++d)
      if (s[d] == kUnknownDim) s[d] = spec[c].shape[d];
    out.push_back({spec[c].dtype, s.prepend(batch)});
  }
  return out;
}

namespace {

// Fills every element of `t` with the scalar `value`.
void fill(Tensor& t, const Tensor& value) {
  const int64_t n = t.num_elements();
  if (t.dtype() == DType::kBytes) {
    if (value.string(0).empty()) return;  // a new bytes tensor holds empty strings
    for (int64_t i = 0; i < n; ++i) t.set_string_from(i, value, 0);
    return;
  }
  const size_t size = dtype_size(t.dtype());
  const char* v = value.data_as<char>();
  char* dst = t.mutable_data_as<char>();
  bool zero = true;
  for (size_t i = 0; i < size; ++i) zero = zero && v[i] == 0;
  if (zero) {
    std::memset(dst, 0, static_cast<size_t>(n) * size);
    return;
  }
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + static_cast<size_t>(i) * size, v, size);
}

// Copies `src` into the block of `dst` (shape `to`, without the batch dimension) that begins
// at element `base`, one run of the last dimension at a time.
void place(Tensor& dst, int64_t base, const Shape& to, const Tensor& src) {
  const int rank = src.rank();
  const int64_t total = src.num_elements();
  if (total == 0) return;
  const int64_t run = rank == 0 ? 1 : src.dim(rank - 1);
  std::vector<int64_t> index(static_cast<size_t>(std::max(rank - 1, 0)), 0);
  const bool bytes = src.dtype() == DType::kBytes;
  const size_t size = bytes ? 0 : dtype_size(src.dtype());
  for (int64_t from = 0; from < total; from += run) {
    // The destination offset of the run that begins at source index (index..., 0).
    int64_t offset = 0;
    for (int d = 0; d + 1 < rank; ++d) offset = offset * to[d] + index[static_cast<size_t>(d)];
    if (rank > 0) offset *= to[rank - 1];
    offset += base;
    if (bytes) {
      for (int64_t j = 0; j < run; ++j) dst.set_string_from(offset + j, src, from + j);
    } else {
      std::memcpy(dst.mutable_data_as<char>() + static_cast<size_t>(offset) * size,
                  src.data_as<char>() + static_cast<size_t>(from) * size,
                  static_cast<size_t>(run) * size);
    }
    for (int d = rank - 2; d >= 0; --d) {  // the next index, last dimensions fastest
      if (++index[static_cast<size_t>(d)] < src.dim(d)) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
}

}  // namespace

Element pad_rows(const char* op, const std::vector<Element>& rows, const Padding& padding,
                 const std::vector<int64_t>& index, const std::vector<size_t>& names) {
  const size_t components = padding.shapes.size();
  Element out;
  out.reserve(components);
  for (size_t c = 0; c < components; ++c) {
    const size_t name = names.empty() ? c : names[c];
    Shape to = padding.shapes[c];
    const int rank = to.rank();
    for (size_t r = 0; r < rows.size(); ++r) {
      const Tensor& t = rows[r].at(c);
      if (t.rank() != rank || t.dtype() != padding.values[c].dtype())
        raise(Code::kInvalidArgument, op, ": component ", name, " of input element ", index.at(r),
              " is ", t.describe(), ", expected a ", dtype_name(padding.values[c].dtype()),
              " tensor of rank ", rank);
      if (!t.on_host()) t.require_host(str_cat(op, ": component ", name));
    }
    for (int d = 0; d < rank; ++d) {
      if (padding.shapes[c][d] != kUnknownDim) continue;
      int64_t longest = 0;
      for (const auto& row : rows) longest = std::max(longest, row[c].dim(d));
      to[d] = longest;
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      const Tensor& t = rows[r][c];
      for (int d = 0; d < rank; ++d)
        if (t.dim(d) > to[d])
          raise(Code::kInvalidArgument, op, ": component ", name, " of input element ", index.at(r),
                " has shape ", t.shape().to_string(), ", larger than its padded shape ",
                padding.shapes[c].to_string(), " in dimension ", d);
    }
    bool full = true;  // every row fills its block: no padding to write
    for (const auto& row : rows) full = full && row[c].shape() == to;
    if (full) {  // a plain batch: one copy per row
      out.push_back(stack_component(rows, c));
      continue;
    }
    Tensor batch =
        Tensor::allocate(padding.values[c].dtype(), to.prepend(static_cast<int64_t>(rows.size())));
    const int64_t per_row = to.num_elements();
    fill(batch, padding.values[c]);
    for (size_t r = 0; r < rows.size(); ++r)
      place(batch, static_cast<int64_t>(r) * per_row, to, rows[r][c]);
    out.push_back(std::move(batch));
  }
  return out;
}

Tensor concat_padded(const std::vector<Tensor>& parts, const Tensor& value) {
  Shape inner = parts.at(0).shape().drop_first();
  for (const auto& p : parts) {
    if (p.rank() != inner.rank() + 1 || p.dtype() != value.dtype())
      raise(Code::kInvalidArgument, "Cannot concatenate ", parts[0].describe(), " and ",
            p.describe());
    for (int d = 0; d < inner.rank(); ++d) inner[d] = std::max(inner[d], p.dim(d + 1));
  }
  std::vector<Tensor> padded;
  for (const auto& p : parts) {
    if (p.shape().drop_first() == inner) {
      padded.push_back(p);
      continue;
    }
    if (!p.on_host()) p.require_host("padding rows");
    Tensor t = Tensor::allocate(p.dtype(), inner.prepend(p.dim(0)));
    fill(t, value);
    const int64_t per_row = inner.num_elements();
    for (int64_t r = 0; r < p.dim(0); ++r) place(t, r * per_row, inner, p.row(r));
    padded.push_back(std::move(t));
  }
  return concat(padded);
}

std::string describe_padding(const Padding& padding) {
  std::string shapes, values;
  for (size_t c = 0; c < padding.shapes.size(); ++c) {
    shapes += (c ? "," : "") + padding.shapes[c].to_string();
    const Tensor& v = padding.values[c];
    if (c) values += ",";
    if (v.dtype() == DType::kBytes) {
      values += quoted(v.string(0));
      continue;
    }
    static const char kHex[] = "0123456789abcdef";
    const auto* b = v.data_as<unsigned char>();
    for (size_t i = 0; i < dtype_size(v.dtype()); ++i) {
      values += kHex[b[i] >> 4];
      values += kHex[b[i] & 15];
    }
  }
  return str_cat("padded_shapes=[", shapes, "], padding_values=[", values, "]");
}

}  // namespace dinput
