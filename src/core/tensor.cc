#include "core/tensor.h"

#include <algorithm>

#include "core/status.h"

namespace dinput {

namespace {
// Validates a shape for allocation and returns its number of elements.
int64_t checked_elements(DType dtype, const Shape& shape) {
  DINPUT_CHECK_ARG(dtype_valid(dtype), "invalid dtype ", static_cast<int>(dtype));
  for (int i = 0; i < shape.rank(); ++i)
    DINPUT_CHECK_ARG(shape[i] >= 0, "dimension ", i, " of shape ", shape.to_string(),
                     " is negative");
  int64_t n = shape.checked_num_elements();
  int64_t bytes;
  if (n < 0 || __builtin_mul_overflow(
                   n, static_cast<int64_t>(std::max<size_t>(dtype_size(dtype), 1)), &bytes))
    raise(Code::kInvalidArgument, "a ", dtype_name(dtype), shape.to_string(),
          " tensor is too large to address");
  return n;
}
}  // namespace

Tensor Tensor::allocate(DType dtype, const Shape& shape) {
  int64_t n = checked_elements(dtype, shape);
  if (dtype == DType::kBytes)
    return Tensor(dtype, shape, allocate_strings(static_cast<size_t>(n)), 0);
  return Tensor(dtype, shape, allocate_host(static_cast<size_t>(n) * dtype_size(dtype)), 0);
}

Tensor Tensor::zeros(DType dtype, const Shape& shape) {
  if (dtype == DType::kBytes) return allocate(dtype, shape);
  size_t bytes = static_cast<size_t>(checked_elements(dtype, shape)) * dtype_size(dtype);
  return Tensor(dtype, shape, allocate_host(bytes, /*zero=*/true), 0);
}

size_t Tensor::byte_size() const {
  if (!defined()) return 0;
  int64_t n = num_elements();
  if (dtype_ != DType::kBytes) return static_cast<size_t>(n) * dtype_size(dtype_);
  size_t total = 0;
  for (int64_t i = 0; i < n; ++i) total += string(i).size();
  return total;
}

size_t Tensor::row_bytes() const {
  if (rank() == 0) return dtype_size(dtype_);
  return static_cast<size_t>(shape_.drop_first().num_elements()) * dtype_size(dtype_);
}

void Tensor::bad_slice(int64_t begin, int64_t end) const {
  if (rank() < 1) raise(Code::kInvalidArgument, "cannot slice a scalar tensor");
  raise(Code::kInvalidArgument, "slice [", begin, ",", end, ") is outside a tensor of ", shape_[0],
        " rows");
}

Tensor Tensor::row(int64_t i) const {
  Tensor one = slice(i, i + 1);
  return Tensor(dtype_, shape_.drop_first(), one.buffer(), one.offset_);
}

std::string Tensor::describe() const {
  return std::string(dtype_name(dtype_)) + shape_.to_string();
}

void Tensor::require_host(std::string_view what) const {
  if (on_host()) return;
  raise(Code::kInvalidArgument, what, ": the ", describe(),
        " tensor is in the memory of GPU:", buffer_->device(),
        ", which host code cannot read; copy it to the host first (dinput_tensor_to_host)");
}

}  // namespace dinput
